"""Start an external agent process, stream its output to the attempt's log, end its whole tree.

Every adapter that runs a program (the ``command`` agent, the Codex / Claude Code / ... harness
adapters) needs the same four guarantees, so they live here once:

1. **Nothing outlives the attempt.** The child leads a new session and process group; when the
   attempt is cancelled (timeout, Ctrl-C) the group gets SIGTERM, then SIGKILL after a grace
   period, and :func:`run_agent_process` returns or raises only once no member is left.
2. **Nothing outlives the runner.** Sandboxed, ``bwrap --die-with-parent`` takes the whole PID
   namespace down with the runner. Unsandboxed, the child gets ``PR_SET_PDEATHSIG`` (SIGKILL when
   the runner dies), and each attempt records its process group in an ownership record beside its
   scratch folder (never in it: the agent can write there), so the next run kills what a SIGKILLed runner left behind and removes the folder
   (:func:`clean_stale_attempts`).
3. **Output is never lost or blocking.** Standard output goes to a file, standard error to the
   log's file descriptor - never a pipe a chatty agent could fill.
4. **The sandbox is applied uniformly.** The caller describes the process as a :class:`Launch`
   (argv, workspace, the environment the adapter sets, extra folders) and the run's
   :class:`~ctbench.evaluate.sandbox.Launcher` turns it into what actually runs.

Typical adapter code::

    scratch = new_attempt_dir(ctx.task_id)                        # or the engine's per-attempt folder
    launch = Launch(argv=[...], workspace=scratch / "workspace", env={"OPENAI_BASE_URL": ...},
                    read_write=(scratch / "io",), read_only=(harness_install_dir,))
    code = await run_agent_process(launch, log=ctx.log, launcher=ctx.launcher,
                                   stdin=prompt_file, stdout=scratch / "io" / "stdout.txt")
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ctbench.evaluate import limits as caps
from ctbench.evaluate.agents import held as holds

if TYPE_CHECKING:
    from ctbench.evaluate.limits import AttemptCgroup, HostLimits

TERM_GRACE_S = 2.0
"""Seconds between SIGTERM and SIGKILL to the process group."""
GROUP_GONE_WAIT_S = 10.0
"""How long to wait for killed group members to be reaped before giving up (they are SIGKILLed)."""
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
ATTEMPT_PREFIX = "ctbench-ws-"
"""Scratch folders of external agents in the temp folder (``attempt.WORKSPACE_PREFIX``); a later
run kills the process groups recorded in the stale ones and removes them."""
OWNER_SUFFIX = ".owner.json"
"""A runner's temp folder ``F`` has its ownership record in ``F.owner.json`` beside it (:func:`owner_record`)."""
OWNER_MAX = 64 * 1024
STALE_PREFIXES = (ATTEMPT_PREFIX, "ctbench-run-", "ctbench-net-")
"""Temp folders a runner owns (workspaces; the replay socket's folder; the loopback relays')."""


class LogSink(Protocol):
    """Where the process's standard error and the adapter's notes go (an ``AgentLog``)."""

    def fileno(self) -> int: ...

    def line(self, text: str) -> None: ...


class ProcessStartError(Exception):
    """The program could not be started. ``infrastructure`` says whether the machine (fork/exec
    limits) rather than the agent's command line is to blame."""

    def __init__(self, message: str, *, infrastructure: bool) -> None:
        super().__init__(message)
        self.infrastructure = infrastructure


@dataclass(frozen=True)
class Launch:
    """One agent process, described independently of any sandbox.

    ``workspace`` is the fresh folder the agent works in (its working directory and, unless
    ``home`` is given, its ``HOME``); ``env`` holds only what the adapter sets - a sandboxed launcher
    adds a small allowlist of the runner's environment, an unsandboxed one the whole of it.
    ``read_write`` / ``read_only`` are extra folders or files the program needs (the attempt's own
    I/O folder; a harness install), ``unix_sockets`` socket files it must reach (the replay), and
    ``secret_paths`` folders that must never be visible to it (the task set, the run folder): a
    launcher refuses to mount anything inside them and drops environment values that name them.
    """

    argv: Sequence[str]
    workspace: Path
    env: Mapping[str, str] = field(default_factory=dict)
    home: Path | None = None
    read_write: Sequence[Path] = ()
    read_only: Sequence[Path] = ()
    unix_sockets: Sequence[Path] = ()
    secret_paths: Sequence[Path] = ()


