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


# --------------------------------------------------------------------------- VLANs, VPN instances, peers

_IPV4 = re.compile(r"^(?:\d{1,3}\.){3}\d{1,3}$")
_VPN_WORDS = frozenset({"vpnv4", "vpnv6", "vpn-instance", "vrf", "all-vpn-instance"})

_CISCO = ("cisco_ios", "cisco_nxos")
_AFI = frozenset({"ipv4", "ipv6", "unicast", "multicast"})
"""Address-family words between ``peer`` and the address (Comware ``display bgp peer ipv4 X``)."""

LISTINGS: dict[str, dict[str, tuple[str, ...]]] = {
    "vlan": {
        "huawei_vrp": ("display vlan", "display vlan brief"),
        "hp_comware": ("display vlan all", "display vlan brief"),
        "cisco_ios": ("show vlan", "show vlan brief"),
        "cisco_nxos": ("show vlan", "show vlan brief"),
    },
    "vpn-instance": {
        "huawei_vrp": ("display ip vpn-instance",),
        "hp_comware": ("display ip vpn-instance",),
        "cisco_ios": ("show vrf", "show ip vrf", "show vrf brief"),
        "cisco_nxos": ("show vrf",),
    },
    "bgp-peer": {
        "huawei_vrp": ("display bgp peer",),
        "hp_comware": ("display bgp peer ipv4", "display bgp peer ipv4 unicast"),
        "cisco_ios": ("show ip bgp summary", "show bgp summary", "show bgp ipv4 unicast summary"),
        "cisco_nxos": ("show ip bgp summary", "show bgp ipv4 unicast summary"),
        "juniper_junos": ("show bgp summary",),
    },
}
"""Per kind of object and CLI family: the commands whose output lists every such object of the
device. Only a device with one of them recorded has a known set; for any other the replay cannot
tell a wrong object from an unrecorded one and keeps its refusal."""

ANSWERS: dict[tuple[str, str], str] = {
    ("cisco_ios", "vlan"): "VLAN id {token} not found in current VLAN database",
    ("cisco_ios", "vpn-instance"): "% IP routing table vrf {token} does not exist",
    ("cisco_ios", "bgp-peer"): "% No such neighbor or address family",
    ("huawei_vrp", "bgp-peer"): "Info: The peer does not exist.",
}
"""What a device prints for a VLAN, VRF or BGP peer it does not have, where it is not the parameter
error with its caret (VRP and Comware answer a VLAN or VPN instance with ``Wrong parameter``, as the
issue's measurements say). Seen in public transcripts and the tools that parse them: IOS ``show vlan
id 99`` -> ``VLAN id 99 not found in current VLAN database``; IOS ``show ip route vrf X`` -> ``% IP
routing table vrf X does not exist`` (a collector's list of Cisco's invalid-VRF answers); IOS and
FRR ``show ip bgp neighbors X`` -> ``% No such neighbor or address family``; VRP ``display bgp peer
X`` -> ``Info: The peer does not exist.`` (a log checker's test data). NX-OS, Junos and Comware's
BGP peers get the parameter error with its caret, as the issue asks: the dialect data's
``wrong_parameter_<kind>`` (shared NOTES 2.4 for NX-OS, 2.5 for Junos, 2.2 for Comware), since no
capture of their own words for a missing object was found."""


def _slot(kind: str, family: str, words: list[str]) -> int | None:
    """Index of the word of a canonical command line that names an object of ``kind``, if any."""
    if not words:
        return None
    if kind == "vlan":
        if family in ("huawei_vrp", "hp_comware") and words[:2] == ["display", "vlan"] and len(words) > 2:
            return 2 if words[2].isdigit() else None
        if family in _CISCO and words[:3] == ["show", "vlan", "id"] and len(words) > 3:
            return 3 if words[3].isdigit() else None
        return None
    if kind == "vpn-instance":
        word = "vrf" if family in _CISCO else "vpn-instance"
        if words[0] not in ("display", "show") or word not in words[:-1]:
            return None
        i = words.index(word) + 1
        return None if words[i] in ("all", "*", "default") else i
    if kind == "bgp-peer" and "bgp" in words and not _VPN_WORDS & set(words):
        word = {"huawei_vrp": "peer", "hp_comware": "peer", "juniper_junos": "neighbor"}.get(
            family, "neighbors"
        )
        if words[0] in ("display", "show") and word in words[:-1]:
            i = words.index(word) + 1
            while i < len(words) - 1 and words[i] in _AFI:
                i += 1
            return i if _IPV4.match(words[i]) else None
    return None


def _known(kind: str, text: str) -> set[str]:
    tokens = {t.rstrip(":.,*") for t in _SPLIT.split(text) if t}
    if kind == "vlan":
        return {t.lstrip("0") or "0" for t in tokens if t.isdigit()}
    if kind == "bgp-peer":
        return {t for t in tokens if _IPV4.match(t)}
    return {t.casefold() for t in tokens}


@dataclass
class ObjectCatalog:
    """A device's VLANs, VPN instances and BGP peers, as far as its recorded listings say.

    ``listing(command)`` gives the recorded text of a listing command, or None when it is not
    recorded; what a device has is read once, on the first command that names such an object.
    """

    family: str
    listing: Callable[[str], str | None]
    _known: dict[str, set[str] | None] = field(default_factory=dict, repr=False)

    def known(self, kind: str) -> set[str] | None:
        if kind not in self._known:
            found: set[str] | None = None
            for command in LISTINGS[kind].get(self.family, ()):
                text = self.listing(command)
                if text is not None:
                    found = (found or set()) | _known(kind, text)
            self._known[kind] = found
        return self._known[kind]

    def missing(self, canonical: str, line: str) -> tuple[int, str, str] | None:
        """(position in ``line``, token, kind) of a VLAN, VPN instance or BGP peer the line names that
        the device does not have; None when it names none, or the device's set is not known."""
        words = canonical.split()
        typed = [m for m in re.finditer(r"\S+", line.split("|", 1)[0])]
        if len(typed) != len(words):
            return None  # the canonical form is not word for word the typed line: do not guess
        for kind, families in LISTINGS.items():
            if self.family not in families:
                continue
            i = _slot(kind, self.family, words)
            if i is None:
                continue
            known = self.known(kind)
            if known is None:
                return None
            token = words[i]
            value = (token.lstrip("0") or "0") if kind == "vlan" else token
            if (value.casefold() if kind == "vpn-instance" else value) not in known:
                return typed[i].start(), typed[i].group(), kind
        return None

    def answer(self, kind: str, token: str) -> str | None:
        """The device's own words for a missing object, or None for its parameter error."""
        text = ANSWERS.get((self.family, kind))
        return None if text is None else text.replace("{token}", token) + "\n"


__all__ = ["ANSWERS", "LISTINGS", "Inventory", "ObjectCatalog", "interface_tokens"]
