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
    digits: dict[str, int] = field(default_factory=dict)
    """Decimals shown for the floats of a column (default 2): a cost per task needs more."""

    def add(self, *cells: Cell) -> None:
        self.rows.append(list(cells))

    def text(self, j: int, cell: Cell) -> str:
        """Cell ``cell`` of column ``j`` as every rendering shows it."""
        name = self.columns[j] if j < len(self.columns) else ""
        return fmt(cell, self.digits.get(name, 2))

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
    console = Console(  # cells are data (a run label may read "[bold]"): no markup, emoji or highlighting
        file=buf,
        width=width or text_width(sys.stdout),
        force_terminal=False,
        color_system=None,
        markup=False,
        emoji=False,
        highlight=False,
    )
    for t in tables:
        rt = RichTable(title=t.title, caption=t.note or None, title_justify="left", caption_justify="left")
        for i, col in enumerate(t.columns):
            rt.add_column(col, justify="right" if i and _numeric(t, i) else "left")
        for row in t.rows:
            rt.add_row(*(t.text(j, c) for j, c in enumerate(row)))
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
            out.append("| " + " | ".join(_md_escape(t.text(j, c)) for j, c in enumerate(row)) + " |")
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
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "–": "--",
}


def latex_escape(text: str) -> str:
    """Text as LaTeX prints it with any font encoding: ``<`` is ``\\textless{}``, not the OT1 font's ``¡``."""
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


LATEX_TABCOLSEP_PT = 3.0
"""Half the space between columns (``\\tabcolsep``), narrower than LaTeX's 6pt so tables fit a column."""
LATEX_MIN_TABCOLSEP_PT = 1.5
"""How close columns may come when a table would otherwise be wider than a one-column page."""
LATEX_HEADER_PT = 44.0
"""A header's lines are at most this wide (or its longest word): headers break rather than widen columns."""
LATEX_TIGHT_HEADER_PT = 26.0
"""The same bound for a table still wider than a one-column page: headers break at more of their words
(``A only /`` over ``B only``) so that a column is as wide as its figures."""
LATEX_TRANSPOSE_ROWS = 6
"""A table of at most this many rows that is too wide for a one-column page is set turned (rows as
columns): a description of a few runs reads as well either way."""
LATEX_COLUMN_PT = 229.0
"""``\\columnwidth`` of a two-column 10pt article: a table narrower than this is a one-column ``table``."""
LATEX_TEXT_PT = 345.0
"""``\\textwidth`` of a one-column 10pt article, the narrowest page a ``table*`` must fit (two-column: 469pt)."""
LATEX_WRAP_PT = 80.0
"""A text column wider than this wraps, as a paragraph column of this width."""
FAMILY_GROUPS = ("RCA", "Path", "Topology")
"""Column-name prefixes set as a group header over their columns (``\\cmidrule``), as the paper does."""
ABBREVIATIONS = {
    "n": "tasks",
    "Acc": "exact-answer accuracy",
    "Loc": "localisation IoU",
    "ID": "identification IoU",
    "Rest": "restoration IoU",
    "Evid.": "golden-action coverage",
    "SE": "standard error",
    "IoU": "intersection over union",
    "Cov.": "coverage",
    "Freq.": "frequency",
}
"""Header abbreviations, explained in the caption of every table that uses them."""

# Approximate advance widths at \footnotesize (8pt Computer Modern), in points: enough to choose a layout
# (the compile test with pdflatex is what shows the choice fits).
_NARROW = set("iljtfr.,:;'!|()[]/-")
_WIDE = set("MWQOGDHNU@%&+=<>")
_WIDEST = set("mw")


def _text_pt(text: str) -> float:
    """An estimate a little above the real width, so that a table chosen to fit does fit."""
    width = 0.5
    for ch in text:
        if ch in _NARROW:
            width += 2.6
        elif ch in _WIDEST:  # 7.1pt in cmr8: "command+" is 42pt, not 38
            width += 7.2
        elif ch in _WIDE or ch.isupper():
            width += 6.0
        elif ch == " ":
            width += 2.7
        else:
            width += 4.2
    return width * 1.06


def _column_groups(columns: Sequence[str]) -> list[tuple[str | None, list[int]]]:
    """Runs of consecutive columns that share a family prefix (``RCA Acc``, ``RCA Loc``), else singles."""
    groups: list[tuple[str | None, list[int]]] = []
    for i, name in enumerate(columns):
        head, _, rest = name.partition(" ")
        family = head if head in FAMILY_GROUPS and rest else None
        if family is not None and groups and groups[-1][0] == family:
            groups[-1][1].append(i)
        else:
            groups.append((family, [i]))
    return [(g, idx) if g is None or len(idx) > 1 else (None, idx) for g, idx in groups]


def _stack(lines: Sequence[str], align: str) -> str:
    """Several short lines in one cell (a nested tabular: plain LaTeX, no package)."""
    if len(lines) == 1:
        return lines[0]
    return f"\\begin{{tabular}}[t]{{@{{}}{align}@{{}}}}" + " \\\\ ".join(lines) + "\\end{tabular}"


