"""What the real agent CLIs (Codex, Claude Code, Hermes) share: install lookup, a fresh home, the MCP
server ``ctb``, the child process and its event stream, and the honest classification of failures.

An adapter (:class:`HarnessAgent` subclass) only says how its CLI is configured and started
(:meth:`HarnessAgent.launch`) and how its output is read (:meth:`HarnessAgent.collect`). This module
does the rest, the same way for all three:

- a fresh per-attempt home (``HOME`` and the CLI's own config folder point into it), so nothing a
  user configured for the CLI - their login, their own MCP servers, their plugins - leaks into a run;
- an empty working directory;
- the replay registered as MCP server ``ctb`` through the stdio proxy command of the context;
- the CLI's standard output (its event stream) copied line by line into the task log as it comes,
  and kept for parsing; standard error goes straight to the log;
- on timeout or interrupt the process group and every descendant found under the CLI are ended
  before the attempt is recorded (the CLIs start their MCP servers as children).

Failure classes (issue 13): the CLI started without the ctb tools, its model request was refused,
or it crashed before its first model call - :class:`InfrastructureError` (retried, never scored as
a wrong answer); it ran and answered nothing - an empty answer (scored unparsable/empty as today);
it crashed after working - :class:`AgentError`.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import sys
from abc import abstractmethod
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ctbench.evaluate.agents.command import become_subreaper, end_process_group
from ctbench.evaluate.agents.process import ProcessStartError, SpawnCaps, record_group, start_time
from ctbench.evaluate.harnesses import Installed, find, spec
from ctbench.evaluate.model_tap import SOURCE as TAP_SOURCE
from ctbench.evaluate.model_tap import fill_usage, models_seen
from ctbench.plugin_api.agent import (
    Agent,
    AgentConfigError,
    AgentContext,
    AgentError,
    AgentResult,
    AgentSettings,
    Availability,
    InfrastructureError,
)
from ctbench.plugin_api.agent_files import MIB, AttemptFolder, RefusedFile, human
from ctbench.plugin_api.ssh import CONFIG_ENV
from ctbench.plugin_api.transcript import TranscriptEntry, dumps
from ctbench.safetext import visible

ReasoningEffort = Literal["minimal", "low", "medium", "high", "xhigh"]

TREE_POLL_S = 0.25
"""How often the CLI's process tree is looked at while it runs (to end orphans it leaves behind)."""
STDERR_TAIL = 200
"""Lines of a CLI's standard error kept for classifying its failure (all of it is in the log)."""
PROXY_LOG = "mcp-proxy.log"
"""The stdio proxy's log (``ctb-replay mcp --log``) in the attempt's folder, copied into the task log."""
SCRUBBED_ENV = (
    "PWD",
    "OLDPWD",
    "CTBENCH_REPLAY_URL",
    "CTBENCH_REPLAY_SESSION",
    "CTBENCH_TASK_ID",
    "CTBENCH_ANSWER_FILE",
    "CTBENCH_USAGE_FILE",
    "CTBENCH_PROMPT_FILE",
    "CTBENCH_WORKSPACE",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "CODEX_HOME",
    "CLAUDE_CONFIG_DIR",
    "HERMES_HOME",
    "ANTHROPIC_AUTH_TOKEN",
)
"""Never passed to a CLI: the runner's own location, another CLI's config and ctbench's Python setup."""


class HarnessOptions(BaseModel):
    """``--agent-arg KEY=VALUE`` options every harness takes."""

    model_config = ConfigDict(extra="forbid")

    reasoning_effort: ReasoningEffort | Literal["none", "max"] | None = Field(
        default=None,
        description="the CLI's reasoning effort (Codex: minimal..xhigh; Claude Code: low..max; "
        "Hermes: none..max)",
    )
    api_key_env: str | None = Field(
        default=None, description="environment variable holding the API key (default: the CLI's own)"
    )
    version: str | None = Field(
        default=None,
        description="run this installed version instead of the pinned one "
        "(ctb-eval harness install NAME --version V)",
    )


