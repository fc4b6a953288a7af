"""The one judge of an answer: every tool that shows a score asks a :class:`TaskJudge`.

An answer used to be judged in four places (the runner, ``ctb-eval score``, the review reveal and the
oracle check), each building its own parser and scorer, and they disagreed: the reveal scored with
default settings and no topology, so a near-miss label had no hierarchical score there while
``ctb-eval score`` gave it 0.5. Now :class:`Judges` reads what judging needs from a task set once (the
near-miss settings, the taxonomy, the vendor dialects, each network's topology) and builds one
:class:`TaskJudge` per task (its gold, its golden actions and its normalisers), and the four tools call
the same methods:

- :meth:`TaskJudge.parse` reads an answer (labels through the taxonomy, interface names through the
  node's dialect, node names from the network);
- :meth:`TaskJudge.executed` turns the calls of a trajectory into evidence actions (``recorded`` and
  ``denied`` outcomes only; device and command in the dialect's canonical spelling);
- :meth:`TaskJudge.score` turns a prediction, the executed actions and the usage into the task's
  :class:`~ctbench.scoring.metrics.TaskScores` with the task set's settings and topology.

The runner, which parses an answer before any gold is needed (and may run where the gold is sealed),
uses :meth:`Judges.reader`: the same :class:`AnswerReader` a judge parses with, built from the agent-
visible side of the task only.

The gold goes through the same normalisers as the prediction (taxonomy label, interface names), so an
author who wrote ``GE0/0/24`` in hidden.yaml is matched by an agent who wrote the full name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctbench.answer import Path as AnswerPath
from ctbench.answer import RcaEntry
from ctbench.derived import derive
from ctbench.dialects import Dialect, Resolution
from ctbench.errors import CtbError
from ctbench.model import Device, Family, HiddenSpec, Network, TaskSpec
from ctbench.scoring.families import TaskFamily, families
from ctbench.scoring.metrics import (
    Action,
    FamilyName,
    LabelWeights,
    NodeWeights,
    ScoringConfig,
    TaskRecord,
    TaskScores,
    TaskUsage,
    Topology,
    score_task,
)
from ctbench.scoring.parse import PARSE_VERSION, AnswerLink, ParsedAnswer
from ctbench.store import TaskRef, TaskSet
from ctbench.vendor import Vendors

EXECUTED_OUTCOMES = frozenset({"recorded", "denied"})
"""Trajectory outcomes that executed a command on the device (the others - ``invalid``, ``unknown
device``, ``help`` - executed nothing and are no evidence)."""
ABLATION_LEVEL = "O2→O1"
"""The observability stratum of a task that declares itself the ablation variant of an O2 task."""

NO_USAGE = TaskUsage()
"""Usage not recorded (the reveal and the oracle check judge answers no model spent tokens on)."""
Call = tuple[str, str | None, str, str]
"""One trajectory call as a judge reads it: (device, canonical command or None, command, outcome)."""


def _collapse(command: str) -> str:
    """A command the dialects cannot read, as written with its spaces collapsed (so it matches itself)."""
    return " ".join(command.split())


def _resolution(dialect: Dialect, command: str, recorded: frozenset[str]) -> Resolution | None:
    """The dialect's reading of ``command``; None when it rejects the line or fails on it (a dialect
    bug must not stop scoring a whole run)."""
    try:
        res = dialect.resolve(command, recorded=recorded)
    except Exception:
        return None
    return res if res.ok else None


@dataclass(frozen=True)
class AnswerReader:
    """Reads one task's answers: the network's node names, the taxonomy's labels, the dialects'
    interface names. Built from the agent-visible side of a task only."""

    family: FamilyName
    node_names: tuple[str, ...]
    devices: Mapping[str, Device]
    vendors: Vendors
    resolve_label: Callable[[str], str | None]
    kind: TaskFamily
    """The task family (:mod:`.families`) whose parser reads the answer."""
    basis: str = ""
    """Digest of what every task of the set parses with (:func:`parse_basis`)."""

    def normalize(self, node: str, name: str) -> str:
        """The full interface name ``name`` stands for on ``node`` (the node's dialect)."""
        return self.vendors.iface(self.devices.get(node), name)

    def fingerprint(self, text: str | None) -> str:
        """What a parse of ``text`` depends on, hashed: the parser's version, the task set's taxonomy
        and dialect extensions (``basis``), the family, the network's nodes and their CLI families,
        and the text itself. A stored parse with the same fingerprint is the parse this reader would
        make, so the scorer takes it instead of parsing again (docs/run-folder.md, ``answer``)."""
        h = hashlib.sha256()
        h.update(f"{PARSE_VERSION}|{self.basis}|{self.family}\n".encode())
        for name in self.node_names:
            dev = self.devices.get(name)
            h.update(f"{name}|{dev.os if dev else ''}\n".encode())
        h.update(b"\0" if text is None else b"\1" + text.encode("utf-8", "surrogatepass"))
        return "sha256:" + h.hexdigest()

    def record(self, parsed: ParsedAnswer, text: str | None) -> dict[str, Any]:
        """The parse as a result line stores it: :meth:`ParsedAnswer.to_json` and its fingerprint."""
        return {**parsed.to_json(), "parser": self.fingerprint(text)}

    def stored(self, data: Mapping[str, Any] | None, text: str | None) -> ParsedAnswer | None:
        """A stored parse of ``text`` when it is this reader's own (same fingerprint, same family), else
        ``None`` (the caller parses)."""
        if not data or data.get("parser") != self.fingerprint(text):
            return None
        try:
            parsed = ParsedAnswer.from_json(data)
        except (KeyError, TypeError, ValueError):
            return None
        return parsed if parsed.family == self.family else None

    def parse(self, text: str | None) -> ParsedAnswer:
        """The answer as the benchmark reads it (docs/statistics.md, "Answers")."""
        parsed: ParsedAnswer = self.kind.parse(
            text,
            node_names=self.node_names,
            resolve_label=self.resolve_label,
            normalize=self.normalize,
        )
        return parsed


@dataclass(frozen=True)
class TaskJudge:
    """Everything judging one task needs, built once by :class:`Judges` and shared by every answer."""

    task_id: str
    family: FamilyName
    reader: AnswerReader
    gold: (
        frozenset[RcaEntry]
        | tuple[AnswerPath, ...]
        | frozenset[AnswerLink]
        | frozenset[Any]
        | tuple[Any, ...]
    )
    """As the family's :meth:`~ctbench.scoring.families.TaskFamily.gold` gives it."""
    golden_actions: frozenset[Action]
    recorded: Mapping[str, frozenset[str]]
    recorded_forms: Mapping[str, frozenset[str]]
    topology: Topology | None
    meta: Mapping[str, Any]
    config: ScoringConfig
    _folded: Mapping[str, str] = field(default_factory=dict)

    @property
    def node_names(self) -> tuple[str, ...]:
        return self.reader.node_names

    @property
    def devices(self) -> Mapping[str, Device]:
        return self.reader.devices

    def device_name(self, typed: str) -> str:
        """The network's spelling of a device name (case-insensitive), else the name as given."""
        if typed in self.devices:
            return typed
        return self._folded.get(typed.casefold(), typed)

    # ------------------------------------------------------------------ answers

    def parse(self, text: str | None) -> ParsedAnswer:
        """The answer read exactly as every other tool reads it."""
        return self.reader.parse(text)

    def gold_parse(self) -> ParsedAnswer:
        """The gold as a parsed answer (what a perfect agent's answer parses to)."""
        if self.family == "rca":
            return ParsedAnswer(status="answered", rca=frozenset(self.gold))  # type: ignore[arg-type]
        if self.family == "topology":
            return ParsedAnswer(status="answered", links=frozenset(self.gold))  # type: ignore[arg-type]
        if self.family == "path":
            return ParsedAnswer(status="answered", paths=tuple(self.gold))  # type: ignore[arg-type]
        return ParsedAnswer(status="answered", entries=self.gold, kind=self.family)

    def answer_lines(self, parsed: ParsedAnswer | None) -> list[str]:
        """A parsed answer's entries as answer lines, in the family's order (none for no answer)."""
        return [] if parsed is None else list(self.reader.kind.lines(parsed))

    def gold_lines(self) -> list[str]:
        """The gold as answer lines (after the same normalisers as an answer)."""
        return self.answer_lines(self.gold_parse())

    # ------------------------------------------------------------------ evidence

    def resolve_command(self, device: str, command: str) -> str | None:
        """The canonical command the replay engine logs for ``command`` on ``device``; None if rejected.

        Full keywords and normal parameters; output filters stay part of the command only when the
        task recorded the command with that filter (``recorded_forms`` holds each device's recorded
        commands in canonical spelling), otherwise the filter ran on the unfiltered recording and the
        bare command is what was executed - as in replay, so ``dis int br | inc GE`` covers ``display
        interface brief``. A device without a CLI dialect keeps the text, spaces collapsed.
        """
        dialect = _dialect(self.reader.vendors, self.devices, device)
        if dialect is None:
            return _collapse(command)
        res = _resolution(dialect, command, self.recorded.get(device, frozenset()))
        if res is None or res.canonical is None:
            return None
        if res.filters and res.full in self.recorded_forms.get(device, frozenset()):
            return str(res.full)
        return str(res.canonical)

    def action_key(self, device: str, command: str) -> Action:
        """(device, canonical command) of an executed or golden action; the text as written, spaces
        collapsed, when the dialect cannot read it (so an odd golden command still matches itself)."""
        name = self.device_name(device)
        canonical = self.resolve_command(name, command)
        return name, canonical if canonical is not None else _collapse(command)

    def executed(self, calls: Iterable[Call]) -> tuple[Action, ...]:
        """The distinct evidence actions of a trajectory's calls, sorted: the (device, canonical
        command) pairs of calls the device accepted (``recorded`` or ``denied``)."""
        out: set[Action] = set()
        for device, canonical, command, outcome in calls:
            if outcome in EXECUTED_OUTCOMES:
                out.add(self.action_key(device, canonical or command))
        return tuple(sorted(out))

    # ------------------------------------------------------------------ scores

    def record(
        self,
        prediction: ParsedAnswer | None,
        executed: Iterable[Action] = (),
        usage: TaskUsage = NO_USAGE,
    ) -> TaskRecord:
        """The plain-value record the metrics score (``prediction=None``: no answer at all)."""
        return TaskRecord(
            task_id=self.task_id,
            family=self.family,
            gold=self.gold,
            prediction=prediction,
            golden_actions=self.golden_actions,
            executed_actions=tuple(executed),
            usage=usage,
            meta=self.meta,
            topology=self.topology,
            kind=self.reader.kind,
        )

    def score(
        self,
        prediction: ParsedAnswer | None,
        executed: Iterable[Action] = (),
        usage: TaskUsage = NO_USAGE,
    ) -> TaskScores:
        """The task's scores for one answer, with the task set's settings and the task's topology."""
        return score_task(self.record(prediction, executed, usage), self.config)

    def judge(self, text: str | None, calls: Iterable[Call] = (), usage: TaskUsage = NO_USAGE) -> TaskScores:
        """Parse ``text`` and score it with the evidence of ``calls``: the whole judgement in one call."""
        return self.score(self.parse(text), self.executed(calls), usage)


def parse_basis(task_set: TaskSet) -> str:
    """Digest of the task-set-wide inputs of every parse: ctbench's version (its dialects and parser),
    the taxonomy (labels and aliases) and the set's dialect extensions."""
    import ctbench

    h = hashlib.sha256(f"{ctbench.__version__}\n".encode())
    h.update(task_set.taxonomy.model_dump_json().encode())
    for path in task_set.dialect_extensions():
        h.update(f"\n{path.name}\n".encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _dialect(vendors: Vendors, devices: Mapping[str, Device], device: str) -> Dialect | None:
    dev = devices.get(device)
    dialect: Dialect | None = vendors.dialect(dev.os if dev else None)
    return dialect


def scoring_config(task_set: TaskSet) -> ScoringConfig:
    """The near-miss settings of a task set (``config.yaml`` ``similarity``, the taxonomy's levels)."""
    cfg = task_set.config.similarity
    return ScoringConfig(
        levels=task_set.taxonomy.levels(),
        label_weights=LabelWeights(exact=cfg.label.exact, l1=cfg.label.l1, l2=cfg.label.l2, l3=cfg.label.l3),
        node_weights=NodeWeights(
            cluster=cfg.node.cluster,
            site_role=cfg.node.site_role,
            neighbour=cfg.node.neighbour,
            k=cfg.node.hops,
        ),
    )


class Judges:
    """The judges of one task set. Settings, taxonomy, dialects and topologies are read once and each
    task's judge is cached, so judging many answers (a run, a report of several runs) loads each task,
    network and dialect once."""

    def __init__(self, task_set: TaskSet) -> None:
        self.task_set = task_set
        self.vendors = task_set.vendors
        self.config = scoring_config(task_set)
        self._judges: dict[str, TaskJudge] = {}
        self._topologies: dict[str, Topology] = {}
        self._specs: dict[str, tuple[TaskRef, TaskSpec]] = {}
        self.families = families()
        self.basis = parse_basis(task_set)

    def _network(self, spec: TaskSpec) -> Network | None:
        try:
            return self.task_set.network(spec.network)
        except CtbError:
            return None

    def reader(self, spec: TaskSpec, network: Network | None = None) -> AnswerReader:
        """The answer reader of a task from its agent-visible side (no gold needed)."""
        network = network or self._network(spec)
        devices = network.device_map() if network else {}
        kind = self.families.get(spec.family.value)
        if kind is None:
            raise CtbError(f"{spec.id}: no task family {spec.family.value!r} is installed")
        return AnswerReader(
            family=spec.family.value,
            node_names=tuple(devices) or tuple(spec.accessible or ()),
            devices=devices,
            vendors=self.vendors,
            resolve_label=self.task_set.taxonomy.resolve,
            kind=kind,
            basis=self.basis,
        )

    def topology(self, network: Network) -> Topology:
        """The network as the node-similarity scores see it (site, role, cluster, links); cached."""
        if network.name not in self._topologies:
            nodes = {d.name: (d.site or None, d.role or None, d.cluster or None) for d in network.devices}
            links = sorted((a, b) for a, bs in network.neighbours().items() for b in bs)
            self._topologies[network.name] = Topology.from_links(nodes, links)
        return self._topologies[network.name]

    def loaded(self, task_id: str) -> tuple[TaskRef, TaskSpec]:
        """The task's ref and agent-visible spec as :meth:`judge` read them, for the replay engine
        (``ReplayEngine.open_session(loaded=...)``), so the drill-downs do not parse task.yaml again."""
        if task_id not in self._specs:
            self.judge(task_id)
        return self._specs[task_id]

    def judge(self, task_id: str) -> TaskJudge:
        """The task's judge; :class:`~ctbench.store.TaskNotFound` when the task set has no such task."""
        if task_id in self._judges:
            return self._judges[task_id]
        ts = self.task_set
        ref = ts.ref(task_id)
        spec = ts.load_task(ref)
        self._specs[task_id] = (ref, spec)
        return self._build(spec, ts.load_hidden(ref))

    def judge_of(self, spec: TaskSpec, hidden: HiddenSpec) -> TaskJudge:
        """The judge of a task given as loaded specs (the review desk holds them already, possibly
        unsealed from ``hidden.yaml.age``); cached by task id like :meth:`judge`."""
        if spec.id in self._judges:
            return self._judges[spec.id]
        return self._build(spec, hidden)

    def _build(self, spec: TaskSpec, hidden: HiddenSpec) -> TaskJudge:
        ts = self.task_set
        network = self._network(spec)
        reader = self.reader(spec, network)
        devices = reader.devices
        recorded: dict[str, set[str]] = {}
        for rec in spec.recordings:
            recorded.setdefault(rec.device, set()).add(rec.command)
        frozen = {k: frozenset(v) for k, v in recorded.items()}
        tax = ts.taxonomy
        rca = spec.family == Family.RCA
        gold = reader.kind.gold(hidden.answer, normalize=reader.normalize, resolve_label=tax.resolve)
        d = derive(spec, hidden, network, tax, ts.config)
        ablation_of = hidden.metadata.ablation_of if rca else None
        meta: dict[str, Any] = {
            "categories": list(d.categories) if rca and d.categories else None,
            # an O2->O1 ablation variant is its own stratum, as in the paper's Table 20 (not one more O1 task)
            "observability": ABLATION_LEVEL if ablation_of else d.observability if rca else None,
            "ablation_of": ablation_of,
            "heterogeneity": d.heterogeneity or None,
            "root_cause_count": d.root_cause_count if rca else None,
            "chain_length": d.chain_length if rca else None,
            "protocol_complexity": d.protocol_complexity,
            "golden_tier": d.golden_tier or None,
            "path_count": d.path_count if spec.family == Family.PATH else None,
            "golden_length": d.golden_length,
            "h_l": d.h_l,
        }
        judge = TaskJudge(
            task_id=spec.id,
            family=reader.family,
            reader=reader,
            gold=gold,
            golden_actions=frozenset(),
            recorded=frozen,
            recorded_forms=_recorded_forms(self.vendors, devices, frozen),
            topology=self.topology(network) if network else None,
            meta=meta,
            config=self.config,
            _folded={n.casefold(): n for n in devices},
        )
        golden = frozenset(judge.action_key(a.device, a.command) for a in hidden.golden_actions)
        object.__setattr__(judge, "golden_actions", golden)
        self._judges[spec.id] = judge
        return judge


def _recorded_forms(
    vendors: Vendors, devices: Mapping[str, Device], recorded: Mapping[str, frozenset[str]]
) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for device, commands in recorded.items():
        dialect = _dialect(vendors, devices, device)
        forms = set()
        for command in commands:
            res = None if dialect is None else _resolution(dialect, command, commands)
            forms.add(res.full if res is not None and res.full else _collapse(command))
        out[device] = frozenset(forms)
    return out
