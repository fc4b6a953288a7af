"""The fault catalogue: what each fault does to a live lab, and the gold it implies.

A fault is applied to a running lab as a person would cause it (a configuration change through vtysh,
an ``ip link`` change in the namespace) and names the root cause it creates as the taxonomy's
``node;object;label`` triple, plus the commands that show it (the draft's golden actions). Faults take
their arguments as ``key=value`` words: ``ctb-author lab capture LAB --fault shutdown device=R2
interface=eth2``.
"""

from __future__ import annotations

import ipaddress
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ctbench.errors import CtbError

from .runtime import Lab


@dataclass(frozen=True)
class Effect:
    """What an applied fault means for the task: root cause(s), golden commands, how long to let it act."""

    rca: tuple[str, ...]
    """``node;object;label`` triples (taxonomy labels)."""
    golden: tuple[tuple[str, str, str], ...]
    """(device, command, why) of the commands that show the fault."""
    protocol_mechanisms: tuple[str, ...]
    settle: float
    """Seconds to wait before recording (a wrong OSPF area shows after the dead interval)."""
    chain_length: int = 2
    """Steps from the cause to the symptom a user sees (cause, lost adjacency/route, unreachable)."""
    undo: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    """How to take the fault back: (device, ``vtysh`` or ``shell``, configuration lines or argv)."""


@dataclass(frozen=True)
class Fault:
    name: str
    summary: str
    params: tuple[str, ...]
    apply: Callable[[Lab, Mapping[str, str]], Effect]


def _router(lab: Lab, args: Mapping[str, str]) -> str:
    device = args["device"]
    if device not in lab.spec.routers:
        raise CtbError(f"fault: {device!r} is not a router of lab {lab.spec.name}")
    return device


def _configure(lab: Lab, device: str, lines: list[str]) -> None:
    argv: list[str] = ["-c", "configure terminal"]
    for line in lines:
        argv += ["-c", line]
    proc = lab.vtysh(device, argv)
    text = (proc.stdout + proc.stderr).decode(errors="replace").strip()
    if proc.returncode != 0 or "%" in text:
        raise CtbError(f"fault: {device} refused {lines}: {text}")


def _shutdown(lab: Lab, args: Mapping[str, str]) -> Effect:
    device, iface = _router(lab, args), args["interface"]
    _configure(lab, device, [f"interface {iface}", "shutdown"])
    return Effect(
        rca=(f"{device};{iface};shutdown",),
        golden=(
            (device, "show interface brief", f"{iface} is down while its peer is up"),
            (device, "show running-config", f"interface {iface} carries 'shutdown'"),
        ),
        protocol_mechanisms=("interface state",),
        settle=2.0,
        undo=((device, "vtysh", (f"interface {iface}", "no shutdown")),),
    )


def _mtu(lab: Lab, args: Mapping[str, str]) -> Effect:
    device, iface, mtu = _router(lab, args), args["interface"], int(args.get("mtu", "1400"))
    lab.shell(device, ["ip", "link", "set", "dev", iface, "mtu", str(mtu)])
    # OSPF compares the MTU in its DBD packets only when the adjacency forms again
    _configure(lab, device, [f"interface {iface}", "shutdown", "no shutdown"])
    return Effect(
        rca=(f"{device};{iface};OSPF neighbor parameter mismatch",),
        golden=(
            (device, "show ip ospf neighbor", "the neighbour on this link never gets past ExStart/Exchange"),
            (device, f"show interface {iface}", f"{iface} has MTU {mtu}, its neighbour 1500"),
        ),
        protocol_mechanisms=("OSPF adjacency", "interface MTU"),
        settle=8.0,
        undo=(
            (device, "shell", ("ip", "link", "set", "dev", iface, "mtu", "1500")),
            (device, "vtysh", (f"interface {iface}", "shutdown", "no shutdown")),
        ),
    )


