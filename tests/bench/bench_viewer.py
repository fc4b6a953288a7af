"""Benchmark of `ctb-eval view`: first paint of 4 runs x 1,000 tasks (target < 1.5 s).

Run from the repository root (figures, not a timed test; pytest does not collect tests/bench):

    python tests/bench/bench_viewer.py            # 4 runs x 1,000 tasks
    python tests/bench/bench_viewer.py --tasks 200

Setup (not timed): a generated task set of N RCA tasks (tests/bench/gen.py), 4 run folders in the
run-folder format (results.jsonl and a trajectory per task), each scored once so it holds scores.json,
as `ctb-eval run` leaves it.

Timed: "first paint" = from constructing the app (reading run.yaml, results.jsonl and scores.json of
the 4 runs) to the runs table and the first run's 1,000-row task table being on screen, headless
(``App.run_test``), then switching to each other run's table. Textual's own import is reported apart.
Wall time is what a user waits; the CPU time of the process is printed beside it, because on a shared
machine the wall time mostly measures the other processes. Baseline: the same first paint when the runs have no scores.json and must be scored on opening (what
the viewer falls back to), i.e. what reading the saved scores saves.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

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
            lines.append(json.dumps({"task_id": tid, "family": "rca", "status": "answered", "answer_text": text,
                                     "rounds": 3 + i % 5, "latency_s": 10.0 + i % 7, "input_tokens": 1000 + i,
                                     "output_tokens": 100, "commands": 1}))
            (run / "trajectories" / f"{tid}.jsonl").write_text(json.dumps(
                {"seq": 1, "t": 0.5, "device": "CORE_SW_01", "command": "display current-configuration interface "
                 f"GigabitEthernet0/0/{24 if right else 1}", "canonical": None, "outcome": "recorded",
                 "output_bytes": 40}) + "\n")
        (run / "results.jsonl").write_text("".join(x + "\n" for x in lines))
        runs.append(run)
    return runs


async def first_paint(runs: list[Path], tasks: Path, n_tasks: int) -> tuple[float, float]:
    from textual.widgets import DataTable

    from ctbench.store import TaskSet
    from ctbench.viewer.app import RunsScreen, ViewerApp

    t0, c0 = time.perf_counter(), time.process_time()
    app = ViewerApp(runs, TaskSet.open(tasks))
    async with app.run_test(size=(140, 40)) as pilot:
        while not (isinstance(app.screen, RunsScreen) and app.screen.query_one("#tasks", DataTable).row_count == n_tasks):
            await pilot.pause(0.001)
        await pilot.pause()  # the first frame with the rows is drawn
        painted = time.perf_counter() - t0
        print(f"  (first paint: {painted:.3f} s wall, {time.process_time() - c0:.3f} s CPU of this process)")
        screen = app.screen
        t1 = time.perf_counter()
        for i in range(1, len(runs)):
            screen.run_index = i  # what tab does, without the key's round trip
            await pilot.pause()
        switched = (time.perf_counter() - t1) / max(1, len(runs) - 1)
    return painted, switched


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--no-baseline", action="store_true", help="skip the scored-on-opening baseline")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ctbench-bench-viewer-"))
    try:
        print(f"setup: {args.tasks} tasks, {args.runs} runs in {work}", flush=True)
        tasks = generate(work / "tasks", args.tasks, n_recordings=2)
        ids = [f"GEN-{i:05d}" for i in range(args.tasks)]
        runs = write_runs(work / "runs", tasks, ids, args.runs)
        t = time.perf_counter()
        import textual.app  # noqa: F401

        import_s = time.perf_counter() - t
        from ctbench.evaluate.score import Scorer, score_run
        from ctbench.store import TaskSet

        baseline = None
        if not args.no_baseline:
            baseline, _ = asyncio.run(first_paint(runs, tasks, args.tasks))
        scorer = Scorer(TaskSet.open(tasks))
        for run in runs:
            score_run(run, scorer.task_set, n_resamples=100, scorer=scorer)
        painted, switched = asyncio.run(first_paint(runs, tasks, args.tasks))
        print(f"textual import:                     {import_s:6.3f} s (once per process, not counted below)")
        print(f"first paint, runs with scores.json: {painted:6.3f} s   target < 1.500 s  "
              f"{'OK' if painted < 1.5 else 'OVER'}")
        print(f"switch to the next run's table:     {switched:6.3f} s")
        if baseline is not None:
            print(f"baseline, scored on opening:        {baseline:6.3f} s   ({baseline / painted:.1f}x slower)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
