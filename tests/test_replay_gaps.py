"""``ctb-replay gaps``: denied commands counted from run folders written by real replay sessions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.errors import CtbError
from ctbench.replay.engine import ReplayEngine
from ctbench.replay.gaps import gap_report
from ctbench.store import TaskSet

REPO = Path(__file__).resolve().parents[1]
TASKS = REPO / "tasks"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
ENV.pop("CTBENCH_DEBUG", None)

RUN_A = {
    "RCA-001": [
        ("CORE_SW_01", "dis ospf peer"),
        ("CORE_SW_01", "display ospf peer"),
        ("CORE_SW_01", "dis int br"),
        ("FW_01", "display ip routing-table"),
        ("GW_01", "show ip protocols"),
        ("CORE_SW_01", "dis foo"),
        ("PC_01", "ping 1.1.1.1"),
    ],
    "RCA-002": [("FW_01", "display ip routing-table"), ("GW_01", "sh ip prot")],
}
RUN_B = {
    "RCA-001": [
        ("CORE_SW_01", "display ospf peer"),
        ("GW_01", "show ip protocols"),
        ("GW_01", "show ip protocols"),
    ],
}


def make_run(runs: Path, name: str, calls: dict[str, list[tuple[str, str]]]) -> Path:
    """A run folder whose trajectories are written by real sessions, as the runner would."""
    engine = ReplayEngine(TaskSet.open(TASKS))
    folder = runs / name
    for task, lines in calls.items():
        with engine.open_session(task, trajectory_path=folder / "trajectories" / f"{task}.jsonl") as s:
            for device, command in lines:
                s.run(device, command)
    (folder / "run.yaml").write_text(f"name: {name}\n")
    return folder


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    make_run(tmp_path / "runs", "run-a", RUN_A)
    make_run(tmp_path / "runs", "run-b", RUN_B)
    return tmp_path / "runs"


def test_denied_commands_most_frequent_first(runs: Path) -> None:
    report = gap_report([runs / "run-a", runs / "run-b"])
    rows = [(g.task_id, g.device, g.command, g.count, len(g.runs)) for g in report.gaps]
    assert rows == [
        ("RCA-001", "CORE_SW_01", "display ospf peer", 3, 2),
        ("RCA-001", "GW_01", "show ip protocols", 3, 2),
        ("RCA-001", "FW_01", "display ip routing-table", 1, 1),
        ("RCA-002", "FW_01", "display ip routing-table", 1, 1),
        ("RCA-002", "GW_01", "show ip protocols", 1, 1),
    ]
    assert report.gaps[0].typed == ["dis ospf peer"]
    assert report.denied == 9 and report.calls == 12 and report.trajectories == 3


def test_a_folder_of_runs_and_task_filter(runs: Path) -> None:
    report = gap_report([runs], tasks=["RCA-002"])
    assert [r.name for r in report.runs] == ["run-a", "run-b"]
    assert {g.task_id for g in report.gaps} == {"RCA-002"} and report.trajectories == 1


def test_bad_lines_are_reported_with_file_and_line(runs: Path) -> None:
    traj = runs / "run-b" / "trajectories" / "RCA-001.jsonl"
    with traj.open("a") as fh:
        fh.write('{"seq": 9, "t": 1.0, "device": "GW_01"}\n{"seq": 10, "t": 2.0, "dev')  # interrupted write
    report = gap_report([runs / "run-b"])
    assert [b.line for b in report.bad_lines] == [4, 5]
    assert str(report.bad_lines[0]).startswith(f"{traj}:4: ")
    assert report.gaps[0].count == 2


def test_not_a_run_folder(tmp_path: Path) -> None:
    with pytest.raises(CtbError, match="no such run folder"):
        gap_report([tmp_path / "missing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(CtbError, match="not a run folder"):
        gap_report([tmp_path / "empty"])


def test_cli_text_and_json(runs: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ctbench.replay.cli", "gaps", *args],
            capture_output=True,
            text=True,
            env=ENV,
            timeout=60,
        )

    text = cli(str(runs / "run-a"), str(runs / "run-b"))
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    first = next(i for i, ln in enumerate(lines) if "display ospf peer" in ln)
    assert first < next(i for i, ln in enumerate(lines) if "display ip routing-table" in ln)
    assert "9 denied of 12 calls" in text.stdout
    js = cli(str(runs), "--json", "--limit", "2")
    data = json.loads(js.stdout)
    assert [g["count"] for g in data["gaps"]] == [3, 3] and data["denied"] == 9
    assert data["gaps"][0]["runs"] == ["run-a", "run-b"]
    md = cli(str(runs), "--format", "md")
    assert md.stdout.startswith("### Denied commands")
    bad = cli(str(runs / "nope"))
    assert bad.returncode == 1 and "no such run folder" in bad.stderr and "Traceback" not in bad.stderr
