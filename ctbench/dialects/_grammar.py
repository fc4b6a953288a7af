"""Command templates (the tree file syntax) and the keyword graph they are compiled into.

A tree file lists commands the way vendor command references print them::

    display ip routing-table [vpn-instance <word>] [<ipv4-net> [longer-match]] [verbose]
    show route [{<ip-net> | table <word> | protocol <word> | terse | detail}]...
    show configuration [<word>]... ['|' display {set | xml}]

``keyword`` is a literal keyword (matched case-insensitively, by unique prefix); ``<type>`` or
``<type:label>`` a parameter (see ``_params.PARAM_TYPES``; ``<host>`` is an address or a host name);
``[ a | b ]`` an optional choice; ``{ a | b }`` a required choice; ``...`` after an element repeats it
(``[ ... ]...`` = zero or more times, in any order, as devices take options); ``'|'`` quotes a
keyword made of special characters (the Junos ``| display set`` pipe is part of the command);
``=keyword`` a keyword that must be typed whole, never abbreviated (``nft list ruleset``: nftables'
parser knows no prefixes, though ``ip`` on the same host does).

All templates of a vendor are merged into one graph that is a trie wherever the templates allow it,
so that parsing a line mostly follows a single path: a keyword edge out of a node is shared by
every template that has that keyword at that point. Repetition makes loops; a node may then have
several targets for one keyword, and the parser follows all of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ._params import PARAM_TYPES, ParamType

MAX_BRANCHES = 512
"""Optional groups in sequence multiply the paths to build; past this, write the options as a loop."""


# ----------------------------------------------------------------------------- template syntax tree


@dataclass(frozen=True, slots=True)
class Kw:
    """A literal keyword, matched case-insensitively; ``text`` is its canonical spelling.

    Tree keywords are lower case; a keyword taken from a task's recorded command keeps the
    recorded spelling, so that the canonical form equals the recording key.
    """

    text: str
    whole: bool = False
    """Typed in full only (``=keyword``): no prefix of it is read as it."""


@dataclass(frozen=True, slots=True)
class Param:
    """A parameter of a registered type; ``label`` is the template's ``<type:label>`` text.

    The label is documentation, except for a vendor whose help prints it as the placeholder
    (FRR lists ``(1-65535)`` or ``IFNAME`` where ctbench's types are ``number`` and ``word``).
    """

    type: ParamType
    label: str = ""


@dataclass(frozen=True, slots=True)
class Lit:
    """A value recorded verbatim (from a task's recorded commands): matched exactly, not by prefix."""

    text: str
    keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Seq:
    items: tuple[Elem, ...]


@dataclass(frozen=True, slots=True)
class Alt:
    options: tuple[Elem, ...]


@dataclass(frozen=True, slots=True)
class Opt:
    body: Elem


@dataclass(frozen=True, slots=True)
class Star:
    """Zero or more repetitions, any mix of the alternatives in ``body``."""

    body: Elem


Elem = Kw | Param | Lit | Seq | Alt | Opt | Star

_TOKEN_RE = re.compile(r"'[^']*'|\.\.\.|[\[\]{}|]|<[^<>\s]+>|[^\s\[\]{}|<>']+")


class TemplateError(ValueError):
    """A tree file template that cannot be compiled; the message names the template."""


class _TemplateParser:
    """Recursive-descent parser for one template string."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[str] = []
        pos = 0
        for m in _TOKEN_RE.finditer(text):
            if text[pos : m.start()].strip():
                self._fail(f"unexpected {text[pos : m.start()].strip()!r}")
            self.tokens.append(m.group())
            pos = m.end()
        if text[pos:].strip():
            self._fail(f"unexpected {text[pos:].strip()!r}")
        self.pos = 0

    def _fail(self, why: str) -> None:
        raise TemplateError(f"{why} in command template {self.text!r}")

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def parse(self) -> Elem:
        elem = self._alts()
        if self._peek() is not None:
            self._fail(f"unbalanced {self._peek()!r}")
        if isinstance(elem, Alt):
            self._fail("top-level '|' (quote a literal pipe as '|')")
        return elem

    def _alts(self) -> Elem:
        options = [self._seq()]
        while self._peek() == "|":
            self.pos += 1
            options.append(self._seq())
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def _seq(self) -> Elem:
        items: list[Elem] = []
        while self._peek() not in (None, "|", "]", "}"):
            items.append(self._item())
        if not items:
            self._fail("empty group or alternative")
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def _item(self) -> Elem:
        atom = self._atom()
        while self._peek() == "...":
            self.pos += 1
            atom = Star(atom.body) if isinstance(atom, Opt) else Seq((atom, Star(atom)))
        return atom

    def _atom(self) -> Elem:
        tok = self.tokens[self.pos]
        self.pos += 1
        if tok in ("[", "{"):
            close = "]" if tok == "[" else "}"
            body = self._alts()
            if self._peek() != close:
                self._fail(f"missing {close!r}")
            self.pos += 1
            return Opt(body) if tok == "[" else body
        if tok.startswith("<"):
            name, _colon, label = tok[1:-1].partition(":")
            name = name.strip().lower()
            if name == "host":
                return Alt((Param(PARAM_TYPES["ip"]), Param(PARAM_TYPES["hostname"])))
            ptype = PARAM_TYPES.get(name)
            if ptype is None:
                self._fail(f"unknown parameter type <{name}> (known: {', '.join(sorted(PARAM_TYPES))}, host)")
                raise AssertionError  # unreachable, _fail raises
            return Param(ptype, label)
        if tok.startswith("'"):
            if len(tok) < 3:
                self._fail("empty quoted keyword")
            return Kw(tok[1:-1].lower())
        if tok == "...":
            self._fail("'...' must follow an element")
        if tok.startswith("=") and len(tok) > 1:
            return Kw(tok[1:].lower(), whole=True)
        return Kw(tok.lower())


def parse_template(text: str) -> Elem:
    """Syntax tree of one template; raises TemplateError with the template in the message."""
    return _TemplateParser(text).parse()


# ----------------------------------------------------------------------------- keyword graph


class KwEdge:
    """Keyword edge: canonical spelling, targets, the trie child (if any) and a filter marker."""

    __slots__ = ("text", "targets", "plain", "filter", "whole")

    def __init__(self, text: str, whole: bool = False) -> None:
        self.text = text
        self.targets: list[Node] = []
        self.plain: Node | None = None
        self.filter: bool = False
        self.whole = whole
        """Matched only when typed in full (a template's ``=keyword``)."""


class ParamEdge:
    """Parameter edge; ``label`` is the first template label seen for this type at this point."""

    __slots__ = ("type", "targets", "plain", "label")

    def __init__(self, ptype: ParamType, label: str = "") -> None:
        self.type = ptype
        self.label = label
        self.targets: list[Node] = []
        self.plain: Node | None = None


class Node:
    """A point in a command: what may follow, and whether the command may end here."""

    __slots__ = ("kw", "params", "literals", "terminal", "keys", "has_edges", "value_params", "minor")

    def __init__(self) -> None:
        self.kw: dict[str, KwEdge] = {}
        self.params: dict[str, ParamEdge] = {}
        self.literals: dict[str, KwEdge] = {}
        self.terminal = False
        self.keys: tuple[str, ...] = ()
        self.has_edges = False
        self.value_params = False
        self.minor: frozenset[str] = frozenset()
        """Keywords here that give way to another keyword a typed prefix also begins."""


_Edge = TypeVar("_Edge", KwEdge, ParamEdge)


def _add(edges: dict[str, _Edge], key: str, make: Callable[[], _Edge], target: Node | None) -> Node:
    """Follow (or create) the edge ``key``: to its trie child, or, with ``target``, to ``target``."""
    edge = edges.get(key)
    if edge is None:
        edge = make()
        edges[key] = edge
    if target is None:
        if edge.plain is None:
            edge.plain = Node()
            edge.targets.append(edge.plain)
        return edge.plain
    if target not in edge.targets:
        edge.targets.append(target)
    return target


def _dedupe(nodes: list[Node]) -> list[Node]:
    seen: set[int] = set()
    out: list[Node] = []
    for node in nodes:
        if id(node) not in seen:
            seen.add(id(node))
            out.append(node)
    if len(out) > MAX_BRANCHES:
        raise TemplateError("template expands to too many branches; write the options as '[ a | b ]...'")
    return out


def _insert(entries: list[Node], elem: Elem, target: Node | None, merge: bool = False) -> list[Node]:
    """Add ``elem`` after each entry node; return the nodes where it ends.

    With ``target``, the last edge of every path through ``elem`` leads to ``target`` instead of a
    new node (this is how a repetition loops back to its start). With ``merge``, the options of a
    choice end in one shared node where they can, so that a long run of optional choices (FRR's
    ``show [ip] bgp [<view|vrf> NAME] [<ipv4|ipv6> [<unicast|...>]] ...``) does not multiply paths.
    """
    if isinstance(elem, Kw):
        key = elem.text.lower()
        return _dedupe([_add(n.kw, key, lambda: KwEdge(elem.text, elem.whole), target) for n in entries])
    if isinstance(elem, Param):
        return _dedupe(
            [
                _add(n.params, elem.type.name, lambda: ParamEdge(elem.type, elem.label), target)
                for n in entries
            ]
        )
    if isinstance(elem, Lit):
        out: list[Node] = []
        for n in entries:
            child = _add(n.literals, elem.keys[0], lambda: KwEdge(elem.text), target)
            for key in elem.keys[1:]:
                n.literals.setdefault(key, n.literals[elem.keys[0]])
            out.append(child)
        return _dedupe(out)
    if isinstance(elem, Seq):
        if target is not None and isinstance(elem.items[-1], Opt) and len(elem.items) > 1:
            # "a [b]" looping back: both "a" and "a b" lead to the target.
            head = elem.items[:-1]
            shorter = head[0] if len(head) == 1 else Seq(head)
            longer = Seq((*head, elem.items[-1].body))
            return _dedupe(_insert(entries, shorter, target, merge) + _insert(entries, longer, target, merge))
        nodes = entries
        for pos, item in enumerate(elem.items):
            last = pos == len(elem.items) - 1
            nodes = _insert(nodes, item, target if last else None, merge)
        return nodes
    if isinstance(elem, Alt):
        if merge and target is None:
            shared = Node()
            ends: list[Node] = []
            for option in elem.options:
                tail = option.items[-1] if isinstance(option, Seq) else option
                if isinstance(tail, Kw | Param | Lit):
                    ends += _insert(entries, option, shared, merge)
                else:
                    ends += _insert(entries, option, None, merge)
            return _dedupe(ends)
        return _dedupe([end for option in elem.options for end in _insert(entries, option, target, merge)])
    if isinstance(elem, Opt):
        if target is not None:
            raise TemplateError("a repeated group cannot end with an optional part")
        return _dedupe(entries + _insert(entries, elem.body, None, merge))
    if isinstance(elem, Star):
        if target is not None:
            raise TemplateError("a repeated group cannot end with another repetition")
        for node in entries:
            _insert([node], elem.body, node, merge)
        return entries
    raise TypeError(f"not a template element: {elem!r}")


class Graph:
    """A compiled command tree: a root node and the templates it was built from."""

    def __init__(self) -> None:
        self.root = Node()
        self.templates: list[str] = []
        self._frozen = False

    def add(self, template: str | Elem, source: str = "") -> None:
        """Compile one template into the graph (before ``freeze``)."""
        if self._frozen:
            raise RuntimeError("graph is frozen")
        elem = parse_template(template) if isinstance(template, str) else template
        try:
            try:
                ends = _insert([self.root], elem, None)
            except TemplateError as exc:
                if "too many branches" not in str(exc):
                    raise
                ends = _insert([self.root], elem, None, merge=True)
        except TemplateError as exc:
            raise TemplateError(f"{exc} ({source or template!r})") from None
        if self.root in ends:
            raise TemplateError(f"a command cannot be empty ({source or template!r})")
        for end in ends:
            end.terminal = True
        if isinstance(template, str):
            self.templates.append(template)

    def freeze(self, minor: frozenset[str] = frozenset()) -> Graph:
        """Precompute the sorted keyword lists used for unique-prefix lookup.

        ``minor`` keywords (the profile's ``minor_keywords``) are taken when typed in full, or from a
        prefix no other keyword at that point begins; a prefix they share with another keyword means
        the other one, so a spelling added for one benchmark leaves the vendor's abbreviations alone.
        """
        stack = [self.root]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            node.keys = tuple(sorted(k for k, edge in node.kw.items() if not edge.whole))  # prefix lookup
            node.minor = frozenset(k for k in node.kw if k in minor)
            node.has_edges = bool(node.kw or node.params or node.literals)
            node.value_params = any(e.type.value_like for e in node.params.values())
            for edges in (node.kw, node.params, node.literals):
                for edge in edges.values():
                    stack.extend(edge.targets)
        self._frozen = True
        return self
