"""Each harness CLI's own record of its conversation, read into ctbench's transcript format.

The CLIs keep the conversation in three different places, each with the order and the times of what
happened (see :mod:`ctbench.evaluate.transcript` for the format written):

- **Codex** writes a rollout, ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``, line by line as the
  turn goes: ``response_item`` lines (the model's messages, reasoning and ``function_call`` items, and
  each ``function_call_output`` as the model was given it) and a ``token_usage_record`` per model
  response. A Codex killed by the timeout leaves the lines written so far, so its tokens are known
  even though ``codex exec --json`` reports usage only when the turn completes.
- **Claude Code** prints its ``stream-json``: ``assistant`` lines (one per content block, grouped by
  the message id into one model response), ``user`` lines with the ``tool_result`` blocks, both with
  a timestamp; per-request usage comes from the ``message_start``/``message_delta`` stream events.
- **Hermes** keeps its ``messages`` table in ``state.db``: one row per user, assistant and tool
  message, with a timestamp (per-request usage is not kept there, only the session's totals).

Functions here only parse; the adapters read the files through :class:`AttemptFolder` (no link, no
FIFO, capped sizes), since everything in the attempt folder was written by the agent's side.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ctbench.plugin_api.transcript import (
    ToolCall,
    TranscriptEntry,
    TranscriptUsage,
    bare_tool,
    cap,
    when,
)

CODEX = "codex rollout"
CLAUDE = "claude-code stream"
HERMES = "hermes state.db"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str) and raw.strip():
        try:
            got = json.loads(raw)
        except ValueError:
            return {"_raw": raw}
        return dict(got) if isinstance(got, Mapping) else {"_raw": raw}
    return {}


def _text_parts(content: Any, kinds: tuple[str, ...] = ("text", "input_text", "output_text")) -> str:
    """The text of a content value: a string, or a list of parts of which the text ones are joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(p.get("text"))
        for p in content
        if isinstance(p, Mapping) and p.get("type") in kinds and isinstance(p.get("text"), str)
    )


# --------------------------------------------------------------------------- Codex


def codex_usage(records: Iterable[Mapping[str, Any]]) -> tuple[TranscriptUsage, int] | None:
    """Tokens spent so far by the model responses a rollout recorded, and how many responses: each
    ``token_usage_record`` once (by response id), else the last ``token_count`` running total."""
    seen: dict[str, Mapping[str, Any]] = {}
    total: Mapping[str, Any] | None = None
    for rec in records:
        payload = rec.get("payload")
        if not isinstance(payload, Mapping):
            continue
        if rec.get("type") == "token_usage_record" and isinstance(payload.get("usage"), Mapping):
            seen[str(payload.get("response_id") or len(seen))] = payload["usage"]
        elif payload.get("type") == "token_count" and isinstance(payload.get("info"), Mapping):
            got = payload["info"].get("total_token_usage")
            total = got if isinstance(got, Mapping) else total
    if seen:
        usages = list(seen.values())
        return (
            TranscriptUsage(
                input=sum(_int(u.get("input_tokens")) or 0 for u in usages),
                cached=sum(_int(u.get("cached_input_tokens")) or 0 for u in usages),
                output=sum(_int(u.get("output_tokens")) or 0 for u in usages),
            ),
            len(usages),
        )
    if total is not None:
        return (
            TranscriptUsage(
                input=_int(total.get("input_tokens")),
                cached=_int(total.get("cached_input_tokens")),
                output=_int(total.get("output_tokens")),
            ),
            0,
        )
    return None


