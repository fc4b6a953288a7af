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

The task-family contract is the scoring layer's (:class:`TaskFamily`, :class:`ParsedAnswer`, and
:class:`GoldLinesError` for a family's own ``gold_from_lines``), re-exported here; the core's :class:`~ctbench.model.Family`, :class:`~ctbench.model.GoldAnswer`,
:class:`~ctbench.store.TaskSet`, price tables, vendor dialects and :func:`~ctbench.safetext.visible`
likewise (and :func:`~ctbench.isolation.visible_task_files`, what of a task a remote worker may be
shipped), and the replay's tools (:class:`~ctbench.replay.tools.ReplayTools`) for an in-process agent.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names, for type checkers and import-linter; loaded on first use below
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
        Admission,
        ExecutionContext,
        Executor,
        ExecutorError,
        ExecutorEvent,
        QueueExecutor,
        UnitStarted,
    )
    from ctbench.plugin_api.exporter import GROUP as EXPORTERS_GROUP
    from ctbench.plugin_api.exporter import (
        Exporter,
        ExporterError,
        ExportRequest,
        ExportSummary,
        refuse_options,
    )
    from ctbench.plugin_api.jsonlines import json_objects
    from ctbench.plugin_api.runs import (
        LEADERBOARD_METRICS,
        Run,
        RunReader,
        RunReadError,
        RunRecord,
        RunResult,
        RunScores,
        families_of,
        figure,
        leaderboard_metrics,
    )
    from ctbench.plugin_api.settings import DEFAULT_TIMEOUT_S, AttemptLimits, SandboxSettings
    from ctbench.plugin_api.ssh import SshAccess
    from ctbench.plugin_api.transcript import ToolCall, TranscriptEntry, TranscriptUsage
    from ctbench.plugin_api.transcript import dumps as dump_transcript
    from ctbench.plugin_api.turns import ModelTurn, token_count
    from ctbench.plugin_api.work import AttemptOutcome, Transport, WorkUnit
    from ctbench.prices import Prices
    from ctbench.provenance import TaskSetRef
    from ctbench.replay.tools import INPUT_SCHEMAS, TOOL_NAMES, ReplayTools
    from ctbench.safetext import visible
    from ctbench.scoring.families import GROUP as FAMILIES_GROUP
    from ctbench.scoring.families import TaskFamily, families
    from ctbench.scoring.gold_lines import GoldLinesError
    from ctbench.scoring.parse import AnswerLink, ParsedAnswer, Port
    from ctbench.store import TaskSet
    from ctbench.yamlio import atomic_write_bytes, atomic_write_text

