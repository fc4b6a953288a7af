"""The settings an agent plug-in is built with: the run's agent section and how it is sandboxed.

:class:`AgentSettings` is what every work unit of a run carries to wherever it runs and what an agent
adapter reads as ``self.options`` (``Agent(options, args)``); :class:`SandboxSettings` is how an
external agent is isolated, with the caps of each attempt (:class:`AttemptLimits`, enforced by
:mod:`ctbench.evaluate.limits`). The run's own fields (task set, trials, executor...) are
:class:`ctbench.evaluate.settings.RunSettings`, which holds this section as ``agent``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MiB = 1024 * 1024


class AttemptLimits(BaseModel):
    """The caps of one attempt (None: no cap). Part of the run's settings: every host applies them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    procs: int | None = Field(default=1024, ge=8, description="Processes and threads of the attempt.")
    file_size: int | None = Field(default=256 * MiB, ge=4096, description="Largest file it may write, bytes.")
    disk: int | None = Field(default=512 * MiB, ge=MiB, description="Room in its folder (a tmpfs), bytes.")

    def describe(self) -> str:
        """``procs 1024, file size 256 MiB, disk 512 MiB`` (``off`` for a cap not set)."""
        procs = "off" if self.procs is None else str(self.procs)
        return f"procs {procs}, file size {human_size(self.file_size)}, disk {human_size(self.disk)}"


def human_size(n: int | None) -> str:
    if n is None:
        return "off"
    for unit, factor in (("GiB", 1024 * MiB), ("MiB", MiB), ("KiB", 1024)):
        if n >= factor and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n} bytes"


DEFAULT_TIMEOUT_S = 3600.0
"""Seconds an attempt may take before the agent is stopped (``--timeout``; the paper's runner, D.5)."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SandboxSettings(_Section):
    """How external agents are isolated (issue 14); ``none`` is recorded and printed as unsandboxed."""

    mode: Literal["auto", "bwrap", "none", "in-process"] = "auto"
    """Asked: ``auto`` (bubblewrap when the agent runs a process), ``bwrap`` or ``none``. Recorded in
    run.yaml: what really isolated the agent, ``bwrap``, ``none`` (unsandboxed) or ``in-process`` (a
    built-in agent, no process to isolate)."""
    network: Literal["host", "loopback"] = "loopback"
    """``loopback`` (default, issue 25): each attempt alone in its own network namespace."""
    limits: AttemptLimits = Field(default_factory=AttemptLimits)
    """Caps on each attempt's processes, file size and folder size (:mod:`ctbench.evaluate.limits`)."""


class AgentSettings(_Section):
    """The agent section: the same for every unit of a run, part of the resume identity, and what an
    adapter reads as ``self.options`` / ``ctx.options`` (its own options are ``Agent.Options``)."""

    agent: str = Field(
        default="", description="The agent's name (ctb-eval agents); empty when built directly."
    )
    model: str | None = None
    base_url: str | None = None
    agent_cmd: str | None = None
    max_rounds: int | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    args: dict[str, Any] = Field(
        default_factory=dict,
        description="The agent's own options, validated by its "
        "Options model (from --agent-arg KEY=VALUE), as JSON values.",
    )
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    ssh: bool = Field(
        default=False, description="External agents also get SSH logins on their devices (--ssh)."
    )


AgentOptions = AgentSettings
"""The name plug-in agents knew for the options an adapter is built with (``Agent(options, args)``);
kept as an alias of :class:`AgentSettings`, which holds the same fields and more."""
