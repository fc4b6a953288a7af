"""Benchmark of `ctb-eval view`: first paint of 4 runs x 1,000 tasks (target < 1.5 s).

Run from the repository root (figures, not a timed test; pytest does not collect tests/bench):

    python tests/bench/bench_viewer.py            # 4 runs x 1,000 tasks
    python tests/bench/bench_viewer.py --tasks 200

Setup (not timed): a generated task set of N RCA tasks (tests/bench/gen.py), 4 run folders in the
run-folder format (results.jsonl and a trajectory per task), each scored once so it holds scores.json,
as `ctb-eval run` leaves it.

Timed, headless (``App.run_test``): "first paint" = from constructing the app (reading run.yaml,
results.jsonl and scores.json of the 4 runs) to the runs table and the first screenful of the first
run's task table being drawn, with the count line saying 1,000 tasks; "all rows" = until the table
holds all 1,000 rows (sorting and filtering work on all of them from the start; the table fills in
chunks after the first paint); "next run" = from switching to another run until its first rows are
drawn. Textual's own import is reported apart. Wall time is what a user waits; the CPU time of the
process is printed beside it, because on a shared machine the wall time also measures the other
processes. Each configuration runs --repeat times, interleaved, and the medians are printed.

Baseline, in the same run: what ``ctb-eval view`` did before - every run's rows and result lines read
up front and every row put in the table before the first paint (``first_rows=None``). ``--scoring-baseline`` adds the first paint when the runs have no
scores.json and are scored on opening (what the viewer falls back to).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.gen import generate  # noqa: E402

RUN_YAML = """\
format: 1
name: {name}
agent: {name}
model: m
harness: bench
harness_version: '1'
options: {{timeout_s: 600.0, retries: 0}}
concurrency: 1
task_set: {{path: {tasks}, commit: none, dirty: false}}
tasks: [{ids}]
started: '2026-07-25T10:00:00Z'
host: {{hostname: bench, platform: Linux, python: 3.11.7}}
"""


def write_runs(root: Path, tasks: Path, ids: list[str], n_runs: int) -> list[Path]:
    runs = []
    for r in range(n_runs):
        run = root / f"run{r}"
        (run / "trajectories").mkdir(parents=True)
        (run / "run.yaml").write_text(RUN_YAML.format(name=f"run{r}", tasks=tasks, ids=", ".join(ids)))
        lines = []
        for i, tid in enumerate(ids):
            right = (i + r) % 3 != 0
            text = f"<answer>\nCORE_SW_01;GigabitEthernet0/0/24;{'shutdown' if right else 'physical link down'}\n</answer>"
            lines.append(
                json.dumps(
                    {
                        "task_id": tid,
                        "family": "rca",
                        "status": "answered",
                        "answer_text": text,
                        "rounds": 3 + i % 5,
                        "latency_s": 10.0 + i % 7,
                        "input_tokens": 1000 + i,
                        "output_tokens": 100,
                        "commands": 1,
                    }
                )
            )
            (run / "trajectories" / f"{tid}.jsonl").write_text(
                json.dumps(
                    {
                        "seq": 1,
                        "t": 0.5,
                        "device": "CORE_SW_01",
                        "command": "display current-configuration interface "
                        f"GigabitEthernet0/0/{24 if right else 1}",
                        "canonical": None,
                        "outcome": "recorded",
                        "output_bytes": 40,
                    }
                )
                + "\n"
            )
        (run / "results.jsonl").write_text("".join(x + "\n" for x in lines))
        runs.append(run)
    return runs


class Paint(NamedTuple):
    first: float
    """Seconds (wall) until the runs table and the first rows of the first run's task table are drawn."""
    first_cpu: float
    """CPU seconds of this process over the same span (the wall time also measures the other processes)."""
    complete: float
    """Seconds (wall) until the task table holds every one of the run's rows."""
    switch: float
    """Mean seconds (wall) from switching to another run until its first rows are drawn."""


