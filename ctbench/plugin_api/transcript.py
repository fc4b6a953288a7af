"""One transcript per attempt: the model's turns, its tool calls and their results, in order.

A run folder's trajectory says which replay calls an agent made; its log is whatever the agent
printed. Neither is the conversation: what the model wrote (text, reasoning, tool calls), what each
tool call returned to it, when, and what each model request cost. A harness CLI keeps that in its own
files - Codex in its rollout (``$CODEX_HOME/sessions/.../rollout-*.jsonl``), Claude Code in its
``stream-json`` output, Hermes in its session database (``state.db``) - and the adapter turns it into
this one format, written to ``transcripts/<ID>.jsonl`` (``<ID>.trial<K>.jsonl`` for trial K > 1).

**The format** (JSON Lines, one :class:`TranscriptEntry` per line, in the order they happened):

- ``kind``: ``prompt`` (what the agent was asked), ``model`` (one model response: ``text``,
  ``reasoning``, ``tool_calls``, and where the harness reports it ``usage`` and ``model``), or
  ``tool_result`` (what one call returned to the model: ``call_id``, ``name``, ``content``,
  ``is_error``);
- ``t``: when the harness recorded it (ISO 8601, UTC), as the harness's own file says;
- ``source``: the harness file it was read from (``codex rollout``, ``claude-code stream``,
  ``hermes state.db``).

A harness that keeps no per-request usage (Hermes) gets each model turn's usage from the runner's
model tap (:mod:`ctbench.evaluate.model_tap`), which read it from the endpoint's reply; such a
``usage`` says so in its ``source``.

``content`` is the text the model was given, as the harness gave it (Codex prefixes a wall time,
Hermes wraps it in an ``<untrusted_tool_result>`` block): faithful to the conversation, not to the
device. Each text is cut at :data:`TEXT_CAP` characters with a marker; an attempt cut short keeps the
entries written before it ended.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TEXT_CAP = 200_000
"""Characters of one text kept (a tool result, a message); the rest is replaced by a marker."""
MAX_ENTRIES = 20_000
"""Entries of one transcript kept: a runaway agent cannot fill the run folder through it."""


class TranscriptUsage(BaseModel):
    """Tokens of one model request as the harness reported them; ``input`` includes ``cached``."""

    model_config = ConfigDict(extra="forbid")

    input: int | None = None
    cached: int | None = None
    output: int | None = None
    source: str | None = None
    """Where the figures come from when not the harness's own file: the model endpoint's response as
    ctbench's model tap read it (:mod:`ctbench.evaluate.model_tap`)."""


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    name: str = Field(description="As the model named it (e.g. mcp__ctb__run_command).")
    arguments: dict[str, Any] = Field(default_factory=dict)


class TranscriptEntry(BaseModel):
    """One line of ``transcripts/<ID>.jsonl`` (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["prompt", "model", "tool_result"]
    t: datetime | None = None
    source: str = ""
    text: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: TranscriptUsage | None = None
    model: str | None = None
    call_id: str | None = None
    name: str | None = None
    content: str | None = None
    is_error: bool = False

    @property
    def bare_name(self) -> str | None:
        """``run_command`` for ``mcp__ctb__run_command``, ``mcp_ctb_run_command`` or ``ctb.run_command``."""
        return bare_tool(self.name) if self.name else None


def bare_tool(name: str) -> str:
    for sep in ("__", ".", "_ctb_"):
        if sep in name:
            name = name.rsplit(sep, 1)[1]
    return name


def cap(text: str | None) -> str | None:
    if text is None or len(text) <= TEXT_CAP:
        return text
    return text[:TEXT_CAP] + f"\n[ctbench: {len(text) - TEXT_CAP} more character(s) not kept]"


def when(value: Any) -> datetime | None:
    """A timestamp from an ISO string or Unix seconds (the harnesses' two spellings), else None."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(float(value), tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value:
        try:
            got = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return got if got.tzinfo else got.replace(tzinfo=UTC)
    return None


def describe(entry: TranscriptEntry, clip: int = 2000) -> tuple[str, str]:
    """One entry for people: a heading (time, kind, usage) and its text, each text cut at ``clip``
    characters (the viewer and the HTML drill-down show it this way)."""
    when_ = entry.t.strftime("%H:%M:%S.%f")[:-3] if entry.t is not None else "--:--:--"

    def short(text: str) -> str:
        return text if len(text) <= clip else text[:clip] + f" … ({len(text) - clip:,} more characters)"

    if entry.kind == "prompt":
        return f"{when_} prompt", short(entry.text or "")
    if entry.kind == "tool_result":
        error = " (error)" if entry.is_error else ""
        return f"{when_} result of {bare_tool(entry.name or 'tool')} [{entry.call_id}]{error}", short(
            entry.content or ""
        )
    u = entry.usage
    usage = f", in {u.input} (cached {u.cached}) out {u.output} tokens" if u and u.input is not None else ""
    body = []
    if entry.reasoning:
        body.append(f"(reasoning) {short(entry.reasoning)}")
    if entry.text:
        body.append(short(entry.text))
    body += [
        f"→ {bare_tool(c.name)}({json.dumps(c.arguments, ensure_ascii=False)}) [{c.id}]"
        for c in entry.tool_calls
    ]
    return f"{when_} model{usage}", "\n".join(body)


def dumps(entries: Iterable[TranscriptEntry]) -> bytes:
    """The JSON Lines bytes of a transcript (at most :data:`MAX_ENTRIES` entries)."""
    out: list[str] = []
    for i, entry in enumerate(entries):
        if i >= MAX_ENTRIES:
            break
        out.append(entry.model_dump_json(exclude_defaults=True))
    return ("\n".join(out) + "\n").encode("utf-8") if out else b""


__all__ = [
    "MAX_ENTRIES",
    "TEXT_CAP",
    "ToolCall",
    "TranscriptEntry",
    "TranscriptUsage",
    "bare_tool",
    "cap",
    "describe",
    "dumps",
    "when",
]
