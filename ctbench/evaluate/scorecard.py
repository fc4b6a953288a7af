"""The scorecard: one run's headline figures, in the shape of the paper's Table 5.

Printed at the end of ``ctb-eval run`` and by ``ctb-eval score``. It reads a scores.json document
only (never the run folder), so what is printed is exactly what was written. In a terminal it is a
rich table with colour; piped or in CI logs the same table in plain characters.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import IO, Any

from ctbench.plugin_api.runs import families_of
from ctbench.tables import text_width

FAMILY_TITLES = {"rca": "RCA", "path": "Path", "topology": "Topology"}
"""The built-ins' short names as tables show them; a plug-in is shown by its title (:func:`family_label`)."""


def installed_title(fam: str) -> str:
    """What the installed family calls its question (its ``title``: "root-cause analysis"); the name when
    it is not installed (a report of a run scored elsewhere) or does not load."""
    from ctbench.scoring.families import families

    try:
        found = families().get(fam)
    except Exception:  # noqa: BLE001 - a broken plug-in must not break a view of other families
        found = None
    return str(getattr(found, "title", "") or fam)


def family_label(fam: str) -> str:
    """How a family is named for people in a table, chart or line: the built-ins' short titles ("RCA",
    "Path", "Topology"), a plug-in by its own title ("down-port audit"), never by its entry-point name
    alone. Only a plug-in's label reads the installed families."""
    return FAMILY_TITLES.get(fam) or installed_title(fam)


HEADLINE: dict[str, tuple[tuple[str, str, str], ...]] = {
    # (column, summary key, se key)
    "rca": (
        ("Acc", "accuracy", "accuracy"),
        ("Loc", "loc_iou", "loc_iou"),
        ("ID / Rest", "id_iou", "id_iou"),
    ),
    "path": (
        ("Acc", "accuracy", "accuracy"),
        ("Loc", "loc_iou", "loc_iou"),
        ("ID / Rest", "rest_iou", "rest_iou"),
    ),
    # topology restoration: Loc is the node-pair IoU (ports ignored), the third column the link IoU
    "topology": (
        ("Acc", "accuracy", "accuracy"),
        ("Loc", "loc_iou", "loc_iou"),
        ("ID / Rest", "link_iou", "link_iou"),
    ),
}


UNFINISHED_NAMES: dict[str, str] = {
    "infrastructure_errors": "infrastructure error(s)",
    "timeouts": "timeout(s)",
    "missing_results": "missing result(s)",
}
"""scores.json ``unfinished`` counts -> how the scorecard and the reports name them."""


def unfinished_text(scores: Mapping[str, Any]) -> str:
    """``2 infrastructure error(s), 1 timeout(s)`` of a scores.json document; empty when it finished
    (documents written before the counts existed fall back to their missing results)."""
    unfinished = scores.get("unfinished") or {"missing_results": len(scores.get("missing_results", []))}
    return ", ".join(f"{unfinished[k]} {name}" for k, name in UNFINISHED_NAMES.items() if unfinished.get(k))


def incomplete_banner(scores: Mapping[str, Any]) -> str | None:
    """The one line every view of an incomplete run starts with; ``None`` for a complete run."""
    if not scores.get("incomplete"):
        return None
    what = unfinished_text(scores) or "unfinished tasks"
    return (
        f"INCOMPLETE RUN: {what}; they count as wrong (0 on every metric) in every figure, so these are "
        f"not the agent's scores. Finish it: ctb-eval run --resume <run folder> --retry-errors"
    )


def percent(value: float | None) -> float | None:
    """A fraction as a number of percent (tables keep numbers; each renderer formats them)."""
    return None if value is None else 100.0 * value


