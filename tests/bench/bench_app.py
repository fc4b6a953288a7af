"""Benchmark: start of ``ctb-author`` to the first rendered task list, on a git repo of 1,000 tasks.

Target: under 1.5 s. The list paints from folder names alone; task files are read and validated by a
background worker afterwards, so the figures after the first one (all rows detailed, all validated)
show that work going on without blocking the screen.

    python tests/bench/bench_app.py [N_TASKS]
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.gen import generate  # noqa: E402


def make_repo(root: Path, n_tasks: int) -> Path:
    tasks = generate(root / "tasks", n_tasks, n_recordings=3)
    for cmd in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "tasks"],
    ):
        subprocess.run(cmd, cwd=root, check=True)
    return tasks


async def key_latency(app: object) -> float:
    """Seconds from a Down key arriving to the list cursor having moved (what a user waits for)."""
    from textual import events

    from ctbench.authoring.app.widgets.task_table import TaskTable

    table = app.screen.query_one(TaskTable)  # type: ignore[attr-defined]
    row = table.cursor_row
    t = time.perf_counter()
    app.post_message(events.Key("down", None))  # type: ignore[attr-defined]
    while table.cursor_row == row:
        await asyncio.sleep(0.0005)
    latency = time.perf_counter() - t
    await asyncio.sleep(0.2)
    return latency


async def measure(tasks: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    from ctbench.authoring.app.app import AuthorApp
    from ctbench.authoring.app.screens.task_list import TaskListScreen
    from ctbench.store import TaskSet

    t_import = time.perf_counter() - t0
    marks: dict[str, float] = {}

    def hook(message: object) -> None:
        if isinstance(message, TaskListScreen.FirstPaint) and "paint" not in marks:
            marks["paint"] = message.at

    t_start = time.perf_counter()
    app = AuthorApp(TaskSet.open(tasks), author="bench")
    async with app.run_test(size=(140, 45), message_hook=hook) as pilot:
        while "paint" not in marks:
            await pilot.pause(0.005)
        screen = app.screen
        assert isinstance(screen, TaskListScreen)
        rows = len(screen.rows)
        # The screen stays responsive while the worker reads and validates: cursor moves are handled at once.
        keys = [await key_latency(app) for _ in range(5)]
        while any(r.status is None for r in screen.rows.values()):
            await pilot.pause(0.02)
        marks["details"] = time.perf_counter()
        while len(screen.validated) < rows:
            await pilot.pause(0.05)
        marks["validated"] = time.perf_counter()
        idle_keys = [await key_latency(app) for _ in range(5)]
    return {
        "rows": rows,
        "import": t_import,
        "paint": marks["paint"] - t_start,
        "paint_incl_import": marks["paint"] - t0,
        "details": marks["details"] - t_start,
        "validated": marks["validated"] - t_start,
        "key": max(keys),
        "idle_key": max(idle_keys),
        "keys": keys,
    }


def main(n_tasks: int = 1000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        tasks = make_repo(Path(tmp), n_tasks)
        gen_s = time.perf_counter() - t
        r = asyncio.run(measure(tasks))
    print(f"generated a git repo of {n_tasks} tasks in {gen_s:.1f} s")
    print(
        f"first rendered task list: {r['paint']:.2f} s from app start "
        f"({r['paint_incl_import']:.2f} s including {r['import']:.2f} s of imports)  [target < 1.5 s]"
    )
    print(
        f"  {r['rows']:.0f} rows; status/title/categories filled in after {r['details']:.2f} s, "
        f"all validated after {r['validated']:.2f} s (background worker)"
    )
    keys = sorted(r["keys"])
    print(
        f"  key presses during background loading: median {1000 * keys[len(keys) // 2]:.0f} ms, "
        f"worst {1000 * keys[-1]:.0f} ms ({1000 * r['idle_key']:.0f} ms once it is done)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
