"""Output filters (``| include``, ``| match`` ...): parsing the pipe chain and applying it to bytes.

Filters are not part of the recording key: the engine looks the command up without them and runs
them over the recorded bytes, the way the device runs them over its output. They work line by line
on bytes so that recordings stay byte-exact (CRLF, trailing spaces, odd encodings) outside the
lines a filter drops.

Patterns come from agents, so they are untrusted: they are capped in length and a pattern with a
nested quantifier (``(a+)+``), which can take exponential time in Python's backtracking engine and
which devices' automaton-based engines do not suffer from, is refused as a wrong parameter instead of
being run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ._types import CliError, ErrorKind, FilterKind, OutputFilter

MAX_PATTERN = 256
"""Huawei documents 1-256 characters for a filter regular expression; other vendors are similar."""

_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[*+}](?:[^()\\]|\\.)*\)\s*[*+{]")
_UNDERSCORE = rb"(?:_|^|$|[\s,{}()])"


@dataclass(frozen=True, slots=True)
class FilterSpec:
    """One filter keyword of a vendor: what it does and what argument it takes.

    ``arg`` is ``regex`` (required pattern), ``optional-regex``, ``number``, ``optional-number`` or
    ``none``.
    """

    keyword: str
    kind: FilterKind
    arg: str = "regex"
    default_number: int | None = None


@dataclass(frozen=True, slots=True)
class FilterOptions:
    """A vendor's regex dialect and how it prints ``count``."""

    count_format: str = "{n}"
    ignore_case: bool = False
    underscore: bool = False
    strip_quotes: bool = False


def _translate_underscore(pattern: bytes) -> bytes:
    """IOS/VRP regex ``_`` (any delimiter) to Python; escaped and bracketed ``_`` stay literal."""
    out = bytearray()
    i = 0
    in_class = False
    while i < len(pattern):
        ch = pattern[i : i + 1]
        if ch == b"\\" and i + 1 < len(pattern):
            out += pattern[i : i + 2]
            i += 2
            continue
        if in_class:
            in_class = ch != b"]"
            out += ch
        elif ch == b"[":
            in_class = True
            out += ch
        elif ch == b"_":
            out += _UNDERSCORE
        else:
            out += ch
        i += 1
    return bytes(out)


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str, ignore_case: bool, underscore: bool) -> re.Pattern[bytes]:
    """Compile a device regex for bytes; a pattern Python rejects is taken literally.

    Devices degrade a misplaced special character to a literal one (Huawei documents ``+45``
    matching ``+45``); falling back to the literal text gives the same effect for the common cases.
    """
    raw = pattern.encode("utf-8", "surrogateescape")
    flags = re.IGNORECASE if ignore_case else 0
    try:
        return re.compile(_translate_underscore(raw) if underscore else raw, flags)
    except re.error:
        return re.compile(re.escape(raw), flags)


def pattern_is_safe(pattern: str) -> bool:
    """False for patterns too long or with nested quantifiers (catastrophic backtracking)."""
    return 0 < len(pattern) <= MAX_PATTERN and not _NESTED_QUANTIFIER.search(pattern)


def _segments(line: str, start: int) -> list[tuple[int, str]]:
    """Split the text after the ``|`` at ``start`` into filter stages, with their offsets.

    A later ``|`` separates stages only when a blank precedes it and it is outside double quotes,
    so that ``| include ospf|bgp`` keeps its regex alternation.
    """
    segments: list[tuple[int, str]] = []
    seg_start = start + 1
    in_quote = False
    for pos in range(start + 1, len(line)):
        ch = line[pos]
        if ch == '"':
            in_quote = not in_quote
        elif ch == "|" and not in_quote and line[pos - 1] in " \t":
            segments.append((seg_start, line[seg_start:pos]))
            seg_start = pos + 1
    segments.append((seg_start, line[seg_start:]))
    return segments


def _pick(word: str, specs: dict[str, FilterSpec]) -> tuple[FilterSpec | None, tuple[str, ...]]:
    """Filter keyword by exact name or unique prefix; on failure, the candidates (for ambiguity)."""
    low = word.lower()
    spec = specs.get(low)
    if spec is not None:
        return spec, ()
    hits = tuple(sorted(name for name in specs if name.startswith(low)))
    if len(hits) == 1:
        return specs[hits[0]], ()
    return None, hits


