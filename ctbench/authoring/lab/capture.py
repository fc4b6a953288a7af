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

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctbench.dialects import get_dialect
from ctbench.errors import CtbError
from ctbench.model import Device, Link, Network
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
        devices.append(
            Device(
                name=name,
                vendor="FRRouting" if router else "Linux",
                os=os_of(spec, name),
                type="router" if router else "server",
                role="router" if router else "host",
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
) -> Path:
    """Create the draft RCA task (and the lab's network, the first time) through an editing session."""
    from ctbench.authoring.editing import EditError, EditSession
    from ctbench.store import TaskSet

    ts = TaskSet.open(tasks_root)
    network = network_of(spec)
    existing = ts.network_names()
    new_network = None if network.name in existing else network
    try:
        session = EditSession.create(
            ts,
            "rca",
            task_id,
            network.name,
            statement=STATEMENT.format(lab=spec.name),
            title=f"{spec.name}: {', '.join(fault_names) or 'baseline'}",
            author=author,
            new_network=new_network,
        )
        for (device, command), data in recorded.recordings.items():
            session.add_recording(device, command, data)
        triples = [session.parse_rca(t) for e in effects for t in e.rca]
        if triples:
            session.set_rca(triples)
        for effect in effects:
            for device, command, why in effect.golden:
                canonical = get_dialect(os_of(spec, device)).canonical(command)
                if not any(
                    a.device == device and a.command == canonical for a in session.draft.hidden.golden_actions
                ):
                    session.add_golden(device, canonical, why)
        mechanisms = sorted({m for e in effects for m in e.protocol_mechanisms})
        categories = sorted({ts.taxonomy.category_of(t.label) or "" for t in triples} - {""})
        session.set_metadata(
            observability="O1",  # every fault in the catalogue shows on the device that has it
            chain_length=max((e.chain_length for e in effects), default=1),
            protocol_mechanisms=mechanisms,
            root_cause_count=len(triples) or None,
            declared={"categories": categories, "golden_length": len(session.draft.hidden.golden_actions)},
        )
        result = session.save(commit=commit, author=author, action="create")
    except EditError as exc:
        raise CtbError(f"lab: cannot write task {task_id}: {exc}") from None
    return Path(result.folder)
