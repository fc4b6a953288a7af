"""``ctb-eval export --format mlflow``: each ctbench run as an MLflow run, in a local tracking store.

Teams that track experiments in MLflow want agent runs beside their other experiments. Each run
folder becomes one MLflow run in experiment ``--export-arg experiment=NAME`` (default ``ctbench``) of
the file store at ``--out`` (or of ``--export-arg tracking_uri=URI``, e.g. ``sqlite:///mlflow.db``): its parameters (agent, model, harness and version, trials), tags (task-set
commit, release, ctbench version), the metrics of its ``scores.json`` flattened to
``<family>.<metric>`` (standard errors as ``<family>.se.<metric>``; the run is scored afresh when it
has no ``scores.json``), and the run folder itself as artifacts under ``run/``.

Exporting the same run twice is safe: a run already exported with the same results (tag
``ctbench.results_sha256``) is left as it is and reported, not duplicated. Needs the ``mlflow``
extra (the MLflow tracking client, ``mlflow-skinny``); it is also the proof that the exporter seam
(:mod:`.exporters`) takes a format ctbench does not otherwise know.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ctbench import __version__
from ctbench.plugin_api import (
    ExporterError,
    ExportRequest,
    ExportSummary,
    Run,
    RunReadError,
    families_of,
    refuse_options,
)

OPTIONS = ("experiment", "tracking_uri")


def _flatten(prefix: str, value: Any) -> Iterator[tuple[str, float]]:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float):
        if math.isfinite(value):
            yield prefix, float(value)
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _flatten(f"{prefix}.{k}", v)


def score_metrics(scores: Mapping[str, Any]) -> dict[str, float]:
    """``scores.json`` as MLflow metrics: every finite number of each family's summary and SEs."""
    out: dict[str, float] = {"n_tasks": float(scores.get("n_tasks", 0))}
    for fam in families_of(scores):  # the built-ins, then plug-in families (their summary blocks)
        summ = scores["summary"].get(fam) or {}
        if not summ.get("n_tasks"):
            continue
        out.update(_flatten(fam, {k: v for k, v in summ.items() if k != "failures"}))
        out.update(_flatten(f"{fam}.se", scores.get("se", {}).get(fam) or {}))
    return out


def _scores(run: Run, summary: ExportSummary) -> dict[str, Any]:
    """The run's own scores.json, else (none, or unreadable) the run scored afresh."""
    try:
        saved = run.saved_scores()
    except RunReadError as exc:
        summary.warnings.append(f"{run.path / 'scores.json'}: unreadable ({exc}); scored afresh")
        saved = None
    return dict((saved or run.scores()).document)


def _results_sha(run_dir: Path) -> str:
    try:
        return hashlib.sha256((run_dir / "results.jsonl").read_bytes()).hexdigest()
    except OSError:
        return "none"


def export(request: ExportRequest) -> ExportSummary:
    refuse_options(request, OPTIONS)
    try:
        from mlflow.entities import Metric, Param, RunTag
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise ExporterError(
            "--format mlflow needs the MLflow client: pip install 'ctbench[mlflow]'"
        ) from None
    summary = ExportSummary("mlflow", request.out)
    uri = request.options.get("tracking_uri")
    if uri is None:
        store = request.out.resolve()
        store.mkdir(parents=True, exist_ok=True)
        uri = store.as_uri()
    with _file_store_allowed():
        _export_runs(request, MlflowClient(tracking_uri=uri), summary, Metric, Param, RunTag)
    return summary


@contextmanager
def _file_store_allowed() -> Iterator[None]:
    """MLflow 3 keeps its file store in maintenance mode and refuses it unless ``MLFLOW_ALLOW_FILE_STORE``
    is set; a local folder is what this exporter promises, so the opt-out holds for the export only."""
    key = "MLFLOW_ALLOW_FILE_STORE"
    before = os.environ.get(key)
    os.environ[key] = "true"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = before


def _export_runs(
    request: ExportRequest, client: Any, summary: ExportSummary, Metric: Any, Param: Any, RunTag: Any
) -> None:
    experiment_name = request.options.get("experiment", "ctbench")
    found = client.get_experiment_by_name(experiment_name)
    experiment = found.experiment_id if found is not None else client.create_experiment(experiment_name)
    for ctb_run in request.runs():
        run_dir = ctb_run.path
        scores = _scores(ctb_run, summary)
        info = scores["run"]
        sha = _results_sha(run_dir)
        same = client.search_runs(
            [experiment],
            filter_string=f"tags.`ctbench.run` = '{info['name']}' and tags.`ctbench.results_sha256` = '{sha}'",
        )
        if same:
            summary.warnings.append(f"{info['name']}: already exported as MLflow run {same[0].info.run_id}")
            summary.files.append(f"{experiment}/{same[0].info.run_id}")
            continue
        release = info.get("release") or {}
        tags = {
            "ctbench.run": info["name"],
            "ctbench.results_sha256": sha,
            "ctbench.version": __version__,
            "ctbench.task_set_commit": str(scores.get("scoring", {}).get("task_set_commit") or "none"),
            "ctbench.release": str(release.get("version") or ""),
            "ctbench.release_hash": str(release.get("manifest_hash") or ""),
        }
        run = client.create_run(experiment, run_name=info["name"], tags=tags)
        run_id = run.info.run_id
        now = int(time.time() * 1000)
        params = {
            k: str(info.get(k)) for k in ("agent", "model", "harness", "harness_version") if info.get(k)
        }
        params["trials"] = str(scores.get("trials", 1))
        client.log_batch(
            run_id,
            metrics=[Metric(k, v, now, 0) for k, v in sorted(score_metrics(scores).items())],
            params=[Param(k, v) for k, v in params.items()],
            tags=[RunTag(k, v) for k, v in tags.items()],
        )
        client.log_artifacts(run_id, str(run_dir), artifact_path="run")
        client.set_terminated(run_id)
        summary.files.append(f"{experiment}/{run_id}")
