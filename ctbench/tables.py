"""One table model, four renderings (text, Markdown, LaTeX, JSON), shared by stats and reports.

Researchers paste these into papers, so LaTeX output escapes properly and uses booktabs rules, and
JSON keeps the raw numbers rather than formatted strings.

The renderings are registered in :data:`TABLE_FORMATS`, which every command's ``--format`` reads;
``ctb-eval report`` adds its own formats on top (:mod:`ctbench.evaluate.report_formats`).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import IO, Any, Protocol

Cell = str | int | float | None


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    note: str = ""
    key: str = ""
    best: dict[str, str] = field(default_factory=dict)
    """Columns where one value is best, "max" or "min": LaTeX output can set the best one in bold."""

    def add(self, *cells: Cell) -> None:
        self.rows.append(list(cells))

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "columns": self.columns,
            "rows": self.rows,
            "note": self.note,
        }


def _numeric(t: Table, i: int) -> bool:
    """Right-align a column only when it holds numbers, as typeset tables do."""
    return all(isinstance(r[i], int | float) or r[i] is None for r in t.rows if i < len(r))


def fmt(cell: Cell, digits: int = 2) -> str:
    if cell is None:
        return "–"
    if isinstance(cell, bool):
        return "yes" if cell else "no"
    if isinstance(cell, float):
        return f"{cell:.{digits}f}"
    return str(cell)


UNBOUNDED_WIDTH = 1000
"""The width text tables are laid out in when nothing limits it: a table is never folded into a file."""


def text_width(stream: IO[str] | None = None) -> int:
    """How wide text output may be: ``$COLUMNS`` when set; else the terminal's width when ``stream`` is
    one; else unbounded, so a table written to a file or a pipe is never cut or folded."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if stream is not None and stream.isatty():
        return shutil.get_terminal_size().columns
    return UNBOUNDED_WIDTH


def render_text(tables: Sequence[Table], *, width: int | None = None) -> str:
    """Aligned plain-text tables, ``width`` columns wide (default: :func:`text_width` of stdout)."""
    from rich.console import Console
    from rich.table import Table as RichTable

    buf = io.StringIO()
    console = Console(
        file=buf, width=width or text_width(sys.stdout), force_terminal=False, color_system=None
    )
    for t in tables:
        rt = RichTable(title=t.title, caption=t.note or None, title_justify="left", caption_justify="left")
        for i, col in enumerate(t.columns):
            rt.add_column(col, justify="right" if i and _numeric(t, i) else "left")
        for row in t.rows:
            rt.add_row(*(fmt(c) for c in row))
        console.print(rt)
        console.print()
    return buf.getvalue()


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(tables: Sequence[Table]) -> str:
    out: list[str] = []
    for t in tables:
        out.append(f"### {t.title}\n")
        out.append("| " + " | ".join(_md_escape(c) for c in t.columns) + " |")
        out.append(
            "|" + "|".join("---:" if i and _numeric(t, i) else "---" for i in range(len(t.columns))) + "|"
        )
        for row in t.rows:
            out.append("| " + " | ".join(_md_escape(fmt(c)) for c in row) + " |")
        if t.note:
            out.append(f"\n{t.note}")
        out.append("")
    return "\n".join(out)


_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text).replace("±", r"$\pm$").replace("→", r"$\rightarrow$")


_SHAPE = re.compile(r"\s*\((?:as in the paper's |paper )?Tables? (\d+(?:[-–]\d+)?)(?: shape)?\)")
WIDE_COLUMNS = 8
"""Tables with more columns than this are set across both columns (``table*``) and scaled to fit."""


def _number(cell: Cell) -> float | None:
    """The value a cell shows: the number itself, or the leading number of ``"47.62 ± 4.47"``."""
    if isinstance(cell, bool) or cell is None:
        return None
    if isinstance(cell, int | float):
        return float(cell)
    m = re.match(r"\s*(-?\d+(?:\.\d+)?)", cell)
    return float(m.group(1)) if m else None


def _best_cells(t: Table) -> set[tuple[int, int]]:
    """(row, column) of the best value of every column in ``t.best`` (all of them when tied)."""
    out: set[tuple[int, int]] = set()
    for name, how in t.best.items():
        if name not in t.columns or len(t.rows) < 2:
            continue
        j = t.columns.index(name)
        values = [(i, v) for i, r in enumerate(t.rows) if j < len(r) and (v := _number(r[j])) is not None]
        if not values:
            continue
        target = max(v for _, v in values) if how == "max" else min(v for _, v in values)
        out |= {(i, j) for i, v in values if v == target}
    return out


