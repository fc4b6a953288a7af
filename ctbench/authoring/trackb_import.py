"""Import a TTAC Track B phase as a ctbench task set (``ctb-author import-trackb``).

A Track B phase is a ``test.json`` of questions, the device outputs of every question
(``devices_outputs/{N|others}/{device}/{safe(command)}.txt``), the commands each question refuses
(``question_limits_config.json``) and, for Phase 1, a public ground truth. Each question becomes one
task: its prompt as Track B agents saw it, the recordings the reference server would serve for it
(its own folder, else ``others/``, byte for byte), a network of the phase's devices with the links
their LLDP outputs show, the refused commands (kept in ``trackb.yaml``, not recorded, so the replay
denies them and the Track B facade answers 403), and the gold of the ground truth. Faults become
``rca`` tasks, paths (Phase 1 node-only, Phase 2, L2 with both ports) ``path`` tasks, and topology
restoration ``topology`` tasks on a copy of the network without the cables they ask for.

A file name is turned back into the command it stores through the vendor's dialect: the name is
split at its ``_`` in every way the grammar accepts, and a command is taken only when
``safe(canonical) == file name``. A name no command of the grammar gives is kept as a literal
recorded command (the dialect accepts recorded commands) and listed, never dropped.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ctbench.dialects import Dialect, get_dialect
from ctbench.errors import CtbError
from ctbench.model import (
    Device,
    Family,
    GoldAnswer,
    GoldPath,
    HiddenSpec,
    Link,
    Network,
    PathHop,
    RcaTriple,
    Recording,
    Status,
    TaskSpec,
)
from ctbench.replay.trackb.layout import (
    LIMITS_FILE,
    OTHERS,
    SIDECAR,
    TEST_FILE,
    VENDOR_NAMES,
    VENDOR_OS,
    Kind,
    NoPermission,
    TestItem,
    TrackbTask,
    Unresolved,
    read_ground_truth,
    read_limits,
    read_test,
    read_vendors,
    safe_name,
    task_id,
)
from ctbench.yamlio import atomic_write_bytes, atomic_write_text, dump_document, to_commented

MAX_CANDIDATES = 512
"""Splits of one file name tried against the grammar; names with many ``_`` try the likely ones first."""


# --------------------------------------------------------------------------- commands from file names


def command_candidates(stem: str) -> Iterable[str]:
    """Commands whose Track B file stem is ``stem``, likeliest first.

    Each ``_`` was a blank, a ``/`` or a ``_``. Between two digits a ``/`` is likeliest (interface
    numbers ``1/0/1``, prefix lengths), elsewhere a blank; the splits with fewest unlikely choices
    come first.
    """
    parts = stem.split("_")
    gaps = len(parts) - 1
    likely: list[str] = []
    others: list[tuple[str, ...]] = []
    for i in range(gaps):
        left, right = parts[i], parts[i + 1]
        if left[-1:].isdigit() and right[:1].isdigit():
            likely.append("/")
            others.append((" ", "_"))
        else:
            likely.append(" ")
            others.append(("/", "_"))
    yielded = 0
    for changes in range(gaps + 1):
        for where in itertools.combinations(range(gaps), changes):
            for alts in itertools.product(*(others[i] for i in where)):
                seps = list(likely)
                for i, alt in zip(where, alts, strict=True):
                    seps[i] = alt
                yield parts[0] + "".join(s + p for s, p in zip(seps, parts[1:], strict=True))
                yielded += 1
                if yielded >= MAX_CANDIDATES:
                    return


@dataclass(frozen=True)
class Recovered:
    """The command a file name stores, and how sure the importer is of it."""

    command: str
    status: str  # "ok": safe(command) == name; "renamed": canonical form differs; "unresolved": literal
    reason: str = ""


def recover_command(dialect: Dialect, stem: str) -> Recovered:
    """The canonical command stored as ``stem``.txt, through the vendor grammar."""
    renamed: str | None = None
    for cand in command_candidates(stem):
        try:
            res = dialect.resolve(cand)
        except Exception:  # a dialect bug costs one candidate, not the import
            continue
        if not res.ok or res.canonical is None or res.filters:
            continue
        if safe_name(res.canonical) == stem:
            return Recovered(res.canonical, "ok")
        renamed = renamed or res.canonical
    if renamed is not None:
        return Recovered(
            renamed, "renamed", f"the grammar's canonical form {renamed!r} is stored under another name"
        )
    literal = next(iter(command_candidates(stem)))
    return Recovered(literal, "unresolved", f"no command of the {dialect.os} grammar is stored as {stem}.txt")


# --------------------------------------------------------------------------- question shapes


_FAULT = re.compile(r"fault reason", re.I)
_TOPOLOGY = re.compile(r"port[^()\n]*\)\s*->|link (?:information|connections)|topology links", re.I)
_L2 = re.compile(r"\((?:out|outbound|egress)[^)]*\)\s*->\s*[^()\s]*\((?:in|inbound|ingress)", re.I)
_PAREN_HOP = re.compile(r"^([^()\s;]+)\(([^()]+)\)$")


def question_kind(question: str, gold: str | None, nodes: Iterable[str]) -> Kind:
    """The task kind, from the gold's shape when there is one, else from the prompt's wording."""
    lines = [ln for ln in (gold or "").splitlines() if ln.strip()]
    if lines:
        if all(ln.count(";") == 2 for ln in lines):
            return "fault"
        hops = [h.strip() for h in lines[0].split("->")]
        if all(_PAREN_HOP.match(h) for h in hops):
            return "topology" if len(hops) == 2 and not _L2.search(question) else "l2-path"
        return "path"
    if _FAULT.search(question):
        return "fault"
    if _L2.search(question):
        return "l2-path"
    if _TOPOLOGY.search(question):
        return "topology"
    return "path"


_REASONS = re.compile(r"reasons? include:?(.*?)(?:\n|$)", re.I)
_ITEM = re.compile(r"\(\d+\)\s*([^;()]+?)\s*(?=;|\.\s*$|$|\(\d+\))")


def prompt_reasons(question: str) -> list[tuple[str, str]]:
    """The closed list of fault reasons a fault prompt gives: (label, "routing" | "port")."""
    out: list[tuple[str, str]] = []
    for block in _REASONS.finditer(question):
        before = question[: block.start()].lower()
        kind = "port" if before.rfind("port fault") > before.rfind("routing fault") else "routing"
        for m in _ITEM.finditer(block.group(1)):
            label = m.group(1).strip().rstrip(".")
            if label and not label.lower().startswith("if there"):
                out.append((label, kind))
    return out


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


# --------------------------------------------------------------------------- gold


def node_splitter(nodes: Iterable[str]) -> Callable[[str], tuple[str, str | None] | None]:
    """``token -> (node, egress)``: a node name, or the longest node name followed by ``_``."""
    names = sorted(set(nodes), key=len, reverse=True)

    def split(token: str) -> tuple[str, str | None] | None:
        if token in names:
            return token, None
        for name in names:
            if token.startswith(name + "_") and len(token) > len(name) + 1:
                return name, token[len(name) + 1 :]
        return None

    return split


def gold_answer(kind: Kind, text: str, nodes: Iterable[str]) -> GoldAnswer:
    """The ground truth as ctbench's gold, spelled as Track B spells it (labels resolve as aliases)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if kind == "fault":
        triples = []
        for ln in lines:
            node, obj, label = (p.strip() for p in ln.split(";", 2))
            triples.append(RcaTriple(node=node, object=obj, label=label))
        return GoldAnswer(rca=triples)
    names = set(nodes)
    split = node_splitter(names)
    paths: list[GoldPath] = []
    for ln in lines:
        tokens = [t.strip() for t in ln.split("->")]
        ports = [_PAREN_HOP.match(t) for t in tokens]
        if all(ports):
            paths.append(GoldPath(hops=l2_hops([(m.group(1), m.group(2)) for m in ports if m], names)))
            continue
        hops: list[PathHop] = []
        for token in tokens:
            found = split(token)
            if found is None:
                raise ValueError(f"path hop {token!r} names no device of the phase")
            hops.append(PathHop(node=found[0], egress=found[1]))
        paths.append(GoldPath(hops=hops))
    return GoldAnswer(paths=paths)


