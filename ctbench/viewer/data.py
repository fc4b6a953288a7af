"""What the viewer shows, as plain data (no Textual here: this part is tested and benchmarked alone).

A run's task table comes from ``scores.json`` when the run has been scored against this task set
(a JSON read: the first paint of four runs of a thousand tasks must stay well under a second and a
half) and from scoring the folder otherwise. Opening a task builds its :class:`TaskDetail` on demand
(:mod:`ctbench.evaluate.details`), which replays the device output.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctbench.errors import CtbError
from ctbench.evaluate.details import DetailLoader, TaskDetail
from ctbench.evaluate.runfolder import ResultLine
from ctbench.evaluate.score import SCORES_FILE, RunInfo, Scorer, read_results, read_run_info, task_json

COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "Task"), ("family", "Family"), ("outcome", "Outcome"), ("correct", "Acc"), ("loc", "Loc"),
    ("third", "ID/Rest"), ("evidence", "Evidence"), ("failure", "Fail"), ("rounds", "Rounds"),
    ("tokens", "Tokens"), ("latency", "Latency (s)"),
)
"""The task table's columns: (key, heading)."""


@dataclass(frozen=True)
class TaskRow:
    """One task of one run, as the task table shows it."""

    task_id: str
    family: str
    outcome: str
    correct: bool
    loc: float
    third: float | None
    covered: int
    golden: int
    failure: str | None
    rounds: int | None
    tokens: int | None
    latency: float | None
    meta: dict[str, Any]

    def cells(self) -> tuple[str, ...]:
        def pct(v: float | None) -> str:
            return "–" if v is None else f"{100 * v:.0f}"

        return (self.task_id, self.family, self.outcome, "✓" if self.correct else "✗", pct(self.loc), pct(self.third),
                f"{self.covered}/{self.golden}", self.failure or "", "–" if self.rounds is None else str(self.rounds),
                "–" if self.tokens is None else f"{self.tokens:,}",
                "–" if self.latency is None else f"{self.latency:.1f}")

    def sort_key(self, column: str) -> Any:
        value = {"id": self.task_id, "family": self.family, "outcome": self.outcome, "correct": self.correct,
                 "loc": self.loc, "third": self.third, "evidence": self.covered / self.golden if self.golden else 1.0,
                 "failure": self.failure or "", "rounds": self.rounds, "tokens": self.tokens,
                 "latency": self.latency}[column]
        return (value is None, value if value is not None else 0)

    def matches(self, words: Sequence[str]) -> bool:
        """Filter words: ``field=value`` (family, outcome, correct=yes|no, failure, any metadata field) or text
        found in the task id; all must hold."""
        for word in words:
            key, sep, want = word.partition("=")
            if not sep:
                if word.casefold() not in self.task_id.casefold():
                    return False
                continue
            key, want = key.strip().casefold(), want.strip().casefold()
            if key == "correct":
                got = "yes" if self.correct else "no"
            elif key in ("family", "outcome", "failure"):
                got = str(getattr(self, key) or "")
            else:
                value = self.meta.get(key)
                got = ",".join(map(str, value)) if isinstance(value, list) else str(value if value is not None else "")
            if want not in [g.casefold() for g in got.split(",")] and want != got.casefold():
                return False
        return True


def _outcome(status: str, result: ResultLine | None) -> str:
    if result is not None and result.status in ("timeout", "error"):
        return result.status
    if status in ("unparsable", "empty"):
        return "unparsable"
    return "missing" if status == "missing" else "answered"


def row_of(entry: dict[str, Any], result: ResultLine | None) -> TaskRow:
    """A task table row from a task's entry in scores.json and its result line."""
    ev, usage = entry["evidence"], entry["usage"]
    tin, tout = usage.get("input_tokens"), usage.get("output_tokens")
    return TaskRow(task_id=entry["task_id"], family=entry["family"], outcome=_outcome(entry["status"], result),
                   correct=bool(entry["exact"]), loc=entry["loc"],
                   third=entry.get("ident") if entry["family"] == "rca" else entry.get("rest"),
                   covered=ev["covered"], golden=ev["golden"], failure=entry.get("failure"),
                   rounds=usage.get("rounds"), tokens=None if tin is None or tout is None else tin + tout,
                   latency=usage.get("latency_s"), meta=dict(entry.get("meta") or {}))


@dataclass
class RunData:
    """One run in the viewer: who ran, its rows, its result lines and what went wrong reading it."""

    path: Path
    info: RunInfo
    rows: list[TaskRow]
    results: dict[str, ResultLine]
    warnings: list[str]
    source: str
    """Where the rows came from: ``scores.json`` or ``scored now``."""

    @property
    def label(self) -> str:
        return self.info.label

    def summary(self) -> str:
        parts = []
        for fam in ("rca", "path"):
            rows = [r for r in self.rows if r.family == fam]
            if rows:
                right = sum(r.correct for r in rows)
                parts.append(f"{fam.upper()} {right}/{len(rows)} ({100 * right / len(rows):.1f}%)")
        return ", ".join(parts) or "no task"


def _fresh_scores(path: Path, info: RunInfo) -> dict[str, Any] | None:
    """scores.json when it is newer than the results it scored, else None (then the run is scored now)."""
    scores, results = path / SCORES_FILE, path / "results.jsonl"
    try:
        if results.exists() and scores.stat().st_mtime < results.stat().st_mtime:
            return None
        doc = json.loads(scores.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("tasks"), list) else None


def load_run(path: Path | str, scorer: Scorer) -> RunData:
    """A run's rows: from a fresh scores.json, else by scoring the folder against the task set."""
    path = Path(path)
    info, warnings = read_run_info(path)
    by_id, more = read_results(path)
    results = {t: line for t, (_, line) in by_id.items()}
    doc = _fresh_scores(path, info)
    if doc is not None:
        entries, source = doc["tasks"], SCORES_FILE
    else:
        run = scorer.score_folder(path)
        entries, source = [task_json(s) for s in run.scores], "scored now"
        more = run.warnings
    rows = [row_of(e, results.get(e["task_id"])) for e in entries]
    return RunData(path=path, info=info, rows=rows, results=results, warnings=[*warnings, *more], source=source)


def load_runs(paths: Iterable[Path | str], scorer: Scorer) -> list[RunData]:
    runs = [load_run(p, scorer) for p in paths]
    if not runs:
        raise CtbError("give at least one run folder")
    return runs


def task_detail(loader: DetailLoader, run: RunData, task_id: str) -> TaskDetail:
    return loader.load(run.path, task_id, run.results.get(task_id))
