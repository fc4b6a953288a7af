"""The one run-settings model: everything ``ctb-eval run`` is asked to do, in sections.

Before issue 27 the same options were declared four times (the runner's ``RunSettings``, the agents'
``AgentOptions``, the work unit's ``AgentSettings`` and run.yaml's ``RunOptions``), each with its own
timeout default (600 s in one, 3600 s in the others). Now:

- :class:`RunSettings` is the whole of it: the run's own fields (task set, ``--select``, gate,
  trials, retries, executor, output folder) and one section,
- :class:`AgentSettings` (``RunSettings.agent``), what every unit of the run carries to wherever it
  runs and what an agent adapter reads as ``self.options``; it holds
- :class:`SandboxSettings` (``RunSettings.agent.sandbox``), how an external agent is isolated.

``AgentOptions`` is a documented alias of :class:`AgentSettings` for plug-in agents written against the
old name. :data:`DEFAULT_TIMEOUT_S` is the only timeout default.

run.yaml records these settings themselves (``settings:``, :meth:`RunSettings.recorded`: the model
without the fields of one invocation, :data:`INVOCATION`, and with the executor's secrets redacted),
so no option is named twice; :meth:`RunSettings.from_config` reads them back for a resume. run.yaml
files of the older, flat shape (``options:``, format 1) are read into the same model by
:class:`ctbench.evaluate.runfolder.RunConfig`.

``RunSettings`` also takes the flat keywords that callers used before the sections existed
(``RunSettings(agent="oracle", timeout_s=60, sandbox="none", agent_args={...})``): they go into
their section, so the command line, sweeps and tests can keep naming options flat.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctbench.evaluate.executor_record import redact
from ctbench.plugin_api.settings import DEFAULT_TIMEOUT_S as DEFAULT_TIMEOUT_S
from ctbench.plugin_api.settings import AgentOptions as AgentOptions
from ctbench.plugin_api.settings import AgentSettings as AgentSettings
from ctbench.plugin_api.settings import SandboxSettings as SandboxSettings

if TYPE_CHECKING:
    from ctbench.provenance import TaskSetRef

DEFAULT_CONCURRENCY = 4
DEFAULT_RETRIES = 2


_AGENT_KEYS = {"model", "base_url", "agent_cmd", "max_rounds", "timeout_s", "ssh"}
_FLAT_KEYS = {"agent_args": "args"}
_SANDBOX_KEYS = {"sandbox": "mode", "sandbox_network": "network", "limits": "limits"}


def _fold(flat: dict[str, Any]) -> dict[str, Any]:
    """Flat keywords (``timeout_s``, ``sandbox``, ``agent_args``...) moved into their sections."""
    out = dict(flat)
    agent = out.pop("agent", None)
    section: dict[str, Any] = {}
    if isinstance(agent, AgentSettings):
        section = agent.model_dump()
    elif isinstance(agent, dict):
        section = dict(agent)
    elif agent is not None:
        section["agent"] = agent
    sandbox = section.get("sandbox", {})
    sandbox = sandbox.model_dump() if isinstance(sandbox, SandboxSettings) else dict(sandbox)
    for key in list(out):
        if key in _AGENT_KEYS:
            section[key] = out.pop(key)
        elif key in _FLAT_KEYS:
            section[_FLAT_KEYS[key]] = out.pop(key)
        elif key in _SANDBOX_KEYS and not isinstance(out[key], dict | SandboxSettings):
            sandbox[_SANDBOX_KEYS[key]] = out.pop(key)
    if sandbox:
        section["sandbox"] = sandbox
    out["agent"] = section
    return out


class RunSettings(BaseModel):
    """Everything ``ctb-eval run`` was asked to do: the run's fields and its agent section."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    agent: AgentSettings
    tasks: Path | str | None = None
    select: str | None = None
    """A ``--select`` expression (:mod:`ctbench.evaluate.selection`)."""
    allow_unreviewed: bool = False
    """Run tasks that are not approved, or were edited after approval (recorded in run.yaml)."""
    allow_invalid: bool = False
    """Run tasks that fail validation (an attempt that cannot be served ends as a task error)."""
    concurrency: int = DEFAULT_CONCURRENCY
    retries: int = DEFAULT_RETRIES
    trials: int = 1
    out: Path | None = None
    force: bool = False
    retry_errors: bool = False
    """On resume, run again the tasks whose last line is an infrastructure error (a new line is appended)."""
    runs_root: Path = Path("runs")
    executor: str = "local"
    executor_options: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, /, **data: Any) -> None:
        """Sections as models or dicts, or the flat keywords (``timeout_s=``, ``sandbox=``...)."""
        super().__init__(**data)

    @model_validator(mode="before")
    @classmethod
    def _flat_keywords(cls, data: Any) -> Any:
        return _fold(data) if isinstance(data, dict) else data

    @property
    def all_statuses(self) -> bool:
        """The name ``--all-statuses`` had before the gate; it means ``allow_unreviewed``."""
        return self.allow_unreviewed

    def updated(self, **flat: Any) -> RunSettings:
        """A copy with the given values (flat keywords as the constructor takes; None = keep)."""
        given = {k: v for k, v in flat.items() if v is not None}
        data = {**self.model_dump(exclude={"agent"}), **{k: v for k, v in given.items() if k != "agent"}}
        agent = (
            self.agent if "agent" not in given else self.agent.model_copy(update={"agent": given["agent"]})
        )
        return RunSettings.model_validate({**data, "agent": agent, **_agent_part(given)})

    def recorded(self) -> RunSettings:
        """What run.yaml keeps of these settings: without the fields of one invocation
        (:data:`INVOCATION`), with every secret of the executor's options redacted
        (:func:`~ctbench.evaluate.executor_record.redact`)."""
        data = self.model_dump(exclude=set(INVOCATION))
        data["executor_options"] = redact(self.executor_options)
        return RunSettings.model_validate(data)

    def record(self) -> dict[str, Any]:
        """run.yaml's ``settings`` mapping (JSON values): :meth:`recorded`, dumped."""
        return self.recorded().model_dump(mode="json", exclude=set(INVOCATION))

    def compared(self) -> dict[str, Any]:
        """The recorded settings a resume must match (all but :data:`NOT_COMPARED`), flat: the agent
        section's fields by their own names (``agent``, ``model``, ``timeout_s``, ``args``...), the
        sandbox's as ``sandbox.mode``, ``sandbox.network``, ``sandbox.limits``, then the run's."""
        data = self.model_dump(mode="json", exclude=set(INVOCATION | NOT_COMPARED))
        agent = data.pop("agent")
        sandbox = agent.pop("sandbox")
        return {**agent, **{f"sandbox.{k}": v for k, v in sandbox.items()}, **data}

    @classmethod
    def from_config(cls, config: RecordedRun, **overrides: Any) -> RunSettings:
        """Settings that resume a run exactly as it was started (``ctb-eval run --resume DIR``);
        ``overrides`` are flat keywords, None meaning "as recorded". The executor's options are not
        taken from run.yaml here (they are redacted there): the command line restores them."""
        recorded = config.settings
        settings = recorded.updated(
            tasks=config.task_set.path,
            executor_options={},
            # a built-in agent needed no sandbox; an external one named on resume runs unsandboxed
            sandbox="none" if recorded.agent.sandbox.mode == "in-process" else None,
        )
        return settings.updated(**overrides)


class RecordedRun(Protocol):
    """What a resume reads of a run.yaml (:class:`ctbench.evaluate.runfolder.RunConfig`, which imports
    this module: the protocol keeps the import one way)."""

    @property
    def settings(self) -> RunSettings: ...

    @property
    def task_set(self) -> TaskSetRef: ...


INVOCATION = frozenset({"tasks", "out", "force", "retry_errors", "runs_root"})
"""Fields of one invocation of ``ctb-eval run``, not of the run: run.yaml does not record them (the
task set is recorded apart, as ``task_set``: its resolved path, commit and release)."""
NOT_COMPARED = frozenset({"concurrency", "executor", "executor_options"})
"""Recorded settings that do not change results: a resume may change them."""


def _agent_part(given: dict[str, Any]) -> dict[str, Any]:
    """The flat keywords of ``given`` that belong in the agent section (``_fold`` places them)."""
    return {k: v for k, v in given.items() if k in _AGENT_KEYS or k in _FLAT_KEYS or k in _SANDBOX_KEYS}


__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT_S",
    "INVOCATION",
    "NOT_COMPARED",
    "AgentOptions",
    "AgentSettings",
    "RunSettings",
    "SandboxSettings",
]
