"""The plug-in contract: the types an agent, executor, exporter or task-family plug-in is built on.

This package sits below the evaluator (pyproject.toml's layers contract) and imports nothing of it, so
the bundled plug-ins (``ctbench/evaluate/agents/*``, the ``local`` and ``ray`` executors, the
exporters) are written against the very types an outside plug-in uses, from here, rather than against
the evaluator's internals. Plug-in authors import :mod:`ctbench.plugins`, which offers every name
below plus the kits built on the evaluator (:class:`~ctbench.plugins.HarnessAgent` for agent CLIs).

=====================  =====================================================
module                 what it holds
=====================  =====================================================
:mod:`.agent`          :class:`Agent`, :class:`AgentContext`, :class:`AgentResult`, the errors
:mod:`.settings`       :class:`AgentSettings` (an agent's ``options``), sandbox and limits
:mod:`.work`           :class:`WorkUnit` in, :class:`AttemptOutcome` out: the executor seam's data
:mod:`.executor`       the :class:`Executor` protocol, :class:`ExecutionContext`, :class:`QueueExecutor`
:mod:`.exporter`       :class:`ExportRequest`, :class:`ExportSummary`, :func:`refuse_options`
:mod:`.turns`          :class:`ModelTurn`: a harness's log read as model turns
:mod:`.ssh`            :class:`SshAccess`: an attempt's SSH logins (``--ssh``)
=====================  =====================================================

The task-family contract is the scoring layer's (:class:`TaskFamily`, :class:`ParsedAnswer`), re-exported
here; the core's :class:`~ctbench.model.Family`, :class:`~ctbench.model.GoldAnswer`, price tables and
vendor dialects likewise.
"""

from __future__ import annotations

from ctbench.dialects import get_dialect
from ctbench.errors import CtbError
from ctbench.model import Family, GoldAnswer
from ctbench.plugin_api.agent import GROUP as AGENTS_GROUP
from ctbench.plugin_api.agent import (
    Agent,
    AgentConfigError,
    AgentContext,
    AgentError,
    AgentLog,
    AgentOptions,
    AgentResult,
    AgentSettings,
    Availability,
    InfrastructureError,
    ModelRoute,
    NoOptions,
)
from ctbench.plugin_api.executor import GROUP as EXECUTORS_GROUP
from ctbench.plugin_api.executor import (
    ExecutionContext,
    Executor,
    ExecutorError,
    ExecutorEvent,
    QueueExecutor,
    UnitStarted,
)
from ctbench.plugin_api.exporter import GROUP as EXPORTERS_GROUP
from ctbench.plugin_api.exporter import Exporter, ExporterError, ExportRequest, ExportSummary, refuse_options
from ctbench.plugin_api.jsonlines import json_objects
from ctbench.plugin_api.settings import DEFAULT_TIMEOUT_S, AttemptLimits, SandboxSettings
from ctbench.plugin_api.ssh import SshAccess
from ctbench.plugin_api.turns import ModelTurn, token_count
from ctbench.plugin_api.work import AttemptOutcome, Transport, WorkUnit
from ctbench.prices import Prices
from ctbench.scoring.families import GROUP as FAMILIES_GROUP
from ctbench.scoring.families import TaskFamily, families
from ctbench.scoring.parse import AnswerLink, ParsedAnswer, Port

__all__ = [
    "AGENTS_GROUP",
    "DEFAULT_TIMEOUT_S",
    "EXECUTORS_GROUP",
    "EXPORTERS_GROUP",
    "FAMILIES_GROUP",
    "Agent",
    "AgentConfigError",
    "AgentContext",
    "AgentError",
    "AgentLog",
    "AgentOptions",
    "AgentResult",
    "AgentSettings",
    "AnswerLink",
    "AttemptLimits",
    "AttemptOutcome",
    "Availability",
    "CtbError",
    "ExecutionContext",
    "Executor",
    "ExecutorError",
    "ExecutorEvent",
    "ExportRequest",
    "ExportSummary",
    "Exporter",
    "ExporterError",
    "Family",
    "GoldAnswer",
    "InfrastructureError",
    "ModelRoute",
    "ModelTurn",
    "NoOptions",
    "ParsedAnswer",
    "Port",
    "Prices",
    "QueueExecutor",
    "SandboxSettings",
    "SshAccess",
    "TaskFamily",
    "Transport",
    "UnitStarted",
    "WorkUnit",
    "families",
    "get_dialect",
    "json_objects",
    "refuse_options",
    "token_count",
]
