"""The HTML report: one self-contained file - inline CSS, charts as inline SVG, no external resource.

The charts are drawn by hand as SVG rather than with matplotlib: the figures are simple (a radar, bars,
a scatter with error bars), hand-made SVG is byte-for-byte deterministic, and importing matplotlib
alone would cost more than the whole 4-run report's budget. The file opens offline, can be mailed or
attached to a paper's supplement, and contains no URL at all (SVG inside HTML needs no namespace).

Charts: per-category RCA accuracy (radar; bars when fewer than three categories), accuracy by
heterogeneity level (every family: RCA, path and topology restoration, then any plug-in family) and
by observability level (grouped bars), cost vs accuracy (mean tokens per task, or latency when no
tokens were recorded, against accuracy with ± SE error bars; one marker shape per family), and for
each plug-in family present its headline figures and parts per run (bars ± SE), read from its summary
block, so a family installed by entry point is charted without an edit here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from ctbench.evaluate import family_view
from ctbench.evaluate.report_tasks import CSS as TASKS_CSS
from ctbench.evaluate.report_tasks import tasks_section
from ctbench.evaluate.scorecard import FAMILY_TITLES
from ctbench.tables import Table

if TYPE_CHECKING:
    from ctbench.evaluate.report import Report

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 1180px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 2em; }
p.sub { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 0.6em 0 0.3em; font-size: 0.88em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; }
th { border-bottom: 2px solid #444; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
p.note { font-size: 0.8em; color: #555; max-width: 60em; margin-top: 0; }
.charts { display: flex; flex-wrap: wrap; gap: 1.2em; }
figure { margin: 0; border: 1px solid #e4e4e4; border-radius: 6px; padding: 0.5em; background: #fff; }
figcaption { font-size: 0.85em; color: #444; max-width: 520px; }
svg text { font-family: inherit; }
.warn { background: #fff6e0; border-left: 4px solid #e0a100; padding: 0.5em 1em; font-size: 0.9em; }
td.small { color: #a15c00; }
"""


# --------------------------------------------------------------------------- SVG primitives


def _t(
    x: float,
    y: float,
    text: str,
    *,
    size: int = 11,
    anchor: str = "middle",
    weight: str = "normal",
    fill: str = "#333",
    rotate: float | None = None,
) -> str:
    transform = f' transform="rotate({rotate:.0f} {x:.1f} {y:.1f})"' if rotate is not None else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" '
        f'fill="{fill}"{transform}>{escape(text)}</text>'
    )


def _svg(width: int, height: int, body: Sequence[str], label: str) -> str:
    return (
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(label)}">' + "".join(body) + "</svg>"
    )


def _legend(labels: Sequence[str], x: float, y: float) -> list[str]:
    out = []
    for i, lab in enumerate(labels):
        yy = y + 16 * i
        out.append(
            f'<rect x="{x:.1f}" y="{yy - 9:.1f}" width="11" height="11" fill="{PALETTE[i % len(PALETTE)]}"/>'
        )
        out.append(_t(x + 16, yy, lab, anchor="start"))
    return out


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(value))
    for m in (1, 2, 2.5, 5, 10):
        if value <= m * exp:
            return m * exp
    return 10 * exp


def _tick(value: float) -> str:
    """Axis numbers as people read them: 25,000 rather than 2.5e+04."""
    return f"{value:,.0f}" if value >= 100 else f"{value:g}"


