"""Bookkeeping the agent cannot touch (issue 25, item 2).

Each ``ctb-eval run`` first sweeps what dead runners left: it kills their agents' process groups and
removes their temp folders. It used to trust an ``owner.json`` inside the attempt folder - a folder a
harness adapter mounts writable into the sandbox - so an agent could name any process group for the
next run to SIGKILL. Now the records lie beside the folders (the temp folder is the runner's alone),
and a group is killed only while its leader has the start time recorded at spawn.

The victim is a real process in a process group of its own; the sweeper is the real ``ctb-eval run``
(an oracle run, in a subprocess whose temp folder is this test's). The same victim named in a
record where the runner keeps them *is* killed: the assertions that it survives can fail.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctbench.evaluate.agents.process import owner_record, recorded_group_lives, start_time
from ctbench.evaluate.attempt import WORKSPACE_PREFIX
from tests.conftest import REPO, copy_starters


@pytest.fixture
def tmp_world(tmp_path: Path) -> Iterator[Path]:
    """A short temp folder (the runner's sockets go there) for the sweeping runs."""
    root = Path(tempfile.mkdtemp(prefix="ctb-own-", dir="/tmp"))
    try:
        yield root
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=False)


def _victim() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)


def _dead_runner() -> tuple[int, int]:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    start = start_time(proc.pid)
    proc.wait()
    assert start is not None
    return proc.pid, start


def _sweep(tmp: Path, tasks: Path, out: Path) -> None:
    """A real run, whose first act is the sweep of its temp folder."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp)}
    proc = subprocess.run(
        [sys.executable, "-m", "ctbench.evaluate.cli", "run", "--agent", "oracle", "--allow-unreviewed"]
        + [
            "--select",
            "RCA-001",
            "--tasks",
            str(tasks),
            "--out",
            str(out),
            "--progress",
            "none",
            "--no-score",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def _alive(proc: subprocess.Popen[bytes]) -> bool:
    time.sleep(0.2)
    return proc.poll() is None


def test_a_forged_record_beside_a_live_victim_kills_nothing(tmp_world: Path, tmp_path: Path) -> None:
    tasks = copy_starters(tmp_path / "tasks")
    tmp = tmp_world / "tmp"
    tmp.mkdir()
    victim = _victim()
    try:
        vstart = start_time(victim.pid)
        assert vstart is not None
        dead_pid, dead_start = _dead_runner()
        record = {"runner_pid": dead_pid, "runner_start": dead_start, "groups": [[victim.pid, vstart]]}
        # 1. what an agent can write: an owner.json inside its attempt folder, naming the victim with
        #    its true start time, its folder named as a dead runner's (the old sweep trusted this)
        forged = tmp / f"{WORKSPACE_PREFIX}RCA-001-o{dead_pid}.{dead_start}-forged"
        forged.mkdir()
        (forged / "owner.json").write_text(json.dumps(record))
        (forged / "home").mkdir()
        (forged / "home" / "owner.json").write_text(json.dumps(record))
        _sweep(tmp, tasks, tmp_path / "run1")
        assert _alive(victim), "a record inside an attempt folder had the victim killed"
        assert not forged.exists()  # a dead runner's folder: swept as garbage, its 'record' unread

        # 2. a record where the runner keeps them, but with another start time (the pid was reused)
        other = tmp / f"{WORKSPACE_PREFIX}RCA-002-o{dead_pid}.{dead_start}-reused"
        other.mkdir()
        owner_record(other).write_text(json.dumps({**record, "groups": [[victim.pid, vstart + 1]]}))
        _sweep(tmp, tasks, tmp_path / "run2")
        assert _alive(victim), "a group whose leader has another start time was killed"
        assert not other.exists() and not owner_record(other).exists()

        # 3. the runner's own record of the victim, as a SIGKILLed runner leaves it: killed (so the
        #    sweep does run, and the assertions above can fail)
        real = tmp / f"{WORKSPACE_PREFIX}RCA-001-o{dead_pid}.{dead_start}-real"
        real.mkdir()
        owner_record(real).write_text(json.dumps(record))
        _sweep(tmp, tasks, tmp_path / "run3")
        deadline = time.monotonic() + 5
        while victim.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert victim.returncode == -signal.SIGKILL
        assert not real.exists() and not owner_record(real).exists()
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait()


def test_a_group_outliving_its_leader_is_still_recognised() -> None:
    """The leader killed with its runner, its child lives on in the group: still the recorded one."""
    leader = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
            " time.sleep(60)",
        ],
        start_new_session=True,
    )
    try:
        start = start_time(leader.pid)
        assert start is not None
        time.sleep(0.5)  # the child is started
        assert recorded_group_lives(leader.pid, start)
        assert not recorded_group_lives(leader.pid, start + 7)
        leader.kill()
        leader.wait()
        assert recorded_group_lives(leader.pid, start)  # the orphan is a member still
    finally:
        os.killpg(leader.pid, signal.SIGKILL)
        if leader.poll() is None:
            leader.wait()
    deadline = time.monotonic() + 5
    while recorded_group_lives(leader.pid, start) and time.monotonic() < deadline:
        try:  # this process may be a subreaper (an earlier test's agent adapter): reap the orphan
            os.waitpid(-leader.pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.05)
    assert not recorded_group_lives(leader.pid, start)
