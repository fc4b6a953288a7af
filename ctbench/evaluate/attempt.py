"""One attempt of one agent on one task: :func:`run_attempt` turns a work unit into an outcome.

This is the only place that knows the attempt lifecycle (issue 12): open a fresh replay session,
grant it on the runner's server when the agent lives in another process, give the agent a private
workspace and an in-memory log, run it under the timeout, and hand everything back as an
:class:`~ctbench.evaluate.work.AttemptOutcome`. It never raises for an agent's or a backend's trouble
and never touches a run folder, so it runs the same in the runner's event loop, in a subprocess, or
on a Ray worker. What it needs from where it runs is an :class:`AttemptEnv`: the replay engine, the
agent instance and (for external agents) the server. :class:`LocalEnv` is the one built from a task
set on disk.

Classification (the result line's ``error_kind``): the task cannot be served -> ``task`` (its
definition is broken: never retried); the backend or harness failed -> ``infrastructure`` (retried by
the runner); the agent failed -> ``agent``; the clock ran out -> ``timeout``.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ctbench.errors import CtbError, TaskDefinitionError
from ctbench.evaluate.agents import (
    Agent,
    AgentContext,
    AgentError,
    AgentLog,
    AgentResult,
    InfrastructureError,
    make_agent,
)
from ctbench.evaluate.agents.agent_files import read_log
from ctbench.evaluate.agents.process import ATTEMPT_PREFIX, owner_alive, owner_tag, release
from ctbench.evaluate.limits import (
    folder_full,
    mount_tmpfs,
    remove_stale_cgroups,
    stale_cgroup_roots,
    unmount,
)
from ctbench.evaluate.runfolder import utc_now
from ctbench.evaluate.work import AgentSettings, AttemptOutcome, OutcomeKind, Usage, WorkUnit
from ctbench.replay.observation import Outcome

if TYPE_CHECKING:
    from ctbench.evaluate.model_tap import ModelTap, TapRoute
    from ctbench.evaluate.sandbox import Launcher
    from ctbench.evaluate.ssh_access import SshFrontEnd
    from ctbench.model import TaskSpec
    from ctbench.plugin_api.executor import Admission
    from ctbench.replay.engine import ReplayEngine
    from ctbench.replay.http_server import ServerHandle
    from ctbench.replay.session import Session
    from ctbench.store import TaskRef, TaskSet

WORKSPACE_PREFIX = ATTEMPT_PREFIX
"""Prefix of attempt workspaces in the temp folder (a later run removes those a killed run left)."""
LOG_PREFIX = "ctbench-log-"


class AttemptEnv(Protocol):
    """What an attempt needs from the process it runs in."""

    @property
    def agent(self) -> Agent: ...

    @property
    def server(self) -> ServerHandle | None: ...

    @property
    def launcher(self) -> Launcher | None: ...

    @property
    def ssh(self) -> SshFrontEnd | None: ...

    @property
    def model_tap(self) -> ModelTap | None: ...

    def open_session(self, unit: WorkUnit) -> Session: ...


class LocalEnv:
    """Attempts served from a task set on this machine: one engine, one agent, one server per run.

    ``start`` opens the agent's run-wide resources and, when its transport needs one, the HTTP server
    on 127.0.0.1; ``close`` releases both. Use it as an async context manager.
    """

    def __init__(
        self,
        task_set: TaskSet,
        settings: AgentSettings,
        *,
        agent: Agent | None = None,
        warm_tasks: Sequence[str] = (),
        loaded: Mapping[str, tuple[TaskRef, TaskSpec]] | None = None,
    ) -> None:
        """``loaded``: the (ref, agent-visible spec) of each task that the caller parsed already (the
        runner did, to select them), so neither the warm-up nor an attempt parses task.yaml again."""
        from ctbench.replay.engine import ReplayEngine

        self.task_set = task_set
        self.settings = settings
        self.engine: ReplayEngine = ReplayEngine(task_set)
        self._agent = agent
        self._server: ServerHandle | None = None
        self._launcher: Launcher | None = None
        self._ssh: SshFrontEnd | None = None
        self._tap: ModelTap | None = None
        self._state: Path | None = None
        self._warm = list(warm_tasks)
        self._loaded = dict(loaded or {})

    @property
    def agent(self) -> Agent:
        assert self._agent is not None, "start() first"
        return self._agent

    @property
    def server(self) -> ServerHandle | None:
        return self._server

    @property
    def launcher(self) -> Launcher | None:
        """How external agents are started (:mod:`ctbench.evaluate.sandbox`); None for in-process ones."""
        return self._launcher

    @property
    def ssh(self) -> SshFrontEnd | None:
        """The run's SSH front end (``--ssh``); None when agents get no SSH access."""
        return self._ssh

    @property
    def model_tap(self) -> ModelTap | None:
        """The run's model tap (:mod:`ctbench.evaluate.model_tap`) for agents that use one."""
        return self._tap

    async def start(self) -> None:
        if self._agent is None:
            self._agent = make_agent(self.settings.agent, self.settings, self.settings.args)
        if self.settings.ssh and not self.agent.needs_http:
            raise CtbError(
                f"--ssh: agent {self.settings.agent} runs inside the runner and logs into no device; "
                "SSH access is for agents that run as their own process (command, codex, ...)"
            )
        if self.settings.ssh and not self.agent.takes_ssh:
            raise CtbError(
                f"--ssh: agent {self.settings.agent} has no shell tool to log into devices with; "
                "run it without --ssh (it reaches the devices through the ctb tools)"
            )
        if self.settings.ssh and not getattr(self.agent, "shell_is_bounded", True):
            if self.settings.sandbox.mode == "none":
                raise CtbError(
                    f"--ssh: agent {self.settings.agent} gets a shell tool that runs any command, "
                    "and only the sandbox bounds it; run with --sandbox auto or bwrap"
                )
        await asyncio.to_thread(self._warm_up)
        if self.agent.needs_http:
            await asyncio.to_thread(self._start_external)
        await self.agent.open()

    def _start_external(self) -> None:
        """The runner-mode server (TCP on 127.0.0.1 and a Unix socket for sandboxes) and the launcher.

        Only the runner creates sessions on it, each reachable with its own token; the launcher
        refuses to start (``--sandbox auto|bwrap`` where bubblewrap cannot run) before any attempt.
        """
        from ctbench.evaluate.agents.process import socket_state_dir
        from ctbench.evaluate.model_tap import ModelTap
        from ctbench.evaluate.sandbox import make_launcher, secret_paths_for
        from ctbench.evaluate.ssh_access import SshFrontEnd
        from ctbench.replay.http_server import serve_in_thread

        self._state = socket_state_dir("ctbench-run-")
        sock = self._state / "replay.sock"
        try:
            # the MCP endpoints only for an agent that takes an MCP URL: the SDK's import alone
            # held up the first attempt of every run by seconds
            self._server = serve_in_thread(
                self.engine,
                "127.0.0.1",
                0,
                runner=True,
                unix_socket=sock,
                mcp=self.agent.transport == "mcp-http",
            )
            if self.settings.ssh:
                self._ssh = SshFrontEnd(self._server.registry.by_token)
                self._ssh.start()
            endpoints = [self.settings.base_url] if self.settings.base_url else []
            if self.agent.uses_model_tap and self.settings.base_url:
                try:
                    self._tap = ModelTap(self.settings.base_url).start()
                except ValueError as exc:
                    raise CtbError(f"--base-url: {exc}") from None
                endpoints.append(self._tap.url)
            self._launcher = make_launcher(
                self.settings.sandbox,
                replay_url=self._server.url,
                replay_socket=sock,
                ssh_url=self._ssh.url if self._ssh is not None else None,
                secret_paths=secret_paths_for(self.task_set.root),
                model_endpoints=endpoints,
            )
        except BaseException:
            self._stop_external()
            raise

    def _stop_external(self) -> None:
        if self._launcher is not None:
            self._launcher.close()
            self._launcher = None
        if self._tap is not None:
            self._tap.stop()
            self._tap = None
        if self._ssh is not None:
            self._ssh.stop()
            self._ssh = None
        if self._server is not None:
            self._server.stop()
            self._server = None
        if self._state is not None:
            release(self._state)
            self._state = None

    async def close(self) -> None:
        try:
            if self._agent is not None:
                await self._agent.close()
        finally:
            await asyncio.to_thread(self._stop_external)

    async def __aenter__(self) -> LocalEnv:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _warm_up(self) -> None:
        """Load every vendor dialect the tasks use before any clock starts, so the first task's
        latency is the agent's, not the parser's start-up."""
        seen: set[str] = set()
        networks: set[str] = set()
        for tid in self._warm:
            try:
                known = self._loaded.get(tid)
                spec = known[1] if known is not None else self.task_set.load_task(self.task_set.ref(tid))
                if spec.network in networks:
                    continue
                networks.add(spec.network)
                network = self.task_set.network(spec.network)
            except CtbError:
                continue  # the attempt will fail and be recorded as the task's fault
            for device in network.devices:
                if device.os and device.os not in seen:
                    seen.add(device.os)
                    try:
                        self.engine.dialect(device.os)
                    except Exception:  # an unknown CLI family surfaces on the task, with its name
                        pass

    def open_session(self, unit: WorkUnit) -> Session:
        try:
            return self.engine.open_session(unit.task_id, loaded=self._loaded.get(unit.task_id))
        except CtbError as exc:
            raise TaskDefinitionError(str(exc)) from None