def _ospf_area(lab: Lab, args: Mapping[str, str]) -> Effect:
    device, network, area = _router(lab, args), args["network"], args.get("area", "1")
    net = ipaddress.IPv4Network(network)
    on = [
        e.interface
        for e in lab.spec.interfaces(device)
        if e.address and ipaddress.IPv4Interface(e.address).network == net
    ]
    if not on:
        raise CtbError(f"fault ospf-area: {device} has no interface in {network}")
    _configure(lab, device, ["router ospf", f"no network {network} area 0", f"network {network} area {area}"])
    return Effect(
        rca=(f"{device};{on[0]};OSPF neighbor parameter mismatch",),
        golden=(
            (device, "show ip ospf neighbor", "no adjacency on the link any more"),
            (
                device,
                "show running-config",
                f"network {network} is in area {area}, its neighbour's in area 0",
            ),
        ),
        protocol_mechanisms=("OSPF adjacency", "OSPF area"),
        settle=6.0,
        undo=(
            (
                device,
                "vtysh",
                ("router ospf", f"no network {network} area {area}", f"network {network} area 0"),
            ),
        ),
    )


def _bgp_as(lab: Lab, args: Mapping[str, str]) -> Effect:
    device, neighbor, asn = _router(lab, args), args["neighbor"], args.get("remote_as", "65099")
    ipaddress.IPv4Address(neighbor)
    local = args["local_as"]
    before = lab.vtysh(device, ["-c", "show running-config"]).stdout.decode(errors="replace")
    found = re.search(rf"^ neighbor {re.escape(neighbor)} remote-as (\S+)$", before, re.M)
    if found is None:
        raise CtbError(f"fault bgp-as: {device} has no BGP neighbour {neighbor}")
    _configure(lab, device, [f"router bgp {local}", f"neighbor {neighbor} remote-as {asn}"])
    return Effect(
        rca=(f"{device};{neighbor};BGP peer configuration error",),
        golden=(
            (device, "show ip bgp summary", f"the session to {neighbor} is not Established"),
            (device, "show running-config", f"neighbor {neighbor} remote-as {asn} is not the peer's AS"),
        ),
        protocol_mechanisms=("BGP session",),
        settle=5.0,
        undo=((device, "vtysh", (f"router bgp {local}", f"neighbor {neighbor} remote-as {found.group(1)}")),),
    )


def _static_missing(lab: Lab, args: Mapping[str, str]) -> Effect:
    device = args["device"]
    if device not in lab.spec.hosts:
        raise CtbError(f"fault static-missing: {device!r} is not a host of lab {lab.spec.name}")
    host = lab.spec.hosts[device]
    if "to" in args:  # one route of a Linux router's table (lab file: routes), not its default
        route = next((r for r in host.routes if r.to == args["to"]), None)
        if route is None:
            known = ", ".join(r.to for r in host.routes) or "none"
            raise CtbError(
                f"fault static-missing: {device} has no route to {args['to']} (its routes: {known})"
            )
        lab.shell(device, ["ip", "route", "del", route.to, "via", route.via])
        return Effect(
            rca=(f"{device};{route.to};static route missing",),
            golden=((device, "ip route", f"no route to {route.to}: packets for it have nowhere to go"),),
            protocol_mechanisms=("static routing",),
            settle=0.5,
            chain_length=2 if host.forward else 1,
            undo=((device, "shell", ("ip", "route", "add", route.to, "via", route.via)),),
        )
    if host.gateway is None:
        raise CtbError(f"fault static-missing: host {device} has no default route (gateway) to remove")
    lab.shell(device, ["ip", "route", "del", "default"])
    return Effect(
        rca=(f"{device};{host.gateway};static route missing",),
        golden=((device, "ip route", "no default route: only the connected subnet"),),
        protocol_mechanisms=("static routing",),
        settle=0.5,
        chain_length=1,
        undo=((device, "shell", ("ip", "route", "add", "default", "via", str(host.gateway))),),
    )


