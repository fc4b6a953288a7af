"""Reports over one or more runs, in the shapes of the paper's tables (section 5, appendices B-D).

Every table is a :class:`ctbench.tables.Table`, so text, Markdown, LaTeX and JSON come from one place
(:data:`ctbench.tables.TABLE_FORMATS`); HTML (:mod:`.report_html`) lays the same tables out with charts.
The formats are chosen through :mod:`.report_formats`, which imports this module, never the reverse.
Figures are percentages; "x ± y" is the value and its standard error across tasks (D.1). For JSON
the tables are built *split*: every number in its own column as a raw float, never a formatted string.

Tables, by the paper's numbering: 5 overall, 6 efficiency, 13 structural consistency, 16 entry match
and hierarchical scores, 18 evidence on correct answers, 19 by category, 20 by observability, 22 by
heterogeneity, 25 paired comparisons (two runs or more), 29 failure modes; then the remaining
metadata breakdowns (root-cause count, chain length, protocol complexity, golden-length tier, path
count), because each stratification field deserves a look. Strata below the task set's
``min_stratum`` are marked in a "note" column.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctbench.collector import full_collections_deferred
from ctbench.errors import CtbError
from ctbench.evaluate import family_view
from ctbench.evaluate.compare import Comparison, compare, comparison_table, unique_names
from ctbench.evaluate.paper_tables import paper_tables
from ctbench.evaluate.prices import Prices
from ctbench.evaluate.score import BREAKDOWNS, ScoredRun, Scorer, apply_labels, build_scores
from ctbench.evaluate.scorecard import FAMILY_TITLES, headline, percent, pm, unfinished_text
from ctbench.plugin_api.runs import families_of
from ctbench.scoring.stats import BASE_SEED, N_RESAMPLES
from ctbench.store import TaskSet
from ctbench.tables import Cell, Table

SMALL_STRATA = "stratum/strata have fewer than"
"""How a run's small-strata warning reads (score.build_scores); a report says it once, not once per run."""
FIELD_TITLES = {
    "category": "root-cause category",
    "observability": "observability",
    "heterogeneity": "heterogeneity",
    "root_cause_count": "root-cause count",
    "chain_length": "propagation-chain length",
    "protocol_complexity": "protocol complexity",
    "golden_tier": "golden-length tier",
    "path_count": "path count",
}


@dataclass
class ReportedRun:
    """One run in a report: its display label and its scores.json document."""

    label: str
    name: str
    scores: dict[str, Any]
    run: ScoredRun


@dataclass
class Report:
    """Everything a report shows: the runs (in the order given) and, for two runs or more, the paired
    comparisons of the first run against each other one."""

    runs: list[ReportedRun]
    comparison: Comparison | None
    category_names: dict[str, str]
    min_stratum: int
    warnings: list[str] = field(default_factory=list)
    level_order: dict[str, list[str]] = field(default_factory=dict)
    """Configured order of named levels (heterogeneity low -> high, golden tiers short -> long)."""
    scorer: Scorer | None = None
    """The scorer the runs were scored with: the HTML drill-down loads each task's detail through it."""
    workers: int | None = None
    """Processes the HTML drill-down may use (``ctb-eval report --workers``; None: every core it may use)."""

    def ordered(self, name: str, values: Sequence[str]) -> list[str]:
        """Strata values of a field in reading order: configured levels first, in their order."""
        order = self.level_order.get(name, [])
        return sorted(
            values, key=lambda v: (order.index(v) if v in order else len(order), list(values).index(v))
        )


