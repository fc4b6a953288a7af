"""Recording a lab into a draft task: every planned command on every device, byte for byte.

The plan (YAML) lists commands for all routers, all hosts and single devices::

    routers: [show interface brief, show ip route, show ip ospf neighbor, show ip bgp summary]
    hosts: [ip address, ip route]
    devices:
      H1: [ping -c 2 -w 3 192.168.3.10, traceroute -n -w 1 -q 1 192.168.3.10]

Each command is resolved by the device's dialect (``frr`` or ``linux``) so the recording is stored
under the canonical command the replay will look up, and run exactly as the plan writes it. The draft
task is written through the same editing session as ``ctb-author new``/``add-recording``: a network
file derived from the lab (created with the first task of that lab), the recordings, the gold and
golden actions of the applied faults, and metadata declared from what the faults touch. The author
then writes the statement and submits the task for review as usual.
"""

from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctbench.dialects import get_dialect
from ctbench.errors import CtbError
from ctbench.model import Device, GoldPath, Link, Network, PathHop
from ctbench.yamlio import load_fast

from .faults import Effect
from .runtime import Lab
from .spec import LabSpec

STATEMENT = (
    "Draft recorded from live lab {lab}. Write the ticket the way a user would report it (the symptom, "
    "not the cause), then submit the task for review."
)


class Plan(BaseModel):
    """What to record: commands for every router, every host, and per device."""

    model_config = ConfigDict(extra="forbid")

    routers: list[str] = Field(default_factory=list)
    hosts: list[str] = Field(default_factory=list)
    devices: dict[str, list[str]] = Field(default_factory=dict)

    def commands(self, spec: LabSpec) -> list[tuple[str, str]]:
        """(device, command) in recording order, without repeats."""
        out: list[tuple[str, str]] = []
        for name in spec.devices():
            common = self.routers if name in spec.routers else self.hosts
            for command in [*common, *self.devices.get(name, [])]:
                if (name, command) not in out:
                    out.append((name, command))
        unknown = sorted(set(self.devices) - set(spec.devices()))
        if unknown:
            raise CtbError(f"plan names devices the lab does not have: {', '.join(unknown)}", exit_code=2)
        return out


DEFAULT_PLAN = Plan(
    routers=[
        "show interface brief",
        "show ip route",
        "show ip ospf neighbor",
        "show ip bgp summary",
        "show running-config",
    ],
    hosts=["ip address", "ip route"],
)


def load_plan(path: Path | None) -> Plan:
    if path is None:
        return DEFAULT_PLAN
    try:
        return Plan.model_validate(load_fast(path) or {})
    except ValidationError as exc:
        msgs = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise CtbError(f"{path}: not a command plan ({msgs})", exit_code=2) from None


def os_of(spec: LabSpec, device: str) -> str:
    return "frr" if device in spec.routers else "linux"


def network_of(spec: LabSpec) -> Network:
    """The task network a lab implies: FRR routers, Linux hosts, the links with their interfaces."""
    devices = []
    for name in spec.devices():
        ends = spec.interfaces(name)
        router = name in spec.routers
        host = spec.hosts.get(name)
        kind = "router" if router else "server"
        if host is not None and host.forward:
            kind = "firewall" if host.nft else "router"  # a Linux box in the forwarding path
        devices.append(
            Device(
                name=name,
                vendor="FRRouting" if router else "Linux",
                os=os_of(spec, name),
                type=kind,
                role="host" if kind == "server" else kind,
                site=spec.name,
                interfaces=[e.interface for e in ends] + (["lo"] if router else []),
                addresses=[e.address for e in ends if e.address],
            )
        )
    links = [Link.model_validate([link.a, link.b]) for link in spec.links]
    return Network(
        name=f"lab-{spec.name}",
        description=spec.description or f"live lab {spec.name}",
        devices=devices,
        links=links,
    )


_FRR_VIA = re.compile(r"^\s*\*\s*(\d+\.\d+\.\d+\.\d+), via (\S+?),", re.M)
_FRR_DIRECT = re.compile(r"^\s*\*\s*directly connected, (\S+?)[,\s]", re.M)
_LINUX_DEV = re.compile(r"\bdev (\S+)")


@dataclass(frozen=True)
class TracedPath:
    """The forwarding path from a device to an address, as the live routing tables say."""

    hops: tuple[tuple[str, str | None], ...]
    """(device, egress interface); the last hop (the destination's owner) has none."""
    golden: tuple[tuple[str, str, str], ...]
    """(device, command, why) of the lookups that show each hop."""


