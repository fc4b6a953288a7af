"""Track B's results as a run folder (``ctb-eval import-results --format trackb``).

A participant's ``result.csv`` or ``submission.csv`` (with its ``eval_detail.jsonl`` beside it, and
the Track B facade's trajectories when given) becomes a run folder, so ctbench's statistics (standard
errors, paired tests) apply to Track B runs. The other direction is :mod:`.trackb_io`.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from ctbench.errors import CtbError
from ctbench.evaluate.ttac import question_ids
from ctbench.replay.trackb.layout import read_csv
from ctbench.store import TaskSet
from ctbench.yamlio import atomic_write_text


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    rows = read_csv(path, "Track B's result.csv or submission.csv")
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
        q, scenario = question_ids(task_set, ref.id)
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