def radar_svg(axes: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]], title: str) -> str:
    """A radar chart on a 0-100 scale, one polygon per series (missing values drawn at 0, hollow marker)."""
    w, h = 520, 380
    cx, cy, radius = 200, 200, 140
    body = [_t(w / 2, 18, title, size=13, weight="600")]
    n = len(axes)

    def point(i: int, value: float) -> tuple[float, float]:
        angle = -math.pi / 2 + 2 * math.pi * i / n
        r = radius * max(0.0, min(100.0, value)) / 100.0
        return cx + r * math.cos(angle), cy + r * math.sin(angle)

    for level in (25, 50, 75, 100):
        ring = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(i, level) for i in range(n)))
        body.append(f'<polygon points="{ring}" fill="none" stroke="#ddd"/>')
        x, y = point(0, level)
        body.append(_t(x - 4, y + 10, str(level), size=9, anchor="end", fill="#888"))
    for i, name in enumerate(axes):
        x, y = point(i, 100)
        body.append(f'<line x1="{cx}" y1="{cy}" x2="{x:.1f}" y2="{y:.1f}" stroke="#ccc"/>')
        lx, ly = point(i, 118)
        body.append(_t(lx, ly + 4, name, weight="600"))
    for k, (_, values) in enumerate(series):
        color = PALETTE[k % len(PALETTE)]
        pts = [point(i, v or 0.0) for i, v in enumerate(values)]
        body.append(
            f'<polygon points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in pts)}" fill="{color}" '
            f'fill-opacity="0.12" stroke="{color}" stroke-width="2"/>'
        )
        for (x, y), v in zip(pts, values, strict=True):
            fill = color if v is not None else "#fff"
            body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{fill}" stroke="{color}"/>')
    body += _legend([s[0] for s in series], 385, 60)
    return _svg(w, h, body, title)


def bars_svg(
    groups: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    title: str,
    y_title: str = "%",
    y_max: float = 100.0,
    errors: Sequence[Sequence[float | None]] | None = None,
) -> str:
    """Grouped vertical bars (one group per category on the x axis, one bar per series)."""
    w, h = 540, 340
    left, right, top, bottom = 48, 130, 34, 56
    pw, ph = w - left - right, h - top - bottom
    body = [_t(w / 2 - 40, 18, title, size=13, weight="600")]
    for tick in range(0, 5):
        value = y_max * tick / 4
        y = top + ph - ph * tick / 4
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#eee"/>')
        body.append(_t(left - 6, y + 4, f"{value:g}", size=10, anchor="end"))
    body.append(_t(14, top + ph / 2, y_title, size=10, rotate=-90))
    n_g, n_s = max(1, len(groups)), max(1, len(series))
    gw = pw / n_g
    bw = min(36.0, gw * 0.8 / n_s)
    for g, name in enumerate(groups):
        x0 = left + g * gw + (gw - bw * n_s) / 2
        for k, (_, values) in enumerate(series):
            v = values[g]
            x = x0 + k * bw
            if v is None:
                body.append(_t(x + bw / 2, top + ph - 4, "n/a", size=8, fill="#999"))
                continue
            bh = ph * max(0.0, min(v, y_max)) / y_max
            body.append(
                f'<rect x="{x:.1f}" y="{top + ph - bh:.1f}" width="{bw - 2:.1f}" height="{bh:.1f}" '
                f'fill="{PALETTE[k % len(PALETTE)]}"><title>{escape(f"{series[k][0]}: {v:.2f}")}</title></rect>'
            )
            body.append(_t(x + (bw - 2) / 2, top + ph - bh - 3, f"{v:.0f}", size=8, fill="#555"))
            err = errors[k][g] if errors else None
            if err:
                xm = x + (bw - 2) / 2
                y1 = top + ph - ph * min(y_max, v + err) / y_max
                y2 = top + ph - ph * max(0.0, v - err) / y_max
                body.append(f'<line x1="{xm:.1f}" y1="{y1:.1f}" x2="{xm:.1f}" y2="{y2:.1f}" stroke="#222"/>')
        body.append(_t(left + g * gw + gw / 2, top + ph + 16, name, size=10))
    body.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#444"/>')
    body += _legend([s[0] for s in series], left + pw + 14, top + 10)
    return _svg(w, h, body, title)