@full_collections_deferred()  # the report keeps what it makes: see ctbench.collector
def build_report(
    run_dirs: Sequence[Path | str],
    task_set: TaskSet,
    *,
    n_resamples: int | None = None,
    scorer: Scorer | None = None,
    workers: int | None = None,
    progress: Callable[[str], None] | None = None,
    label_of: Mapping[str, str] | None = None,
    prices: Prices | None = None,
) -> Report:
    """Score every run folder against the task set and compare the first with the others.

    Runs over different task selections are each reported on their own tasks; the paired table then
    uses the tasks common to all of them, with a warning (``ctb-eval compare`` refuses instead).
    """
    if not run_dirs:
        raise CtbError("give at least one run folder")
    scorer = scorer or Scorer(task_set, prices=prices)
    scored: list[ScoredRun] = []
    for d in run_dirs:
        if progress:
            progress(f"scoring {d}")
        scored.append(scorer.score_folder(d))
    if label_of:  # --label RUN=TEXT
        apply_labels(scored, label_of)
    from ctbench.scoring.stats import standard_errors_many

    names, labels = unique_names(scored)
    for name, run in zip(names, scored, strict=True):
        run.info = replace(run.info, name=name)  # runs are told apart by name
    warnings: list[str] = []
    comparison = None
    if len(scored) > 1:
        if progress:
            progress("standard errors and paired comparisons")
        try:
            comparison = compare(
                scored,
                common=True,
                n_resamples=n_resamples,
                workers=workers,
                min_stratum=scorer.min_stratum,
                with_se=True,
            )
        except CtbError as exc:
            warnings.append(f"comparison left out: {exc}")
    se = comparison.se if comparison is not None else None
    if se is None:  # one run, or runs on different tasks: each run's errors on all its own tasks
        se = standard_errors_many(
            {r.info.name: r.scores for r in scored}, n_resamples=n_resamples or N_RESAMPLES, workers=workers
        )
    runs = [
        ReportedRun(
            label=label,
            name=run.info.name,
            run=run,
            scores=build_scores(
                run,
                min_stratum=scorer.min_stratum,
                n_resamples=n_resamples,
                workers=workers,
                se=se[run.info.name],
            ),
        )
        for label, run in zip(labels, scored, strict=True)
    ]
    small = [r.label for r in runs if any(SMALL_STRATA in w for w in r.scores["warnings"])]
    warnings = [
        f"{r.label}: {w}" for r in runs for w in r.scores["warnings"] if SMALL_STRATA not in w
    ] + warnings
    if small:  # once per report: every stratum table marks its small strata itself
        warnings.append(
            f"strata with fewer than {scorer.min_stratum} tasks of a family are marked "
            f"'n < {scorer.min_stratum}' in the tables; their figures are indicative only "
            f"({len(small)} of {len(runs)} run(s) have such strata)"
        )
    if comparison is not None:
        warnings.extend(f"comparison: {w}" for w in comparison.warnings)
    tax, cfg = task_set.taxonomy, task_set.config
    return Report(
        runs=runs,
        comparison=comparison,
        min_stratum=scorer.min_stratum,
        warnings=warnings,
        category_names={c.id: c.name for c in tax.categories},
        level_order=level_order(cfg),
        scorer=scorer,
        workers=workers,
    )


def level_order(config: Any) -> dict[str, list[str]]:
    """The configured level names of the heterogeneity and golden-tier fields, low to high."""
    out: dict[str, list[str]] = {}
    for name, per_family in (("heterogeneity", config.heterogeneity), ("golden_tier", config.golden_tiers)):
        names: list[str] = []
        for levels in (per_family.rca, per_family.path, per_family.topology or []):
            names += [lv.name for lv in levels if lv.name not in names]
        out[name] = names
    return out


# --------------------------------------------------------------------------- cells


class _Cols:
    """Builds header and cells for "value ± SE" columns, either formatted or split into two floats."""

    def __init__(self, split: bool) -> None:
        self.split = split

    def head(self, name: str, with_se: bool = True) -> list[str]:
        return [name, f"{name} SE"] if self.split and with_se else [name]

    def cell(self, value: float | None, se: float | None = None, with_se: bool = True) -> list[Cell]:
        if not with_se:
            return [percent(value)]
        if self.split:
            return [percent(value), percent(se)]
        return [pm(value, se)]


def _headline(summ: Mapping[str, Any], fam: str) -> list[tuple[float | None, str]]:
    """Table 5's four figures of a family with their SE keys: the scorecard's headline, then evidence."""
    return [(summ[key], se_key) for _, key, se_key in headline(fam, summ)] + [
        (summ["evidence"]["coverage"], "evidence_coverage")
    ]


