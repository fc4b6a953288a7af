"""The command agent: any executable, the base for external agent CLIs (Codex, Claude Code, ...).

The paper's harnesses run one child process per task with the prompt on standard input (D.5); this
adapter does the same for any program:

- stdin: the prompt (also in ``$CTBENCH_PROMPT_FILE``);
- environment: ``CTBENCH_REPLAY_URL`` and ``CTBENCH_REPLAY_SESSION`` (the HTTP replay API and this
  task's session, what ``ctb-replay exec DEVICE COMMAND`` reads), ``CTBENCH_TASK_ID``,
  ``CTBENCH_ANSWER_FILE``, ``CTBENCH_USAGE_FILE``, ``CTBENCH_WORKSPACE``, ``CTBENCH_MODEL``;
- working directory: a fresh, empty workspace per attempt (nothing carries over between tasks;
  the prompt, answer and usage files live beside it, not in it);
- answer: a submission through the replay API, else the answer file, else everything on stdout;
- usage (optional): the program may write ``{"rounds": N, "input_tokens": N, "output_tokens": N}``
  to ``$CTBENCH_USAGE_FILE``.

``--agent-cmd`` is split like a shell command line (no shell runs it) and may use the placeholders
``{model}``, ``{task_id}``, ``{prompt_file}``, ``{answer_file}`` and ``{workspace}``.

The child is the leader of a new process group. When the runner's timeout cancels the attempt, the
whole group gets SIGTERM, then SIGKILL after a grace period, and the attempt only ends once no member
of the group is left - so nothing an agent started outlives its task. Standard output goes to a file,
never a pipe, so a chatty agent cannot block on a full pipe and a killed one loses nothing written.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ctbench.evaluate.agents.base import (
    Agent,
    AgentConfigError,
    AgentContext,
    AgentError,
    AgentResult,
    InfrastructureError,
)

TERM_GRACE_S = 2.0
"""Seconds between SIGTERM and SIGKILL to the process group."""
GROUP_GONE_WAIT_S = 10.0
"""How long to wait for killed group members to be reaped before giving up (they are SIGKILLed)."""
PR_SET_CHILD_SUBREAPER = 36
PLACEHOLDERS = ("model", "task_id", "prompt_file", "answer_file", "workspace")


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed identity; it still exists
        return True
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``).

    An agent's grandchildren are orphaned when the runner kills the agent; killed, they stay zombies -
    still members of the process group - until their new parent reaps them. In a container whose
    PID 1 never reaps (Docker without ``--init``) that is forever. As their subreaper the runner reaps
    them itself (:func:`_reap_group`), so "the group is gone" is something it can actually wait for.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _reap_group(pgid: int) -> None:
    """Collect the exit status of any adopted member of the group that has died."""
    while True:
        try:
            pid, _ = os.waitpid(-pgid, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


async def end_process_group(proc: asyncio.subprocess.Process, pgid: int, grace_s: float = TERM_GRACE_S) -> None:
    """SIGTERM the group, SIGKILL it after ``grace_s``, and wait until no member is left."""
    if proc.returncode is None:
        _signal_group(pgid, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), grace_s)
        except TimeoutError:
            pass
    _signal_group(pgid, signal.SIGKILL)
    if proc.returncode is None:
        await proc.wait()
    deadline = time.monotonic() + GROUP_GONE_WAIT_S
    while _group_alive(pgid) and time.monotonic() < deadline:
        _signal_group(pgid, signal.SIGKILL)
        _reap_group(pgid)  # the leader is reaped already; only adopted orphans are left to collect
        if _group_alive(pgid):
            await asyncio.sleep(0.01)


def _tail(path: Path, limit: int = 300) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    lines = [ln for ln in data.decode("utf-8", errors="replace").splitlines()
             if ln.strip() and not ln.startswith(("[ctbench]", "=== "))]
    return lines[-1][:limit] if lines else ""


def _read_text(path: Path) -> str | None:
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None
    return text if text.strip() else None


def _read_usage(path: Path, result: AgentResult) -> None:
    text = _read_text(path)
    if text is None:
        return
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except ValueError as exc:
        result.notes.append(f"usage file ignored: {exc}")
        return
    for key in ("rounds", "input_tokens", "output_tokens"):
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            setattr(result, key, value)


@dataclass(frozen=True)
class _AttemptFiles:
    """The attempt's files: an empty workspace (the agent's cwd) and, beside it, the runner's I/O."""

    workspace: Path
    prompt: Path
    answer: Path
    usage: Path
    stdout: Path

    @classmethod
    def create(cls, ctx: AgentContext) -> _AttemptFiles:
        workspace, io_dir = ctx.workdir / "workspace", ctx.workdir / "io"
        workspace.mkdir(exist_ok=True)
        io_dir.mkdir(exist_ok=True)
        files = cls(workspace, io_dir / "prompt.txt", io_dir / "answer.txt", io_dir / "usage.json",
                    io_dir / "stdout.txt")
        files.prompt.write_text(ctx.prompt, encoding="utf-8")
        return files

    def open_streams(self) -> tuple[IO[bytes], IO[bytes]]:
        return self.prompt.open("rb"), self.stdout.open("wb")