def scatter_svg(
    points: Sequence[tuple[str, str, float, float, float | None]],
    labels: Sequence[str],
    title: str,
    x_title: str,
) -> str:
    """Cost (x) against accuracy (y, 0-100) with vertical ± SE error bars.

    ``points``: (run label, family, x, y, se). Colour by run, marker by family (circle RCA, square path,
    triangle topology, then a shape of its own for each plug-in family, :func:`.family_view.shape_of`);
    only the families present are in the legend.
    """
    plugin_order = sorted({p[1] for p in points if family_view.is_plugin(p[1])})
    w, h = 560, 360
    left, right, top, bottom = 64, 140, 34, 52
    pw, ph = w - left - right, h - top - bottom
    x_max = _nice_max(max((p[2] for p in points), default=1.0) * 1.05)
    body = [_t(w / 2 - 50, 18, title, size=13, weight="600")]
    for tick in range(0, 5):
        y = top + ph - ph * tick / 4
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#eee"/>')
        body.append(_t(left - 6, y + 4, f"{25 * tick}", size=10, anchor="end"))
        x = left + pw * tick / 4
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#f3f3f3"/>')
        body.append(_t(x, top + ph + 15, _tick(x_max * tick / 4), size=10))
    body.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>')
    body.append(_t(left + pw / 2, h - 10, x_title, size=10))
    body.append(_t(16, top + ph / 2, "accuracy (%)", size=10, rotate=-90))
    for label, family, xv, yv, se in points:
        k = labels.index(label)
        color = PALETTE[k % len(PALETTE)]
        px = left + pw * xv / x_max
        py = top + ph - ph * max(0.0, min(100.0, yv)) / 100
        if se:
            y1 = top + ph - ph * min(100.0, yv + se) / 100
            y2 = top + ph - ph * max(0.0, yv - se) / 100
            body.append(f'<line x1="{px:.1f}" y1="{y1:.1f}" x2="{px:.1f}" y2="{y2:.1f}" stroke="{color}"/>')
            for yy in (y1, y2):
                body.append(
                    f'<line x1="{px - 4:.1f}" y1="{yy:.1f}" x2="{px + 4:.1f}" y2="{yy:.1f}" stroke="{color}"/>'
                )
        tip = f"<title>{escape(f'{label} {family_view.label(family)}: {yv:.2f}% at {xv:,.4g}')}</title>"
        body.append(_marker(family_view.shape_of(family, plugin_order), px, py, color, tip))
    body += _legend(labels, left + pw + 14, top + 10)
    ly = top + 30 + 16 * len(labels)
    for fam in sorted({p[1] for p in points}, key=family_view.order_key):
        body.append(_marker(family_view.shape_of(fam, plugin_order), left + pw + 19, ly - 4, "#777", ""))
        body.append(_t(left + pw + 30, ly, family_view.label(fam), anchor="start"))
        ly += 16
    return _svg(w, h, body, title)


def _marker(shape: str, x: float, y: float, color: str, tip: str) -> str:
    """A point drawn as one of :data:`.family_view.SHAPES` (a family's marker)."""
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{color}">{tip}</circle>'
    if shape == "square":
        return f'<rect x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" fill="{color}">{tip}</rect>'
    corners = {
        "triangle": ((0, -6), (6, 5), (-6, 5)),
        "diamond": ((0, -6), (6, 0), (0, 6), (-6, 0)),
        "down-triangle": ((0, 6), (6, -5), (-6, -5)),
        "hexagon": ((0, -6), (5.2, -3), (5.2, 3), (0, 6), (-5.2, 3), (-5.2, -3)),
        "star": tuple(
            (r * math.sin(math.pi * k / 5), -r * math.cos(math.pi * k / 5))
            for k, r in zip(range(10), (6.5, 2.8) * 5, strict=True)
        ),
        "cross": (
            (-2, -6),
            (2, -6),
            (2, -2),
            (6, -2),
            (6, 2),
            (2, 2),
            (2, 6),
            (-2, 6),
            (-2, 2),
            (-6, 2),
            (-6, -2),
            (-2, -2),
        ),
    }[shape]
    pts = " ".join(f"{x + dx:.1f},{y + dy:.1f}" for dx, dy in corners)
    return f'<polygon points="{pts}" fill="{color}">{tip}</polygon>'


# --------------------------------------------------------------------------- charts from a report


