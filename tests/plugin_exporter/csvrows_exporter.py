"""An exporter plug-in as an outside package would write it: it imports ``ctbench.plugins`` only.

One CSV row per run and family (accuracy and its standard error, the number of result lines, whether
the run is incomplete), and a second file written by another format through ``export_as``.
"""

from __future__ import annotations

import csv
import io

from ctbench.plugins import ExportRequest, ExportSummary, atomic_write_text, refuse_options


def export(request: ExportRequest) -> ExportSummary:
    refuse_options(request)
    summary = ExportSummary("csvrows", request.out)
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(["run", "agent", "trials", "family", "n_tasks", "accuracy", "se", "lines", "incomplete"])
    for run in request.runs():
        record, scores = run.record, run.scores()
        lines = run.results()
        for family in scores.families:
            summ = scores.summary(family)
            if not summ.get("n_tasks"):
                continue
            out.writerow(
                [record.name, record.agent, record.trials, family, summ["n_tasks"],
                 round(summ["accuracy"], 4), round(scores.se(family).get("accuracy") or 0.0, 4),
                 sum(1 for r in lines if r.family == family), scores.incomplete]
            )  # fmt: skip
        summary.warnings += [f"{record.name}: {w}" for w in scores.warnings]
    request.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(request.out / "runs.csv", buf.getvalue())
    summary.files.append("runs.csv")
    board = request.export_as("leaderboard", out=request.out / "board")
    summary.files += [f"board/{f}" for f in board.files]
    return summary
