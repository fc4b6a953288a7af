"""Modal dialogs of the authoring app; each returns a typed result through ``dismiss``."""
