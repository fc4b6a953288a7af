"""The coverage-gap report: commands agents asked for that the task had not recorded.

A denied call is a valid command with no recording: each one is a place where an agent looked and
found nothing. Counted per (task, device, canonical command) over one or many runs, most frequent
first, they tell authors what to record next. Runs are read from their trajectories only
(``runs/<name>/trajectories/<ID>.jsonl``), so runs made by any tool that writes the format count.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctbench.errors import CtbError
from ctbench.replay.observation import Outcome
from ctbench.replay.trajectory import BadLine, TrajectoryRecord, iter_trajectory
from ctbench.tables import Table

TRAJECTORIES = "trajectories"
MAX_EXAMPLES = 3


@dataclass
class Gap:
    """One command denied on one device of one task, with how often and where it was asked."""

    task_id: str
    device: str
    command: str
    count: int = 0
    runs: set[str] = field(default_factory=set)
    typed: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "device": self.device,
            "command": self.command,
            "count": self.count,
            "runs": sorted(self.runs),
            "typed": self.typed,
        }


@dataclass
class GapReport:
    gaps: list[Gap]
    runs: list[Path]
    trajectories: int
    calls: int
    denied: int
    bad_lines: list[BadLine]

    def table(self, limit: int | None = None) -> Table:
        shown = self.gaps if limit is None else self.gaps[:limit]
        t = Table(
            title="Denied commands (record these next)",
            key="gaps",
            columns=["task", "device", "command", "denied", "runs", "as typed"],
        )
        for g in shown:
            t.add(g.task_id, g.device, g.command, g.count, len(g.runs), "; ".join(g.typed))
        more = f"; {len(self.gaps) - len(shown)} more not shown" if len(shown) < len(self.gaps) else ""
        t.note = (
            f"{self.denied} denied of {self.calls} calls in {self.trajectories} trajectories "
            f"from {len(self.runs)} run(s){more}"
        )
        return t

    def to_json(self, limit: int | None = None) -> dict[str, Any]:
        shown = self.gaps if limit is None else self.gaps[:limit]
        return {
            "runs": [str(r) for r in self.runs],
            "trajectories": self.trajectories,
            "calls": self.calls,
            "denied": self.denied,
            "gaps": [g.to_json() for g in shown],
            "bad_lines": [str(b) for b in self.bad_lines],
        }


def find_runs(paths: Sequence[Path | str]) -> list[Path]:
    """Run folders named by ``paths``: a run folder itself, or a folder of runs (``runs/``)."""
    runs: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise CtbError(f"{p}: no such run folder")
        if (p / TRAJECTORIES).is_dir():
            runs.append(p)
            continue
        if p.is_dir():
            found = sorted(c for c in p.iterdir() if (c / TRAJECTORIES).is_dir())
            if found:
                runs.extend(found)
                continue
        raise CtbError(
            f"{p}: not a run folder (expected {p / TRAJECTORIES}/<TASK-ID>.jsonl, as ctb-eval run "
            "writes it) nor a folder of runs"
        )
    seen: set[Path] = set()
    unique = []
    for r in runs:
        key = r.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(r)
    return unique


def gap_report(paths: Sequence[Path | str], *, tasks: Iterable[str] = ()) -> GapReport:
    """Count denied calls per (task, device, command) over the runs in ``paths``."""
    wanted = set(tasks)
    runs = find_runs(paths)
    gaps: dict[tuple[str, str, str], Gap] = {}
    bad: list[BadLine] = []
    n_files = calls = denied = 0
    for run in runs:
        for traj in sorted((run / TRAJECTORIES).glob("*.jsonl")):
            task_id = traj.stem
            if wanted and task_id not in wanted:
                continue
            n_files += 1
            for item in iter_trajectory(traj):
                if isinstance(item, BadLine):
                    bad.append(item)
                    continue
                calls += 1
                if item.outcome is not Outcome.DENIED:
                    continue
                denied += 1
                _count(gaps, task_id, run.name, item)
    ordered = sorted(gaps.values(), key=lambda g: (-g.count, -len(g.runs), g.task_id, g.device, g.command))
    return GapReport(ordered, runs, n_files, calls, denied, bad)


def _count(gaps: dict[tuple[str, str, str], Gap], task_id: str, run: str, rec: TrajectoryRecord) -> None:
    command = rec.canonical or rec.command.strip()
    key = (task_id, rec.device, command)
    gap = gaps.get(key)
    if gap is None:
        gap = gaps[key] = Gap(task_id, rec.device, command)
    gap.count += 1
    gap.runs.add(run)
    typed = rec.command.strip()
    if typed != command and typed not in gap.typed and len(gap.typed) < MAX_EXAMPLES:
        gap.typed.append(typed)
