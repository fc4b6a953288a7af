"""What TTAC Track B's tooling reads, from a run (``ctb-eval export --format trackb``).

A run folder becomes the files Track B's official batch script writes (``result.csv``:
``id,prediction`` in UTF-8 with a BOM and real newlines in quoted cells; ``eval_detail.jsonl``;
``progress.json``), the submission (``submission.csv``: ``ID,Track B`` keyed by scenario id, lines
joined by a literal ``\\n``) and the Phase 3 files (``result/traces.json``, ``results.csv``,
``runtime.json``). The other direction (``ctb-eval import-results --format trackb``) is
:mod:`.trackb_import`. The run is read through the exporters' read API (``ExportRequest.runs``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import UTC, datetime

from ctbench.evaluate.ttac import extract_answer, question_ids
from ctbench.plugin_api import (
    CtbError,
    ExportRequest,
    ExportSummary,
    RunResult,
    atomic_write_bytes,
    refuse_options,
)
from ctbench.replay.trackb.layout import gt_cell


def _csv_bytes(rows: Sequence[Sequence[object]]) -> bytes:
    """CSV as Track B's script writes it: UTF-8 with a BOM, csv's quoting, CRLF row ends."""
    buf = io.StringIO(newline="")
    writer = csv.writer(buf)
    for row in rows:
        writer.writerow(row)
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


def export(request: ExportRequest) -> ExportSummary:
    """The ``trackb`` export format (entry point ``ctbench.exporters``): Track B's files for one run
    folder, written into ``request.out``."""
    refuse_options(request)
    if len(request.run_dirs) != 1:
        raise CtbError("--format trackb exports one run at a time (Track B's files describe one run)")
    (run,) = request.runs()
    task_set, out = request.task_set, request.out
    config = run.record
    lines = sorted(run.results(), key=lambda r: (r.task_id, r.trial))
    summary = ExportSummary("trackb", out)
    first: dict[str, RunResult] = {}
    for r in lines:
        first.setdefault(r.task_id, r)
    ids = {tid: question_ids(task_set, tid) for tid in first}
    when = (config.finished or config.started or datetime.now(tz=UTC)).isoformat()
    files: dict[str, bytes] = {}
    files["result.csv"] = _csv_bytes(
        [["id", "prediction"]] + [[ids[t][0], extract_answer(r.answer_text)] for t, r in first.items()]
    )
    detail = []
    for t, r in first.items():
        entry = {
            "question_id": ids[t][0],
            "session_id": f"{config.name}/{t}",
            "success": r.status in ("answered", "unparsable"),
            "duration_s": r.latency_s,
            "extracted_answer": extract_answer(r.answer_text),
            "agent_reply": r.answer_text or "",
            "timestamp": (r.finished.isoformat() if r.finished else when),
        }
        detail.append(json.dumps(entry, ensure_ascii=False) + "\n")
    files["eval_detail.jsonl"] = "".join(detail).encode("utf-8")
    files["progress.json"] = (json.dumps({"completed": [ids[t][0] for t in first]}, indent=2) + "\n").encode()
    files["submission.csv"] = _csv_bytes(
        [["ID", "Track B"]] + [[ids[t][1], gt_cell(extract_answer(r.answer_text))] for t, r in first.items()]
    )
    # Phase 3: every trial is a completion; the runtime of a problem is its first trial's
    traces = [
        {"scenario_id": ids[r.task_id][1], "completion_id": r.trial, "completion": r.answer_text or ""}
        for r in lines
    ]
    files["result/traces.json"] = (json.dumps(traces, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    files["results.csv"] = _csv_bytes(
        [["scenario_id", "prediction"]]
        + [[ids[t][1], extract_answer(r.answer_text)] for t, r in first.items()]
    )
    runtime = [{"problem_id": ids[t][1], "runtime_seconds": r.latency_s} for t, r in first.items()]
    files["runtime.json"] = (json.dumps(runtime, indent=2) + "\n").encode()
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        atomic_write_bytes(out / name, data)
        summary.files.append(name)
    missing = [t for t in config.tasks if t not in first]
    if missing:
        summary.warnings.append(f"{len(missing)} task(s) of the run have no result: {', '.join(missing[:5])}")
    return summary
