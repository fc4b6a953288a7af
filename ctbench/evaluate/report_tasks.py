"""The HTML report's drill-down: every task of every run, in one sortable, filterable table whose rows
open what the viewer shows (answer against gold, golden actions, the trajectory with the device
output - collapsed - and the agent's log).

Still one self-contained file: the table is plain HTML, sorting and filtering are a few lines of
inline script, nothing is fetched. Each task of each run is its own ``<tbody class="task">`` holding
the summary row and its (hidden) detail row, so sorting moves a task with its detail and filtering
hides both. Outputs are clipped per step (:data:`OUTPUT_CLIP`).

**Details load on demand** (issue 29, the paper's scale): a detail row carries its HTML gzipped and
base64-encoded in ``data-z``, and the page's script unpacks it (the browser's own
``DecompressionStream``) the first time the row is opened. A 4 x 234-task report was 2.5 MB of inline
details that the browser parsed into a DOM before showing anything; packed, the page holds only the
summary rows and stays a file one can mail at a few thousand tasks (``tests/bench/bench_report_html.py``).
Only the first :data:`PAGE_ROWS` rows are laid out when the page opens; the rest are listed by the filter,
a sort or the "list all" button.
:func:`unpack_detail` reads a packed detail back (for tests and tools).
"""

from __future__ import annotations

import base64
import gzip
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from html import escape
from typing import TYPE_CHECKING, Any

from ctbench.cores import available_cores
from ctbench.evaluate.details import DetailLoader, TaskDetail
from ctbench.evaluate.forked import forked_map
from ctbench.evaluate.transcript import describe

if TYPE_CHECKING:
    from ctbench.evaluate.report import Report

OUTPUT_CLIP = 8000
"""Characters of one step's output kept in the HTML (the full output is in the viewer and the ATIF export)."""
LOG_CLIP = 20000
PACK_BATCH = 64
"""Details handed to the packing thread at once (see :func:`tasks_section`)."""
PAGE_ROWS = 100
"""Task rows listed when the page opens (the rest wait, hidden, for the filter, a sort or "list all").

Laying out a table is the cost of opening the page: at 4 x 234 tasks, 936 rows took Chromium about a
second of layout on a loaded 2-core machine and the page 1.8-3.4 s to open; with 100 rows listed it opened
in 0.5-0.9 s under the same load (``tests/bench/bench_report_html.py``). Rows past the first page are
written ``hidden`` so the browser never lays them out while it parses, not only after the script ran."""

CSS = """
#tasks-filter { width: 32em; padding: 0.3em; margin: 0.4em 0; }
table.tasks th { cursor: pointer; user-select: none; white-space: nowrap; }
table.tasks th[aria-sort="ascending"]::after { content: " ▲"; } table.tasks th[aria-sort="descending"]::after { content: " ▼"; }
table.tasks tr.main { cursor: pointer; } table.tasks tr.main:hover { background: #f3f7ff; }
table.tasks td.ok { color: #1a7f37; } table.tasks td.bad { color: #b42318; }
tr.detail td { background: #fafafa; padding: 0.6em 1em; } tr.detail pre { white-space: pre-wrap; font-size: 0.85em;
  background: #fff; border: 1px solid #e4e4e4; padding: 0.4em; max-height: 24em; overflow: auto; }
tr.detail ul { margin: 0.2em 0 0.6em; padding-left: 1.4em; } details { margin: 0.4em 0; } summary { cursor: pointer; }
li.hit { color: #1a7f37; } li.miss { color: #b42318; } span.parts { color: #666; font-size: 0.85em; }
"""

