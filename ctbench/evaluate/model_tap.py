"""The model tap: the runner's own view of every model response a harness CLI received.

A harness CLI talks to its model endpoint in its own way, and what it keeps of the replies differs:
Claude Code's stream names the model that answered, Codex and Hermes do not; Codex and Claude Code
keep each request's usage, Hermes only its session's totals. So the runner does not rely on them for
what the endpoint itself said: each attempt of a harness agent reaches ``--base-url`` through this
tap, a small HTTP forwarder on the runner's 127.0.0.1 (one per run, one route per attempt,
``http://127.0.0.1:PORT/r/<secret>/...``). It passes requests and responses through unchanged -
streams chunk by chunk, as they arrive - and reads from each response the ``model`` it named and its
``usage``, for the three APIs the harnesses speak, JSON or server-sent events alike:

- OpenAI chat completions (``.../chat/completions``): ``model``, ``usage.prompt_tokens`` (cached in
  ``prompt_tokens_details``), ``completion_tokens``; streamed, the last chunk carries the usage;
- OpenAI Responses (``.../responses``, Codex): the ``response`` object of ``response.created`` and
  ``response.completed`` events (``usage.input_tokens``, ``input_tokens_details.cached_tokens``);
- Anthropic Messages (``.../messages``): ``message_start`` (model, input and cache tokens) and
  ``message_delta`` (output tokens so far).

Usage is kept in the transcript's terms (:class:`~ctbench.evaluate.transcript.TranscriptUsage`:
``input`` includes the cached tokens, Anthropic's cache reads and writes added to its
``input_tokens``). Each record also keeps the tool call ids and the start of the text of the reply,
so a harness's transcript turns can be matched to the responses that made them
(:func:`fill_usage`). The upstream may be ``https``: the tap speaks TLS to it, the agent plain HTTP
to the tap (inside a ``loopback`` sandbox the tap's port is carried like any model endpoint's).

Routes are secrets: a request naming no open route is refused (404) and forwarded nowhere, so one
attempt cannot spend under another's name. Responses are read at most :data:`BODY_CAP` bytes deep
for what they say; the rest still passes through.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import secrets
import socket
import struct
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import urlsplit

from ctbench.evaluate.transcript import TranscriptEntry, TranscriptUsage

Api = Literal["chat", "responses", "messages", "other"]
BODY_CAP = 16 * 1024 * 1024
"""Bytes of one response read for its model and usage (it is passed on whole either way)."""
TEXT_KEPT = 200
"""Characters of a reply's text kept to match it to a transcript turn."""
UPSTREAM_TIMEOUT_S = 3600.0
"""A model may think for long between two chunks; the attempt's own timeout ends it sooner."""
SOURCE = "model endpoint (ctbench model tap)"
"""How a figure read here is labelled where the record says where a figure came from."""
_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    "accept-encoding",
}


@dataclass
class TapRecord:
    """One response the endpoint gave an attempt, as far as it named its model and usage."""

    t: datetime
    api: Api
    path: str
    status: int
    stream: bool
    model: str | None = None
    usage: TranscriptUsage | None = None
    call_ids: list[str] = field(default_factory=list)
    text: str = ""