def topology_links(text: str, nodes: Iterable[str]) -> list[Link]:
    """A topology-restoration gold, ``Node(port)->Node(port)`` per line, as the cables it names.

    Ports keep Track B's spelling (the judge and validation read them through the device's dialect);
    a cable written twice, once from each end, is one link.
    """
    names = set(nodes)
    links: dict[frozenset[tuple[str, str]], Link] = {}
    for ln in (x.strip() for x in text.splitlines()):
        if not ln:
            continue
        ends = [_PAREN_HOP.match(t.strip()) for t in ln.split("->")]
        if len(ends) != 2 or not all(ends):
            raise ValueError(f"{ln!r} is not one link Node(port)->Node(port)")
        (a, ap), (b, bp) = ((m.group(1), m.group(2).strip()) for m in ends if m)
        for node, port in ((a, ap), (b, bp)):
            if node not in names:
                raise ValueError(f"link end {node}({port}) names no device of the phase")
        links.setdefault(frozenset(((a, ap), (b, bp))), Link.model_validate([f"{a}:{ap}", f"{b}:{bp}"]))
    if not links:
        raise ValueError("no link in the ground truth")
    return list(links.values())


def l2_hops(ports: list[tuple[str, str]], names: set[str]) -> list[PathHop]:
    """An L2 path ``A(out)->B(in)->B(out)->C(in)`` as hops with both ports: a node is entered by the
    first port written for it and left by the last (the first node is only left, the last only
    entered)."""
    groups: list[tuple[str, list[str]]] = []
    for node, port in ports:
        if node not in names:
            raise ValueError(f"path hop {node}({port}) names no device of the phase")
        if groups and groups[-1][0] == node:
            groups[-1][1].append(port)
        else:
            groups.append((node, [port]))
    if len(groups) < 2:
        raise ValueError("an L2 path crosses at least two devices")
    hops = [PathHop(node=groups[0][0], egress=groups[0][1][-1])]
    for node, seen in groups[1:-1]:
        if len(seen) < 2:
            raise ValueError(
                f"{node} is crossed with one port ({seen[0]}); an L2 path names its in and out ports"
            )
        hops.append(PathHop(node=node, ingress=seen[0], egress=seen[-1]))
    hops.append(PathHop(node=groups[-1][0], ingress=groups[-1][1][0]))
    return hops


