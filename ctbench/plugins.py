"""The public face for plug-in authors: everything an agent, executor, exporter or task-family plug-in
needs, importable from one module, so a plug-in imports no private module of ctbench.

ctbench finds plug-ins through entry points (``pyproject.toml`` of the plug-in's package):

==========================  ==============================================  =======================
group                       what the entry point names                      built on
==========================  ==============================================  =======================
``ctbench.agents``          an :class:`Agent` subclass                      :class:`AgentContext`,
                                                                            :class:`AgentResult`,
                                                                            :class:`ModelTurn`,
                                                                            :class:`AgentSettings`;
                                                                            for an agent CLI,
                                                                            :class:`HarnessAgent`
``ctbench.executors``       a class providing :class:`Executor`             :class:`WorkUnit`,
                                                                            :class:`AttemptOutcome`
``ctbench.exporters``       a function ``(ExportRequest) -> ExportSummary``  :class:`ExportRequest`
``ctbench.families``        a class providing :class:`TaskFamily`           :class:`ParsedAnswer`,
                                                                            :class:`GoldAnswer`
==========================  ==============================================  =======================

The names below are the supported surface: they keep their meaning across minor versions, while the
modules they live in may move (the scoring layer of issue 27 moved several). This module sits above
the evaluator and the scoring layer (import contracts in pyproject.toml) and loads no Textual.

An agent is built as ``Agent(options, args)``: ``options`` is the run's agent section
(:class:`AgentSettings`: model, base URL, command, rounds, timeout...), ``args`` its own validated
``Options``. ``AgentOptions`` is the old name of :class:`AgentSettings`, kept as an alias so plug-ins
written against it keep working.
"""

from __future__ import annotations

from ctbench.errors import CtbError
from ctbench.evaluate.agents import GROUP as AGENTS_GROUP
from ctbench.evaluate.agents.base import (
    Agent,
    AgentConfigError,
    AgentContext,
    AgentError,
    AgentOptions,
    AgentResult,
    AgentSettings,
    InfrastructureError,
)
from ctbench.evaluate.agents.harness_base import HarnessAgent, HarnessLaunch, HarnessRun, with_v1, without_v1
from ctbench.evaluate.agents.turns import ModelTurn
from ctbench.evaluate.executors import GROUP as EXECUTORS_GROUP
from ctbench.evaluate.executors import ExecutionContext, Executor, ExecutorError, UnitStarted
from ctbench.evaluate.export import ExportSummary
from ctbench.evaluate.exporters import GROUP as EXPORTERS_GROUP
from ctbench.evaluate.exporters import ExporterError, ExportRequest, refuse_options
from ctbench.evaluate.work import AttemptOutcome, WorkUnit
from ctbench.model import Family, GoldAnswer
from ctbench.scoring.families import GROUP as FAMILIES_GROUP
from ctbench.scoring.families import TaskFamily, families
from ctbench.scoring.parse import Link, ParsedAnswer, Port

__all__ = [
    "AGENTS_GROUP",
    "EXECUTORS_GROUP",
    "EXPORTERS_GROUP",
    "FAMILIES_GROUP",
    "Agent",
    "AgentConfigError",
    "AgentContext",
    "AgentError",
    "AgentOptions",
    "AgentResult",
    "AgentSettings",
    "AttemptOutcome",
    "CtbError",
    "ExecutionContext",
    "Executor",
    "ExecutorError",
    "ExportRequest",
    "ExportSummary",
    "ExporterError",
    "Family",
    "GoldAnswer",
    "HarnessAgent",
    "HarnessLaunch",
    "HarnessRun",
    "InfrastructureError",
    "Link",
    "ModelTurn",
    "ParsedAnswer",
    "Port",
    "TaskFamily",
    "UnitStarted",
    "WorkUnit",
    "families",
    "refuse_options",
    "with_v1",
    "without_v1",
]
