"""A replay session served by a process that has no ``hidden.yaml`` in its view (issue 14 item 5).

A blind reviewer (``ctb-review blind``) and an author trying a draft (the Try-it console) solve a task
the way an agent does, through a device console over a replay session. The replay engine never
loads the hidden part - but "never loads" is a property of today's code; a recording path that
points at ``../hidden.yaml``, or a bug in a dialect, could still print the gold to the very person
whose answer must be blind. So the session here is served by a separate ``ctb-replay serve``
process whose task set holds only the agent-visible part - what an agent is shown
(:func:`ctbench.isolation.visible_files`: ``ctbench.yaml``, ``taxonomy.yaml``, the dialect
extensions, the task's network file, its ``task.yaml`` and the recordings it lists) - copied into a
private folder; where bubblewrap works, that process runs in a sandbox that sees nothing else of
the file system (no original task set, no git history, no home), built as the agent's is
(:class:`ctbench.isolation.BwrapCommand`). The console talks to it through
:class:`IsolatedSession`, which has the calls of a local session the console uses.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ctbench.errors import CtbError
from ctbench.isolation import BwrapCommand, runtime_paths, visible_files
from ctbench.replay.client import ClientError, RemoteSession, ReplayClient
from ctbench.replay.observation import DeviceInfo, Observation, Submission
from ctbench.replay.trajectory import TrajectoryRecord
from ctbench.store import TaskSet


def visible_copy(ts: TaskSet, task_id: str, dest: Path) -> Path:
    """The agent-visible part of ``ts`` for one task (:func:`ctbench.isolation.visible_files`: the
    set's files, the task's network, its ``task.yaml`` and the recordings it lists), copied under
    ``dest`` (returns the new root). A recording that is a link or leads out of the task folder
    (``../hidden.yaml``) is left out, so the replay answers it as an unrecorded command."""
    root = dest / "tasks"
    root.mkdir(parents=True)
    for rel, src in visible_files(ts, task_id).all().items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    return root


def _bwrap_argv(copy: Path, trajectories: Path) -> list[str] | None:
    """bubblewrap around the server, showing it the copy, its trajectory folder and the runtime only."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None
    argv = BwrapCommand(
        bwrap, read_only=[*runtime_paths(), copy], read_write=[trajectories], chdir=copy
    ).argv()
    try:
        probe = subprocess.run([*argv, "--", "/bin/true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return argv if probe.returncode == 0 else None


class IsolatedSession:
    """One replay session served by an isolated ``ctb-replay serve`` process.

    ``sandboxed`` says whether bubblewrap hides the rest of the file system too (else only the
    copy keeps ``hidden.yaml`` out of the server's task set). ``close()`` closes the session
    (the trajectory file is complete afterwards), stops the server and removes the copy.
    """

    def __init__(
        self, ts: TaskSet, task_id: str, *, trajectory_path: Path | None = None, sandbox: bool = True
    ) -> None:
        self.task_id = task_id
        self.trajectory_path = trajectory_path
        self._tmp = Path(tempfile.mkdtemp(prefix="ctbench-view-"))
        self._proc: subprocess.Popen[str] | None = None
        self._client: ReplayClient | None = None
        try:
            copy = visible_copy(ts, task_id, self._tmp)
            traj_dir = (
                trajectory_path.parent if trajectory_path is not None else self._tmp / "traj"
            ).resolve()
            traj_dir.mkdir(parents=True, exist_ok=True)
            cmd = [
                sys.executable,
                "-m",
                "ctbench.replay.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--tasks",
                str(copy),
                "--trajectories",
                str(traj_dir),
                "--max-sessions",
                "1",
            ]
            wrap = _bwrap_argv(copy, traj_dir) if sandbox else None
            self.sandboxed = wrap is not None
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "LANG": os.environ.get("LANG", "C.UTF-8"),
                "HOME": str(copy),
            }
            if not self.sandboxed and "PYTHONPATH" in os.environ:
                env["PYTHONPATH"] = os.environ["PYTHONPATH"]
            self._proc = subprocess.Popen(
                [*(wrap + ["--"] if wrap else []), *cmd],
                cwd=copy,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                start_new_session=True,
            )
            assert self._proc.stdout is not None
            url = self._proc.stdout.readline().strip()
            if not url.startswith("http://"):
                raise CtbError(f"the isolated replay server for {task_id} did not start")
            name = trajectory_path.name if trajectory_path is not None else None
            self._client = self._open(url, task_id, name)
            self._session = RemoteSession(self._client)
        except BaseException:
            self.close()
            raise

    def _open(self, url: str, task_id: str, name: str | None) -> ReplayClient:
        """The session, once the server listens (it prints its URL just before it does)."""
        deadline = time.monotonic() + 20
        while True:
            try:
                return ReplayClient.open(url, task_id, trajectory=name)
            except ClientError as exc:
                if (
                    exc.status is not None
                    or time.monotonic() > deadline
                    or (self._proc is not None and self._proc.poll() is not None)
                ):
                    raise
                time.sleep(0.02)

    @property
    def id(self) -> str:
        assert self._client is not None
        return self._client.session_id

    def devices(self) -> list[DeviceInfo]:
        return self._session.devices()

    def run(self, device: str, command: str) -> Observation:
        return self._session.run(device, command)

    def submit(self, answer_text: str) -> Submission:
        return self._session.submit(answer_text)

    def prompt(self, device: str) -> str:
        assert self._client is not None
        return self._client.prompt(device)

    def complete(self, device: str, line: str) -> list[str]:
        """Tab in the console: the vendor keywords, answered by the isolated server (not a call)."""
        return self._session.complete(device, line)

    @property
    def trajectory(self) -> list[TrajectoryRecord]:
        """The calls so far, as the isolated server logged them (empty once closed)."""
        if self._client is None:
            return []
        return self._client.trajectory()

    def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(CtbError):
                self._client.close(end_session=True)
            self._client = None
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> IsolatedSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class IsolatedEngine:
    """``IsolatedEngine(ts).open_session(task_id, trajectory_path=...)``: the shape of
    ``ReplayEngine`` that the blind app's ``engine_factory`` and the Try-it console use."""

    def __init__(self, ts: TaskSet) -> None:
        self.ts = ts

    def open_session(self, task_id: str, trajectory_path: Path | None = None, **_: Any) -> IsolatedSession:
        return IsolatedSession(self.ts, task_id, trajectory_path=trajectory_path)


__all__ = ["IsolatedEngine", "IsolatedSession", "visible_copy"]
