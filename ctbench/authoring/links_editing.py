"""Editing a topology-restoration gold: the cables an agent must restore (``answer.links``).

The same operations for the app's answer section and for scripts: offer each node's ports, read a
link written as an agent writes it (``A(p)->B(q)``), add one (refusing a duplicate, in either
direction) and remove one. Kept apart from :mod:`.editing` so the family's editing lives in one place;
:class:`~ctbench.authoring.editing.EditSession` takes these methods as a mixin.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ctbench.authoring.working_copy import EditError
from ctbench.model import Endpoint, Family, Link, Network

if TYPE_CHECKING:
    from ctbench.authoring.working_copy import TaskDraft
    from ctbench.model import Device

_LINE = re.compile(
    r"^\s*(?P<a>[^()\s]+)\s*\(\s*(?P<ap>[^()]+?)\s*\)\s*(?:<->|->)\s*(?P<b>[^()\s]+)\s*\(\s*(?P<bp>[^()]+?)\s*\)\s*$"
)


def link_text(link: Link) -> str:
    """A gold link as the agent must write it."""
    return f"{link.a.node}({link.a.interface})->{link.b.node}({link.b.interface})"


def _key(link: Link) -> frozenset[tuple[str, str]]:
    return frozenset({(link.a.node, link.a.interface), (link.b.node, link.b.interface)})


class LinkEditing:
    """Gold-link editing for :class:`~ctbench.authoring.editing.EditSession` (which provides the
    attributes below)."""

    if TYPE_CHECKING:
        draft: TaskDraft

        @property
        def network(self) -> Network: ...
        @property
        def family(self) -> Family: ...
        def device(self, name: str) -> Device: ...
        def require_family(self, family: Family) -> None: ...
        def _note(self, text: str) -> None: ...
        def _set_answer(self, **update: object) -> None: ...

    def gold_link_ports(self, node: str) -> list[str]:
        """The ports a link end on ``node`` can name: its listed interfaces, then those cabled in the
        network file."""
        ports = list(self.device(node).interfaces)
        for lk in self.network.links:
            for end in (lk.a, lk.b):
                if end.node == node and end.interface not in ports:
                    ports.append(end.interface)
        return ports

    def make_gold_link(self, a: tuple[str, str], b: tuple[str, str]) -> Link:
        for node, _ in (a, b):
            self.device(node)
        if a == b:
            raise EditError(f"{a[0]}({a[1]}): a link joins two different ports")
        try:
            return Link(a=Endpoint(node=a[0], interface=a[1]), b=Endpoint(node=b[0], interface=b[1]))
        except ValidationError as exc:
            raise EditError(f"link: {exc.errors()[0]['msg']}") from None

    def parse_gold_link(self, line: str) -> Link:
        """``A(GE1/0/1)->B(Gi0/1)``, as the agent writes it; node names as the network spells them."""
        m = _LINE.match(line)
        if m is None:
            raise EditError(f"{line!r}: expected NODE-A(port)->NODE-B(port)")
        return self.make_gold_link((m["a"], m["ap"]), (m["b"], m["bp"]))

    def add_gold_link(self, link: Link) -> None:
        self.require_family(Family.TOPOLOGY)
        current = list(self.draft.hidden.answer.links or [])
        if any(_key(x) == _key(link) for x in current):
            raise EditError(f"{link_text(link)} is already in the answer")
        self._set_answer(links=[*current, link])
        self._note("added link " + link_text(link))

    def remove_gold_link(self, index: int) -> Link:
        current = list(self.draft.hidden.answer.links or [])
        if not 0 <= index < len(current):
            raise EditError(f"there is no link {index + 1}")
        gone = current.pop(index)
        self._set_answer(links=current)
        self._note("removed link " + link_text(gone))
        return gone

    def set_gold_links(self, links: Sequence[Link]) -> None:
        self.require_family(Family.TOPOLOGY)
        self._set_answer(links=list(links))
        self._note("set the links: " + "; ".join(link_text(x) for x in links))
