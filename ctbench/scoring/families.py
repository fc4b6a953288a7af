"""Task families as a seam: what a family must say so that the judge can read and score its answers.

A family is a small object with its answer format (the prompt's wording), a parser, per-task metrics,
a check of its gold against the network, and the columns its tables show. Families are found in the
``ctbench.families`` entry-point group, like agents (``ctbench.agents``) and executors
(``ctbench.executors``): a plug-in package adds one with

    [project.entry-points."ctbench.families"]
    mine = "my_package.family:MyFamily"

The built-ins are ``rca`` and ``path`` (the paper's two task kinds) and ``topology`` (TTAC Track B's
topology restoration, :mod:`.topology`).

The judge (:mod:`.judge`) parses every answer through its task's family and writes entries out as
answer lines with :meth:`TaskFamily.lines`. What a family still needs outside its own module is listed,
file by file, in docs/architecture.md ("Task families").
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from ctbench.answer import Hop, RcaEntry, path_line
from ctbench.model import GoldAnswer
from ctbench.scoring import topology
from ctbench.scoring.metrics import score_paths, score_rca
from ctbench.scoring.parse import parse_paths, parse_rca

GROUP = "ctbench.families"


@runtime_checkable
class TaskFamily(Protocol):
    """What a task family provides (the judge asks nothing else of it).

    Optional, with defaults built from ``parse``, ``lines`` and ``gold`` (:mod:`.gold_lines`):
    ``gold_from_lines`` and ``gold_to_lines``, how an author's answer lines become the gold stored
    under ``answer.<name>`` and back (the authoring app's answer section, ``ctb-author set-answer
    --line``). They are not protocol members, so a family without them still provides this protocol.
    """

    name: str
    title: str
    """What the prompt calls the question ("root-cause analysis")."""
    answer_format: str
    """The answer format as the prompt states it to the agent."""
    columns: tuple[str, ...]
    """The per-task figures its tables show, in order (keys of :meth:`score`'s result)."""

    def gold(
        self,
        answer: GoldAnswer,
        *,
        normalize: Callable[[str, str], str],
        resolve_label: Callable[[str], str | None],
    ) -> Any:
        """The task's gold from ``hidden.yaml``'s answer (a plug-in's is ``answer.plugin(name)``), through
        the same normalisers as an answer, as :meth:`score` compares it: a frozenset or tuple."""
        ...

    def parse(
        self,
        text: str | None,
        *,
        node_names: Collection[str],
        resolve_label: Callable[[str], str | None],
        normalize: Callable[[str, str], str],
    ) -> Any:
        """The answer as the family reads it (it has a ``status`` and ``schema_violations``)."""
        ...

    def score(self, gold: Any, parsed: Any) -> Mapping[str, Any]:
        """Per-task figures of one parsed answer against the gold: ``exact`` and ``loc`` first, then
        the family's own (``parsed`` is ``None`` when the attempt gave no answer at all)."""
        ...

    def lines(self, parsed: Any) -> list[str]:
        """A parsed answer's entries written as answer lines (the reveal and the drill-downs show them)."""
        ...

    def gold_problems(self, gold: Any, devices: Mapping[str, Any]) -> list[str]:
        """Why the gold cannot be stated on this network (empty when it can)."""
        ...


@dataclass(frozen=True)
class RcaFamily:
    name: str = "rca"
    title: str = "root-cause analysis"
    answer_format: str = "one root cause per line: node;object;label (label from the taxonomy's L0 list)"
    columns: tuple[str, ...] = ("exact", "loc", "ident", "triplet")

    def parse(
        self, text: str | None, *, node_names: Collection[str], resolve_label: Any, normalize: Any
    ) -> Any:
        return parse_rca(text, node_names=node_names, resolve_label=resolve_label, normalize_object=normalize)

    def gold(self, answer: GoldAnswer, *, normalize: Any, resolve_label: Any) -> Any:
        return frozenset(
            RcaEntry(t.node, normalize(t.node, t.object), resolve_label(t.label) or t.label)
            for t in answer.rca or []
        )

    def score(self, gold: Any, parsed: Any) -> Mapping[str, Any]:
        s = score_rca(gold, None if parsed is None else parsed.rca)
        return {"exact": s.exact, "loc": s.loc, "ident": s.ident, "triplet": s.triplet}

    def lines(self, parsed: Any) -> list[str]:
        return sorted(e.line() for e in parsed.rca or ())

    def gold_problems(self, gold: Any, devices: Mapping[str, Any]) -> list[str]:
        return [
            f"{e.line()}: no device {e.node!r} in the network" for e in sorted(gold) if e.node not in devices
        ]


@dataclass(frozen=True)
class PathFamily:
    name: str = "path"
    title: str = "path restoration"
    answer_format: str = "one path per line: Node_egress -> Node_egress -> ... -> Node"
    columns: tuple[str, ...] = ("exact", "loc", "rest", "sequence")

    def parse(
        self, text: str | None, *, node_names: Collection[str], resolve_label: Any, normalize: Any
    ) -> Any:
        return parse_paths(text, node_names=node_names, normalize_interface=normalize)

    def gold(self, answer: GoldAnswer, *, normalize: Any, resolve_label: Any) -> Any:
        return tuple(
            tuple(
                Hop(
                    h.node,
                    None if h.egress is None else normalize(h.node, h.egress),
                    None if h.ingress is None else normalize(h.node, h.ingress),
                )
                for h in p.hops
            )
            for p in answer.paths or []
        )

    def score(self, gold: Any, parsed: Any) -> Mapping[str, Any]:
        s = score_paths(gold, None if parsed is None else parsed.paths)
        return {"exact": s.exact, "loc": s.loc, "rest": s.rest, "sequence": s.sequence}

    def lines(self, parsed: Any) -> list[str]:
        return [path_line(p) for p in parsed.paths or ()]

    def gold_problems(self, gold: Any, devices: Mapping[str, Any]) -> list[str]:
        return [
            f"hop {h.node!r}: no such device in the network" for p in gold for h in p if h.node not in devices
        ]


@dataclass(frozen=True)
class TopologyFamily:
    name: str = "topology"
    title: str = "topology restoration"
    answer_format: str = "one physical link per line: NodeA(port)->NodeB(port)"
    columns: tuple[str, ...] = ("exact", "loc", "link_iou")

    def parse(
        self, text: str | None, *, node_names: Collection[str], resolve_label: Any, normalize: Any
    ) -> Any:
        return topology.parse_links(text, node_names=node_names, normalize_port=normalize)

    def gold(self, answer: GoldAnswer, *, normalize: Any, resolve_label: Any) -> Any:
        return topology.network_links(answer.links or [], normalize)

    def score(self, gold: Any, parsed: Any) -> Mapping[str, Any]:
        s = topology.score_links(gold, parsed)
        return {"exact": s.exact, "loc": s.node_pair_iou, "link_iou": s.link_iou}

    def lines(self, parsed: Any) -> list[str]:
        return [topology.link_line(x) for x in sorted(parsed.links or ())]

    def gold_problems(self, gold: Any, devices: Mapping[str, Any]) -> list[str]:
        return topology.gold_problems(gold, devices)


BUILTIN: dict[str, str] = {
    "rca": "ctbench.scoring.families:RcaFamily",
    "path": "ctbench.scoring.families:PathFamily",
    "topology": "ctbench.scoring.families:TopologyFamily",
}


def families() -> dict[str, TaskFamily]:
    """Every installed family by name: the built-ins (as installed, else from :data:`BUILTIN`), then
    plug-ins in name order. Read afresh on each call."""
    import importlib

    found = {ep.name: ep for ep in entry_points(group=GROUP)}
    out: dict[str, TaskFamily] = {}
    for name in [*BUILTIN, *sorted(n for n in found if n not in BUILTIN)]:
        if name in found:
            cls = found[name].load()
        else:
            module, _, attr = BUILTIN[name].partition(":")
            cls = getattr(importlib.import_module(module), attr)
        family = cls()
        if not isinstance(family, TaskFamily):
            raise TypeError(f"task family {name!r} ({cls!r}) does not provide the TaskFamily protocol")
        out[name] = family
    return out
