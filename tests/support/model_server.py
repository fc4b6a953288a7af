"""A scripted model server on 127.0.0.1 for driving the real agent CLIs (Codex, Claude Code, Hermes).

It speaks the three wire APIs those CLIs use - the OpenAI Responses API (``POST /v1/responses``,
streamed as SSE, with MCP tools arriving as one ``namespace`` tool), the Anthropic Messages API
(``POST /v1/messages``, streamed) and OpenAI chat completions (``POST /v1/chat/completions``,
streamed or not) - and plays a fixed script instead of thinking: list the devices, run the task's
golden actions through the CLI's ``ctb`` tools, submit the gold answer, then say one final sentence.

The script is stateless across requests: the step a request gets is the number of tool results the
CLI sends back in its history, so a CLI that retries a request gets the same step again. The task is
recognised by its id in the prompt, so one server can serve a whole run of several tasks at once.

Every request is logged (API, path, tool names and their schemas, the step played, the usage
reported) so tests can assert what each CLI really sent, and every reply carries known token
counts so tests can check the usage a harness records against what the "model" reported.

Bounded on purpose: it stops answering after ``max_requests`` requests or ``max_seconds`` seconds,
whichever comes first, and a deliberately slow reply (``delay_s``) never sleeps past that bound.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CTB_TOOLS = ("list_devices", "run_command", "submit_answer")


@dataclass(frozen=True)
class Step:
    """One scripted model turn: a call of one ``ctb`` tool, or (tool None) a final text message."""

    tool: str | None
    arguments: dict[str, str] = field(default_factory=dict)
    text: str = ""


@dataclass(frozen=True)
class TaskScript:
    task_id: str
    steps: tuple[Step, ...]

    @classmethod
    def golden(
        cls, task_dir: Path, *, submit: bool = True, final_text: str = "Done: answer submitted."
    ) -> TaskScript:
        """list_devices, every golden action, submit_answer(gold), final text - from the task's files."""
        from ctbench.model import Family, HiddenSpec
        from ctbench.yamlio import load_fast

        hidden = HiddenSpec.model_validate(load_fast(task_dir / "hidden.yaml"))
        family = Family(load_fast(task_dir / "task.yaml")["family"])
        steps = [Step("list_devices")]
        steps += [
            Step("run_command", {"device": a.device, "command": a.command}) for a in hidden.golden_actions
        ]
        gold = "<answer>\n" + "\n".join(hidden.gold_answer_lines(family)) + "\n</answer>"
        if submit:
            steps.append(Step("submit_answer", {"answer": gold}))
        steps.append(Step(None, text=final_text))
        return cls(hidden.id, tuple(steps))

    @property
    def gold_answer(self) -> str | None:
        return next((s.arguments["answer"] for s in self.steps if s.tool == "submit_answer"), None)


@dataclass(frozen=True)
class Usage:
    """Token counts of one reply, as the server reported them. ``input`` includes ``cached``."""

    input: int
    cached: int
    output: int


def usage_for(step: int) -> Usage:
    """Known, step-dependent token counts (distinct per step so sums cannot agree by accident)."""
    return Usage(input=1000 + 37 * step, cached=256 + step, output=40 + 3 * step)


@dataclass
class RequestRecord:
    api: str  # responses | messages | chat | other
    path: str
    task_id: str | None
    step: int | None
    tool_names: list[str]
    tools: list[dict[str, Any]]
    stream: bool
    usage: Usage | None
    played: str | None
    """The tool called (bare name), "text" for a final message, None when nothing was scripted."""
    body: dict[str, Any]


