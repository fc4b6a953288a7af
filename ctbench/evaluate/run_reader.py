"""The evaluator's side of the exporters' read API (:mod:`ctbench.plugin_api.runs`).

An exporter reads runs through :meth:`ExportRequest.runs <ctbench.plugin_api.exporter.ExportRequest.runs>`;
``ctb-eval export`` hands it a :class:`RunFolders`, which reads each folder with the run folder's own
reader (:mod:`.runfolder`: both run.yaml formats, torn last lines, retries) and scores it with the
scorer ``ctb-eval score`` uses (:mod:`.score`), once per request, so an exporter that writes another
format's files beside its own (``export_as``) does not score the runs twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from ctbench.errors import CtbError
from ctbench.evaluate.runfolder import ResultLine, RunConfig, RunFolder
from ctbench.evaluate.score import SCORES_FILE, Scorer, build_scores, dumps, read_trial_results
from ctbench.plugin_api.exporter import Exporter, ExporterError, ExportRequest, ExportSummary
from ctbench.plugin_api.runs import RunReadError, RunRecord, RunResult, RunScores
from ctbench.prices import Prices
from ctbench.store import TaskSet


def run_record(config: RunConfig) -> RunRecord:
    """run.yaml's model as the read API's record."""
    return RunRecord(
        name=config.name,
        harness=config.harness,
        harness_version=config.harness_version,
        agent=config.agent,
        model=config.model,
        trials=config.settings.trials,
        tasks=tuple(config.tasks),
        task_set=config.task_set,
        started=config.started,
        finished=config.finished,
        reasoning_effort=config.reasoning_effort,
        ctbench_version=config.ctbench.version if config.ctbench else None,
        sandbox=config.sandbox,
        settings=config.settings.record(),
    )


_RESULT_FIELDS = tuple(f.name for f in fields(RunResult) if f.name != "line")
"""RunResult's fields besides ``line``: each is the result line's field of the same name."""


def run_result(line: int, r: ResultLine) -> RunResult:
    """A results.jsonl line as the read API's result."""
    return RunResult(line, **{name: getattr(r, name) for name in _RESULT_FIELDS})


class FolderRun:
    """One run folder, read lazily; what it has read it keeps (a request reads a run once)."""

    def __init__(self, path: Path, reader: RunFolders) -> None:
        self._path = Path(path)
        self._reader = reader
        self._record: RunRecord | None = None
        self._scores: RunScores | None = None

    @property
    def path(self) -> Path:
        return self._path

    @property
    def record(self) -> RunRecord:
        if self._record is None:
            try:
                config = RunFolder(self._path).load_config()
            except RunReadError:
                raise
            except CtbError as exc:
                raise RunReadError(str(exc), exit_code=exc.exit_code) from None
            self._record = run_record(config)
        return self._record

    def results(self) -> list[RunResult]:
        return [run_result(n, r) for n, r in enumerate(RunFolder(self._path).read_results().lines, start=1)]

    def latest(self) -> dict[tuple[str, int], RunResult]:
        by_key, _warnings = read_trial_results(self._path)
        return {key: run_result(n, r) for key, (n, r) in by_key.items()}

    def scores(self) -> RunScores:
        if self._scores is None:
            scorer = self._reader.scorer
            run = scorer.score_folder(self._path)
            document = build_scores(run, min_stratum=scorer.min_stratum, n_resamples=self._reader.n_resamples)
            self._scores = RunScores(json.loads(dumps(document)), tuple(run.warnings))
        return self._scores

    def saved_scores(self) -> RunScores | None:
        path = self._path / SCORES_FILE
        if not path.is_file():
            return None
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RunReadError(str(exc)) from None
        return RunScores(data)


class RunFolders:
    """The run reader ``ctb-eval export`` hands its exporters: run folders scored against one task set
    (with ``--prices`` and ``--resamples``), each opened and scored once."""

    def __init__(
        self,
        task_set: TaskSet,
        *,
        prices: Prices | None = None,
        n_resamples: int | None = None,
        find_exporter: Callable[[str], Exporter] | None = None,
    ) -> None:
        self.task_set = task_set
        self.prices = prices
        self.n_resamples = n_resamples
        self.find_exporter = find_exporter
        """The registry's lookup (:func:`ctbench.evaluate.exporters.exporter`), for ``export_as``."""
        self._scorer: Scorer | None = None
        self._runs: dict[Path, FolderRun] = {}

    @property
    def scorer(self) -> Scorer:
        """The one scorer of the request (its judges are built once for every run)."""
        if self._scorer is None:
            self._scorer = Scorer(self.task_set, prices=self.prices)
        return self._scorer

    def open(self, path: Path) -> FolderRun:
        key = Path(path)
        if key not in self._runs:
            self._runs[key] = FolderRun(key, self)
        return self._runs[key]

    def export(self, format: str, request: Any) -> ExportSummary:
        if self.find_exporter is None:
            raise ExporterError(f"this run reader finds no export format (asked for {format!r})")
        return self.find_exporter(format)(request)


def reader_of(request: ExportRequest) -> RunFolders:
    """The request's reader when it is the evaluator's (the bundled formats share its scorer), else
    a new one for the request."""
    if isinstance(request.reader, RunFolders):
        return request.reader
    return RunFolders(request.task_set, prices=request.prices, n_resamples=request.n_resamples)
