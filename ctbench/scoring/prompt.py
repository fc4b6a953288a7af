"""The one prompt every agent receives (paper, appendix D.6 and Figure 5).

All agent/harness combinations get the same task-level text: the task statement, the question
identifier, the tool interface and the required answer format. It is built from the agent-visible
side of a task only (``task.yaml``, the shared network, the taxonomy's answer vocabulary): this module
never loads ``hidden.yaml``, so the gold answer, golden actions, metadata and rationale cannot leak
into it by construction, and a test renders prompts with the hidden files removed to prove it.

The root-cause label vocabulary is part of the answer format (the taxonomy's L0 labels are "the labels
agents must write"); it is the same list for every task, sorted alphabetically so that its order does
not reveal the category grouping (categories are never shown).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctbench.errors import CtbError
from ctbench.model import Family, Network, TaskSpec
from ctbench.scoring.families import TaskFamily, families
from ctbench.store import TaskRef, TaskSet

PROMPT_VERSION = "2"
"""Bumped whenever what the model is told changes - the template text, or the wording of the replay
tools' replies (2: an invalid command comes back with its echoed line, ctbench/replay/tools.py);
recorded in run.yaml, so a resume refuses to mix two versions in one run unless forced."""

_INTRO = """\
You are a senior network engineer troubleshooting a multi-vendor network. This is question {task_id}
of a troubleshooting benchmark. You reach the devices through a read-only replay of their command
line: every command you run returns exactly what the real device printed while the fault was present.
Investigate with the tools below, then submit your answer in the required format."""

_TOOLS = """\
## Tools

- list_devices(): the devices you may query, with vendor, CLI family, type, role and site.
- run_command(device, command): run one CLI command on one device and read its output. Use the
  device's own syntax; abbreviations, interface short names and output filters such as "| include"
  work as on the real device. A valid command whose output was not captured is refused with the
  device's permission-denied message; an invalid command gets the device's own error text. Nothing
  you run changes the network, and only the devices listed above can be queried.
- submit_answer(answer): submit your final answer, all lines at once. A later submission replaces an
  earlier one.

Agents working in a shell have the same operations as commands: `ctb-replay exec DEVICE COMMAND...`
runs a command, and the final answer is either written to the file named by $CTBENCH_ANSWER_FILE or
given as the last thing the agent prints."""

_RCA_FORMAT = """\
## Answer format

Give the minimal set of root causes that explains the symptoms: one line per root cause, written

    node;object;root-cause label

- node: the name of the faulty device, exactly as listed above;
- object: the faulty object on that device (an interface, IP address, route, policy, VPN instance...),
  with interfaces written by their full name;
- root-cause label: one of the labels below, written exactly.

Put the answer lines, and nothing else, between <answer> and </answer>.

Root-cause labels:
{labels}"""

_PATH_FORMAT = """\
## Answer format

Give every forwarding path the traffic takes: one line per path, the hops joined by " -> ", each hop
but the last written node_egress-interface (the node name, an underscore, the full name of the
interface the traffic leaves that node by) and the last hop written as the node name only:

    SOURCE_egress-interface -> NEXT-NODE_egress-interface -> ... -> DESTINATION

Node names are the names used in the network (devices and hosts listed above). Put the answer lines,
and nothing else, between <answer> and </answer>."""


_TOPOLOGY_FORMAT = """\
## Answer format

Give every physical link (cable) the question asks for: one line per link, its two ends written
node(port) and joined by "->":

    NODE-A(port)->NODE-B(port)

Node names are the names used in the network (devices and other nodes listed above); ports are the
interface names each node uses, written in full where the node has a CLI. A link has no direction:
A(p)->B(q) and B(q)->A(p) are the same link. Put the answer lines, and nothing else, between
<answer> and </answer>."""

_KIND = {
    Family.RCA: "root-cause analysis",
    Family.PATH: "path restoration",
    Family.TOPOLOGY: "topology restoration",
}


@dataclass(frozen=True)
class PromptDevice:
    """A network node as the prompt introduces it."""

    name: str
    vendor: str
    os: str | None
    type: str
    role: str = ""
    site: str = ""

    def line(self) -> str:
        what = f"{self.vendor} {self.type}".strip()
        cli = f", {self.os} CLI" if self.os else ""
        extra = "".join(f", {k} {v}" for k, v in (("role", self.role), ("site", self.site)) if v)
        return f"- {self.name}: {what}{cli}{extra}"


def _devices(spec: TaskSpec, network: Network | None) -> tuple[list[PromptDevice], list[PromptDevice]]:
    """(accessible devices, other nodes) in network order; unknown names are still listed."""
    known = network.device_map() if network else {}
    names = (
        list(spec.accessible)
        if spec.accessible is not None
        else [d.name for d in (network.devices if network else []) if d.os]
    )
    accessible = []
    for name in names:
        d = known.get(name)
        accessible.append(
            PromptDevice(name, d.vendor, d.os, d.type, d.role, d.site)
            if d
            else PromptDevice(name, "", None, "device")
        )
    chosen = set(names)
    others = [
        PromptDevice(d.name, d.vendor, d.os, d.type, d.role, d.site)
        for d in (network.devices if network else [])
        if d.name not in chosen
    ]
    return accessible, others


def build_prompt(
    spec: TaskSpec, network: Network | None, labels: Sequence[str], plugin: TaskFamily | None = None
) -> str:
    """Render the prompt for one task from its visible part, its network and the label vocabulary
    (``plugin``: the task's family when it is not a built-in, which states its own answer format)."""
    accessible, others = _devices(spec, network)
    family = Family(spec.family)
    kind = _KIND.get(family) or (plugin.title if plugin is not None else family.value)
    parts = [
        _INTRO.format(task_id=spec.id),
        f"## Question {spec.id} ({kind})\n\n{spec.statement.strip()}",
        "## Devices you may query\n\n" + "\n".join(d.line() for d in accessible),
    ]
    if others:
        parts.append(
            "Other nodes in the network (no CLI access; usable as names in the answer):\n\n"
            + "\n".join(d.line() for d in others)
        )
    parts.append(_TOOLS)
    if family is Family.RCA:
        vocabulary = "\n".join(f"- {label}" for label in sorted(set(labels), key=str.casefold))
        parts.append(_RCA_FORMAT.format(labels=vocabulary or "- (the task set defines no labels)"))
    elif family is Family.TOPOLOGY:
        parts.append(_TOPOLOGY_FORMAT)
    elif family is Family.PATH:
        parts.append(_PATH_FORMAT)
    elif plugin is not None:
        parts.append(
            f"## Answer format\n\n{plugin.answer_format.strip()}\n\nPut the answer lines, and nothing "
            "else, between <answer> and </answer>."
        )
    else:
        raise CtbError(f"{spec.id}: no task family {family.value!r} is installed")
    return "\n\n".join(parts) + "\n"


def prompt_for(task_set: TaskSet, task: TaskRef | str, spec: TaskSpec | None = None) -> str:
    """The prompt for a task of a task set (reads task.yaml, the network and the taxonomy only)."""
    spec = spec or task_set.load_task(task)
    try:
        network: Network | None = task_set.network(spec.network)
    except CtbError:  # a missing network still yields a usable prompt; validation reports it
        network = None
    labels = [lab.label for lab in task_set.taxonomy.labels] if spec.family == Family.RCA else []
    plugin = None if spec.family in _KIND else families().get(spec.family.value)
    return build_prompt(spec, network, labels, plugin)
