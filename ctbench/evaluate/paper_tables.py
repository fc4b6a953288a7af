"""The paper's remaining run tables: 20 (the O2->O1 ablation rows), 21, 23, 24 and the scoped paired
comparisons of Tables 26-27 (appendices C.3, C.5, D.2).

Each is computed from scored runs (:class:`~ctbench.evaluate.score.ScoredRun`), so it reads only run
folders and the task set, like every other report table:

- **Table 21** - mean counts per RCA task by observability: golden actions, distinct executed
  (device, canonical command) observations, and those on exactly correct answers only.
- **Ablation (Table 20's O2->O1 rows)** - a task whose hidden metadata says ``ablation_of: <O2 task>``
  is that task made directly observable, with its own golden actions. It is its own stratum
  (``O2→O1``), and each run holding both is shown original against variant, with Table 21's counts
  for both and the paper's caveat: the evidence scores have different denominators.
- **Table 23** - harness sensitivity: runs of the same model under different harnesses, with the
  path micro IoU, evidence F1 (2C / (G + A)) and coverage (C / G); when the runs hold topology tasks,
  a table of the same shape for them follows (accuracy, node-pair IoU, link IoU, evidence): one table
  with all three families would not fit a two-column page.
- **Table 24** - pairwise exact-answer disagreement (both right, first only, second only, neither) for
  every pair of runs, on the tasks both hold, per family (RCA, path, topology restoration).
- **Plug-in families** - a family installed by entry point (:mod:`ctbench.scoring.families`) has no
  paper table of its own: it gets a generic one per family present (its headline figures and every
  part its summary block names in ``columns``, per run, ± SE across tasks as the report's other
  tables), a Table 23 of its own shape when runs share a model, and its rows in Tables 24 and 26-27.
- **Scoped comparisons (Tables 26-27)** - pairs the user names, grouped in comparison scopes; Holm's
  adjustment runs within each scope, task family and metric, as D.2 prescribes ("three comparisons for
  the main and fixed-model scopes and one for the same-harness scope").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from ctbench.errors import CtbError
from ctbench.evaluate import family_view
from ctbench.evaluate.compare import METRIC_TITLES, _metric_order, align, result_cells, unique_names
from ctbench.evaluate.score import ABLATION_LEVEL, ScoredRun
from ctbench.evaluate.scorecard import FAMILY_TITLES, percent, pm
from ctbench.scoring.metrics import TaskScores
from ctbench.scoring.summary import summarize
from ctbench.tables import Cell, Table

LEVELS = ("O1", "O2", ABLATION_LEVEL)
ABLATION_CAVEAT = (
    "The O2→O1 variants have their own (regenerated) golden actions, so their evidence scores "
    "describe overlap with a different action set: they share no denominator with the O2 "
    "originals and say nothing about better evidence gathering."
)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _rca(run: ScoredRun) -> list[TaskScores]:
    return [s for s in run.scores if s.family == "rca"]


def _counts(rows: Sequence[TaskScores]) -> list[Cell]:
    """n, mean golden actions, mean agent steps, correct, mean agent steps on correct answers."""
    correct = [s for s in rows if s.exact]
    return [
        len(rows),
        _mean([s.evidence.golden for s in rows]),
        _mean([s.evidence.executed for s in rows]),
        len(correct),
        _mean([s.evidence.executed for s in correct]),
    ]


COUNT_COLUMNS = ["n", "Gold actions", "Agent steps", "Correct", "Agent steps (correct)"]


def table21(runs: Sequence[tuple[str, ScoredRun]]) -> Table:
    t = Table(
        title="Mean golden actions and agent steps per RCA task by observability",
        key="table21",
        columns=["Run", "Level", *COUNT_COLUMNS],
    )
    for label, run in runs:
        rows = _rca(run)
        levels = [lv for lv in LEVELS if any(s.meta.get("observability") == lv for s in rows)]
        levels += sorted({str(v) for s in rows if (v := s.meta.get("observability")) not in LEVELS and v})
        for level in levels:
            t.add(label, level, *_counts([s for s in rows if str(s.meta.get("observability")) == level]))
    t.note = (
        "Gold actions: expert-annotated evidence steps. Agent steps: distinct executed (device, canonical "
        "command) observations (recorded or denied calls). Agent steps (correct) averages exactly correct "
        f"answers only. {ABLATION_LEVEL}: ablation variants of O2 tasks, with regenerated golden actions."
    )
    return t


def ablation_pairs(run: ScoredRun) -> list[tuple[str, str]]:
    """(original, variant) ids of the ablation variants whose original the run also holds."""
    ids = {s.task_id for s in _rca(run)}
    return sorted(
        (str(s.meta["ablation_of"]), s.task_id)
        for s in _rca(run)
        if s.meta.get("ablation_of") and s.meta["ablation_of"] in ids
    )


def table20_ablation(runs: Sequence[tuple[str, ScoredRun]]) -> Table:
    t = Table(
        title="Observability ablation: O2 tasks against their O2→O1 variants",
        key="table20_ablation",
        columns=[
            "Run",
            "Setting",
            "n",
            "Acc",
            "Loc",
            "ID",
            "Evid. cov.",
            "Gold actions",
            "Agent steps",
            "Agent steps (correct)",
        ],
    )
    for label, run in runs:
        pairs = ablation_pairs(run)
        if not pairs:
            continue
        by_id = {s.task_id: s for s in _rca(run)}
        for setting, ids in (("O2", [o for o, _ in pairs]), (ABLATION_LEVEL, [v for _, v in pairs])):
            rows = [by_id[i] for i in ids]
            summ = summarize(rows)["rca"]
            n, gold, steps, _, steps_ok = _counts(rows)
            t.add(
                label,
                setting,
                n,
                percent(summ["accuracy"]),
                percent(summ["loc_iou"]),
                percent(summ["id_iou"]),
                percent(summ["evidence"]["coverage"]),
                gold,
                steps,
                steps_ok,
            )
    t.note = (
        "Each O2 task is paired with the variant that declares it as its original (ablation_of); both rows "
        "hold the same questions. Percent; Acc and IoUs are task means, Evid. cov. pooled. " + ABLATION_CAVEAT
    )
    return t


# --------------------------------------------------------------------------- Table 23


def _harness(run: ScoredRun) -> str:
    return run.info.harness or run.info.agent or run.info.name


def same_model_groups(runs: Sequence[tuple[str, ScoredRun]]) -> dict[str, list[tuple[str, ScoredRun]]]:
    """Runs grouped by model, keeping only models run under at least two different harnesses."""
    groups: dict[str, list[tuple[str, ScoredRun]]] = {}
    for label, run in runs:
        if run.info.model:
            groups.setdefault(run.info.model, []).append((label, run))
    return {m: g for m, g in groups.items() if len({_harness(r) for _, r in g}) > 1}


TOPOLOGY_COLUMNS = ["Model", "Harness", "Acc", "Loc", "Link", "Evid. F1", "Evid. cov."]
"""Table 23's columns for topology restoration (a table of its own: the paper has two families)."""