# --------------------------------------------------------------------------- the tables


def table_runs(report: Report) -> Table:
    t = Table(
        title="Runs",
        key="runs",
        columns=[
            "Run",
            "Name",
            "Agent",
            "Model",
            "Harness",
            "Version",
            "Task-set commit",
            "Tasks",
            "Trials",
            "Incomplete",
            "Sandbox",
        ],
    )
    for r in report.runs:
        run = r.scores["run"]
        commit = run["task_set_commit"]
        sandbox = run.get("sandbox")
        t.add(
            r.label,
            r.name,
            run["agent"],
            run["model"],
            run["harness"],
            run["harness_version"],
            f"release {run['release']['version']}"
            if run.get("release")
            else (commit[:12] if commit else None),
            r.scores["n_tasks"],
            r.scores.get("trials", 1),
            f"yes: {unfinished_text(r.scores) or 'unfinished tasks'}" if r.scores["incomplete"] else "no",
            "unsandboxed" if sandbox == "none" else sandbox,
        )
    return t


def table_incomplete(report: Report) -> Table:
    """The banner of a report with an incomplete run: first, before any figure."""
    t = Table(
        title="INCOMPLETE RUNS: their unfinished tasks count as wrong in every figure below",
        key="incomplete",
        columns=["Run", "Infrastructure errors", "Timeouts", "Missing results", "What to do"],
    )
    for r in report.runs:
        if not r.scores["incomplete"]:
            continue
        u = r.scores.get("unfinished") or {"missing_results": len(r.scores.get("missing_results", []))}
        t.add(
            r.label,
            u.get("infrastructure_errors", 0),
            u.get("timeouts", 0),
            u.get("missing_results", 0),
            "ctb-eval run --resume <run folder> --retry-errors",
        )
    t.note = (
        "Figures of an incomplete run are not the agent's: finish the run, or read them as a lower bound."
    )
    return t


def table5(report: Report, split: bool) -> Table:
    c = _Cols(split)
    cols = [
        "Run",
        "RCA n",
        *c.head("RCA Acc"),
        *c.head("RCA Loc"),
        *c.head("RCA ID"),
        *c.head("RCA Evid."),
        "Path n",
        *c.head("Path Acc"),
        *c.head("Path Loc"),
        *c.head("Path Rest"),
        *c.head("Path Evid."),
    ]
    t = Table(title="Overall pass@1 capabilities (as in the paper's Table 5)", columns=cols, key="table5")
    for r in report.runs:
        row: list[Cell] = [r.label]
        for fam in ("rca", "path"):
            summ, se = r.scores["summary"][fam], r.scores["se"][fam]
            row.append(summ["n_tasks"])
            for value, key in _headline(summ, fam):
                row += c.cell(value, se.get(key))
        t.rows.append(row)
    t.best = {col: "max" for col in cols if col not in ("Run", "RCA n", "Path n") and not col.endswith(" SE")}
    scoring = (
        report.runs[0].scores["scoring"]
        if report.runs
        else {"n_resamples": N_RESAMPLES, "base_seed": BASE_SEED}
    )
    t.note = (
        "Percent ± SE across tasks (not across repeated runs). Acc and IoUs are task means (SE = sd/sqrt(n)); "
        f"Evid. is pooled golden-action coverage with a bootstrap SE ({scoring['n_resamples']:,} resamples, "
        f"base seed {scoring['base_seed']}). Unanswered tasks count as wrong and 0."
    )
    return t


EXTRA_FAMILY_COLUMNS: dict[str, tuple[str, str, str]] = {
    "topology": ("Acc", "Node-pair IoU", "Link IoU"),
}
"""Headline column names of the families after the paper's two (the scorecard's HEADLINE keys)."""


