"""The run folder's writer process (issue 25): the commit point of every result, outside the runner.

The runner hands each finished attempt, bytes made, to a process of its own (``ctbench/evaluate/
writer.py``) that writes the files, makes them durable, then appends the result line. These tests
drive it as the runner does (the real :class:`Recorder`, the real process) and through the real
``ctb-eval run``: a job whose files cannot be written gets no line while the others in its round do;
the process holds the folder's lock until its last line is written; a runner killed with SIGKILL
leaves no writer behind; a writer killed under a running runner ends the run with a one-line error,
and the same command then finishes the run with nothing lost and nothing twice.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ctbench.errors import CtbError
from ctbench.evaluate.recorder import Recorder
from ctbench.evaluate.runfolder import ResultLine, RunFolder, RunFolderError
from ctbench.evaluate.runner import _write_error
from tests.conftest import needs_bwrap
from tests.test_runner import clone_tasks, results, slow_run

pytestmark = pytest.mark.xdist_group("writer-process")


def _line(task_id: str) -> ResultLine:
    return ResultLine(task_id=task_id, family="rca", status="answered", answer_text="a;b;c", latency_s=0.1)


def _ops(task_id: str) -> list[tuple[object, ...]]:
    return [
        ("replace", f"trajectories/{task_id}.jsonl", b'{"t": 1}\n', 0o666, False),
        ("append", f"logs/{task_id}.log", b"log of " + task_id.encode() + b"\n"),
    ]


def test_a_job_whose_files_fail_gets_no_line_and_the_others_in_its_round_do(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run")
    folder.lock()
    blocked = folder.path / "trajectories" / "A.jsonl"  # a folder where A's trajectory goes
    (blocked / "inside").mkdir(parents=True)

    async def go() -> tuple[object, ...]:
        rec = Recorder(folder, _write_error)
        try:
            return tuple(
                await asyncio.gather(
                    rec.record(_ops("A"), _line("A"), "A (trial 1)"),
                    rec.record(_ops("B"), _line("B"), "B (trial 1)"),
                    return_exceptions=True,
                )
            )
        finally:
            await rec.aclose()

    try:
        a, b = asyncio.run(go())
    finally:
        folder.close()
    assert isinstance(a, CtbError) and "cannot save the trajectory or log of A (trial 1)" in str(a), a
    assert isinstance(b, ResultLine) and b.task_id == "B"
    assert [r["task_id"] for r in results(folder.path)] == ["B"]
    assert (folder.path / "trajectories" / "B.jsonl").read_bytes() == b'{"t": 1}\n'
    assert not list((folder.path / "trajectories").glob(".*.tmp"))  # no half-written file left


def test_the_writer_keeps_the_folder_locked_while_it_lives(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run")
    folder.lock()
    seen: dict[str, object] = {}

    async def go() -> None:
        rec = Recorder(folder, _write_error)
        await rec.record(_ops("A"), _line("A"), "A (trial 1)")
        folder.close()  # the runner's own descriptor is gone, as when it is killed
        try:
            RunFolder(folder.path).lock()
        except RunFolderError as exc:
            seen["while"] = str(exc)
        await rec.aclose()
        after = RunFolder(folder.path)
        after.lock()
        after.close()
        seen["after"] = True

    asyncio.run(go())
    assert "another ctb-eval run is writing to this folder" in str(seen.get("while")), seen
    assert seen["after"] is True


def _run_argv(tmp_path: Path, n: int) -> tuple[list[str], dict[str, str], Path, list[str]]:
    tasks = tmp_path / "tasks"
    ids = clone_tasks(tasks, n)
    out = tmp_path / "run"
    argv, env = slow_run(tmp_path, tasks, out, "0.3")
    return argv, env, out, sorted([*ids, "PATH-001", "RCA-001", "RCA-002"])


def _writer_of(runner_pid: int) -> int:
    """The pid of the runner's writer process (its child running writer.py)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == runner_pid and b"writer.py" in cmd:
            return int(entry.name)
    raise AssertionError(f"no writer process under runner {runner_pid}")


def _wait_lines(proc: subprocess.Popen[bytes], out: Path, n: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        f = out / "results.jsonl"
        if f.exists() and f.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.02)
    raise AssertionError(f"the run did not write {n} line(s) in time (exit {proc.poll()})")


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":  # a zombie: ended, its parent (the test's init) not told
            return True
        time.sleep(0.02)
    return False


@needs_bwrap
def test_a_killed_runner_leaves_no_writer_behind(tmp_path: Path) -> None:
    argv, env, out, _ = _run_argv(tmp_path, 6)
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_lines(proc, out, 1)
        writer = _writer_of(proc.pid)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert _gone(writer, 10), f"writer {writer} still runs after its runner was killed"
    folder = RunFolder(out)
    folder.lock()  # nobody holds the folder any more
    folder.close()


@needs_bwrap
def test_a_killed_writer_ends_the_run_in_one_line_and_the_same_command_finishes_it(tmp_path: Path) -> None:
    argv, env, out, all_ids = _run_argv(tmp_path, 8)
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _wait_lines(proc, out, 2)
    os.kill(_writer_of(proc.pid), signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    text = err.decode()
    assert proc.returncode not in (0, None), text
    assert "the run folder's writer process" in text and "ended with exit code -9" in text, text
    assert "Traceback" not in text, text
    before = results(out)
    assert 2 <= len(before) < len(all_ids)
    final = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180)
    assert final.returncode == 0, final.stderr
    after = results(out)
    assert sorted(r["task_id"] for r in after) == all_ids  # nothing lost, nothing twice
    assert after[: len(before)] == before