def _numeric_like(t: Table, i: int) -> bool:
    """A column of numbers, or of numbers with their SE (``47.62 ± 4.47``): right-aligned in LaTeX."""
    return all(c is None or _number(c) is not None for r in t.rows if i < len(r) for c in [r[i]])


def _latex_cell(text: str, align: str) -> tuple[str, float]:
    """(LaTeX, width in pt) of a body cell: a value with its SE is stacked, the SE under the value."""
    value, sep, se = text.partition(" ± ")
    if sep:
        lines = [latex_escape(value), "$\\pm$" + latex_escape(se)]
        return _stack(lines, align), max(_text_pt(value), _text_pt(se) + 6.0)
    return latex_escape(text), _text_pt(text)


def _latex_header(name: str, align: str, header_pt: float = LATEX_HEADER_PT) -> tuple[str, float]:
    """(LaTeX, width in pt) of a header, broken into lines at its words and after ``+ - /`` (a run label
    such as ``claude-code+claude-sonnet-5-5``), so a header is never what makes a column wide."""
    limit = max([header_pt, *(_text_pt(p) for p in _pieces(name))])
    lines: list[str] = []
    for word in name.split():
        for k, piece in enumerate(_BREAK_AFTER.split(word)):
            joined = (lines[-1] + (" " if k == 0 else "") + piece) if lines else piece
            if lines and _text_pt(joined) <= limit:
                lines[-1] = joined
            else:
                lines.append(piece)
    width = max((_text_pt(x) for x in lines), default=0.0)
    return _stack([latex_escape(x) for x in lines], align), width


def _abbreviations(columns: Sequence[str]) -> str:
    used = []
    for key, meaning in ABBREVIATIONS.items():
        if any(key in name.replace("(", " ").replace(")", " ").split() for name in columns):
            used.append(f"{key}: {meaning}")
    return ("Abbreviations: " + "; ".join(used) + ".") if used else ""


_BREAK_AFTER = re.compile(r"(?<=\w[+/_-])(?=\w)")
"""Where a long name may break in a wrapped column: after ``+``, ``-``, ``/``, ``_`` (run labels such as
``claude-code+claude-sonnet-5-5`` have no spaces)."""


def _pieces(text: str) -> list[str]:
    return [p for w in text.split() for p in _BREAK_AFTER.split(w)]


def _longest_word_pt(t: Table, j: int, header_pt: float) -> float:
    """The widest unbreakable piece of column ``j``, header words included: a wrapped column is never
    narrower than that."""
    pieces = [p for row in t.rows if j < len(row) for p in _pieces(t.text(j, row[j]))]
    return max([_text_pt(p) for p in pieces] + [header_pt])


def _wrap_widths(
    widths: Sequence[float], numeric: Sequence[bool], words: Sequence[float]
) -> dict[int, float]:
    """Which text columns wrap, at what width: every one wider than :data:`LATEX_WRAP_PT`; then, while
    the table is wider than a one-column page, the widest text column is narrowed (never below its
    longest word)."""
    wrap = {
        j: max(LATEX_WRAP_PT, words[j]) for j, w in enumerate(widths) if not numeric[j] and w > LATEX_WRAP_PT
    }
    pad = 2 * LATEX_TABCOLSEP_PT * len(widths)
    for _ in range(4 * len(widths)):
        current = [wrap.get(j, w) for j, w in enumerate(widths)]
        excess = sum(current) + pad - LATEX_TEXT_PT
        if excess <= 0:
            break
        candidates = [
            j for j in range(len(widths)) if not numeric[j] and current[j] > max(words[j], 30.0) + 1
        ]
        if not candidates:
            break
        j = max(candidates, key=lambda k: current[k] - max(words[k], 30.0))
        wrap[j] = max(words[j], 30.0, current[j] - excess)
    return wrap


@dataclass
class _LatexLayout:
    groups: list[tuple[str | None, list[int]]]
    grouped: dict[int, str]
    shown: list[str]
    heads: list[str]
    body: list[list[str]]
    align: list[str]
    sep: float
    total: float


