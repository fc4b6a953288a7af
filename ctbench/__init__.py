"""ctbench: author, review, replay and score telecom troubleshooting tasks.

The core (task model, store, taxonomy, vendor dialects) lives at this level and imports none of the
four components (``authoring``, ``review``, ``replay``, ``evaluate``) nor Textual, so that scoring and
replay stay light to import.
"""

__version__ = "0.1.0"
