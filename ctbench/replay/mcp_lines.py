"""Incoming MCP stdio lines, repaired before the SDK parses them, so every request gets a reply.

The MCP SDK parses each stdin line with pydantic's JSON parser, which refuses a lone surrogate
escape (``"\\ud800"``), nesting past its recursion limit and some huge numbers. A line it cannot
parse is dropped without a reply: the client waits for ever on that request id. Here each line is
checked first (:func:`ctbench.replay.http_body.parse_json`, the HTTP API's own limits):

- a line whose strings hold lone surrogates is re-encoded with U+FFFD in their place, so the call
  reaches the tools, which record it and answer it as the invalid text it is;
- a line that cannot be accepted at all, but whose request id can be read, becomes a request the
  server answers with an error for that id: a tool error naming the problem for ``tools/call``, an
  unknown-method error otherwise.

Lines without a readable id (notifications, garbage) pass through: there is no one to answer.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterable, AsyncIterator
from contextlib import suppress
from io import TextIOWrapper
from typing import TYPE_CHECKING

from ctbench.replay.http_body import BodyError, parse_json
from ctbench.replay.proxy_log import proxy_logger
from ctbench.safetext import scrub_json

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

INVALID_REQUEST_TOOL = "ctbench.invalid_request"
"""Name of the tool call a refused ``tools/call`` line becomes; its only argument is the problem."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\]|\\.){0,200}")')
_METHOD = re.compile(r'"method"\s*:\s*"([^"\\]{1,100})"')


def _refusal(line: str, problem: str) -> str:
    ident = _ID.search(line)
    if ident is None:
        return line
    method = _METHOD.search(line)
    if method is not None and method.group(1) == "tools/call":
        params = {"name": INVALID_REQUEST_TOOL, "arguments": {"problem": problem}}
        return (
            f'{{"jsonrpc":"2.0","id":{ident.group(1)},"method":"tools/call","params":{json.dumps(params)}}}'
        )
    return f'{{"jsonrpc":"2.0","id":{ident.group(1)},"method":"ctbench/refused-request"}}'


def repair_line(line: str) -> str:
    """``line`` as the SDK can parse it and answer; unchanged when it was fine."""
    try:
        data = parse_json(line.encode("utf-8", errors="surrogatepass"))
    except BodyError as exc:
        return _refusal(line, f"the request was refused: {exc.message}")
    if _SURROGATE_ESCAPE.search(line) is None:
        return line
    return json.dumps(scrub_json(data), ensure_ascii=False) + "\n"


async def repaired_lines(source: AsyncIterable[str]) -> AsyncIterator[str]:
    log = proxy_logger()
    count = 0
    async for line in source:
        if line.strip() and log.isEnabledFor(logging.INFO):
            count += 1
            log.info("read %s", _described(line))
        yield repair_line(line) if line.strip() else line
    if log.isEnabledFor(logging.INFO):
        log.info("standard input closed after %d message(s)", count)


def _described(line: str) -> str:
    """A message as the proxy log names it: its method and id, never its arguments."""
    method, ident = _METHOD.search(line), _ID.search(line)
    name = method.group(1) if method is not None else "a response or unreadable line"
    return name + (f" (id {ident.group(1)[:40]})" if ident is not None else "")


class RepairingApp:
    """ASGI wrapper for the streamable HTTP transport: each POSTed JSON body goes through
    :func:`repair_line`, so a request over HTTP is answered exactly as the same line on stdio is
    (recorded and answered, or refused for its id) instead of the SDK's bare parse error."""

    def __init__(self, app: ASGIApp, *, max_body: int = 1024 * 1024) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away before the body arrived
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_body:
                await _respond(send, 413, f"request body over {self.max_body} bytes")
                return
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        fixed = repair_line(body.decode("utf-8", errors="replace")).encode("utf-8") if body.strip() else body
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": fixed, "more_body": False}
            return await receive()

        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(fixed)).encode()))
        await self.app({**scope, "headers": headers}, replay, send)


async def _respond(send: Send, status: int, message: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class UnownedTextReader(TextIOWrapper):
    """A text layer over ``sys.stdin.buffer`` that never closes it (closing it at garbage collection
    would close the process's stdin under anything else still reading it)."""

    def close(self) -> None:
        with suppress(ValueError):
            self.detach()


class RepairedStdin:
    """What ``stdio_server(stdin=...)`` iterates over: the process's stdin, line by line, repaired."""

    def __init__(self, source: AsyncIterable[str]) -> None:
        self._source = source

    def __aiter__(self) -> AsyncIterator[str]:
        return repaired_lines(self._source)


__all__ = ["INVALID_REQUEST_TOOL", "RepairedStdin", "RepairingApp", "UnownedTextReader", "repair_line"]
