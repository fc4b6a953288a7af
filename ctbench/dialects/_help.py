"""Context help (``?``) and keyword completion (Tab), from the same grammar the parser uses.

A device answers ``?`` with what its grammar accepts at that point: ``display ?`` lists the words that
may follow ``display``, ``dis int b?`` the words after ``dis int`` that start with ``b``, and a line
that is already a command adds ``<cr>`` (Enter runs it) and the output pipe. Help walks the typed
words with :meth:`Parser.walk` over the *vendor tree only* - never over the commands a task
recorded - so that ``?`` cannot tell an agent which commands have recordings: it shows the same list
on every task.

How each vendor lays the list out (header, column width, where ``<cr>`` goes, how a partial word's
matches are printed) and the short descriptions are data, the ``help`` section of the vendor file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ._filters import FilterSpec
from ._grammar import Node
from ._interfaces import InterfaceNaming
from ._params import ipv4, ipv6
from ._parser import Cfg, Parser, tokenize

PartialStyle = Literal["list", "words", "columns"]
_PARTIAL_STYLES: dict[str, PartialStyle] = {"list": "list", "words": "words", "columns": "columns"}

_PARAM_ORDER = (
    "interface-number",
    "mask",
    "prefix-length",
    "number",
    "ipv4",
    "ipv4-net",
    "ipv6",
    "ipv6-net",
    "ip",
    "ip-net",
    "mac",
    "hostname",
    "word",
    "regex",
)


@dataclass(frozen=True, slots=True)
class HelpStyle:
    """A vendor's help layout and texts (the ``help`` section of its data file).

    ``width`` is the name column (``0``: the longest name plus two, as IOS pads); ``partial`` is how
    the matches of a partial word are printed: ``list`` (names and descriptions, Junos), ``words``
    (names on one line, two blanks apart, IOS), ``columns`` (names in two columns, VRP/Comware).
    ``none`` is the answer when nothing matches a partial word; empty means the vendor's
    *unrecognised* error with its caret; with ``none_first`` it is also the answer to an unknown
    first word followed by ``?`` (IOS ``xyz ?``). ``keywords`` maps a keyword (or ``"previous keyword"``
    for a description that depends on where the keyword stands, ``"| include"`` for a filter) to
    its description; ``params`` maps a parameter type to ``(placeholder, description)``.
    """

    header: str = ""
    indent: int = 2
    width: int = 0
    cr: str = "<cr>"
    cr_desc: str = ""
    cr_first: bool = False
    pipe_desc: str = ""
    partial: PartialStyle = "list"
    none: str = ""
    none_first: bool = False
    interface_desc: str = "{type} interface"
    interface_types: bool = True
    labels: bool = False
    """Print a parameter's template label as its placeholder (FRR's ``(1-65535)``, ``IFNAME``), and
    look its description up like a keyword's (``"neighbor A.B.C.D"``) before the type's."""
    ascii_order: bool = False
    """Sort the whole list by byte value, placeholders among keywords (FRR's ``strcmp`` order)."""
    rstrip: bool = True
    """Strip the blanks after a name without a description; FRR pads ``<cr>`` to the column."""
    none_always: bool = False
    """Answer ``none`` whenever the words before ``?`` do not read (FRR: ``% There is no matched command.``)."""
    pipe_item: bool = True
    """List ``|`` after a complete command; FRR 8.4 does not list its ``| include``."""
    keywords: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def describe(
        self, previous: str, keyword: str, commands: frozenset[str] = frozenset(), path: tuple[str, ...] = ()
    ) -> str:
        """The description of ``keyword`` after ``previous``: the one for that place, else the general one.

        A first-level command's general text (``ssh``: open a client connection) is only used at
        the first word; deeper down (``show ip ssh``) the word means something else. A text keyed by
        the whole ``path`` (``"show ip route a.b.c.d"``) wins over both, for vendors whose help
        texts depend on the whole command (FRR).
        """
        key = keyword.lower()
        if path:
            full = self.keywords.get(" ".join((*path, key)).lower())
            if full is not None:
                return full
        found = self.keywords.get(f"{previous.lower()} {key}", "")
        if found or (previous and previous != "|" and key in commands):
            return found
        return self.keywords.get(key, "")


def load_help_style(data: Any, where: str) -> HelpStyle:
    """The ``help`` section of a vendor file; descriptions come in ``reference`` and ``own`` groups.

    ``reference`` holds texts taken from the vendor's public command references or help output,
    ``own`` texts written for ctbench where no source was found. Both are used alike; the split is
    for the reader of the data file, who must be able to tell which is which.
    """
    if data is None:
        return HelpStyle()
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: 'help' must be a mapping")
    keywords: dict[str, str] = {}
    params: dict[str, tuple[str, str]] = {}
    for group in ("reference", "own"):
        section = data.get(group) or {}
        if not isinstance(section, Mapping):
            raise ValueError(f"{where}: help.{group} must be a mapping")
        for key, value in (section.get("keywords") or {}).items():
            keywords.setdefault(" ".join(str(key).lower().split()), str(value))
        for key, value in (section.get("params") or {}).items():
            if not (isinstance(value, list) and len(value) == 2):
                raise ValueError(f"{where}: help.{group}.params.{key} must be [placeholder, description]")
            params.setdefault(str(key), (str(value[0]), str(value[1])))
    partial = _PARTIAL_STYLES.get(str(data.get("partial", "list")))
    if partial is None:
        raise ValueError(f"{where}: help.partial must be list, words or columns")
    return HelpStyle(
        header=str(data.get("header", "")),
        indent=int(data.get("indent", 2)),
        width=int(data.get("width", 0)),
        cr=str(data.get("cr", "<cr>")),
        cr_desc=str(data.get("cr_desc", "")),
        cr_first=bool(data.get("cr_first", False)),
        pipe_desc=str(data.get("pipe_desc", "")),
        partial=partial,
        none=str(data.get("none", "")),
        none_first=bool(data.get("none_first", False)),
        interface_desc=str(data.get("interface_desc", "{type} interface")),
        interface_types=bool(data.get("interface_types", True)),
        labels=bool(data.get("labels", False)),
        ascii_order=str(data.get("order", "types")) == "ascii",
        rstrip=bool(data.get("rstrip", True)),
        none_always=bool(data.get("none_always", False)),
        pipe_item=bool(data.get("pipe_item", True)),
        keywords=keywords,
        params=params,
    )


@dataclass(frozen=True, slots=True)
class HelpItem:
    """One line of a help list: what may be typed, and what it means."""

    name: str
    desc: str = ""
    kind: Literal["param", "keyword", "pipe", "cr"] = "keyword"


@dataclass(frozen=True, slots=True)
class HelpQuery:
    """A line split at the help point: the complete words before it and the partial word (if any)."""

    words: tuple[str, ...]
    partial: str
    partial_pos: int


def split_query(text: str) -> HelpQuery:
    """``dis int b`` -> words (dis, int), partial ``b``; ``dis int `` -> words (dis, int), no partial."""
    toks = tokenize(text)
    if toks and text and text[-1] not in " \t" and toks[-1][0] != "|":
        return HelpQuery(tuple(t for t, _ in toks[:-1]), toks[-1][0], toks[-1][1])
    return HelpQuery(tuple(t for t, _ in toks), "", len(text))


class Helper:
    """Computes help lists and completions for one vendor; holds no state besides its inputs."""

    def __init__(
        self,
        parser: Parser,
        root: Node,
        style: HelpStyle,
        filters: Mapping[str, FilterSpec],
        naming: InterfaceNaming,
        interface_types: Sequence[str],
        aliases: Mapping[str, str],
    ) -> None:
        self.parser = parser
        self.root = root
        self.style = style
        self.filters = filters
        self.naming = naming
        self.interface_types = tuple(sorted(interface_types))
        self.aliases = aliases
        self.commands = frozenset(root.kw)

    # ------------------------------------------------------------------ the items

    def items(self, query: HelpQuery) -> list[HelpItem] | None:
        """What may be typed at the help point, or None when the words before it do not parse."""
        words = list(query.words)
        buckets, hit = self.parser.walk(words, ((self.root, False),), exact_first=True)
        if hit is not None:
            return self._filter_items(words, hit[0], query.partial)
        found = self._collect(list(buckets[len(words)].values()))
        if words and buckets[len(words) - 1]:
            found += self._continuations(list(buckets[len(words) - 1].values()), words[-1])
        if not buckets[len(words)] and not found:
            return None
        return self._finish(found, query.partial)

    def _collect(self, cfgs: list[Cfg]) -> list[HelpItem]:
        style = self.style
        out: list[HelpItem] = []
        pipe = cr = False
        pipe_root = self.parser.pipe_root
        for node, words, _rank, _rec in cfgs:
            previous = words[-1] if words else ""
            if node is pipe_root:
                for key, edge in node.kw.items():
                    out.append(HelpItem(edge.text, style.describe("|", key)))
                continue
            # Parameters first: an interface type listed for <interface> wins over the same word as a
            # keyword of another template (VRP "display interface gigabitethernet brief").
            for name, pedge in node.params.items():
                if name == "interface" and style.interface_types:
                    out += [
                        HelpItem(t, style.describe(previous, t) or style.interface_desc.replace("{type}", t))
                        for t in self.interface_types
                    ]
                else:
                    out.append(self._param(name, pedge.label, previous, words))
            for key, edge in node.kw.items():
                if key == "|":
                    pipe = True
                    continue
                out.append(HelpItem(edge.text, style.describe(previous, key, self.commands, words)))
            if node.terminal:
                cr = True
                pipe = pipe or (bool(pipe_root.kw) and style.pipe_item)
        if pipe:
            out.append(HelpItem("|", style.pipe_desc, "pipe"))
        if cr:
            out.append(HelpItem(style.cr, style.cr_desc, "cr"))
        return out

    def _param(self, name: str, label: str = "", previous: str = "", path: tuple[str, ...] = ()) -> HelpItem:
        placeholder, desc = self.style.params.get(name) or self.style.params.get("word") or ("WORD", "")
        if self.style.labels and label:
            found = self.style.keywords.get(" ".join((*path, label)).lower()) if path else None
            if found is None:
                found = self.style.keywords.get(f"{previous.lower()} {label.lower()}")
            found = found if found is not None else self.style.keywords.get(label.lower())
            return HelpItem(label, desc if found is None else found, "param")
        return HelpItem(placeholder, desc, "param")

    def _continuations(self, cfgs: list[Cfg], token: str) -> list[HelpItem]:
        """Values that take two words, when the first one was typed (``GigabitEthernet ?``, ``10.0.0.0 ?``)."""
        out: list[HelpItem] = []
        for node, _words, _rank, _rec in cfgs:
            for name in node.params:
                if (
                    name == "interface"
                    and self.naming.parse(token) is None
                    and self.naming.parse_pair(token, "0")
                ):
                    out.append(self._param("interface-number"))
                elif name in ("ipv4-net", "ip-net") and ipv4(token):
                    out.append(self._param("mask"))
                elif name in ("ipv6-net", "ip-net") and ipv6(token):
                    out.append(self._param("prefix-length"))
        return out

    def _filter_items(self, words: list[str], at: int, partial: str) -> list[HelpItem]:
        """Help inside the output filter chain that starts with the filter word ``words[at]``."""
        style = self.style
        cr = HelpItem(style.cr, style.cr_desc, "cr")
        pipe = HelpItem("|", style.pipe_desc, "pipe")
        stage = words[at:]
        while "|" in stage:  # a later stage: only what follows the last '|' matters
            stage = stage[len(stage) - stage[::-1].index("|") :]
        if not stage:  # "... | include x | ?": the next filter
            return self._finish([HelpItem(name, style.describe("|", name)) for name in self.filters], partial)
        spec = self._filter_spec(stage[0])
        if spec is None:
            return []
        if partial:  # typing the filter's argument: what goes there
            arg = "number" if spec.arg in ("number", "optional-number") else "regex"
            return [] if spec.arg == "none" else [self._param(arg)]
        if len(stage) > 1:  # the argument is typed: run it, or chain another filter
            return self._finish([pipe, cr], "")
        if spec.arg in ("regex", "optional-regex"):
            found = [self._param("regex")] + ([cr] if spec.arg == "optional-regex" else [])
        elif spec.arg in ("number", "optional-number"):
            found = [self._param("number")] + ([cr] if spec.arg == "optional-number" else [])
        else:
            found = [pipe, cr]
        return self._finish(found, "")

    def _filter_spec(self, word: str) -> FilterSpec | None:
        low = word.lower()
        if low in self.filters:
            return self.filters[low]
        hits = [name for name in self.filters if name.startswith(low)]
        return self.filters[hits[0]] if len(hits) == 1 else None

    def _finish(self, found: list[HelpItem], partial: str) -> list[HelpItem]:
        seen: set[str] = set()
        unique: list[HelpItem] = []
        for item in found:
            if item.name.lower() not in seen:
                seen.add(item.name.lower())
                unique.append(item)
        if partial:
            low = partial.lower()
            unique = [i for i in unique if i.kind == "keyword" and i.name.lower().startswith(low)]
        order = {
            name: n
            for n, name in enumerate(p[0] for p in (self.style.params.get(k) for k in _PARAM_ORDER) if p)
        }
        params = sorted((i for i in unique if i.kind == "param"), key=lambda i: order.get(i.name, 99))
        keywords = sorted((i for i in unique if i.kind == "keyword"), key=lambda i: i.name)
        tail = [i for i in unique if i.kind == "pipe"]
        cr = [i for i in unique if i.kind == "cr"]
        if self.style.ascii_order:
            return cr + sorted(params + keywords, key=lambda i: i.name.encode()) + tail
        if self.style.cr_first:
            return cr + params + keywords + tail
        return params + keywords + tail + cr

    # ------------------------------------------------------------------ text

    def render(self, items: list[HelpItem], partial: str, first: bool) -> str:
        """The help list as the device prints it (ends with a newline)."""
        style = self.style
        pad = " " * style.indent
        lines: list[str] = [style.header] if style.header else []
        if partial and style.partial == "words":
            names = [i.name for i in items]
            if first:
                low = partial.lower()
                names = [
                    f"*{a}={full}" for a, full in sorted(self.aliases.items()) if a.startswith(low)
                ] + names
            return _wrap(names, 80) + "\n"
        if partial and style.partial == "columns":
            names = [i.name for i in items]
            col = max(40, max(len(n) for n in names) + 2)
            for k in range(0, len(names), 2):
                row = names[k : k + 2]
                lines.append((pad + "".join(n.ljust(col) for n in row[:-1]) + row[-1]).rstrip())
            return "\n".join(lines) + "\n"
        width = style.width or (max(len(i.name) for i in items) + 2)
        for item in items:
            name = item.name if len(item.name) < width else item.name + " "
            text = pad + name.ljust(width) + item.desc
            lines.append(text.rstrip() if style.rstrip else text)
        return "\n".join(lines) + "\n"

    def completions(self, text: str) -> list[str]:
        """Keywords that complete the last word of ``text`` (everything before the cursor)."""
        query = split_query(text)
        items = self.items(HelpQuery(query.words, "", query.partial_pos))
        if not items:
            return []
        low = query.partial.lower()
        return sorted({i.name for i in items if i.kind == "keyword" and i.name.lower().startswith(low)})


def _wrap(names: list[str], width: int) -> str:
    lines: list[str] = []
    current = ""
    for name in names:
        piece = name + "  "
        if current and len(current) + len(piece) > width:
            lines.append(current.rstrip())
            current = ""
        current += piece
    lines.append(current.rstrip())
    return "\n".join(lines)
