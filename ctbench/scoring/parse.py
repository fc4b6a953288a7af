"""Answer parsing: from an agent's (or a blind reviewer's) final message to answer values.

The paper scores normalised answers only (section 3.1, appendix A.2/A.3): an RCA answer is a set of
``node;object;label`` triples, a path answer a set of ordered hop sequences written
``node_egress -> node_egress -> node``. Agents wrap those lines in prose, result tags, code fences or a
"Final answer:" heading, so this module is *tolerant about where the answer is* and *strict about what
an answer line is*. An answer with no valid line is recorded as ``unparsable`` (or ``empty`` when the
answer is blank) - the paper's failure mode F5 (appendix E.2/E.3, example q12) - never dropped.

Where the answer is (first rule that applies wins, no fall-back past it):

1. ``<result>``/``<answer>``/``<final_answer>`` tags (any case, attributes allowed): the content of
   the *last* tagged block is the answer (an unclosed last tag runs to the end of the text). An agent
   that declares its answer is held to that declaration: a bad tagged block is not rescued by lines
   found elsewhere in its reasoning.
2. A "Final answer:" marker: the text after the last marker.
3. Fenced code blocks: the last fenced block that holds at least one valid line; when none does, the
   whole text (rule 4) is used, because fences in prose usually show CLI commands, not answers.
4. The whole text.

In regions 1-3 every non-blank line is an answer attempt (valid or recorded as invalid); in the whole
text only lines carrying the schema's separator (``;`` for RCA, an arrow for paths) are attempts, the
rest is prose. Fence lines (```), bullets (``-``, ``*``, ``•``, ``+``), numbering (``1.``, ``2)``,
``(3)``, ``[4]``), surrounding backticks and ``**`` are stripped from every line.

What counts is what the agent said. An RCA line with the schema's shape - three fields, a node and
a label - is a *stated cause* even when its node is not in the network, its label not in the
taxonomy or its object not an interface the device has: it is a predicted entry (it can match no
gold entry, so accuracy is 0 and the IoUs fall, as they must for an answer that asserts a cause that
is not there) and ``unresolved_lines`` says which lines those were and why. Dropping them instead
would let ``FW_02;...;VRRP...`` plus ``Core_SW_01;8.8.8.8;routing loop on the core`` score as
exactly correct. Outside a declared answer (tags, "Final answer:") such a line counts only when its
node or its label is known, so prose or a CLI snippet with two semicolons is not taken for a cause.

Nothing here knows the task model: node names, the taxonomy's label resolver and the dialects'
interface/object normalisers are passed in as plain values and callables.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ctbench.answer import Hop, Path, RcaEntry

PARSE_VERSION = "2"
"""Bumped whenever the parsing rules change, so that a parse a result line stored under older rules is
not taken for one under the new (:meth:`ctbench.scoring.judge.AnswerReader.fingerprint`). 2: an L2
path's hops keep their ingress ports."""

AnswerStatus = Literal["answered", "unparsable", "empty"]
ANSWER_STATUSES: tuple[str, ...] = ("answered", "unparsable", "empty")

_TAG_OPEN = re.compile(r"<\s*(result|answer|final_answer)\b[^>]*>", re.IGNORECASE)
_FINAL_MARKER = re.compile(r"final[ \t]+answer[ \t]*[:：]", re.IGNORECASE)
_FENCE = re.compile(r"^[ \t]*```[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_BULLET = re.compile(r"^(?:[-*•+]|\d{1,3}[.)]|\(\d{1,3}\)|\[\d{1,3}\])\s+")
_MARKUP_ONLY = re.compile(r"^[\s*_#=>:\-`~|]*$")
_RCA_SEP = re.compile(r"[;；]")
_ARROW = re.compile(r"\s*(?:->|→)\s*")

_T = TypeVar("_T")