class CommandAgent(Agent):
    name = "command"
    description = "any executable: prompt on stdin, answer on stdout or in $CTBENCH_ANSWER_FILE"
    transport = "http"

    def _argv_template(self) -> list[str]:
        cmd = self.options.agent_cmd
        if not cmd or not cmd.strip():
            raise AgentConfigError("--agent command needs --agent-cmd 'PROGRAM ARGS...'")
        try:
            argv = shlex.split(cmd)
        except ValueError as exc:
            raise AgentConfigError(f"--agent-cmd {cmd!r}: {exc}") from None
        return argv

    def check(self) -> None:
        argv = self._argv_template()
        program = argv[0]
        if os.sep in program:
            if not (os.path.isfile(program) and os.access(program, os.X_OK)):
                raise AgentConfigError(f"--agent-cmd: {program} is not an executable file")
        elif shutil.which(program) is None:
            raise AgentConfigError(f"--agent-cmd: {program!r} not found on PATH")

    @property
    def harness(self) -> str:
        return f"command: {self.options.agent_cmd}"

    async def open(self) -> None:
        become_subreaper()

    def argv(self, values: dict[str, str]) -> list[str]:
        """The command line for one attempt: placeholders filled, caller-relative files made absolute.

        The agent runs in a fresh workspace, so ``--agent-cmd 'python my_agent.py'`` would not find
        its script there; arguments naming an existing file relative to where ``ctb-eval`` was started
        are turned into absolute paths.
        """
        out = []
        for arg in self._argv_template():
            for key in PLACEHOLDERS:
                arg = arg.replace("{" + key + "}", values.get(key, ""))
            if arg and not arg.startswith("-") and not os.path.isabs(arg) and os.path.isfile(arg):
                arg = os.path.abspath(arg)
            out.append(arg)
        return out

    async def solve(self, ctx: AgentContext) -> AgentResult:
        if ctx.replay_url is None:
            raise InfrastructureError("the replay HTTP server is not running")
        files = await asyncio.to_thread(_AttemptFiles.create, ctx)
        values = {"model": ctx.options.model or "", "task_id": ctx.task_id, "prompt_file": str(files.prompt),
                  "answer_file": str(files.answer), "workspace": str(files.workspace)}
        env = {**os.environ,
               "CTBENCH_REPLAY_URL": ctx.replay_url, "CTBENCH_REPLAY_SESSION": ctx.session_id,
               "CTBENCH_TASK_ID": ctx.task_id, "CTBENCH_ANSWER_FILE": str(files.answer),
               "CTBENCH_USAGE_FILE": str(files.usage), "CTBENCH_PROMPT_FILE": str(files.prompt),
               "CTBENCH_WORKSPACE": str(files.workspace)}
        if ctx.options.model:
            env["CTBENCH_MODEL"] = ctx.options.model
        argv = self.argv(values)
        ctx.log.line(f"$ {shlex.join(argv)}")
        stdin, stdout = await asyncio.to_thread(files.open_streams)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=stdin, stdout=stdout, stderr=ctx.log.fileno(), cwd=files.workspace, env=env,
                start_new_session=True)
        except FileNotFoundError:
            raise AgentError(f"{argv[0]}: command not found") from None
        except PermissionError:
            raise AgentError(f"{argv[0]}: permission denied") from None
        except OSError as exc:  # fork/exec resource limits: the machine, not the agent
            raise InfrastructureError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
        finally:
            stdin.close()
            stdout.close()
        pgid = proc.pid  # start_new_session: the child leads its own group
        ctx.log.line(f"[ctbench] pid {proc.pid}, process group {pgid}")
        try:
            returncode = await proc.wait()
        except BaseException:  # cancelled by the runner's timeout, or the run is interrupted
            await asyncio.shield(end_process_group(proc, pgid))
            ctx.log.line("[ctbench] process group ended by the runner (timeout or interrupt)")
            self._copy_stdout(ctx, files.stdout)
            raise
        await end_process_group(proc, pgid, grace_s=0.0)  # leftovers the agent started
        return await asyncio.to_thread(self._collect, ctx, files, argv[0], returncode)

    def _collect(self, ctx: AgentContext, files: _AttemptFiles, program: str, returncode: int) -> AgentResult:
        """Exit status, answer and usage of a finished attempt (file reads: run in a thread)."""
        last = _tail(ctx.log.path)  # the agent's own last words on stderr, before stdout is appended
        self._copy_stdout(ctx, files.stdout)
        ctx.log.line(f"[ctbench] exit status {returncode}")
        if returncode != 0:
            why = f"killed by signal {-returncode}" if returncode < 0 else f"exited with status {returncode}"
            raise AgentError(f"{program} {why}" + (f" (last log line: {last})" if last else ""))
        result = ctx.result
        _read_usage(files.usage, result)
        # A submission through the replay API, if any, wins: the runner takes it from the session.
        if (text := _read_text(files.answer)) is not None:
            result.answer_text, result.answer_source = text, "answer_file"
        elif (text := _read_text(files.stdout)) is not None:
            result.answer_text, result.answer_source = text, "stdout"
        return result

    @staticmethod
    def _copy_stdout(ctx: AgentContext, stdout_file: Path) -> None:
        try:
            data = stdout_file.read_bytes()
        except OSError:
            return
        if data:
            ctx.log.line("[ctbench] --- stdout ---")
            ctx.log.write(data if data.endswith(b"\n") else data + b"\n")
            ctx.log.line("[ctbench] --- end of stdout ---")