@dataclass(frozen=True)
class Prepared:
    """What a launcher hands to ``exec``: the final argv, environment and working directory.

    ``pdeathsig`` asks for ``PR_SET_PDEATHSIG`` in the child (unsandboxed: the child must die with
    the runner); ``notes`` are lines for the attempt's log (what was dropped from the environment);
    ``release``, when set, is called once the process tree has ended (what the launcher holds for
    this attempt alone: a root runner's network namespace and its listening sockets).

    ``argv`` runs as it is (the harness adapters start it so). :func:`run_agent_process` knows two
    shortcuts: ``bwrap_at``, where bubblewrap's command line begins in ``argv``, lets it start the
    sandbox held (:mod:`ctbench.evaluate.agents.held`: no ``fork`` of the runner); and ``enter``
    puts the calling thread where the items before ``bwrap_at`` (``nsenter --net=...``) would have
    put the process, so ``argv[bwrap_at:]`` is started from there without that extra program.
    """

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    pdeathsig: bool = False
    notes: tuple[str, ...] = ()
    release: Callable[[], None] | None = None
    bwrap_at: int | None = None
    enter: Callable[[], contextlib.AbstractContextManager[None]] | None = None


class Launcher(Protocol):
    """Turns a :class:`Launch` into the command that really runs (:mod:`ctbench.evaluate.sandbox`
    holds the implementations: ``NoSandbox`` and ``BwrapSandbox``)."""

    name: str
    """``bwrap`` or ``none``: what run.yaml and the reports record."""
    sandboxed: bool

    def prepare(self, launch: Launch) -> Prepared: ...

    def close(self) -> None: ...


def unsandboxed(launch: Launch) -> Prepared:
    """The launch as it is: the runner's environment (less ``PWD``/``OLDPWD``) plus the adapter's,
    and a parent-death signal so the child still dies with the runner."""
    env = {k: v for k, v in os.environ.items() if k not in ("PWD", "OLDPWD")}
    env.update(launch.env)
    if launch.home is not None:
        env["HOME"] = str(launch.home)
    return Prepared(argv=list(launch.argv), env=env, cwd=launch.workspace, pdeathsig=True)


def _pdeathsig_hook() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child SIGKILLed when the runner dies (Linux), or None.

    The C function is looked up here, in the parent: between fork and exec the child of a
    threaded process must not load libraries (a lock another thread held would never be released).
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the runner died between fork and prctl
            os._exit(137)

    return hook


@dataclass
class SpawnCaps:
    """One process tree's caps: its pids cgroup (if the host has one) and the hook that applies them.

    ``hook`` runs in the child between ``fork`` and ``exec`` (with the parent-death signal when
    asked); ``close`` reports how often the process cap refused a fork and removes the cgroup.
    """

    hook: Callable[[], None] | None = None
    cgroup: AttemptCgroup | None = None
    file_size: int | None = None
    """Held (:meth:`apply`): the file-size cap to give the held processes."""

    @classmethod
    def open(cls, launcher: Any, label: str, *, pdeathsig: bool, held: bool = False) -> SpawnCaps:
        """``held``: no hook - the caps are applied from outside (:meth:`apply`) to a sandbox started
        held (:mod:`ctbench.evaluate.agents.held`), which dies with the runner on its own."""
        host: HostLimits | None = getattr(launcher, "limits", None)
        cgroup = None
        limit_hook = None
        if host is not None:
            if host.pids_root is not None and host.limits.procs is not None:
                safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)[:40]
                try:
                    cgroup = caps.AttemptCgroup.create(
                        host.pids_root, f"{owner_tag()}{safe}", host.limits.procs
                    )
                except OSError as exc:
                    raise ProcessStartError(
                        f"cannot make the attempt's pids cgroup: {exc.strerror or exc}", infrastructure=True
                    ) from None
            if held:
                return cls(None, cgroup, host.limits.file_size)
            limit_hook = caps.child_hook(host.limits, cgroup)
        if held:
            return cls(None, cgroup)
        death = _pdeathsig_hook() if pdeathsig else None
        if death is None or limit_hook is None:
            return cls(death or limit_hook, cgroup)
        first, then = limit_hook, death

        def both() -> None:
            first()
            then()

        return cls(both, cgroup)

    def apply(self, pids: Sequence[int]) -> None:
        """Put held processes under the caps: into the cgroup, under the file-size limit (raises
        OSError; the caller then kills them: nothing of the agent has run yet)."""
        for pid in pids:
            if self.cgroup is not None:
                fd = os.open(self.cgroup.procs_file, os.O_WRONLY)
                try:
                    os.write(fd, str(pid).encode())
                finally:
                    os.close(fd)
            if self.file_size is not None:
                resource.prlimit(pid, resource.RLIMIT_FSIZE, (self.file_size, self.file_size))

    def close(self, log: LogSink | None = None) -> None:
        if self.cgroup is None:
            return
        refused = self.cgroup.refused()
        if refused and log is not None:
            log.line(f"[ctbench] process cap ({self.cgroup.limit}) reached: {refused} fork(s) refused")
        self.cgroup.remove()
        self.cgroup = None


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed identity; it still exists
        return True
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_is_ours(pgid: int, leader_start: int | None) -> bool:
    """Whether process group ``pgid`` is still the one whose leader started at ``leader_start``.

    Once its leader is reaped, a group's number is free again unless members remain (the kernel
    gives no new process the id of a group that still has members), and on a busy machine a new
    process - another attempt's MCP server in a group of its own - may take it. A live process with
    that pid is the leader only if its start time is the one noted (None: not noted, trusted).
    """
    now = start_time(pgid)
    if now is not None:
        return leader_start is None or now == leader_start
    return _group_alive(pgid)