def table_families(report: Report, split: bool) -> list[Table]:
    """Table 5's figures for each family beyond RCA and path that a run holds tasks of (topology
    restoration: accuracy, node-pair IoU as Loc, link IoU), one table per family."""
    c = _Cols(split)
    out = []
    plugins = {  # plug-in families (scoring/families.py): Acc, Loc and their first part
        fam: ("Acc", "Loc", summ["columns"][0] if summ["columns"] else "-")
        for r in report.runs
        for fam in families_of(r.scores)
        if fam not in FAMILY_TITLES and (summ := r.scores["summary"].get(fam))
    }
    for fam, names in {**EXTRA_FAMILY_COLUMNS, **plugins}.items():
        cols = ["Run", "n", *(h for name in (*names, "Evid.") for h in c.head(name))]
        title = f"{FAMILY_TITLES[fam]} restoration" if fam in FAMILY_TITLES else family_view.label(fam)
        title = title[:1].upper() + title[1:]
        t = Table(title=f"{title}: pass@1", columns=cols, key=f"table5_{fam}")
        for r in report.runs:
            summ = r.scores["summary"].get(fam)
            if not summ or not summ["n_tasks"]:
                continue
            se = r.scores["se"].get(fam) or {}
            row: list[Cell] = [r.label, summ["n_tasks"]]
            for value, key in _headline(summ, fam):
                row += c.cell(value, se.get(key))
            t.rows.append(row)
        t.best = {col: "max" for col in cols if col not in ("Run", "n") and not col.endswith(" SE")}
        t.note = (
            "Percent ± SE across tasks. Exact: the predicted links are the gold links; node-pair IoU ignores "
            "ports (which nodes are cabled); link IoU counts a link only with both ports right."
            if fam == "topology"
            else "Percent ± SE across tasks; the figures as the task family's plug-in defines them."
        )
        out.append(t)
    return out


def table_pass_k(report: Report, split: bool) -> Table:
    """pass@k and pass^k of every run made with ``--trials`` (unbiased estimators, over tasks)."""
    from ctbench.scoring.trials import pass_k_rows

    c = _Cols(split)
    t = Table(
        title="pass@k and pass^k over repeated trials",
        key="pass_k",
        columns=["Run", "Family", "Trials", "n", "Estimator", *c.head("Value")],
    )
    for r in report.runs:
        section = r.scores.get("pass_k")
        if not section:
            continue
        for family, n, name, value, se in pass_k_rows(section):
            t.add(r.label, family_view.label(family), section["trials"], n, name, *c.cell(value, se))
    t.note = (
        "Percent ± SE across tasks. Per task, unbiased estimators over its n trials of which c are "
        "correct: pass@k = 1 - C(n-c, k)/C(n, k) (at least one of k right), pass^k = C(c, k)/C(n, k) "
        "(all k right); then the mean over tasks. pass@1 is Table 5's accuracy."
    )
    return t


def table6(report: Report, split: bool) -> Table:
    costs = [r.scores.get("cost") for r in report.runs]
    currencies = sorted({c["currency"] for c in costs if c})
    unit = currencies[0] if len(currencies) == 1 else "mixed"
    cost_cols = [f"Cost/task ({unit})", f"Cost ({unit})"] if currencies else []
    t = Table(
        title="Efficiency and cost (as in the paper's Table 6)",
        key="table6",
        columns=[
            "Run",
            "Family",
            "n",
            "Rounds",
            "Latency (s)",
            "Input tokens",
            "Output tokens",
            "Total tokens",
            *cost_cols,
        ],
    )
    for r, cost in zip(report.runs, costs, strict=True):
        for fam in families_of(r.scores):  # the built-ins, then plug-in families
            if not (r.scores["summary"].get(fam) or {}).get("n_tasks"):
                continue
            eff = r.scores["summary"]["efficiency"][fam]
            cells: list[Cell] = [r.label, family_view.label(fam), r.scores["summary"][fam]["n_tasks"]]
            for key in ("rounds", "latency_s", "input_tokens", "output_tokens", "total_tokens"):
                mean = eff[key]["mean"]
                if mean is not None and not split and key.endswith("tokens"):
                    cells.append(int(round(mean)))
                else:
                    cells.append(mean)
            if cost_cols:
                spent = cost["by_family"].get(fam, {}) if cost else {}
                cells += [spent.get("mean"), spent.get("total")]
            t.rows.append(cells)
    t.best = {col: "min" for col in t.columns[3:]}
    t.digits = {col: 4 for col in cost_cols}
    parts = [
        "Means per task over the tasks where the harness recorded the figure; medians are in scores.json.",
        rounds_note(report),
        cost_note(report, costs) if cost_cols else "",
    ]
    t.note = " ".join(p for p in parts if p)
    return t


