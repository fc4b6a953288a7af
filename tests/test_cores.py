"""Parallel steps size themselves by the cores the process may use, not the machine's (ctbench.cores)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SCRIPT = """
import json, os
os.sched_setaffinity(0, {0})  # pinned to one core, as taskset or a container's cpuset would
from ctbench.cores import available_cores
from ctbench.scoring import stats
print(json.dumps({"cores": available_cores(), "bootstrap_threads": stats._workers(11, None),
                  "machine": os.cpu_count()}))
"""


@pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2,
    reason="needs CPU affinity and a machine of two cores or more to tell the counts apart",
)
def test_a_process_pinned_to_one_core_runs_its_bootstraps_on_one_thread() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=120
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["machine"] >= 2
    assert got["cores"] == 1
    assert got["bootstrap_threads"] == 1, f"{got['bootstrap_threads']} bootstrap threads on one core"


def test_explicit_workers_still_win_and_never_go_below_one() -> None:
    from ctbench.scoring import stats

    assert stats._workers(11, 3) == 3
    assert stats._workers(2, 8) == 2
    assert stats._workers(5, 0) == 1