def codex_transcript(records: Iterable[Mapping[str, Any]], prompt: str) -> list[TranscriptEntry]:
    """A Codex rollout's conversation: the user prompt, each model response (its message, reasoning
    and function calls, with the response's usage), each function call's output."""
    out: list[TranscriptEntry] = []
    pending: TranscriptEntry | None = None
    names: dict[str, str] = {}
    model: str | None = None

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            out.append(pending)
            pending = None

    for rec in records:
        payload = rec.get("payload")
        if not isinstance(payload, Mapping):
            continue
        t = when(rec.get("timestamp"))
        kind = rec.get("type")
        if kind == "turn_context" and isinstance(payload.get("model"), str):
            model = payload["model"]
            continue
        if kind == "token_usage_record" and isinstance(payload.get("usage"), Mapping):
            u = payload["usage"]
            if pending is not None and pending.usage is None:
                pending.usage = TranscriptUsage(
                    input=_int(u.get("input_tokens")),
                    cached=_int(u.get("cached_input_tokens")),
                    output=_int(u.get("output_tokens")),
                )
                flush()
            continue
        if kind != "response_item":
            continue
        item = payload.get("type")
        if item == "message" and payload.get("role") == "user":
            text = _text_parts(payload.get("content"))
            if text.strip() == prompt.strip() or (not out and prompt and prompt.strip() in text):
                flush()
                out.append(TranscriptEntry(kind="prompt", t=t, source=CODEX, text=cap(text)))
            continue
        if item in ("message", "reasoning", "function_call", "custom_tool_call"):
            if item == "message" and payload.get("role") != "assistant":
                continue
            if pending is None:
                pending = TranscriptEntry(kind="model", t=t, source=CODEX, model=model)
            if item == "message":
                text = _text_parts(payload.get("content"))
                pending.text = cap(f"{pending.text}\n{text}" if pending.text else text)
            elif item == "reasoning":
                text = _text_parts(payload.get("summary"), ("summary_text",)) or _text_parts(
                    payload.get("content"), ("reasoning_text", "text")
                )
                if text:
                    pending.reasoning = cap(f"{pending.reasoning}\n{text}" if pending.reasoning else text)
            else:
                name = str(payload.get("name") or "tool")
                if isinstance(payload.get("namespace"), str):
                    name = f"{payload['namespace']}__{name}"
                call_id = str(payload.get("call_id") or payload.get("id") or f"call_{len(names)}")
                names[call_id] = name
                pending.tool_calls.append(
                    ToolCall(
                        id=call_id,
                        name=name,
                        arguments=_arguments(payload.get("arguments", payload.get("input"))),
                    )
                )
            continue
        if item in ("function_call_output", "custom_tool_call_output"):
            flush()
            call_id = str(payload.get("call_id") or "")
            output = payload.get("output")
            if isinstance(output, Mapping):  # {content, success}
                content = _text_parts(output.get("content")) or str(output.get("content") or "")
                failed = output.get("success") is False
            else:
                content, failed = _text_parts(output), False
            out.append(
                TranscriptEntry(
                    kind="tool_result",
                    t=t,
                    source=CODEX,
                    call_id=call_id,
                    name=names.get(call_id),
                    content=cap(content),
                    is_error=failed,
                )
            )
    flush()
    return out


# --------------------------------------------------------------------------- Claude Code