def table23_topology(runs: Sequence[tuple[str, ScoredRun]]) -> Table:
    """Harness sensitivity on the topology tasks: the same model under different harnesses."""
    t = Table(
        title="Harness sensitivity on topology restoration: the same model under different harnesses",
        key="table23_topology",
        columns=list(TOPOLOGY_COLUMNS),
    )
    for model, group in same_model_groups(runs).items():
        for _label, run in group:
            topo = summarize(run.scores)["topology"]
            if topo["n_tasks"]:
                ev = topo["evidence"]
                cells = [topo["accuracy"], topo["loc_iou"], topo["link_iou"], ev["f1"], ev["coverage"]]
                t.add(model, _harness(run), *(percent(x) for x in cells))
    t.best = {col: "max" for col in TOPOLOGY_COLUMNS[2:]}
    t.note = (
        "Percent, over the runs' topology-restoration tasks. Acc: exact link set; Loc: IoU over node pairs "
        "(ports ignored); Link: IoU over links, both ends and ports. Evid. F1 and Evid. cov. as in Table 23."
    )
    return t


def plugin_families(runs: Sequence[tuple[str, ScoredRun]]) -> list[str]:
    """Plug-in families (not the built-ins) with tasks in any of the runs, in name order."""
    return sorted(f for f in {s.family for _, run in runs for s in run.scores} if family_view.is_plugin(f))


def _parts(runs: Sequence[tuple[str, ScoredRun]], family: str) -> list[str]:
    """A plug-in family's parts (its own per-task figures) in the order its rows name them."""
    return list(
        dict.fromkeys(p for _, run in runs for s in run.scores if s.family == family for p in s.parts)
    )


