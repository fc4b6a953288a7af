"""Task validation, part of the core: the authoring app, review, the run gate, CI and the pre-commit hook
all ask it, so none of them has to reach into another component for it.

:mod:`~ctbench.validation.validator` holds the checks, :mod:`~ctbench.validation.duplicates` the copied-gold
warning that compares a selection with the whole set, :mod:`~ctbench.validation.sealed` reading a sealed
hidden part. The names callers use are re-exported here.
"""

from ctbench.validation.validator import (
    Finding,
    Report,
    Severity,
    Validator,
    resolve_targets,
    validate_paths,
)

__all__ = ["Finding", "Report", "Severity", "Validator", "resolve_targets", "validate_paths"]