def claude_transcript(
    events: Iterable[Mapping[str, Any]], prompt: str, usage: Mapping[str, Mapping[str, Any]]
) -> list[TranscriptEntry]:
    """Claude Code's ``stream-json`` as a transcript; ``usage`` is the per-request usage by message id
    (from the stream events, see ``claude_code._requests_usage``)."""
    out: list[TranscriptEntry] = [TranscriptEntry(kind="prompt", source=CLAUDE, text=cap(prompt))]
    by_id: dict[str, TranscriptEntry] = {}
    names: dict[str, str] = {}
    for e in events:
        message = e.get("message")
        if not isinstance(message, Mapping):
            continue
        t = when(e.get("timestamp"))
        if e.get("type") == "assistant":
            mid = str(message.get("id") or f"msg_{len(out)}")
            if message.get("model") == "<synthetic>":
                continue
            entry = by_id.get(mid)
            if entry is None:
                u = usage.get(mid) or message.get("usage") or {}
                cached = _int(u.get("cache_read_input_tokens"))
                entry = TranscriptEntry(
                    kind="model",
                    t=t,
                    source=CLAUDE,
                    model=message.get("model") if isinstance(message.get("model"), str) else None,
                    usage=TranscriptUsage(
                        input=(_int(u.get("input_tokens")) or 0)
                        + (cached or 0)
                        + (_int(u.get("cache_creation_input_tokens")) or 0),
                        cached=cached,
                        output=_int(u.get("output_tokens")),
                    )
                    if u
                    else None,
                )
                by_id[mid] = entry
                out.append(entry)
            for block in message.get("content") or ():
                if not isinstance(block, Mapping):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    entry.text = cap(f"{entry.text}\n{block['text']}" if entry.text else block["text"])
                elif block.get("type") == "thinking" and isinstance(block.get("thinking"), str):
                    text = block["thinking"]
                    entry.reasoning = cap(f"{entry.reasoning}\n{text}" if entry.reasoning else text)
                elif block.get("type") == "tool_use":
                    call_id = str(block.get("id") or f"toolu_{len(names)}")
                    names[call_id] = str(block.get("name") or "tool")
                    entry.tool_calls.append(
                        ToolCall(id=call_id, name=names[call_id], arguments=_arguments(block.get("input")))
                    )
        elif e.get("type") == "user":
            for block in message.get("content") or ():
                if not isinstance(block, Mapping) or block.get("type") != "tool_result":
                    continue
                call_id = str(block.get("tool_use_id") or "")
                out.append(
                    TranscriptEntry(
                        kind="tool_result",
                        t=t,
                        source=CLAUDE,
                        call_id=call_id,
                        name=names.get(call_id),
                        content=cap(_text_parts(block.get("content"))),
                        is_error=bool(block.get("is_error")),
                    )
                )
    if len(out) > 1 and out[1].t is not None:
        out[0].t = out[1].t  # the stream does not stamp the prompt: it was sent with the first request
    return out


# --------------------------------------------------------------------------- Hermes


def hermes_transcript(rows: Iterable[Mapping[str, Any]], model: str | None) -> list[TranscriptEntry]:
    """Hermes' ``messages`` rows of one session (in id order) as a transcript."""
    out: list[TranscriptEntry] = []
    names: dict[str, str] = {}
    for row in rows:
        t = when(row.get("timestamp"))
        role = row.get("role")
        content = row.get("content") if isinstance(row.get("content"), str) else None
        if role == "user":
            out.append(TranscriptEntry(kind="prompt", t=t, source=HERMES, text=cap(content or "")))
        elif role == "assistant":
            calls: list[ToolCall] = []
            try:
                raw = json.loads(row["tool_calls"]) if row.get("tool_calls") else []
            except ValueError:
                raw = []
            for c in raw if isinstance(raw, list) else ():
                if not isinstance(c, Mapping):
                    continue
                got = c.get("function")
                fn: Mapping[str, Any] = got if isinstance(got, Mapping) else {}
                call_id = str(c.get("id") or c.get("call_id") or f"call_{len(names)}")
                names[call_id] = str(fn.get("name") or "tool")
                calls.append(
                    ToolCall(id=call_id, name=names[call_id], arguments=_arguments(fn.get("arguments")))
                )
            reasoning = row.get("reasoning_content") or row.get("reasoning")
            out.append(
                TranscriptEntry(
                    kind="model",
                    t=t,
                    source=HERMES,
                    text=cap(content) if content else None,
                    reasoning=cap(reasoning) if isinstance(reasoning, str) and reasoning else None,
                    tool_calls=calls,
                    model=model,
                )
            )
        elif role == "tool":
            call_id = str(row.get("tool_call_id") or "")
            name = row.get("tool_name") if isinstance(row.get("tool_name"), str) else names.get(call_id)
            out.append(
                TranscriptEntry(
                    kind="tool_result",
                    t=t,
                    source=HERMES,
                    call_id=call_id,
                    name=name,
                    content=cap(content or ""),
                )
            )
    return out


__all__ = ["bare_tool", "claude_transcript", "codex_transcript", "codex_usage", "hermes_transcript"]
