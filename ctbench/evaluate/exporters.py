"""Export formats as plug-ins: the ``ctbench.exporters`` entry-point group, like agents and executors.

``ctb-eval export --format NAME`` looks NAME up here. An exporter is a callable taking one
:class:`ExportRequest` and returning an :class:`~ctbench.evaluate.export.ExportSummary`; a package
adds one with an entry point, without touching ctbench::

    [project.entry-points."ctbench.exporters"]
    mlflow = "my_package.mlflow_export:export"

The request carries everything the command line gives (run folders, output folder, the task set,
bootstrap resamples, ``--label``/``--url``/``--examples`` for the leaderboard, and free
``--export-arg KEY=VALUE`` options an exporter reads for itself) and grows by fields with defaults,
so a plug-in written today keeps working. Entry points are listed without being imported and loaded
on demand: ``ctb-eval export --help`` never imports a plug-in's dependencies. When ctbench runs from
a source tree that was never installed, :data:`BUILTIN` stands in for its own entry points.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctbench.plugin_api import EXPORTERS_GROUP as GROUP
from ctbench.plugin_api.exporter import (
    Exporter,
    ExporterError,
    ExportRequest,
    ExportSummary,
    refuse_options,
)

if TYPE_CHECKING:
    from ctbench.store import TaskSet

BUILTIN: dict[str, str] = {
    "atif": "ctbench.evaluate.exporters:atif",
    "leaderboard": "ctbench.evaluate.exporters:leaderboard",
    "mlflow": "ctbench.evaluate.mlflow_export:export",
    "release": "ctbench.evaluate.release_export:export",
    "trackb": "ctbench.evaluate.trackb_io:export",
}
"""The built-in exporters' entry points, exactly as pyproject.toml declares them (checked by a test)."""


@dataclass(frozen=True)
class ExporterEntry:
    name: str
    target: str
    distribution: str | None

    def load(self) -> Exporter:
        module, _, attr = self.target.partition(":")
        try:
            found: Any = getattr(import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ExporterError(
                f"export format {self.name!r} ({self.target}, from "
                f"{self.distribution or 'an unknown package'}) cannot be loaded: {exc}"
            ) from None
        if not callable(found):
            raise ExporterError(f"export format {self.name!r}: {self.target} is not callable")
        exporter: Exporter = found
        return exporter


def _entry(ep: EntryPoint) -> ExporterEntry:
    dist = getattr(ep, "dist", None)
    return ExporterEntry(ep.name, ep.value, getattr(dist, "name", None))


def registry() -> dict[str, ExporterEntry]:
    """Every exporter installed here, built-ins first, then plug-ins in name order (read afresh)."""
    found = {ep.name: _entry(ep) for ep in entry_points(group=GROUP)}
    out = {name: found.pop(name, ExporterEntry(name, target, "ctbench")) for name, target in BUILTIN.items()}
    out.update(sorted(found.items()))
    return out


def exporter(name: str) -> Exporter:
    entries = registry()
    entry = entries.get(name)
    if entry is None:
        raise ExporterError(f"unknown export format {name!r}; choose one of: {', '.join(entries)}")
    return entry.load()


def export_request(
    run_dirs: list[Path], out: Path, task_set: TaskSet, *, n_resamples: int | None = None, **fields: Any
) -> ExportRequest:
    """An :class:`ExportRequest` as ``ctb-eval export`` builds it: with the evaluator's run reader
    (:mod:`.run_reader`), which finds other formats here for ``export_as``."""
    from ctbench.evaluate.run_reader import RunFolders

    reader = RunFolders(
        task_set, prices=fields.get("prices"), n_resamples=n_resamples, find_exporter=exporter
    )
    return ExportRequest(run_dirs, out, task_set, n_resamples=n_resamples, reader=reader, **fields)


def parse_export_args(items: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ExporterError(f"--export-arg {item!r}: expected KEY=VALUE")
        if key in out:
            raise ExporterError(f"--export-arg {key}: given twice")
        out[key] = value
    return out


# --------------------------------------------------------------------------- the built-in formats


def atif(request: ExportRequest) -> ExportSummary:
    from ctbench.evaluate.export import export_atif

    refuse_options(request)
    return export_atif(
        request.run_dirs,
        request.out,
        request.task_set,
        n_resamples=request.n_resamples,
        prices=request.prices,
    )


def leaderboard(request: ExportRequest) -> ExportSummary:
    from ctbench.evaluate.export import export_leaderboard
    from ctbench.evaluate.run_reader import reader_of

    refuse_options(request)
    return export_leaderboard(
        request.run_dirs,
        request.out,
        request.task_set,
        label=request.label,
        url=request.url,
        examples=request.examples,
        reader=reader_of(request),
    )