def api_of(path: str) -> Api:
    p = path.split("?", 1)[0].rstrip("/")
    if p.endswith("/chat/completions"):
        return "chat"
    if p.endswith("/responses"):
        return "responses"
    if p.endswith("/messages"):
        return "messages"
    return "other"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Reader:
    """Reads a response body as it passes (JSON whole, SSE event by event) into a :class:`TapRecord`."""

    def __init__(self, record: TapRecord) -> None:
        self.record = record
        self._buf = bytearray()
        self._seen = 0
        self._text: list[str] = []
        self._usage: dict[str, int | None] = {}

    def feed(self, data: bytes) -> None:
        if self._seen >= BODY_CAP:
            return
        self._seen += len(data)
        self._buf += data
        if not self.record.stream:
            return
        while (cut := self._buf.find(b"\n")) >= 0:
            line = bytes(self._buf[:cut]).strip()
            del self._buf[: cut + 1]
            if line.startswith(b"data:"):
                self._event(line[5:].strip())

    def finish(self) -> TapRecord:
        if self.record.stream:
            rest = bytes(self._buf).strip()
            if rest.startswith(b"data:"):
                self._event(rest[5:].strip())
        elif self._buf:
            try:
                body = json.loads(bytes(self._buf))
            except ValueError:
                body = None
            if isinstance(body, dict):
                self._whole(body)
        self._buf.clear()
        r = self.record
        r.text = "".join(self._text)[:TEXT_KEPT]
        if any(v is not None for v in self._usage.values()):
            r.usage = TranscriptUsage(
                input=self._usage.get("input"),
                cached=self._usage.get("cached"),
                output=self._usage.get("output"),
            )
        return r

    # ------------------------------------------------------------------ what the APIs say

    def _model(self, value: Any) -> None:
        if isinstance(value, str) and value:
            self.record.model = value

    def _use(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        api = self.record.api
        if api == "chat":
            details = usage.get("prompt_tokens_details") or {}
            got = {
                "input": _int(usage.get("prompt_tokens")),
                "cached": _int(details.get("cached_tokens")) if isinstance(details, dict) else None,
                "output": _int(usage.get("completion_tokens")),
            }
        elif api == "responses":
            details = usage.get("input_tokens_details") or {}
            got = {
                "input": _int(usage.get("input_tokens")),
                "cached": _int(details.get("cached_tokens")) if isinstance(details, dict) else None,
                "output": _int(usage.get("output_tokens")),
            }
        else:  # Anthropic: input_tokens leaves out what the cache read or wrote
            plain = _int(usage.get("input_tokens"))
            read = _int(usage.get("cache_read_input_tokens"))
            written = _int(usage.get("cache_creation_input_tokens"))
            known = [v for v in (plain, read, written) if v is not None]
            got = {
                "input": sum(known) if known else None,
                "cached": read,
                "output": _int(usage.get("output_tokens")),
            }
            if plain is None:  # a message_delta with output tokens only: keep the input of message_start
                got.pop("input")
                if read is None:
                    got.pop("cached")
        self._usage.update({k: v for k, v in got.items() if v is not None or k not in self._usage})

    def _calls(self, ids: list[Any]) -> None:
        for cid in ids:
            if isinstance(cid, str) and cid and cid not in self.record.call_ids:
                self.record.call_ids.append(cid)

    def _whole(self, body: dict[str, Any]) -> None:
        """A JSON reply: a chat completion, a Responses ``response`` or an Anthropic ``message``."""
        self._model(body.get("model"))
        self._use(body.get("usage"))
        for choice in body.get("choices") or []:
            msg = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(msg, dict):
                if isinstance(msg.get("content"), str):
                    self._text.append(msg["content"])
                self._calls([c.get("id") for c in msg.get("tool_calls") or [] if isinstance(c, dict)])
        for block in body.get("content") or [] if body.get("type") == "message" else []:
            if isinstance(block, dict):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    self._text.append(block["text"])
                elif block.get("type") == "tool_use":
                    self._calls([block.get("id")])
        for item in body.get("output") or [] if body.get("object") == "response" else []:
            self._item(item)

    def _item(self, item: Any) -> None:
        """One output item of a Responses reply."""
        if not isinstance(item, dict):
            return
        kind = str(item.get("type") or "")
        if kind.endswith("_call"):
            self._calls([item.get("call_id") or item.get("id")])
        elif kind == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    self._text.append(part["text"])

    def _event(self, raw: bytes) -> None:
        if not raw or raw == b"[DONE]":
            return
        try:
            ev = json.loads(raw)
        except ValueError:
            return
        if not isinstance(ev, dict):
            return
        kind = ev.get("type")
        if self.record.api == "responses":
            response = ev.get("response")
            if isinstance(response, dict):
                self._model(response.get("model"))
                self._use(response.get("usage"))
            if kind == "response.output_item.done":
                self._item(ev.get("item"))
            return
        if self.record.api == "messages":
            if kind == "message_start" and isinstance(ev.get("message"), dict):
                self._model(ev["message"].get("model"))
                self._use(ev["message"].get("usage"))
            elif kind == "message_delta":
                self._use(ev.get("usage"))
            elif kind == "content_block_start" and isinstance(ev.get("content_block"), dict):
                block = ev["content_block"]
                if block.get("type") == "tool_use":
                    self._calls([block.get("id")])
            elif kind == "content_block_delta" and isinstance(ev.get("delta"), dict):
                if isinstance(ev["delta"].get("text"), str):
                    self._text.append(ev["delta"]["text"])
            return
        # chat completion chunks
        self._model(ev.get("model"))
        if ev.get("usage"):
            self._use(ev["usage"])
        for choice in ev.get("choices") or []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if isinstance(delta, dict):
                if isinstance(delta.get("content"), str):
                    self._text.append(delta["content"])
                self._calls([c.get("id") for c in delta.get("tool_calls") or [] if isinstance(c, dict)])


class TapRoute:
    """One attempt's way to the endpoint through the tap, and what came back on it."""

    def __init__(self, tap: ModelTap, token: str) -> None:
        self._tap, self.token = tap, token
        self._records: list[TapRecord] = []
        self._lock = threading.Lock()
        self.failures: list[str] = []
        """Why requests reached no endpoint (connection refused, a TLS error), for the task log."""

    @property
    def base_url(self) -> str:
        """``--base-url`` as this attempt reaches it: the tap's address, the route, the upstream path."""
        return f"{self._tap.url}/r/{self.token}{self._tap.upstream_path}"

    def add(self, record: TapRecord) -> None:
        with self._lock:
            self._records.append(record)

    def records(self) -> list[TapRecord]:
        """The responses so far, in the order they were complete."""
        with self._lock:
            return list(self._records)

    def close(self) -> None:
        self._tap.close_route(self.token)


class ModelTap:
    """The run's tap in front of one model endpoint (see the module text). ``start``/``stop`` it."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"model endpoint {upstream!r}: expected an http:// or https:// URL")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.upstream_path = parts.path.rstrip("/")
        self._routes: dict[str, TapRoute] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start() first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> ModelTap:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="ctb-model-tap", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def open_route(self) -> TapRoute:
        route = TapRoute(self, secrets.token_urlsafe(18))
        with self._lock:
            self._routes[route.token] = route
        return route

    def close_route(self, token: str) -> None:
        with self._lock:
            self._routes.pop(token, None)

    def route(self, token: str) -> TapRoute | None:
        with self._lock:
            return self._routes.get(token)

    def connect(self) -> http.client.HTTPConnection:
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=UPSTREAM_TIMEOUT_S)
        return http.client.HTTPConnection(self.host, self.port, timeout=UPSTREAM_TIMEOUT_S)


def _handler_for(tap: ModelTap) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
            pass

        def _refuse(self, status: int, message: str) -> None:
            raw = json.dumps({"error": {"message": message, "type": "ctbench_model_tap"}}).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _body(self) -> bytes:
            if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
                out = bytearray()
                while True:
                    size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline().strip():
                            pass
                        return bytes(out)
                    out += self.rfile.read(size)
                    self.rfile.readline()
            length = int(self.headers.get("content-length") or 0)
            return self.rfile.read(length) if length else b""

        def _forward(self) -> None:
            _, r, token, rest = (self.path.split("/", 3) + ["", "", ""])[:4]
            route = tap.route(token) if r == "r" else None
            if route is None:
                self._refuse(404, "ctbench model tap: no such route (the attempt is over, or never was)")
                return
            path = "/" + rest  # the route's URL already holds the upstream's own path
            body = self._body()
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            headers["Accept-Encoding"] = "identity"  # the tap must read what passes
            if body or self.command in ("POST", "PUT", "PATCH"):
                headers["Content-Length"] = str(len(body))
            api = api_of(rest)
            conn = tap.connect()
            try:
                try:
                    conn.request(self.command, path, body=body or None, headers=headers)
                    resp = conn.getresponse()
                except OSError as exc:
                    # as without the tap: the agent's connection ends with no reply, and it retries or
                    # gives up as it would; the task log says why (HarnessAgent writes route.failures)
                    with route._lock:
                        if len(route.failures) < 20:  # a CLI retrying for minutes: the first ones say it
                            route.failures.append(f"{tap.scheme}://{tap.host}:{tap.port}: {exc}")
                    self.close_connection = True
                    with contextlib.suppress(OSError):
                        self.connection.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                        )
                    return
                ctype = resp.getheader("content-type") or ""
                record = TapRecord(
                    t=datetime.now(UTC),
                    api=api,
                    path=path,
                    status=resp.status,
                    stream="event-stream" in ctype,
                )
                reader = _Reader(record)
                self.send_response(resp.status, resp.reason)
                for k, v in resp.getheaders():
                    if k.lower() not in _HOP:
                        self.send_header(k, v)
                length = resp.getheader("content-length")
                chunked = length is None and self.command != "HEAD" and resp.status not in (204, 304)
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                elif length is not None:
                    self.send_header("Content-Length", length)
                self.end_headers()
                self.wfile.flush()
                keep = self.command == "POST" and api != "other"
                left = int(length) if length is not None and length.isdigit() else None
                while data := resp.read1(65536):
                    reader.feed(data)
                    if left is not None:
                        left -= len(data)
                        if left <= 0 and keep:  # recorded before the agent has the reply's last byte
                            route.add(reader.finish())
                            keep = False
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
                if keep:
                    route.add(reader.finish())
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
            except OSError:  # the agent went away mid-reply (its attempt ended): nothing to answer
                self.close_connection = True
            finally:
                with contextlib.suppress(OSError):
                    conn.close()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _forward  # noqa: N815

    return Handler


# --------------------------------------------------------------------------- what the record takes


def models_seen(records: list[TapRecord]) -> list[str]:
    return [r.model for r in records if r.model]


def _agrees(entry: TranscriptEntry, record: TapRecord) -> bool:
    """Could this response have made this transcript turn? Tool call ids decide where the turn has
    some; else the start of its text, where both have one."""
    ids = [c.id for c in entry.tool_calls]
    if ids and record.call_ids:
        return ids == record.call_ids[: len(ids)] or set(ids) <= set(record.call_ids)
    if ids or record.call_ids:
        return False
    text = (entry.text or "").strip()
    seen = record.text.strip()
    if text and seen:
        n = min(len(text), len(seen), TEXT_KEPT)
        return text[:n] == seen[:n]
    return True


def fill_usage(entries: list[TranscriptEntry], records: list[TapRecord]) -> int:
    """Give each model turn of a transcript that has no usage the usage of the response that made it.

    Responses are taken in order; one that does not agree with the turn (a side request the harness
    made - a session title, a summary - that is not part of the conversation) is passed over. Each
    response is used at most once, so per-turn figures never count a request twice. Returns the number
    of turns filled."""
    answered = [r for r in records if r.status == 200 and r.usage is not None]
    filled, j = 0, 0
    for entry in entries:
        if entry.kind != "model" or entry.usage is not None:
            continue
        k = j
        while k < len(answered) and not _agrees(entry, answered[k]):
            k += 1
        if k == len(answered):
            continue  # no response left that made this turn: it keeps no usage rather than a wrong one
        usage = answered[k].usage
        assert usage is not None
        entry.usage = usage.model_copy(update={"source": SOURCE})
        if entry.model is None:
            entry.model = answered[k].model
        filled += 1
        j = k + 1
    return filled


__all__ = [
    "BODY_CAP",
    "SOURCE",
    "ModelTap",
    "TapRecord",
    "TapRoute",
    "api_of",
    "fill_usage",
    "models_seen",
]
