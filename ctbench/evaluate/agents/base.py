"""Moved to :mod:`ctbench.plugin_api.agent` (the plug-in contract, below the evaluator, so the bundled
agents are written against the same face as outside ones). This name stays so code written against
it keeps working; new code imports from :mod:`ctbench.plugins` (or :mod:`ctbench.plugin_api`)."""

from ctbench.plugin_api.agent import (
    Agent,
    AgentConfigError,
    AgentContext,
    AgentError,
    AgentLog,
    AgentOptions,
    AgentResult,
    AgentSettings,
    AnswerSource,
    Availability,
    InfrastructureError,
    ModelRoute,
    NoOptions,
)
from ctbench.plugin_api.turns import ModelTurn
from ctbench.plugin_api.work import Transport

__all__ = [
    "Agent",
    "AgentConfigError",
    "AgentContext",
    "AgentError",
    "AgentLog",
    "AgentOptions",
    "AgentResult",
    "AgentSettings",
    "AnswerSource",
    "Availability",
    "InfrastructureError",
    "ModelRoute",
    "ModelTurn",
    "NoOptions",
    "Transport",
]