SCRIPT = """
(function () {
  var table = document.getElementById('tasks');
  if (!table) return;
  var filter = document.getElementById('tasks-filter');
  var count = document.getElementById('tasks-count');
  var more = document.getElementById('tasks-more');
  var limit = parseInt(table.getAttribute('data-page'), 10) || Infinity;
  function groups() { return Array.prototype.slice.call(table.tBodies); }
  function refresh() {
    var words = filter.value.toLowerCase().split(/\\s+/).filter(Boolean), shown = 0;
    groups().forEach(function (g) {
      var text = g.rows[0].textContent.toLowerCase();
      var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
      if (ok) shown++;
      g.hidden = !ok || shown > limit;
    });
    count.textContent = shown + ' of ' + table.tBodies.length + ' task(s)' +
      (shown > limit ? ', the first ' + limit + ' listed' : '');
    more.hidden = shown <= limit;
    more.textContent = 'list all ' + shown;
  }
  filter.addEventListener('input', refresh);
  more.addEventListener('click', function () { limit = Infinity; refresh(); });
  function unpack(cell) {
    var packed = cell.getAttribute('data-z');
    if (!packed) return Promise.resolve();
    cell.removeAttribute('data-z');
    var raw = atob(packed), bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).text().then(function (html) { cell.innerHTML = html; });
  }
  table.addEventListener('click', function (e) {
    var row = e.target.closest('tr.main');
    if (!row) return;
    var detail = row.parentNode.rows[1];
    unpack(detail.cells[0]).then(function () {
      detail.hidden = !detail.hidden;
      row.setAttribute('aria-expanded', detail.hidden ? 'false' : 'true');
    });
  });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    th.addEventListener('click', function () {
      var desc = th.getAttribute('aria-sort') === 'ascending';
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
      var key = function (g) { var c = g.rows[0].cells[i]; return c.getAttribute('data-v') || c.textContent; };
      var rows = groups().sort(function (a, b) {
        var x = key(a), y = key(b), nx = parseFloat(x), ny = parseFloat(y);
        var r = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return desc ? -r : r;
      });
      rows.forEach(function (g) { table.appendChild(g); });
      refresh();
    });
  });
  refresh();
})();
"""

HEAD = (
    "Run",
    "Task",
    "Family",
    "Outcome",
    "Acc",
    "Loc",
    "ID/Rest",
    "Evidence",
    "Fail",
    "Rounds",
    "Tokens",
    "Latency (s)",
)


def _pct(v: float | None) -> tuple[str, str]:
    return ("–", "") if v is None else (f"{100 * v:.0f}", f"{v:.6f}")


def _td(text: str, *, cls: str = "", value: str | None = None) -> str:
    attrs = (f' class="{cls}"' if cls else "") + (f' data-v="{escape(value)}"' if value is not None else "")
    return f"<td{attrs}>{escape(text)}</td>"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit:,} more characters)"


def detail_html(d: TaskDetail) -> str:
    """What the viewer shows of one task, as HTML; the trajectory and the log start collapsed."""
    parts = ["<p><strong>Answer</strong> (✓ in the gold, ✗ not)</p><ul>"]
    if not d.predicted:
        parts.append("<li>(no entry could be read)</li>")
    for e in d.predicted:
        what = " ".join(f"{n}{'✓' if ok else '✗'}" for n, ok in e.parts)
        parts.append(
            f'<li class="{"hit" if e.matched else "miss"}">{"✓" if e.matched else "✗"} {escape(e.text)} '
            f'<span class="parts">{escape(what)}</span></li>'
        )
    parts.append("</ul><p><strong>Gold</strong> (✓ found in the answer)</p><ul>")
    parts += [
        f'<li class="{"hit" if e.matched else "miss"}">{"✓" if e.matched else "✗"} {escape(e.text)}</li>'
        for e in d.gold
    ]
    parts.append("</ul>")
    if d.invalid_lines:
        parts.append("<p><strong>Lines that could not be read</strong></p><ul>")
        parts += [f"<li>{escape(line)}</li>" for line in d.invalid_lines]
        parts.append("</ul>")
    covered = sum(g.covered for g in d.golden)
    parts.append(f"<p><strong>Golden actions</strong> {covered}/{len(d.golden)} covered</p><ul>")
    parts += [
        f'<li class="{"hit" if g.covered else "miss"}">{"✓ covered" if g.covered else "✗ missed"}: '
        f"{escape(g.device)}: {escape(g.command)}</li>"
        for g in d.golden
    ]
    parts.append("</ul>")
    steps = []
    for s in d.steps:
        mark = " ★ golden" if s.golden else ""
        out = _clip(s.output, OUTPUT_CLIP) if s.output is not None else "(output not available)"
        steps.append(
            f'<li class="step"><code>{escape(s.device)}: {escape(s.command)}</code> '
            f"({escape(s.outcome)}{mark}, {s.t:.1f}s)<pre>{escape(out)}</pre></li>"
        )
    parts.append(
        f'<details class="trajectory"><summary>Trajectory: {len(d.steps)} step(s)</summary>'
        f"<ol>{''.join(steps) or '<li>(no command)</li>'}</ol></details>"
    )
    if d.answer_text:
        parts.append(
            f"<details><summary>Answer as written</summary><pre>{escape(d.answer_text)}</pre></details>"
        )
    if d.transcript:
        items = []
        for entry in d.transcript:
            head, body = describe(entry, OUTPUT_CLIP)
            items.append(f"<li><code>{escape(head)}</code><pre>{escape(body)}</pre></li>")
        parts.append(
            f'<details class="transcript"><summary>Transcript: {len(d.transcript)} entries '
            f"({escape(d.transcript[0].source)})</summary><ol>{''.join(items)}</ol></details>"
        )
    if d.turns or d.log_text:
        turns = "".join(f"<li>{escape(t.role)}: {escape(t.text[:500])}</li>" for t in d.turns)
        log = f"<pre>{escape(_clip(d.log_text, LOG_CLIP))}</pre>" if d.log_text else ""
        parts.append(
            f"<details><summary>Agent log</summary>{'<ol>' + turns + '</ol>' if turns else ''}{log}</details>"
        )
    if d.warnings:
        parts.append(f'<p class="note">{escape("; ".join(d.warnings))}</p>')
    return "".join(parts)