ROUNDS_MEANING = {
    "model requests": "model requests",
    "tool turns": "tool-using turns (the harness reports no request count)",
    "agent steps": "agent steps",
}


def rounds_note(report: Report) -> str:
    """What "Rounds" counts, once, and per run where the harnesses differ (a Codex run without a
    rollout counts tool turns)."""
    kinds = {r.label: sorted(r.run.rounds_kinds) for r in report.runs}
    found = sorted({k for ks in kinds.values() for k in ks})
    if not found:
        return ""
    if len(found) == 1:
        return f"Rounds are {ROUNDS_MEANING.get(found[0], found[0])} in every run."
    parts = [
        f"{', '.join(labels)}: {ROUNDS_MEANING.get(kind, kind)}"
        for kind in found
        if (labels := [lab for lab, ks in kinds.items() if kind in ks])
    ]
    return "Rounds count different things by harness, so compare them with care: " + "; ".join(parts) + "."


def cost_note(report: Report, costs: Sequence[Mapping[str, Any] | None]) -> str:
    """Where the cost figures come from: the harness's report, or tokens times a dated price file."""
    reported = sum(c["sources"]["reported"] for c in costs if c)
    priced = sum(c["sources"]["priced"] for c in costs if c)
    unknown = sum(c["sources"]["unknown"] for c in costs if c)
    files = sorted(
        {f"{p['file']} ({p['currency']}, prices of {p['date']})" for c in costs if c and (p := c["prices"])}
    )
    text = (
        f"Cost/task is the mean over tasks with a cost, Cost the total over every attempt kept, timeouts "
        f"included; {reported} attempt(s) as the harness reported it"
    )
    if priced or files:
        text += f", {priced} priced from tokens with {', '.join(files) or 'a price file'}"
    if unknown:
        text += f", {unknown} without a cost (no price for the model, or no token counts)"
    no_cost = [r.label for r, c in zip(report.runs, costs, strict=True) if not c]
    if no_cost:
        text += f"; no cost for {', '.join(no_cost)}"
    return text + "."


def table13(report: Report, split: bool) -> Table:
    c = _Cols(split)
    t = Table(
        title="Structural consistency (as in the paper's Table 13)",
        key="table13",
        columns=[
            "Run",
            *c.head("RCA triplet IoU"),
            *c.head("Path sequence IoU"),
            *c.head("Path micro edge IoU"),
        ],
    )
    for r in report.runs:
        rca, path = r.scores["summary"]["rca"], r.scores["summary"]["path"]
        se_r, se_p = r.scores["se"]["rca"], r.scores["se"]["path"]
        t.rows.append(
            [
                r.label,
                *c.cell(rca["triplet_iou"] if rca["n_tasks"] else None, se_r.get("triplet_iou")),
                *c.cell(path["sequence_iou"] if path["n_tasks"] else None, se_p.get("sequence_iou")),
                *c.cell(path["micro_edge_iou"], se_p.get("micro_edge_iou")),
            ]
        )
    t.best = {col: "max" for col in t.columns[1:] if not col.endswith(" SE")}
    t.note = (
        "Triplet IoU keeps each (node, object, cause) together; sequence IoU treats each whole ordered path as "
        "one element; micro edge IoU pools directed edges over tasks (bootstrap SE)."
    )
    return t