def trace_path(lab: Lab, source: str, destination: str) -> TracedPath:
    """Follow the live routing tables hop by hop from ``source`` to ``destination`` (an address).

    A router is asked ``show ip route DEST`` and a host ``ip route get DEST``; the egress interface's
    link gives the next device. The walk ends at the device that owns the address.
    """
    spec = lab.spec
    dst = ipaddress.IPv4Address(destination)
    owner = {
        ipaddress.IPv4Interface(end.address).ip: end.device
        for link in spec.links
        for end in link.ends()
        if end.address
    }
    if dst not in owner:
        raise CtbError(f"path: no device of lab {spec.name} owns {destination}", exit_code=2)
    peer = {
        (a.device, a.interface): b.device for link in spec.links for a, b in (link.ends(), link.ends()[::-1])
    }
    hops: list[tuple[str, str | None]] = []
    golden: list[tuple[str, str, str]] = []
    device = source
    while owner[dst] != device:
        if len(hops) > len(spec.devices()):
            raise CtbError(f"path: a forwarding loop from {source} to {destination}: {hops}")
        if device in spec.routers:
            command = f"show ip route {destination}"
            out = lab.run(device, command).decode(errors="replace")
            via, direct = _FRR_VIA.search(out), _FRR_DIRECT.search(out)
            egress = via.group(2) if via else direct.group(1) if direct else None
        else:
            command = f"ip route get {destination}"
            out = lab.run(device, command).decode(errors="replace")
            dev = _LINUX_DEV.search(out)
            egress = dev.group(1) if dev else None
        if egress is None or (device, egress) not in peer:
            raise CtbError(f"path: {device} has no route to {destination} (it says: {out.strip()[:200]})")
        hops.append((device, egress))
        golden.append((device, command, f"{device} forwards {destination} out of {egress}"))
        device = peer[(device, egress)]
    hops.append((device, None))
    return TracedPath(tuple(hops), tuple(golden))


@dataclass
class Recorded:
    """What a recording pass produced, before it becomes a task."""

    recordings: dict[tuple[str, str], bytes] = field(default_factory=dict)
    seconds: float = 0.0


def record(
    lab: Lab,
    plan: Plan,
    extra: Sequence[tuple[str, str]] = (),
    progress: Callable[[str], None] = lambda m: None,
) -> Recorded:
    """Run every planned command (and the golden ones) on its device; keys are canonical commands."""
    spec = lab.spec
    started = time.monotonic()
    out = Recorded()
    todo = plan.commands(spec) + [item for item in extra if item not in plan.commands(spec)]
    for n, (device, command) in enumerate(todo, 1):
        dialect = get_dialect(os_of(spec, device))
        res = dialect.resolve(command)
        if res.canonical is None or res.filters:
            prompt = dialect.prompt(device)
            text = (
                dialect.render_error(res.error, command, prompt) if res.error else "a filter is not recorded"
            )
            raise CtbError(
                f"plan: {device} {command!r} is not a command the replay could serve: {text.strip()}"
            )
        data = lab.run(device, command)
        if not data:
            data = b"\n"  # a command that printed nothing still answered: the replay prints an empty line
        out.recordings[(device, res.canonical)] = data
        if n % 10 == 0 or n == len(todo):
            progress(f"recorded {n}/{len(todo)} commands")
    out.seconds = time.monotonic() - started
    return out


def write_task(
    tasks_root: Path,
    spec: LabSpec,
    task_id: str,
    recorded: Recorded,
    effects: Sequence[Effect],
    fault_names: Sequence[str],
    *,
    author: str,
    commit: bool,
    path: TracedPath | None = None,
) -> Path:
    """Create the draft task (and the lab's network, the first time) through an editing session: an
    RCA task from the faults' gold, or with ``path`` a path task whose gold is the traced path."""
    from ctbench.authoring.editing import EditError, EditSession
    from ctbench.store import TaskSet

    ts = TaskSet.open(tasks_root)
    network = network_of(spec)
    existing = ts.network_names()
    new_network = None if network.name in existing else network
    try:
        session = EditSession.create(
            ts,
            "path" if path is not None else "rca",
            task_id,
            network.name,
            statement=STATEMENT.format(lab=spec.name),
            title=f"{spec.name}: {', '.join(fault_names) or 'baseline'}",
            author=author,
            new_network=new_network,
        )
        for (device, command), data in recorded.recordings.items():
            session.add_recording(device, command, data)
        triples = [] if path is not None else [session.parse_rca(t) for e in effects for t in e.rca]
        if triples:
            session.set_rca(triples)
        golden = [g for e in effects for g in e.golden] if path is None else list(path.golden)
        if path is not None:
            session.set_paths([GoldPath(hops=[PathHop(node=n, egress=e) for n, e in path.hops])])
        for device, command, why in golden:
            canonical = get_dialect(os_of(spec, device)).canonical(command)
            if not any(
                a.device == device and a.command == canonical for a in session.draft.hidden.golden_actions
            ):
                session.add_golden(device, canonical, why)
        mechanisms = sorted({m for e in effects for m in e.protocol_mechanisms})
        categories = sorted({ts.taxonomy.category_of(t.label) or "" for t in triples} - {""})
        if path is not None:
            session.set_metadata(
                protocol_mechanisms=["IP forwarding", *mechanisms],
                declared={"path_count": 1, "golden_length": len(session.draft.hidden.golden_actions)},
            )
        else:
            session.set_metadata(
                observability="O1",  # every fault in the catalogue shows on the device that has it
                chain_length=max((e.chain_length for e in effects), default=1),
                protocol_mechanisms=mechanisms,
                root_cause_count=len(triples) or None,
                declared={
                    "categories": categories,
                    "golden_length": len(session.draft.hidden.golden_actions),
                },
            )
        result = session.save(commit=commit, author=author, action="create")
    except EditError as exc:
        raise CtbError(f"lab: cannot write task {task_id}: {exc}") from None
    return Path(result.folder)
