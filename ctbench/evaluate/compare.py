"""Paired comparisons of runs on the same tasks (paper appendix D.2, Tables 25-27).

The first run is A; every other run is a comparator B, and each difference is A minus B. Accuracy
gets the exact McNemar test, the IoUs and pooled evidence coverage paired-bootstrap percentile
intervals and sign probabilities; p-values are Holm-adjusted within each task family and metric
across the comparators (the "comparison scope" of D.2). Intervals are not adjusted.

A paired test only means something on the same tasks. Runs over different task selections are
refused with the difference spelled out, unless the caller asks to restrict every run to the tasks
they all have (``common=True``), which is then said loudly in the warnings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctbench.errors import CtbError
from ctbench.evaluate.prices import Prices, cost_section
from ctbench.evaluate.score import RunInfo, ScoredRun, Scorer, apply_labels
from ctbench.evaluate.scorecard import FAMILY_TITLES, family_label, percent
from ctbench.store import TaskSet
from ctbench.tables import Cell, Table

if TYPE_CHECKING:
    from ctbench.scoring.stats import PairedResult

METRIC_TITLES = {
    "accuracy": "Acc",
    "loc_iou": "Loc",
    "id_iou": "ID",
    "rest_iou": "Rest",
    "link_iou": "Link",
    "evidence_coverage": "Evid. cov.",
}


@dataclass
class Comparison:
    """A against each comparator: the scored runs (restricted to the compared tasks) and the tests."""

    runs: list[ScoredRun]
    names: list[str]
    labels: list[str]
    results: list[Any]  # stats.PairedResult, Holm-adjusted within (family, metric)
    warnings: list[str] = field(default_factory=list)
    n_tasks: dict[str, int] = field(default_factory=dict)
    se: dict[str, Any] | None = (
        None  # standard errors of each run on all its tasks, when asked and computable
    )

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.names[0],
            "runs": [
                {"name": n, "label": lab, **r.info.to_json()}
                for n, lab, r in zip(self.names, self.labels, self.runs, strict=True)
            ],
            "n_tasks": self.n_tasks,
            "warnings": list(self.warnings),
            "comparisons": [r.to_json() for r in self.results],
            "cost": {n: cost_section(r) for n, r in zip(self.names, self.runs, strict=True)},
        }


def unique_names(runs: Sequence[ScoredRun]) -> tuple[list[str], list[str]]:
    """Seed names (run names) and display labels (``agent+model``), both made unique.

    Seeds are keyed by run names, so two runs that happen to share a name get ``#2``, ``#3`` suffixes
    in the order given; labels fall back to the run name when two configurations look the same.
    """
    names: list[str] = []
    for r in runs:
        name, k = r.info.name, 2
        while name in names:
            name = f"{r.info.name}#{k}"
            k += 1
        names.append(name)
    labels = [r.info.label for r in runs]
    if len(set(labels)) != len(labels):
        labels = list(names)
    return names, labels


def _keys(run: ScoredRun) -> set[tuple[str, str]]:
    return {(s.family, s.task_id) for s in run.scores}


def _show(keys: set[tuple[str, str]]) -> str:
    ids = sorted(t for _, t in keys)
    return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def harness_version_warnings(infos: Sequence[RunInfo]) -> list[str]:
    """One warning per agent whose runs used different harness versions (a CLI upgraded between runs
    changes its prompts and tools: issue 13, Table 23 of the paper)."""
    versions: dict[str, set[str]] = {}
    for info in infos:
        if info.agent and info.harness_version:
            versions.setdefault(info.agent, set()).add(info.harness_version)
    return [
        f"the {agent} runs used different harness versions ({', '.join(sorted(found))}): differences may come "
        "from the harness, not the model"
        for agent, found in sorted(versions.items())
        if len(found) > 1
    ]


def align(
    runs: Sequence[ScoredRun], labels: Sequence[str], *, common: bool, allow_incomplete: bool = False
) -> tuple[list[ScoredRun], list[str]]:
    """The runs on one task set: unchanged when they agree; else an error, or (``common``) restricted to
    the tasks all of them hold, with a warning per run that lost tasks.

    A task a run did not finish (an infrastructure error or no result) is not on its task set: a paired
    test would count it as the agent's failure. So an incomplete run is refused, unless ``common``
    (compare on the tasks every run finished) or ``allow_incomplete`` (count them as wrong, said in a
    warning). Timeouts are the agent's results and stay.
    """
    unfinished = [r.unfinished_tasks() for r in runs]
    keys = [_keys(r) for r in runs]
    if any(unfinished) and not allow_incomplete:
        if not common:
            details = [
                f"{lab}: {len(u)} task(s) not finished ({_show({('', t) for t in u})})"
                for lab, u in zip(labels, unfinished, strict=True)
                if u
            ]
            raise CtbError(
                "a paired comparison on an incomplete run would count its unfinished tasks as wrong: "
                + "; ".join(details)
                + ". Finish the run (ctb-eval run --resume DIR --retry-errors), compare on the tasks every "
                "run finished (--common-tasks), or count them as wrong (--allow-incomplete)."
            )
        keys = [{k for k in ks if k[1] not in u} for ks, u in zip(keys, unfinished, strict=True)]
    incomplete_warnings = [
        f"{lab}: {len(u)} unfinished task(s) "
        + ("count as wrong in the comparison (--allow-incomplete)" if allow_incomplete else "left out")
        for lab, u in zip(labels, unfinished, strict=True)
        if u
    ]
    shared = set.intersection(*keys) if keys else set()
    warnings: list[str] = [
        *incomplete_warnings,
        *content_warnings(runs, labels),
        *harness_warnings(runs, labels),
    ]
    commits = {r.info.task_set_commit for r in runs if r.info.task_set_commit not in (None, "none")}
    if len(commits) > 1:
        warnings.append(
            "the runs were made on different task-set commits ("
            + ", ".join(sorted(c[:12] for c in commits if c))
            + "); all are scored against the "
            "same task set, but the agents may have seen different statements or recordings"
        )
    warnings += harness_version_warnings([r.info for r in runs])
    dropping_unfinished = any(unfinished) and not allow_incomplete
    if all(k == keys[0] for k in keys) and not dropping_unfinished:
        return list(runs), warnings
    if not common:
        details = []
        for lab, k in zip(labels, keys, strict=True):
            extra = k - shared
            details.append(
                f"{lab}: {len(k)} task(s)"
                + (f", {len(extra)} not in every run ({_show(extra)})" if extra else "")
            )
        raise CtbError(
            "the runs were not made on the same tasks, so a paired comparison is not defined: "
            + "; ".join(details)
            + ". Use --common-tasks to compare on the "
            f"{len(shared)} task(s) every run has."
        )
    if not shared:
        raise CtbError("the runs have no task in common; nothing to compare")
    for lab, k in zip(labels, keys, strict=True):
        dropped = k - shared
        if dropped:
            warnings.append(
                f"{lab}: compared on {len(shared)} common task(s); {len(dropped)} task(s) left out "
                f"({_show(dropped)})"
            )
    return [r.restricted(shared) for r in runs], warnings


def content_warnings(runs: Sequence[ScoredRun], labels: Sequence[str]) -> list[str]:
    """Tasks two runs scored under one id although their content differed when each ran."""
    out = []
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            a, b = runs[i].content_hashes, runs[j].content_hashes
            differ = sorted(t for t in a.keys() & b.keys() if a[t] != b[t])
            if differ:
                shown = ", ".join(differ[:5]) + (f" and {len(differ) - 5} more" if len(differ) > 5 else "")
                out.append(
                    f"{labels[i]} and {labels[j]} ran {len(differ)} task(s) with different content under "
                    f"the same id ({shown}): the task was edited between the runs, so their results on "
                    "it are not comparable"
                )
    return out


def harness_warnings(runs: Sequence[ScoredRun], labels: Sequence[str]) -> list[str]:
    """Runs of one harness made with different versions of it (the harness matters: paper Table 23)."""
    by_harness: dict[str, list[tuple[str, frozenset[str]]]] = {}
    for run, label in zip(runs, labels, strict=True):
        if run.info.harness:
            by_harness.setdefault(run.info.harness, []).append((label, run.harness_versions))
    out = []
    for harness, entries in by_harness.items():
        versions = sorted({v for _, vs in entries for v in vs})
        if len(versions) > 1:
            detail = "; ".join(f"{lab}: {', '.join(sorted(vs)) or 'unknown'}" for lab, vs in entries)
            out.append(
                f"harness {harness} ran at different versions ({detail}): differences may be the "
                "harness's, not the model's"
            )
    return out


def compare(
    runs: Sequence[ScoredRun],
    *,
    common: bool = False,
    n_resamples: int | None = None,
    workers: int | None = None,
    min_stratum: int = 10,
    with_se: bool = False,
    allow_incomplete: bool = False,
) -> Comparison:
    """Run A (``runs[0]``) against every other run, Holm-adjusted within family and metric (D.2).

    ``with_se`` also returns every run's standard errors from the same draw when the runs were not
    restricted to common tasks (a report needs both; the numbers are those of ``standard_errors``).
    """
    from ctbench.scoring import stats

    if len(runs) < 2:
        raise CtbError("a comparison needs at least two runs (A, then one or more runs to compare it with)")
    # A run's scores are one row per task (its mean over trials): paired tests are across tasks.
    names, labels = unique_names(runs)
    aligned, warnings = align(runs, labels, common=common, allow_incomplete=allow_incomplete)
    n_resamples = stats.N_RESAMPLES if n_resamples is None else n_resamples
    by_name = {n: r.scores for n, r in zip(names, aligned, strict=True)}
    pairs = [(names[0], n) for n in names[1:]]
    se = None
    try:
        if with_se and all(x is y for x, y in zip(aligned, runs, strict=True)):
            se, results = stats.run_statistics(by_name, pairs, n_resamples=n_resamples, workers=workers)
        else:
            results = stats.compare_scope(by_name, pairs, n_resamples=n_resamples, workers=workers)
    except ValueError as exc:  # the alignment above makes this a bug, but say it plainly
        raise CtbError(f"cannot compare the runs: {exc}") from None
    plugins = sorted({s.family for s in aligned[0].scores} - set(FAMILY_TITLES))  # installed by entry point
    n_tasks = {f: sum(1 for s in aligned[0].scores if s.family == f) for f in [*FAMILY_TITLES, *plugins]}
    for fam, n in n_tasks.items():
        if 0 < n < min_stratum:
            warnings.append(
                f"only {n} {fam} task(s) compared (< {min_stratum}): paired intervals and tests are too "
                "wide to mean much"
            )
    return Comparison(
        runs=aligned, names=names, labels=labels, results=results, warnings=warnings, n_tasks=n_tasks, se=se
    )


def compare_folders(
    run_dirs: Sequence[Path | str],
    task_set: TaskSet,
    *,
    common: bool = False,
    n_resamples: int | None = None,
    scorer: Scorer | None = None,
    allow_incomplete: bool = False,
    labels: Mapping[str, str] | None = None,
    prices: Prices | None = None,
) -> Comparison:
    """Score the run folders against the task set and compare them (``ctb-eval compare``)."""
    scorer = scorer or Scorer(task_set, prices=prices)
    runs = [scorer.score_folder(d) for d in run_dirs]
    if labels:
        apply_labels(runs, labels)
    return compare(
        runs,
        common=common,
        n_resamples=n_resamples,
        min_stratum=scorer.min_stratum,
        allow_incomplete=allow_incomplete,
    )


# --------------------------------------------------------------------------- Table 25


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    if value is None:
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def result_cells(r: PairedResult, *, split: bool, test: bool = False) -> list[Cell]:
    """A paired result's figures after its labels, as Tables 25-27 print them: A, B and A-B in percent,
    then raw interval, p-values (the test's name with ``test``) and discordant counts when ``split``
    (JSON), else the interval and p-values formatted for reading."""
    cells: list[Cell] = [percent(r.a), percent(r.b), percent(r.diff)]
    if split:
        return [
            *cells,
            percent(r.ci_low),
            percent(r.ci_high),
            r.p_value,
            r.p_holm,
            *([r.test] if test else []),
            r.a_only,
            r.b_only,
        ]
    ci = "–" if r.ci_low is None else f"[{_num(percent(r.ci_low))}, {_num(percent(r.ci_high))}]"
    disc = "" if r.a_only is None else f"{r.a_only} / {r.b_only}"
    return [*cells, ci, _p(r.p_value), _p(r.p_holm), disc]


def comparison_table(cmp: Comparison, *, split: bool = False) -> Table:
    """Table 25's shape: one row per comparator, family and metric; differences in percentage points.

    ``split`` keeps every number in its own column as a raw float (for JSON); otherwise intervals and
    p-values are formatted for reading.
    """
    label = dict(zip(cmp.names, cmp.labels, strict=True))
    a_label = cmp.labels[0]
    if split:
        columns = [
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
            "test",
            "A only",
            "B only",
        ]
    else:
        columns = [
            "Family",
            "Metric",
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
    table = Table(
        title=f"Paired comparisons (as in the paper's Table 25): A = {a_label}, difference A minus B",
        columns=columns,
        key="table25",
    )
    order = {f: i for i, f in enumerate(FAMILY_TITLES)}
    rows = sorted(
        cmp.results,
        key=lambda r: (order.get(r.family, len(order)), _metric_order(r.metric), cmp.names.index(r.run_b)),
    )
    for r in rows:
        fam, metric, b = (
            family_label(r.family),
            METRIC_TITLES.get(r.metric, r.metric),
            label[r.run_b],
        )
        head: list[Cell] = [fam, metric, a_label, b, r.n] if split else [fam, metric, b, r.n]
        table.add(*head, *result_cells(r, split=split, test=True))
    n_res = cmp.results[0].n_resamples if cmp.results else 0
    table.note = (
        "Accuracy: exact two-sided McNemar test on discordant tasks (A only / B only). Loc, ID/Rest and "
        f"evidence coverage: paired bootstrap over tasks ({n_res:,} resamples), percentile 95% interval "
        "and two-sided sign probability. p Holm: Holm-adjusted within each family and metric across the "
        f"{len(cmp.names) - 1} comparison(s); intervals are not adjusted."
    )
    return table


def cost_table(cmp: Comparison) -> Table | None:
    """What each compared run spent on the compared tasks (None when no run has a cost figure):
    per family the tasks with a cost, the mean per task and the total, in the cost's currency."""
    sections = [cost_section(r) for r in cmp.runs]
    if not any(sections):
        return None
    currencies = sorted({s["currency"] for s in sections if s})
    unit = currencies[0] if len(currencies) == 1 else "mixed"
    table = Table(
        title="Cost on the compared tasks",
        columns=["Run", "Family", "n with cost", f"Cost/task ({unit})", f"Cost ({unit})", "Source"],
        key="compare_cost",
    )
    for label, section in zip(cmp.labels, sections, strict=True):
        for fam in cmp.n_tasks:  # the built-ins, then plug-in families the runs hold
            if not cmp.n_tasks.get(fam):
                continue
            spent = section["by_family"].get(fam, {}) if section else {}
            src = spent.get("sources") or {}
            source = ", ".join(f"{n} {k}" for k, n in src.items() if n) or "none"
            table.add(
                label,
                family_label(fam),
                spent.get("n", 0),
                spent.get("mean"),
                spent.get("total"),
                source,
            )
    table.digits = {table.columns[3]: 4, table.columns[4]: 4}
    table.best = {table.columns[3]: "min", table.columns[4]: "min"}
    table.note = (
        "Source counts attempts: reported by the harness, priced from tokens with --prices, or unknown. "
        "Timeouts count with what they spent."
    )
    return table


def _metric_order(metric: str) -> int:
    order = ["accuracy", "loc_iou", "id_iou", "rest_iou", "link_iou", "evidence_coverage"]
    return order.index(metric) if metric in order else len(order)