def pack_detail(html: str) -> str:
    """A detail's HTML as the page carries it: gzip (no timestamp: the same report gives the same
    bytes), then base64."""
    return base64.b64encode(gzip.compress(html.encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")


def unpack_detail(packed: str) -> str:
    """The HTML of a detail packed by :func:`pack_detail`."""
    return gzip.decompress(base64.b64decode(packed)).decode("utf-8")


def _row(label: str, d: TaskDetail, *, listed: bool = True) -> tuple[str, str]:
    """A task's ``<tbody>`` around its detail cell: (everything before the cell's content, after it)."""
    s = d.scores
    third = s.third
    loc, loc_v = _pct(s.loc)
    th, th_v = _pct(third)
    u = s.usage
    tokens = u.total_tokens
    cells = [
        _td(label),
        _td(d.task_id),
        _td(d.family),
        _td(d.outcome),
        _td("✓" if s.exact else "✗", cls="ok" if s.exact else "bad", value="1" if s.exact else "0"),
        _td(loc, cls="num", value=loc_v),
        _td(th, cls="num", value=th_v),
        _td(
            f"{s.evidence.covered}/{s.evidence.golden}",
            cls="num",
            value=f"{s.evidence.covered / s.evidence.golden:.6f}" if s.evidence.golden else "1",
        ),
        _td(s.failure or ""),
        _td("–" if u.rounds is None else str(u.rounds), cls="num"),
        _td("–" if tokens is None else f"{tokens:,}", cls="num", value="" if tokens is None else str(tokens)),
        _td("–" if u.latency_s is None else f"{u.latency_s:.1f}", cls="num"),
    ]
    return (
        f'<tbody class="task" data-run="{escape(label)}" data-task="{escape(d.task_id)}"{"" if listed else " hidden"}>'
        f'<tr class="main" aria-expanded="false">{"".join(cells)}</tr>'
        f'<tr class="detail" hidden><td colspan="{len(HEAD)}"',
        "</td></tr></tbody>",
    )


def _packed_cells(htmls: list[str]) -> list[str]:
    return [f' data-z="{pack_detail(html)}">' for html in htmls]


_Item = tuple[int, int, Any]
"""One task-trial's place in the table, its run's position in the report, and its scores."""


def _render_share(
    report: Report,
    loader: DetailLoader,
    results: list[dict[tuple[str, int], Any]],
    packed: bool,
    share: list[_Item],
) -> list[tuple[str, str, str]]:
    """(before, cell, after) of each task-trial of ``share``, in its order.

    zlib lets go of the GIL while it compresses: details are packed on a second thread while the next
    ones are read from their run folders (packing alone was ~1.1 s of a 4 x 234 render, reading the
    details ~6 s). In batches: handing the thread one detail at a time cost more in GIL hand-overs (3 s
    on a loaded machine) than it saved.
    """
    rows: list[tuple[str, str]] = []
    cells: list[str] = []
    batches: list[Future[list[str]]] = []
    batch: list[str] = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctb-pack") as pool:
        for index, r, s in share:
            run = report.runs[r]
            detail = loader.load(
                run.run.path, s.task_id, results[r].get((s.task_id, s.trial)), with_prompt=False, scores=s
            )
            label = f"{run.label} (trial {s.trial})" if run.run.info.trials > 1 else run.label
            rows.append(_row(label, detail, listed=index < PAGE_ROWS))
            html = detail_html(detail)
            if not packed:
                cells.append(f">{html}")
                continue
            batch.append(html)
            if len(batch) == PACK_BATCH:
                batches.append(pool.submit(_packed_cells, batch))
                batch = []
        if batch:
            batches.append(pool.submit(_packed_cells, batch))
        for done in batches:
            cells.extend(done.result())
    return [(before, cell, after) for (before, after), cell in zip(rows, cells, strict=True)]


def _shares(items: list[_Item], n: int) -> list[list[_Item]]:
    """``items`` cut into at most ``n`` shares of about equal size, every trial of a task in one share.

    A task's runs stay together so that each process loads a task once and replays each of its commands
    once (what the loader caches), and so that the output is the same whatever the number of shares.
    """
    by_task: dict[str, list[_Item]] = {}
    for item in items:
        by_task.setdefault(item[2].task_id, []).append(item)
    groups = list(by_task.values())
    target = -(-len(items) // max(1, n))
    shares: list[list[_Item]] = [[]]
    for group in groups:
        if len(shares[-1]) >= target and len(shares) < n:
            shares.append([])
        shares[-1].extend(group)
    return [share for share in shares if share]


MIN_SHARE = 64
"""Task-trials below which a share is not worth a process (a fork costs a few milliseconds)."""


def tasks_section(
    report: Report, loader: DetailLoader | None = None, *, packed: bool = True, workers: int | None = None
) -> str:
    """The per-task section of the HTML report (empty when the report knows no task set); ``packed``
    False writes the details inline, as before (the benchmark's baseline).

    ``workers`` (default: the report's, else the cores this process may use) processes share the
    task-trials, each a group of whole tasks (:mod:`ctbench.evaluate.forked`; the same page with any
    number of them)."""
    scorer: Any = getattr(report, "scorer", None)
    if loader is None and scorer is None:
        return ""
    loader = loader or DetailLoader(scorer)
    results = [_results(run.run.path) for run in report.runs]
    rows = ((r, s) for r, run in enumerate(report.runs) for s in run.run.trial_scores)  # one per task-trial
    items: list[_Item] = [(i, r, s) for i, (r, s) in enumerate(rows)]
    workers = report.workers if workers is None else workers
    workers = available_cores() if workers is None else workers
    shares = _shares(items, max(1, min(workers, len(items) // MIN_SHARE)))
    done = forked_map(partial(_render_share, report, loader, results, packed), shares, workers=workers)
    by_index = {
        item[0]: row
        for share, rows in zip(shares, done, strict=True)
        for item, row in zip(share, rows, strict=True)
    }
    bodies = ["".join(by_index[i]) for i in range(len(items))]
    head = "".join(f"<th>{escape(h)}</th>" for h in HEAD)
    return (
        '<h2 id="per-task">Tasks</h2><p class="note">Every task of every run. Click a heading to sort, a row to '
        "open the task: its answer beside the gold, the golden actions covered or missed, the trajectory with "
        "what each device printed (collapsed), and the agent's log."
        + (
            f" The first {PAGE_ROWS} rows are listed; the filter and the headings reach every task."
            if len(bodies) > PAGE_ROWS
            else ""
        )
        + "</p>"
        '<input id="tasks-filter" type="search" placeholder="filter: run, task id, outcome, F-label...">'
        ' <span id="tasks-count"></span> <button id="tasks-more" type="button" hidden></button>'
        f'<table class="tasks" id="tasks" data-page="{PAGE_ROWS}"><thead><tr>{head}</tr></thead>'
        f"{''.join(bodies)}</table>"
        f"<script>{SCRIPT}</script>"
    )


def _results(path: Any) -> dict[tuple[str, int], Any]:
    """Result lines by (task id, trial): a run of several trials drills down into each."""
    from ctbench.evaluate.score import read_trial_results

    by_key, _ = read_trial_results(path)
    return {k: line for k, (_, line) in by_key.items()}


__all__ = ["CSS", "HEAD", "detail_html", "pack_detail", "tasks_section", "unpack_detail"]
