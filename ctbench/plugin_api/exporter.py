"""The exporter contract: an export format as a plug-in (``ctb-eval export --format NAME``).

An exporter is a callable taking one :class:`ExportRequest` and returning an :class:`ExportSummary`;
a package adds one with an entry point in the ``ctbench.exporters`` group (:data:`GROUP`), without
touching ctbench. The request carries everything the command line gives and grows by fields with
defaults, so a plug-in written today keeps working; :func:`refuse_options` refuses the
``--export-arg`` keys an exporter does not know. The registry that finds exporters is
:mod:`ctbench.evaluate.exporters`.

An exporter reads the runs through :meth:`ExportRequest.runs` (:mod:`.runs`: run.yaml, the result
lines, the scores), never through the run folder's files or the evaluator's modules, and may write
another format's files beside its own with :meth:`ExportRequest.export_as`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctbench.errors import CtbError

if TYPE_CHECKING:
    from ctbench.plugin_api.runs import Run, RunReader
    from ctbench.prices import Prices
    from ctbench.store import TaskSet

GROUP = "ctbench.exporters"


@dataclass
class ExportSummary:
    """What an exporter wrote: its format, folder and files, and the warnings to print."""

    format: str
    out: Path
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # what to run next to look at the export, when the format has a viewer of its own
    open_with: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": self.format,
            "out": str(self.out),
            "files": self.files,
            "warnings": self.warnings,
        }
        if self.open_with:
            data["open_with"] = self.open_with
        return data


@dataclass(frozen=True)
class ExportRequest:
    """One ``ctb-eval export`` call, as plain data."""

    run_dirs: list[Path]
    out: Path
    task_set: TaskSet
    n_resamples: int | None = None
    label: str | None = None
    url: str | None = None
    examples: bool = False
    options: Mapping[str, str] = field(default_factory=dict)
    """``--export-arg KEY=VALUE``: options an exporter defines for itself."""
    prices: Prices | None = None
    """``--prices FILE``: turns tokens into cost where a harness reported none."""
    reader: RunReader | None = field(default=None, compare=False, repr=False)
    """How the runs are read (:mod:`.runs`): ``ctb-eval export`` gives the evaluator's, which reads each
    run folder and scores it once per request."""

    def runs(self) -> list[Run]:
        """One :class:`~ctbench.plugin_api.runs.Run` per run folder, in ``run_dirs`` order."""
        return [self._reader().open(path) for path in self.run_dirs]

    def export_as(self, format: str, **changes: Any) -> ExportSummary:
        """Another format's export of the same runs (``changes``: fields of this request to change,
        e.g. ``label``), with the runs as already read; returns that format's summary."""
        found: ExportSummary = self._reader().export(format, replace(self, **changes))
        return found

    def _reader(self) -> RunReader:
        if self.reader is None:
            raise ExporterError(
                "this export request has no run reader: build it as `ctb-eval export` does "
                "(ctbench.evaluate.exporters.export_request)"
            )
        return self.reader


Exporter = Callable[[ExportRequest], ExportSummary]


class ExporterError(CtbError):
    """An exporter that cannot be found or loaded, or refused its options (exit status 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=2)


def refuse_options(request: ExportRequest, known: tuple[str, ...] = ()) -> None:
    """For an exporter: refuse ``--export-arg`` keys it does not know, naming the ones it does."""
    unknown = sorted(set(request.options) - set(known))
    if unknown:
        takes = f"it takes: {', '.join(known)}" if known else "it takes none"
        raise ExporterError(f"--export-arg {', '.join(unknown)}: not an option of this format ({takes})")
