"""Run folders, read: what an exporter plug-in knows of the runs it exports.

An exporter is handed run folders (``ExportRequest.run_dirs``); it should not have to know their
files (``run.yaml`` in two formats, ``results.jsonl`` with torn lines and retries, ``scores.json``)
nor call the evaluator's scorer, whose modules may change between versions. The evaluator opens the
folders for it: :meth:`ExportRequest.runs <ctbench.plugin_api.exporter.ExportRequest.runs>` gives one
:class:`Run` per folder, read through the same code ``ctb-eval score`` uses, as the stable types
below::

    from ctbench.plugins import ExportRequest, ExportSummary, refuse_options

    def export(request: ExportRequest) -> ExportSummary:
        refuse_options(request)
        summary = ExportSummary("mine", request.out)
        for run in request.runs():
            record = run.record                 # run.yaml: name, agent, model, trials, task set...
            for line in run.results():           # results.jsonl, one RunResult per complete line
                ...
            scores = run.scores()               # scores.json's document, scored afresh
            for family in scores.families:      # rca, path, topology, then plug-in families
                acc = scores.summary(family).get("accuracy")
            summary.warnings += [f"{record.name}: {w}" for w in scores.warnings]
        return summary

A run's tasks are ``run.record.tasks`` (the ids it selected, in run order); the task set they come
from is ``request.task_set`` (:class:`~ctbench.store.TaskSet`: ``ref(id)``, ``load_task(ref)``).

The types are plain frozen dataclasses: new fields come with defaults, so an exporter written today
keeps working when run.yaml or results.jsonl grow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from ctbench.errors import CtbError
from ctbench.model import BUILTIN_FAMILIES
from ctbench.provenance import TaskSetRef


class RunReadError(CtbError):
    """A run folder, or one of its files, that cannot be read (the message names the file)."""


@dataclass(frozen=True)
class RunRecord:
    """``run.yaml``: what ran, on which tasks, when. Runs of either run.yaml format (1: before issue
    27, a flat ``options:`` mapping; 2: a ``settings:`` section) read the same."""

    name: str
    harness: str
    harness_version: str
    agent: str
    model: str | None
    trials: int
    """Trials per task the run was asked for (``--trials``)."""
    tasks: tuple[str, ...]
    """The task ids the run selected, in run order (a task without a result line did not finish)."""
    task_set: TaskSetRef
    """The task set's path, commit, dirtiness and, for a release, its version and manifest hash."""
    started: datetime
    finished: datetime | None = None
    reasoning_effort: str | None = None
    ctbench_version: str | None = None
    """The ctbench that made the run (``None`` for runs made before it was recorded)."""
    sandbox: str | None = None
    """What isolated the agent (``bwrap``, ``none``, ``in-process``), ``None`` when not recorded."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """The run's settings as run.yaml records them (format 2's ``settings:`` section; secrets left out)."""


@dataclass(frozen=True)
class RunResult:
    """One complete line of ``results.jsonl``: one attempt's outcome (``line`` counts from 1)."""

    line: int
    task_id: str
    family: str
    trial: int
    status: str
    """``answered``, ``unparsable``, ``timeout`` or ``error``."""
    error_kind: str | None = None
    """For an error: ``agent``, ``infrastructure`` (the harness failed, not the agent) or ``task``."""
    error: str | None = None
    answer_text: str | None = None
    """The agent's answer as it gave it (``None`` when it gave none)."""
    rounds: int | None = None
    latency_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    commands: int = 0
    started: datetime | None = None
    finished: datetime | None = None
    content_hash: str | None = None
    """sha256 of the task's content when it ran (runs made since the run gate)."""
    harness_version: str | None = None

    @property
    def is_infrastructure_error(self) -> bool:
        return self.status == "error" and self.error_kind == "infrastructure"


def families_of(scores: Mapping[str, Any]) -> list[str]:
    """The families a scores.json document summarises: the built-ins, then plug-in families (a plug-in's
    summary block names its parts in ``columns``)."""
    summary = scores["summary"]
    plugins = sorted(k for k, v in summary.items() if isinstance(v, dict) and "columns" in v)
    return [*BUILTIN_FAMILIES, *plugins]


LEADERBOARD_METRICS: dict[str, tuple[tuple[str, str, str], ...]] = {
    # family -> (leaderboard name, summary key, se key)
    "rca": (
        ("accuracy", "accuracy", "accuracy"),
        ("localization", "loc_iou", "loc_iou"),
        ("reasoning", "id_iou", "id_iou"),
        ("evidence", "evidence", "evidence_coverage"),
    ),
    "path": (
        ("accuracy", "accuracy", "accuracy"),
        ("localization", "loc_iou", "loc_iou"),
        ("reasoning", "rest_iou", "rest_iou"),
        ("evidence", "evidence", "evidence_coverage"),
    ),
    "topology": (
        ("accuracy", "accuracy", "accuracy"),
        ("localization", "loc_iou", "loc_iou"),
        ("reasoning", "link_iou", "link_iou"),
        ("evidence", "evidence", "evidence_coverage"),
    ),
}
"""Per built-in family, the four figures the leaderboard publishes (Table 5's): name, summary key,
standard-error key."""