def _stratum_acc(run: Any, name: str, family: str, value: str) -> tuple[float | None, int]:
    st = run.scores["breakdowns"][name]["strata"].get(value)
    if st is None or not (st["metrics"].get(family) or {}).get("n_tasks"):  # a plug-in's: only when present
        return None, 0
    m = st["metrics"][family]
    return (None if m["accuracy"] is None else 100 * m["accuracy"]), m["n_tasks"]


def _values_of(report: Report, name: str, family: str) -> list[str]:
    seen: list[str] = []
    for r in report.runs:
        for value, st in r.scores["breakdowns"][name]["strata"].items():
            if (st["metrics"].get(family) or {}).get("n_tasks") and value not in seen:
                seen.append(value)
    return report.ordered(name, seen)


def charts(report: Report) -> list[tuple[str, str]]:
    """(svg, caption) for every chart the report's data supports."""
    labels = [r.label for r in report.runs]
    out: list[tuple[str, str]] = []
    cats = sorted(_values_of(report, "category", "rca"))
    if cats:
        series = [(r.label, [_stratum_acc(r, "category", "rca", c)[0] for c in cats]) for r in report.runs]
        caption = (
            "RCA exact accuracy by merged root-cause category (a task counts in each of its categories): "
            + "; ".join(f"{c} {report.category_names.get(c, '')}" for c in cats)
        )
        if len(cats) >= 3:
            out.append((radar_svg(cats, series, "RCA accuracy by category (%)"), caption))
        else:
            out.append((bars_svg(cats, series, "RCA accuracy by category (%)"), caption))
    groups: list[str] = []
    het_series: list[list[float | None]] = [[] for _ in report.runs]
    plugins = family_view.plugins(r.scores for r in report.runs)
    for fam in [*FAMILY_TITLES, *plugins]:
        for level in _values_of(report, "heterogeneity", fam):
            groups.append(f"{family_view.label(fam)} {level}")
            for k, r in enumerate(report.runs):
                het_series[k].append(_stratum_acc(r, "heterogeneity", fam, level)[0])
    if groups:
        out.append(
            (
                bars_svg(groups, list(zip(labels, het_series, strict=True)), "Accuracy by heterogeneity (%)"),
                "Exact accuracy by network-heterogeneity level, per family (levels from ctbench.yaml).",
            )
        )
    levels = sorted(_values_of(report, "observability", "rca"))
    if levels:
        series = [
            (r.label, [_stratum_acc(r, "observability", "rca", lv)[0] for lv in levels]) for r in report.runs
        ]
        out.append(
            (
                bars_svg(levels, series, "RCA accuracy by observability (%)"),
                "RCA exact accuracy by observability: O1 decisive evidence directly observable, O2 only inferable.",
            )
        )
    points = []
    use = "total_tokens"
    if all(
        r.scores["summary"]["efficiency"]["all"]["total_tokens"]["mean"] in (None, 0) for r in report.runs
    ):
        use = "latency_s"
    for r in report.runs:
        for fam in [*FAMILY_TITLES, *plugins]:
            summ = r.scores["summary"].get(fam)
            if not summ:
                continue
            x = (r.scores["summary"]["efficiency"].get(fam) or {}).get(use, {}).get("mean")
            if not summ["n_tasks"] or x is None or summ["accuracy"] is None:
                continue
            se = r.scores["se"][fam]["accuracy"]
            points.append((r.label, fam, float(x), 100 * summ["accuracy"], None if se is None else 100 * se))
    if points:
        x_title = "mean total tokens per task" if use == "total_tokens" else "mean latency per task (s)"
        out.append(
            (
                scatter_svg(points, labels, "Cost vs accuracy", x_title),
                f"Exact accuracy (± SE) against {x_title}; circles RCA, squares path restoration, triangles "
                "topology restoration. "
                + _plugin_markers(sorted({p[1] for p in points if family_view.is_plugin(p[1])}))
                + "More spending does not have to buy more accuracy.",
            )
        )
    out += [_plugin_chart(report, fam) for fam in plugins]
    return out


