"""The ``Dialect``: one vendor's command line, as the replay engine and the authoring tools see it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from ._filters import apply_filters, parse_filters, pattern_is_safe
from ._grammar import Graph, KwEdge, Lit, Node, Seq
from ._grammar import Kw as _Kw
from ._help import Helper, split_query
from ._params import ParamContext
from ._parser import Parsed, Parser, looks_like_value, tokenize
from ._profile import BUNDLED_OS, Message, Profile, known_os, load_profile
from ._types import CliError, OutputFilter, Resolution

OS_FAMILIES: tuple[str, ...] = BUNDLED_OS
"""The vendor operating systems ctbench ships a dialect for, named as network-automation tools name them.
Code that accepts a family asks :func:`os_families`, which adds the data files on the dialect path."""


def os_families() -> tuple[str, ...]:
    """Every CLI family with a dialect data file, bundled or on ``$CTBENCH_DIALECT_PATH``, sorted."""
    return known_os()


RESOLVE_CACHE_SIZE = 65_536
"""Resolutions kept per dialect: an agent run repeats a few hundred distinct lines per task, and
the bound keeps an agent that sends only new lines from growing the server's memory."""

_EMPTY: frozenset[str] = frozenset()


def _compiles(pattern: str) -> bool:
    """Whether a device regex compiles at all (vtysh answers ``% Bad regexp`` when it does not)."""
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def _printable(text: str) -> str:
    """Echoed input with control characters shown as '?', so an error text cannot drive a terminal."""
    return text if text.isprintable() else "".join(ch if ch.isprintable() else "?" for ch in text)


def _args_marked(line: str, err: CliError) -> tuple[str, str]:
    """A program's arguments as it echoes them in an error (nft: the words after the program name and
    its leading options, joined by single blanks) and the ``^^^`` line under the offending word (one
    ``^`` past the end when a word is missing)."""
    toks = [t for t, _pos in tokenize(line)]
    start = 1
    while start < len(toks) and toks[start].startswith("-"):
        start += 1
    args = toks[start:]
    before = args[: max(err.index - start, 0)]
    column = len(" ".join(before)) + (1 if before and err.index < len(toks) else 0)
    width = len(err.token) if err.index < len(toks) else 1
    return " ".join(args), " " * column + "^" * max(width, 1)