def leaderboard_metrics(family: str, summ: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """A family's four leaderboard figures: the built-ins' from :data:`LEADERBOARD_METRICS`; a plug-in
    family's ``reasoning`` is its first part (its third headline figure, as on the scorecard)."""
    if family in LEADERBOARD_METRICS:
        return LEADERBOARD_METRICS[family]
    third = [str(c) for c in summ.get("columns") or []][:1] or ["-"]
    return (
        ("accuracy", "accuracy", "accuracy"),
        ("localization", "loc_iou", "loc_iou"),
        ("reasoning", third[0], third[0]),
        ("evidence", "evidence", "evidence_coverage"),
    )


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100.0 * value, 2)


def figure(summ: Mapping[str, Any], se: Mapping[str, Any], key: str, se_key: str) -> dict[str, float | None]:
    """One summary figure and its standard error in percent, two decimals (``{mean, sd}``)."""
    value = summ["evidence"]["coverage"] if key == "evidence" else summ[key]
    return {"mean": _pct(value), "sd": _pct(se.get(se_key))}


@dataclass(frozen=True)
class RunScores:
    """A run's scores: the scores.json document (``document``, exactly what ``ctb-eval score`` writes:
    docs/statistics.md) and the accessors an exporter needs. Figures are fractions (0-1); with several
    trials they are over tasks (a task's score is its mean over its trials)."""

    document: Mapping[str, Any]
    warnings: tuple[str, ...] = ()
    """What reading the run folder said (a torn last line, a task listed twice...), when scored afresh."""

    @property
    def name(self) -> str:
        """The run's name (run.yaml's), as the document records it."""
        return str(self.document["run"]["name"])

    @property
    def families(self) -> list[str]:
        """The built-in families, then every plug-in family the run has a summary block for."""
        return families_of(self.document)

    @property
    def n_tasks(self) -> int:
        return int(self.document.get("n_tasks", 0))

    @property
    def incomplete(self) -> bool:
        """Whether any task-trial ended in an infrastructure error or a timeout, or has no result:
        those score as wrong, so the figures are not the agent's."""
        return bool(self.document.get("incomplete"))

    @property
    def unfinished(self) -> dict[str, int]:
        """How many task-trials did not finish, by kind (``infrastructure_errors``, ``timeouts``,
        ``missing_results``)."""
        found = self.document.get("unfinished") or {}
        return {k: int(v) for k, v in found.items() if k != "tasks"}

    def summary(self, family: str) -> Mapping[str, Any]:
        """A family's summary block (``n_tasks``, ``accuracy``, ``loc_iou``... its own parts); empty
        when the run has no task of it."""
        found: Mapping[str, Any] = self.document["summary"].get(family) or {}
        return found

    def se(self, family: str) -> Mapping[str, Any]:
        """A family's standard errors across tasks, by the summary's keys."""
        found: Mapping[str, Any] = self.document.get("se", {}).get(family) or {}
        return found

    @property
    def tasks(self) -> Sequence[Mapping[str, Any]]:
        """One entry per task and trial: ``task_id``, ``family``, ``status``, ``exact``, the family's
        per-task figures, ``failure`` (RCA), ``usage``."""
        found: Sequence[Mapping[str, Any]] = self.document.get("tasks") or []
        return found


class Run(Protocol):
    """One run folder, opened for reading by the evaluator (``ExportRequest.runs()``)."""

    @property
    def path(self) -> Path:
        """The run folder."""
        ...

    @property
    def record(self) -> RunRecord:
        """``run.yaml`` (raises :class:`RunReadError` when it is not a run of ctbench's format)."""
        ...

    def results(self) -> list[RunResult]:
        """Every complete line of ``results.jsonl`` in file order, retried attempts included (a torn
        last line, left by an interrupted run, is left out); empty when no task finished."""
        ...

    def latest(self) -> dict[tuple[str, int], RunResult]:
        """The line that counts for each (task id, trial): the last one (a task run again after an
        infrastructure error has two)."""
        ...

    def scores(self) -> RunScores:
        """The run scored afresh against the request's task set (and ``--prices``), as ``ctb-eval
        score`` would write scores.json; computed once per request."""
        ...

    def saved_scores(self) -> RunScores | None:
        """The folder's own ``scores.json`` as written, ``None`` when it has none; raises
        :class:`RunReadError` when it cannot be read."""
        ...


class RunReader(Protocol):
    """What the evaluator hands an exporter with its request (``ExportRequest.reader``): it opens run
    folders, and runs another export format on the same runs (read once)."""

    def open(self, path: Path) -> Run: ...

    def export(self, format: str, request: Any) -> Any:
        """Another export format's files for ``request`` (an :class:`ExportRequest`), as
        ``ctb-eval export --format FORMAT`` writes them; returns its ExportSummary."""
        ...


__all__ = [
    "LEADERBOARD_METRICS",
    "Run",
    "RunReadError",
    "RunReader",
    "RunRecord",
    "RunResult",
    "RunScores",
    "families_of",
    "figure",
    "leaderboard_metrics",
]