# --------------------------------------------------------------------------- LLDP links


def lldp_neighbours(os_name: str, text: str) -> list[tuple[str, str, str]]:
    """(local interface, neighbour device, neighbour interface) rows of an LLDP summary output.

    Huawei ``display lldp neighbor brief`` (local, neighbour, neighbour port, expiry), H3C
    ``display lldp neighbor-list`` (system name, local, chassis id, port id) and Cisco
    ``show lldp neighbors`` (device id, local, hold time, capability, port id).
    """
    rows: list[tuple[str, str, str]] = []
    header_seen = False
    for raw in text.replace("\r", "").splitlines():
        line = raw.strip()
        low = line.lower()
        if not header_seen:
            header_seen = ("local" in low and ("neighbor" in low or "port" in low)) or low.startswith(
                "device id"
            )
            continue
        words = line.split()
        if len(words) < 3 or low.startswith(("total", "capability codes", "---")):
            continue
        if os_name == "hp_comware":
            rows.append((words[1], words[0], words[-1]))
        elif os_name.startswith("cisco"):
            rows.append((words[1], words[0], words[-1]))
        else:
            rows.append((words[0], words[1], words[2]))
    return rows


LLDP_COMMANDS = {
    "huawei_vrp": "display lldp neighbor brief",
    "hp_comware": "display lldp neighbor-list",
    "cisco_ios": "show lldp neighbors",
}


