"""The data that crosses the executor seam: one work unit in, one attempt outcome out.

Everything an attempt needs travels in a :class:`WorkUnit`, and everything it produced comes back
in an :class:`AttemptOutcome`, as plain pydantic models that pickle and JSON-encode. That is what lets
an attempt run in this process, a subprocess or on another machine (the Ray executor) while the
runner stays the only writer of the run folder: an attempt never opens ``results.jsonl``,
``trajectories/`` or ``logs/``, it hands their content back.

The hidden part of a task (gold answer, golden actions, metadata) travels only in the unit of an
agent that declares ``needs_hidden`` (the oracle); every other unit has ``gold = None``, and the
answer is parsed and scored against the gold on the runner's side.
"""

from __future__ import annotations

import base64
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from ctbench.model import HiddenSpec
from ctbench.plugin_api.settings import AgentSettings as AgentSettings
from ctbench.plugin_api.settings import SandboxSettings as SandboxSettings
from ctbench.replay.trajectory import TrajectoryRecord

OutcomeKind = Literal["ok", "timeout", "agent", "infrastructure", "task"]
"""``task``: the task itself cannot be served (a task definition error): recorded, never retried."""

Transport = Literal["in-process", "http", "mcp-stdio", "mcp-http"]
"""How an agent reaches the replay: a Python session object, the HTTP JSON API, MCP over stdio through
``ctb-replay mcp --connect``, or a per-session MCP streamable-HTTP endpoint."""


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WorkUnit(_Data):
    """One attempt of one trial of one task, with everything needed to run it anywhere."""

    task_id: str
    family: str = Field(
        pattern=r"^[a-z][a-z0-9_]*$", description="The task family (rca, path, topology or a plug-in's)."
    )
    trial: int = Field(default=1, ge=1)
    attempt: int = Field(default=1, ge=1)
    content_hash: str = Field(description="sha256 of the task's agent-visible and hidden content.")
    prompt: str
    settings: AgentSettings
    """The run's agent section (:mod:`ctbench.plugin_api.settings`), the same in every unit."""
    gold: HiddenSpec | None = Field(default=None, description="Only for agents that declare needs_hidden.")

    @property
    def key(self) -> tuple[str, int]:
        """What a result line is the result of: (task id, trial). Attempts of one key replace each other."""
        return (self.task_id, self.trial)

    def retry(self) -> WorkUnit:
        return self.model_copy(update={"attempt": self.attempt + 1})


class Usage(_Data):
    """What the agent spent, as far as its harness reports it (None = not reported, never 0)."""

    rounds: int | None = None
    rounds_kind: Literal["model requests", "tool turns", "agent steps"] | None = None
    input_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    model_reported: str | None = Field(
        default=None, description="The model id the endpoint's responses named, when it differs from --model."
    )
    model_reported_source: str | None = Field(
        default=None, description="Who reported it: the harness's record, or the endpoint via ctbench's tap."
    )


class AttemptOutcome(BaseModel):
    """Everything one attempt produced, returned as data to the runner (the single writer)."""

    model_config = ConfigDict(extra="forbid")

    unit: WorkUnit
    kind: OutcomeKind
    error: str | None = None
    answer_text: str | None = None
    answer_source: Literal["submit", "answer_file", "stdout", "final_message"] | None = None
    usage: Usage = Field(default_factory=Usage)
    harness_version: str | None = None
    latency_s: float = 0.0
    commands: int = 0
    trajectory: list[TrajectoryRecord] = Field(default_factory=list)
    log: bytes = b""
    transcript: bytes = b""
    notes: list[str] = Field(default_factory=list)
    worker: str | None = Field(default=None, description="Where it ran, when not in the runner's process.")

    @field_serializer("log", "transcript", when_used="json")
    def _log_b64(self, value: bytes) -> str:
        return base64.b64encode(value).decode("ascii")

    @field_validator("log", "transcript", mode="before")
    @classmethod
    def _log_from_b64(cls, value: Any) -> Any:
        if isinstance(value, str):
            return base64.b64decode(value)
        return value

    @property
    def retryable(self) -> bool:
        return self.kind == "infrastructure"