class ScriptedModelServer:
    """Serve the scripts on 127.0.0.1 in a background thread; ``with`` starts and stops it."""

    def __init__(
        self,
        scripts: list[TaskScript],
        *,
        max_requests: int = 400,
        max_seconds: float = 600.0,
        delay_s: float = 0.0,
        port: int = 0,
        stall_at: int | None = None,
        reported_model: str | None = None,
        fail_at: int | None = None,
        fail_times: int = 0,
    ) -> None:
        self.scripts = {s.task_id: s for s in scripts}
        self.max_requests = max_requests
        self.max_seconds = max_seconds
        self.delay_s = delay_s
        self.stall_at = stall_at
        self.reported_model = reported_model
        self.fail_at, self.fail_times = fail_at, fail_times
        """The first ``fail_times`` requests at step ``fail_at`` get HTTP 500 (a flaky endpoint)."""
        self.failed: list[RequestRecord] = []
        """The model id every reply names (default: the requested one), as endpoints that resolve an
        alias to a dated snapshot do."""
        """Steps from this one on get no reply until the server's time bound (an agent cut off by its
        timeout after the steps before it were answered)."""
        self.requests: list[RequestRecord] = []
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- life cycle

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL with ``/v1`` (OpenAI style); Anthropic clients take it without."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedModelServer:
        self._started = time.monotonic()
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-model",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------- what tests read

    def main_requests(self, task_id: str | None = None) -> list[RequestRecord]:
        """Requests that offered the ctb tools (the agent loop's own, not side calls)."""
        with self._lock:
            return [
                r for r in self.requests if r.step is not None and (task_id is None or r.task_id == task_id)
            ]

    def reported(self, task_id: str) -> Usage:
        """The sum of the usage the server reported for ``task_id``."""
        with self._lock:
            used = [r.usage for r in self.requests if r.task_id == task_id and r.usage is not None]
        return Usage(sum(u.input for u in used), sum(u.cached for u in used), sum(u.output for u in used))

    # ----------------------------------------------------------------- the script

    def over_budget(self) -> bool:
        return len(self.requests) >= self.max_requests or time.monotonic() - self._started > self.max_seconds

    def wait(self, seconds: float) -> None:
        """Sleep for a slow reply, never past the server's own time bound or its stop."""
        left = self.max_seconds - (time.monotonic() - self._started)
        self._stop.wait(max(0.0, min(seconds, left)))

    def plan(
        self, api: str, path: str, body: dict[str, Any]
    ) -> tuple[RequestRecord, Step | None, dict[str, Any]]:
        """Which step this request gets, and the CLI's own name for each ctb tool it offered."""
        tools = _tools_of(api, body)
        names = {bare: tool for tool in tools if (bare := _ctb_bare(tool["name"])) is not None}
        for tool in tools:  # the CLI's own tools by their own names (a script may call its shell tool)
            names.setdefault(tool["name"], tool)
        text = _conversation_text(api, body)
        task_id = next((tid for tid in self.scripts if tid in text), None)
        step_no: int | None = None
        step: Step | None = None
        if any(_ctb_bare(n) for n in names) and task_id is not None:
            step_no = _tool_results(api, body)
            steps = self.scripts[task_id].steps
            step = steps[min(step_no, len(steps) - 1)]
            if step.tool is not None and step.tool not in names:
                step = Step(None, text=f"The {step.tool} tool is missing.")
            elif step.tool is not None:
                step = _fill(step, text)
        usage = usage_for(step_no if step_no is not None else 99) if api != "other" else None
        played = None if step is None else (step.tool or "text")
        record = RequestRecord(
            api,
            path,
            task_id,
            step_no,
            [t["name"] for t in tools],
            tools,
            bool(body.get("stream")),
            usage,
            played,
            body,
        )
        with self._lock:
            self.requests.append(record)
        return record, step, names


SSH_CONFIG = "{ssh_config}"
"""In a step's arguments: the ssh configuration file the prompt names (``ssh -F PATH DEVICE``), which
differs per attempt, read from the conversation as a model reads its prompt."""


def _fill(step: Step, conversation: str) -> Step:
    if not any(SSH_CONFIG in v for v in step.arguments.values()):
        return step
    found = re.search(r"ssh -F (\S+) DEVICE", conversation)
    if found is None:
        return Step(None, text="The prompt names no ssh configuration.")
    return Step(step.tool, {k: v.replace(SSH_CONFIG, found.group(1)) for k, v in step.arguments.items()})


# --------------------------------------------------------------------------- request parsing


def _ctb_bare(name: str) -> str | None:
    """``run_command`` for ``mcp__ctb__run_command``, ``mcp_ctb_run_command``, ``mcp__ctb.run_command`` ..."""
    for bare in CTB_TOOLS:
        if name == bare or (name.endswith(bare) and "ctb" in name[: -len(bare)]):
            return bare
    return None


