"""One table model, four renderings (text, Markdown, LaTeX, JSON), shared by stats and reports.

Researchers paste these into papers, so LaTeX output escapes properly and uses booktabs rules, and
JSON keeps the raw numbers rather than formatted strings.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Cell = str | int | float | None


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    note: str = ""
    key: str = ""

    def add(self, *cells: Cell) -> None:
        self.rows.append(list(cells))

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "title": self.title, "columns": self.columns, "rows": self.rows, "note": self.note}


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


def render_text(tables: Sequence[Table], *, width: int | None = None) -> str:
    from rich.console import Console
    from rich.table import Table as RichTable

    buf = io.StringIO()
    console = Console(file=buf, width=width or 120, force_terminal=False, color_system=None)
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
        out.append("|" + "|".join("---:" if i and _numeric(t, i) else "---" for i in range(len(t.columns))) + "|")
        for row in t.rows:
            out.append("| " + " | ".join(_md_escape(fmt(c)) for c in row) + " |")
        if t.note:
            out.append(f"\n{t.note}")
        out.append("")
    return "\n".join(out)


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text).replace("±", r"$\pm$").replace("→", r"$\rightarrow$")


def render_latex(tables: Sequence[Table]) -> str:
    out: list[str] = ["% requires \\usepackage{booktabs}"]
    for t in tables:
        out.append("\\begin{table}[t]\n\\centering\\small")
        out.append(f"\\caption{{{latex_escape(t.title)}}}")
        align = "".join("r" if i and _numeric(t, i) else "l" for i in range(len(t.columns)))
        out.append("\\begin{tabular}{" + align + "}\n\\toprule")
        out.append(" & ".join(latex_escape(c) for c in t.columns) + " \\\\\n\\midrule")
        for row in t.rows:
            out.append(" & ".join(latex_escape(fmt(c)) for c in row) + " \\\\")
        out.append("\\bottomrule\n\\end{tabular}")
        if t.note:
            out.append(f"\\par\\footnotesize {latex_escape(t.note)}")
        out.append("\\end{table}\n")
    return "\n".join(out)


def render(tables: Sequence[Table], fmt_name: str) -> str:
    if fmt_name == "text":
        return render_text(tables)
    if fmt_name == "md":
        return render_markdown(tables)
    if fmt_name == "latex":
        return render_latex(tables)
    if fmt_name == "json":
        return json.dumps([t.to_json() for t in tables], indent=2, ensure_ascii=False) + "\n"
    raise ValueError(f"unknown format {fmt_name!r}")