# --------------------------------------------------------------------------- the attempt


@dataclass
class _Pieces:
    log: AgentLog
    log_dir: Path
    session: Session | None = None
    workdir: Path | None = None
    granted: bool = False
    route: TapRoute | None = None


def _open_log(unit: WorkUnit) -> _Pieces:
    """The agent's log goes to a private temp file (adapters hand its descriptor to child processes);
    its bytes travel back in the outcome and the file is removed."""
    log_dir = Path(tempfile.mkdtemp(prefix=f"{LOG_PREFIX}{owner_tag()}"))
    log = AgentLog(log_dir / "agent.log")
    s = unit.settings
    model = f", model {s.model}" if s.model else ""
    trial = f" trial {unit.trial}" if unit.trial > 1 else ""
    log.line(
        f"=== {unit.task_id}{trial} attempt {unit.attempt} at {utc_now().isoformat()} "
        f"(agent {s.agent}{model}) ==="
    )
    return _Pieces(log, log_dir)


def mcp_proxy_command(url: str, session_id: str) -> list[str]:
    """argv of the stdio MCP proxy an agent CLI starts for its ``ctb`` server (no task set needed).

    The session's token is not on the command line (any local user can read a process's argv):
    the adapter puts ``CTBENCH_REPLAY_TOKEN=<ctx.session_token>`` in the proxy's environment (the
    agent CLI's MCP server ``env``), or writes it to a file and adds ``--token-file PATH``. The URL
    works inside the sandbox too (``loopback`` carries its port to the runner's Unix socket)."""
    # KEY=VALUE: an id or URL that begins with "-" would otherwise be read as another option
    return [sys.executable, "-m", "ctbench.replay.cli", "mcp", f"--connect={url}", f"--session={session_id}"]


