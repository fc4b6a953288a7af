"""Benchmark of the HTML report at the paper's scale and beyond: its size, the time to render it, and the
time headless Chromium takes to open it, with the task details packed (loaded on demand, as now) beside
the same report with every detail inline (as before).

Run from the repository root (figures, not a timed test; pytest does not collect tests/bench):

    python tests/bench/bench_report_html.py              # 4 x 234 and 4 x 2,000 tasks
    python tests/bench/bench_report_html.py --sizes 234  # the paper's shape only

The task sets and runs are those of ``bench_report.py`` (generated RCA and path tasks on the bundled
campus-lab network, four runs of different accuracy), made realistic where the drill-down reads them:
each recording holds a real device output taken from the bundled tasks (so the replayed outputs in
each trajectory are kilobytes, as in a real run), and each task has an agent log of a harness's size.
The report is built with 200 resamples (the statistics are ``bench_report.py``'s subject, not this one).

Targets (issue 29, item 6): the page for 4 x 234 tasks under 3 MB and open in under 2 s in headless
Chromium (``apt-get install chromium``; without it the open time is not measured).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_report import write_runs, write_task_set  # noqa: E402

from ctbench.evaluate.report import build_report  # noqa: E402
from ctbench.evaluate.report_formats import render_report  # noqa: E402
from ctbench.store import TaskSet  # noqa: E402

BUNDLED = Path(__file__).resolve().parents[2] / "tasks"
TARGET_BYTES = 3_000_000
TARGET_OPEN_S = 2.0
LOG_LINE = (
    '{"type":"item.completed","item":{"id":"item_%d","type":"mcp_tool_call","server":"ctb","tool":'
    '"run_command","arguments":{"device":"CORE_SW_01","command":"display interface brief"},"status":"completed"}}\n'
)


def real_outputs() -> list[str]:
    """Device outputs as recorded, from the bundled tasks (kilobytes each, the shape the HTML shows)."""
    texts = sorted(
        {p.read_text(encoding="utf-8", errors="replace") for p in BUNDLED.glob("*/*/recordings/*/*.txt")}
    )
    return [t for t in texts if len(t) > 200] or texts


def realistic(root: Path, runs: list[Path]) -> None:
    """Real outputs into every generated recording; a harness-sized log per task and run."""
    outputs = real_outputs()
    for i, rec in enumerate(sorted(root.glob("*/*/recordings/*/*.txt"))):
        first = rec.read_text(encoding="utf-8").splitlines()[0]  # "<DEV>command": the echo stays
        rec.write_text(first + "\n" + outputs[i % len(outputs)], encoding="utf-8")
    for run in runs:
        logs = run / "logs"
        logs.mkdir(exist_ok=True)
        for traj in (run / "trajectories").glob("*.jsonl"):
            (logs / f"{traj.stem}.log").write_text("".join(LOG_LINE % k for k in range(40)), encoding="utf-8")


def open_time(path: Path) -> tuple[float, float] | None:
    """Seconds headless Chromium takes to load the file, and then to open the first task's detail."""
    from tests.browser_support import Browser, chromium_path

    exe = chromium_path()
    if exe is None:
        return None
    with (
        tempfile.TemporaryDirectory(prefix="ctb-bench-chromium-") as profile,
        Browser(exe, Path(profile), timeout=300) as b,
    ):
        t0 = time.perf_counter()
        b.open(path.as_uri())
        loaded = time.perf_counter() - t0
        t0 = time.perf_counter()
        b.click("#tasks tbody.task tr.main")
        b.wait_for(
            "(function () { var d = document.querySelector('#tasks tbody.task tr.detail');"
            " return !d.hidden && d.innerText.indexOf('Golden actions') >= 0; })()",
            "the first task's detail",
        )
        return loaded, time.perf_counter() - t0


def timed(spent: dict[str, float]) -> Callable[[], None]:
    """Time spent reading task details, writing their HTML and packing it, added up into ``spent`` while
    a report renders (the causes of a render's time, apart); returns what puts the functions back."""
    import ctbench.evaluate.report_tasks as report_tasks
    from ctbench.evaluate.details import DetailLoader

    originals = (DetailLoader.load, report_tasks.detail_html, report_tasks.pack_detail)

    def wrap(key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed_fn(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - t0

        return timed_fn

    DetailLoader.load = wrap("load", originals[0])  # type: ignore[method-assign]
    report_tasks.detail_html = wrap("html", originals[1])
    report_tasks.pack_detail = wrap("pack", originals[2])

    def restore() -> None:
        DetailLoader.load, report_tasks.detail_html, report_tasks.pack_detail = originals  # type: ignore[method-assign]

    return restore


def one_size(n: int, tmp: Path) -> None:
    n_rca = round(n * 0.54)
    root = tmp / f"tasks-{n}"
    root.mkdir()
    t0 = time.perf_counter()
    ts, info = write_task_set(root, n_rca, n - n_rca, seed=1)
    runs = write_runs(tmp / f"out-{n}", ts, info, seed=1)
    realistic(root, runs)
    print(
        f"4 runs x {n} tasks ({n_rca} RCA + {n - n_rca} path); generated in {time.perf_counter() - t0:.1f} s"
    )
    t0 = time.perf_counter()
    report = build_report(runs, TaskSet.open(root), n_resamples=200)
    print(
        f"    report built (scores, SEs, comparisons) in {time.perf_counter() - t0:.1f} s; not counted below"
    )
    import ctbench.evaluate.report_html as report_html
    from ctbench.evaluate.report_tasks import tasks_section

    figures = {}
    for name, packed in (("before: details inline", False), ("now: details packed", True)):
        report_html.tasks_section = lambda r, loader=None, p=packed: tasks_section(r, loader, packed=p)  # type: ignore[assignment]
        spent: dict[str, float] = {}
        restore = timed(spent)
        try:
            t0 = time.perf_counter()
            html = render_report(report, "html")
            t_render = time.perf_counter() - t0
        finally:
            report_html.tasks_section = tasks_section
            restore()
        out = tmp / f"report-{n}-{'packed' if packed else 'inline'}.html"
        out.write_text(html, encoding="utf-8")
        size = out.stat().st_size
        opened = open_time(out)
        figures[name] = (size, t_render, opened)
        shown = (
            "open in Chromium: not measured (no chromium)"
            if opened is None
            else f"open in Chromium {opened[0]:5.2f} s, first detail {opened[1]:5.2f} s"
        )
        target = " (targets < 3 MB, < 2 s)" if n == 234 else ""
        print(f"    {name:24} {size / 1e6:7.2f} MB, render {t_render:5.2f} s, {shown}{target}")
        print(
            f"    {'':24} of the render: reading the details {spent.get('load', 0):5.2f} s, their HTML "
            f"{spent.get('html', 0):5.2f} s, packing {spent.get('pack', 0):5.2f} s"
            + (" (on a second thread, beside the reading)" if packed else "")
        )
    before, now = figures["before: details inline"][0], figures["now: details packed"][0]
    print(f"    size now / before: {now / before:.2f}  (load average {os.getloadavg()[0]:.1f})\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--sizes", type=int, nargs="+", default=[234, 2000], help="tasks per run (default 234 2000)"
    )
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="ctb-bench-html-"))
    try:
        for n in args.sizes:
            one_size(n, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