def _ospf_timers(lab: Lab, args: Mapping[str, str]) -> Effect:
    device, iface, hello = _router(lab, args), args["interface"], int(args.get("hello", "3"))
    before = lab.vtysh(device, ["-c", "show running-config"]).stdout.decode(errors="replace")
    old = re.search(rf"^interface {re.escape(iface)}\n(?: .*\n)*? ip ospf hello-interval (\d+)", before, re.M)
    undo_line = f"ip ospf hello-interval {old.group(1)}" if old else "no ip ospf hello-interval"
    _configure(lab, device, [f"interface {iface}", f"ip ospf hello-interval {hello}"])
    return Effect(
        rca=(f"{device};{iface};OSPF neighbor parameter mismatch",),
        golden=(
            (device, "show ip ospf neighbor", "the neighbour on this link is gone"),
            (
                device,
                "show ip ospf interface",
                f"{iface} says Hello {hello}s, its neighbour another interval",
            ),
        ),
        protocol_mechanisms=("OSPF adjacency", "OSPF timers"),
        settle=6.0,
        undo=((device, "vtysh", (f"interface {iface}", undo_line)),),
    )


def _prefix_deny(lab: Lab, args: Mapping[str, str]) -> Effect:
    device, local, neighbor, prefix = _router(lab, args), args["local_as"], args["neighbor"], args["prefix"]
    ipaddress.IPv4Address(neighbor)
    ipaddress.IPv4Network(prefix)
    name = args.get("name", "EDGE-IN")
    _configure(
        lab,
        device,
        [
            f"ip prefix-list {name} seq 5 deny {prefix}",
            f"ip prefix-list {name} seq 10 permit 0.0.0.0/0 le 32",
            f"router bgp {local}",
            "address-family ipv4 unicast",
            f"neighbor {neighbor} prefix-list {name} in",
        ],
    )
    lab.vtysh(device, ["-c", f"clear ip bgp {neighbor} soft in"])
    return Effect(
        rca=(f"{device};{name};route policy denies the route",),
        golden=(
            (device, "show ip route", f"{prefix} is missing"),
            (device, "show running-config", f"prefix-list {name} denies {prefix} from {neighbor}"),
        ),
        protocol_mechanisms=("BGP", "prefix list"),
        settle=4.0,
        undo=(
            (
                device,
                "vtysh",
                (
                    f"router bgp {local}",
                    "address-family ipv4 unicast",
                    f"no neighbor {neighbor} prefix-list {name} in",
                ),
            ),
            (device, "vtysh", (f"no ip prefix-list {name}",)),
        ),
    )


def _static_wrong(lab: Lab, args: Mapping[str, str]) -> Effect:
    device, via = args["device"], args["via"]
    if device not in lab.spec.hosts or lab.spec.hosts[device].gateway is None:
        raise CtbError(f"fault static-wrong: {device!r} is not a host of lab {lab.spec.name} with a gateway")
    ipaddress.IPv4Address(via)
    gateway = str(lab.spec.hosts[device].gateway)
    lab.shell(device, ["ip", "route", "replace", "default", "via", via])
    return Effect(
        rca=(f"{device};{via};static route next hop incorrect",),
        golden=((device, "ip route", f"the default route points at {via}, not the gateway {gateway}"),),
        protocol_mechanisms=("static routing", "ARP"),
        settle=0.5,
        chain_length=1,
        undo=((device, "shell", ("ip", "route", "replace", "default", "via", gateway)),),
    )


