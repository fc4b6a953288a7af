"""The paper's dataset tables over a task set (Tables 3, 4, 7-9, 11, 12 and the review yields).

Topology restoration (not in the paper) gets its own counts beside Tables 11-12: links per task, the
devices whose neighbour tables solve it, and its golden-length tiers (its own, from ``ctbench.yaml``).

Counting rules follow appendix A.1: a root-cause *entry* is one gold triple; a task-level *mention*
counts each root-cause label at most once per task; category distributions are over entries.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from ctbench.derived import derive
from ctbench.errors import CtbError
from ctbench.model import DerivedMetadata, Family, HiddenSpec, Status, TaskSpec
from ctbench.store import TaskSet
from ctbench.tables import Table


@dataclass
class Loaded:
    task: TaskSpec
    hidden: HiddenSpec
    derived: DerivedMetadata


@dataclass
class DatasetStats:
    tables: list[Table] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def load_all(ts: TaskSet, *, statuses: set[Status] | None = None) -> tuple[list[Loaded], list[str]]:
    out: list[Loaded] = []
    skipped: list[str] = []
    for ref in ts.refs():
        try:
            task = ts.load_task(ref)
            hidden = ts.load_hidden(ref)
            net = ts.network(task.network)
        except CtbError as exc:
            skipped.append(f"{ref.id}: {exc}")
            continue
        if statuses is not None and task.status not in statuses:
            continue
        out.append(Loaded(task, hidden, derive(task, hidden, net, ts.taxonomy, ts.config)))
    return out, skipped


def _pct(n: int, total: int) -> float | None:
    return round(100.0 * n / total, 2) if total else None


def _dist(
    title: str,
    key: str,
    items: list[Loaded],
    fn: Callable[[Loaded], object],
    order: list[str] | None = None,
    label: str = "value",
) -> Table:
    counts = Counter(str(fn(x)) for x in items)
    keys = order or sorted(counts, key=lambda k: (len(k), k))
    t = Table(title=title, columns=[label, "tasks", "%"], key=key)
    for k in keys:
        if counts.get(k):
            t.add(k, counts[k], _pct(counts[k], len(items)))
    return t


def _bucket(n: int, cap: int, prefix: str) -> str:
    return f"{prefix}{n}" if n < cap else f"{prefix}{cap}+"


def dataset_stats(ts: TaskSet, *, review_counts: dict[str, dict[str, int]] | None = None) -> DatasetStats:
    loaded, skipped = load_all(ts)
    tax = ts.taxonomy
    res = DatasetStats(skipped=skipped)
    rca = [x for x in loaded if x.task.family == Family.RCA]
    path = [x for x in loaded if x.task.family == Family.PATH]
    topo = [x for x in loaded if x.task.family == Family.TOPOLOGY]
    families = [(Family.RCA, rca), (Family.PATH, path), (Family.TOPOLOGY, topo)]
    # the paper's two families always; topology when the set (or its review history) has any
    shown = [(f, items) for f, items in families if items or f != Family.TOPOLOGY]

    t = Table(
        title="Tasks per family", columns=["family", "tasks", *[s.value for s in Status]], key="families"
    )
    for fam, items in families:
        st = Counter(x.task.status.value for x in items)
        t.add(fam.value, len(items), *[st.get(s.value, 0) for s in Status])
    t.add("total", len(loaded), *[sum(1 for x in loaded if x.task.status == s) for s in Status])
    res.tables.append(t)

    entries = [(x, tax.resolve(e.label) or e.label) for x in rca for e in (x.hidden.answer.rca or [])]
    n_entries = len(
        {
            (x.task.id, e.node, e.object, tax.resolve(e.label) or e.label)
            for x in rca
            for e in (x.hidden.answer.rca or [])
        }
    )
    n_mentions = sum(x.derived.mentions for x in rca)
    t = Table(
        title="RCA root-cause entries vs task-level mentions (A.1)",
        columns=["measure", "count"],
        key="entries",
    )
    t.add("RCA tasks", len(rca))
    t.add("root-cause entries (triples)", n_entries)
    t.add("task-level mentions (label once per task)", n_mentions)
    res.tables.append(t)

    by_label = Counter(lab for _, lab in entries)
    mentions = Counter(lab for x in rca for lab in x.derived.labels)
    t = Table(
        title="Fine-grained root-cause distribution (Table 8)",
        columns=["label", "category", "entries", "% entries", "task mentions"],
        key="labels",
    )
    for lab in sorted(by_label, key=lambda k: (-by_label[k], k)):
        t.add(
            lab, tax.category_of(lab) or "?", by_label[lab], _pct(by_label[lab], len(entries)), mentions[lab]
        )
    res.tables.append(t)

    domains = Counter((known.domain if (known := tax.get(lab)) else "?") for _, lab in entries)
    t = Table(
        title="Root-cause fault domains, unmerged (Table 7)",
        columns=["domain", "entries", "%"],
        key="domains",
    )
    for dom in sorted(domains, key=lambda k: (-domains[k], k)):
        t.add(dom, domains[dom], _pct(domains[dom], len(entries)))
    res.tables.append(t)

    cats = Counter(tax.category_of(lab) or "?" for _, lab in entries)
    task_cats = Counter(c for x in rca for c in x.derived.categories)
    t = Table(
        title="Merged RCA categories (Tables 3 and 9)",
        columns=["category", "name", "entries", "% entries", "tasks"],
        key="categories",
    )
    for c in tax.categories:
        t.add(c.id, c.name, cats.get(c.id, 0), _pct(cats.get(c.id, 0), len(entries)), task_cats.get(c.id, 0))
    res.tables.append(t)

    if rca:
        res.tables.append(
            _dist(
                "RCA observability (Table 11)",
                "rca_observability",
                rca,
                lambda x: x.derived.observability or "unset",
                ["O1", "O2", "unset"],
            )
        )
        res.tables.append(
            _dist(
                "RCA root-cause count N_r (Table 11)",
                "rca_root_causes",
                rca,
                lambda x: _bucket(x.derived.root_cause_count, 3, "RC"),
            )
        )
        res.tables.append(
            _dist(
                "RCA propagation-chain length N_c (Table 11)",
                "rca_chain",
                rca,
                lambda x: x.derived.chain_length or "unset",
            )
        )
        res.tables.append(
            _dist(
                "RCA golden solution length tier (Table 11)",
                "rca_golden",
                rca,
                lambda x: f"{x.derived.golden_tier}",
            )
        )
        res.tables.append(
            _dist(
                "RCA protocol complexity N_p (Table 11)",
                "rca_protocols",
                rca,
                lambda x: x.derived.protocol_complexity,
            )
        )
    if path:
        res.tables.append(
            _dist(
                "Path count N_path (Table 12)",
                "path_count",
                path,
                lambda x: _bucket(x.derived.path_count, 3, "P"),
            )
        )
        res.tables.append(
            _dist(
                "Path length in hops (Table 12)",
                "path_length",
                path,
                lambda x: _len_bucket(max(x.derived.path_lengths or [0])),
            )
        )
        res.tables.append(
            _dist(
                "Path golden solution length tier (Table 12)",
                "path_golden",
                path,
                lambda x: x.derived.golden_tier,
            )
        )
        res.tables.append(
            _dist(
                "Path protocol complexity N_p (Table 12)",
                "path_protocols",
                path,
                lambda x: x.derived.protocol_complexity,
            )
        )

    if topo:
        res.tables.append(
            _dist(
                "Topology links per task (N_links)",
                "topology_links",
                topo,
                lambda x: _bucket(x.derived.entries, 5, "L"),
            )
        )
        res.tables.append(
            _dist(
                "Topology devices with golden actions",
                "topology_devices",
                topo,
                lambda x: len({a.device for a in x.hidden.golden_actions}),
            )
        )
        res.tables.append(
            _dist(
                "Topology golden solution length tier",
                "topology_golden",
                topo,
                lambda x: x.derived.golden_tier,
            )
        )

    t = Table(
        title="Network heterogeneity h_L = max(N_v, N_d) (Table 4)",
        columns=["family", "level", "thresholds", "tasks", "%", "mean h_L"],
        key="heterogeneity",
    )
    for fam, items in shown:
        levels = ts.config.heterogeneity.for_family(fam)
        lo = 0
        for lv in levels:
            members = [x for x in items if x.derived.heterogeneity == lv.name]
            rng = f"{lo + 1 if lo else 1}..{lv.max}" if lv.max is not None else f">= {lo + 1}"
            lo = lv.max or lo
            mean = round(sum(x.derived.h_l for x in members) / len(members), 2) if members else None
            t.add(fam.value, lv.name, f"h_L {rng}", len(members), _pct(len(members), len(items)), mean)
    res.tables.append(t)

    t = Table(
        title="Review yields (candidates -> retained)",
        columns=["family", "candidates", "retained", "discarded", "in progress", "yield %"],
        key="yields",
    )
    counted = (review_counts or {}).get(Family.TOPOLOGY.value, {}).get("candidates")
    for fam, items in shown if topo or not counted else families:
        extra = (review_counts or {}).get(fam.value, {})
        cand = [x for x in items if x.task.status != Status.DRAFT]
        kept = sum(1 for x in cand if x.task.status == Status.APPROVED)
        disc = sum(1 for x in cand if x.task.status == Status.DISCARDED)
        n_cand = extra.get("candidates", len(cand))
        t.add(fam.value, n_cand, kept, disc, len(cand) - kept - disc, _pct(kept, n_cand))
    res.tables.append(t)
    return res


def _len_bucket(n: int) -> str:
    if n <= 4:
        return "2-4"
    if n <= 8:
        return "5-8"
    if n <= 12:
        return "9-12"
    return "13+"
