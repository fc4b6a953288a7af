"""ctbench authoring component."""