def _signal_our_group(pgid: int, leader_start: int | None, sig: signal.Signals) -> None:
    if group_is_ours(pgid, leader_start):
        _signal_group(pgid, sig)


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


class Waitable(Protocol):
    """A started child: ``asyncio.subprocess.Process`` or :class:`Child`."""

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


class Child:
    """A child started with ``subprocess.Popen`` (in a thread), awaited without a thread: the event
    loop watches a pidfd of it (Linux 5.3+; else a thread waits)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        if (code := self._popen.poll()) is not None:
            return code
        try:
            fd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            return await asyncio.to_thread(self._popen.wait)
        loop = asyncio.get_running_loop()
        exited: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            if not exited.done():
                exited.set_result(None)

        loop.add_reader(fd, readable)
        try:
            if self._popen.poll() is None:
                await exited
        finally:
            loop.remove_reader(fd)
            os.close(fd)
        return self._popen.wait()


async def end_process_group(
    proc: Waitable, pgid: int, grace_s: float = TERM_GRACE_S, *, leader_start: int | None
) -> None:
    """SIGTERM the group, SIGKILL it after ``grace_s``, and wait until no member is left.

    ``leader_start`` (:func:`start_time` of the leader, noted when it started) keeps every signal
    and every wait to this group: after the leader is reaped its number may already lead another.
    """
    if proc.returncode is None:
        _signal_our_group(pgid, leader_start, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), grace_s)
        except TimeoutError:
            pass
    _signal_our_group(pgid, leader_start, signal.SIGKILL)
    if proc.returncode is None:
        await proc.wait()
    deadline = time.monotonic() + GROUP_GONE_WAIT_S
    while group_is_ours(pgid, leader_start) and time.monotonic() < deadline:
        _signal_our_group(pgid, leader_start, signal.SIGKILL)
        if group_is_ours(pgid, leader_start):  # the leader is reaped; only adopted orphans are left
            _reap_group(pgid)
        if group_is_ours(pgid, leader_start):
            await asyncio.sleep(0.01)


# --------------------------------------------------------------------------- scratch folders


def start_time(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), to tell a reused pid apart."""
    try:  # one read, no Python file object: called several times for every attempt
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
        try:
            stat = os.read(fd, 4096).decode(errors="replace")
        finally:
            os.close(fd)
    except OSError:
        return None
    try:
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


def owner_tag() -> str:
    """``o<pid>.<start>-``: names this runner in a scratch folder's name, so another run's sweep can tell
    a folder still being set up (no process has it as cwd yet, no ownership record yet) from one a dead run
    left, without writing a marker file into the agent's workspace."""
    pid = os.getpid()
    try:
        return _owner_tag_of(pid)
    except LookupError:
        return f"o{pid}.0-"


