"""Free text that quotes sealed gold: found before a comment is committed, however it is spelt.

On a sealed set a verdict comment, a disagreement note or an author's reply is committed in plain
text into the round record, the commit body and its trailers, and read by every later clone (a
round-2 reviewer, the public once the set is published). A comment that names a gold root cause
would unseal it by hand. The check here reads a comment the way the scorer reads an answer:

- case, spacing and punctuation do not matter (``core-sw 01`` is ``CORE_SW_01``);
- an interface is the same whatever its abbreviation (``GE0/0/24``, ``Gi0/0/24`` and
  ``GigabitEthernet 0/0/24`` are one port, as the dialects' short names are for the scorer);
- a root-cause label is found under any of its taxonomy aliases.

A root cause is quoted when its node, its object and its label all appear, in any order; a path
when its nodes appear in their order and all its ports appear; a link when its two ends do. One node named on its own is not a
quote (a reviewer must be able to say "CORE_SW_01's recording is truncated").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ctbench.model import Family, HiddenSpec
from ctbench.taxonomy import Taxonomy

_IFACE = re.compile(r"(?<![a-z0-9])([a-z][a-z-]*?)[\s_-]*(\d+(?:\s*[/.:]\s*\d+)*)(?![a-z0-9])")


def _fold(text: str) -> str:
    """Lower case, letters and digits only: what is left when spacing and punctuation are ignored."""
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def iface_key(name: str) -> str | None:
    """A port's name the way every abbreviation of it reads: first letter of its type, then its
    numbers (``GigabitEthernet0/0/24``, ``GE0/0/24``, ``gi 0/0/24`` -> ``g0/0/24``)."""
    m = _IFACE.fullmatch(name.strip().lower())
    if m is None:
        return None
    return m.group(1)[0] + re.sub(r"\s+", "", m.group(2))


@dataclass(frozen=True)
class _Atom:
    kind: str  # "node", "iface" or "text"
    key: str


class _Reading:
    """A comment as a sequence of recognised nodes and ports, and as folded text."""

    def __init__(self, text: str, nodes: Iterable[str]) -> None:
        low = text.lower()
        found: list[tuple[int, _Atom]] = []
        masked = low
        for node in sorted(set(nodes), key=len, reverse=True):
            chunks = [c for c in re.split(r"[^a-z0-9]+", node.lower()) if c]
            if not chunks:
                continue
            pat = re.compile(r"(?<![a-z0-9])" + r"[\W_]*".join(map(re.escape, chunks)) + r"(?![a-z0-9])")
            for m in pat.finditer(masked):
                found.append((m.start(), _Atom("node", _fold(node))))
                masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end() :]
        for m in _IFACE.finditer(masked):
            found.append((m.start(), _Atom("iface", m.group(1)[0] + re.sub(r"\s+", "", m.group(2)))))
        found.sort(key=lambda x: x[0])
        self.atoms = [a for _, a in found]
        self.folded = _fold(text)

    def has(self, atom: _Atom) -> bool:
        return atom in self.atoms if atom.kind != "text" else bool(atom.key) and atom.key in self.folded

    def has_sequence(self, seq: list[_Atom]) -> bool:
        n = len(seq)
        return n > 0 and any(self.atoms[i : i + n] == seq for i in range(len(self.atoms) - n + 1))

    def has_in_order(self, seq: list[_Atom]) -> bool:
        """Every atom of ``seq`` present, in that order, with anything between them."""
        it = iter(self.atoms)
        return bool(seq) and all(any(a == b for b in it) for a in seq)


def _port(name: str) -> _Atom:
    key = iface_key(name)
    return _Atom("iface", key) if key else _Atom("text", _fold(name))


class GoldQuotes:
    """The gold of one task, ready to be looked for in free text (:meth:`quoted`)."""

    def __init__(
        self, family: Family, hidden: HiddenSpec, taxonomy: Taxonomy | None, nodes: Iterable[str]
    ) -> None:
        self.family = family
        self.hidden = hidden
        self.taxonomy = taxonomy
        self.nodes = {*nodes, *self._gold_nodes()}

    def _gold_nodes(self) -> set[str]:
        a = self.hidden.answer
        out = {t.node for t in a.rca or []}
        out |= {h.node for p in self.hidden.gold_paths() for h in p}
        for x in a.links or []:
            out |= {x.a.node, x.b.node}
        return out

    def _label_atoms(self, label: str) -> list[str]:
        names = [label]
        lab = self.taxonomy.get(label) if self.taxonomy is not None else None
        if lab is not None:
            names += [lab.label, *lab.aliases]
        return [k for k in dict.fromkeys(_fold(n) for n in names) if k]

    def quoted(self, text: str) -> str | None:
        """Which gold entry ``text`` quotes ("root cause 1", "path 2", "link 1"), or None."""
        if not text.strip():
            return None
        r = _Reading(text, self.nodes)
        for i, t in enumerate(self.hidden.answer.rca or [], 1):
            if (
                r.has(_Atom("node", _fold(t.node)))
                and r.has(_port(t.object))
                and any(k in r.folded for k in self._label_atoms(t.label))
            ):
                return f"root cause {i}"
        for i, path in enumerate(self.hidden.gold_paths(), 1):
            nodes = [_Atom("node", _fold(hop.node)) for hop in path]
            ports = [_port(p) for hop in path for p in (hop.egress, hop.ingress) if p]
            if len(nodes) + len(ports) > 1 and r.has_in_order(nodes) and all(r.has(p) for p in ports):
                return f"path {i}"
        for i, x in enumerate(self.hidden.answer.links or [], 1):
            one = [
                _Atom("node", _fold(x.a.node)),
                _port(x.a.interface),
                _Atom("node", _fold(x.b.node)),
                _port(x.b.interface),
            ]
            other = one[2:] + one[:2]
            if r.has_sequence(one) or r.has_sequence(other):
                return f"link {i}"
        return None