# --------------------------------------------------------------------------- the import


@dataclass
class ImportReport:
    """What an import did: tasks written, questions skipped and why, names kept as literals."""

    phase: int
    tasks: list[str] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)
    unresolved: list[tuple[str, Unresolved]] = field(default_factory=list)
    renamed: list[tuple[str, Unresolved]] = field(default_factory=list)
    ignored_devices: list[str] = field(default_factory=list)
    recordings: int = 0
    links: int = 0
    scored: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "phase": self.phase,
            "tasks": self.tasks,
            "skipped": [{"question": q, "reason": r} for q, r in self.skipped],
            "unresolved": [{"task": t, **u.model_dump()} for t, u in self.unresolved],
            "renamed": [{"task": t, **u.model_dump()} for t, u in self.renamed],
            "ignored_devices": self.ignored_devices,
            "recordings": self.recordings,
            "links": self.links,
            "scored": self.scored,
        }


@dataclass
class _Ctx:
    phase: int
    outputs: Path
    vendors: dict[str, str]
    limits: dict[int, list[NoPermission]]
    gt: dict[str, str] | None
    out: Path
    report: ImportReport
    dialects: dict[str, Dialect] = field(default_factory=dict)
    names: dict[tuple[str, str, str], Recovered] = field(default_factory=dict)

    def dialect(self, device: str) -> Dialect:
        os_name = VENDOR_OS[self.vendors[device]]
        if os_name not in self.dialects:
            self.dialects[os_name] = get_dialect(os_name)
        return self.dialects[os_name]

    def recover(self, device: str, stem: str) -> Recovered:
        key = (VENDOR_OS[self.vendors[device]], stem, "")
        if key not in self.names:
            self.names[key] = recover_command(self.dialect(device), stem)
        return self.names[key]


def _new_set(out: Path, phase: int, reasons: list[tuple[str, str]]) -> None:
    if out.exists() and any(out.iterdir()):
        raise CtbError(f"{out}: not empty; --tasks names a new task set folder for the import")
    out.mkdir(parents=True, exist_ok=True)
    config = {
        "name": f"ttac-trackb-phase-{phase}",
        "golden_actions_required": False,
        "review": {"unreviewed_seed": True},
    }
    atomic_write_text(
        out / "ctbench.yaml",
        "# Imported from TTAC Track B (ctb-author import-trackb): Track B publishes no golden actions,\n"
        "# and its tasks were never blind-reviewed here (run them with --allow-unreviewed).\n"
        + dump_document(to_commented(config)),
    )
    atomic_write_text(out / "taxonomy.yaml", taxonomy_yaml(reasons))


SYNONYMS: dict[str, tuple[str, ...]] = {
    # Track B's wording (squashed, lower case) -> other spellings of the same fault, ctbench's labels first
    "missingstaticroute": ("static route missing", "no static route"),
    "staticrouteerror": (
        "static route next hop incorrect",
        "wrong static route",
        "static route misconfigured",
    ),
    "blackholeroute": ("black hole route", "null0 route", "blackhole"),
    "routingloop": ("route loop", "loop"),
    "bgpconfigurationerror": ("BGP peer configuration error", "bgp misconfiguration"),
    "ospfconfigurationerror": ("ospf misconfiguration", "ospf config error"),
    "is-isconfigurationerror": ("isis configuration error", "isis misconfiguration"),
    "arpconfigurationerror": ("static arp error", "arp misconfiguration"),
    "shutdown": ("interface shutdown", "port shutdown", "admin down", "administratively down"),
    "interfaceiperror": ("interface IP address misconfigured", "wrong interface ip address"),
    "mtuvalueconfigurationerror": ("mtu mismatch", "mtu misconfiguration"),
    "trafficcongestiononportbandwidth": ("port congestion", "bandwidth congestion"),
    "macaddressconfigurationerror": ("mac address misconfiguration", "mac address conflict"),
    "vpnconfigurationmissing": ("missing vpn configuration", "vpn instance missing"),
}
"""Synonyms a label of the prompts also answers to (an agent used to ctbench's own labels resolves)."""