@functools.lru_cache(maxsize=4)
def _owner_tag_of(pid: int) -> str:
    """A process's start time never changes: read once per pid, not once per attempt (a forked
    process has a pid of its own, so it reads its own)."""
    start = start_time(pid)
    if start is None:  # not cached: a later call reads again
        raise LookupError(pid)
    return f"o{pid}.{start}-"


def owner_alive(name: str) -> bool | None:
    """Whether the runner named in a scratch folder's name still runs (None: the name has no tag)."""
    for part in name.split("-"):
        if part.startswith("o") and "." in part:
            pid, _, start = part[1:].partition(".")
            if pid.isdigit() and start.isdigit():
                return int(pid) == os.getpid() or _alive(int(pid), int(start) or None)
    return None


def new_attempt_dir(label: str, *, root: Path | None = None) -> Path:
    """A fresh private scratch folder for one attempt, owned by this runner process.

    Its ownership record (:func:`owner_record`) names the runner (pid and start time), so :func:`clean_stale_attempts` in a
    later run can tell a folder whose runner died from one a live run is using.
    """
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)[:40]
    # the runner in the name too: between mkdtemp and the record, another run's sweep must see whose it is
    path = Path(tempfile.mkdtemp(prefix=f"{ATTEMPT_PREFIX}{safe}-{owner_tag()}", dir=root))
    _write_owner(path, [])
    return path


SOCKET_DIR_MAX = 64
"""Longest folder that still leaves room for a socket name (a Unix socket path is at most 107 bytes)."""
SHORT_TMP = Path("/tmp")


def socket_state_dir(prefix: str) -> Path:
    """A fresh runner-owned temp folder short enough to hold Unix sockets (claimed, like an attempt's).

    The temp folder may be long (pytest's, a deep ``$TMPDIR``): a socket under it would not bind, so
    the folder goes to ``/tmp`` instead, which :func:`clean_stale_attempts` scans as well.
    """
    root = Path(tempfile.gettempdir())
    if len(str(root)) + len(prefix) + 9 > SOCKET_DIR_MAX and SHORT_TMP.is_dir():
        root = SHORT_TMP
    return claim(Path(tempfile.mkdtemp(prefix=prefix, dir=root)))


def claim(path: Path) -> Path:
    """Mark a runner's temp folder as this process's, for :func:`clean_stale_attempts` (returns it)."""
    _write_owner(path, [])
    return path


def owner_record(folder: Path) -> Path:
    """Where the ownership record of a runner's temp folder is kept: beside the folder, never in it.

    An agent may write anywhere in its attempt folder (a harness adapter mounts the whole folder
    writable), so a record in it could name any process group for the next run's sweep to kill; the
    temp folder around it is the runner's alone (the sandbox shows the agent only its own folders).
    """
    return folder.with_name(folder.name + OWNER_SUFFIX)


def release(folder: Path) -> None:
    """Remove a runner's temp folder (its tmpfs first, if it has one) and its ownership record."""
    caps.unmount(folder)
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        owner_record(folder).unlink()