def _context(unit: WorkUnit, env: AttemptEnv, pieces: _Pieces, result: AgentResult) -> AgentContext:
    agent = env.agent
    server = env.server
    assert pieces.session is not None
    replay_url = mcp_url = None
    mcp_command = None
    token = None
    ssh = None
    if agent.needs_http:
        if server is None:
            raise InfrastructureError("the replay HTTP server is not running")
        pieces.workdir = Path(tempfile.mkdtemp(prefix=f"{WORKSPACE_PREFIX}{unit.task_id}-{owner_tag()}"))
        _size_folder(pieces.workdir, env.launcher, pieces.log)
        # the session is served to the one client holding its token, at its own MCP endpoint
        grant = server.grant(pieces.session)
        token, mcp_url = grant.token, grant.mcp_url
        pieces.granted = True
        replay_url = server.url
        mcp_command = mcp_proxy_command(server.url, pieces.session.id)
        if env.ssh is not None:
            ssh = env.ssh.access(token)
        tap = getattr(env, "model_tap", None)  # an environment of another kind may have none
        if agent.uses_model_tap and tap is not None:
            pieces.route = tap.open_route()
    return AgentContext(
        task_id=unit.task_id,
        family=unit.family,
        spec=None,
        prompt=unit.prompt,
        session=pieces.session,
        log=pieces.log,
        workdir=pieces.workdir or pieces.log_dir,
        options=unit.settings,
        attempt=unit.attempt,
        hidden=unit.gold if agent.needs_hidden else None,
        replay_url=replay_url,
        result=result,
        trial=unit.trial,
        agent_args=agent.args,
        session_token=token,
        mcp_url=mcp_url,
        mcp_command=mcp_command,
        launcher=env.launcher if agent.needs_http else None,
        ssh=ssh,
        model_route=pieces.route,
    )


