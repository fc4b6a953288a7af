"""A sandbox started held (``ctbench/evaluate/agents/held.py``): nothing of the agent runs uncapped.

A root runner starts bubblewrap without a ``preexec_fn`` (so Python uses ``vfork``, issue 25's
speed-up) and caps the sandbox's first process from outside while bubblewrap holds it. The attacks:

- The runner dies (SIGKILL) after starting the sandbox and before letting it go: the held process
  must never run the agent. With the protection off (the held process not holding the write end
  of its own block, so the runner's death reads as "go") the agent runs, uncapped, runner-less.
- A cap cannot be applied (the attempt's cgroup is gone): the start fails as the machine's trouble
  and the held processes are killed before the agent ran.

That the caps really hold in a held sandbox (fork refused at the pids cap, ``EFBIG`` at the file-size
cap) is shown through ``ctb-eval run`` in ``tests/test_attempt_limits.py``, which takes this path
as root.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctbench.evaluate.agents.held import Hold, HoldError
from ctbench.evaluate.agents.process import SpawnCaps, _cap_held, kill_orphaned_holds
from ctbench.evaluate.limits import AttemptCgroup
from ctbench.evaluate.sandbox import find_bwrap
from ctbench.isolation import BwrapCommand
from tests.conftest import needs_bwrap

pytestmark = [
    pytest.mark.xdist_group("attempt-limits"),
    needs_bwrap,
    pytest.mark.skipif(os.geteuid() != 0, reason="a held start is a root runner's"),
]

RUNNER = """\
import json, subprocess, sys, time
from ctbench.evaluate.agents.held import Hold
argv, fail_closed = json.loads(sys.argv[1]), sys.argv[2] == "on"
hold = Hold.open()
fds = hold.pass_fds if fail_closed else (hold.info_w, hold.block_r)
proc = subprocess.Popen(hold.argv(argv, 0), pass_fds=fds, start_new_session=True)
hold.started()
print(json.dumps({"bwrap": proc.pid, "held": hold.held_pid()}), flush=True)
time.sleep(60)  # killed here, before letting the sandbox go
"""


def _sandbox_argv(folder: Path, marker: Path, *, die_with_parent: bool = True) -> list[str]:
    """``die_with_parent`` False: without bubblewrap's ``--die-with-parent``, so that the hold alone is
    what stands between the runner's death and the agent (with it, the runner's death also kills
    bubblewrap, which races the read of end-of-file on the block and made the attack flaky)."""
    bwrap = find_bwrap()
    assert bwrap is not None
    cmd = BwrapCommand(bwrap, share_net=True, read_write=[folder], remount_ro=False).argv()
    if not die_with_parent:
        cmd.remove("--die-with-parent")
    return [*cmd, "--", "/bin/sh", "-c", f"echo ran > {marker}"]


def _at_block(pid: int, timeout: float = 20) -> None:
    """Wait until the held process sits in its read of the block (``/proc/PID/syscall``: ``read`` of
    one byte from the ``--block-fd`` descriptor). Bubblewrap reports the pid as soon as it has cloned
    the process, before that process has set itself up: an attack meant for the hold waits for it."""
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    block = int(argv[argv.index(b"--block-fd") + 1])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
        if fields[:2] == ["0", hex(block)] and fields[3] == "0x1":
            return
        time.sleep(0.01)
    raise AssertionError(f"the held process {pid} never reached its block: {fields}")


def _gone(*pids: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_a_runner_that_dies_before_letting_go_starts_nothing(tmp_path: Path, protection: str) -> None:
    marker = tmp_path / "ran"
    runner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            RUNNER,
            json.dumps(_sandbox_argv(tmp_path, marker, die_with_parent=False)),
            protection,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert runner.stdout is not None
    pids = json.loads(runner.stdout.readline())
    try:
        _at_block(pids["held"])
        assert not marker.exists()  # held: nothing ran yet, whatever the protection
        runner.send_signal(signal.SIGKILL)
        runner.wait()
        deadline = time.monotonic() + 3
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if protection == "on":
            assert not marker.exists(), "the held sandbox ran the agent after the runner died"
        else:
            assert marker.exists(), "without the held write end the runner's death lets it go"
    finally:
        _gone(pids["held"], pids["bwrap"])


def test_a_cap_that_cannot_be_applied_kills_the_held_sandbox(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    caps = SpawnCaps(None, AttemptCgroup(tmp_path / "no-such-cgroup", 8), file_size=1 << 20)
    hold = Hold.open()
    proc = subprocess.Popen(
        hold.argv(_sandbox_argv(tmp_path, marker), 0), pass_fds=hold.pass_fds, start_new_session=True
    )
    try:
        hold.started()
        with pytest.raises(HoldError, match="held sandbox killed"):
            _cap_held(hold, proc.pid, caps)
    finally:
        hold.close()
    assert proc.wait(timeout=10) != 0
    time.sleep(0.3)
    assert not marker.exists()


def test_a_held_sandbox_runs_once_let_go(tmp_path: Path) -> None:
    """The same start with the caps applied: the agent runs, under the file-size cap."""
    marker = tmp_path / "ran"
    argv = _sandbox_argv(tmp_path, marker)
    argv[-1] = f"ulimit -f > {marker}"  # in 512-byte blocks
    hold = Hold.open()
    proc = subprocess.Popen(hold.argv(argv, 0), pass_fds=hold.pass_fds, start_new_session=True)
    try:
        hold.started()
        assert _cap_held(hold, proc.pid, SpawnCaps(None, None, file_size=1 << 20))
        hold.let_go()
    finally:
        hold.close()
    assert proc.wait(timeout=20) == 0
    assert marker.read_text().strip() == str((1 << 20) // 512)


def test_a_hold_that_bubblewrap_never_answers_is_an_error(tmp_path: Path) -> None:
    hold = Hold.open()
    try:
        with pytest.raises(HoldError, match="in time"):
            hold.held_pid(timeout=0.2)
    finally:
        hold.close()


RUNNER_WITH_FOLDER = """\
import json, subprocess, sys, time
from pathlib import Path
from ctbench.evaluate.agents.held import Hold
from ctbench.evaluate.agents.process import new_attempt_dir
folder = new_attempt_dir("held", root=Path(sys.argv[2]))  # named with this runner's owner tag
argv = [a.replace("@FOLDER@", str(folder)) for a in json.loads(sys.argv[1])]
hold = Hold.open()
proc = subprocess.Popen(hold.argv(argv, 0), pass_fds=hold.pass_fds, start_new_session=True)
hold.started()
print(json.dumps({"bwrap": proc.pid, "held": hold.held_pid()}), flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


REAPER = """\
import ctypes, json, os, subprocess, sys
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come here
runner = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, text=True)
print(json.dumps({"runner": runner.pid, **json.loads(runner.stdout.readline())}), flush=True)
while True:
    try:
        pid, status = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    print(json.dumps({"pid": pid, "signal": sig, "status": status}), flush=True)
"""


def test_the_next_sweep_kills_a_held_sandbox_its_dead_runner_left(tmp_path: Path) -> None:
    """The runner dies holding (bubblewrap's --die-with-parent in place, as in a run): bubblewrap dies
    with it, the held process waits on forever (inert, nothing ran). The next run's sweep kills it,
    and only it: while its runner lived the sweep left it alone.

    Every run as root sweeps at its start, so a run of another test worker may be the one that kills
    it: the runner's parent is made the orphans' reaper, and what it reaps tells a held process
    killed (SIGKILL: a sweep, this one or another run's) from one that ended by itself."""
    marker = tmp_path / "ran"
    argv = _sandbox_argv(tmp_path, marker)
    at = argv.index("--")
    argv = [*argv[:at], "--bind", "@FOLDER@", "@FOLDER@", *argv[at:]]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    reaper = subprocess.Popen(
        [
            sys.executable,
            "-c",
            REAPER,
            sys.executable,
            "-c",
            RUNNER_WITH_FOLDER,
            json.dumps(argv),
            str(scratch),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert reaper.stdout is not None
    pids = json.loads(reaper.stdout.readline())
    try:
        _at_block(pids["held"])
        assert pids["held"] not in kill_orphaned_holds(), "a live runner's held sandbox was killed"
        assert _alive(pids["held"])
        os.kill(pids["runner"], signal.SIGKILL)
        assert _wait_gone(pids["runner"], 5)
        assert _wait_gone(pids["bwrap"], 5), "bubblewrap outlived its runner"
        time.sleep(0.3)
        if pids["held"] not in kill_orphaned_holds():
            assert not _alive(pids["held"]), "the sweep left the held sandbox of a dead runner"
        assert _wait_gone(pids["held"], 5)
        reaped = {e["pid"]: e for e in map(json.loads, reaper.communicate(timeout=20)[0].splitlines())}
        assert reaped[pids["held"]]["signal"] == signal.SIGKILL, (
            f"the held process ended by itself ({reaped[pids['held']]}): nothing was left to sweep"
        )
        assert not marker.exists()
    finally:
        _gone(pids["held"], pids["bwrap"], pids["runner"])
        reaper.kill()
        reaper.wait()
