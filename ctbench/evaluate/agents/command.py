"""The command agent: any executable, the base for external agent CLIs (Codex, Claude Code, ...).

The paper's harnesses run one child process per task with the prompt on standard input (D.5); this
adapter does the same for any program:

- stdin: the prompt (also in ``$CTBENCH_PROMPT_FILE``);
- environment: ``CTBENCH_REPLAY_URL`` and ``CTBENCH_REPLAY_SESSION`` (the HTTP replay API and this
  task's session, what ``ctb-replay exec DEVICE COMMAND`` reads), ``CTBENCH_TASK_ID``,
  ``CTBENCH_ANSWER_FILE``, ``CTBENCH_USAGE_FILE``, ``CTBENCH_WORKSPACE``, ``CTBENCH_MODEL``; with
  ``ctb-eval run --ssh`` also ``CTBENCH_SSH_HOST``, ``CTBENCH_SSH_PORT``, ``CTBENCH_SSH_PASSWORD`` and
  ``CTBENCH_SSH_KNOWN_HOSTS`` (log in with a device name as the user: :mod:`ctbench.evaluate.ssh_access`);
- working directory: a fresh, empty workspace per attempt (nothing carries over between tasks;
  the prompt, answer and usage files live beside it, not in it);
- answer: a submission through the replay API, else the answer file, else everything on stdout;
- usage (optional): the program may write ``{"rounds": N, "input_tokens": N, "output_tokens": N}``
  (and ``cached_tokens``, the cache reads among the input tokens, and ``cost_usd``, what the attempt
  cost when the program knows) to ``$CTBENCH_USAGE_FILE``. It is read whatever way the attempt ends:
  a program that times out or fails keeps what it spent, if it wrote it down as it went.

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
import math
import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from ctbench.evaluate.agents.process import (
    TERM_GRACE_S,
    Launch,
    ProcessStartError,
    become_subreaper,
    end_process_group,
    run_agent_process,
)
from ctbench.plugin_api import (
    ANSWER_CAP,
    LOG_CAP,
    SMALL_CAP,
    Agent,
    AgentConfigError,
    AgentContext,
    AgentError,
    AgentResult,
    AttemptFolder,
    InfrastructureError,
    RefusedFile,
    log_tail,
    visible,
)
from ctbench.plugin_api.agent_files import copy_capped, human

__all__ = ["TERM_GRACE_S", "CommandAgent", "become_subreaper", "end_process_group"]

PLACEHOLDERS = ("model", "task_id", "prompt_file", "answer_file", "workspace")


def _tail(path: Path, limit: int = 300) -> str:
    """The agent's last words: the last meaningful line of the runner's log (its stderr), from the
    log's last bytes only (an agent may have written a GiB there)."""
    lines = [
        ln
        for ln in log_tail(path, 64 * 1024).decode("utf-8", errors="replace").splitlines()
        if ln.strip() and not ln.startswith(("[ctbench]", "=== "))
    ]
    return lines[-1][:limit] if lines else ""


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    text = data.decode("utf-8", errors="replace")
    return text if text.strip() else None


def _read_usage(folder: AttemptFolder, rel: str, result: AgentResult) -> None:
    text = _text(folder.read_limited(rel, SMALL_CAP))
    if text is None:
        return
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except ValueError as exc:
        result.notes.append(f"usage file ignored: {exc}")
        return
    for key in ("rounds", "input_tokens", "output_tokens", "cached_tokens"):
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            setattr(result, key, value)
    cost = data.get("cost_usd")
    if isinstance(cost, int | float) and not isinstance(cost, bool) and math.isfinite(cost) and cost >= 0:
        result.cost_usd = float(cost)


@dataclass(frozen=True)
class _AttemptFiles:
    """The attempt's files: an empty workspace (the agent's cwd) and, beside it, the runner's I/O."""

    workspace: Path
    prompt: Path
    answer: Path
    usage: Path
    stdout: Path

    def rel(self, path: Path) -> str:
        """``io/answer.txt``: where ``path`` is inside the attempt folder."""
        return str(path.relative_to(self.workspace.parent))

    @classmethod
    def create(cls, ctx: AgentContext) -> _AttemptFiles:
        workspace, io_dir = ctx.workdir / "workspace", ctx.workdir / "io"
        workspace.mkdir(exist_ok=True)
        io_dir.mkdir(exist_ok=True)
        files = cls(
            workspace,
            io_dir / "prompt.txt",
            io_dir / "answer.txt",
            io_dir / "usage.json",
            io_dir / "stdout.txt",
        )
        files.prompt.write_text(ctx.prompt, encoding="utf-8")
        return files