def _size_folder(folder: Path, launcher: Launcher | None, log: AgentLog) -> None:
    """Make the attempt's folder a tmpfs of the run's disk cap where the runner may mount one, so an
    agent that fills it fills only its own (:mod:`ctbench.evaluate.limits`)."""
    host = getattr(launcher, "limits", None)
    if host is None or host.limits.disk is None or not host.can_mount:
        return
    try:
        mount_tmpfs(folder, host.limits.disk)
    except OSError as exc:  # the probe said it could: the machine's trouble
        raise InfrastructureError(
            f"runner: cannot mount the attempt's tmpfs: {exc.strerror or exc}"
        ) from None
    log.line(f"[ctbench] caps: {host.describe()}")


def _teardown(env: AttemptEnv, pieces: _Pieces) -> bytes:
    session = pieces.session
    if session is not None:
        server = env.server
        if pieces.granted and server is not None:
            try:
                server.revoke(session.id)
            except Exception:  # already reaped by the server
                session.close()
        else:
            session.close()
    if pieces.route is not None:
        pieces.route.close()
    if pieces.workdir is not None:
        release(pieces.workdir)  # the folder and its ownership record beside it
    pieces.log.close()
    # capped: the agent wrote to this log through its standard error, as much as it liked
    data = read_log(pieces.log_dir / "agent.log")
    shutil.rmtree(pieces.log_dir, ignore_errors=True)
    return data


def _usage(result: AgentResult) -> Usage:
    return Usage(
        rounds=result.rounds,
        rounds_kind=result.rounds_kind,
        input_tokens=result.input_tokens,
        cached_tokens=result.cached_tokens,
        output_tokens=result.output_tokens,
        cost_usd=result.cost_usd,
        model_reported=result.model_reported,
        model_reported_source=result.model_reported_source,
    )


async def run_attempt(
    unit: WorkUnit,
    env: AttemptEnv,
    *,
    clock: Callable[[], float] = time.monotonic,
    admission: Admission | None = None,
) -> AttemptOutcome:
    """Run exactly one attempt; every failure becomes an outcome (only cancellation propagates).

    File-system work (the log, the workspace) runs in threads so that 32 agents starting and finishing
    at once do not stall each other on a slow disk. ``admission`` (a staged executor's): the attempt
    sets up, then waits there for its running place - its agent's own process does, where the agent
    :attr:`~ctbench.plugin_api.agent.Agent.admits_itself`, once its sandbox is made and held. The
    wait counts neither against the time limit nor in the latency.
    """
    t0 = clock()
    gate = _Gate(admission, clock)
    result = AgentResult()
    try:
        pieces = await asyncio.to_thread(_open_log, unit)
    except OSError as exc:  # no room even for the log: the machine's trouble, retried
        return AttemptOutcome(
            unit=unit,
            kind="infrastructure",
            error=f"runner: cannot open the attempt's log: {exc.strerror or exc}",
            usage=_usage(result),
            harness_version=env.agent.harness_version,
            latency_s=clock() - t0,
        )
    kind: OutcomeKind = "ok"
    error: str | None = None
    try:
        try:
            pieces.session = await asyncio.to_thread(env.open_session, unit)
        except TaskDefinitionError as exc:
            kind, error = "task", f"the task cannot be served: {exc}"
        except Exception as exc:  # the backend could not serve this task
            kind, error = "infrastructure", f"replay session: {type(exc).__name__}: {exc}"
        if pieces.session is not None:
            kind, error, result = await _solve(unit, env, pieces, result, gate)
        if error:
            pieces.log.line(f"[ctbench] {kind}: {error}")
    finally:
        session = pieces.session
        trajectory = session.trajectory if session is not None else []
        answer = session.answer if session is not None else None
        # what the agent asked; a client's paging and width commands (outcome session) are not its work
        calls = sum(1 for r in trajectory if r.outcome is not Outcome.SESSION)
        log_bytes = await asyncio.shield(asyncio.to_thread(_teardown, env, pieces))
    if kind == "ok" and answer is not None:
        # One rule for every adapter: a submission through the replay tools is the answer, over
        # whatever the agent also returned, printed or wrote to a file (the last one counts).
        result.answer_text, result.answer_source = answer.answer, "submit"
    return AttemptOutcome(
        unit=unit,
        kind=kind,
        error=error,
        answer_text=result.answer_text if kind == "ok" else None,
        answer_source=result.answer_source if kind == "ok" else None,
        usage=_usage(result),
        harness_version=result.harness_version or env.agent.harness_version,
        latency_s=clock() - t0 - gate.waited,
        commands=calls,
        trajectory=trajectory,
        log=log_bytes,
        transcript=result.transcript,
        notes=list(result.notes),
    )