def taxonomy_yaml(reasons: list[tuple[str, str]]) -> str:
    """Track B's fault reasons as a taxonomy: prompt wording as labels, squashed forms and synonyms as
    aliases. A synonym is left out where it would name another label of the set, or two of them."""
    kinds: dict[str, tuple[str, str]] = {}  # squashed lower-case key -> (label, kind), first spelling wins
    for label, kind in reasons:
        kinds.setdefault(squash(label).lower(), (label, kind))
    claims: dict[str, list[str]] = {}
    for key in kinds:
        for alias in SYNONYMS.get(key, ()):
            claims.setdefault(squash(alias).lower(), []).append(key)
    labels = []
    for key, (label, kind) in kinds.items():
        aliases = [squash(label)] if squash(label) != label else []
        aliases += [
            a
            for a in SYNONYMS.get(key, ())
            if squash(a).lower() not in kinds and claims[squash(a).lower()] == [key]
        ]
        labels.append(
            {
                "label": label,
                "l1": label,
                "l2": f"{kind} fault",
                "l3": "Track B",
                "domain": f"{kind} fault",
                "category": kind,
                "aliases": aliases,
            }
        )
    doc = {
        "version": 1,
        "whitespace_blind": True,
        "categories": [{"id": "routing", "name": "Routing fault"}, {"id": "port", "name": "Port fault"}],
        "labels": labels,
    }
    return (
        "# TTAC Track B's fault reasons, as its prompts word them (written by ctb-author import-trackb).\n"
        "# Aliases hold the squashed spellings of its ground truth; matching ignores blanks.\n"
        + dump_document(to_commented(doc))
    )


def _question_folder(outputs: Path, question: int) -> Path:
    own = outputs / str(question)
    return own if own.is_dir() else outputs / OTHERS


def _network(ctx: _Ctx) -> Network:
    """Every device of the vendor map, with the links the LLDP outputs of the phase show."""
    names = set(ctx.vendors)
    ends: dict[frozenset[tuple[str, str]], Link] = {}
    folders = sorted(p for p in ctx.outputs.iterdir() if p.is_dir()) if ctx.outputs.is_dir() else []
    for folder in folders:
        for dev_dir in sorted(p for p in folder.iterdir() if p.is_dir() and p.name in names):
            os_name = VENDOR_OS[ctx.vendors[dev_dir.name]]
            lldp = dev_dir / f"{safe_name(LLDP_COMMANDS[os_name])}.txt"
            if not lldp.is_file():
                continue
            text = lldp.read_bytes().decode("utf-8", errors="replace")
            for local, peer, remote in lldp_neighbours(os_name, text):
                if peer not in names:
                    continue
                a = (dev_dir.name, get_dialect(os_name).normalize_interface(local))
                b = (peer, get_dialect(VENDOR_OS[ctx.vendors[peer]]).normalize_interface(remote))
                key = frozenset((a, b))
                if key not in ends and a != b:
                    ends[key] = Link.model_validate([f"{a[0]}:{a[1]}", f"{b[0]}:{b[1]}"])
    ctx.report.links = len(ends)
    devices = [
        Device(
            name=name,
            vendor=VENDOR_NAMES[vendor],
            os=VENDOR_OS[vendor],
            type="switch" if vendor == "h3c" else "router",
        )
        for name, vendor in sorted(ctx.vendors.items())
    ]
    return Network(
        name=f"trackb-p{ctx.phase}",
        description=f"TTAC Track B Phase {ctx.phase}: the devices of its vendor map, links from LLDP outputs",
        devices=devices,
        links=sorted(ends.values(), key=lambda link: link.as_pair()),
    )


