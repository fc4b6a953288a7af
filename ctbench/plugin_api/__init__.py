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
:mod:`.transcript`     :class:`TranscriptEntry`: the conversation format of ``AgentResult.transcript``
:mod:`.agent_files`    :class:`AttemptFolder`: an agent CLI's files, read without following links
=====================  =====================================================

The task-family contract is the scoring layer's (:class:`TaskFamily`, :class:`ParsedAnswer`), re-exported
here; the core's :class:`~ctbench.model.Family`, :class:`~ctbench.model.GoldAnswer`,
:class:`~ctbench.store.TaskSet`, price tables, vendor dialects and :func:`~ctbench.safetext.visible`
likewise (and :func:`~ctbench.isolation.visible_task_files`, what of a task a remote worker may be
shipped), and the replay's tools (:class:`~ctbench.replay.tools.ReplayTools`) for an in-process agent.
"""

from __future__ import annotations

from ctbench.dialects import get_dialect
from ctbench.errors import CtbError
from ctbench.isolation import visible_set_files, visible_task_files
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
from ctbench.plugin_api.agent_files import (
    ANSWER_CAP,
    DB_CAP,
    LOG_CAP,
    MIB,
    SMALL_CAP,
    AttemptFolder,
    RefusedFile,
    log_tail,
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
from ctbench.plugin_api.transcript import ToolCall, TranscriptEntry, TranscriptUsage
from ctbench.plugin_api.transcript import dumps as dump_transcript
from ctbench.plugin_api.turns import ModelTurn, token_count
from ctbench.plugin_api.work import AttemptOutcome, Transport, WorkUnit
from ctbench.prices import Prices
from ctbench.replay.tools import INPUT_SCHEMAS, TOOL_NAMES, ReplayTools
from ctbench.safetext import visible
from ctbench.scoring.families import GROUP as FAMILIES_GROUP
from ctbench.scoring.families import TaskFamily, families
from ctbench.scoring.parse import AnswerLink, ParsedAnswer, Port
from ctbench.store import TaskSet

__all__ = [
    "AGENTS_GROUP",
    "ANSWER_CAP",
    "DB_CAP",
    "DEFAULT_TIMEOUT_S",
    "EXECUTORS_GROUP",
    "EXPORTERS_GROUP",
    "FAMILIES_GROUP",
    "INPUT_SCHEMAS",
    "LOG_CAP",
    "MIB",
    "SMALL_CAP",
    "TOOL_NAMES",
    "Agent",
    "AgentConfigError",
    "AgentContext",
    "AgentError",
    "AgentLog",
    "AgentOptions",
    "AgentResult",
    "AgentSettings",
    "AnswerLink",
    "AttemptFolder",
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
    "RefusedFile",
    "ReplayTools",
    "SandboxSettings",
    "SshAccess",
    "TaskFamily",
    "TaskSet",
    "ToolCall",
    "TranscriptEntry",
    "TranscriptUsage",
    "Transport",
    "UnitStarted",
    "WorkUnit",
    "dump_transcript",
    "families",
    "get_dialect",
    "json_objects",
    "log_tail",
    "refuse_options",
    "token_count",
    "visible",
    "visible_set_files",
    "visible_task_files",
]
