"""ctbench replay component."""
