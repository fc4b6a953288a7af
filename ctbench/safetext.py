"""Text that may not be valid Unicode, made safe to record, serialise and echo.

JSON lets a client write ``"\\ud800"``: Python decodes it into a ``str`` holding a lone surrogate,
which no UTF-8 encoder accepts. Such a string travels fine until something writes it - a trajectory
line, a result line, an HTTP response, an MCP reply - and then fails there, far from the input that
caused it, often after part of the work was already recorded. Every boundary that takes text from an
agent therefore checks it with :func:`first_bad_char` and records :func:`scrub` of it, so what is on
disk says what the agent sent (a replacement character where the text was broken) and nothing
downstream ever meets an unencodable string.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 controls (ESC starts every terminal escape sequence; C1 CSI and OSC are single characters),
DEL, and the bidirectional controls that reorder what a reader sees."""
_CONTROL_KEEP_NL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_BAD = re.compile("[\ud800-\udfff\ufffd]")


def first_surrogate(text: str) -> int | None:
    """Index of the first lone surrogate in ``text`` (a ``str`` never holds a valid pair), or None."""
    if text.isascii():
        return None
    m = _SURROGATE.search(text)
    return m.start() if m else None


def first_bad_char(text: str) -> tuple[int, str] | None:
    """Index and description of the first character that shows ``text`` is not valid Unicode text.

    A lone surrogate, or U+FFFD, the replacement character a lenient decoder (or :func:`scrub`) put
    where the sender's text was broken: either way the sender did not send the text it meant.
    """
    if text.isascii():
        return None
    m = _BAD.search(text)
    if m is None:
        return None
    ch = m.group()
    what = (
        "the replacement character U+FFFD" if ch == REPLACEMENT else f"an unpaired surrogate U+{ord(ch):04X}"
    )
    return m.start(), what


def scrub(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD: always encodable as UTF-8."""
    if text.isascii():
        return text
    return _SURROGATE.sub(REPLACEMENT, text)


def scrub_json(value: Any) -> Any:
    """A JSON-like value (dicts, lists, strings, numbers) with every string - keys too - scrubbed."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(k) if isinstance(k, str) else k: scrub_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_json(v) for v in value]
    return value


def _shown(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character written out (``\\x1b``, ``\\u202e``): inert on a terminal.

    Agent-provided text reaches the researcher's terminal in progress lines, errors and the last log
    line the runner quotes; an escape sequence there could set the window title, write the clipboard
    (OSC 52) or redraw the screen. Shown as text, it does none of that and says what was sent.
    """
    pattern = _CONTROL_KEEP_NL if keep_newlines else _CONTROL  # keep_newlines: tabs too
    return pattern.sub(_shown, text) if pattern.search(text) else text


__all__ = ["REPLACEMENT", "first_bad_char", "first_surrogate", "scrub", "scrub_json", "visible"]
