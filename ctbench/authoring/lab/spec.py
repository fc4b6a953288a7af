"""The lab file: routers, hosts, links with addresses, FRR configuration and how to tell it converged."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ctbench.errors import CtbError
from ctbench.yamlio import load_fast

NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,14}")
IFNAME_RE = re.compile(r"[a-z][a-z0-9_.-]{0,14}")
DAEMONS = ("zebra", "staticd", "ospfd", "bgpd")
"""The FRR daemons a lab router runs (zebra first: the others connect to it)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Router(_Strict):
    """An FRR router: its configuration as ``vtysh`` takes it (``router ospf`` ... ``interface eth1``)."""

    config: str = ""
    daemons: tuple[str, ...] = DAEMONS

    @field_validator("daemons")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [d for d in value if d not in DAEMONS]
        if unknown or "zebra" not in value:
            raise ValueError(f"daemons are some of {', '.join(DAEMONS)} with zebra; got {list(value)}")
        return tuple(d for d in DAEMONS if d in value)


class Route(_Strict):
    """A kernel static route on a Linux device: ``to`` a prefix ``via`` a next hop."""

    to: str
    via: str

    @field_validator("to")
    @classmethod
    def _prefix(cls, value: str) -> str:
        ipaddress.IPv4Network(value)
        return value

    @field_validator("via")
    @classmethod
    def _hop(cls, value: str) -> str:
        ipaddress.IPv4Address(value)
        return value


class Host(_Strict):
    """A Linux device: addresses come from its links; ``gateway`` is its default route.

    With ``forward: true`` it is a Linux router or firewall (IP forwarding on, ``routes`` in its
    kernel table, ``nft`` rules from ``nft``): a device of another vendor and dialect (iproute2,
    nftables) in the forwarding path of the FRR routers, which is what a heterogeneous lab needs.
    """

    gateway: str | None = None
    forward: bool = False
    routes: list[Route] = Field(default_factory=list)
    nft: list[str] = Field(default_factory=list)
    """``nft`` commands run at start-up, one per item (``add table inet filter``); the base ruleset."""

    @field_validator("gateway")
    @classmethod
    def _address(cls, value: str | None) -> str | None:
        if value is not None:
            ipaddress.IPv4Address(value)
        return value


class End(_Strict):
    """One end of a link: ``R1:eth1`` and its address with prefix length."""

    device: str
    interface: str
    address: str | None = None


class Link(_Strict):
    """A veth pair between two devices; ``mtu`` applies to both ends unless an end says otherwise."""

    a: str
    b: str
    a_address: str | None = None
    b_address: str | None = None
    mtu: int | None = Field(default=None, ge=576, le=9000)

    @field_validator("a", "b")
    @classmethod
    def _end(cls, value: str) -> str:
        device, _, ifname = value.partition(":")
        if not NAME_RE.fullmatch(device) or not IFNAME_RE.fullmatch(ifname):
            raise ValueError(f"{value!r}: an end is DEVICE:ifname (ifname like eth1, at most 15 characters)")
        return value

    @field_validator("a_address", "b_address")
    @classmethod
    def _prefix(cls, value: str | None) -> str | None:
        if value is not None:
            iface = ipaddress.IPv4Interface(value)
            if not iface.ip.is_private:
                raise ValueError(f"{value}: lab addresses must be private (RFC 1918)")
        return value

    def ends(self) -> tuple[End, End]:
        (da, _, ia), (db, _, ib) = self.a.partition(":"), self.b.partition(":")
        return End(device=da, interface=ia, address=self.a_address), End(
            device=db, interface=ib, address=self.b_address
        )


class Check(_Strict):
    """Convergence: ``command`` on ``device`` prints a line matching ``match`` (a regex)."""

    device: str
    command: str
    match: str


class LabSpec(_Strict):
    """A lab file (YAML). Device names are the names in the task's network file and the prompts."""

    name: str
    description: str = ""
    routers: dict[str, Router]
    hosts: dict[str, Host] = Field(default_factory=dict)
    links: list[Link]
    converge: list[Check] = Field(default_factory=list)
    converge_timeout: float = Field(default=90.0, gt=0, le=600)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z][a-z0-9-]{0,19}", value):
            raise ValueError("a lab name is lower case letters, digits and '-', at most 20 characters")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> LabSpec:
        names = [*self.routers, *self.hosts]
        bad = [n for n in names if not NAME_RE.fullmatch(n)]
        if bad:
            raise ValueError(f"device names must match {NAME_RE.pattern}: {bad}")
        if len(set(names)) != len(names):
            raise ValueError("a device is both a router and a host")
        seen: set[tuple[str, str]] = set()
        for link in self.links:
            for end in link.ends():
                if end.device not in names:
                    raise ValueError(f"link end {end.device}:{end.interface}: no device {end.device!r}")
                if (end.device, end.interface) in seen:
                    raise ValueError(f"{end.device}:{end.interface} is used by two links")
                seen.add((end.device, end.interface))
        for check in self.converge:
            if check.device not in names:
                raise ValueError(f"converge check on unknown device {check.device!r}")
        return self

    def devices(self) -> list[str]:
        """Every device, routers first, in file order."""
        return [*self.routers, *self.hosts]

    def interfaces(self, device: str) -> list[End]:
        """The link ends on ``device``, in link order."""
        return [end for link in self.links for end in link.ends() if end.device == device]


def load_lab(path: Path) -> LabSpec:
    """Read and check a lab file; a bad one is a CtbError naming the file and the field."""
    data = load_fast(path)
    try:
        return LabSpec.model_validate(data)
    except ValidationError as exc:
        lines = [f"{path}: not a valid lab file"]
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "(top)"
            lines.append(f"  {where}: {err['msg']}")
        raise CtbError("\n".join(lines), exit_code=2) from None
