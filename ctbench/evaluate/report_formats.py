"""The formats of ``ctb-eval report``, in one registry the CLI reads for its ``--format`` choices and help.

Every table format of :data:`ctbench.tables.TABLE_FORMATS` is a report format (the report's tables,
built split into raw numbers for a format that keeps them); HTML adds charts around the same tables.
A new format is one entry here (see CONTRIBUTING.md, "A report format"). Keeping the registry apart
from :mod:`.report` (the tables) and :mod:`.report_html` (the page) is what lets those two stop
importing each other.

The renderers import their modules when called: the CLI builds its parser from this registry, and
``ctb-eval --help`` must not pay for scoring and statistics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from ctbench.errors import CtbError
from ctbench.tables import TABLE_FORMATS, TableFormat

if TYPE_CHECKING:
    from ctbench.evaluate.report import Report


@dataclass(frozen=True)
class ReportFormat:
    name: str
    summary: str
    """A few words for ``--help``."""
    render: Callable[[Report, bool], str]
    """(report, bold_best) -> the text."""


def _from_tables(table_format: TableFormat) -> ReportFormat:
    def render(report: Report, bold_best: bool) -> str:
        from ctbench.evaluate.report import report_tables

        return table_format.render(report_tables(report, split=table_format.raw_numbers), bold_best)

    return ReportFormat(table_format.name, table_format.summary, render)


def _html(report: Report, bold_best: bool) -> str:
    from ctbench.evaluate.report import report_tables
    from ctbench.evaluate.report_html import render_html

    return render_html(report, report_tables(report))


REPORT_FORMATS: Mapping[str, ReportFormat] = MappingProxyType(
    {
        **{name: _from_tables(f) for name, f in TABLE_FORMATS.items()},
        "html": ReportFormat("html", "a single HTML page with charts", _html),
    }
)
"""The report formats by name, in the order ``--help`` lists them (read-only)."""


def render_report(report: Report, fmt: str, *, bold_best: bool = False) -> str:
    """The report in format ``fmt``; ``bold_best`` sets the best value of each rated column in bold (LaTeX)."""
    try:
        report_format = REPORT_FORMATS[fmt]
    except KeyError:
        raise CtbError(f"unknown report format {fmt!r}; choose one of {', '.join(REPORT_FORMATS)}") from None
    return report_format.render(report, bold_best)