_HOMES: dict[str, tuple[str, str]] = {
    "AGENTS_GROUP": ("ctbench.plugin_api.agent", "GROUP"),
    "ANSWER_CAP": ("ctbench.plugin_api.agent_files", "ANSWER_CAP"),
    "Agent": ("ctbench.plugin_api.agent", "Agent"),
    "AgentConfigError": ("ctbench.plugin_api.agent", "AgentConfigError"),
    "AgentContext": ("ctbench.plugin_api.agent", "AgentContext"),
    "AgentError": ("ctbench.plugin_api.agent", "AgentError"),
    "AgentLog": ("ctbench.plugin_api.agent", "AgentLog"),
    "Admission": ("ctbench.plugin_api.executor", "Admission"),
    "AgentOptions": ("ctbench.plugin_api.agent", "AgentOptions"),
    "AgentResult": ("ctbench.plugin_api.agent", "AgentResult"),
    "AgentSettings": ("ctbench.plugin_api.agent", "AgentSettings"),
    "AnswerLink": ("ctbench.scoring.parse", "AnswerLink"),
    "AttemptFolder": ("ctbench.plugin_api.agent_files", "AttemptFolder"),
    "AttemptLimits": ("ctbench.plugin_api.settings", "AttemptLimits"),
    "AttemptOutcome": ("ctbench.plugin_api.work", "AttemptOutcome"),
    "Availability": ("ctbench.plugin_api.agent", "Availability"),
    "CtbError": ("ctbench.errors", "CtbError"),
    "DB_CAP": ("ctbench.plugin_api.agent_files", "DB_CAP"),
    "DEFAULT_TIMEOUT_S": ("ctbench.plugin_api.settings", "DEFAULT_TIMEOUT_S"),
    "EXECUTORS_GROUP": ("ctbench.plugin_api.executor", "GROUP"),
    "EXPORTERS_GROUP": ("ctbench.plugin_api.exporter", "GROUP"),
    "ExecutionContext": ("ctbench.plugin_api.executor", "ExecutionContext"),
    "Executor": ("ctbench.plugin_api.executor", "Executor"),
    "ExecutorError": ("ctbench.plugin_api.executor", "ExecutorError"),
    "ExecutorEvent": ("ctbench.plugin_api.executor", "ExecutorEvent"),
    "ExportRequest": ("ctbench.plugin_api.exporter", "ExportRequest"),
    "ExportSummary": ("ctbench.plugin_api.exporter", "ExportSummary"),
    "Exporter": ("ctbench.plugin_api.exporter", "Exporter"),
    "ExporterError": ("ctbench.plugin_api.exporter", "ExporterError"),
    "FAMILIES_GROUP": ("ctbench.scoring.families", "GROUP"),
    "Family": ("ctbench.model", "Family"),
    "GoldAnswer": ("ctbench.model", "GoldAnswer"),
    "GoldLinesError": ("ctbench.scoring.gold_lines", "GoldLinesError"),
    "INPUT_SCHEMAS": ("ctbench.replay.tools", "INPUT_SCHEMAS"),
    "InfrastructureError": ("ctbench.plugin_api.agent", "InfrastructureError"),
    "LEADERBOARD_METRICS": ("ctbench.plugin_api.runs", "LEADERBOARD_METRICS"),
    "LOG_CAP": ("ctbench.plugin_api.agent_files", "LOG_CAP"),
    "MIB": ("ctbench.plugin_api.agent_files", "MIB"),
    "ModelRoute": ("ctbench.plugin_api.agent", "ModelRoute"),
    "ModelTurn": ("ctbench.plugin_api.turns", "ModelTurn"),
    "NoOptions": ("ctbench.plugin_api.agent", "NoOptions"),
    "ParsedAnswer": ("ctbench.scoring.parse", "ParsedAnswer"),
    "Port": ("ctbench.scoring.parse", "Port"),
    "Prices": ("ctbench.prices", "Prices"),
    "QueueExecutor": ("ctbench.plugin_api.executor", "QueueExecutor"),
    "RefusedFile": ("ctbench.plugin_api.agent_files", "RefusedFile"),
    "ReplayTools": ("ctbench.replay.tools", "ReplayTools"),
    "Run": ("ctbench.plugin_api.runs", "Run"),
    "RunReadError": ("ctbench.plugin_api.runs", "RunReadError"),
    "RunReader": ("ctbench.plugin_api.runs", "RunReader"),
    "RunRecord": ("ctbench.plugin_api.runs", "RunRecord"),
    "RunResult": ("ctbench.plugin_api.runs", "RunResult"),
    "RunScores": ("ctbench.plugin_api.runs", "RunScores"),
    "SMALL_CAP": ("ctbench.plugin_api.agent_files", "SMALL_CAP"),
    "SandboxSettings": ("ctbench.plugin_api.settings", "SandboxSettings"),
    "SshAccess": ("ctbench.plugin_api.ssh", "SshAccess"),
    "TOOL_NAMES": ("ctbench.replay.tools", "TOOL_NAMES"),
    "TaskFamily": ("ctbench.scoring.families", "TaskFamily"),
    "TaskSet": ("ctbench.store", "TaskSet"),
    "TaskSetRef": ("ctbench.provenance", "TaskSetRef"),
    "ToolCall": ("ctbench.plugin_api.transcript", "ToolCall"),
    "TranscriptEntry": ("ctbench.plugin_api.transcript", "TranscriptEntry"),
    "TranscriptUsage": ("ctbench.plugin_api.transcript", "TranscriptUsage"),
    "Transport": ("ctbench.plugin_api.work", "Transport"),
    "UnitStarted": ("ctbench.plugin_api.executor", "UnitStarted"),
    "WorkUnit": ("ctbench.plugin_api.work", "WorkUnit"),
    "atomic_write_bytes": ("ctbench.yamlio", "atomic_write_bytes"),
    "atomic_write_text": ("ctbench.yamlio", "atomic_write_text"),
    "dump_transcript": ("ctbench.plugin_api.transcript", "dumps"),
    "families": ("ctbench.scoring.families", "families"),
    "families_of": ("ctbench.plugin_api.runs", "families_of"),
    "figure": ("ctbench.plugin_api.runs", "figure"),
    "get_dialect": ("ctbench.dialects", "get_dialect"),
    "json_objects": ("ctbench.plugin_api.jsonlines", "json_objects"),
    "leaderboard_metrics": ("ctbench.plugin_api.runs", "leaderboard_metrics"),
    "log_tail": ("ctbench.plugin_api.agent_files", "log_tail"),
    "refuse_options": ("ctbench.plugin_api.exporter", "refuse_options"),
    "token_count": ("ctbench.plugin_api.turns", "token_count"),
    "visible": ("ctbench.safetext", "visible"),
    "visible_set_files": ("ctbench.isolation", "visible_set_files"),
    "visible_task_files": ("ctbench.isolation", "visible_task_files"),
}
"""Where each name lives: importing a contract module (``plugin_api.settings``, say, which the
evaluator's settings import) loads this package first, so its names load on first use rather than
pulling the scoring layer, the replay's tools and asyncio into every ``ctb-eval --help``."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home[0]), home[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "AGENTS_GROUP",
    "ANSWER_CAP",
    "DB_CAP",
    "DEFAULT_TIMEOUT_S",
    "EXECUTORS_GROUP",
    "EXPORTERS_GROUP",
    "FAMILIES_GROUP",
    "INPUT_SCHEMAS",
    "LEADERBOARD_METRICS",
    "LOG_CAP",
    "MIB",
    "SMALL_CAP",
    "TOOL_NAMES",
    "Admission",
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
    "GoldLinesError",
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
    "Run",
    "RunReadError",
    "RunReader",
    "RunRecord",
    "RunResult",
    "RunScores",
    "SandboxSettings",
    "SshAccess",
    "TaskFamily",
    "TaskSet",
    "TaskSetRef",
    "ToolCall",
    "TranscriptEntry",
    "TranscriptUsage",
    "Transport",
    "UnitStarted",
    "WorkUnit",
    "atomic_write_bytes",
    "atomic_write_text",
    "dump_transcript",
    "families",
    "families_of",
    "figure",
    "get_dialect",
    "json_objects",
    "leaderboard_metrics",
    "log_tail",
    "refuse_options",
    "token_count",
    "visible",
    "visible_set_files",
    "visible_task_files",
]