def table23_family(runs: Sequence[tuple[str, ScoredRun]], family: str) -> Table:
    """Harness sensitivity on a plug-in family's tasks (Table 23's shape, its own parts as columns)."""
    parts = _parts(runs, family)
    cols = ["Model", "Harness", "Acc", "Loc", *parts, "Evid. F1", "Evid. cov."]
    name = family_view.title(family)
    t = Table(
        title=f"Harness sensitivity on {name} ({family}): the same model under different harnesses",
        key=f"table23_{family}",
        columns=cols,
    )
    for model, group in same_model_groups(runs).items():
        for _label, run in group:
            summ = summarize(run.scores).get(family)
            if summ and summ["n_tasks"]:
                ev = summ["evidence"]
                cells = [
                    summ["accuracy"],
                    summ["loc_iou"],
                    *(summ.get(p) for p in parts),
                    ev["f1"],
                    ev["coverage"],
                ]
                t.add(model, _harness(run), *(percent(x) for x in cells))
    t.best = {col: "max" for col in cols[2:]}
    t.note = (
        f"Percent, over the runs' {family} tasks (a plug-in family: its figures as it defines them). Evid. F1 "
        "and Evid. cov. as in Table 23."
    )
    return t


def table_family(
    runs: Sequence[tuple[str, ScoredRun]],
    family: str,
    *,
    split: bool = False,
    se: Mapping[str, Mapping[str, Mapping[str, float | None]]] | None = None,
) -> Table:
    """A plug-in family's own table: per run its headline figures and every part, ± SE across tasks.

    ``se`` maps a run's label to its standard errors per family (a report passes the ones its other
    tables show); without it they are computed here from the family's rows (:mod:`ctbench.scoring.stats`).
    """
    from ctbench.scoring.stats import standard_errors

    parts = _parts(runs, family)
    figures = [("Acc", "accuracy"), ("Loc", "loc_iou"), *((p, p) for p in parts)]
    figures += [("Evid. cov.", "evidence_coverage"), ("Evid. F1", "evidence_f1")]
    heads = [h for name, _ in figures for h in ([name, f"{name} SE"] if split else [name])]
    cols = ["Run", "Model", "Harness", "n", *heads]
    name = family_view.title(family)
    t = Table(
        title=f"{name} ({family}): headline figures and parts per run", key=f"family_{family}", columns=cols
    )
    for label, run in runs:
        rows = [s for s in run.scores if s.family == family]
        if not rows:
            continue
        summ = summarize(rows)[family]
        errs = (se or {}).get(label, {}).get(family) or standard_errors(rows, run=label)[family]
        values = {
            **{key: summ.get(key) for _, key in figures[:-2]},
            "evidence_coverage": summ["evidence"]["coverage"],
            "evidence_f1": summ["evidence"]["f1"],
        }
        row: list[Cell] = [label, run.info.model, _harness(run), summ["n_tasks"]]
        for _, key in figures:
            value, err = values[key], errs.get(key)
            row += [percent(value), percent(err)] if split else [pm(value, err)]
        t.rows.append(row)
    t.best = {col: "max" for col in heads if not col.endswith(" SE")}
    t.note = (
        f"Percent ± SE across tasks. {family} is a plug-in task family with no table of the paper: Acc is "
        "exact accuracy and Loc its localisation figure, the other columns its own per-task figures "
        f"({', '.join(parts) or 'none'}), each a task mean (SE = sd/sqrt(n)); Evid. cov. and Evid. F1 pool "
        "golden actions (bootstrap SE)."
    )
    return t


def table23(runs: Sequence[tuple[str, ScoredRun]]) -> Table:
    cols = [
        "Model",
        "Harness",
        "RCA Acc",
        "RCA Loc",
        "RCA ID",
        "RCA Evid. F1",
        "RCA Evid. cov.",
        "Path Acc",
        "Path Loc",
        "Path Rest",
        "Path micro",
        "Path Evid. F1",
        "Path Evid. cov.",
    ]
    t = Table(
        title="Harness sensitivity: the same model under different harnesses", key="table23", columns=cols
    )
    for model, group in same_model_groups(runs).items():
        for _label, run in group:
            summ = summarize(run.scores)
            r, p = summ["rca"], summ["path"]
            rca: list[Cell] = (
                [
                    percent(r["accuracy"]),
                    percent(r["loc_iou"]),
                    percent(r["id_iou"]),
                    percent(r["evidence"]["f1"]),
                    percent(r["evidence"]["coverage"]),
                ]
                if r["n_tasks"]
                else [None] * 5
            )
            path: list[Cell] = (
                [
                    percent(p["accuracy"]),
                    percent(p["loc_iou"]),
                    percent(p["rest_iou"]),
                    percent(p["micro_edge_iou"]),
                    percent(p["evidence"]["f1"]),
                    percent(p["evidence"]["coverage"]),
                ]
                if p["n_tasks"]
                else [None] * 6
            )
            t.add(model, _harness(run), *rca, *path)
    t.best = {col: "max" for col in cols[2:]}
    t.note = (
        "Percent. Loc and ID/Rest are task-macro IoUs; Path micro is the pooled directed-edge IoU. With C "
        "covered golden actions, G golden actions and A the per-task counts of distinct executed commands "
        "summed: Evid. F1 = 2C / (G + A), Evid. cov. = C / G. Unanswered tasks stay in every denominator."
    )
    return t


