"""Reading a JSON request body, and writing a JSON response, whatever a client sends.

A hostile or broken client can send JSON that the standard parser accepts but that breaks the
server later: a 100,000-deep array (``RecursionError`` in the parser or the validator), a
100,000-digit integer (``ValueError`` from Python's integer-conversion limit), ``NaN``, or a string
escape ``"\\ud800"`` that decodes into a lone surrogate no response or log line can encode. Each of
these must be the client's 4xx, answered before anything is recorded, never the server's 500 with a
traceback; and a response that echoes client text must always encode. Kept apart from
:mod:`ctbench.replay.http_server` so the routes stay about sessions.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from ctbench.errors import validation_message
from ctbench.safetext import scrub_json

MAX_DEPTH = 32
"""Deepest nesting of arrays and objects accepted in a body (every route takes a flat object)."""

MAX_NUMBER_CHARS = 100
"""Longest number literal accepted; far beyond any real value, far below Python's 4,300-digit limit."""

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


class BodyError(Exception):
    """A request body the server refuses: ``status``, a machine ``code`` and a one-line message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def nesting_depth(raw: bytes, stop: int = MAX_DEPTH) -> int:
    """How deeply arrays and objects nest in the JSON text ``raw`` (brackets inside strings ignored).

    The scan stops as soon as the depth passes ``stop`` (the answer is then ``stop + 1``), so a
    megabyte of brackets costs no more than a body that is merely too deep.
    """
    opening = raw.count(b"[") + raw.count(b"{")
    if opening <= stop:  # the common case: no scan needed
        return opening
    depth = deepest = 0
    for m in _BRACKET.finditer(_STRING.sub(b'""', raw)):
        if m.group() in (b"[", b"{"):
            depth += 1
            if depth > stop:
                return depth
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _number(kind: str, convert: Any) -> Any:
    def parse(text: str) -> Any:
        if len(text) > MAX_NUMBER_CHARS:
            raise BodyError(
                400,
                "bad_json",
                f"the body is not acceptable JSON: a {len(text)}-character {kind} "
                f"(the limit is {MAX_NUMBER_CHARS})",
            )
        return convert(text)

    return parse


def _constant(name: str) -> Any:
    raise BodyError(400, "bad_json", f"the body is not JSON: {name} is not a JSON value")


def parse_json(raw: bytes) -> Any:
    """The JSON value of ``raw``, or :class:`BodyError` (400) saying why it is refused."""
    depth = nesting_depth(raw)
    if depth > MAX_DEPTH:
        raise BodyError(
            400, "bad_json", f"the body nests arrays or objects more than {MAX_DEPTH} levels deep"
        )
    try:
        return json.loads(
            raw,
            parse_int=_number("integer", int),
            parse_float=_number("number", float),
            parse_constant=_constant,
        )
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BodyError(400, "bad_json", f"the body is not JSON: {exc}") from None
    except RecursionError:  # the scan above should make this unreachable; never a 500 regardless
        raise BodyError(400, "bad_json", f"the body nests too deeply (the limit is {MAX_DEPTH})") from None


async def read_body(request: Request, model: type[BaseModel], max_body: int) -> Any:
    """Read at most ``max_body`` bytes, parse them as JSON and validate them as ``model``."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > max_body):
        raise BodyError(413, "body_too_large", f"request body over {max_body} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_body:
            raise BodyError(413, "body_too_large", f"request body over {max_body} bytes")
        chunks.append(chunk)
    data = parse_json(b"".join(chunks))
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise BodyError(422, "bad_request", validation_message(exc, "body")) from None


class SafeJSONResponse(JSONResponse):
    """A JSON response that always encodes: a lone surrogate in echoed text goes out as U+FFFD."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return super().render(scrub_json(content))


__all__ = [
    "MAX_DEPTH",
    "MAX_NUMBER_CHARS",
    "BodyError",
    "SafeJSONResponse",
    "nesting_depth",
    "parse_json",
    "read_body",
]
