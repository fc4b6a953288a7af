"""Moved to :mod:`ctbench.plugin_api.work` (the data that crosses the executor seam is part of the
plug-in contract). This name stays so code written against it keeps working."""

from ctbench.plugin_api.work import (
    AgentSettings,
    AttemptOutcome,
    OutcomeKind,
    SandboxSettings,
    Transport,
    Usage,
    WorkUnit,
)

__all__ = [
    "AgentSettings",
    "AttemptOutcome",
    "OutcomeKind",
    "SandboxSettings",
    "Transport",
    "Usage",
    "WorkUnit",
]
