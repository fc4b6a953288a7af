"""The paper's metrics, per task and aggregated (section 4, appendices B.1-B.3, C.1, C.5).

Everything here is a pure function of plain values: gold and predicted answers as the
:mod:`ctbench.answer` tuples, golden and executed evidence actions as ``(device, canonical command)``
pairs, usage numbers, and - for the auxiliary near-miss scores - a taxonomy given as
``label -> (L1, L2, L3)`` and a small :class:`Topology`. The task model is not imported; the scorer
builds :class:`TaskRecord` values from it.

Conventions fixed here (the paper leaves them implicit):

- ``IoU(A, B) = |A & B| / |A | B|``; two empty sets have IoU 1 (identical). Gold sets are never
  empty in the benchmark, so this only matters for hand-made cases.
- A missing prediction (timeout, error) and an ``empty``/``unparsable`` one are the empty set and
  score 0 on every IoU and on accuracy; they stay in every denominator (B.1, C.3, C.5).
- A predicted entry whose node or label the task does not know is still an entry (:mod:`.parse`):
  it is in every union, matches nothing, and the near-miss scores give it no credit for what is unknown.
- Aggregation over tasks (means, pooled ratios, efficiency) lives in :mod:`ctbench.scoring.summary`.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, TypeVar, cast

from ctbench.answer import Hop, Path, RcaEntry, align_ingress, path_edges
from ctbench.model import BUILTIN_FAMILIES
from ctbench.scoring.failures import classify_rca_failure
from ctbench.scoring.parse import AnswerLink, ParsedAnswer
from ctbench.scoring.topology import link, score_links

FamilyName = str
"""A task family's name as the scoring records hold it: one of :data:`FAMILIES` or a plug-in's
(:mod:`.families`). The task model's :class:`ctbench.model.Family` is the same name, validated
(a ``str`` with the built-ins' constants); the records take any ``str``."""
FAMILIES: tuple[FamilyName, ...] = BUILTIN_FAMILIES
"""The built-in families, which have fields of their own in the records below; a plug-in family's
per-task figures are :attr:`TaskScores.parts`."""
THIRD_FIGURE: dict[str, tuple[str, str]] = {
    "rca": ("ident", "ID"),
    "path": ("rest", "Rest"),
    "topology": ("link_iou", "Link"),
}
"""Each family's third headline figure after accuracy and Loc: (TaskScores field and per-task JSON key,
short name)."""
Action = tuple[str, str]
"""A golden or executed evidence action: ``(device, canonical command)``."""
TaskStatus = Literal["answered", "unparsable", "empty", "missing"]
TASK_STATUSES: tuple[TaskStatus, ...] = ("answered", "unparsable", "empty", "missing")

_G = TypeVar("_G")
_P = TypeVar("_P")


# --------------------------------------------------------------------------- set metrics


def iou(predicted: Set[Any], gold: Set[Any]) -> float:
    """Intersection over union of two sets (section 4.1/4.2); 1.0 when both are empty."""
    union = len(predicted | gold)
    return 1.0 if union == 0 else len(predicted & gold) / union


@dataclass(frozen=True, slots=True)
class RcaTaskScores:
    """Per-task RCA scores: exact accuracy, RCA-Loc, RCA-ID (section 4.1) and triplet IoU (B.1)."""

    exact: bool
    loc: float
    ident: float
    triplet: float


def rca_locations(entries: Iterable[RcaEntry]) -> frozenset[tuple[str, str]]:
    """The RCA-Loc unit: the set of (node, object) pairs."""
    return frozenset((e.node, e.object) for e in entries)


def rca_labels(entries: Iterable[RcaEntry]) -> frozenset[str]:
    """The RCA-ID unit: the set of root-cause labels."""
    return frozenset(e.label for e in entries)


def score_rca(gold: Set[RcaEntry], predicted: Set[RcaEntry] | None) -> RcaTaskScores:
    """Score one RCA task. ``predicted=None`` (no usable answer) is the empty prediction (B.1).

    Exact accuracy compares the whole set of triples; RCA-Loc and RCA-ID score node-object pairs and
    labels separately, so they can be perfect while the pairing is wrong - the triplet IoU keeps the
    binding between location and cause.
    """
    pred = frozenset(predicted or ())
    gold = frozenset(gold)
    return RcaTaskScores(
        exact=pred == gold,
        loc=iou(rca_locations(pred), rca_locations(gold)),
        ident=iou(rca_labels(pred), rca_labels(gold)),
        triplet=iou(pred, gold),
    )


@dataclass(frozen=True, slots=True)
class PathTaskScores:
    """Per-task path scores (section 4.2, B.1, C.5).

    ``edges_intersection`` / ``edges_union`` are kept so that the pooled (micro) directed-edge IoU
    can be summed over tasks.
    """

    exact: bool
    loc: float
    rest: float
    sequence: float
    edges_intersection: int
    edges_union: int


def path_endpoints(paths: Iterable[Path]) -> frozenset[tuple[str, str]]:
    """Role-labelled endpoints ``{("src", first node), ("dst", last node)}`` of all paths (4.2).

    The role is part of the element, so a reversed path does not match its endpoints.
    """
    out: set[tuple[str, str]] = set()
    for p in paths:
        if p:
            out.add(("src", p[0].node))
            out.add(("dst", p[-1].node))
    return frozenset(out)


def path_edge_set(paths: Iterable[Path]) -> frozenset[tuple[Hop, Hop]]:
    """Directed edges of all paths, egress interfaces included (:func:`ctbench.answer.path_edges`).

    Because an edge is a pair of whole hop tokens, a wrong egress interface on an inner hop spoils
    the two edges that touch that hop.
    """
    return frozenset(e for p in paths for e in path_edges(p))


def score_paths(gold: Sequence[Path], predicted: Sequence[Path] | None) -> PathTaskScores:
    """Score one path task. ``predicted=None`` (no usable answer) is the empty prediction (B.1).

    Exact: the set of predicted paths equals the set of gold paths (order between paths is free, the
    hops of a path are ordered). Path-Loc: IoU of role-labelled endpoints. Path-Rest: IoU of directed
    edges. Path-sequence IoU: each whole ordered path is one set element. A hop's ingress port is
    part of it when the gold names ingress ports (Track B's L2 paths), and ignored otherwise.
    """
    pred_paths = frozenset(align_ingress(tuple(tuple(p) for p in (predicted or ())), tuple(gold)))
    gold_paths = frozenset(tuple(p) for p in gold)
    pred_edges, gold_edges = path_edge_set(pred_paths), path_edge_set(gold_paths)
    return PathTaskScores(
        exact=pred_paths == gold_paths,
        loc=iou(path_endpoints(pred_paths), path_endpoints(gold_paths)),
        rest=iou(pred_edges, gold_edges),
        sequence=iou(pred_paths, gold_paths),
        edges_intersection=len(pred_edges & gold_edges),
        edges_union=len(pred_edges | gold_edges),
    )


# --------------------------------------------------------------------------- evidence


@dataclass(frozen=True, slots=True)
class EvidenceCounts:
    """Per-task evidence counts: covered golden actions C, golden actions G, unique executed A (C.5).

    Integers for one attempt; for a task's mean over trials (:func:`ctbench.scoring.trials.task_means`)
    the means of the trials' counts, so pooled ratios weigh every task once.
    """

    covered: float
    golden: float
    executed: float

    @property
    def complete(self) -> bool:
        """Every golden action executed (a task with no golden action is complete, C.1)."""
        return self.covered >= self.golden


def evidence_counts(golden: Set[Action], executed: Iterable[Action] | None) -> EvidenceCounts:
    """Count evidence for one task (sections 4.1/4.2).

    A golden action is covered only by the same device *and* the same canonical command; the caller
    canonicalises both sides (the replay dialects do). Executed actions are de-duplicated.
    """
    done = frozenset(executed or ())
    gold = frozenset(golden)
    return EvidenceCounts(covered=len(gold & done), golden=len(gold), executed=len(done))


# --------------------------------------------------------------------------- near-miss scores (B.2, B.3)


@dataclass(frozen=True)
class LabelWeights:
    """Hierarchical label similarity (B.2, Table 14): exact label, then same L1 (finest grouping,
    the subtype), same L2 (technical domain), same L3 (broad fault family), else ``other``."""

    exact: float = 1.0
    l1: float = 0.75
    l2: float = 0.5
    l3: float = 0.25
    other: float = 0.0


@dataclass(frozen=True)
class NodeWeights:
    """Topology-aware node similarity (B.3, Table 15): same node 1; same cluster; same site and same
    role; within ``k`` hops in the link graph; else 0."""

    cluster: float = 0.75
    site_role: float = 0.5
    neighbour: float = 0.25
    k: int = 1


class NodeInfo(NamedTuple):
    """What the node similarity needs to know about a device (``None`` = not recorded)."""

    site: str | None = None
    role: str | None = None
    cluster: str | None = None


@dataclass(frozen=True)
class Topology:
    """A task network reduced to what B.3 needs: node attributes and an undirected adjacency.

    Build it with :meth:`from_links`. The adjacency is made symmetric (links are physical, B.3 speaks
    of a topology neighbourhood, not of a direction).
    """

    nodes: Mapping[str, NodeInfo]
    adjacency: Mapping[str, frozenset[str]]

    def __post_init__(self) -> None:
        adj: dict[str, set[str]] = {}
        for a, neighbours in self.adjacency.items():
            for b in neighbours:
                if a != b:
                    adj.setdefault(a, set()).add(b)
                    adj.setdefault(b, set()).add(a)
        object.__setattr__(self, "nodes", MappingProxyType({n: NodeInfo(*i) for n, i in self.nodes.items()}))
        object.__setattr__(self, "adjacency", MappingProxyType({n: frozenset(s) for n, s in adj.items()}))

    @classmethod
    def from_links(
        cls,
        nodes: Mapping[str, NodeInfo | tuple[str | None, str | None, str | None]],
        links: Iterable[tuple[str, str]],
    ) -> Topology:
        """``nodes``: name -> (site, role, cluster); ``links``: pairs of linked node names."""
        adj: dict[str, set[str]] = {}
        for a, b in links:
            adj.setdefault(a, set()).add(b)
        return cls({n: NodeInfo(*i) for n, i in nodes.items()}, {a: frozenset(s) for a, s in adj.items()})

    def distance(self, a: str, b: str, limit: int) -> int | None:
        """Hop count from ``a`` to ``b`` if at most ``limit``, else ``None`` (breadth-first)."""
        if a == b:
            return 0
        seen = {a}
        frontier: deque[tuple[str, int]] = deque([(a, 0)])
        while frontier:
            node, d = frontier.popleft()
            if d >= limit:
                continue
            for nxt in self.adjacency.get(node, ()):
                if nxt == b:
                    return d + 1
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append((nxt, d + 1))
        return None


def label_sim(
    gold: str,
    predicted: str,
    levels: Mapping[str, tuple[str, str, str]] | None,
    weights: LabelWeights = LabelWeights(),
) -> float:
    """Hierarchical label similarity (B.2). A label absent from ``levels`` earns credit only when
    exactly equal; an empty or ``None`` group never matches."""
    if gold == predicted:
        return weights.exact
    if levels is None or gold not in levels or predicted not in levels:
        return weights.other
    g, p = levels[gold], levels[predicted]
    for i, w in enumerate((weights.l1, weights.l2, weights.l3)):
        if g[i] and g[i] == p[i]:
            return w
    return weights.other


def node_sim(a: str, b: str, topology: Topology | None, weights: NodeWeights = NodeWeights()) -> float:
    """Topology-aware node similarity (B.3): first rule that holds wins.

    Without a topology only the same node earns credit. Attributes must be recorded on both nodes to
    match (two nodes with no cluster are not "in the same cluster").
    """
    if a == b:
        return 1.0
    if topology is None:
        return 0.0
    ia, ib = topology.nodes.get(a), topology.nodes.get(b)
    if ia is not None and ib is not None:
        if ia.cluster and ia.cluster == ib.cluster:
            return weights.cluster
        if ia.site and ia.role and ia.site == ib.site and ia.role == ib.role:
            return weights.site_role
    if weights.k >= 1 and topology.distance(a, b, weights.k) is not None:
        return weights.neighbour
    return 0.0


def best_matching(gold: Sequence[_G], predicted: Sequence[_P], sim: Callable[[_G, _P], float]) -> float:
    """Maximum total similarity of a one-to-one matching of predicted to gold entries (B.2).

    Solved with ``scipy.optimize.linear_sum_assignment(maximize=True)`` on the |G| x |P| similarity
    matrix; unmatched entries (when the sizes differ) contribute nothing.
    """
    if not gold or not predicted:
        return 0.0
    if len(gold) == 1 or len(predicted) == 1:  # one row or column: the optimum is its best cell (common case)
        return max(sim(g, p) for g in gold for p in predicted)
    from scipy.optimize import linear_sum_assignment  # lazy: keeps `import ctbench.scoring` light

    matrix = [[sim(g, p) for p in predicted] for g in gold]
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    return math.fsum(matrix[r][c] for r, c in zip(rows.tolist(), cols.tolist(), strict=True))


@dataclass(frozen=True, slots=True)
class EntryMatchScores:
    """Recall-oriented entry-match sums over the gold entries of one task (B.2, B.3, Table 16).

    Each field is the maximum total similarity of a one-to-one matching, *not yet divided* by
    ``n_gold``, so that both the per-task score (``sum / n_gold``, the paper's Hier-RCA(q)) and an
    entry-pooled score can be derived. ``id_hierarchical`` is ``None`` without a taxonomy.
    """

    n_gold: int
    id_exact: float
    id_hierarchical: float | None
    loc_exact: float
    loc_hierarchical: float


def entry_match(
    gold: Set[RcaEntry],
    predicted: Set[RcaEntry] | None,
    *,
    levels: Mapping[str, tuple[str, str, str]] | None = None,
    label_weights: LabelWeights = LabelWeights(),
    topology: Topology | None = None,
    node_weights: NodeWeights = NodeWeights(),
) -> EntryMatchScores:
    """Exact and hierarchical entry-match scores of one task.

    - ID exact: sim = 1 iff same label; ID hierarchical: :func:`label_sim`.
    - Loc exact: sim = 1 iff same (node, object); Loc hierarchical: :func:`node_sim` on the nodes
      only ("this score evaluates node proximity only", B.3).
    Each is its own optimal matching.
    """
    g = sorted(gold)
    p = sorted(predicted or ())
    return EntryMatchScores(
        n_gold=len(g),
        id_exact=_equal_matching([e.label for e in g], [e.label for e in p]),
        id_hierarchical=None
        if levels is None
        else best_matching(g, p, lambda a, b: label_sim(a.label, b.label, levels, label_weights)),
        loc_exact=_equal_matching([(e.node, e.object) for e in g], [(e.node, e.object) for e in p]),
        loc_hierarchical=best_matching(g, p, lambda a, b: node_sim(a.node, b.node, topology, node_weights)),
    )


def _equal_matching(gold: Sequence[Hashable], predicted: Sequence[Hashable]) -> float:
    """:func:`best_matching` for the similarity "1 if equal, else 0", without building the matrix.

    Equality splits the entries into classes and only entries of the same class earn credit, so the
    best one-to-one matching pairs, in every class, as many entries as the smaller side holds - which
    pairing each gold entry with any equal unmatched prediction achieves (answers are a few entries).
    """
    unmatched = list(predicted)
    hits = 0
    for value in gold:
        if value in unmatched:
            unmatched.remove(value)
            hits += 1
    return float(hits)


def hierarchical_rca(
    gold: Set[RcaEntry],
    predicted: Set[RcaEntry] | None,
    levels: Mapping[str, tuple[str, str, str]],
    weights: LabelWeights = LabelWeights(),
) -> float:
    """Hier-RCA(q) = max over one-to-one matchings of sum sim(c_g, c_p) / |G| (B.2): the per-task value
    of :func:`entry_match`'s ``id_hierarchical``."""
    em = entry_match(gold, predicted, levels=levels, label_weights=weights)
    return 0.0 if not em.n_gold or em.id_hierarchical is None else em.id_hierarchical / em.n_gold


def hierarchical_loc(
    gold: Set[RcaEntry],
    predicted: Set[RcaEntry] | None,
    topology: Topology | None,
    weights: NodeWeights = NodeWeights(),
) -> float:
    """Hierarchical node localisation: optimal matching of node_sim over gold entries / |G| (B.3): the
    per-task value of :func:`entry_match`'s ``loc_hierarchical``."""
    em = entry_match(gold, predicted, topology=topology, node_weights=weights)
    return 0.0 if not em.n_gold else em.loc_hierarchical / em.n_gold


# --------------------------------------------------------------------------- records and per-task scores


class TaskUsage(NamedTuple):
    """Resource usage of one task (section 4.3); ``None`` = not recorded. Counts are integers for one
    attempt and means for a task's mean over trials."""

    rounds: float | None = None
    latency_s: float | None = None
    input_tokens: float | None = None
    output_tokens: float | None = None

    @property
    def total_tokens(self) -> float | None:
        """Tokens_total = Tokens_input + Tokens_output; unknown when either side is unknown."""
        if self.input_tokens is None or self.output_tokens is None:
            return None
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """Everything the scorer needs about one task of one run, as plain values.

    ``gold`` is a set of :class:`RcaEntry` (family ``rca``) or a sequence of paths (``path``);
    ``prediction`` the parsed answer, ``None`` when the run produced none (timeout, error).
    ``meta`` holds the stratification fields (observability, category list, ...) for
    :func:`ctbench.scoring.stats.breakdown`; ``topology`` the task's network for B.3.
    """

    task_id: str
    family: FamilyName
    gold: frozenset[RcaEntry] | tuple[Path, ...] | frozenset[AnswerLink]
    prediction: ParsedAnswer | None = None
    golden_actions: frozenset[Action] = frozenset()
    executed_actions: tuple[Action, ...] = ()
    usage: TaskUsage = TaskUsage()
    meta: Mapping[str, Any] = field(default_factory=dict)
    topology: Topology | None = None
    kind: Any = None
    """A plug-in family's :class:`~ctbench.scoring.families.TaskFamily`, which scores its gold (``None``
    for the built-ins, scored here)."""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            if self.kind is None or getattr(self.kind, "name", None) != self.family:
                raise ValueError(f"{self.task_id}: unknown family {self.family!r} (no TaskFamily given)")
            if self.prediction is not None and self.prediction.family != self.family:
                raise ValueError(
                    f"{self.task_id}: a {self.family} task got a {self.prediction.family} answer"
                )
            object.__setattr__(self, "golden_actions", frozenset(tuple(a) for a in self.golden_actions))
            object.__setattr__(self, "executed_actions", tuple(tuple(a) for a in self.executed_actions))
            object.__setattr__(self, "usage", TaskUsage(*self.usage))
            return
        if self.family == "rca":
            try:
                gold: Any = frozenset(RcaEntry(*e) for e in self.gold)
            except TypeError as exc:
                raise ValueError(f"{self.task_id}: RCA gold must be (node, object, label) entries") from exc
            if not all(isinstance(x, str) for e in gold for x in e):
                raise ValueError(f"{self.task_id}: RCA gold must be (node, object, label) strings")
        elif self.family == "topology":
            gold = frozenset(link(*x) for x in self.gold)
        else:
            gold = tuple(tuple(Hop(*h) for h in p) for p in self.gold)
        if self.prediction is not None and self.prediction.family != self.family:
            raise ValueError(f"{self.task_id}: a {self.family} task got a {self.prediction.family} answer")
        object.__setattr__(self, "gold", gold)
        object.__setattr__(self, "golden_actions", frozenset(tuple(a) for a in self.golden_actions))
        object.__setattr__(self, "executed_actions", tuple(tuple(a) for a in self.executed_actions))
        object.__setattr__(self, "usage", TaskUsage(*self.usage))


@dataclass(frozen=True)
class ScoringConfig:
    """Parameters of the auxiliary near-miss scores (B.2, B.3); the primary metrics take none."""

    levels: Mapping[str, tuple[str, str, str]] | None = None
    label_weights: LabelWeights = LabelWeights()
    node_weights: NodeWeights = NodeWeights()


@dataclass(frozen=True, slots=True)
class TaskScores:
    """All per-task numbers of one task; :func:`summarize` and :mod:`.stats` work on these.

    Family-specific fields are ``None`` on the other family. ``failure`` is the F1-F5 label of a wrong
    RCA answer (``None`` when correct, or for paths).
    """

    task_id: str
    family: FamilyName
    status: TaskStatus
    exact: float
    """Correct (a bool) for one attempt; for a task's mean over trials, the share of correct trials."""
    loc: float
    evidence: EvidenceCounts
    usage: TaskUsage
    meta: Mapping[str, Any]
    ident: float | None = None
    triplet: float | None = None
    rest: float | None = None
    sequence: float | None = None
    link_iou: float | None = None
    """Topology restoration: IoU over links, ports included (``loc`` is the same over node pairs)."""
    edges_intersection: float = 0
    edges_union: float = 0
    entries: EntryMatchScores | None = None
    has_topology: bool = False
    failure: str | None = None
    trial: int = 1
    """Which trial of the task this row scores (``--trials``); 1 for single-trial runs."""
    n_trials: int = 1
    """How many trials this row stands for: 1 for one attempt, K for a task's mean over K trials."""
    trial_counts: Mapping[str, int] | None = None
    """For a task's mean over trials: how many of its trials had each status, each failure mode and
    were wrong (``"wrong"``); ``None`` for one attempt (its own status and failure say it)."""
    parts: Mapping[str, float] = field(default_factory=dict)
    """A plug-in family's per-task figures after ``exact`` and ``loc``, in its columns' order (the
    first is its third headline figure); empty for the built-ins, whose figures have fields above."""

    @property
    def third(self) -> float | None:
        """The third headline figure of the task's family (Table 5's ID / Rest; topology's link IoU; a
        plug-in's first part)."""
        if self.family not in THIRD_FIGURE:
            return next(iter(self.parts.values()), None)
        value: float | None = getattr(self, THIRD_FIGURE[self.family][0])
        return value

    def figure(self, name: str) -> float | None:
        """A per-task figure by name: a field of a built-in family or a plug-in's part."""
        if name in self.parts:
            return self.parts[name]
        value: float | None = getattr(self, name, None)
        return value

    def counts(self) -> Mapping[str, int]:
        """Statuses, failure modes and wrong answers of the trials this row stands for."""
        if self.trial_counts is not None:
            return self.trial_counts
        out = {self.status: 1, "wrong": 0 if self.exact else 1}
        if self.failure:
            out[self.failure] = 1
        return out

    def to_json(self) -> dict[str, Any]:
        """Plain JSON value for a per-task score listing (deterministic key order)."""
        ev, u = self.evidence, self.usage
        if self.family == "rca":
            out: dict[str, Any] = {
                "task_id": self.task_id,
                "family": self.family,
                "status": self.status,
                "exact": self.exact,
                "loc": self.loc,
                "ident": self.ident,
                "triplet": self.triplet,
                "failure": self.failure,
            }
            e = self.entries
            if e is not None:
                n = e.n_gold
                out["entry_match"] = {
                    "n_gold": n,
                    "id_exact": _div(e.id_exact, n),
                    "id_hierarchical": None if e.id_hierarchical is None else _div(e.id_hierarchical, n),
                    "loc_exact": _div(e.loc_exact, n),
                    "loc_hierarchical": _div(e.loc_hierarchical, n),
                }
        elif self.family not in FAMILIES:
            out = {
                "task_id": self.task_id,
                "family": self.family,
                "status": self.status,
                "exact": self.exact,
                "loc": self.loc,
                **self.parts,
            }
        elif self.family == "topology":
            out = {
                "task_id": self.task_id,
                "family": self.family,
                "status": self.status,
                "exact": self.exact,
                "loc": self.loc,
                "link_iou": self.link_iou,
            }
        else:
            out = {
                "task_id": self.task_id,
                "family": self.family,
                "status": self.status,
                "exact": self.exact,
                "loc": self.loc,
                "rest": self.rest,
                "sequence": self.sequence,
                "edges_intersection": self.edges_intersection,
                "edges_union": self.edges_union,
            }
        out["evidence"] = {"covered": ev.covered, "golden": ev.golden, "executed": ev.executed}
        out["usage"] = {
            "rounds": u.rounds,
            "latency_s": u.latency_s,
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
        }
        return out


def _div(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def score_task(record: TaskRecord, config: ScoringConfig = ScoringConfig()) -> TaskScores:
    """Compute every per-task metric of one record."""
    pred = record.prediction
    status: TaskStatus = "missing" if pred is None else pred.status
    evidence = evidence_counts(record.golden_actions, record.executed_actions)
    common: dict[str, Any] = dict(
        task_id=record.task_id,
        family=record.family,
        status=status,
        evidence=evidence,
        usage=record.usage,
        meta=record.meta,
    )
    if record.family not in FAMILIES:  # a plug-in family scores its own answers
        figures = dict(record.kind.score(record.gold, pred))
        exact = bool(figures.pop("exact"))
        loc = float(figures.pop("loc", 1.0 if exact else 0.0))
        return TaskScores(**common, exact=exact, loc=loc, parts={k: float(v) for k, v in figures.items()})
    if record.family == "rca":
        gold_rca = cast(frozenset[RcaEntry], record.gold)  # the family says which of the two gold is
        pred_rca = None if pred is None else pred.rca
        s = score_rca(gold_rca, pred_rca)
        return TaskScores(
            **common,
            exact=s.exact,
            loc=s.loc,
            ident=s.ident,
            triplet=s.triplet,
            entries=entry_match(
                gold_rca,
                pred_rca,
                levels=config.levels,
                label_weights=config.label_weights,
                topology=record.topology,
                node_weights=config.node_weights,
            ),
            has_topology=record.topology is not None,
            failure=classify_rca_failure(gold_rca, pred),
        )
    if record.family == "topology":
        t = score_links(cast(frozenset[AnswerLink], record.gold), pred)
        return TaskScores(**common, exact=t.exact, loc=t.node_pair_iou, link_iou=t.link_iou)
    gold_paths = cast(tuple[Path, ...], record.gold)
    p = score_paths(gold_paths, None if pred is None else pred.paths)
    return TaskScores(
        **common,
        exact=p.exact,
        loc=p.loc,
        rest=p.rest,
        sequence=p.sequence,
        edges_intersection=p.edges_intersection,
        edges_union=p.edges_union,
    )