def _tools_of(api: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool offered, flattened: ``{"name", "namespace"?, "schema"}`` (Responses namespaces opened)."""
    out: list[dict[str, Any]] = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if api == "chat":
            fn = tool.get("function") or {}
            out.append({"name": str(fn.get("name", "")), "schema": fn.get("parameters")})
        elif api == "messages":
            out.append({"name": str(tool.get("name", "")), "schema": tool.get("input_schema")})
        elif tool.get("type") == "namespace":
            for sub in tool.get("tools") or []:
                out.append(
                    {
                        "name": str(sub.get("name", "")),
                        "namespace": str(tool.get("name", "")),
                        "schema": sub.get("parameters"),
                    }
                )
        else:
            out.append(
                {"name": str(tool.get("name") or tool.get("type") or ""), "schema": tool.get("parameters")}
            )
    for tool in out:
        if "namespace" in tool:
            tool["name"] = f"{tool['namespace']}.{tool['name']}"
    return out


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            _text_of(c.get("text") or c.get("content") or "") if isinstance(c, dict) else str(c)
            for c in content
        )
    return ""


def _conversation_text(api: str, body: dict[str, Any]) -> str:
    if api == "responses":
        items = body.get("input")
        if isinstance(items, str):
            return items
        return " ".join(
            _text_of(i.get("content"))
            for i in items or []
            if isinstance(i, dict) and i.get("type", "message") == "message"
        )
    return " ".join(
        _text_of(m.get("content"))
        for m in body.get("messages") or []
        if isinstance(m, dict) and m.get("role") in ("user", "system")
    )


def _tool_results(api: str, body: dict[str, Any]) -> int:
    if api == "responses":
        return sum(
            1
            for i in body.get("input") or []
            if isinstance(i, dict) and i.get("type") == "function_call_output"
        )
    if api == "messages":
        return sum(
            1
            for m in body.get("messages") or []
            if isinstance(m, dict) and isinstance(m.get("content"), list)
            for c in m["content"]
            if isinstance(c, dict) and c.get("type") == "tool_result"
        )
    return sum(1 for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "tool")


# --------------------------------------------------------------------------- replies


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n").encode()


def _uid(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:20]}"


def responses_events(
    step: Step, names: dict[str, dict[str, Any]], usage: Usage, model: str
) -> Iterator[bytes]:
    rid = _uid("resp")
    base = {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "in_progress",
        "output": [],
    }
    yield _sse("response.created", {"type": "response.created", "response": base})
    if step.tool is not None:
        tool = names[step.tool]
        item: dict[str, Any] = {
            "type": "function_call",
            "id": _uid("fc"),
            "call_id": _uid("call"),
            "arguments": json.dumps(step.arguments),
            "status": "completed",
        }
        if "namespace" in tool:
            item["namespace"] = tool["namespace"]
            item["name"] = tool["name"].split(".", 1)[1]
        else:
            item["name"] = tool["name"]
    else:
        item = {
            "type": "message",
            "id": _uid("msg"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": step.text, "annotations": []}],
        }
        yield _sse(
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "content": [], "status": "in_progress"},
            },
        )
        yield _sse(
            "response.output_text.delta",
            {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": step.text,
            },
        )
    yield _sse(
        "response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}
    )
    done = {
        **base,
        "status": "completed",
        "output": [item],
        "usage": {
            "input_tokens": usage.input,
            "input_tokens_details": {"cached_tokens": usage.cached},
            "output_tokens": usage.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.input + usage.output,
        },
    }
    yield _sse("response.completed", {"type": "response.completed", "response": done})


def _anthropic_usage(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input - usage.cached,
        "cache_read_input_tokens": usage.cached,
        "cache_creation_input_tokens": 0,
        "output_tokens": usage.output,
    }


def messages_reply(step: Step, names: dict[str, dict[str, Any]], usage: Usage, model: str) -> dict[str, Any]:
    if step.tool is not None:
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": _uid("toolu"),
            "name": names[step.tool]["name"],
            "input": step.arguments,
        }
        stop = "tool_use"
    else:
        block, stop = {"type": "text", "text": step.text}, "end_turn"
    return {
        "id": _uid("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": _anthropic_usage(usage),
    }


def messages_events(reply: dict[str, Any]) -> Iterator[bytes]:
    usage = reply["usage"]
    start = {**reply, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield _sse("message_start", {"type": "message_start", "message": start})
    block = reply["content"][0]
    if block["type"] == "tool_use":
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {**block, "input": {}}},
        )
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        )
        delta = {"type": "text_delta", "text": block["text"]}
    yield _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


def chat_reply(step: Step, names: dict[str, dict[str, Any]], usage: Usage, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if step.tool is not None:
        message["tool_calls"] = [
            {
                "id": _uid("call"),
                "type": "function",
                "function": {"name": names[step.tool]["name"], "arguments": json.dumps(step.arguments)},
            }
        ]
        finish = "tool_calls"
    else:
        message["content"], finish = step.text, "stop"
    return {
        "id": _uid("chatcmpl"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": usage.input,
            "completion_tokens": usage.output,
            "total_tokens": usage.input + usage.output,
            "prompt_tokens_details": {"cached_tokens": usage.cached},
        },
    }


def chat_events(reply: dict[str, Any]) -> Iterator[bytes]:
    head = {k: reply[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = reply["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message["content"]}
    if "tool_calls" in message:
        delta["tool_calls"] = [{"index": 0, **call} for call in message["tool_calls"]]
    yield _sse(None, {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    yield _sse(
        None, {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}
    )
    yield _sse(None, {**head, "choices": [], "usage": reply["usage"]})
    yield _sse(None, "[DONE]")


# --------------------------------------------------------------------------- HTTP


def _handler_for(server: ScriptedModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
            pass

        def _json(self, status: int, data: Any) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _stream(self, chunks: Iterator[bytes]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            for chunk in chunks:
                self.wfile.write(chunk)
                self.wfile.flush()

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            if self.path.rstrip("/").endswith("/models"):
                self._json(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": m, "object": "model", "owned_by": "ctbench"} for m in ("scripted",)],
                    },
                )
            else:
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            if server.over_budget():
                self._json(
                    503,
                    {"error": {"message": "scripted model server: budget exhausted", "type": "overloaded"}},
                )
                return
            path = self.path.split("?", 1)[0].rstrip("/")
            if path.endswith("/messages/count_tokens"):
                self._json(200, {"input_tokens": 1000})
                return
            api = (
                "responses"
                if path.endswith("/responses")
                else "messages"
                if path.endswith("/messages")
                else "chat"
                if path.endswith("/chat/completions")
                else "other"
            )
            if api == "other":
                server.plan(api, path, body)
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            record, step, names = server.plan(api, path, body)
            if server.delay_s:
                server.wait(server.delay_s)
            if server.stall_at is not None and record.step is not None and record.step >= server.stall_at:
                server.wait(server.max_seconds)
            if record.step is not None and record.step == server.fail_at:
                with server._lock:
                    fail = len(server.failed) < server.fail_times
                    if fail:
                        server.failed.append(record)
                if fail:
                    self._json(
                        500, {"error": {"message": "scripted model server: flaky", "type": "server_error"}}
                    )
                    return
            if step is None:  # a side request (title, summary, ...) or no ctb tools: a plain short answer
                step = Step(None, text="OK.")
            assert record.usage is not None
            model = server.reported_model or str(body.get("model") or "scripted")
            stream = bool(body.get("stream")) or api == "responses"
            try:
                if api == "responses":
                    self._stream(responses_events(step, names, record.usage, model))
                elif api == "messages":
                    reply = messages_reply(step, names, record.usage, model)
                    self._stream(messages_events(reply)) if stream else self._json(200, reply)
                else:
                    reply = chat_reply(step, names, record.usage, model)
                    self._stream(chat_events(reply)) if stream else self._json(200, reply)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def scripts_for(task_set: Path, task_ids: list[str], **kwargs: Any) -> list[TaskScript]:
    """The golden script of each task id found under ``task_set`` (``rca/RCA-001``, ``path/PATH-001`` ...)."""
    out = []
    for tid in task_ids:
        (folder,) = [p for p in task_set.glob(f"*/{tid}") if (p / "hidden.yaml").is_file()]
        out.append(TaskScript.golden(folder, **kwargs))
    return out


__all__ = [
    "CTB_TOOLS",
    "SSH_CONFIG",
    "RequestRecord",
    "ScriptedModelServer",
    "Step",
    "TaskScript",
    "Usage",
    "scripts_for",
    "usage_for",
]