Port = tuple[str, str]
"""(node, port) as the network names them."""
AnswerLink = tuple[Port, Port]
"""A link of a topology answer: its two ends, sorted, so that a link has one spelling whatever the
direction written (not :class:`ctbench.model.Link`, a cable of the task's network as its task.yaml
states it)."""


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    """A parsed final answer.

    Exactly one of ``rca`` / ``paths`` / ``links`` is not ``None``: it says which family the text was
    parsed as.
    When ``status`` is not ``"answered"`` that field is empty (``frozenset()`` / ``()``): the paper
    scores an unanswered or unparsable prediction as the empty set (appendix B.1), and keeping the
    family's empty value lets the metrics do exactly that without a special case.
    ``invalid_lines`` keeps every answer attempt that failed the schema, for review and for F5;
    ``unresolved_lines`` every (line, problem) that had the schema's shape and so counts as an entry,
    but names a node, label or object the task does not know.
    """

    status: AnswerStatus
    rca: frozenset[RcaEntry] | None = None
    paths: tuple[Path, ...] | None = None
    links: frozenset[AnswerLink] | None = None
    """Topology restoration (:mod:`.topology`): the physical links named, each end (node, port)."""
    entries: frozenset[Any] | tuple[Any, ...] | None = None
    """A plug-in family's entries (a set, or a tuple when their order counts), named by ``kind``. Each
    entry is built of ``str``, ``int``, ``float``, ``bool``, ``None`` and tuples of these, so that it
    survives the result line's JSON (:meth:`to_json`) without the family's help."""
    kind: str | None = None
    """The plug-in family that parsed ``entries`` (``None`` for the built-ins, named by their field)."""
    invalid_lines: tuple[str, ...] = ()
    unresolved_lines: tuple[tuple[str, str], ...] = ()
    declared: bool = False
    """The agent declared where its answer is (``<answer>``/``<result>`` tags or a "Final answer:"
    marker), so every line there is an answer line and an invalid one breaks the output schema;
    elsewhere an invalid line may be prose."""

    @property
    def schema_violations(self) -> tuple[str, ...]:
        """Lines of the answer outside the output schema (E.2's F5 check): a line naming an unknown
        node or label (or an object the node cannot have), and a line of the wrong shape inside a
        declared answer. Their parseable entries still count in the IoUs."""
        bad = [line for line, _ in self.unresolved_lines]
        if self.declared:
            bad += self.invalid_lines
        return tuple(bad)

    def __post_init__(self) -> None:
        if self.status not in ANSWER_STATUSES:
            raise ValueError(f"unknown answer status {self.status!r}")
        if [self.rca, self.paths, self.links, self.entries].count(None) != 3:
            raise ValueError("a ParsedAnswer holds exactly one of rca / paths / links / entries")
        if (self.entries is None) != (self.kind is None) or self.kind in BUILTIN_KINDS:
            raise ValueError("a plug-in family's entries go with its name (kind), the built-ins' without")
        if self.status != "answered" and (self.rca or self.paths or self.links or self.entries):
            raise ValueError(f"a {self.status} answer holds no entries")
        if self.status == "answered" and not (self.rca or self.paths or self.links or self.entries):
            raise ValueError("an answered ParsedAnswer holds at least one entry")

    @property
    def family(self) -> str:
        """The family the text was parsed as: ``rca``, ``path``, ``topology`` or a plug-in's name."""
        if self.kind is not None:
            return self.kind
        if self.rca is not None:
            return "rca"
        return "path" if self.paths is not None else "topology"

    @property
    def values(self) -> frozenset[Any] | tuple[Any, ...]:
        """The parsed entries, whichever family parsed them."""
        for value in (self.rca, self.paths, self.links, self.entries):
            if value is not None:
                return value
        raise AssertionError("unreachable: __post_init__ requires one")

    def to_json(self) -> dict[str, Any]:
        """Plain JSON value, deterministic (RCA entries sorted) so result files diff cleanly."""
        return {
            "status": self.status,
            "rca": None
            if self.rca is None
            else [{"node": e.node, "object": e.object, "label": e.label} for e in sorted(self.rca)],
            "paths": None
            if self.paths is None
            else [
                [
                    {
                        "node": h.node,
                        "egress": h.egress,
                        **({} if h.ingress is None else {"ingress": h.ingress}),
                    }
                    for h in p
                ]
                for p in self.paths
            ],
            **(
                {}
                if self.links is None
                else {"links": [[[a, ap], [b, bp]] for (a, ap), (b, bp) in sorted(self.links)]}
            ),
            **({} if self.entries is None else {"family": self.kind, **_entries_json(self.entries)}),
            "invalid_lines": list(self.invalid_lines),
            "unresolved_lines": [
                {"line": line, "problem": problem} for line, problem in self.unresolved_lines
            ],
            "declared": self.declared,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ParsedAnswer:
        """Inverse of :meth:`to_json`."""
        rca = data.get("rca")
        paths = data.get("paths")
        links = data.get("links")
        kind = data.get("family")
        entries = data.get("entries")
        return cls(
            status=data["status"],
            rca=None
            if rca is None
            else frozenset(RcaEntry(str(e["node"]), str(e["object"]), str(e["label"])) for e in rca),
            paths=None
            if paths is None
            else tuple(
                tuple(
                    Hop(
                        str(h["node"]),
                        None if h.get("egress") is None else str(h["egress"]),
                        None if h.get("ingress") is None else str(h["ingress"]),
                    )
                    for h in p
                )
                for p in paths
            ),
            links=None
            if links is None
            else frozenset(((str(a), str(ap)), (str(b), str(bp))) for (a, ap), (b, bp) in links),
            entries=None if kind is None else _entries_of(entries, bool(data.get("ordered", False))),
            kind=None if kind is None else str(kind),
            invalid_lines=tuple(str(x) for x in data.get("invalid_lines", ())),
            unresolved_lines=tuple(
                (str(u["line"]), str(u["problem"])) for u in data.get("unresolved_lines", ())
            ),
            declared=bool(data.get("declared", False)),
        )


BUILTIN_KINDS: frozenset[str] = frozenset({"rca", "path", "topology"})
"""The families with a field of their own in :class:`ParsedAnswer`; any other is a plug-in (``kind``)."""


def _plain(value: Any) -> Any:
    """An entry as JSON: tuples become lists, scalars stay."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"a plug-in family's answer entry holds a {type(value).__name__}: {value!r}")


def _tupled(value: Any) -> Any:
    """Inverse of :func:`_plain`: lists become tuples again, so entries hash and compare as parsed."""
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value


def _entries_json(entries: frozenset[Any] | tuple[Any, ...]) -> dict[str, Any]:
    if isinstance(entries, tuple):
        return {"entries": [_plain(e) for e in entries], "ordered": True}
    return {"entries": sorted((_plain(e) for e in entries), key=repr), "ordered": False}


def _entries_of(data: Any, ordered: bool) -> frozenset[Any] | tuple[Any, ...]:
    values = [_tupled(e) for e in data or ()]
    return tuple(values) if ordered else frozenset(values)


# --------------------------------------------------------------------------- answer region


@dataclass(frozen=True)
class _Region:
    text: str
    explicit: bool  # every non-blank line is an attempt
    declared: bool = False  # the agent declared this the answer (tags, marker): every stated cause counts


def _regions(text: str) -> tuple[list[_Region], bool]:
    """Candidate answer regions in the order they are tried; the bool says whether they fall back.

    Returns ``([region], False)`` for a tagged block or a final-answer marker (no fall-back), and
    the fenced blocks (last first) followed by the whole text, with ``True``, otherwise.
    """
    opens = list(_TAG_OPEN.finditer(text))
    if opens:
        last = opens[-1]
        close = re.compile(rf"<\s*/\s*{re.escape(last.group(1))}\s*>", re.IGNORECASE)
        end = close.search(text, last.end())
        return [_Region(text[last.end() : end.start() if end else len(text)], True, True)], False
    markers = list(_FINAL_MARKER.finditer(text))
    if markers:
        return [_Region(text[markers[-1].end() :], True, True)], False
    fences = [_Region(m.group(1), True) for m in _FENCE.finditer(text)]
    return [*reversed(fences), _Region(text, False)], True


def _clean_line(raw: str) -> str:
    line = raw.strip()
    if _MARKUP_ONLY.match(line):  # "**" left by "**Final answer:**", rules, bare bullets
        return ""
    line = _BULLET.sub("", line).strip()
    for wrap in ("**", "`"):
        if line.startswith(wrap) and line.endswith(wrap) and len(line) >= 2 * len(wrap):
            line = line[len(wrap) : len(line) - len(wrap)].strip()
    return line


def _attempts(region: _Region, separator: re.Pattern[str]) -> list[str]:
    out = []
    for raw in region.text.splitlines():
        if raw.strip().startswith("```"):
            continue
        line = _clean_line(raw)
        if not line:
            continue
        if region.explicit or separator.search(line):
            out.append(line)
    return out


# --------------------------------------------------------------------------- node names


class _NodeIndex:
    """Case-insensitive lookup of known node names, returning the canonical spelling."""

    def __init__(self, names: Collection[str]) -> None:
        self._exact = {n: n for n in names}
        folded: dict[str, list[str]] = {}
        for n in names:
            folded.setdefault(n.casefold(), []).append(n)
        # Two names equal but for case are ambiguous unless spelled exactly.
        self._folded = {k: v[0] for k, v in folded.items() if len(v) == 1}
        self._by_length = sorted(names, key=len, reverse=True)

    def lookup(self, token: str) -> str | None:
        return self._exact.get(token) or self._folded.get(token.casefold())

    def split_hop(self, token: str) -> tuple[str, str | None] | None:
        """``node_iface`` -> (node, iface) using the longest known node name that is a prefix + ``_``.

        An exact node name is a hop with no egress interface (the paper scores the egress "when
        present", appendix B.1).
        """
        node = self.lookup(token)
        if node is not None:
            return node, None
        folded = token.casefold()
        for name in self._by_length:
            head = name.casefold() + "_"
            if folded.startswith(head) and len(token) > len(head):
                canonical = self.lookup(token[: len(name)])
                if canonical is None:
                    continue
                return canonical, token[len(head) :]
        return None


# --------------------------------------------------------------------------- RCA

_Parsed = tuple[_T, str | None]
"""A parsed line: the value, and the problem that keeps it from matching the task (None: it resolves)."""


def _parse_rca_line(
    line: str,
    declared: bool,
    nodes: _NodeIndex,
    resolve_label: Callable[[str], str | None],
    normalize_object: Callable[[str, str], str],
) -> _Parsed[RcaEntry] | None:
    fields = [f.strip() for f in _RCA_SEP.split(line)]
    if len(fields) == 4 and fields[3] == "":
        fields = fields[:3]  # a trailing separator is harmless
    if len(fields) != 3:
        return None
    node_raw, obj_raw, label_raw = (f.strip().strip("`'\"").strip() for f in fields)
    if not node_raw or not label_raw:
        return None
    node = nodes.lookup(node_raw)
    label = resolve_label(label_raw)
    if node is None and label is None and not declared:
        return None  # outside a declared answer: prose that happens to hold two separators
    problems = []
    if node is None:
        problems.append(f"unknown node {node_raw!r}")
    if label is None:
        problems.append(f"unknown root-cause label {label_raw!r}")
    obj = obj_raw
    if node is not None:
        try:
            obj = normalize_object(node, obj_raw)
        except ValueError as exc:
            problems.append(f"object {obj_raw!r}: {exc}" if str(exc) else f"unknown object {obj_raw!r}")
    entry = RcaEntry(node or node_raw, obj, label or label_raw)
    return entry, "; ".join(problems) or None


def parse_rca(
    text: str | None,
    *,
    node_names: Collection[str],
    resolve_label: Callable[[str], str | None],
    normalize_object: Callable[[str, str], str] = lambda node, obj: obj,
) -> ParsedAnswer:
    """Parse an RCA answer: one ``node;object;label`` line per root cause (section 3.1, A.3).

    ``node`` is matched case-insensitively against the known nodes (canonical spelling returned);
    ``label`` goes through ``resolve_label`` (taxonomy aliases -> canonical L0 label, ``None`` for an
    unknown label); ``object`` through ``normalize_object(node, object)`` (e.g. interface names). A
    field count other than three, or an empty node or label, makes the line invalid. An unknown node
    or label, or a ``ValueError`` from the normaliser, keeps the line as a stated cause with the text
    as written, listed in ``unresolved_lines`` (see the module docstring for the one exception). The
    object may be empty (three fields are still required). Full-width ``；`` is accepted as separator.
    Duplicate entries collapse (the answer is a set).
    """
    index = _NodeIndex(node_names)

    def parse_line(line: str, declared: bool) -> _Parsed[RcaEntry] | None:
        return _parse_rca_line(line, declared, index, resolve_label, normalize_object)

    status, entries, invalid, unresolved, declared = _parse(text, _RCA_SEP, parse_line)
    return ParsedAnswer(
        status=status,
        rca=frozenset(entries),
        invalid_lines=invalid,
        unresolved_lines=unresolved,
        declared=declared,
    )


# --------------------------------------------------------------------------- paths


_PORT_HOP = re.compile(r"^([^()\s]+)\s*\(\s*([^()]+?)\s*\)$")
"""An L2 path hop, ``Node(port)`` (TTAC Track B's ``node(out)->node(in)->...``)."""


def _parse_l2_line(
    ports: list[tuple[str, str]], declared: bool, nodes: _NodeIndex, normalize: Callable[[str, str], str]
) -> _Parsed[Path] | None:
    """An L2 path as hops: a node's consecutive ports are where it is entered and left; the first port
    written for it is its ingress (the first node has none), the last its egress (the last node has
    none), as the importer reads Track B's gold."""
    groups: list[tuple[str, list[str]]] = []
    problems: list[str] = []
    for name, port in ports:
        node = nodes.lookup(name)
        if node is None:
            problems.append(f"unknown node {name!r}")
            node = name
        if groups and groups[-1][0] == node:
            groups[-1][1].append(port)
        else:
            groups.append((node, [port]))
    if len(groups) < 2:
        return None

    def canonical(node: str, name: str) -> str:
        try:
            return normalize(node, name)
        except ValueError as exc:
            problems.append(f"hop {node}({name}): {exc}" if str(exc) else f"unknown interface {name!r}")
            return name

    hops: list[Hop] = []
    for i, (node, seen) in enumerate(groups):
        ingress = canonical(node, seen[0]) if i > 0 else None
        egress = canonical(node, seen[-1]) if i < len(groups) - 1 else None
        hops.append(Hop(node, egress, ingress))
    if (
        problems
        and not declared
        and (nodes.lookup(ports[0][0]) is None or nodes.lookup(ports[-1][0]) is None)
    ):
        return None
    return tuple(hops), "; ".join(problems) or None


def _parse_path_line(
    line: str, declared: bool, nodes: _NodeIndex, normalize_interface: Callable[[str, str], str]
) -> _Parsed[Path] | None:
    tokens = [t.strip().strip("`'\"").strip() for t in _ARROW.split(line)]
    if len(tokens) < 2 or any(not t for t in tokens):
        return None
    l2 = [_PORT_HOP.match(t) for t in tokens]
    if all(l2):
        ports = [(m.group(1), m.group(2)) for m in l2 if m]
        return _parse_l2_line(ports, declared, nodes, normalize_interface)
    hops: list[Hop] = []
    problems: list[str] = []
    for tok in tokens[:-1]:
        split = nodes.split_hop(tok)
        if split is None:
            problems.append(f"unknown hop {tok!r}")
            hops.append(Hop(tok, None))  # a stated hop the network does not know: it matches no edge
            continue
        node, iface = split
        if iface is not None:
            try:
                iface = normalize_interface(node, iface)
            except ValueError as exc:
                problems.append(f"hop {tok!r}: {exc}" if str(exc) else f"unknown interface in {tok!r}")
        hops.append(Hop(node, iface))
    terminal = nodes.lookup(tokens[-1])
    if terminal is None:
        problems.append(f"unknown node {tokens[-1]!r}")
    hops.append(Hop(terminal or tokens[-1], None))
    if problems and not declared and (nodes.split_hop(tokens[0]) is None or terminal is None):
        return None  # outside a declared answer, arrows between unknown ends are prose, not a path
    return tuple(hops), "; ".join(problems) or None


def parse_paths(
    text: str | None,
    *,
    node_names: Collection[str],
    normalize_interface: Callable[[str, str], str],
) -> ParsedAnswer:
    """Parse a path answer: one ``A_GE1/0/1 -> B_Gi0/1 -> C`` line per path (appendix A.2).

    Node names may contain ``_``, so each non-terminal token is split against the known node names:
    a token equal to a node name is that node with no egress; otherwise the longest known name that
    is a prefix followed by ``_`` is the node and the rest is its egress interface, normalised by
    ``normalize_interface(node, iface)``. The last token must be a node name only. A line of
    ``Node(port)`` hops is an L2 path (TTAC Track B): a node's last port written is its egress. ``->`` and ``→``
    are arrows. An empty token or a one-token line makes the line invalid; a hop or node the network
    does not know, or an interface the normaliser refuses, keeps the line as a stated path (its raw
    token as the hop, so it matches no gold edge) listed in ``unresolved_lines`` - outside a declared
    answer only when both its ends are known nodes. Duplicate paths are removed, order of first
    appearance kept.
    """
    index = _NodeIndex(node_names)

    def parse_line(line: str, declared: bool) -> _Parsed[Path] | None:
        return _parse_path_line(line, declared, index, normalize_interface)

    status, paths, invalid, unresolved, declared = _parse(text, _ARROW, parse_line)
    return ParsedAnswer(
        status=status,
        paths=tuple(paths),
        invalid_lines=invalid,
        unresolved_lines=unresolved,
        declared=declared,
    )


# --------------------------------------------------------------------------- shared driver


def _dedupe(items: Iterable[_T]) -> list[_T]:
    seen: set[_T] = set()
    out: list[_T] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _parse(
    text: str | None, separator: re.Pattern[str], parse_line: Callable[[str, bool], _Parsed[_T] | None]
) -> tuple[AnswerStatus, list[_T], tuple[str, ...], tuple[tuple[str, str], ...], bool]:
    """Try the answer regions in order; see the module docstring for the rules. The last value says
    whether the answer came from a declared region (tags or a final-answer marker)."""
    if text is None or not text.strip():
        return "empty", [], (), (), False
    regions, falls_back = _regions(text)
    first_invalid: tuple[str, ...] | None = None
    for region in regions:
        valid: list[_T] = []
        invalid: list[str] = []
        unresolved: list[tuple[str, str]] = []
        for line in _attempts(region, separator):
            parsed = parse_line(line, region.declared)
            if parsed is None:
                invalid.append(line)
                continue
            value, problem = parsed
            valid.append(value)
            if problem is not None:
                unresolved.append((line, problem))
        if valid:
            return "answered", _dedupe(valid), tuple(invalid), tuple(unresolved), region.declared
        if not falls_back:
            if not invalid:  # a declared answer with nothing in it
                return "empty", [], (), (), True
            return "unparsable", [], tuple(invalid), (), True
        if first_invalid is None and invalid:
            first_invalid = tuple(invalid)
    return "unparsable", [], first_invalid or (), (), False


def parse_answer(
    text: str | None,
    family: str,
    *,
    node_names: Collection[str],
    resolve_label: Callable[[str], str | None],
    normalize: Callable[[str, str], str],
) -> ParsedAnswer:
    """Parse an answer of either family with one interface normaliser (RCA objects, path egresses).

    The one entry point the runner, the scorer, the blind review and the oracle check share, so an
    answer reads the same wherever it is judged.
    """
    if family == "rca":
        return parse_rca(text, node_names=node_names, resolve_label=resolve_label, normalize_object=normalize)
    return parse_paths(text, node_names=node_names, normalize_interface=normalize)
