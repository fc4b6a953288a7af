"""Write a ctbench task set in TTAC Track B's layout (``ctb-author export --format trackb``).

The inverse of :mod:`ctbench.authoring.trackb_import`: ``Phase_N/test.json``, its
``question_limits_config.json``, ``devices_outputs/{N}/{device}/{safe(command)}.txt``, the vendor map
as ``vendors.yaml`` and, unless ``public_only``, the ground truth ``gt.csv`` (``ID,Track B``, lines
joined by a literal ``\\n``), so Track B's own server and batch scripts run on ctbench's tasks. An
imported task keeps its question id, scenario id and file names; a native task gets the next free
question id and a scenario id derived from its task id. Devices whose CLI family Track B does not
know (Junos, NX-OS, FRR, hosts) are left out and listed.
"""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctbench.errors import CtbError
from ctbench.replay.trackb.layout import LIMITS_FILE, OS_VENDOR, TEST_FILE, gt_cell, read_sidecar, safe_name
from ctbench.store import TaskRef, TaskSet
from ctbench.yamlio import atomic_write_bytes, atomic_write_text

NAMESPACE = uuid.UUID("7c1e3a52-8f0d-4c61-9a4b-2d5e6f708192")
"""Scenario ids of native tasks: uuid5(NAMESPACE, task id), the same on every export."""


@dataclass
class TrackbLayoutExport:
    """What the export wrote, and what it left out."""

    out: Path
    questions: dict[int, str] = field(default_factory=dict)
    files: int = 0
    left_out: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "out": str(self.out),
            "questions": {str(q): t for q, t in self.questions.items()},
            "files": self.files,
            "left_out": self.left_out,
        }


def export_layout(
    task_set: TaskSet, refs: Sequence[TaskRef], out: Path, *, phase: int = 1, public_only: bool = False
) -> TrackbLayoutExport:
    """Write ``refs`` of ``task_set`` under ``out`` in Track B's layout; see the module docstring."""
    if out.exists() and any(out.iterdir()):
        raise CtbError(f"{out}: not empty; --out names a new folder for the Track B layout")
    result = TrackbLayoutExport(out)
    sides = {ref.id: read_sidecar(ref.path) for ref in refs}
    taken = {s.question for s in sides.values() if s is not None}
    next_q = max(taken, default=0) + 1
    items: list[dict[str, object]] = []
    limits: dict[str, dict[str, dict[str, list[str]]]] = {}
    vendors: dict[str, str] = {}
    gt_rows: list[list[str]] = [["ID", "Track B"]]
    for ref in refs:
        spec = task_set.load_task(ref)
        side = sides[ref.id]
        if side is not None:
            q, scenario = side.question, side.scenario_id
        else:
            q, scenario = next_q, str(uuid.uuid5(NAMESPACE, ref.id))
            next_q += 1
        result.questions[q] = ref.id
        network = task_set.network(spec.network)
        for dev in network.devices:
            vendor = OS_VENDOR.get(dev.os or "")
            if vendor is None:
                note = f"{dev.name} ({dev.os or 'no CLI'})"
                if note not in result.left_out:
                    result.left_out.append(note)
                continue
            vendors[dev.name] = vendor
        for rec in spec.recordings:
            if rec.device not in vendors:
                continue
            name = Path(rec.file).name if side is not None else f"{safe_name(rec.command)}.txt"
            atomic_write_bytes(
                out / "devices_outputs" / str(q) / rec.device / name, task_set.read_recording(ref, rec)
            )
            result.files += 1
        if side is not None and side.no_permission:
            refused: dict[str, list[str]] = {}
            for pair in side.no_permission:
                refused.setdefault(pair.command, []).append(pair.device)
            limits[f"question_{q}"] = {"no_permission": refused}
        items.append({"scenario_id": scenario, "task": {"question": spec.statement.rstrip("\n"), "id": q}})
        if not public_only:
            hidden = task_set.load_hidden(ref)
            gold = hidden.reference_answer.strip() or "\n".join(hidden.gold_answer_lines(ref.family))
            if gold:
                gt_rows.append([scenario, gt_cell(gold)])
    phase_dir = out / f"Phase_{phase}"
    atomic_write_text(phase_dir / TEST_FILE, json.dumps(items, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(phase_dir / LIMITS_FILE, json.dumps(limits, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(out / "vendors.yaml", "".join(f"{d}: {v}\n" for d, v in sorted(vendors.items())))
    if not public_only:
        buf = io.StringIO(newline="")
        csv.writer(buf).writerows(gt_rows)
        atomic_write_bytes(out / "gt.csv", ("\ufeff" + buf.getvalue()).encode("utf-8"))
    return result