# --------------------------------------------------------------------------- Table 24


def _exact_by_family(run: ScoredRun) -> dict[str, dict[str, bool]]:
    """Per family, each task's "exactly right" (its mean over trials is 1): read once per run."""
    out: dict[str, dict[str, bool]] = {}
    for s in run.scores:
        out.setdefault(s.family, {})[s.task_id] = s.exact == 1
    return out


def _disagree(xa: dict[str, bool], xb: dict[str, bool]) -> tuple[int, int, int, int, int]:
    both = first = second = n = 0
    for task, a in xa.items():
        b = xb.get(task)
        if b is None:
            continue
        n += 1
        if a:
            if b:
                both += 1
            else:
                first += 1
        elif b:
            second += 1
    return n, both, first, second, n - both - first - second


def table24(runs: Sequence[tuple[str, ScoredRun]]) -> Table:
    t = Table(
        title="Pairwise exact-answer disagreement between runs",
        key="table24",
        columns=["Pair", "Family", "n", "Both", "First only", "Second only", "Neither"],
    )
    families = [*FAMILY_TITLES, *plugin_families(runs)]
    # each run indexed once (not once per pair and family: 100,000 tasks x 4 runs made this table the
    # report's slowest part)
    exact = [_exact_by_family(run) for _, run in runs]
    for (i, (la, _)), (j, (lb, _)) in combinations(enumerate(runs), 2):
        for fam in families:
            n, both, first, second, neither = _disagree(exact[i].get(fam, {}), exact[j].get(fam, {}))
            if n:
                t.add(f"{la} vs {lb}", family_view.label(fam), n, both, first, second, neither)
    t.note = (
        "Counts of tasks both runs hold. First only / Second only: exactly correct in the first (second) run "
        "of the pair and not in the other; these discordant counts are what McNemar's test uses."
    )
    return t


# --------------------------------------------------------------------------- scoped comparisons


@dataclass
class Scope:
    name: str
    pairs: list[tuple[int, int]]
    results: list[Any] = field(default_factory=list)


@dataclass
class ScopedComparison:
    names: list[str]
    labels: list[str]
    scopes: list[Scope]
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": [{"name": n, "label": lab} for n, lab in zip(self.names, self.labels, strict=True)],
            "warnings": self.warnings,
            "scopes": [
                {
                    "scope": s.name,
                    "pairs": [[self.names[a], self.names[b]] for a, b in s.pairs],
                    "comparisons": [r.to_json() for r in s.results],
                }
                for s in self.scopes
            ],
        }


def _keys_of(i: int, run: ScoredRun, name: str, label: str, folder: str) -> set[str]:
    return {
        str(i + 1),
        name,
        label,
        folder,
        *(x for x in (run.info.agent, run.info.harness, run.info.model) if x),
    }


def parse_pairs(
    spec: str, runs: Sequence[ScoredRun], names: Sequence[str], labels: Sequence[str]
) -> list[tuple[int, int]]:
    """``A:B,C:D`` -> run index pairs. A run is named by its position (1-based), run name, folder name,
    label (agent+model), agent, harness or model - whichever names exactly one of the runs."""
    keys = [
        _keys_of(i, r, n, lab, r.path.name)
        for i, (r, n, lab) in enumerate(zip(runs, names, labels, strict=True))
    ]

    def one(token: str) -> int:
        hits = [i for i, k in enumerate(keys) if token in k]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise CtbError(
                f"--pairs: {token!r} names none of the runs (use a position 1-{len(runs)}, a run name, a "
                f"folder name or a label: {', '.join(labels)})",
                exit_code=2,
            )
        raise CtbError(
            f"--pairs: {token!r} names {len(hits)} runs ({', '.join(labels[i] for i in hits)}); use "
            "their positions or run names",
            exit_code=2,
        )

    pairs: list[tuple[int, int]] = []
    for part in (p.strip() for p in spec.split(",")):
        a, sep, b = part.partition(":")
        if not sep or not a.strip() or not b.strip():
            raise CtbError(f"--pairs: {part!r} is not a pair; write A:B (several: A:B,C:D)", exit_code=2)
        ia, ib = one(a.strip()), one(b.strip())
        if ia == ib:
            raise CtbError(f"--pairs: {part!r} compares a run with itself", exit_code=2)
        if (ia, ib) in pairs:
            raise CtbError(f"--pairs: {part!r} is listed twice", exit_code=2)
        pairs.append((ia, ib))
    return pairs