class Dialect:
    """A vendor CLI: resolves command lines to canonical commands and prints the vendor's errors.

    Instances are immutable after construction (caches aside) and safe to share between threads;
    obtain them through ``get_dialect`` so that each vendor's tree is compiled once.
    """

    def __init__(self, profile: Profile) -> None:
        self._profile = profile
        graph = Graph()
        for template, source in profile.commands:
            graph.add(template, source)
        self._graph = graph.freeze(profile.minor_keywords)
        pipes = Graph()
        for template, source in profile.pipe_commands:
            pipes.add(template, source)
        chained = profile.pipe == "chain"
        for name in profile.filters if chained else ():
            edge = KwEdge(name)
            edge.filter = True
            pipes.root.kw[name] = edge
        self._pipe_root = pipes.freeze().root
        self._ctx = ParamContext(profile.interfaces, profile.prefix_style, profile.prefix6_style)
        self._parser = Parser(
            self._pipe_root,
            self._ctx,
            profile.aliases,
            line_match=profile.matching == "line",
            case_sensitive=profile.case_sensitive,
            pipes=chained,
        )
        self._roots: tuple[tuple[Node, bool], ...] = ((self._graph.root, False),)
        self._helper = Helper(
            self._parser,
            self._graph.root,
            profile.help,
            profile.filters,
            profile.interfaces,
            profile.interfaces.type_names,
            profile.aliases,
        )
        # Per-instance memo tables (not module globals): the hot path of the replay server.
        self._resolve_cached = lru_cache(maxsize=RESOLVE_CACHE_SIZE)(self._resolve_uncached)
        self._extras = lru_cache(maxsize=256)(self._build_extras)

    # ------------------------------------------------------------------ identity

    @property
    def os(self) -> str:
        """Platform name (``huawei_vrp``), as in ``OS_FAMILIES`` and the vendor-cli MANIFEST."""
        return self._profile.os

    @property
    def display_name(self) -> str:
        """Human name (``Huawei VRP``) for reports and the authoring UI."""
        return self._profile.display_name

    @property
    def capture_prompt(self) -> str | None:
        """The prompt shape of this vendor in a session log (``vrp``, ``cisco``, ``junos``), or None."""
        return self._profile.capture_prompt

    @property
    def first_commands(self) -> tuple[str, ...]:
        """What an engineer types first on an unfamiliar box of this vendor, in order."""
        return self._profile.first_commands

    @property
    def templates(self) -> tuple[str, ...]:
        """The command templates of the tree (vendor file then extra tree files), for help and docs."""
        return tuple(self._graph.templates)

    def prompt(self, hostname: str, user: str = "admin") -> str:
        """The prompt the device prints (``<HOST>``, ``HOST#``, ``admin@HOST>``)."""
        return self._profile.prompt.replace("{host}", hostname).replace("{user}", user)

    def interface_name(self, token: str) -> str | None:
        """Full name of ``token`` when it is one of this vendor's interface names, else None."""
        return self._profile.interfaces.parse(token)

    def normalize_interface(self, name: str) -> str:
        """Full interface name (``GE1/0/1`` -> ``GigabitEthernet1/0/1``); unknown forms unchanged."""
        return self._profile.interfaces.normalize(name)

    # ------------------------------------------------------------------ resolving

    def resolve(self, line: str, recorded: Iterable[str] = _EMPTY) -> Resolution:
        """Resolve one command line as the device would.

        ``recorded`` are the canonical commands recorded for this device in the task: they are valid
        (and abbreviable) even where the vendor tree lacks them. Whether a valid command is served or
        denied is the replay engine's decision, not the dialect's.
        """
        if not isinstance(recorded, frozenset):
            recorded = frozenset(recorded)
        limit = self._profile.max_line
        if len(line) > limit:
            # Devices stop accepting input at their buffer size; never cache or scan a huge line.
            return Resolution(line, None, error=CliError("unrecognised", limit, "", index=-1))
        return self._resolve_cached(line, recorded)

    def canonical(self, line: str) -> str:
        """Canonical form of a valid command; ValueError carrying the device's error text otherwise."""
        res = self.resolve(line)
        if res.error is not None:
            prompt = self.prompt("device")
            raise ValueError(
                f"{prompt}{line[:200]}\n{self.render_error(res.error, line, prompt)}".rstrip("\n")
            )
        assert res.canonical is not None
        return res.canonical

    def _resolve_uncached(self, line: str, recorded: frozenset[str]) -> Resolution:
        text = line.rstrip("\r\n")
        extra = self._extras(recorded) if recorded else None
        if extra is None:
            return self._resolve_in(line, text, self._roots)
        got = self._resolve_in(line, text, (*self._roots, (extra, True)))
        if got.error is None:
            return got
        # What the task recorded may make a line valid, never change an error: a prefix of a recorded
        # command the vendor grammar does not know ("% Incomplete command." only where it was
        # recorded) would reveal the recording. The error is the one a device without it gives.
        return self._resolve_in(line, text, self._roots)

    def _resolve_in(self, line: str, text: str, roots: tuple[tuple[Node, bool], ...]) -> Resolution:
        if self._profile.pipe == "first":
            return self._resolve_first_pipe(line, text, roots)
        parsed = self._parser.parse(text, roots)
        if isinstance(parsed, CliError):
            return Resolution(line, None, error=parsed)
        return self._finish(line, text, parsed)

    def _resolve_first_pipe(self, line: str, text: str, roots: tuple[tuple[Node, bool], ...]) -> Resolution:
        """FRR 8.4: the filter is checked before the command, and all of the rest is its regex.

        vtysh cuts the line at its first ``| `` (a bar and a blank); the next word must be a filter's
        exact name (``% Unknown action 'inc'``), and everything after that word and one blank is one
        extended regular expression (so ``| include a | include b`` is one pattern). Without an
        argument the answer is ``% Need a regexp to filter with`` (the ``incomplete`` kind).
        """
        cut = text.find("| ")
        filters: tuple[OutputFilter, ...] = ()
        if cut >= 0:
            action, blank, pattern = text[cut + 2 :].partition(" ")
            spec = self._profile.filters.get(action)
            if spec is None:
                return Resolution(
                    line, None, error=CliError("unrecognised", cut + 2, action, -1, slot="filter")
                )
            if not blank:
                return Resolution(
                    line, None, error=CliError("incomplete", cut + 2, action, -1, slot="filter")
                )
            if pattern and not (pattern_is_safe(pattern) and pattern.isprintable() and _compiles(pattern)):
                err = CliError("wrong_parameter", cut + 3 + len(action), pattern, -1, slot="filter")
                return Resolution(line, None, error=err)
            opts = self._profile.filter_options
            filters = (OutputFilter(spec.kind, spec.keyword, pattern, ignore_case=opts.ignore_case),)
            text = text[:cut]
        parsed = self._parser.parse(text, roots)
        if isinstance(parsed, CliError):
            return Resolution(line, None, error=parsed)
        return Resolution(line, " ".join(parsed.words), filters, recorded=parsed.recorded)

    def _finish(self, line: str, text: str, parsed: Parsed) -> Resolution:
        canonical = " ".join(parsed.words)
        if parsed.filter_start is None:
            return Resolution(line, canonical, recorded=parsed.recorded)
        filters = parse_filters(
            text, parsed.filter_start, self._profile.filters, self._profile.filter_options
        )
        if isinstance(filters, CliError):
            return Resolution(line, None, error=filters)
        return Resolution(line, canonical, filters, recorded=parsed.recorded)

    def _build_extras(self, recorded: frozenset[str]) -> Node | None:
        """A graph of the recorded commands that the vendor tree does not already accept.

        Value-like words (addresses, interface names, numbers) are matched exactly, since a
        prefix of an address is not that address; other words are keywords, abbreviable like the
        tree's. Each keeps its recorded spelling so the canonical form equals the recording key.
        """
        graph = Graph()
        added = False
        for command in sorted(recorded):
            if len(command) > self._profile.max_line:
                continue
            if isinstance(self._parser.parse(command, self._roots), Parsed):
                continue  # the tree already takes it (with or without filters)
            words = [tok for tok, _ in tokenize(command)]
            if not words:
                continue
            items = tuple(Lit(w, (w.lower(),)) if looks_like_value(w) else _Kw(w) for w in words)
            graph.add(Seq(items) if len(items) > 1 else items[0])
            added = True
        return graph.freeze().root if added else None

    # ------------------------------------------------------------------ help and completion

    @staticmethod
    def is_help(line: str) -> bool:
        """True when the line asks for context help (it ends with ``?``), as every vendor reads it."""
        return line.rstrip(" \t\r\n").endswith("?")

    def help(self, line: str, prompt: str) -> str:
        """What the device prints for ``line`` ending with ``?``: the grammar's choices at that point.

        The list comes from the vendor tree only, never from a task's recorded commands, so it is
        the same on every task. Words before the help point that do not parse get the vendor's own
        error, caret under the offending word of the echoed ``<prompt><line>``.
        """
        text = line.rstrip(" \t\r\n")
        text = text[:-1] if text.endswith("?") else text
        if len(text) > self._profile.max_line:
            return self.render_error(
                CliError("unrecognised", self._profile.max_line, "", index=-1), line, prompt
            )
        query = split_query(text)
        items = self._helper.items(query)
        if items is None and self._profile.help.none_always and self._profile.help.none:
            return self._profile.help.none + "\n"
        if items is None:
            body = text[: query.partial_pos] if query.partial else text
            parsed = self._parser.parse(body, self._roots)
            err = parsed if isinstance(parsed, CliError) else CliError("unrecognised", query.partial_pos, "")
            style = self._profile.help
            if style.none and style.none_first and err.index == 0 and err.kind == "unrecognised":
                return style.none + "\n"
            return self.render_error(err, body, prompt)
        if not items:
            if self._profile.help.none:
                return self._profile.help.none + "\n"
            err = CliError("unrecognised", query.partial_pos, query.partial, index=len(query.words))
            return self.render_error(err, text, prompt)
        return self._helper.render(items, query.partial, first=not query.words)

    def complete(self, text: str) -> list[str]:
        """Keywords the last word of ``text`` (the line up to the cursor) may be completed to.

        One candidate completes; several are what the device lists on a second Tab. Like help,
        completion knows the vendor tree only, never a task's recordings.
        """
        if len(text) > self._profile.max_line:
            return []
        return self._helper.completions(text)

    # ------------------------------------------------------------------ output

    def render_error(self, err: CliError, line: str, prompt: str) -> str:
        """Exactly what the device prints after echoing ``<prompt><line>``: caret line and message.

        The caret sits under the offending character of the echoed line, so its column counts the
        prompt. The text ends with a newline; the engine prints the next prompt after it.
        """
        msg = self._message(err, line)
        completions = "\n".join(f"  {c}" for c in err.candidates)
        keyword = err.context[0] if err.context else err.token
        text = (
            msg.text.replace("{token}", _printable(err.token[:200]))
            .replace("{input}", _printable(line.strip()[:1024]))
            .replace("{line}", _printable(line.rstrip("\r\n")[:1024]))
            .replace("{keyword}", keyword)
            .replace("{index}", str(err.index))
            .replace("{completions}", completions)
            .replace("{choices}", "".join(f" '{c}'" for c in err.candidates))
            .replace("{optchar}", _printable(err.token[1:2]))
        )
        if "{args}" in text or "{underline}" in text:
            args, underline = _args_marked(line[: self._profile.max_line], err)
            text = text.replace("{args}", _printable(args)).replace("{underline}", underline)
        if not msg.caret:
            return text + "\n"
        position = min(err.position, self._profile.max_line)
        return " " * (len(prompt) + position) + "^\n" + text + "\n"

    def _message(self, err: CliError, line: str) -> Message:
        messages = self._profile.messages
        keys: list[str] = [f"{err.kind}_{err.slot}"] if err.slot else []
        program = tokenize(line[: self._profile.max_line])[0][0] if err.index > 0 else ""
        if program and any(key.endswith(f"@{program}") for key in messages):
            # A program of its own on a host (nft beside ip): its own wording, by where the error is.
            if err.token.startswith("--"):
                keys.insert(0, f"{err.kind}_longopt@{program}")
            elif err.token.startswith("-") and len(err.token) > 1:
                keys.insert(0, f"{err.kind}_shortopt@{program}")
            elif err.kind == "incomplete" and all(t.startswith("-") for t in err.context[1:]):
                keys.insert(0, f"{err.kind}_nocommand@{program}")
            elif err.kind != "incomplete" and self._complete(err.context):
                keys.insert(0, f"{err.kind}_end@{program}")
            elif err.kind == "incomplete" and self._expects_value(err.context):
                keys.insert(0, f"{err.kind}_value@{program}")
            keys.insert(len(keys), f"{err.kind}@{program}")
        single = len(tokenize(line[: self._profile.max_line])) == 1
        if single and (err.kind != "incomplete" or len(err.context) == 1):
            keys.append(f"{err.kind}_single")
        if err.index == 0:
            keys.append(f"{err.kind}_first")
        keys += [err.kind, "unrecognised"]
        for key in keys:
            if key in messages:
                return messages[key]
        raise AssertionError("profile without an 'unrecognised' message")  # load_profile checks it

    def _complete(self, words: tuple[str, ...]) -> bool:
        """Whether the canonical words understood before an error already make a whole command."""
        return bool(words) and self.resolve(" ".join(words)).error is None

    def _expects_value(self, words: tuple[str, ...]) -> bool:
        """Whether a value (a name, a number) may come after the canonical words ``words``."""
        buckets, _hit = self._parser.walk(list(words), self._roots)
        return any(cfg[0].params for cfg in buckets[len(words)].values())

    def denied_text(self, canonical: str) -> str:
        """The vendor's permission-denied style answer for a valid command with no recording."""
        return self._profile.denied.replace("{command}", canonical) + "\n"

    def apply_filters(self, data: bytes, filters: tuple[OutputFilter, ...]) -> bytes:
        """Run resolved output filters over recorded bytes (vendor's ``count`` wording included)."""
        return apply_filters(data, filters, self._profile.filter_options.count_format)

    def __repr__(self) -> str:
        return f"<Dialect {self.os}: {len(self._graph.templates)} command templates>"


@lru_cache(maxsize=64)
def _dialect(os_name: str, extra_trees: tuple[Path, ...]) -> Dialect:
    return Dialect(load_profile(os_name, extra_trees))


def get_dialect(os_name: str, extra_trees: Iterable[Path | str] = ()) -> Dialect:
    """The dialect of ``os_name`` (one of ``OS_FAMILIES``), extended by a task set's tree files.

    Dialects are compiled once per (os, extra trees) and shared.
    """
    known = known_os()
    if os_name not in known:
        raise ValueError(f"unknown OS family {os_name!r}; known: {', '.join(known)}")
    return _dialect(os_name, tuple(Path(p) for p in extra_trees))
