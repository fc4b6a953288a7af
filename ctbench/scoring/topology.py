"""Topology restoration answers: one physical link per line, ``NodeA(port)->NodeB(port)``.

TTAC Track B's third task kind asks an agent to restore a network's cabling from what the devices
report (LLDP/CDP neighbours, interface descriptions, ARP and MAC tables). An answer names one physical
link per line; a link is a cable, so it has no direction: ``A(p)->B(q)`` and ``B(q)->A(p)`` are the
same link. Scores:

- **exact**: the set of predicted links equals the gold set;
- **link IoU**: ``|P ∩ G| / |P ∪ G|`` over links (both ports must match);
- **node-pair IoU** (auxiliary): the same over unordered node pairs, ports ignored, so an answer that
  found the right neighbours through the wrong ports is told apart from one that did not.

Parsing follows the RCA and path parsers (:mod:`.parse`): the answer region is the last
``<answer>``/``<result>`` block or what follows "Final answer:", else fenced blocks, else every line
holding ``->``; node names are matched case-insensitively against the network; port names go through
the node's dialect normaliser (``GE0/0/1`` -> ``GigabitEthernet0/0/1``). A line of the right shape that
names an unknown node is kept as a predicted link that matches nothing (listed in
``unresolved_lines``); a line of the wrong shape is invalid. ``schema_violations`` are what E.2 would
call an answer-realisation failure, as for RCA.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ctbench.scoring.parse import AnswerLink, ParsedAnswer, Port

__all__ = [
    "AnswerLink",
    "LinkScores",
    "Port",
    "gold_problems",
    "link",
    "link_line",
    "parse_links",
    "score_links",
]

_LINE = re.compile(
    r"^\s*(?P<a>[^()\s]+)\s*\(\s*(?P<ap>[^()]+?)\s*\)\s*(?:<->|->|→|—|--)\s*(?P<b>[^()\s]+)\s*\(\s*(?P<bp>[^()]+?)\s*\)\s*$"
)
_TAG = re.compile(
    r"<\s*(answer|result|final_answer)\b[^>]*>(.*?)(?:<\s*/\s*\1\s*>|\Z)", re.IGNORECASE | re.DOTALL
)
_MARKER = re.compile(r"final[ \t]+answer[ \t]*[:：]", re.IGNORECASE)
_FENCE = re.compile(r"^[ \t]*```[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_BULLET = re.compile(r"^(?:[-*•+]|\d{1,3}[.)])\s+")


def link(a: Port, b: Port) -> AnswerLink:
    """The one spelling of the cable between ``a`` and ``b``."""
    return (a, b) if a <= b else (b, a)


def link_line(value: AnswerLink) -> str:
    """A link as an agent writes it."""
    (a, ap), (b, bp) = value
    return f"{a}({ap})->{b}({bp})"


def _region(text: str) -> tuple[list[str], bool, bool]:
    """(candidate lines, every line is an answer line, declared)."""
    tags = list(_TAG.finditer(text))
    if tags:
        return tags[-1].group(2).splitlines(), True, True
    markers = list(_MARKER.finditer(text))
    if markers:
        return text[markers[-1].end() :].splitlines(), True, True
    fences = list(_FENCE.finditer(text))
    if fences:
        return fences[-1].group(1).splitlines(), True, False
    return [ln for ln in text.splitlines() if "->" in ln or "→" in ln], False, False


def parse_links(
    text: str | None,
    *,
    node_names: Collection[str],
    normalize_port: Callable[[str, str], str] = lambda node, port: port,
) -> ParsedAnswer:
    """Parse a topology answer (see the module docstring) into a :class:`ParsedAnswer` with ``links``."""
    if text is None or not text.strip():
        return ParsedAnswer("empty", links=frozenset())
    lines, _, declared = _region(text)
    exact = {n: n for n in node_names}
    folded = {n.casefold(): n for n in node_names}
    links: list[AnswerLink] = []
    invalid: list[str] = []
    unresolved: list[tuple[str, str]] = []
    for raw in lines:
        line = _BULLET.sub("", raw.strip()).strip().strip("`*").strip()
        if not line:
            continue
        m = _LINE.match(line)
        if m is None:
            invalid.append(line)
            continue
        ends: list[Port] = []
        problems: list[str] = []
        for node_raw, port_raw in ((m["a"], m["ap"]), (m["b"], m["bp"])):
            node = exact.get(node_raw) or folded.get(node_raw.casefold())
            if node is None:
                problems.append(f"unknown node {node_raw!r}")
                ends.append((node_raw, port_raw.strip()))
            else:
                ends.append((node, normalize_port(node, port_raw.strip())))
        value = link(ends[0], ends[1])
        if value not in links:
            links.append(value)
        if problems:
            unresolved.append((line, "; ".join(problems)))
    if not links:
        return ParsedAnswer(
            "unparsable" if invalid else "empty",
            links=frozenset(),
            invalid_lines=tuple(invalid),
            declared=declared,
        )
    return ParsedAnswer(
        "answered",
        links=frozenset(links),
        invalid_lines=tuple(invalid),
        unresolved_lines=tuple(unresolved),
        declared=declared,
    )


@dataclass(frozen=True)
class LinkScores:
    """Per-task topology scores."""

    exact: bool
    link_iou: float
    node_pair_iou: float

    def to_json(self) -> dict[str, Any]:
        return {"exact": self.exact, "link_iou": self.link_iou, "node_pair_iou": self.node_pair_iou}


def _iou(predicted: frozenset[Any], gold: frozenset[Any]) -> float:
    """|P ∩ G| / |P ∪ G|, 1 when both are empty (as :func:`ctbench.scoring.metrics.iou`)."""
    union = predicted | gold
    return 1.0 if not union else len(predicted & gold) / len(union)


def _pairs(links: Iterable[AnswerLink]) -> frozenset[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for (a, _), (b, _) in links:
        out.add((a, b) if a <= b else (b, a))
    return frozenset(out)


def score_links(gold: Iterable[AnswerLink], predicted: ParsedAnswer | None) -> LinkScores:
    """Score one topology answer; ``None`` or an unanswered one is the empty prediction (0, wrong)."""
    g = frozenset(link(*x) for x in gold)
    p = (
        frozenset(predicted.links or ())
        if predicted is not None and predicted.status == "answered"
        else frozenset()
    )
    if not p:
        return LinkScores(exact=False, link_iou=0.0, node_pair_iou=0.0)
    return LinkScores(exact=p == g, link_iou=_iou(p, g), node_pair_iou=_iou(_pairs(p), _pairs(g)))


def network_links(links: Iterable[Any], normalize_port: Callable[[str, str], str]) -> frozenset[AnswerLink]:
    """A network's cables (``model.Link`` values) as links, ports through the normaliser: the gold of a
    topology task restoring that network, and what its gold check compares an answer with."""
    return frozenset(
        link(
            (x.a.node, normalize_port(x.a.node, x.a.interface)),
            (x.b.node, normalize_port(x.b.node, x.b.interface)),
        )
        for x in links
    )


def gold_problems(gold: Iterable[AnswerLink], devices: Mapping[str, Any]) -> list[str]:
    """What makes a topology gold impossible to state: an end on a node the network does not have, a
    port used by two links (a physical port holds one cable), a link from a port to itself - the one
    check validation makes too (:func:`ctbench.validation.links.cable_problems`)."""
    from ctbench.validation.links import cable_problems  # lazy: ctbench.validation loads the validator

    links = sorted(gold)
    return [f"{link_line(links[i])}: {message}" for i, message, _ in cable_problems(links, devices)]