def parse_filters(
    line: str, start: int, specs: dict[str, FilterSpec], options: FilterOptions
) -> tuple[OutputFilter, ...] | CliError:
    """Parse the filter chain starting at the ``|`` at offset ``start`` of ``line``."""
    filters: list[OutputFilter] = []

    def fail(kind: ErrorKind, pos: int, token: str, candidates: tuple[str, ...] = ()) -> CliError:
        return CliError(kind, pos, token, index=-1, candidates=candidates)

    for seg_offset, text in _segments(line, start):
        lead = len(text) - len(text.lstrip(" \t"))
        body = text.strip(" \t")
        word_pos = seg_offset + lead
        if not body:
            return fail("incomplete", word_pos, "")
        word = body.replace("\t", " ").split(" ", 1)[0]
        after = body[len(word) :]
        rest = after.strip(" \t")
        arg_pos = word_pos + len(word) + len(after) - len(after.lstrip(" \t"))
        spec, candidates = _pick(word, specs)
        if spec is None:
            if candidates:
                return fail("ambiguous", word_pos, word, candidates)
            return fail("unrecognised", word_pos, word)
        quoted = False
        if options.strip_quotes and len(rest) >= 2 and rest[0] == rest[-1] == '"':
            rest = rest[1:-1]
            quoted = True
        if spec.arg == "none":
            if rest:
                return fail("too_many", arg_pos, rest)
            filters.append(OutputFilter(spec.kind, spec.keyword))
            continue
        if spec.arg in ("number", "optional-number"):
            if not rest:
                if spec.arg == "number":
                    return fail("incomplete", word_pos + len(word), "")
                filters.append(OutputFilter(spec.kind, spec.keyword, number=spec.default_number))
                continue
            if not rest.isdigit() or len(rest) > 6:
                return fail("wrong_parameter", arg_pos, rest)
            filters.append(OutputFilter(spec.kind, spec.keyword, number=int(rest)))
            continue
        if not rest:
            if spec.arg == "regex":
                return fail("incomplete", word_pos + len(word), "")
            filters.append(OutputFilter(spec.kind, spec.keyword))
            continue
        if not pattern_is_safe(rest) or not rest.isprintable():
            return fail("wrong_parameter", arg_pos, rest)
        filters.append(
            OutputFilter(
                spec.kind,
                spec.keyword,
                pattern=rest,
                ignore_case=options.ignore_case,
                underscore=options.underscore,
                quoted=quoted,
            )
        )
    return tuple(filters)


def _body(line: bytes) -> bytes:
    return line.rstrip(b"\r\n")


def _indent(body: bytes) -> int:
    return len(body) - len(body.lstrip(b" \t"))


def _section(lines: list[bytes], rx: re.Pattern[bytes]) -> list[bytes]:
    """IOS ``| section``: each matching line with the lines indented under it."""
    out: list[bytes] = []
    i = 0
    while i < len(lines):
        body = _body(lines[i])
        if not rx.search(body):
            i += 1
            continue
        depth = _indent(body)
        out.append(lines[i])
        i += 1
        while i < len(lines):
            child = _body(lines[i])
            if not child.strip() or _indent(child) <= depth:
                break
            out.append(lines[i])
            i += 1
    return out


def apply_filters(data: bytes, filters: tuple[OutputFilter, ...], count_format: str) -> bytes:
    """Run the filter chain over recorded output, keeping untouched lines byte-exact."""
    if not filters:
        return data
    eol = b"\r\n" if b"\r\n" in data else b"\n"
    lines = data.splitlines(keepends=True)
    for flt in filters:
        rx = compile_pattern(flt.pattern, flt.ignore_case, flt.underscore) if flt.pattern else None
        if flt.kind == "include" and rx is not None:
            lines = [ln for ln in lines if rx.search(_body(ln))]
        elif flt.kind == "exclude" and rx is not None:
            lines = [ln for ln in lines if not rx.search(_body(ln))]
        elif flt.kind == "begin" and rx is not None:
            first = next((i for i, ln in enumerate(lines) if rx.search(_body(ln))), len(lines))
            lines = lines[first:]
        elif flt.kind == "section" and rx is not None:
            lines = _section(lines, rx)
        elif flt.kind == "count":
            if rx is not None:
                n = sum(1 for ln in lines if rx.search(_body(ln)))
            else:
                n = len(lines)
            lines = [count_format.replace("{n}", str(n)).encode() + eol]
        elif flt.kind == "last":
            n = flt.number if flt.number is not None else 10
            lines = lines[-n:] if n else []
        elif flt.kind == "trim":
            n = flt.number or 0
            lines = [_body(ln)[n:] + ln[len(_body(ln)) :] for ln in lines]
        # "passthrough" (no-more and the like) leaves the output as it is.
    return b"".join(lines)
