"""The gate sees the whole task (issue 25, item 8): its network file, and its id among the set's.

Through the real ``ctb-eval run`` with ``--progress none``: a task on a network whose file fails
validation, and two folders sharing one id, are kept out and named - on stderr, in one line - while
the rest of the set runs. ``--allow-invalid`` (the gate's own switch) lets the network case through,
and the validator without the tasks' networks names no task: the assertions can fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ctbench.approval.gate import validation_problems
from ctbench.store import TaskSet
from tests.conftest import REPO


def _run(tasks: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctbench.evaluate.cli", "run", "--agent", "oracle", "--allow-unreviewed"]
        + ["--tasks", str(tasks), "--out", str(out), "--progress", "none", "--no-score", *extra],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _ran(out: Path) -> list[str]:
    return sorted(json.loads(x)["task_id"] for x in (out / "results.jsonl").read_text().splitlines())


def test_a_task_on_a_broken_network_is_kept_out_and_named(task_set: Path, tmp_path: Path) -> None:
    net = (task_set / "networks" / "campus-lab.yaml").read_text()
    bad = net.replace("name: campus-lab", "name: campus-bad") + "  - [GHOST_99:eth0, SRV_01:eth1]\n"
    assert bad.rstrip().endswith("SRV_01:eth1]") and "links:" in bad
    (task_set / "networks" / "campus-bad.yaml").write_text(bad)
    task = task_set / "rca" / "RCA-001" / "task.yaml"
    task.write_text(task.read_text().replace("network: campus-lab", "network: campus-bad"))
    proc = _run(task_set, tmp_path / "run")
    assert proc.returncode == 0, proc.stderr
    assert _ran(tmp_path / "run") == ["PATH-001", "RCA-002"]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, lines  # --progress none: one line for what the gate kept out
    assert lines[0].startswith("skipped 1 task(s): ") and "RCA-001" in lines[0]
    assert "its network campus-bad" in lines[0] and "unknown device 'GHOST_99'" in lines[0]
    run_yaml = (tmp_path / "run" / "run.yaml").read_text()
    assert "RCA-001" in run_yaml and "GHOST_99" in run_yaml  # recorded as skipped, with the reason
    # protection off: the validator's task findings alone never name RCA-001; --allow-invalid runs it
    ts = TaskSet.open(task_set)
    assert "RCA-001" not in validation_problems(ts, ts.refs())
    again = _run(task_set, tmp_path / "again", "--allow-invalid")
    assert "RCA-001" in _ran(tmp_path / "again")
    assert again.stderr == ""


def test_two_folders_with_one_id_are_both_kept_out_and_named(task_set: Path, tmp_path: Path) -> None:
    shutil.copytree(task_set / "rca" / "RCA-002", task_set / "path" / "RCA-002")
    proc = _run(task_set, tmp_path / "run")
    assert proc.returncode == 0, proc.stderr
    assert _ran(tmp_path / "run") == ["PATH-001", "RCA-001"]
    (line,) = proc.stderr.splitlines()
    assert line.startswith("skipped 1 task(s): ") and "not unique" in line
    assert "tasks/path/RCA-002" in line and "tasks/rca/RCA-002" in line