def _plugin_markers(plugins: Sequence[str]) -> str:
    """The caption's words for the plug-in families' markers (empty without plug-ins)."""
    if not plugins:
        return ""
    said = [
        f"{family_view.SHAPE_NAMES[family_view.shape_of(f, list(plugins))]} {f} ({family_view.title(f)})"
        for f in plugins
    ]
    return "Plug-in families: " + "; ".join(said) + ". "


def _plugin_chart(report: Report, family: str) -> tuple[str, str]:
    """A plug-in family's headline figures and parts per run, ± SE: grouped bars, one group per figure
    (accuracy, Loc, each part the family names in its ``columns``, pooled evidence coverage)."""
    parts: list[str] = []
    for r in report.runs:
        parts += [p for p in family_view.parts(r.scores["summary"].get(family) or {}) if p not in parts]
    figures = [("Acc", "accuracy", "accuracy"), ("Loc", "loc_iou", "loc_iou"), *((p, p, p) for p in parts)]
    groups = [name for name, _, _ in figures] + ["Evid."]
    series: list[tuple[str, list[float | None]]] = []
    errors: list[list[float | None]] = []
    for r in report.runs:
        summ = r.scores["summary"].get(family) or {}
        se = r.scores["se"].get(family) or {}
        if not summ.get("n_tasks"):
            series.append((r.label, [None] * len(groups)))
            errors.append([None] * len(groups))
            continue
        values = [summ.get(key) for _, key, _ in figures] + [summ["evidence"]["coverage"]]
        ses = [se.get(key) for _, _, key in figures] + [se.get("evidence_coverage")]
        series.append((r.label, [None if v is None else 100 * v for v in values]))
        errors.append([None if e is None else 100 * e for e in ses])
    name = family_view.title(family)
    chart = bars_svg(groups, series, f"{name}: headline figures (%)", errors=errors)
    caption = (
        f"Task family {family} ({name}, a plug-in): exact accuracy, Loc and its own per-task figures "
        f"({', '.join(parts) or 'none'}) as task means, and pooled golden-action coverage (Evid.), "
        "each ± SE across tasks."
    )
    return chart, caption


# --------------------------------------------------------------------------- tables


def _is_number(cell: Any) -> bool:
    return isinstance(cell, (int, float)) and not isinstance(cell, bool)


def table_html(t: Table) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in t.columns)
    rows = []
    for row in t.rows:
        cells = []
        for i, cell in enumerate(row):
            cls = (
                ' class="num"'
                if _is_number(cell) or (i > 0 and isinstance(cell, str) and "±" in cell)
                else ""
            )
            if isinstance(cell, str) and cell.startswith("n < "):
                cls = ' class="small"'
            cells.append(f"<td{cls}>{escape(t.text(i, cell))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    note = f'<p class="note">{escape(t.note)}</p>' if t.note else ""
    return (
        f'<table id="{escape(t.key or "")}"><caption>{escape(t.title)}</caption><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{note}"
    )


def render_html(report: Report, tables: Sequence[Table]) -> str:
    """The whole report as one HTML document."""
    names = ", ".join(r.label for r in report.runs)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>ctbench report: {escape(names)}</title>",
        f"<style>{CSS}{TASKS_CSS}</style></head><body>",
        "<h1>ctbench evaluation report</h1>",
        f'<p class="sub">{len(report.runs)} run(s): {escape(names)}. Percentages; ± is the standard error '
        "across tasks.</p>",
    ]
    warnings = [t for t in tables if t.key == "warnings"]
    if warnings:
        items = "".join(f"<li>{escape(str(row[0]))}</li>" for row in warnings[0].rows)
        parts.append(f'<div class="warn"><strong>Warnings</strong><ul>{items}</ul></div>')
    figs = charts(report)
    if figs:
        parts.append('<h2>Charts</h2><div class="charts">')
        for svg, caption in figs:
            parts.append(f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>")
        parts.append("</div>")
    parts.append("<h2>Tables</h2>")
    for t in tables:
        if t.key != "warnings":
            parts.append(table_html(t))
    parts.append(tasks_section(report))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