class _Gate:
    """An attempt's way through its :class:`~ctbench.plugin_api.executor.Admission`: the time limit
    is held while it waits for its place and starts afresh when it has one; the wait is measured."""

    def __init__(self, admission: Admission | None, clock: Callable[[], float]) -> None:
        self.admission = admission
        self.clock = clock
        self.waited = 0.0
        self.deadline: asyncio.Timeout | None = None
        self.timeout_s: float | None = None

    async def __call__(self) -> None:
        if self.admission is None or self.admission.entered:
            return
        t = self.clock()
        if self.deadline is not None:
            self.deadline.reschedule(None)  # waiting for a place is not the agent's time
        await self.admission()
        self.waited += self.clock() - t
        if self.deadline is not None and self.timeout_s is not None:
            self.deadline.reschedule(asyncio.get_running_loop().time() + self.timeout_s)


async def _solve(
    unit: WorkUnit, env: AttemptEnv, pieces: _Pieces, result: AgentResult, gate: _Gate
) -> tuple[OutcomeKind, str | None, AgentResult]:
    agent = env.agent
    try:
        ctx = await asyncio.to_thread(_context, unit, env, pieces, result)
    except InfrastructureError as exc:
        return "infrastructure", str(exc), result
    except OSError as exc:  # no room for the attempt's folder
        return "infrastructure", f"runner: cannot make the attempt's folder: {exc.strerror or exc}", result
    if agent.admits_itself and gate.admission is not None:
        ctx.admit = gate  # its process waits for its place once its sandbox is made
    else:
        await gate()
    timeout_s = unit.settings.timeout_s
    deadline = asyncio.timeout(timeout_s)
    gate.deadline, gate.timeout_s = deadline, timeout_s
    watch = _DiskWatch(pieces.workdir)
    try:
        async with deadline:
            returned = await agent.solve(ctx)
        if (full := folder_full(pieces.workdir)) is not None:  # it filled its own capped folder
            return "agent", f"the agent ran out of room: {full}", ctx.result
        return "ok", None, returned if returned is not None else ctx.result
    except TimeoutError:
        if deadline.expired():
            return "timeout", f"no answer within {timeout_s:g}s", ctx.result
        return "agent", "TimeoutError raised inside the agent", ctx.result
    except InfrastructureError as exc:
        return "infrastructure", str(exc), ctx.result
    except AgentError as exc:
        if (full := folder_full(pieces.workdir)) is not None:  # its own capped folder: its doing
            return "agent", f"{exc} (the agent ran out of room: {full})", ctx.result
        if (full := disk_full(pieces.workdir) or watch.seen) is not None:  # the machine's, not this agent's
            return "infrastructure", f"{full} ({exc})", ctx.result
        return "agent", str(exc), ctx.result
    except asyncio.CancelledError:
        raise
    except OSError as exc:
        if exc.errno in DISK_ERRORS:  # the runner's own write failed: retried, never the agent's fault
            return (
                "infrastructure",
                f"runner: {exc.strerror or exc} ({exc.filename or 'a temp file'})",
                ctx.result,
            )
        pieces.log.write(traceback.format_exc())
        return "agent", f"{type(exc).__name__}: {exc}", ctx.result
    except Exception as exc:  # an adapter bug or a replay refusal: the agent's failure, not ours
        pieces.log.write(traceback.format_exc())
        return "agent", f"{type(exc).__name__}: {exc}", ctx.result
    finally:
        watch.stop()


DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT)
DISK_FULL_BYTES = 1024 * 1024
"""Free space below which an attempt's failure is put down to the full disk rather than the agent."""