def compare_scoped(
    runs: Sequence[ScoredRun],
    scopes: Sequence[tuple[str, str]],
    *,
    common: bool = False,
    n_resamples: int | None = None,
    workers: int | None = None,
    allow_incomplete: bool = False,
) -> ScopedComparison:
    """The named pairs of each scope, Holm-adjusted within (scope, family, metric); see D.2."""
    from ctbench.scoring import stats

    names, labels = unique_names(runs)
    parsed = [Scope(name, parse_pairs(spec, runs, names, labels)) for name, spec in scopes]
    seen: dict[str, int] = {}
    for s in parsed:
        if s.name in seen:
            raise CtbError(f"--scope: {s.name!r} is given twice; put its pairs in one --pairs", exit_code=2)
        seen[s.name] = 1
    used = sorted({i for s in parsed for p in s.pairs for i in p})
    aligned, warnings = align(
        [runs[i] for i in used], [labels[i] for i in used], common=common, allow_incomplete=allow_incomplete
    )
    by_name = {names[i]: r.scores for i, r in zip(used, aligned, strict=True)}
    n = stats.N_RESAMPLES if n_resamples is None else n_resamples
    for s in parsed:
        try:
            s.results = stats.compare_scope(
                by_name, [(names[a], names[b]) for a, b in s.pairs], n_resamples=n, workers=workers
            )
        except ValueError as exc:
            raise CtbError(f"cannot compare the runs: {exc}") from None
    return ScopedComparison(names=list(names), labels=list(labels), scopes=parsed, warnings=warnings)


def scoped_table(sc: ScopedComparison, *, split: bool = False) -> Table:
    """Tables 26-27's shape: one row per scope, family, metric and pair; differences A - B in points."""
    label = dict(zip(sc.names, sc.labels, strict=True))
    if split:
        cols = [
            "Scope",
            "Family",
            "Metric",
            "A",
            "B",
            "n",
            "A (%)",
            "B (%)",
            "A-B (pp)",
            "CI low (pp)",
            "CI high (pp)",
            "p",
            "p Holm",
            "A only",
            "B only",
        ]
    else:
        cols = [
            "Scope",
            "Family",
            "Metric",
            "A",
            "B",
            "n",
            "A (%)",
            "B (%)",
            "A-B (pp)",
            "95% CI (pp)",
            "p",
            "p Holm",
            "A only / B only",
        ]
    t = Table(title="Paired comparisons within the named scopes", key="table26_27", columns=cols)
    for scope in sc.scopes:
        pair_order = {(sc.names[a], sc.names[b]): i for i, (a, b) in enumerate(scope.pairs)}
        rows = sorted(
            scope.results,
            key=lambda r: (
                family_view.order_key(r.family),
                _metric_order(r.metric),
                pair_order[(r.run_a, r.run_b)],
            ),
        )
        for r in rows:
            head: list[Cell] = [
                scope.name,
                family_view.label(r.family),
                METRIC_TITLES.get(r.metric, r.metric),
                label[r.run_a],
                label[r.run_b],
                r.n,
            ]
            t.add(*head, *result_cells(r, split=split))
    sizes = ", ".join(f"{s.name}: {len(s.pairs)}" for s in sc.scopes)
    t.note = (
        "Differences are A minus B in percentage points. Accuracy: exact two-sided McNemar test; IoUs and "
        "evidence coverage: paired bootstrap percentile interval and sign probability. p Holm is adjusted "
        f"within each scope, family and metric (comparisons per scope - {sizes}); intervals are not adjusted."
    )
    return t


def paper_tables(
    runs: Sequence[tuple[str, ScoredRun]],
    *,
    split: bool = False,
    se: Mapping[str, Mapping[str, Mapping[str, float | None]]] | None = None,
) -> list[Table]:
    """The tables of this module a report shows for its runs (empty ones left out); ``split`` and
    ``se`` as for :func:`table_family` (SE cells: "x ± y", or two columns when split)."""
    plugins = plugin_families(runs)
    tables = [table21(runs), table20_ablation(runs)]
    if same_model_groups(runs):
        tables += [table23(runs), table23_topology(runs), *(table23_family(runs, f) for f in plugins)]
    tables += [table_family(runs, f, split=split, se=se) for f in plugins]
    if len(runs) > 1:
        tables.append(table24(runs))
    return [t for t in tables if t.rows]