def _latex_layout(t: Table, bold_best: bool, header_pt: float = LATEX_HEADER_PT) -> _LatexLayout:
    """How ``t`` is set: its cells, column kinds and gaps, and the width that comes to."""
    groups = _column_groups(t.columns)
    grouped = {i: g for g, idx in groups if g is not None for i in idx}
    shown = [name.partition(" ")[2] if i in grouped else name for i, name in enumerate(t.columns)]
    numeric = [bool(i) and _numeric_like(t, i) for i in range(len(t.columns))]
    bold = _best_cells(t) if bold_best else set()
    body: list[list[str]] = []
    widths = []
    heads = []
    for j, name in enumerate(shown):
        head, w = _latex_header(name, "r" if numeric[j] else "l", header_pt)
        heads.append(head)
        widths.append(w)
    head_pt = list(widths)
    for i, row in enumerate(t.rows):
        cells = []
        for j, cell in enumerate(row):
            text, w = _latex_cell(t.text(j, cell), "r" if numeric[j] else "l")
            if (i, j) in bold:  # bold figures are about a tenth wider
                text, w = f"\\textbf{{{text}}}", w * 1.12
            cells.append(text)
            widths[j] = max(widths[j], w)
        body.append(cells)
    wrap = _wrap_widths(widths, numeric, [_longest_word_pt(t, j, head_pt[j]) for j in range(len(widths))])
    for cells in body:
        for j in wrap:
            cells[j] = _BREAK_AFTER.sub(r"\\allowbreak{}", cells[j])
    align = [
        f"p{{{wrap[j]:.0f}pt}}" if j in wrap else ("r" if numeric[j] else "l") for j in range(len(widths))
    ]
    content = sum(wrap.get(j, w) for j, w in enumerate(widths))
    sep = LATEX_TABCOLSEP_PT
    if content + 2 * sep * len(widths) > LATEX_TEXT_PT:  # closer columns before a wider page
        sep = max(LATEX_MIN_TABCOLSEP_PT, (LATEX_TEXT_PT - content) / (2 * len(widths)))
    total = content + 2 * sep * len(widths)
    return _LatexLayout(groups, grouped, shown, heads, body, align, sep, total)


def _transposed(t: Table) -> Table:
    """``t`` with its rows as columns (a table describing a few runs, too wide for a page)."""
    columns = [t.columns[0], *(fmt(r[0]) for r in t.rows)]
    rows: list[list[Cell]] = [
        [name, *((t.text(j, r[j]) if name in t.digits else r[j]) if j < len(r) else None for r in t.rows)]
        for j, name in enumerate(t.columns)
        if j
    ]
    return Table(title=t.title, columns=columns, rows=rows, note=t.note, key=t.key)


def render_latex(tables: Sequence[Table], *, bold_best: bool = False) -> str:
    """Paper-ready LaTeX that compiles with booktabs alone and fits the page without shrinking the type.

    Every table is set in ``\\footnotesize`` with narrow column gaps; a value and its standard error are
    stacked in one cell; headers break at their words; columns of one family (``RCA ...``, ``Path ...``)
    get a group header with a ``\\cmidrule``; a long text column wraps. A table that then fits a column is
    a ``table``, else a ``table*`` across both columns; nothing is scaled (no ``\\resizebox``).
    Captions say what the table shows (its note included) and explain the header abbreviations; each
    table has a ``\\label{tab:<key>}`` to cite; ``bold_best`` sets the best value of each rated column in
    bold.
    """
    out: list[str] = ["% requires \\usepackage{booktabs}"]
    for n, t in enumerate(tables, start=1):
        lay = _latex_layout(t, bold_best)
        if lay.total > LATEX_TEXT_PT:
            tight = _latex_layout(t, bold_best, LATEX_TIGHT_HEADER_PT)
            if tight.total < lay.total:
                lay = tight
        if lay.total > LATEX_TEXT_PT and len(t.rows) <= LATEX_TRANSPOSE_ROWS and not lay.grouped:
            turned = _latex_layout(_transposed(t), False)
            if turned.total < lay.total:
                t, lay = _transposed(t), turned
        groups, grouped, shown, heads, body, align, sep, total = (
            lay.groups,
            lay.grouped,
            lay.shown,
            lay.heads,
            lay.body,
            lay.align,
            lay.sep,
            lay.total,
        )
        env = "table" if total <= LATEX_COLUMN_PT else "table*"
        caption, paper = latex_caption(t)
        caption = " ".join(x for x in (caption, _abbreviations(shown)) if x)
        if paper:
            out.append(f"% the layout of the CTBench paper's Table {paper}")
        if total > LATEX_TEXT_PT:
            out.append(f"% about {total:.0f}pt wide: wider than a one-column page ({LATEX_TEXT_PT:.0f}pt)")
        out.append(f"\\begin{{{env}}}[t]\n\\centering\\footnotesize")
        out.append(f"\\setlength{{\\tabcolsep}}{{{sep:.1f}pt}}")
        out.append(f"\\caption{{{latex_escape(caption)}}}")
        out.append(f"\\label{{tab:{re.sub(r'[^A-Za-z0-9:-]+', '-', t.key or f'table-{n}')}}}")
        out.append("\\begin{tabular}{" + "".join(align) + "}\n\\toprule")
        if grouped:
            tops, rules = [], []
            for g, idx in groups:
                if g is None:
                    tops.extend([""] * len(idx))
                    continue
                tops.append(f"\\multicolumn{{{len(idx)}}}{{c}}{{{latex_escape(g)}}}")
                rules.append(f"\\cmidrule(lr){{{idx[0] + 1}-{idx[-1] + 1}}}")
            out.append(" & ".join(tops) + " \\\\")
            out.append(" ".join(rules))
        out.append(" & ".join(heads) + " \\\\\n\\midrule")
        for cells in body:
            out.append(" & ".join(cells) + " \\\\")
        out.append("\\bottomrule\n\\end{tabular}")
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