def pct(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{100.0 * value:.{digits}f}"


def pm(value: float | None, se: float | None) -> str:
    """``63.99 ± 2.10`` (percent); the ± part is left out when the SE is undefined (< 2 tasks)."""
    if value is None:
        return "–"
    return pct(value) if se is None else f"{pct(value)} ± {pct(se)}"


def count(value: float) -> str:
    """A count as printed: whole numbers as they are, a mean over trials with two decimals."""
    return f"{value:.2f}" if isinstance(value, float) and not value.is_integer() else str(int(value))


def headline(fam: str, summ: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """A family's headline columns: the built-ins' from :data:`HEADLINE`; a plug-in's Acc, Loc and its
    first part."""
    if fam in HEADLINE:
        return HEADLINE[fam]
    third = [(f"{c}", c, c) for c in summ["columns"][:1]]
    return (("Acc", "accuracy", "accuracy"), ("Loc", "loc_iou", "loc_iou"), *third)


def headline_rows(scores: Mapping[str, Any]) -> list[list[str]]:
    """Table 5 cells for one run: family, n, Acc, Loc, ID/Rest, Evidence (each ± SE)."""
    rows: list[list[str]] = []
    for fam in families_of(scores):
        summ = scores["summary"].get(fam)
        if not summ or not summ["n_tasks"]:
            continue
        se = scores["se"][fam]
        cells = [family_label(fam), str(summ["n_tasks"])]
        cells += [pm(summ[key], se.get(se_key)) for _, key, se_key in headline(fam, summ)]
        cells += ["–"] * (5 - len(cells))
        cells.append(pm(summ["evidence"]["coverage"], se.get("evidence_coverage")))
        rows.append(cells)
    return rows


def _usage_line(eff: Mapping[str, Any]) -> str:
    parts = []
    for key, name, digits in (
        ("rounds", "rounds", 1),
        ("latency_s", "latency s", 1),
        ("input_tokens", "input tok", 0),
        ("output_tokens", "output tok", 0),
        ("total_tokens", "total tok", 0),
    ):
        mean = eff[key]["mean"]
        if mean is not None:
            parts.append(f"{name} {mean:,.{digits}f}")
    return ", ".join(parts) if parts else "not recorded"


def print_scorecard(scores: Mapping[str, Any], file: IO[str] | None = None) -> None:
    """Print the scorecard of one scores.json document."""
    from rich.console import Console
    from rich.table import Table

    out = file if file is not None else sys.stdout
    console = Console(file=out, highlight=False, soft_wrap=False)
    if not console.is_terminal or os.environ.get("COLUMNS"):
        console.width = text_width(out)  # $COLUMNS, else a file or a pipe: never folded
    run = scores["run"]
    who = run["agent"] or run["name"]
    if run.get("model"):
        who = f"{who} + {run['model']}"
    trials = scores.get("trials", 1)
    n_what = (
        f"{scores['n_tasks']} task(s)"
        if trials == 1
        else f"{scores['n_tasks']} task(s) x {trials} trials; figures are over tasks, each task's mean "
        "over its trials (Acc = pass@1)"
    )
    table = Table(
        title=f"Scorecard: {who}  (run {run['name']}, {n_what})",
        title_justify="left",
        caption="Percent ± standard error across tasks. Acc and IoUs are task means; Evidence is pooled "
        "golden-action coverage (bootstrap SE, "
        f"{scores['scoring']['n_resamples']:,} resamples).",
        caption_justify="left",
    )
    banner = incomplete_banner(scores)
    if banner:
        console.print(f"[bold red]{_escape(banner)}[/bold red]", soft_wrap=True)
    table.add_column("Family")
    table.add_column("n", justify="right")
    topology = bool((scores["summary"].get("topology") or {}).get("n_tasks"))
    for col in ("Acc", "Loc", "ID / Rest / Link" if topology else "ID / Rest", "Evidence"):
        table.add_column(col, justify="right")
    for row in headline_rows(scores):
        table.add_row(*row)
    console.print(table)
    if not scores["n_tasks"]:
        console.print("no task was scored: the run selected no task and finished none", soft_wrap=True)

    lines: list[str] = []
    for fam in families_of(scores):
        summ = scores["summary"].get(fam)
        if not summ or not summ["n_tasks"]:
            continue
        title = family_label(fam)
        status = dict(summ["status"])
        # one name for an answer that could not be read, as the run's progress lines say: a blank answer
        # is unparsable too (scores.json keeps the two counts apart)
        status["unparsable"] = status.get("unparsable", 0) + status.pop("empty", 0)
        not_answered = {k: v for k, v in status.items() if k != "answered" and v}
        state = ", ".join(f"{v} {k}" for k, v in not_answered.items())
        correct = f"{count(summ['n_correct'])}/{summ['n_tasks']} correct"
        if "n_task_trials" in summ:
            correct = f"{count(summ['n_correct'])} of {summ['n_tasks']} tasks correct (mean over trials)"
        lines.append(
            f"{title}: {correct}"
            + (
                f"; not answered ({summ['n_task_trials']} task-trials): {state}"
                if state and "n_task_trials" in summ
                else ""
            )
            + (f"; not answered: {state}" if state and "n_task_trials" not in summ else "")
        )
        if fam == "rca":
            lines.append(
                f"  triplet IoU {pct(summ['triplet_iou'])}; hierarchical ID "
                f"{pct(summ['entry_match']['id_hierarchical']['micro'])} vs exact "
                f"{pct(summ['entry_match']['id_exact']['micro'])}; hierarchical Loc "
                f"{pct(summ['entry_match']['loc_hierarchical']['micro'])} vs exact "
                f"{pct(summ['entry_match']['loc_exact']['micro'])} (over gold entries)"
            )
            fails = summ["failures"]
            if fails["n_wrong"]:
                counts = ", ".join(f"{m} {fails[m]}" for m in ("F1", "F2", "F3", "F4", "F5") if fails[m])
                lines.append(f"  failure modes of {fails['n_wrong']} wrong answer(s): {counts}")
        elif fam not in FAMILY_TITLES:  # a plug-in family: its parts, as its summary block names them
            lines.append("  " + "; ".join(f"{c} {pct(summ[c])}" for c in summ["columns"]))
        elif fam == "topology":
            lines.append(
                f"  link IoU {pct(summ['link_iou'])} (both ends and ports); Loc is the IoU over "
                "node pairs, ports ignored"
            )
        else:
            lines.append(
                f"  sequence IoU {pct(summ['sequence_iou'])}; micro edge IoU {pct(summ['micro_edge_iou'])}"
            )
        ev = summ["evidence"]
        corr = summ["evidence_on_correct"]
        lines.append(
            f"  evidence: {count(ev['covered'])}/{count(ev['golden'])} golden actions covered, F1 {pct(ev['f1'])}; "
            f"on correct answers {corr['incomplete']}/{corr['n_correct']} incomplete, coverage "
            f"{pct(corr['coverage'])}"
        )
        lines.append(f"  usage per task: {_usage_line(scores['summary']['efficiency'][fam])}")
        passk = (scores.get("pass_k") or {}).get("families", {}).get(fam)
        if passk:
            figures = "; ".join(
                f"{name} {pm(v['value'], v['se'])}" for name, v in passk.items() if name.startswith("pass")
            )
            lines.append(f"  over {scores['pass_k']['trials']} trials per task: {figures}")
    if scores.get("run", {}).get("sandbox") == "none":
        lines.append(
            "unsandboxed: the agent ran without isolation (--sandbox none); it could have read the answers"
        )
    for line in lines:
        console.print(line, soft_wrap=True)  # long lines wrap in the terminal, not in logs
    for warning in scores.get("warnings", []):
        console.print(f"[yellow]warning:[/yellow] {_escape(warning)}", soft_wrap=True)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
