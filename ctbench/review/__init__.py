"""ctbench review component."""