class CommandAgent(Agent):
    name = "command"
    description = "any executable: prompt on stdin, answer on stdout or in $CTBENCH_ANSWER_FILE"
    transport = "http"
    admits_itself = True  # its process waits for a running place once its sandbox is made and held

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
        values = {
            "model": ctx.options.model or "",
            "task_id": ctx.task_id,
            "prompt_file": str(files.prompt),
            "answer_file": str(files.answer),
            "workspace": str(files.workspace),
        }
        env = {
            "CTBENCH_REPLAY_URL": ctx.replay_url,
            "CTBENCH_REPLAY_SESSION": ctx.session_id,
            "CTBENCH_TASK_ID": ctx.task_id,
            "CTBENCH_ANSWER_FILE": str(files.answer),
            "CTBENCH_USAGE_FILE": str(files.usage),
            "CTBENCH_PROMPT_FILE": str(files.prompt),
            "CTBENCH_WORKSPACE": str(files.workspace),
        }
        token = getattr(ctx, "session_token", None)
        if token:
            env["CTBENCH_REPLAY_TOKEN"] = token
        if ctx.options.model:
            env["CTBENCH_MODEL"] = ctx.options.model
        if ctx.ssh is not None:
            known_hosts = await asyncio.to_thread(ctx.ssh.write_known_hosts, files.prompt.parent)
            env.update(ctx.ssh.env(known_hosts))
        argv = self.argv(values)
        ctx.log.line(f"$ {shlex.join(argv)}")
        launch = Launch(argv=argv, workspace=files.workspace, env=env, read_write=(files.prompt.parent,))
        try:
            returncode = await run_agent_process(
                launch,
                log=ctx.log,
                launcher=getattr(ctx, "launcher", None),
                stdin=files.prompt,
                stdout=files.stdout,
                attempt_dir=ctx.workdir,
                admit=ctx.admit,
            )
        except ProcessStartError as exc:
            raise (InfrastructureError if exc.infrastructure else AgentError)(str(exc)) from None
        except BaseException:
            await asyncio.to_thread(self._copy_stdout_quietly, ctx, files)
            raise
        return await asyncio.to_thread(self._collect, ctx, files, argv[0], returncode)

    def _collect(self, ctx: AgentContext, files: _AttemptFiles, program: str, returncode: int) -> AgentResult:
        """Exit status, answer and usage of a finished attempt (file reads: run in a thread).

        Every file is read through :class:`AttemptFolder` (no links, regular files only, capped):
        the agent had the ``io`` folder to itself, so what is there is data, never a path to follow.
        """
        last = visible(_tail(ctx.log.path))  # its last words on stderr (inert: quoted on terminals)
        with AttemptFolder(ctx.workdir) as folder:
            self._copy_stdout(ctx, folder, files.rel(files.stdout))
            ctx.log.line(f"[ctbench] exit status {returncode}")
            result = ctx.result
            _read_usage(folder, files.rel(files.usage), result)  # a failed attempt keeps what it spent
            if returncode != 0:
                why = (
                    f"killed by signal {-returncode}"
                    if returncode < 0
                    else f"exited with status {returncode}"
                )
                raise AgentError(f"{program} {why}" + (f" (last log line: {last})" if last else ""))
            # A submission through the replay API, if any, wins: the runner takes it from the session.
            if (text := _text(folder.read_limited(files.rel(files.answer), ANSWER_CAP))) is not None:
                result.answer_text, result.answer_source = text, "answer_file"
            elif (out := folder.tail(files.rel(files.stdout), ANSWER_CAP)) is not None and (
                text := _text(out.data)
            ) is not None:
                result.answer_text, result.answer_source = text, "stdout"
                if out.truncated:
                    result.notes.append(f"stdout holds {human(out.size)}: its last {human(ANSWER_CAP)} read")
        return result

    @staticmethod
    def _copy_stdout(ctx: AgentContext, folder: AttemptFolder, rel: str) -> None:
        """The agent's stdout into the task log, capped (half of :data:`LOG_CAP`: its head and tail)."""
        with folder.open(rel) as opened:
            if opened is None or opened[1] == 0:
                return
            fd, size = opened
            ctx.log.line("[ctbench] --- stdout ---")
            copy_capped(fd, size, ctx.log, LOG_CAP // 2, rel)  # half: the log as a whole is capped too
            if os.pread(fd, 1, size - 1) != b"\n":
                ctx.log.write(b"\n")
            ctx.log.line("[ctbench] --- end of stdout ---")

    @classmethod
    def _copy_stdout_quietly(cls, ctx: AgentContext, files: _AttemptFiles) -> None:
        """On a timeout or interrupt: what the agent printed and the usage it wrote so far, if they can
        be read (a timed-out attempt is counted with what it spent); a refusal is noted."""
        try:
            with AttemptFolder(ctx.workdir) as folder:
                cls._copy_stdout(ctx, folder, files.rel(files.stdout))
                _read_usage(folder, files.rel(files.usage), ctx.result)
        except (RefusedFile, OSError) as exc:
            ctx.log.line(f"[ctbench] stdout not copied: {exc}")