def table16(report: Report, split: bool) -> Table:
    t = Table(
        title="Exact entry-match and hierarchical RCA scores (as in the paper's Table 16)",
        key="table16",
        columns=["Run", "Gold entries", "ID exact", "ID hierarchical", "Loc exact", "Loc hierarchical"],
    )
    for r in report.runs:
        em = r.scores["summary"]["rca"]["entry_match"]
        if not r.scores["summary"]["rca"]["n_tasks"]:
            continue
        t.add(
            r.label,
            em["n_gold_entries"],
            percent(em["id_exact"]["micro"]),
            percent(em["id_hierarchical"]["micro"]),
            percent(em["loc_exact"]["micro"]),
            percent(em["loc_hierarchical"]["micro"]),
        )
    t.note = (
        "Recall-oriented, pooled over gold RCA entries (optimal one-to-one matching of predicted to gold "
        "entries); not the task-macro IoUs of Table 5. Hierarchical ID credits the taxonomy's L1/L2/L3 "
        "groups; hierarchical Loc credits same cluster, same site and role, or neighbouring nodes. Task-mean "
        "variants are in scores.json."
    )
    return t


def table18(report: Report, split: bool) -> Table:
    t = Table(
        title="Golden-action coverage on exactly correct answers (as in the paper's Table 18)",
        key="table18",
        columns=["Run", "Family", "Correct", "Incomplete", "Freq. (%)", "Cov. (%)"],
    )
    for r in report.runs:
        for fam in family_view.paper_pair_then_present([r.scores]):  # the paper's two, then the others
            summ = r.scores["summary"][fam]
            if not summ["n_tasks"]:
                continue
            corr = summ["evidence_on_correct"]
            t.add(
                r.label,
                family_view.label(fam),
                corr["n_correct"],
                corr["incomplete"],
                percent(corr["incomplete_freq"]),
                percent(corr["coverage"]),
            )
    t.note = (
        "Incomplete: correct answers with at least one golden action not executed; Freq. = Incomplete / "
        "Correct; Cov. pools covered and total golden actions over correct answers. Matching needs the same "
        "device and the same canonical command."
    )
    return t


def _stratum_table(
    report: Report,
    name: str,
    title: str,
    key: str,
    families: Sequence[str],
    split: bool,
    value_title: str,
    value_names: Mapping[str, str] | None = None,
) -> Table:
    third = "ID" if families == ("rca",) else "ID / Rest"
    cols = [
        "Run",
        *(["Family"] if len(families) > 1 else []),
        value_title,
        *(["Name"] if value_names else []),
        "n",
        "Acc",
        "Loc",
        third,
        "Evid.",
        "Note",
    ]
    t = Table(title=title, key=key, columns=cols)
    shown: set[str] = set()  # the families with a row (a cell shows a family's label, not its name)
    for r in report.runs:
        strata = r.scores["breakdowns"][name]["strata"]
        for fam in families:
            for value in report.ordered(name, list(strata)):
                st = strata[value]
                summ = st["metrics"].get(fam)  # a plug-in family's block: only where it has tasks
                if not summ or not summ["n_tasks"]:
                    continue
                small = 0 < summ["n_tasks"] < report.min_stratum
                shown.add(fam)
                row: list[Cell] = [r.label]
                if len(families) > 1:
                    row.append(family_view.label(fam))
                row.append(value)
                if value_names:
                    row.append(value_names.get(value, ""))
                row += [
                    summ["n_tasks"],
                    *(percent(v) for v, _ in _headline(summ, fam)),
                    f"n < {report.min_stratum}" if small else "",
                ]
                t.rows.append(row)
    t.note = (
        f"Percent. Acc and IoUs are task means, Evid. pooled golden-action coverage. Strata with fewer than "
        f"{report.min_stratum} tasks are marked: their figures are too noisy to compare."
    )
    plugins = [f for f in families if family_view.is_plugin(f) and f in shown]
    if plugins:
        t.note += " " + _plugin_third(report, plugins)
    return t