def latex_caption(t: Table) -> tuple[str, str | None]:
    """(caption naming what the table shows, the paper table it follows or None)."""
    m = _SHAPE.search(t.title)
    title = _SHAPE.sub("", t.title).strip()
    caption = title if not t.note else f"{title}. {t.note}"
    return caption, m.group(1) if m else None


def render_latex(tables: Sequence[Table], *, bold_best: bool = False) -> str:
    """Paper-ready LaTeX: booktabs rules, a caption that says what the table shows (its note included),
    a ``\\label{tab:<key>}`` to cite, wide tables across both columns and scaled to the text width, and -
    with ``bold_best`` - the best value of each rated column in bold."""
    out: list[str] = ["% requires \\usepackage{booktabs} and \\usepackage{graphicx}"]
    for n, t in enumerate(tables, start=1):
        wide = len(t.columns) > WIDE_COLUMNS
        env = "table*" if wide else "table"
        caption, paper = latex_caption(t)
        if paper:
            out.append(f"% the layout of the CTBench paper's Table {paper}")
        out.append(f"\\begin{{{env}}}[t]\n\\centering\\small")
        out.append(f"\\caption{{{latex_escape(caption)}}}")
        out.append(f"\\label{{tab:{re.sub(r'[^A-Za-z0-9:-]+', '-', t.key or f'table-{n}')}}}")
        align = "".join("r" if i and _numeric(t, i) else "l" for i in range(len(t.columns)))
        if wide:
            out.append("\\resizebox{\\textwidth}{!}{%")
        out.append("\\begin{tabular}{" + align + "}\n\\toprule")
        out.append(" & ".join(latex_escape(c) for c in t.columns) + " \\\\\n\\midrule")
        bold = _best_cells(t) if bold_best else set()
        for i, row in enumerate(t.rows):
            cells = [latex_escape(fmt(c)) for c in row]
            cells = [f"\\textbf{{{c}}}" if (i, j) in bold else c for j, c in enumerate(cells)]
            out.append(" & ".join(cells) + " \\\\")
        out.append("\\bottomrule\n\\end{tabular}" + ("}" if wide else ""))
        out.append(f"\\end{{{env}}}\n")
    return "\n".join(out)


def render_json(tables: Sequence[Table]) -> str:
    return json.dumps([t.to_json() for t in tables], indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- the registry


@dataclass(frozen=True)
class TableFormat:
    """One rendering of a list of tables. Every ``--format`` option that prints tables takes its choices
    and help from :data:`TABLE_FORMATS`, so a new format is one entry here, not an edit in each CLI."""

    name: str
    summary: str
    """A few words for ``--help``."""
    render: Callable[[Sequence[Table], bool], str]
    """(tables, bold_best) -> the text; formats without bold ignore ``bold_best``."""
    raw_numbers: bool = False
    """The format keeps numbers as numbers (JSON): reports build their tables split for it."""


def _text(tables: Sequence[Table], bold_best: bool) -> str:
    return render_text(tables)


def _markdown(tables: Sequence[Table], bold_best: bool) -> str:
    return render_markdown(tables)


def _latex(tables: Sequence[Table], bold_best: bool) -> str:
    return render_latex(tables, bold_best=bold_best)


def _json(tables: Sequence[Table], bold_best: bool) -> str:
    return render_json(tables)


TABLE_FORMATS: Mapping[str, TableFormat] = MappingProxyType(
    {
        f.name: f
        for f in (
            TableFormat("text", "aligned plain text", _text),
            TableFormat("md", "Markdown pipe tables", _markdown),
            TableFormat("latex", "LaTeX with booktabs rules", _latex),
            TableFormat("json", "JSON with the raw numbers", _json, raw_numbers=True),
        )
    }
)
"""The table formats by name, in the order ``--help`` lists them (read-only)."""


class _Described(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def summary(self) -> str: ...


def formats_help(formats: Iterable[_Described], default: str = "text") -> str:
    """The ``--format`` help text for ``formats``: each name with its summary, and the default."""
    return "; ".join(f"{f.name}: {f.summary}" for f in formats) + f" (default {default})"


def render(tables: Sequence[Table], fmt_name: str, *, bold_best: bool = False) -> str:
    try:
        table_format = TABLE_FORMATS[fmt_name]
    except KeyError:
        raise ValueError(f"unknown format {fmt_name!r}; choose one of {', '.join(TABLE_FORMATS)}") from None
    return table_format.render(tables, bold_best)