def _without_cabling(ctx: _Ctx, network: Network, gold: GoldAnswer, q: int) -> Network:
    """The network a topology question is asked on: the phase's, less the cables the question asks
    for (every link at a port of the gold, and, without a gold, every link of the phase), so that the
    network file does not hold the answer. Saved as ``trackb-pN-qNNN``."""

    def port(node: str, name: str) -> tuple[str, str]:
        vendor = ctx.vendors.get(node)
        return node, get_dialect(VENDOR_OS[vendor]).normalize_interface(name) if vendor else name

    asked = {port(e.node, e.interface) for x in gold.links or [] for e in (x.a, x.b)}
    kept = [
        x
        for x in network.links
        if gold.links and not {port(x.a.node, x.a.interface), port(x.b.node, x.b.interface)} & asked
    ]
    # the ports stay known (listed on their devices) when their cables go
    ports: dict[str, set[str]] = {}
    for x in network.links:
        for e in (x.a, x.b):
            ports.setdefault(e.node, set()).add(e.interface)
    devices = [
        d.model_copy(update={"interfaces": sorted(set(d.interfaces) | ports.get(d.name, set()))})
        for d in network.devices
    ]
    own = network.model_copy(
        update={
            "name": f"{network.name}-q{q:03d}",
            "description": f"{network.description}; less the cabling question {q} asks to restore",
            "devices": devices,
            "links": kept,
        }
    )
    from ctbench.store import TaskSet

    TaskSet(root=ctx.out).save_network(own)
    return own


def _write_task(ctx: _Ctx, item: TestItem, network: Network, progress: Callable[[str], None]) -> None:
    q = item.task.id
    tid = task_id(ctx.phase, q)
    gold_text = ctx.gt.get(item.scenario_id) if ctx.gt is not None else None
    kind = question_kind(item.task.question, gold_text, ctx.vendors)
    gold = GoldAnswer()
    if gold_text:
        try:
            if kind == "topology":
                gold = GoldAnswer(links=topology_links(gold_text, ctx.vendors))
            else:
                gold = gold_answer(kind, gold_text, ctx.vendors)
        except ValueError as exc:
            ctx.report.skipped.append((q, f"ground truth does not read as a {kind} answer: {exc}"))
            return
    family = {"fault": Family.RCA, "topology": Family.TOPOLOGY}.get(kind, Family.PATH)
    if family == Family.TOPOLOGY:
        network = _without_cabling(ctx, network, gold, q)
    folder = ctx.out / family.value / tid
    source = _question_folder(ctx.outputs, q)
    refused = [p for p in ctx.limits.get(q, []) if p.device in ctx.vendors]
    refused_files = {(p.device, safe_name(p.command)) for p in refused}
    recordings: list[Recording] = []
    side = TrackbTask(
        phase=ctx.phase,
        question=q,
        scenario_id=item.scenario_id,
        kind=kind,
        folder=source.name if source.is_dir() else OTHERS,
        paths_any=kind == "path" and all(not h.egress for p in gold.paths or [] for h in p.hops[:-1]),
        no_permission=refused,
    )
    seen: set[tuple[str, str]] = set()
    for dev_dir in sorted(p for p in source.iterdir() if p.is_dir()) if source.is_dir() else []:
        device = dev_dir.name
        if device not in ctx.vendors:
            if device not in ctx.report.ignored_devices:
                ctx.report.ignored_devices.append(device)
            continue
        for f in sorted(dev_dir.iterdir()):
            if not f.name.endswith(".txt") or not f.is_file() or f.is_symlink():
                continue
            stem = f.name[: -len(".txt")]
            if (device, stem) in refused_files:
                continue  # refused in this question: not served, so the replay denies it
            rec = ctx.recover(device, stem)
            if (device, rec.command) in seen:
                continue
            seen.add((device, rec.command))
            rel = f"recordings/{device}/{f.name}"
            atomic_write_bytes(folder / rel, f.read_bytes())
            recordings.append(Recording(device=device, command=rec.command, file=rel))
            if rec.status != "ok":
                entry = Unresolved(device=device, file=f.name, command=rec.command, reason=rec.reason)
                if rec.status == "unresolved":
                    side.unresolved.append(entry)
                    ctx.report.unresolved.append((tid, entry))
                else:
                    ctx.report.renamed.append((tid, entry))
    ctx.report.recordings += len(recordings)
    spec = TaskSpec(
        id=tid,
        family=family,
        status=Status.APPROVED,
        title=f"TTAC Track B Phase {ctx.phase} question {q}",
        statement=item.task.question,
        network=network.name,
        recordings=recordings,
        authors=["TTAC Track B"],
        tags=[
            "trackb",
            f"trackb:phase={ctx.phase}",
            f"trackb:question={q}",
            f"trackb:scenario={item.scenario_id}",
        ],
    )
    hidden = HiddenSpec(
        id=tid,
        answer=gold,
        reference_answer=gold_text or "",
        rationale="Imported from TTAC Track B's ground truth." if gold_text else "",
    )
    from ctbench.store import TaskSet

    ts = TaskSet(root=ctx.out)
    ts.save_task(spec)
    ts.save_hidden(family, hidden)
    atomic_write_text(
        folder / SIDECAR,
        "# TTAC Track B facts of this question (ctb-author import-trackb); agent-visible, no gold.\n"
        + dump_document(to_commented(side.model_dump(mode="json"))),
    )
    ctx.report.tasks.append(tid)
    progress(f"{tid}: {family.value} ({kind}), {len(recordings)} recording(s), {len(refused)} refused")