def _bgp_neighbor(lab: Lab, args: Mapping[str, str]) -> Effect:
    """The neighbour statement names an address the peer does not have (a typo in the last octet)."""
    device, local, neighbor, wrong = _router(lab, args), args["local_as"], args["neighbor"], args["wrong"]
    ipaddress.IPv4Address(neighbor)
    ipaddress.IPv4Address(wrong)
    before = lab.vtysh(device, ["-c", "show running-config"]).stdout.decode(errors="replace")
    found = re.search(rf"^ neighbor {re.escape(neighbor)} remote-as (\S+)$", before, re.M)
    if found is None:
        raise CtbError(f"fault bgp-neighbor: {device} has no BGP neighbour {neighbor}")
    remote = found.group(1)
    _configure(
        lab,
        device,
        [f"router bgp {local}", f"no neighbor {neighbor}", f"neighbor {wrong} remote-as {remote}"],
    )
    return Effect(
        rca=(f"{device};{wrong};BGP peer configuration error",),
        golden=(
            (device, "show ip bgp summary", f"the only neighbour, {wrong}, never gets Established"),
            (device, "show running-config", f"neighbor {wrong} is not the peer's address {neighbor}"),
        ),
        protocol_mechanisms=("BGP session",),
        settle=5.0,
        undo=(
            (
                device,
                "vtysh",
                (f"router bgp {local}", f"no neighbor {wrong}", f"neighbor {neighbor} remote-as {remote}"),
            ),
        ),
    )


