"""Benchmark: validate 1,000 generated tasks with 40 recordings each (target: under 10 s on 2 cores)."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ctbench.validation import validate_paths  # noqa: E402
from tests.bench.gen import generate  # noqa: E402


def main(n_tasks: int = 1000, n_recordings: int = 40) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        root = generate(Path(tmp) / "tasks", n_tasks, n_recordings)
        gen_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = validate_paths([str(root)])
        val_s = time.perf_counter() - t0
    print(f"generated {n_tasks} tasks x {n_recordings} recordings in {gen_s:.1f} s")
    print(
        f"validate: {val_s:.2f} s for {report.tasks_checked} tasks "
        f"({1000 * val_s / max(1, report.tasks_checked):.2f} ms/task), "
        f"{len(report.errors)} errors, {len(report.warnings)} warnings  [target < 10 s]"
    )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