def _write_owner(path: Path, groups: list[list[int]]) -> None:
    pid = os.getpid()
    data = {"runner_pid": pid, "runner_start": start_time(pid), "groups": groups}
    record = owner_record(path)
    tmp = record.with_name(f".{record.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data))
    tmp.replace(record)


def _load_owner(record: Path) -> dict[str, Any] | None:
    """A record this user wrote (a regular file, no link, small), or None."""
    try:
        fd = os.open(record, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_size > OWNER_MAX:
            return None
        data = json.loads(os.read(fd, OWNER_MAX))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    return data if isinstance(data, dict) else None


def record_group(attempt_dir: Path, pid: int) -> None:
    """Note a started process group (leader pid = pgid) and its leader's start time in the attempt
    folder's ownership record (:func:`owner_record`)."""
    start = start_time(pid)
    if start is None:  # gone already: nothing to sweep
        return
    data = _load_owner(owner_record(attempt_dir)) or {}
    groups = [g for g in data.get("groups", []) if isinstance(g, list)]
    groups.append([pid, start])
    _write_owner(attempt_dir, groups)


def _alive(pid: int, start: int | None) -> bool:
    now = start_time(pid)
    return now is not None and (start is None or now == start)


def _group_of(pid: int) -> int | None:
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
        return int(stat_line.rsplit(")", 1)[1].split()[2])
    except (OSError, IndexError, ValueError):
        return None


def recorded_group_lives(pgid: int, start: int) -> bool:
    """Whether the process group recorded as (``pgid``, leader ``start``) still has members.

    The leader counts only with the start time recorded at spawn (a reused pid is another process).
    When the leader is gone (a runner's SIGKILL took it, its children live on), the group number
    cannot have been given to another group while members remain: those started after the leader
    are the recorded group's.
    """
    now = start_time(pgid)
    if now is not None:
        return now == start
    for entry in Path("/proc").glob("[0-9]*"):
        pid = int(entry.name)
        if _group_of(pid) == pgid and (start_time(pid) or 0) >= start:
            return True
    return False


def clean_stale_attempts(root: Path | None = None) -> list[Path]:
    """Kill the process groups and remove the temp folders that dead runners left behind.

    Only the runner's own records are read (:func:`owner_record`: beside the folders named as in
    :data:`STALE_PREFIXES`, written by this user, never a file inside a folder an agent could write).
    A record whose runner still runs is left alone; a group is killed only when
    :func:`recorded_group_lives` says it is still the one recorded. Returns the folders removed.
    """
    base = Path(root) if root is not None else Path(tempfile.gettempdir())
    removed: list[Path] = []
    try:
        records = [
            p for p in base.iterdir() if p.name.startswith(STALE_PREFIXES) and p.name.endswith(OWNER_SUFFIX)
        ]
    except OSError:
        return removed
    for record in records:
        data = _load_owner(record)
        if data is None:
            continue
        try:
            runner_pid, runner_start = int(data["runner_pid"]), data.get("runner_start")
        except (KeyError, TypeError, ValueError):
            continue
        if runner_pid == os.getpid() or _alive(runner_pid, runner_start):
            continue
        for group in data.get("groups", []):
            with contextlib.suppress(ValueError, TypeError, IndexError):
                pgid, start = int(group[0]), int(group[1])
                if pgid > 1 and start > 0 and recorded_group_lives(pgid, start):
                    _signal_group(pgid, signal.SIGKILL)
        folder = record.with_name(record.name[: -len(OWNER_SUFFIX)])
        release(folder)
        removed.append(folder)
    return removed


def kill_orphaned_holds(proc: Path = Path("/proc")) -> list[int]:
    """Kill the held sandboxes (:mod:`.held`) whose runner died before letting them go.

    A held process reads its block before bubblewrap's ``--die-with-parent`` reaches it, and holds
    the block's write end itself (so it fails closed): when the runner dies in that window the outer
    bubblewrap dies with it but the held process waits forever, inert, keeping its namespaces and
    mounts. ``test_sigkill_at_any_moment`` left three in one CI run. Such a process is found by its
    command line (bubblewrap with ``--block-fd``, naming a scratch folder whose owner tag names a
    runner no longer running), is this user's, and is killed. Returns the pids killed.
    """
    killed: list[int] = []
    if os.geteuid() != 0:  # only a root runner starts held (holds.usable): no /proc walk for the others
        return killed
    try:
        entries = [e for e in os.scandir(proc) if e.name.isdigit()]
    except OSError:
        return killed
    me = os.geteuid()
    for entry in entries:
        try:
            if entry.stat().st_uid != me:
                continue
            argv = (Path(entry.path) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not argv or not argv[0].endswith(b"bwrap") or b"--block-fd" not in argv:
            continue
        owners = {
            owner_alive(part)
            for arg in argv
            for part in os.fsdecode(arg).split("/")
            if part.startswith(ATTEMPT_PREFIX)
        }
        if False in owners and True not in owners:
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
    return killed


# --------------------------------------------------------------------------- running


async def run_agent_process(
    launch: Launch,
    *,
    log: LogSink,
    launcher: Launcher | None = None,
    stdin: Path | None = None,
    stdout: Path | None = None,
    attempt_dir: Path | None = None,
    grace_s: float = TERM_GRACE_S,
    admit: Callable[[], Awaitable[None]] | None = None,
) -> int:
    """Run ``launch`` to completion and return its exit status (negative: killed by that signal).

    Standard input comes from ``stdin`` (else /dev/null), standard output goes to the file
    ``stdout`` (else the log), standard error to the log. On cancellation the whole process group
    is ended (SIGTERM, SIGKILL after ``grace_s``) before ``CancelledError`` propagates; after a
    normal exit, members the agent left running are killed too. ``attempt_dir`` (from
    :func:`new_attempt_dir`) gets the group recorded for the next run's clean-up. ``admit`` (the
    attempt's ``ctx.admit``) is awaited before anything of the agent runs: a sandbox started held
    is made, capped and held while it waits, so its set-up overlaps the running attempts'; any other
    launch waits before it starts. Raises :class:`ProcessStartError` when the program cannot be
    started.
    """
    label = (attempt_dir or launch.workspace).name

    def set_up() -> tuple[Prepared, SpawnCaps]:
        prepared = launcher.prepare(launch) if launcher is not None else unsandboxed(launch)
        try:
            held = holds.usable(prepared.bwrap_at)
            return prepared, SpawnCaps.open(launcher, label, pdeathsig=prepared.pdeathsig, held=held)
        except BaseException:
            if prepared.release is not None:
                prepared.release()
            raise

    # in a thread: a sandbox's mounts are worked out with a few hundred stat calls and the cgroup is
    # made, which 32 attempts starting together must not do in the event loop one after another
    prepared, limits = await asyncio.to_thread(set_up)
    try:
        for note in prepared.notes:
            log.line(f"[ctbench] {note}")
        try:
            return await _run_prepared(prepared, limits, log, stdin, stdout, attempt_dir, grace_s, admit)
        finally:  # in a thread too: the cgroup may be busy for a moment (polled) after the last exit
            await asyncio.shield(asyncio.to_thread(limits.close, log))
    finally:
        if prepared.release is not None:
            prepared.release()


async def _run_prepared(
    prepared: Prepared,
    limits: SpawnCaps,
    log: LogSink,
    stdin: Path | None,
    stdout: Path | None,
    attempt_dir: Path | None,
    grace_s: float,
    admit: Callable[[], Awaitable[None]] | None,
) -> int:
    will_hold = limits.hook is None and holds.usable(prepared.bwrap_at)
    if admit is not None and not will_hold:
        await admit()  # nothing can wait half-started: the place first, then the start

    def spawn() -> tuple[subprocess.Popen[bytes], holds.Hold | None]:
        """The child, started; when held, capped and still held (the second item: its hold)."""
        stdin_fh = open(stdin, "rb") if stdin is not None else open(os.devnull, "rb")  # noqa: SIM115
        stdout_fh = open(stdout, "wb") if stdout is not None else None  # noqa: SIM115
        argv, at = prepared.argv, prepared.bwrap_at
        enter: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext
        if at is not None and prepared.enter is not None:
            argv, at, enter = argv[at:], 0, prepared.enter  # the thread enters, not nsenter
        hold = holds.Hold.open() if will_hold and at is not None else None
        try:
            if hold is not None and at is not None:
                argv = hold.argv(argv, at)
            with enter():
                popen = subprocess.Popen(
                    argv,
                    stdin=stdin_fh,
                    stdout=stdout_fh if stdout_fh is not None else log.fileno(),
                    stderr=log.fileno(),
                    cwd=prepared.cwd,
                    env=prepared.env,
                    start_new_session=True,
                    preexec_fn=limits.hook,  # None when held: Python then starts it with vfork
                    pass_fds=hold.pass_fds if hold is not None else (),
                )
            if hold is not None:
                hold.started()
                if not _cap_held(hold, popen.pid, limits):  # bubblewrap ended before making it
                    hold.close()
                    hold = None
            return popen, hold
        except BaseException:
            if hold is not None:
                hold.close()
            raise
        finally:
            stdin_fh.close()
            if stdout_fh is not None:
                stdout_fh.close()

    # fork and exec in a thread: the parent waits there until the child has run its set-up and
    # exec'd, which on a busy machine takes tens of ms - 32 attempts starting together must not
    # queue behind each other in the event loop
    started = asyncio.ensure_future(asyncio.to_thread(spawn))
    try:
        popen, hold = await asyncio.shield(started)
    except holds.HoldError as exc:  # the caps could not be applied: nothing ran uncapped
        raise ProcessStartError(f"cannot apply the attempt's caps: {exc}", infrastructure=True) from None
    except FileNotFoundError:
        raise ProcessStartError(f"{prepared.argv[0]}: command not found", infrastructure=False) from None
    except PermissionError:
        raise ProcessStartError(f"{prepared.argv[0]}: permission denied", infrastructure=False) from None
    except OSError as exc:  # fork/exec resource limits: the machine, not the agent
        raise ProcessStartError(
            f"cannot start {prepared.argv[0]}: {exc.strerror or exc}", infrastructure=True
        ) from None
    except subprocess.SubprocessError as exc:  # the caps could not be applied: nothing ran uncapped
        raise ProcessStartError(f"cannot apply the attempt's caps: {exc}", infrastructure=True) from None
    except asyncio.CancelledError:  # cancelled while starting: what started is ended before leaving
        with contextlib.suppress(Exception):
            late, late_hold = await started
            if late_hold is not None:
                late_hold.close()
            child = Child(late)
            await asyncio.shield(
                end_process_group(child, child.pid, grace_s, leader_start=start_time(child.pid))
            )
        raise
    proc = Child(popen)
    pgid = proc.pid  # start_new_session: the child leads its own group
    leader_start = start_time(pgid)
    if attempt_dir is not None:
        await asyncio.to_thread(record_group, attempt_dir, proc.pid)
    if hold is not None:
        await _let_go(hold, proc, pgid, leader_start, admit)
    log.line(f"[ctbench] pid {proc.pid}, process group {pgid}")
    try:
        returncode = await proc.wait()
    except BaseException:  # cancelled by the runner's timeout, or the run is interrupted
        await asyncio.shield(end_process_group(proc, pgid, grace_s, leader_start=leader_start))
        log.line("[ctbench] process group ended by the runner (timeout or interrupt)")
        raise
    await end_process_group(proc, pgid, grace_s=0.0, leader_start=leader_start)  # leftovers it started
    return returncode


async def _let_go(
    hold: holds.Hold,
    proc: Child,
    pgid: int,
    leader_start: int | None,
    admit: Callable[[], Awaitable[None]] | None,
) -> None:
    """Let a capped, held sandbox go on once the attempt has its place (``admit``).

    Cancelled while it waits (the run is interrupted), or unable to let it go, the held sandbox is
    killed - nothing of the agent ran - and reaped before this returns or raises.
    """
    try:
        try:
            if admit is not None:
                await admit()
            hold.let_go()
        except OSError as exc:  # the held process is gone: the machine's trouble, retried
            raise ProcessStartError(
                f"cannot let the held sandbox go: {exc.strerror or exc}", infrastructure=True
            ) from None
    except BaseException:
        await asyncio.shield(end_process_group(proc, pgid, 0.0, leader_start=leader_start))
        raise
    finally:
        hold.close()


def _cap_held(hold: holds.Hold, pid: int, limits: SpawnCaps) -> bool:
    """Cap a sandbox started held (bubblewrap ``pid`` and the process it holds); False when
    bubblewrap ended before making its process (nothing to cap: its exit status and message say why).

    On any failure both are killed before anything of the agent ran, and :class:`~ctbench.evaluate.agents.held.HoldError`
    is raised.
    """
    try:
        inner = hold.held_pid()
    except OSError as exc:
        holds.kill_held(pid)
        raise holds.HoldError(exc.errno, str(exc)) from None
    if inner is None:
        return False
    try:
        limits.apply([pid, inner])
    except OSError as exc:
        holds.kill_held(inner, pid)
        raise holds.HoldError(exc.errno, f"{exc.strerror or exc} (held sandbox killed)") from None
    return True


__all__ = [
    "Launch",
    "Launcher",
    "LogSink",
    "Prepared",
    "ProcessStartError",
    "Child",
    "SpawnCaps",
    "TERM_GRACE_S",
    "become_subreaper",
    "claim",
    "clean_stale_attempts",
    "kill_orphaned_holds",
    "socket_state_dir",
    "start_time",
    "end_process_group",
    "new_attempt_dir",
    "owner_record",
    "record_group",
    "recorded_group_lives",
    "release",
    "run_agent_process",
    "unsandboxed",
]