def _nft_exists(lab: Lab, device: str, what: str) -> bool:
    proc = subprocess.run(
        ["ip", "netns", "exec", lab.ns(device), "nft", "list", *what.split()],
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0


def _acl_drop(lab: Lab, args: Mapping[str, str]) -> Effect:
    """A Linux device's own packet filter (nftables, as an administrator writes it) drops a source network.

    ``chain=input`` (the default) drops what is sent to the device itself; ``chain=forward`` what a
    Linux router or firewall forwards (its ``forward: true`` in the lab file); ``port=N`` narrows the
    rule to TCP to that port (``port=179`` cuts BGP sessions through a firewall, not ping). The rule
    is inserted first in the chain, before any accept of the device's own ruleset; taking the fault
    back removes exactly what the fault created (the rule, or the chain or table it had to add).
    """
    device, source = args["device"], args["source"]
    chain, port = args.get("chain", "input"), args.get("port")
    if device not in lab.spec.hosts:
        raise CtbError(f"fault acl-drop: {device!r} is not a Linux device of lab {lab.spec.name}")
    if chain not in ("input", "forward"):
        raise CtbError(f"fault acl-drop: chain={chain!r}; expected input or forward", exit_code=2)
    if chain == "forward" and not lab.spec.hosts[device].forward:
        raise CtbError(f"fault acl-drop: {device} does not forward (forward: true in the lab file)")
    if port is not None and not (port.isdigit() and 0 < int(port) < 65536):
        raise CtbError(f"fault acl-drop: port={port!r}; expected a TCP port number", exit_code=2)
    ipaddress.IPv4Network(source)
    if shutil.which("nft") is None:
        raise CtbError("fault acl-drop needs nft on this machine (apt-get install nftables)")
    had_table = _nft_exists(lab, device, "table inet filter")
    had_chain = had_table and _nft_exists(lab, device, f"chain inet filter {chain}")
    lab.shell(device, ["nft", "add table inet filter"])
    lab.shell(
        device,
        ["nft", f"add chain inet filter {chain} {{ type filter hook {chain} priority 0; policy accept; }}"],
    )
    match = f"ip saddr {source}" + (f" tcp dport {port}" if port else "")
    echoed = subprocess.run(
        ["ip", "netns", "exec", lab.ns(device), "nft", "--echo", "--handle", f"insert rule inet filter {chain} {match} drop"],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    handle = re.search(r"# handle (\d+)", echoed.stdout)
    if echoed.returncode != 0 or handle is None:
        raise CtbError(
            f"fault acl-drop: {device} refused the rule: {(echoed.stdout + echoed.stderr).strip()}"
        )
    if not had_table:
        undo: tuple[str, ...] = ("nft", "delete table inet filter")
    elif not had_chain:
        undo = ("nft", f"delete chain inet filter {chain}")
    else:
        undo = ("nft", f"delete rule inet filter {chain} handle {handle.group(1)}")
    what = f"TCP to port {port} from {source}" if port else f"every packet from {source}"
    return Effect(
        rca=(f"{device};{chain};ACL denies the traffic",),
        golden=((device, "nft list ruleset", f"the {chain} chain drops {what}"),),
        protocol_mechanisms=("packet filter",) + (("BGP session",) if port == "179" else ()),
        settle=5.0 if port else 0.5,
        chain_length=1 if chain == "input" else 3 if port else 2,  # rule, lost session, lost route
        undo=((device, "shell", undo),),
    )


CATALOGUE: dict[str, Fault] = {
    f.name: f
    for f in (
        Fault("shutdown", "shut an interface of a router", ("device", "interface"), _shutdown),
        Fault(
            "mtu", "change a router interface's MTU (OSPF MTU mismatch)", ("device", "interface", "mtu"), _mtu
        ),
        Fault(
            "ospf-area",
            "put a router's OSPF network in another area",
            ("device", "network", "area"),
            _ospf_area,
        ),
        Fault(
            "bgp-as",
            "configure a wrong remote AS for a BGP neighbour",
            ("device", "local_as", "neighbor", "remote_as"),
            _bgp_as,
        ),
        Fault(
            "static-missing",
            "remove a host's default route, or with to=PREFIX one route of a Linux router",
            ("device", "to"),
            _static_missing,
        ),
        Fault(
            "ospf-timers",
            "change a router interface's OSPF hello interval",
            ("device", "interface", "hello"),
            _ospf_timers,
        ),
        Fault(
            "prefix-deny",
            "deny a prefix from a BGP neighbour with a prefix list",
            ("device", "local_as", "neighbor", "prefix", "name"),
            _prefix_deny,
        ),
        Fault(
            "bgp-neighbor",
            "point a BGP neighbour statement at an address the peer does not have",
            ("device", "local_as", "neighbor", "wrong"),
            _bgp_neighbor,
        ),
        Fault(
            "acl-drop",
            "drop a source network in a Linux device's packet filter (nftables input or forward chain)",
            ("device", "source", "chain", "port"),
            _acl_drop,
        ),
        Fault(
            "static-wrong",
            "point a host's default route at a wrong next hop",
            ("device", "via"),
            _static_wrong,
        ),
    )
}


def parse_fault(words: list[str]) -> tuple[Fault, dict[str, str]]:
    """``["shutdown", "device=R2", "interface=eth2"]`` -> the fault and its arguments, checked."""
    if not words:
        raise CtbError("--fault needs a name: " + ", ".join(CATALOGUE), exit_code=2)
    fault = CATALOGUE.get(words[0])
    if fault is None:
        raise CtbError(f"unknown fault {words[0]!r}; known: {', '.join(CATALOGUE)}", exit_code=2)
    args: dict[str, str] = {}
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if not eq or key not in fault.params:
            raise CtbError(
                f"fault {fault.name}: {word!r}; expected key=value with key in {', '.join(fault.params)}",
                exit_code=2,
            )
        args[key] = value
    required = {"shutdown": ("device", "interface"), "mtu": ("device", "interface"), "ospf-area": ("device", "network"),
                "bgp-as": ("device", "local_as", "neighbor"), "static-missing": ("device",),
                "ospf-timers": ("device", "interface"), "prefix-deny": ("device", "local_as", "neighbor", "prefix"),
                "static-wrong": ("device", "via"), "bgp-neighbor": ("device", "local_as", "neighbor", "wrong"),
                "acl-drop": ("device", "source")}[fault.name]  # fmt: skip
    missing = [k for k in required if k not in args]
    if missing:
        raise CtbError(f"fault {fault.name}: missing {', '.join(k + '=...' for k in missing)}", exit_code=2)
    return fault, args


def revert(lab: Lab, effect: Effect) -> None:
    """Take a fault back (the lab then needs to converge again: :meth:`Lab.wait_converged`)."""
    for device, kind, words in effect.undo:
        if kind == "vtysh":
            _configure(lab, device, list(words))
        else:
            lab.shell(device, list(words))


def inject(lab: Lab, fault: Fault, args: Mapping[str, str]) -> Effect:
    """Apply the fault and wait the time it needs to show."""
    effect = fault.apply(lab, args)
    time.sleep(effect.settle)
    return effect
