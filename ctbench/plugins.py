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
                                                                            :class:`AttemptOutcome`,
                                                                            :class:`QueueExecutor`;
                                                                            on a worker,
                                                                            :func:`make_agent`,
                                                                            :func:`run_attempt`
``ctbench.exporters``       a function ``(ExportRequest) -> ExportSummary``  :class:`ExportRequest`
``ctbench.families``        a class providing :class:`TaskFamily`           :class:`ParsedAnswer`,
                                                                            :class:`GoldAnswer`
==========================  ==============================================  =======================

The names below are the supported surface: they keep their meaning across minor versions, while the
modules they live in may move. The contract types live in :mod:`ctbench.plugin_api`, a layer below the
evaluator, where the bundled plug-ins import them from too; this module offers all of them plus two
kits built on the evaluator, so it sits above it (import contracts in pyproject.toml allow it those
and nothing else): for agent CLIs :class:`HarnessAgent` and its helpers (the sandbox, the model tap),
and for executors :func:`make_agent`, :class:`LocalEnv` and :func:`run_attempt` (run a unit where it
lands). It loads no Textual.

``Link`` was this module's name for :data:`AnswerLink` (a parsed answer's link, two ``(node, port)``
ends); it clashed with :class:`ctbench.model.Link` (a cable of the task's network) and is kept only as
a deprecated alias.

An agent is built as ``Agent(options, args)``: ``options`` is the run's agent section
(:class:`AgentSettings`: model, base URL, command, rounds, timeout...), ``args`` its own validated
``Options``. ``AgentOptions`` is the old name of :class:`AgentSettings`, kept as an alias so plug-ins
written against it keep working.
"""

from __future__ import annotations

import warnings as _warnings
from typing import Any as _Any

# The kit for executors: on the host a unit runs on, build the agent by name and run the attempt
# there, as the ``local`` and ``ray`` executors do.
from ctbench.evaluate.agents import agent_class as agent_class
from ctbench.evaluate.agents import make_agent as make_agent

# The kit for agent CLIs: a base class that runs one in the sandbox, its event stream in the log.
from ctbench.evaluate.agents.harness_base import HarnessAgent as HarnessAgent
from ctbench.evaluate.agents.harness_base import HarnessLaunch as HarnessLaunch
from ctbench.evaluate.agents.harness_base import HarnessRun as HarnessRun
from ctbench.evaluate.agents.harness_base import file_tail as file_tail
from ctbench.evaluate.agents.harness_base import toml_str as toml_str
from ctbench.evaluate.agents.harness_base import with_v1 as with_v1
from ctbench.evaluate.agents.harness_base import without_v1 as without_v1
from ctbench.evaluate.attempt import LocalEnv as LocalEnv
from ctbench.evaluate.attempt import run_attempt as run_attempt
from ctbench.plugin_api import *  # noqa: F403 - the contract, re-exported whole
from ctbench.plugin_api import __all__ as _contract

_KIT = ["HarnessAgent", "HarnessLaunch", "HarnessRun", "file_tail", "toml_str", "with_v1", "without_v1"]
_EXECUTOR_KIT = ["LocalEnv", "agent_class", "make_agent", "run_attempt"]

__all__ = _contract + _KIT + _EXECUTOR_KIT


def __getattr__(name: str) -> _Any:
    """``Link``, the old name of :data:`AnswerLink`, with a warning (it clashed with ``model.Link``)."""
    if name == "Link":
        _warnings.warn(
            "ctbench.plugins.Link is deprecated: use ctbench.plugins.AnswerLink "
            "(ctbench.model.Link is a cable of the network, not an answer's link)",
            DeprecationWarning,
            stacklevel=2,
        )
        from ctbench.plugin_api import AnswerLink

        return AnswerLink
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
