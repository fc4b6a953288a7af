"""Model turns an agent's log records, in one harness-neutral shape.

``logs/<ID>.log`` is whatever the agent printed; a harness adapter also writes its CLI's JSON event
stream there (Codex ``--json``, Claude Code ``stream-json``). The viewer, the HTML drill-down and the
ATIF export want the model's turns out of it, but must not know any harness's format: each adapter
reads its own events (:meth:`ctbench.plugin_api.agent.Agent.log_turn`) into :class:`ModelTurn`
values, and the readers take only those. Every agent may also print ctbench's own neutral event,
one JSON object per line::

    {"event": "model_turn", "role": "agent", "text": "...", "input_tokens": 800,
     "output_tokens": 40, "cached_tokens": 700, "tool_calls": ["run_command"]}

which :func:`ctbench_turn` reads (the base adapter's reading, so any agent gets it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

TurnReader = Callable[[Mapping[str, Any]], "ModelTurn | None"]
"""One JSON line of an agent's log to a turn, or None for a line that is not one."""


@dataclass(frozen=True)
class ModelTurn:
    """One model turn the harness recorded in the agent's log.

    ``role`` is ``agent`` (a model message, with the tools it called), ``reasoning`` (the model's
    reasoning shown apart), or ``usage`` (a harness's usage report for the turn before it)."""

    role: str
    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    tool_calls: tuple[str, ...] = ()


def token_count(value: Any) -> int | None:
    """A token count as an event gives it: an int (never a bool), else unknown."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def ctbench_turn(event: Mapping[str, Any]) -> ModelTurn | None:
    """ctbench's own ``{"event": "model_turn"}`` line (see the module docstring), else None."""
    if event.get("event") != "model_turn":
        return None
    return ModelTurn(
        role=str(event.get("role") or "agent"),
        text=str(event.get("text") or ""),
        input_tokens=token_count(event.get("input_tokens")),
        output_tokens=token_count(event.get("output_tokens")),
        cached_tokens=token_count(event.get("cached_tokens")),
        tool_calls=tuple(str(t) for t in event.get("tool_calls") or ()),
    )


def log_turns(log_text: str | None, read: TurnReader = ctbench_turn) -> list[ModelTurn]:
    """The model turns among a log's lines, each JSON line read by ``read`` (an adapter's
    :meth:`~ctbench.plugin_api.agent.Agent.log_turn`); other lines are skipped."""
    from ctbench.plugin_api.jsonlines import json_objects

    turns = (read(event) for event in json_objects((log_text or "").splitlines()))
    return [t for t in turns if t is not None]