async def first_paint(runs: list[Path], tasks: Path, n_tasks: int, first_rows: int | None) -> Paint:
    from textual.widgets import DataTable

    from ctbench.evaluate.score import Scorer
    from ctbench.store import TaskSet
    from ctbench.viewer.app import RunsScreen, ViewerApp
    from ctbench.viewer.data import load_runs

    enough = min(n_tasks, 30)  # more rows than the 40-line terminal shows below the runs table

    class TimedApp(ViewerApp):
        """Notes when a frame showing the task rows is composed (headless: composed, not written)."""

        CSS_PATH = Path(sys.modules[ViewerApp.__module__].__file__ or "").with_name("app.tcss")
        painted: tuple[float, float] | None = None
        watching: bool = True

        def _display(self, screen, renderable):  # type: ignore[no-untyped-def]  # Textual's frame hook
            if self.watching and renderable is not None and isinstance(screen, RunsScreen):
                table = screen.query_one("#tasks", DataTable)
                if table.row_count >= enough and table.virtual_size.height >= enough:
                    self.painted, self.watching = (time.perf_counter(), time.process_time()), False
            super()._display(screen, renderable)

    t0, c0 = time.perf_counter(), time.process_time()
    task_set = TaskSet.open(tasks)
    loaded = None
    if first_rows is None:  # the baseline reads every run in full up front, as the viewer did
        loaded = load_runs(runs, Scorer(task_set))
        for r in loaded:
            r.rows  # noqa: B018
    app = TimedApp(runs, task_set, runs=loaded, first_rows=first_rows)
    async with app.run_test(size=(140, 40)) as pilot:
        while app.painted is None:
            await pilot.pause(0.001)
        painted, cpu = app.painted[0] - t0, app.painted[1] - c0
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        table = screen.query_one("#tasks", DataTable)
        while not (screen.filled and table.row_count == n_tasks):
            await pilot.pause(0.001)
        await pilot.pause()
        complete = time.perf_counter() - t0
        switched = 0.0
        for i in range(1, len(runs)):
            app.painted, app.watching = None, True
            t1 = time.perf_counter()
            screen.run_index = i  # what tab does, without the key's round trip
            while app.painted is None:
                await pilot.pause(0.001)
            switched += app.painted[0] - t1
            while not screen.filled:
                await pilot.pause(0.001)
    return Paint(painted, cpu, complete, switched / max(1, len(runs) - 1))


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument(
        "--repeat", type=int, default=3, help="first paints per configuration (medians are shown)"
    )
    ap.add_argument(
        "--scoring-baseline",
        action="store_true",
        help="also time the first paint when the runs have no scores.json and are scored on opening",
    )
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ctbench-bench-viewer-"))
    try:
        print(
            f"setup: {args.tasks} tasks, {args.runs} runs in {work}; load average {os.getloadavg()[0]:.2f} "
            f"on {os.cpu_count()} CPU(s)",
            flush=True,
        )
        tasks = generate(work / "tasks", args.tasks, n_recordings=2)
        ids = [f"GEN-{i:05d}" for i in range(args.tasks)]
        runs = write_runs(work / "runs", tasks, ids, args.runs)
        t = time.perf_counter()
        import textual.app  # noqa: F401

        import_s = time.perf_counter() - t
        from ctbench.evaluate.score import Scorer, score_run
        from ctbench.store import TaskSet
        from ctbench.viewer.app import FIRST_ROWS

        scored_on_opening = None
        if args.scoring_baseline:
            scored_on_opening = asyncio.run(first_paint(runs, tasks, args.tasks, FIRST_ROWS))
        scorer = Scorer(TaskSet.open(tasks))
        for run in runs:
            score_run(run, scorer.task_set, n_resamples=100, scorer=scorer)
        asyncio.run(first_paint(runs, tasks, args.tasks, FIRST_ROWS))  # warm the file cache and lazy imports
        paints: dict[str, list[Paint]] = {"now": [], "eager": []}
        for _ in range(args.repeat):  # interleaved, so a burst of load on the machine hits both alike
            paints["eager"].append(asyncio.run(first_paint(runs, tasks, args.tasks, None)))
            paints["now"].append(asyncio.run(first_paint(runs, tasks, args.tasks, FIRST_ROWS)))
        print(f"textual import: {import_s:.3f} s (once per process, not counted below)")
        print(f"medians of {args.repeat} run(s); target: first paint < 1.500 s")
        print(f"{'':44}{'first paint':>12}{'(CPU)':>8}{'all rows':>10}{'next run':>10}")
        for key, title in (
            ("eager", "baseline: all runs, all rows up front"),
            ("now", f"ctb-eval view: {FIRST_ROWS} rows, then chunks"),
        ):
            ps = paints[key]
            first = median([p.first for p in ps])
            print(
                f"{title:44}{first:11.3f}s{median([p.first_cpu for p in ps]):7.3f}s"
                f"{median([p.complete for p in ps]):9.3f}s{median([p.switch for p in ps]):9.3f}s"
                f"   {'OK' if first < 1.5 else 'OVER'}"
            )
        speedup = median([p.first for p in paints["eager"]]) / median([p.first for p in paints["now"]])
        print(f"first paint: x{speedup:.1f} faster than the baseline")
        if scored_on_opening is not None:
            print(f"no scores.json, scored on opening (one run): {scored_on_opening.first:.3f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
