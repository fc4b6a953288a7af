"""What TTAC Track B's tooling reads and writes, both ways (``ctb-eval export|import-results --format trackb``).

Export: a run folder becomes the files Track B's official batch script writes (``result.csv``:
``id,prediction`` in UTF-8 with a BOM and real newlines in quoted cells; ``eval_detail.jsonl``;
``progress.json``), the submission (``submission.csv``: ``ID,Track B`` keyed by scenario id, lines
joined by a literal ``\\n``) and the Phase 3 files (``result/traces.json``, ``results.csv``,
``runtime.json``). Import: a participant's ``result.csv`` or ``submission.csv`` (with its
``eval_detail.jsonl`` beside it, and the Track B facade's trajectories when given) becomes a run
folder, so ctbench's statistics (standard errors, paired tests) apply to Track B runs.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctbench.evaluate.runfolder import ResultLine, RunFolder
from ctbench.evaluate.ttac import extract_answer, task_gold
from ctbench.plugin_api import CtbError, ExportRequest, ExportSummary, TaskSet, refuse_options
from ctbench.replay.trackb.layout import gt_cell, question_of
from ctbench.yamlio import atomic_write_bytes, atomic_write_text


def _csv_bytes(rows: Sequence[Sequence[object]]) -> bytes:
    """CSV as Track B's script writes it: UTF-8 with a BOM, csv's quoting, CRLF row ends."""
    buf = io.StringIO(newline="")
    writer = csv.writer(buf)
    for row in rows:
        writer.writerow(row)
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


def _question(task_set: TaskSet, task_id: str) -> tuple[int | str, str]:
    """(Track B question id, scenario id) of a task; a native task keeps its own id for both."""
    gold = task_gold(task_set, task_id)
    q = gold.question if gold.question is not None else (question_of(task_id) or (0, None))[1]
    return (q if q is not None else task_id), gold.scenario_id or task_id


def export(request: ExportRequest) -> ExportSummary:
    """The ``trackb`` export format (entry point ``ctbench.exporters``): :func:`export_trackb`."""
    refuse_options(request)
    return export_trackb(request.run_dirs, request.out, request.task_set)


def export_trackb(run_dirs: Sequence[Path], out: Path, task_set: TaskSet) -> ExportSummary:
    """Write Track B's files for one run folder into ``out``."""
    if len(run_dirs) != 1:
        raise CtbError("--format trackb exports one run at a time (Track B's files describe one run)")
    folder = RunFolder(run_dirs[0])
    config = folder.load_config()
    lines = sorted(folder.read_results().lines, key=lambda r: (r.task_id, r.trial))
    summary = ExportSummary("trackb", out)
    first: dict[str, ResultLine] = {}
    for r in lines:
        first.setdefault(r.task_id, r)
    ids = {tid: _question(task_set, tid) for tid in first}
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


# --------------------------------------------------------------------------- import


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise CtbError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise CtbError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows:
        raise CtbError(f"{path}: empty; expected a header id,prediction or ID,Track B")
    return [c.strip() for c in rows[0]], rows[1:]


def trackb_items(path: Path, task_set: TaskSet, trajectories: Path | None = None) -> list[dict[str, Any]]:
    """The results of a Track B file as the generic importer reads them (task id, answer, calls)."""
    header, rows = _read_csv(path)
    low = [h.lower() for h in header]
    if low[:2] == ["id", "prediction"]:
        key, literal = "question", False
    elif low[:2] == ["id", "track b"]:
        key, literal = "scenario", True
    elif low[:2] == ["scenario_id", "prediction"]:
        key, literal = "scenario", False
    else:
        raise CtbError(f"{path}:1: header {','.join(header)!r}; expected id,prediction or ID,Track B")
    by_question: dict[str, str] = {}
    by_scenario: dict[str, str] = {}
    for ref in task_set.refs():
        q, scenario = _question(task_set, ref.id)
        by_question[str(q)] = ref.id
        by_scenario[scenario] = ref.id
    details = _details(path.parent / "eval_detail.jsonl")
    items: list[dict[str, Any]] = []
    for n, row in enumerate(rows, start=2):
        if not row or not any(c.strip() for c in row):
            continue
        if len(row) < 2:
            raise CtbError(f"{path}:{n}: expected two columns")
        ident = row[0].strip()
        tid = (by_question if key == "question" else by_scenario).get(ident)
        if tid is None:
            raise CtbError(f"{path}:{n}: {ident!r} names no task of {task_set.root}")
        answer = row[1].replace("\\n", "\n") if literal else row[1]
        item: dict[str, Any] = {"task_id": tid, "answer": answer}
        d = details.get(ident)
        if d is not None:
            item["latency_s"] = d.get("duration_s")
            if d.get("success") is False and not answer.strip():
                item["status"] = "error"
                item["error"] = "the Track B run reported a failure"
        if trajectories is not None:
            item["commands"] = _calls(trajectories, tid)
        items.append(item)
    return items


def _details(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    out: dict[str, dict[str, Any]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CtbError(f"{path}:{n}: not JSON ({exc.msg})") from None
        if isinstance(entry, dict) and "question_id" in entry:
            out[str(entry["question_id"])] = entry
    return out


def _calls(root: Path, task_id: str) -> list[dict[str, Any]]:
    """The calls of a task in the facade's trajectories (``DIR/<client>/<task>.jsonl`` or ``DIR/<task>.jsonl``)."""
    files = sorted(root.glob(f"*/{task_id}.jsonl")) + sorted(root.glob(f"{task_id}.jsonl"))
    if len(files) > 1:
        raise CtbError(f"{root}: several clients ran {task_id}; give the one client's folder")
    calls: list[dict[str, Any]] = []
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                calls.append(
                    {"device": rec["device"], "command": rec["command"], "outcome": rec.get("outcome")}
                )
    return calls


def import_trackb_results(
    path: Path, out: Path, task_set: TaskSet, *, trajectories: Path | None = None, **kwargs: Any
) -> Any:
    """Write the run folder ``out`` from Track B's ``result.csv`` or ``submission.csv``."""
    from ctbench.evaluate.importer import import_results

    items = trackb_items(path, task_set, trajectories)
    with tempfile.TemporaryDirectory(prefix="ctb-trackb-") as tmp:
        converted = Path(tmp) / f"{path.name}.json"
        atomic_write_text(converted, json.dumps({"harness": "ttac-trackb", "results": items}))
        return import_results(converted, out, task_set, **kwargs)
