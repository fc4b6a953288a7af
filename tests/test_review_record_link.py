"""A link to the review record of a task really approved through ``ctb-review`` (issue 25, item 1).

The team of tests/team_support.py takes RCA-101 through the whole review with SSH-signed steps
(alice submits, maint assigns bob, bob solves it blind and reveals, maint merges): the task is
approved, the run gate admits it without ``--allow-unreviewed``, and ``reviews/round-01.yaml`` in
maint's clone records bob's blind answer in answer syntax - the gold. maint then runs
``ctb-eval run`` from the clone (default sandbox) with a ``command`` agent that runs no command and
replaces its answer file (or its standard output) with a symbolic link to that record through
``/proc/self/cwd``, which resolves in the runner. The runner refuses the link as the agent's error,
and nothing of the record reaches the run folder. With the protection off
(``tests/adversary/naive_runner.py``: the reading the runner did before) the same run scores the
gold: the assertions can fail.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.approval.check import approval_state
from ctbench.store import TaskSet
from tests.conftest import REPO, needs_bwrap
from tests.team_support import Team, make_keys, make_team

pytestmark = [
    pytest.mark.xdist_group("review-link"),
    needs_bwrap,
]

AGENT = REPO / "tests" / "adversary" / "leave_behind.py"
NAIVE = REPO / "tests" / "adversary" / "naive_runner.py"
GOLD = "CORE_SW_01;GE0/0/24;shutdown"


@pytest.fixture(scope="module")
def approved(tmp_path_factory: pytest.TempPathFactory) -> Team:
    """RCA-101 approved through ctb-review, every step signed by its actor; maint's clone up to date."""
    root = tmp_path_factory.mktemp("review-link")
    team = make_team(root / "t", make_keys(root / "keys", ("alice", "bob", "carol", "dave", "maint")))
    team.review("alice", "submit", "RCA-101")
    team.review("maint", "assign", "RCA-101", "--reviewer", "bob", "--apply")
    team.blind("bob")
    team.review("bob", "reveal", "RCA-101", "--all-agree")
    team.review("maint", "merge", "RCA-101")
    assert approval_state(TaskSet.open(team.tasks("maint")), "RCA-101").approved
    record = team.tasks("maint") / "rca" / "RCA-101" / "reviews" / "round-01.yaml"
    assert GOLD in record.read_text(), record.read_text()
    return team


def _run(team: Team, out: str, file: str, *, naive: bool) -> tuple[subprocess.CompletedProcess[str], Path]:
    clone = team.clone_dir("maint")
    program = [str(NAIVE)] if naive else ["-m", "ctbench.evaluate.cli"]
    agent = shlex.join([sys.executable, str(AGENT), f"link-{file}", "review"])
    argv = [sys.executable, *program, "run", "--agent", "command", "--agent-cmd", agent]
    argv += ["--tasks", "tasks", "--select", "RCA-101", "--out", out, "--progress", "none", "--no-score"]
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(team.root)}
    done = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True, timeout=240)
    return done, clone / out


@pytest.mark.parametrize("protection", ["on", "protection-off"])
@pytest.mark.parametrize("file", ["answer", "stdout"])
def test_a_link_to_an_approved_tasks_review_record_is_refused(
    approved: Team, file: str, protection: str
) -> None:
    naive = protection == "protection-off"
    done, run = _run(approved, f"runs/{file}-{protection}", file, naive=naive)
    assert done.returncode == 0, done.stderr
    (line,) = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    assert line["task_id"] == "RCA-101"  # admitted by the gate as approved: no --allow-unreviewed
    leaked = GOLD in (run / "results.jsonl").read_text() + (run / line["log"]).read_text(errors="replace")
    if not naive:
        refusal = f"io/{file}.txt is a symbolic link: refused"
        assert (line["status"], line["error_kind"], line["error"]) == ("error", "agent", refusal)
        assert line["answer_text"] is None and not leaked
    else:  # the runner as it was opens the link: the record's gold becomes the answer
        assert leaked, (line["status"], line.get("error"))
        assert line["answer"]["rca"][0]["label"] == "shutdown", line["answer"]
