"""Which interfaces a replayed device has, so a command naming another one fails as on the device.

A real device answers a command that names an interface it does not have with its parameter error
(VRP/Comware ``Wrong parameter found at '^' position.``, IOS ``% Invalid input detected``, NX-OS
``% Invalid command``, Junos ``error: device X not found``), not with a permission refusal. The
replay knows a device's interfaces from what the task set says about it: the interfaces the network
file lists for the device, the interfaces named in its recorded commands, and every interface name
its recordings print (an ``interface brief`` lists them all). A device whose network entry lists no
interface is taken to have an unknown inventory, and keeps the refusal.

A sub-interface (``GigabitEthernet0/0/1.100``, ``ge-0/0/1.0``) counts as present when its parent is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctbench.dialects import Dialect

_SPLIT = re.compile(r"[\s,;()\[\]<>\"'|]+")


def interface_tokens(dialect: Dialect, text: str) -> set[str]:
    """Full names of the interface names found in ``text`` (one-token forms)."""
    found: set[str] = set()
    for tok in _SPLIT.split(text):
        if tok and len(tok) <= 64 and any(ch.isdigit() for ch in tok):
            name = dialect.interface_name(tok.rstrip(":."))
            if name is not None:
                found.add(name.casefold())
    return found


@dataclass
class Inventory:
    """A device's interfaces: the declared ones at once, those its recordings print on first need."""

    dialect: Dialect
    declared: frozenset[str]
    texts: Callable[[], Iterable[bytes]] = field(default=lambda: ())
    _known: set[str] | None = field(default=None, repr=False)

    @property
    def known(self) -> set[str]:
        if self._known is None:
            known = set(self.declared)
            for data in self.texts():
                known |= interface_tokens(self.dialect, data.decode("utf-8", "replace"))
            self._known = known
        return self._known

    def missing(self, line: str) -> tuple[int, str] | None:
        """(position, token) of the first interface ``line`` names that the device does not have."""
        if not self.declared:
            return None
        for m in re.finditer(r"\S+", line):
            tok = m.group()
            if tok.startswith("|"):
                break  # an output filter's pattern is not a parameter
            name = self.dialect.interface_name(tok)
            if name is None:
                continue
            folded = name.casefold()
            parent = folded.split(".", 1)[0].split(":", 1)[0]
            if folded not in self.known and parent not in self.known:
                return m.start(), tok
        return None


__all__ = ["Inventory", "interface_tokens"]