def with_v1(url: str) -> str:
    """``http://h:1/v1`` from ``http://h:1``, ``http://h:1/`` or ``http://h:1/v1/`` (OpenAI-style clients)."""
    base = url.rstrip("/")
    return base if base.endswith("/v1") else base + "/v1"


def without_v1(url: str) -> str:
    """``http://h:1`` from ``http://h:1/v1`` (Anthropic clients append ``/v1/messages`` themselves)."""
    base = url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def toml_str(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    import json

    return json.dumps(text, ensure_ascii=False)


@dataclass
class HarnessLaunch:
    """How one attempt starts its CLI, and where its files are. ``env`` is what the adapter sets.

    The adapter's view; :meth:`HarnessAgent._prepare` turns it into the sandbox's description of
    the process (:class:`ctbench.evaluate.agents.process.Launch`)."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    home: Path
    files: dict[str, Path] = field(default_factory=dict)

    def full_env(self) -> dict[str, str]:
        """Unsandboxed: the runner's environment less :data:`SCRUBBED_ENV`, then the adapter's."""
        return {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV} | self.env


@dataclass
class HarnessRun:
    """What came back: exit status, the standard output lines (the CLI's event stream) and the last
    lines of standard error (both are in the task log as they came)."""

    returncode: int
    lines: list[str]
    stderr: list[str] = field(default_factory=list)


def file_tail(
    root: Path, path: Path, keep: Callable[[str], bool] | None = None, limit: int = 40
) -> list[str]:
    """The last ``limit`` lines of ``path`` (a file the CLI or the proxy left in the attempt folder
    ``root``) that ``keep`` accepts (default: the non-blank ones), each cut at 500 characters.

    Read through :class:`AttemptFolder` from the file's last bytes only: a link, FIFO or device
    there is refused (:class:`RefusedFile`), a GiB-sized log costs no more than a small one."""
    with AttemptFolder(root) as folder:
        got = folder.tail(PurePosixPath(path.relative_to(root)))
    if got is None:
        return []
    lines = got.data.decode("utf-8", errors="replace").splitlines()
    if got.truncated and lines:
        lines = lines[1:]  # the first one is cut
    return [ln[:500] for ln in lines if (keep(ln) if keep else ln.strip())][-limit:]


PIPE_KEEP = 64 * MIB
"""Most bytes of a CLI's standard output (its event stream, kept for parsing) and of its standard
error that go into the task log; what comes after is read and dropped, so the CLI never blocks."""
PIPE_LINE = 4 * MIB
"""Longest line read from a CLI's pipe; a longer one is cut there (the rest of it is dropped)."""
STDERR_LINE = 2000
"""Characters of each standard-error line kept for classifying a failure."""


@dataclass
class _Budget:
    """Bytes of one pipe still to be logged and kept; notes once in the log when they run out."""

    left: int
    spent: bool = False

    def take(self, n: int, log: Any, what: str) -> bool:
        if self.left >= n:
            self.left -= n
            return True
        if not self.spent:
            self.spent = True
            log.line(f"[ctbench] the CLI's {what} passed {human(PIPE_KEEP)}: the rest is not kept")
        return False


async def pipe_lines(stream: asyncio.StreamReader, max_line: int = PIPE_LINE) -> AsyncIterator[bytes]:
    """The lines of a pipe as they come, each at most ``max_line`` bytes: memory stays bounded
    whatever the CLI prints (a line of a GiB without a newline included)."""
    buf = bytearray()
    skipping = False
    while chunk := await stream.read(256 * 1024):
        buf += chunk
        while (i := buf.find(b"\n")) >= 0:
            line = bytes(buf[: i + 1])
            del buf[: i + 1]
            if skipping:
                skipping = False
                continue
            yield line
        if len(buf) > max_line:
            if not skipping:
                yield bytes(buf[:max_line]) + b" [ctbench: line cut]\n"
            skipping = True
            buf.clear()
    if buf and not skipping:
        yield bytes(buf)


def _children(pid: int) -> list[int]:
    """Direct children of ``pid``: those of every thread (a child belongs to the thread that forked it)."""
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def process_tree(pid: int) -> list[int]:
    """``pid`` and every descendant (Linux /proc), found before anything is killed."""
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.append(p)
        todo.extend(_children(p))
    return seen


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def remember(seen: dict[int, int | None], pids: list[int]) -> None:
    """Note ``pids`` with their start times, so :func:`adopted` can tell a reused pid from one of them."""
    for p in pids:
        if p not in seen:
            seen[p] = start_time(p)


def adopted(seen: dict[int, int | None]) -> list[int]:
    """Those of ``seen`` now orphaned and adopted by this (subreaper) process, and their descendants.

    A pid is the same process only while its start time is the one noted: on a busy machine a pid
    comes round again within seconds (pid_max may be 32768), and the runner's own children - another
    attempt's CLI at concurrency above 1 - are just the processes that would then match.
    """
    me = os.getpid()
    return [
        q
        for p in sorted(seen)
        if _ppid(p) == me and seen[p] is not None and start_time(p) == seen[p]
        for q in process_tree(p)
    ]


def kill_all(pids: list[int], seen: dict[int, int | None]) -> None:
    """SIGKILL those of ``pids`` that are still the processes :func:`remember` noted in ``seen``
    (a pid the kernel has handed to another process since is left alone)."""
    for p in pids:
        if seen.get(p) is None or start_time(p) != seen[p]:
            continue
        try:
            os.kill(p, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@cache
def _replay_cli_connects() -> bool:
    from ctbench.replay import cli

    return hasattr(cli, "cmd_mcp_connect")


class HarnessAgent(Agent):
    """A real agent CLI, started once per attempt, reaching the replay as MCP server ``ctb``."""

    harness_key: ClassVar[str]
    """Its entry in harnesses.yaml."""
    key_env: ClassVar[str]
    """The environment variable the key is read from by default."""
    rounds_kind: ClassVar[Literal["model requests", "tool turns"]] = "model requests"
    transport = "mcp-stdio"
    Options: ClassVar[type[BaseModel]] = HarnessOptions
    uses_model_tap = True
    shell_tool: ClassVar[str | None] = None
    """The CLI's own shell tool, given to the model under ``ctb-eval run --ssh`` (and only then) so it
    can run ``ssh``; None: the adapter cannot give one, and ``--ssh`` refuses the agent."""
    shell_is_bounded: ClassVar[bool] = True
    """Whether the CLI itself keeps its shell tool to ``ssh`` (Claude Code's permission rule); one that
    runs any command (Hermes' terminal) is given only inside the sandbox."""

    def __init__(self, options: AgentSettings, args: BaseModel | None = None) -> None:
        super().__init__(options, args)
        self._installed: Installed | None = None

    # ----------------------------------------------------------------- availability and options

    @classmethod
    def availability(cls) -> Availability:
        found = find(cls.harness_key)
        pinned = spec(cls.harness_key).version
        if found is None:
            return Availability(
                False, None, f"not installed: ctb-eval harness install {cls.harness_key} (pinned {pinned})"
            )
        where = "ctbench cache" if found.source == "cache" else "PATH"
        note = "" if found.version == pinned else f", pinned is {pinned}"
        return Availability(True, found.version, f"{found.executable} from {where}, {found.runtime}{note}")

    @property
    def installed(self) -> Installed:
        if self._installed is None:
            version = self.agent_args().version
            self._installed = find(self.harness_key, version)
            if self._installed is None:
                flag = f" --version {version}" if version else ""
                raise AgentConfigError(
                    f"--agent {self.name}: the CLI{' ' + version if version else ''} is not "
                    f"installed; run 'ctb-eval harness install {self.harness_key}{flag}'"
                )
        return self._installed

    @classmethod
    def pinned_version(cls) -> str:
        """The CLI's version pinned in ``harnesses.yaml`` (what ``ctb-eval harness install`` installs)."""
        return spec(cls.harness_key).version

    def agent_args(self, ctx: AgentContext | None = None) -> HarnessOptions:
        """The validated ``--agent-arg`` options (the context's, else the run's)."""
        got = getattr(ctx, "agent_args", None)
        if isinstance(got, HarnessOptions):
            return got
        return self.args if isinstance(self.args, HarnessOptions) else HarnessOptions()

    def api_key(self) -> str:
        var = self.agent_args().api_key_env or self.key_env
        key = os.environ.get(var)
        if not key:
            raise AgentConfigError(
                f"--agent {self.name} reads the API key from ${var}; set it (any value "
                "for an endpoint that needs none), or name another variable with "
                "--agent-arg api_key_env=NAME"
            )
        return key

    def check(self) -> None:
        if not self.options.model:
            raise AgentConfigError(f"--agent {self.name} needs --model NAME")
        if not self.options.base_url:
            raise AgentConfigError(f"--agent {self.name} needs --base-url URL (the model endpoint)")
        self.installed  # noqa: B018 - raises when missing
        self.api_key()

    @property
    def harness(self) -> str:
        return f"{self.harness_key} {self.harness_version}"

    @property
    def harness_version(self) -> str:
        return self.installed.version

    async def open(self) -> None:
        become_subreaper()

    @property
    def takes_ssh(self) -> bool:
        return self.shell_tool is not None

    # ----------------------------------------------------------------- one attempt

    @staticmethod
    def mcp_command(ctx: AgentContext) -> list[str]:
        """The argv that serves this attempt's session as a stdio MCP server: the runner's proxy
        command (``ctb-replay mcp --connect``), or this package's bridge where the installed replay
        CLI has no ``--connect`` yet."""
        if ctx.mcp_command and _replay_cli_connects():
            argv = list(ctx.mcp_command)
            if ctx.session_token and "--token-file" not in argv:
                # never on the command line (any local user can read argv), and not in the environment
                # either: Codex passes its MCP servers only an allowlist of variables
                token = ctx.workdir / "replay-token"
                fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(ctx.session_token)
                argv += ["--token-file", str(token)]
            if "--log" not in argv:
                argv += ["--log", str(ctx.workdir / PROXY_LOG)]
            return argv
        if ctx.replay_url is None:
            raise InfrastructureError("the replay HTTP server is not running")
        return [sys.executable, "-m", "ctbench.evaluate.agents.mcp_bridge", ctx.replay_url, ctx.session_id]

    def base_env(self, home: Path) -> dict[str, str]:
        """What every harness sets: its home, and the XDG folders inside it. An adapter adds its own;
        the rest of the environment is the runner's (unsandboxed, less :data:`SCRUBBED_ENV`) or the
        sandbox's allowlist."""
        env: dict[str, str] = {}
        env["HOME"] = str(home)
        env["XDG_CONFIG_HOME"] = str(home / ".config")
        env["XDG_CACHE_HOME"] = str(home / ".cache")
        env["XDG_DATA_HOME"] = str(home / ".local" / "share")
        env["XDG_STATE_HOME"] = str(home / ".local" / "state")
        return env

    @abstractmethod
    def launch(self, ctx: AgentContext, home: Path, workspace: Path, mcp: list[str]) -> HarnessLaunch:
        """Write the CLI's config into ``home`` and say how to start it (runs in a thread)."""

    @abstractmethod
    def collect(self, ctx: AgentContext, launch: HarnessLaunch, run: HarnessRun) -> AgentResult:
        """Usage, rounds and answer from the finished run; raise for the failure classes (in a thread)."""

    def keep_line(self, raw: bytes) -> bool:
        """Whether a line of the CLI's standard output goes into the task log and :attr:`HarnessRun.lines`
        (a CLI streaming token deltas keeps only the lines that carry usage)."""
        return True

    def usage_so_far(self, ctx: AgentContext, launch: HarnessLaunch, lines: list[str]) -> None:  # noqa: B027
        """An attempt that did not finish (timeout, interrupt, a failure before :meth:`collect` read it):
        put the usage the CLI had reached in ``ctx.result``, so it is counted with what it spent.
        ``lines`` is its standard output so far. Runs in a thread; never raises."""

    def transcript(self, ctx: AgentContext, launch: HarnessLaunch, lines: list[str]) -> list[TranscriptEntry]:
        """The conversation as the CLI recorded it (:mod:`ctbench.evaluate.transcript`), read from its
        own files or ``lines`` (its standard output); whatever was written, however the attempt ended.
        Runs in a thread."""
        return []

    def _keep_transcript(self, ctx: AgentContext, launch: HarnessLaunch, lines: list[str]) -> None:
        """Put the transcript in ``ctx.result``; never raises (the record is a bonus, the outcome is not)."""
        try:
            entries = self.transcript(ctx, launch, lines)
        except Exception as exc:
            ctx.log.line(f"[ctbench] transcript not read: {type(exc).__name__}: {exc}")
            return
        filled = fill_usage(entries, ctx.model_route.records()) if ctx.model_route is not None else 0
        ctx.result.transcript = dumps(entries)
        if entries:
            ctx.log.line(f"[ctbench] transcript: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}")
        if filled:
            ctx.log.line(
                f"[ctbench] usage of {filled} model turn(s) from the endpoint's responses (model tap)"
            )

    @staticmethod
    def _endpoint_said(ctx: AgentContext) -> None:
        """The model the endpoint's responses named, as the tap read them, where the harness said none;
        where the harness did and the endpoint disagrees, a note says so. Never raises."""
        if ctx.model_route is None:
            return
        for why in dict.fromkeys(ctx.model_route.failures):
            ctx.log.line(f"[ctbench] model tap: the model endpoint could not be reached: {why}")
        seen = models_seen(ctx.model_route.records())
        result = ctx.result
        if result.model_reported is None:
            result.saw_models(ctx.options.model, seen, TAP_SOURCE)
            return
        ids = sorted(set(seen))
        if ids and ids != sorted(m.strip() for m in result.model_reported.split(",")):
            result.notes.append(
                f"the endpoint's responses named {', '.join(ids)}; the harness recorded {result.model_reported}"
            )

    def _salvage(self, ctx: AgentContext, launch: HarnessLaunch, lines: list[str]) -> None:
        self._keep_transcript(ctx, launch, lines)
        if ctx.result.input_tokens is not None or ctx.result.output_tokens is not None:
            return  # collect read it already
        try:
            self.usage_so_far(ctx, launch, lines)
        except Exception as exc:  # a partial record is a bonus; it must never hide the real outcome
            ctx.log.line(f"[ctbench] usage of the unfinished attempt not read: {type(exc).__name__}: {exc}")
            return
        if ctx.result.input_tokens is not None:
            ctx.log.line(
                f"[ctbench] usage so far: {ctx.result.input_tokens} input, {ctx.result.output_tokens} output "
                f"token(s) in {ctx.result.rounds} {self.rounds_kind or 'round(s)'}"
            )

    @staticmethod
    def record(result: AgentResult, **values: Any) -> None:
        """Set the usage fields that were reported (None: leave as it is)."""
        for key, value in values.items():
            if value is not None:
                setattr(result, key, value)

    async def solve(self, ctx: AgentContext) -> AgentResult:
        home, workspace = ctx.workdir / "home", ctx.workdir / "workspace"
        for folder in (home, workspace):
            await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
        ssh_env: dict[str, str] = {}
        if ctx.ssh is not None:  # --ssh: the OpenSSH files, their variables, and a word in the prompt
            devices = [d.name for d in ctx.session.devices()]
            ssh_env = await asyncio.to_thread(ctx.ssh.write_client, ctx.workdir, devices)
            ctx.prompt += ctx.ssh.prompt_note(Path(ssh_env[CONFIG_ENV]))
        launch = await asyncio.to_thread(self.launch, ctx, home, workspace, self.mcp_command(ctx))
        launch.env.update(ssh_env)
        if ctx.ssh is not None:
            ctx.log.line(f"[ctbench] --ssh: {self.shell_tool} may run ssh -F ${CONFIG_ENV} DEVICE COMMAND")
        ctx.log.line(f"[ctbench] {self.harness}: $ {shlex.join(launch.argv[:-1] + ['PROMPT'])}")
        lines: list[str] = []
        try:
            run = await self._run(ctx, launch, lines)
            ctx.log.line(f"[ctbench] exit status {run.returncode}")
            result = await asyncio.to_thread(self.collect, ctx, launch, run)
            await asyncio.to_thread(self._keep_transcript, ctx, launch, run.lines)
            self._endpoint_said(ctx)
        except BaseException:
            self._endpoint_said(ctx)
            await asyncio.to_thread(self._salvage, ctx, launch, lines)
            await asyncio.to_thread(self._proxy_log, ctx, quiet=True)
            raise
        await asyncio.to_thread(self._proxy_log, ctx, quiet=False)
        return result

    @staticmethod
    def _proxy_log(ctx: AgentContext, *, quiet: bool) -> None:
        """The proxy's own account of the ctb server, whatever the CLI says of it, into the task log.

        The proxy writes its log in the attempt folder, which the CLI can write too: a link or FIFO
        left there is refused - the agent's error, unless the attempt is already failing (``quiet``:
        the refusal is only noted, the first failure stands)."""
        try:
            lines = file_tail(ctx.workdir, ctx.workdir / PROXY_LOG, limit=200)
        except RefusedFile as exc:
            ctx.log.line(f"[ctbench] {exc}")
            if quiet:
                return
            raise
        missing = "no log: the CLI did not start the proxy, or it exited before its first line (see above)"
        for line in lines or [missing]:
            ctx.log.line(f"[ctb proxy] {line}")

    def read_only_paths(self) -> list[Path]:
        """What the CLI needs to see read-only inside a sandbox: its install (and a venv's base Python)."""
        found = self.installed
        paths = [found.folder or found.executable.parent]
        cfg = (found.folder / "venv" / "pyvenv.cfg") if found.folder is not None else None
        if cfg is not None and cfg.is_file():
            for line in cfg.read_text(encoding="utf-8").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    paths.append(Path(value.strip()).parent)
        return paths

    def _prepare(
        self, ctx: AgentContext, launch: HarnessLaunch
    ) -> tuple[list[str], dict[str, str], Path, Callable[[], None] | None]:
        """argv, environment and working directory as they are executed: through the sandbox's
        launcher when the run has one (issue 14), else directly; and what to release once the CLI
        has ended (the launcher's hold on this attempt, if any)."""
        if ctx.launcher is None:
            return launch.argv, launch.full_env(), launch.cwd, None
        from ctbench.evaluate.agents import process  # the sandbox's process description (issue 14)

        described = process.Launch(
            argv=launch.argv,
            workspace=launch.cwd,
            env=launch.env,
            home=launch.home,
            read_write=(ctx.workdir,),
            read_only=tuple(self.read_only_paths()),
        )
        prepared = ctx.launcher.prepare(described)
        head = prepared.argv[
            :1
        ]  # up to bubblewrap (a root runner's nsenter into the attempt's network first)
        for i, arg in enumerate(prepared.argv[:3]):
            if Path(arg).name == "bwrap":
                head = prepared.argv[: i + 1]
        ctx.log.line(
            f"[ctbench] sandbox {getattr(ctx.launcher, 'name', type(ctx.launcher).__name__)}: "
            f"{' '.join(head)} ... ({len(prepared.argv) - len(launch.argv)} launcher arguments)"
        )
        for note in prepared.notes:
            ctx.log.line(f"[ctbench] {note}")
        return list(prepared.argv), dict(prepared.env), Path(prepared.cwd), prepared.release

    async def _run(self, ctx: AgentContext, launch: HarnessLaunch, lines: list[str]) -> HarnessRun:
        """Run the CLI to its end; ``lines`` collects its standard output as it comes (an attempt cut
        short keeps what was printed)."""
        argv, env, cwd, release = self._prepare(ctx, launch)
        try:
            try:  # the attempt's caps (issue 25): processes, file size (its folder is sized by the runner)
                limits = SpawnCaps.open(ctx.launcher, ctx.workdir.name, pdeathsig=False)
            except ProcessStartError as exc:
                raise InfrastructureError(str(exc)) from None
            try:
                return await self._run_capped(ctx, launch, argv, env, cwd, limits, lines)
            finally:
                limits.close(ctx.log)
        finally:
            if release is not None:
                release()

    async def _run_capped(
        self,
        ctx: AgentContext,
        launch: HarnessLaunch,
        argv: list[str],
        env: dict[str, str],
        cwd: Path,
        limits: SpawnCaps,
        lines: list[str],
    ) -> HarnessRun:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=env,
                start_new_session=True,
                preexec_fn=limits.hook,
            )
        except OSError as exc:
            raise InfrastructureError(f"cannot start {launch.argv[0]}: {exc.strerror or exc}") from None
        leader_start = start_time(proc.pid)
        await asyncio.to_thread(record_group, ctx.workdir, proc.pid)  # for the next run's sweep
        ctx.log.line(f"[ctbench] pid {proc.pid}")
        seen: dict[int, int | None] = {}  # descendants met while the CLI ran: orphans among them end with it
        errors: list[str] = []
        assert proc.stdout is not None and proc.stderr is not None

        stdout_kept = _Budget(PIPE_KEEP)
        stderr_kept = _Budget(PIPE_KEEP)

        async def drain_stderr(stream: asyncio.StreamReader) -> None:
            async for raw in pipe_lines(stream):
                if stderr_kept.take(len(raw), ctx.log, "standard error"):
                    ctx.log.write(raw if raw.endswith(b"\n") else raw + b"\n")
                errors.append(raw[:STDERR_LINE].decode("utf-8", errors="replace"))
                del errors[:-STDERR_TAIL]

        async def watch_tree() -> None:  # a quiet CLI (Hermes -Q) prints nothing while it works
            while True:
                remember(seen, process_tree(proc.pid)[1:])
                await asyncio.sleep(TREE_POLL_S)

        stderr_task = asyncio.create_task(drain_stderr(proc.stderr))
        watcher = asyncio.create_task(watch_tree())
        try:
            async for raw in pipe_lines(proc.stdout):
                remember(seen, process_tree(proc.pid)[1:])
                if self.keep_line(raw) and stdout_kept.take(len(raw), ctx.log, "standard output"):
                    ctx.log.write(raw if raw.endswith(b"\n") else raw + b"\n")
                    lines.append(raw.decode("utf-8", errors="replace"))
            returncode = await proc.wait()
            watcher.cancel()
            await stderr_task
        except BaseException:  # the runner's timeout or an interrupt: nothing may outlive the attempt
            watcher.cancel()
            tree = process_tree(proc.pid) + adopted(seen)
            await asyncio.shield(self._end(proc, tree, seen, leader_start))
            stderr_task.cancel()
            ctx.log.line(f"[ctbench] {len(tree)} process(es) ended by the runner (timeout or interrupt)")
            raise
        await self._end(proc, [proc.pid, *adopted(seen)], seen, leader_start)
        return HarnessRun(returncode, lines, errors)

    @staticmethod
    async def _end(
        proc: asyncio.subprocess.Process,
        tree: list[int],
        seen: dict[int, int | None],
        leader_start: int | None,
    ) -> None:
        remember(seen, tree)
        kill_all(tree[1:], seen)  # descendants in other process groups (MCP servers of some CLIs)
        await end_process_group(proc, proc.pid, grace_s=1.0, leader_start=leader_start)
        kill_all(tree[1:], seen)

    # ----------------------------------------------------------------- shared verdicts

    @staticmethod
    def crashed(name: str, run: HarnessRun, *, worked: bool, detail: str = "") -> Exception:
        """The error for a non-zero exit: before any model call it is the harness's, else the agent's."""
        why = (
            f"killed by signal {-run.returncode}"
            if run.returncode < 0
            else f"exited with status {run.returncode}"
        )
        text = f"{name} {why}" + (f": {visible(detail)}" if detail else "")  # inert on a terminal
        return AgentError(text) if worked else InfrastructureError(text + " (before its first model call)")


__all__ = [
    "Availability",
    "HarnessAgent",
    "HarnessOptions",
    "HarnessLaunch",
    "file_tail",
    "HarnessRun",
    "process_tree",
    "toml_str",
    "with_v1",
    "without_v1",
]
