"""A fourth task family, written as a plug-in author would: "which ports are down?".

It lives outside ``ctbench/`` on purpose (tests/test_family_plugin.py installs it with an entry point
of its own and runs ``ctb-eval run`` on tasks of this family): it proves that a family is its own
module plus data. It imports only :mod:`ctbench.plugins`, the public face for plug-in authors.

An answer names one port per line, ``node:interface``; interface names go through the node's dialect
(``GE0/0/24`` is ``GigabitEthernet0/0/24`` on a Huawei switch). Scores: ``exact`` (the set of ports),
``loc`` (IoU over the nodes named) and ``port_iou`` (IoU over the ports), its third headline figure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from ctbench.plugins import GoldAnswer, ParsedAnswer

NAME = "downports"
_LINE = re.compile(r"^\s*(?P<node>[^:\s]+)\s*:\s*(?P<port>\S+)\s*$")
_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|\Z)", re.DOTALL | re.IGNORECASE)


def _iou(a: frozenset[Any], b: frozenset[Any]) -> float:
    union = a | b
    return 1.0 if not union else len(a & b) / len(union)


@dataclass(frozen=True)
class DownPortsFamily:
    name: str = NAME
    title: str = "down-port audit"
    answer_format: str = "one port per line: node:interface (interface names as the device prints them)"
    columns: tuple[str, ...] = ("exact", "loc", "port_iou")

    def gold(
        self,
        answer: GoldAnswer,
        *,
        normalize: Callable[[str, str], str],
        resolve_label: Callable[[str], str | None],
    ) -> frozenset[tuple[str, str]]:
        out = set()
        for item in answer.plugin(NAME) or []:
            node, _, port = str(item).partition(":")
            out.add((node, normalize(node, port)))
        return frozenset(out)

    def parse(
        self,
        text: str | None,
        *,
        node_names: Collection[str],
        resolve_label: Callable[[str], str | None],
        normalize: Callable[[str, str], str],
    ) -> ParsedAnswer:
        if text is None or not text.strip():
            return ParsedAnswer("empty", entries=frozenset(), kind=NAME)
        blocks = _ANSWER.findall(text)
        region = blocks[-1] if blocks else text
        known = {n.casefold(): n for n in node_names}
        ports: set[tuple[str, str]] = set()
        invalid: list[str] = []
        unresolved: list[tuple[str, str]] = []
        for raw in region.splitlines():
            line = raw.strip()
            if not line:
                continue
            m = _LINE.match(line)
            if m is None:
                invalid.append(line)
                continue
            node = known.get(m["node"].casefold())
            if node is None:
                unresolved.append((line, f"unknown node {m['node']!r}"))
                ports.add((m["node"], m["port"]))
            else:
                ports.add((node, normalize(node, m["port"])))
        if not ports:
            return ParsedAnswer(
                "unparsable" if invalid else "empty",
                entries=frozenset(),
                kind=NAME,
                invalid_lines=tuple(invalid),
                declared=bool(blocks),
            )
        return ParsedAnswer(
            "answered",
            entries=frozenset(ports),
            kind=NAME,
            invalid_lines=tuple(invalid),
            unresolved_lines=tuple(unresolved),
            declared=bool(blocks),
        )

    def score(self, gold: frozenset[tuple[str, str]], parsed: ParsedAnswer | None) -> Mapping[str, Any]:
        predicted = (
            frozenset(parsed.entries or ())
            if parsed is not None and parsed.status == "answered"
            else frozenset()
        )
        if not predicted:
            return {"exact": False, "loc": 0.0, "port_iou": 0.0}
        nodes = frozenset(n for n, _ in predicted)
        return {
            "exact": predicted == gold,
            "loc": _iou(nodes, frozenset(n for n, _ in gold)),
            "port_iou": _iou(predicted, gold),
        }

    def lines(self, parsed: ParsedAnswer) -> list[str]:
        return [f"{node}:{port}" for node, port in sorted(parsed.entries or ())]

    def gold_problems(self, gold: frozenset[tuple[str, str]], devices: Mapping[str, Any]) -> list[str]:
        return [
            f"{node}:{port}: no device {node!r} in the network"
            for node, port in sorted(gold)
            if node not in devices
        ]