def _plugin_third(report: Report, plugins: Sequence[str]) -> str:
    """What the third figure of a plug-in family's rows is (its first part, as on the scorecard)."""
    said = []
    for fam in plugins:
        summ: Mapping[str, Any] = next((s for r in report.runs if (s := r.scores["summary"].get(fam))), {})
        said.append(f"{family_view.label(fam)}: {(family_view.parts(summ) or ['-'])[0]}")
    return "For a plug-in family the third figure is its first part (" + "; ".join(said) + ")."


def table19(report: Report, split: bool) -> Table:
    t = _stratum_table(
        report,
        "category",
        "RCA results by root-cause category (as in the paper's Table 19)",
        "table19",
        ("rca",),
        split,
        "Category",
        report.category_names,
    )
    t.note = "A task with causes in several categories counts in each. " + t.note
    return t


def table20(report: Report, split: bool) -> Table:
    return _stratum_table(
        report,
        "observability",
        "RCA results by observability (as in the paper's Table 20)",
        "table20",
        ("rca",),
        split,
        "Level",
    )


def table22(report: Report, split: bool) -> Table:
    t = _stratum_table(
        report,
        "heterogeneity",
        "Results by network heterogeneity (as in the paper's Table 22)",
        "table22",
        family_view.paper_pair_then_present(r.scores for r in report.runs),
        split,
        "Level",
    )
    t.note = (
        "h_L = max(distinct vendors, distinct device types) among devices in the golden actions, levels per "
        "family from ctbench.yaml. Low and high strata hold different tasks: differences are correlational. "
        + t.note
    )
    return t


def table29(report: Report, split: bool) -> Table:
    t = Table(
        title="Failure modes of wrong RCA answers (as in the paper's Table 29)",
        key="table29",
        columns=[
            "Run",
            "Wrong",
            "F1 coverage",
            "F2 minimality",
            "F3 object",
            "F4 mechanism",
            "F5 realisation",
        ],
    )
    for r in report.runs:
        fails = r.scores["summary"]["rca"]["failures"]
        if not r.scores["summary"]["rca"]["n_tasks"]:
            continue
        t.add(r.label, fails["n_wrong"], fails["F1"], fails["F2"], fails["F3"], fails["F4"], fails["F5"])
    t.note = (
        "Assigned automatically in the paper's priority order: F5 unparsable or missing answer, F1 a gold cause "
        "missing (fewer causes than gold, or one neither returned nor named by label or node), F2 extra causes "
        "beside every gold one, then per entry F4 wrong mechanism before F3 wrong node/object."
    )
    return t


def more_breakdowns(report: Report, split: bool) -> list[Table]:
    out = []
    every = family_view.paper_pair_then_present(r.scores for r in report.runs)  # topology, plug-ins too
    fams = {
        "root_cause_count": ("rca",),
        "chain_length": ("rca",),
        "protocol_complexity": every,
        "golden_tier": every,
        "path_count": ("path",),
    }
    for name, _ in BREAKDOWNS:
        if name not in fams:
            continue
        t = _stratum_table(
            report, name, f"Results by {FIELD_TITLES[name]}", f"by_{name}", fams[name], split, "Value"
        )
        if t.rows:
            out.append(t)
    return out


def report_tables(report: Report, *, split: bool = False) -> list[Table]:
    """Every table of the report, in reading order."""
    tables = [
        table_incomplete(report),
        table_runs(report),
        table5(report, split),
        *table_families(report, split),
        table_pass_k(report, split),
        table6(report, split),
        table13(report, split),
        table16(report, split),
        table18(report, split),
        table19(report, split),
        table20(report, split),
        table22(report, split),
    ]
    tables.extend(
        paper_tables(
            [(r.label, r.run) for r in report.runs],
            split=split,
            se={r.label: r.scores["se"] for r in report.runs},
        )
    )
    if report.comparison is not None:
        tables.append(comparison_table(report.comparison, split=split))
    tables.append(table29(report, split))
    tables.extend(more_breakdowns(report, split))
    if report.warnings:
        tables.append(
            Table(title="Warnings", key="warnings", columns=["Warning"], rows=[[w] for w in report.warnings])
        )
    return [t for t in tables if t.rows or t.key in ("table5",)]
