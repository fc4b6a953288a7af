"""Scores count what the agent said (issue 16, item 8), through ``ctb-eval run`` and ``ctb-eval score``.

A command agent answers RCA-001 (gold ``CORE_SW_01;GigabitEthernet0/0/24;shutdown``) with the gold line
plus causes whose label or node the task does not know; the scorer must count them as predicted
entries, and the result line's parse record must name them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import copy_starters, needs_bwrap
from tests.test_runner import agent_script, results

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
ENV.pop("CTBENCH_DEBUG", None)
GOLD = "CORE_SW_01;GE0/0/24;shutdown"

AGENT = """\
import sys
sys.stdin.read()
print("<answer>" + open(sys.argv[1], encoding="utf-8").read() + "</answer>")
"""


def run_and_score(tmp_path: Path, answer: str, task_id: str = "RCA-001") -> tuple[dict, dict]:
    tasks = copy_starters(tmp_path / "tasks")
    answer_file = tmp_path / "answer.txt"
    answer_file.write_text(answer, encoding="utf-8")
    out = tmp_path / "run"
    cmd = agent_script(tmp_path, "agent.py", AGENT) + f" {answer_file}"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctbench.evaluate.cli",
            "run",
            "--allow-unreviewed",
            "--agent",
            "command",
            "--agent-cmd",
            cmd,
            "--tasks",
            str(tasks),
            "--select",
            task_id,
            "--out",
            str(out),
            "--progress",
            "none",
            "--no-score",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    s = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctbench.evaluate.cli",
            "score",
            str(out),
            "--tasks",
            str(tasks),
            "--resamples",
            "200",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert s.returncode == 0 and "Traceback" not in s.stderr, s.stderr[-2000:]
    (line,) = results(out)
    (task,) = [t for t in json.loads(s.stdout)["tasks"] if t["task_id"] == task_id]
    return line, task


@pytest.mark.parametrize(
    ("answer", "failure", "loc", "ident", "unresolved"),
    [
        (
            f"{GOLD}\nCORE_SW_01;8.8.8.8;routing loop on the core",
            "F5",
            0.5,
            0.5,
            ["unknown root-cause label 'routing loop on the core'"],
        ),
        (f"{GOLD}\nCORE_SW_99;GE0/0/1;shutdown", "F5", 0.5, 1.0, ["unknown node 'CORE_SW_99'"]),
        (
            "CORE_SW_01;GE0/0/24;the port is down somehow",
            "F5",
            1.0,
            0.0,
            ["unknown root-cause label 'the port is down somehow'"],
        ),
    ],
)
@needs_bwrap
def test_unknown_names_are_predicted_entries(
    tmp_path: Path, answer: str, failure: str, loc: float, ident: float, unresolved: list[str]
) -> None:
    line, task = run_and_score(tmp_path, answer)
    assert line["status"] == "answered"
    assert [u["problem"] for u in line["answer"]["unresolved_lines"]] == unresolved
    assert task["exact"] is False and task["failure"] == failure
    assert task["loc"] == pytest.approx(loc) and task["ident"] == pytest.approx(ident)


@needs_bwrap
def test_the_gold_alone_still_scores_exactly(tmp_path: Path) -> None:
    line, task = run_and_score(tmp_path, GOLD)
    assert line["answer"]["unresolved_lines"] == []
    assert task["exact"] is True and task["failure"] is None


GOLD_PATH = (
    "PC_01_eth0 -> ACC_SW_01_GigabitEthernet1/0/48 -> CORE_SW_01_GigabitEthernet0/0/24 -> "
    "FW_01_GigabitEthernet1/0/2 -> GW_01_GigabitEthernet2 -> PE_01_ge-0/0/2 -> SRV_01"
)


@needs_bwrap
def test_a_stated_path_through_unknown_hops_counts(tmp_path: Path) -> None:
    line, task = run_and_score(tmp_path, f"{GOLD_PATH}\nPC_01_eth0 -> MYSTERY_BOX_eth1 -> SRV_01", "PATH-001")
    assert [u["problem"] for u in line["answer"]["unresolved_lines"]] == ["unknown hop 'MYSTERY_BOX_eth1'"]
    assert task["exact"] is False and task["loc"] == 1.0
    assert task["sequence"] == pytest.approx(0.5) and task["rest"] == pytest.approx(6 / 8)