def disk_full(folder: Path | None) -> str | None:
    """``temp disk full ...`` when the file system of ``folder`` (the attempt's) has no room left.

    An agent that filled the shared temp disk makes honest attempts beside it fail to write their
    answer or log: their failure is the machine's (retried as infrastructure), not theirs.
    """
    if folder is None:
        return None
    try:
        st = os.statvfs(folder.parent)  # the temp disk, not the folder's own tmpfs (limits.folder_full)
    except OSError:
        return None
    free = st.f_bavail * st.f_frsize
    if free >= DISK_FULL_BYTES:
        return None
    return f"temp disk full ({free // 1024} KiB free on the file system of {folder.parent})"


class _DiskWatch:
    """Whether the shared temp disk was full at any time while the agent ran.

    An honest agent that failed to write because another filled the disk is judged after it exits;
    by then the filler may have ended and its folder gone, and a look at the disk only then would
    blame the honest one (the race ``tests/test_disk_full.py`` lost under load). So the disk is
    also looked at every :attr:`EVERY` seconds while the agent runs. A timer on the loop, not a
    task: an attempt shorter than the interval costs one timer and its cancellation.
    """

    EVERY = 0.2

    def __init__(self, workdir: Path | None) -> None:
        self.seen: str | None = None
        self._workdir = workdir
        self._timer = asyncio.get_running_loop().call_later(self.EVERY, self._look) if workdir else None

    def _look(self) -> None:
        self.seen = disk_full(self._workdir)
        if self.seen is None:  # seen once is enough; stop() cancels the next look
            self._timer = asyncio.get_running_loop().call_later(self.EVERY, self._look)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def sweep_stale_workspaces(max_age_s: float = 0.0) -> int:
    """Remove attempt workspaces and logs whose run died (SIGKILL leaves them in the temp folder).

    A folder whose name carries a live runner's tag (:func:`~ctbench.evaluate.agents.process.owner_tag`) is left alone, so two runs on
    one machine never remove each other's; an untagged one (an older ctbench) belongs to a live
    attempt while some process still has it as its working directory or a file in it open.
    """
    from ctbench.evaluate.agents.process import (
        SHORT_TMP,
        clean_stale_attempts,
        kill_orphaned_holds,
        owner_record,
    )

    tmp = Path(tempfile.gettempdir())
    kill_orphaned_holds()  # held sandboxes a dead runner never let go: inert, but never ending
    # first the processes: an agent a SIGKILLed runner left running still has its workspace as cwd
    clean_stale_attempts(tmp)
    if tmp != SHORT_TMP:  # where runner folders holding sockets go when the temp folder is too long
        clean_stale_attempts(SHORT_TMP)
    in_use = _cwds()
    removed = 0
    now = time.time()
    for path in list(tmp.glob(f"{WORKSPACE_PREFIX}*")) + list(tmp.glob(f"{LOG_PREFIX}*")):
        owner = owner_alive(path.name)
        if owner or owner_record(path).exists():  # a live runner's; recorded ones: clean_stale_attempts
            continue
        try:
            if not path.is_dir() or now - path.stat().st_mtime < max_age_s:
                continue
            resolved = path.resolve()
        except OSError:
            continue
        if owner is None and any(c == resolved or c.is_relative_to(resolved) for c in in_use):
            continue
        if owner is None and path.name.startswith(LOG_PREFIX) and _open_elsewhere(resolved):
            continue
        unmount(path)  # a sized attempt folder (limits.mount_tmpfs)
        shutil.rmtree(path, ignore_errors=True)
        removed += 1
    for root in stale_cgroup_roots():  # the pids cgroups of attempts whose runner died
        remove_stale_cgroups(root, lambda name: owner_alive(name) is False)
    return removed


def _cwds() -> list[Path]:
    out = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            out.append(Path(os.readlink(entry / "cwd")))
        except OSError:
            continue
    return out


def _open_elsewhere(folder: Path) -> bool:
    """Whether some live process holds a file in ``folder`` open (a running attempt's log)."""
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            for fd in fd_dir.iterdir():
                try:
                    if Path(os.readlink(fd)).is_relative_to(folder):
                        return True
                except OSError:
                    continue
        except OSError:
            continue
    return False


__all__ = [
    "AttemptEnv",
    "LocalEnv",
    "TaskDefinitionError",
    "WORKSPACE_PREFIX",
    "mcp_proxy_command",
    "run_attempt",
    "sweep_stale_workspaces",
]
