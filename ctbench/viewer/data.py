"""What the viewer shows, as plain data (no Textual here: this part is tested and benchmarked alone).

A run's task table comes from ``scores.json`` when it is newer than the run's run.yaml and results
(a JSON read: the first paint of four runs of a thousand tasks must stay well under a second and a
half, ``tests/bench/bench_viewer.py``) and from scoring the folder otherwise. Opening a task builds its :class:`TaskDetail` on demand
(:mod:`ctbench.evaluate.details`), which replays the device output.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ctbench.errors import CtbError
from ctbench.evaluate.details import DetailLoader, TaskDetail
from ctbench.evaluate.runfolder import ResultLine
from ctbench.evaluate.score import SCORES_FILE, RunInfo, Scorer, read_trial_results, size_warnings, task_json
from ctbench.scoring.metrics import THIRD_FIGURE

COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "Task"),
    ("family", "Family"),
    ("outcome", "Outcome"),
    ("correct", "Acc"),
    ("loc", "Loc"),
    ("third", "ID/Rest"),
    ("evidence", "Evidence"),
    ("failure", "Fail"),
    ("rounds", "Rounds"),
    ("tokens", "Tokens"),
    ("latency", "Latency (s)"),
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
    trial: int = 1
    several: bool = False
    """The run has several trials per task: the id cell names the trial (``RCA-001 #2``)."""

    @property
    def key(self) -> tuple[str, int]:
        return self.task_id, self.trial

    @property
    def label(self) -> str:
        return f"{self.task_id} #{self.trial}" if self.several else self.task_id

    def cells(self) -> tuple[str, ...]:
        """The row as the table prints it (computed once: column widths and every refill read it)."""
        return self._cells

    @cached_property
    def _cells(self) -> tuple[str, ...]:
        def pct(v: float | None) -> str:
            return "–" if v is None else f"{100 * v:.0f}"

        return (
            self.label,
            self.family,
            self.outcome,
            "✓" if self.correct else "✗",
            pct(self.loc),
            pct(self.third),
            f"{self.covered}/{self.golden}",
            self.failure or "",
            "–" if self.rounds is None else str(self.rounds),
            "–" if self.tokens is None else f"{self.tokens:,}",
            "–" if self.latency is None else f"{self.latency:.1f}",
        )

    def sort_key(self, column: str) -> Any:
        value = {
            "id": self.key,
            "family": self.family,
            "outcome": self.outcome,
            "correct": self.correct,
            "loc": self.loc,
            "third": self.third,
            "evidence": self.covered / self.golden if self.golden else 1.0,
            "failure": self.failure or "",
            "rounds": self.rounds,
            "tokens": self.tokens,
            "latency": self.latency,
        }[column]
        return (value is None, value if value is not None else 0)

    def matches(self, words: Sequence[str]) -> bool:
        """Filter words: ``field=value`` (family, outcome, correct=yes|no, failure, trial, any metadata field)
        or text found in the task id; all must hold."""
        for word in words:
            key, sep, want = word.partition("=")
            if not sep:
                if word.casefold() not in self.task_id.casefold():
                    return False
                continue
            key, want = key.strip().casefold(), want.strip().casefold()
            if key == "correct":
                got = "yes" if self.correct else "no"
            elif key in ("family", "outcome", "failure", "trial"):
                got = str(getattr(self, key) or "")
            else:
                value = self.meta.get(key)
                got = (
                    ",".join(map(str, value))
                    if isinstance(value, list)
                    else str(value if value is not None else "")
                )
            if want not in [g.casefold() for g in got.split(",")] and want != got.casefold():
                return False
        return True


def _outcome(status: str, result: ResultLine | None) -> str:
    if result is not None and result.status in ("timeout", "error"):
        return result.status
    if status in ("unparsable", "empty"):
        return "unparsable"
    return "missing" if status == "missing" else "answered"


def row_of(entry: dict[str, Any], result: ResultLine | None, *, several: bool = False) -> TaskRow:
    """A task table row from a task's entry in scores.json and its result line (of the same trial)."""
    ev, usage = entry["evidence"], entry["usage"]
    tin, tout = usage.get("input_tokens"), usage.get("output_tokens")
    return TaskRow(
        task_id=entry["task_id"],
        family=entry["family"],
        outcome=_outcome(entry["status"], result),
        correct=bool(entry["exact"]),
        loc=entry["loc"],
        third=entry.get(THIRD_FIGURE.get(entry["family"], ("rest",))[0]),
        covered=ev["covered"],
        golden=ev["golden"],
        failure=entry.get("failure"),
        rounds=usage.get("rounds"),
        tokens=None if tin is None or tout is None else tin + tout,
        latency=usage.get("latency_s"),
        meta=dict(entry.get("meta") or {}),
        trial=int(entry.get("trial", 1)),
        several=several,
    )


@dataclass
class RunData:
    """One run in the viewer: who ran, its rows, its result lines and what went wrong reading it.

    A run read from scores.json builds its rows and reads its result lines only when first asked
    (the first paint needs the rows of one run; the others' rows wait until the run is shown).
    """

    path: Path
    info: RunInfo
    warnings: list[str]
    source: str
    """Where the rows came from: ``scores.json`` or ``scored now``."""
    counts: dict[str, tuple[int, int]]
    """Family -> (correct, task-trials), for the runs table (known without building the rows)."""
    trials: int = 1
    """Trials per task the run holds; a row is one trial of one task (pass@k is in the scorecard)."""
    _entries: list[dict[str, Any]] | None = None
    _rows: list[TaskRow] | None = None
    _results: dict[tuple[str, int], ResultLine] | None = None

    @property
    def label(self) -> str:
        return self.info.label

    @property
    def n_tasks(self) -> int:
        """Tasks (each with :attr:`trials` rows)."""
        return sum(n for _, n in self.counts.values()) // max(1, self.trials)

    @property
    def results(self) -> dict[tuple[str, int], ResultLine]:
        """Result lines by (task id, trial) (read on first use; their warnings are already in
        scores.json's, or in :attr:`warnings` when the run was scored on opening)."""
        if self._results is None:
            by_key, _ = read_trial_results(self.path)
            self._results = {k: line for k, (_, line) in by_key.items()}
        return self._results

    @property
    def rows(self) -> list[TaskRow]:
        if self._rows is None:
            results, several = self.results, self.trials > 1
            self._rows = [
                row_of(e, results.get((e["task_id"], int(e.get("trial", 1)))), several=several)
                for e in self._entries or ()
            ]
            self._entries = None
        return self._rows

    def holds(self, key: tuple[str, int]) -> bool:
        return any(r.key == key for r in self.rows)

    @property
    def loaded(self) -> bool:
        """True once the rows are built."""
        return self._rows is not None

    def summary(self) -> str:
        parts = []
        for fam in ("rca", "path"):
            right, n = self.counts.get(fam, (0, 0))
            if n:
                unit = " trials" if self.trials > 1 else ""  # right over task-trials: pass@1
                parts.append(f"{fam.upper()} {right}/{n}{unit} ({100 * right / n:.1f}%)")
        return ", ".join(parts) or "no task"


def _counts(entries: Iterable[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for e in entries:
        right, n = out.get(e["family"], (0, 0))
        out[e["family"]] = (right + bool(e["exact"]), n + 1)
    return out


_ENTRY_KEYS = frozenset({"task_id", "family", "status", "exact", "loc", "evidence", "usage"})
"""What :func:`row_of` reads from every task entry of scores.json."""


def _fresh_scores(path: Path) -> dict[str, Any] | None:
    """scores.json when it is newer than the run.yaml and results it scored, else None (then the run
    is scored now)."""
    scores, run_file = path / SCORES_FILE, path / "run.yaml"
    try:
        written = scores.stat().st_mtime
        if not run_file.is_file() or written < run_file.stat().st_mtime:
            return None  # no run.yaml: scoring the folder says what is wrong with it
        results = path / "results.jsonl"
        if results.exists() and written < results.stat().st_mtime:
            return None
        doc = json.loads(scores.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (
        isinstance(doc, dict) and isinstance(doc.get("tasks"), list) and isinstance(doc.get("run"), dict)
    ):
        return None
    if not all(isinstance(e, dict) and _ENTRY_KEYS <= e.keys() for e in doc["tasks"]):
        return None  # not what ctb-eval score writes: score the folder instead
    return doc


def _reading_warnings(doc: dict[str, Any]) -> list[str]:
    """What went wrong reading the run (run.yaml, results, trajectories), as scoring recorded it; the
    small-sample caveats scores.json adds are left to the scorecard (they are no news about the run)."""
    try:
        caveats = set(size_warnings(doc["summary"], doc["breakdowns"], int(doc["scoring"]["min_stratum"])))
    except (KeyError, TypeError, ValueError):
        caveats = set()
    return [str(w) for w in doc.get("warnings") or [] if w not in caveats]


def _info(run: dict[str, Any], path: Path) -> RunInfo:
    """The run's identity as scores.json recorded it from run.yaml (which is not read again: its task
    list is most of a big run's reading time, and the viewer needs only who ran)."""

    def text(key: str) -> str | None:
        value = run.get(key)
        return None if value in (None, "") else str(value)

    trials = run.get("trials")
    return RunInfo(
        name=text("name") or path.resolve().name,
        agent=text("agent"),
        model=text("model"),
        harness=text("harness"),
        harness_version=text("harness_version"),
        task_set_commit=text("task_set_commit"),
        trials=trials if isinstance(trials, int) else 1,
        sandbox=text("sandbox"),
    )


def load_run(path: Path | str, scorer: Scorer) -> RunData:
    """A run's rows: from a fresh scores.json, else by scoring the folder against the task set."""
    path = Path(path)
    doc = _fresh_scores(path)
    if doc is not None:
        entries = doc["tasks"]
        warnings = _reading_warnings(doc)
        info = _info(doc["run"], path)
        return RunData(
            path=path,
            info=info,
            warnings=warnings,
            source=SCORES_FILE,
            counts=_counts(entries),
            trials=info.trials,
            _entries=entries,
        )
    run = scorer.score_folder(path)
    entries = [task_json(s) for s in run.trial_scores]
    data = RunData(
        path=path,
        info=run.info,
        warnings=run.warnings,
        source="scored now",
        counts=_counts(entries),
        trials=run.info.trials,
        _entries=entries,
    )
    data.rows  # noqa: B018  # scored now: build the rows with the scoring (the run is read already)
    return data


def load_runs(paths: Iterable[Path | str], scorer: Scorer) -> list[RunData]:
    runs = [load_run(p, scorer) for p in paths]
    if not runs:
        raise CtbError("give at least one run folder")
    return runs


def task_detail(loader: DetailLoader, run: RunData, task_id: str, trial: int = 1) -> TaskDetail:
    return loader.load(run.path, task_id, run.results.get((task_id, trial)))