def import_trackb(
    phase_dir: Path,
    *,
    outputs: Path,
    vendors_file: Path,
    phase: int,
    tasks_out: Path,
    limits_file: Path | None = None,
    gt_file: Path | None = None,
    progress: Callable[[str], None] = lambda _line: None,
) -> ImportReport:
    """Import one Track B phase into the new task set ``tasks_out``; see the module docstring."""
    test_path = phase_dir / TEST_FILE if phase_dir.is_dir() else phase_dir
    items = read_test(test_path)
    vendors = read_vendors(vendors_file)
    if limits_file is None and (phase_dir / LIMITS_FILE).is_file():
        limits_file = phase_dir / LIMITS_FILE
    limits = read_limits(limits_file) if limits_file is not None else {}
    gt = read_ground_truth(gt_file) if gt_file is not None else None
    if not outputs.is_dir():
        raise CtbError(f"{outputs}: no such folder (the phase's devices_outputs, with N/ and others/ in it)")
    reasons = [r for item in items for r in prompt_reasons(item.task.question)]
    _new_set(tasks_out, phase, reasons)
    report = ImportReport(phase=phase, scored=gt is not None)
    ctx = _Ctx(phase, outputs, vendors, limits, gt, tasks_out, report)
    network = _network(ctx)
    from ctbench.store import TaskSet

    TaskSet(root=tasks_out).save_network(network)
    missing = [item.task.id for item in items if gt is not None and item.scenario_id not in gt]
    for item in items:
        _write_task(ctx, item, network, progress)
    for q in missing:
        progress(f"question {q}: no ground-truth row; imported unscored")
    root_side = {
        "source": "TTAC Track B",
        "phase": phase,
        "network": network.name,
        "vendors": dict(sorted(vendors.items())),
        "questions": {
            item.task.id: task_id(phase, item.task.id)
            for item in items
            if task_id(phase, item.task.id) in report.tasks
        },
        "skipped": {q: r for q, r in report.skipped},
    }
    atomic_write_text(
        tasks_out / SIDECAR,
        "# The TTAC Track B phase this set was imported from (ctb-author import-trackb).\n"
        + dump_document(to_commented(root_side)),
    )
    return report
