"""The Ray executor (issue 15): attempts of one run spread over the nodes of a Ray cluster.

``ctb-eval run --executor ray [--ray-address ADDR]`` (``pip install 'ctbench[ray]'``). With no address
(and no ``RAY_ADDRESS``) a local Ray instance is started for the run and stopped with it; with one, the
run joins that cluster.

How it is built, and why:

- **Attempt hosts.** Attempts run in a few asyncio Ray actors (:class:`AttemptHost`), each one serving
  ``attempts_per_host`` attempts at once from its own replay engine, agent instance and (for external
  agents) HTTP server on its node's 127.0.0.1 - the :class:`~ctbench.evaluate.attempt.LocalEnv` of the
  local executor, over a private copy of the agent-visible task files. Each attempt is one Ray actor
  task. A plain Ray task per attempt would need one worker process per concurrent attempt: on a
  2-core machine 32 of them ran 256 one-second attempts in 20-30 s where an event loop takes 8 s.
  Every host reserves ``attempts_per_host x cpus_per_attempt`` CPUs, so the cluster's CPUs bound the
  run as Ray's own accounting sees it; ``--concurrency`` bounds the attempts in flight.
- **The driver is the only writer.** A host returns an :class:`~ctbench.evaluate.work.AttemptOutcome`
  (answer, trajectory, log bytes) and never sees the run folder; the runner appends the line the
  moment the outcome arrives, so resume and SIGKILL safety are those of the local executor.
- **Workers never receive the gold.** The driver reads each task's agent-visible files - task.yaml,
  the recordings it lists, its network file, and the set's ctbench.yaml, taxonomy.yaml and dialect
  extensions - never hidden.yaml, and puts them in Ray's object store as content-addressed bundles
  (sha256 of the files): a task run by many trials, or a network shared by many tasks, is put once
  and materialised once per host. Only the oracle's units carry the gold (the runner's rule).
- **Faults.** A host that dies mid-attempt (its worker process or its node) turns every attempt it
  was running into an ``infrastructure`` outcome, which the runner retries under ``--retries``; the
  host is replaced and the retry runs on a live one. The hosts are owned by the driver's job, so when
  the driver dies (even by SIGKILL) Ray kills them: nothing of a dead run keeps running, and nothing
  could write its folder anyway. A cluster that cannot be reached, too small for the concurrency, or
  a node without ctbench or without what the agent needs, is one clear line at start naming the node.

Workers need ctbench (and, for an external agent, its CLI) installed at the driver's version: a
cluster image, or a ``runtime_env`` option (``{"pip": ["ctbench[ray]==X"]}``). An agent that is not
installed by name (a benchmark's or a test's own class) is shipped to the hosts by value.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctbench.errors import CtbError
from ctbench.evaluate.ray_address import check_rewrite, import_ray
from ctbench.isolation import visible_set_files, visible_task_files
from ctbench.plugin_api import (
    AgentSettings,
    AttemptOutcome,
    ExecutionContext,
    ExecutorError,
    ExecutorEvent,
    QueueExecutor,
    WorkUnit,
)

if TYPE_CHECKING:
    from ctbench.plugin_api import Agent, TaskSet

HOST_PREFIX = "ctbench-ray-"
"""Prefix of a host's private task folder (see :func:`host_parent`)."""
SHM = Path("/dev/shm")
SHM_MIN_FREE = 1 << 30
"""Free space /dev/shm needs to hold a host's task files (a container's default of 64 MB does not)."""


class RayOptions(BaseModel):
    """The executor's options (``RunSettings.executor_options``; ``--ray-address``, ``--ray-cpus-per-attempt``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    address: str | None = Field(
        default=None,
        description="Ray cluster to join (host:port, ray://...); None: "
        "$RAY_ADDRESS, else a local Ray instance started for the run.",
    )
    cpus_per_attempt: float = Field(
        default=1.0, gt=0, description="CPUs Ray reserves per concurrent attempt."
    )
    attempts_per_host: int = Field(default=16, ge=1, description="Attempts one host actor runs at once.")
    runtime_env: dict[str, Any] | None = Field(
        default=None, description="Ray runtime_env of the job (how workers get ctbench and the agent's CLI)."
    )
    resources: dict[str, float] = Field(
        default_factory=dict,
        description="Custom Ray resources per concurrent "
        'attempt (e.g. {"codex": 1} for nodes that have the codex CLI).',
    )
    host_dir: str | None = Field(
        default=None,
        description="Folder on each node for a host's copy of the agent-visible task files "
        "(default: /dev/shm when it has 1 GiB free, else the node's temp folder).",
    )
    connect_timeout_s: float = Field(
        default=5.0, gt=0, description="How long the cluster's address may take to accept a connection."
    )
    local_cpus: int | None = Field(default=None, ge=1, description="CPUs of a local instance (default: all).")
    start_timeout_s: float = Field(default=120.0, gt=0, description="How long hosts may take to be placed.")
    host_wait_s: float = Field(
        default=300.0,
        gt=0,
        description="How long an attempt waits for a live host before it is an infrastructure error.",
    )


# --------------------------------------------------------------------------- bundles (driver side)


@dataclass(frozen=True)
class Bundle:
    """Files (path relative to the task-set root -> bytes), addressed by the sha256 of their content."""

    files: dict[str, bytes]
    key: str = ""

    @classmethod
    def of(cls, files: dict[str, bytes]) -> Bundle:
        h = hashlib.sha256()
        for rel in sorted(files):
            h.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
        return cls(files=files, key=h.hexdigest())


def _read(files: dict[str, Path]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for rel, path in files.items():
        try:
            out[rel] = path.read_bytes()
        except OSError:
            continue  # gone since it was listed: the worker's engine refuses it like the local one
    return out


def set_bundle(task_set: TaskSet) -> Bundle:
    """The set-level files a worker's engine and task-set loader read: config, taxonomy, dialects
    (:func:`ctbench.isolation.visible_set_files`)."""
    return Bundle.of(_read(visible_set_files(task_set)))


def task_bundles(task_set: TaskSet, task_id: str) -> list[Bundle]:
    """The agent-visible files of one task (:func:`ctbench.isolation.visible_task_files`): its
    network, then task.yaml and the recordings it lists.

    A whitelist, never a copy of the folder: hidden.yaml and anything else an author leaves beside
    the task stay on the driver. A task that does not parse is shipped as its task.yaml alone; the
    worker's engine then refuses it exactly as the local one would (a ``task`` outcome). A
    recording refused or missing is left out: the worker's engine logs and refuses it like the
    local one.
    """
    network, task = visible_task_files(task_set, task_id)
    ref = task_set.ref(task_id)
    task_yaml = f"{ref.family.value}/{ref.id}/task.yaml"
    files = {task_yaml: task[task_yaml].read_bytes(), **_read(task)}  # task.yaml unreadable: raises
    return [*([Bundle.of(_read(network))] if network else []), Bundle.of(files)]


@dataclass
class Shipper:
    """Puts bundles into the object store once each and remembers their references (driver only)."""

    task_set: TaskSet
    put: Any
    refs: dict[str, Any] = field(default_factory=dict)
    """bundle key -> ObjectRef: everything this run put into the object store."""
    by_task: dict[str, list[str]] = field(default_factory=dict)

    def ship(self, bundle: Bundle) -> str:
        if bundle.key not in self.refs:
            self.refs[bundle.key] = self.put(bundle.files)
        return bundle.key

    def for_task(self, task_id: str) -> tuple[list[str], list[Any]]:
        keys = self.by_task.get(task_id)
        if keys is None:
            keys = [self.ship(b) for b in task_bundles(self.task_set, task_id)]
            self.by_task[task_id] = keys
        return keys, [self.refs[k] for k in keys]


# --------------------------------------------------------------------------- the host (worker side)


def host_parent(choice: str | None = None) -> Path:
    """Where a host on this node keeps its copy of the task files: ``choice`` (option ``host_dir``), else
    /dev/shm when it is writable with room to spare, else the temp folder.

    RAM rather than disk, because a host writes every task it has not seen before its attempt starts:
    on an ext4 temp folder that was a third of a host's time on a run of new tasks, in RAM it is noise.
    """
    if choice:
        path = Path(choice)
        path.mkdir(parents=True, exist_ok=True)
        return path
    try:
        st = os.statvfs(SHM)
        if st.f_bavail * st.f_frsize >= SHM_MIN_FREE and os.access(SHM, os.W_OK | os.X_OK):
            return SHM
    except OSError:
        pass
    return Path(tempfile.gettempdir())


def sweep_dead_hosts(parent: Path | None = None) -> int:
    """Remove the task folders of hosts whose process is gone (a killed node or driver leaves them),
    in the temp folder, /dev/shm and ``parent`` (where this host keeps its own).

    A folder is named for its host's pid; while that process lives the folder is left alone.
    """
    removed = 0
    parents = {Path(tempfile.gettempdir()), *([parent] if parent is not None else [])}
    if SHM.is_dir():
        parents.add(SHM)
    for path in [p for parent in sorted(parents) for p in parent.glob(f"{HOST_PREFIX}*-*")]:
        pid = path.name[len(HOST_PREFIX) :].split("-", 1)[0]
        if not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed += 1
    return removed


def _safe_rel(rel: str) -> PurePosixPath:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise ValueError(f"bundle path {rel!r} is not a plain relative path")
    return p


class AttemptHost:
    """One Ray actor: a private task folder, a replay engine, an agent and attempts running at once.

    Wrapped with ``ray.remote`` by the executor (ray stays an optional import of this module).
    """

    def __init__(
        self,
        settings: AgentSettings,
        agent_blob: bytes | None,
        set_keys: list[str],
        set_refs: list[Any],
        slots: int = 16,
        host_dir: str | None = None,
    ) -> None:
        self.settings = settings
        self.slots = slots
        self.agent_blob = agent_blob
        self.set_keys = set_keys
        self.set_refs = set_refs
        parent = host_parent(host_dir)
        sweep_dead_hosts(parent)
        self.root = Path(tempfile.mkdtemp(prefix=f"{HOST_PREFIX}{os.getpid()}-", dir=parent))
        self.done: set[str] = set()
        self.dirs: set[Path] = set()
        self.locks: dict[str, asyncio.Lock] = {}
        self.env: Any = None
        self.label = "ray"

    async def ready(self) -> dict[str, Any]:
        """Set up, and say where this host runs and whether the agent can run there."""
        import ray

        import ctbench

        # Every attempt's file-system work goes through the loop's default executor, as in the runner:
        # sized for the attempts at once, or 16 agents finishing together queue behind 6 threads.
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=min(64, self.slots + 4), thread_name_prefix="ctb-host-io")
        )
        ctx = ray.get_runtime_context()
        ip = ray.util.get_node_ip_address()
        node = ctx.get_node_id()
        self.label = f"ray:{ip}/{node[:8]}/pid{os.getpid()}"
        info: dict[str, Any] = {
            "ip": ip,
            "node": node,
            "pid": os.getpid(),
            "ctbench": ctbench.__version__,
            "label": self.label,
            "root": str(self.root),
            "available": True,
            "detail": "",
        }
        try:
            agent = self._agent()
            avail = type(agent).availability()
        except Exception as exc:  # unknown agent, bad options, missing import on this node
            info.update(available=False, detail=f"{type(exc).__name__}: {exc}")
            return info
        if not avail.available:
            info.update(available=False, detail=avail.detail or "not available")
            return info
        from ctbench.evaluate.attempt import LocalEnv
        from ctbench.store import TaskSet

        await self._materialise(self.set_keys, self.set_refs)
        self.env = LocalEnv(TaskSet(root=self.root), self.settings, agent=agent)
        await self.env.start()
        return info

    def _agent(self) -> Agent:
        from ctbench.evaluate.agents import make_agent

        if self.agent_blob is None:
            return make_agent(self.settings.agent, self.settings, self.settings.args)
        from ray import cloudpickle

        cls = cloudpickle.loads(self.agent_blob)
        agent: Agent = cls(self.settings, cls.parse_args(self.settings.args))
        agent.check()
        return agent

    async def _materialise(self, keys: Sequence[str], refs: Sequence[Any]) -> None:
        for key, ref in zip(keys, refs, strict=True):
            if key in self.done:
                continue
            lock = self.locks.setdefault(key, asyncio.Lock())
            async with lock:
                if key in self.done:
                    continue
                files: dict[str, bytes] = await ref
                await asyncio.to_thread(self._write, files)
                self.done.add(key)

    def _write(self, files: dict[str, bytes]) -> None:
        # Plain writes, one mkdir per new folder: the folder is this host's alone and a bundle counts
        # as there only once written, so nothing reads a half-written file. With sixteen attempts
        # starting at once, a temporary file, a rename and a mkdir per file made this the host's
        # biggest cost on tasks it had not seen.
        for rel, data in files.items():
            target = self.root / _safe_rel(rel)
            if target.parent not in self.dirs:
                target.parent.mkdir(parents=True, exist_ok=True)
                self.dirs.add(target.parent)
            target.write_bytes(data)

    async def run(self, unit: WorkUnit, keys: list[str], refs: list[Any]) -> AttemptOutcome:
        from ctbench.evaluate.attempt import run_attempt

        assert self.env is not None, "ready() first"
        try:
            await self._materialise(keys, refs)
        except Exception as exc:  # the object store lost the bundle: the cluster's fault, retry
            return AttemptOutcome(
                unit=unit,
                kind="infrastructure",
                worker=self.label,
                error=f"ray host {self.label}: cannot fetch the task files: {type(exc).__name__}: {exc}",
            )
        outcome = await run_attempt(unit, self.env)
        return outcome.model_copy(update={"worker": self.label})

    def files(self) -> dict[str, bytes]:
        """Every file of this host's private task folder (for the test that no hidden part is here)."""
        return {
            str(p.relative_to(self.root)): p.read_bytes() for p in sorted(self.root.rglob("*")) if p.is_file()
        }

    async def shutdown(self) -> None:
        try:
            if self.env is not None:
                await self.env.close()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


# --------------------------------------------------------------------------- the executor (driver side)


@dataclass
class _Host:
    actor: Any
    slots: int
    busy: int = 0
    info: dict[str, Any] = field(default_factory=dict)
    alive: bool = True

    @property
    def where(self) -> str:
        if "ip" not in self.info:
            return "a node"
        return f"node {self.info['ip']} ({str(self.info.get('node', '?'))[:8]})"


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


class RayExecutor(QueueExecutor):
    """Attempts on Ray actors across a cluster; see the module docstring for the design."""

    name: ClassVar[str] = "ray"
    host_class: ClassVar[type] = AttemptHost
    """The actor class of the attempt hosts (a test's subclass may stand for one its nodes cannot import)."""

    def __init__(self, **options: Any) -> None:
        super().__init__()
        try:
            self.options = RayOptions.model_validate(options)
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(p) for p in err.get("loc", ())) or "?"
            raise ExecutorError(
                f"executor 'ray': option {key}: {err.get('msg', 'invalid')} "
                f"(options: {', '.join(RayOptions.model_fields)})"
            ) from None
        self.hosts: list[_Host] = []
        self.shipper: Shipper | None = None
        self._ray: Any = None
        self._owns_ray = False
        self._changed: asyncio.Condition | None = None
        self._spawn: Any = None
        self._replacing: set[asyncio.Task[None]] = set()
        self._starting: set[asyncio.Future[_Host]] = set()
        self._actors: list[Any] = []
        """Every host actor this run created (killed at close, whatever state it is in)."""
        self.notes: list[str] = []

    # ----------------------------------------------------------------- start

    async def start(self, ctx: ExecutionContext) -> None:
        await super().start(ctx)
        try:
            ray = import_ray(self._address())
        except ImportError:
            raise ExecutorError("executor 'ray' needs Ray: pip install 'ctbench[ray]'") from None
        self._ray = ray
        self._changed = asyncio.Condition()
        await asyncio.to_thread(self._connect)
        try:
            await self._start_hosts(ctx)
        except BaseException:
            # The runner closes an executor only once it has started: leave no host (and no local
            # Ray instance) behind a start that failed.
            await asyncio.shield(self.close())
            raise

    async def _start_hosts(self, ctx: ExecutionContext) -> None:
        ray = self._ray
        o = self.options
        per_host = min(o.attempts_per_host, ctx.concurrency)
        count = math.ceil(ctx.concurrency / per_host)
        slots = [per_host] * (count - 1) + [ctx.concurrency - per_host * (count - 1)]
        need = ctx.concurrency * o.cpus_per_attempt
        cpus = float(ray.cluster_resources().get("CPU", 0))
        if need > cpus + 1e-9:
            raise ExecutorError(
                f"executor 'ray': concurrency {ctx.concurrency} x {o.cpus_per_attempt:g} CPU per "
                f"attempt needs {need:g} CPUs; the cluster has {cpus:g}. Lower --concurrency or "
                "--ray-cpus-per-attempt, or add nodes"
            )
        self.shipper = Shipper(ctx.task_set, ray.put)
        set_key = self.shipper.ship(await asyncio.to_thread(set_bundle, ctx.task_set))
        set_ref = self.shipper.refs[set_key]
        blob = _agent_blob(ctx.agent, ctx.settings.agent)
        remote = ray.remote(self.host_class)

        def spawn(n: int) -> _Host:
            actor = remote.options(
                num_cpus=n * o.cpus_per_attempt,
                max_concurrency=n + 4,
                max_restarts=0,
                resources={k: v * n for k, v in o.resources.items()},
                max_task_retries=0,
                scheduling_strategy="SPREAD",
            ).remote(ctx.settings, blob, [set_key], [set_ref], n, o.host_dir)
            self._actors.append(actor)
            return _Host(actor=actor, slots=n)

        self._spawn = spawn
        # Attempts start on the first host that is ready; the others join as they come up (each one
        # is a worker process to start: seconds on a busy node). Any host that cannot run the agent
        # stops the run with its node's name, before or after the first attempt.
        waits = [asyncio.ensure_future(self._ready(spawn(n))) for n in slots]
        self._starting.update(waits)
        done, _ = await asyncio.wait(waits, timeout=o.start_timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if not done:
            raise ExecutorError(
                f"executor 'ray': no attempt host of {per_host} x {o.cpus_per_attempt:g} CPU placed "
                f"within {o.start_timeout_s:g}s; free CPUs: "
                f"{ray.available_resources().get('CPU', 0):g} (a node may be too small for one host: "
                "lower --ray-cpus-per-attempt)"
            )
        for w in done:
            self.hosts.append(w.result())  # raises the first host's ExecutorError: fail early
        for w in waits:
            if w not in done:
                w.add_done_callback(self._joined)

    async def _ready(self, host: _Host) -> _Host:
        """Wait for a host to set up; refuse one whose node lacks ctbench, its version or the agent."""
        import ctbench

        assert self.ctx is not None
        try:
            host.info = await asyncio.wait_for(
                host.actor.ready.remote(), timeout=self.options.start_timeout_s
            )
        except TimeoutError:
            raise ExecutorError(
                f"executor 'ray': an attempt host was not placed within {self.options.start_timeout_s:g}s"
            ) from None
        except Exception as exc:
            import ctbench

            why = _creation_error(exc)
            hint = (
                f"; install ctbench {ctbench.__version__} on every node, or pass a runtime_env"
                if why.startswith("ModuleNotFoundError")
                else ""
            )
            host.info = _actor_address(host.actor)
            raise ExecutorError(
                f"executor 'ray': {host.where} cannot start an attempt host ({why}){hint}"
            ) from None
        info = host.info
        if not info["available"]:
            raise ExecutorError(
                f"executor 'ray': {host.where} cannot run agent {self.ctx.settings.agent!r}: {info['detail']}"
            )
        if info["ctbench"] != ctbench.__version__:
            raise ExecutorError(
                f"executor 'ray': {host.where} has ctbench {info['ctbench']}, the driver "
                f"{ctbench.__version__}; install the same version on every node"
            )
        return host

    def _joined(self, waiting: asyncio.Future[_Host]) -> None:
        """A host that came up after the run started: into the pool, or the run stops with its reason."""
        self._starting.discard(waiting)
        if waiting.cancelled():
            return
        exc = waiting.exception()
        if exc is None:
            host = waiting.result()
            self.hosts.append(host)
            asyncio.ensure_future(self._notify())
        elif "not placed within" in str(exc):
            self.notes.append(str(exc))  # the run goes on with the hosts it has
        else:
            if not isinstance(exc, ExecutorError):  # _ready converts what it expects; anything else too
                exc = ExecutorError(f"executor 'ray': an attempt host failed to start: {_short(exc)}")
            self._queue.put_nowait(exc)  # raised by events()

    async def _notify(self) -> None:
        assert self._changed is not None
        async with self._changed:
            self._changed.notify_all()

    async def events(self) -> AsyncIterator[ExecutorEvent]:
        async for event in super().events():
            if isinstance(event, ExecutorError):
                raise event
            yield event

    def _address(self) -> str:
        return self.options.address or os.environ.get("RAY_ADDRESS") or "local"

    def _connect(self) -> None:
        ray = self._ray
        if ray.is_initialized():  # a caller (a test, a notebook) already connected this process
            return
        o = self.options
        address = self._address()
        kwargs: dict[str, Any] = {
            "address": address,
            "log_to_driver": False,
            "runtime_env": o.runtime_env,
            "configure_logging": False,
        }
        if address == "local":
            kwargs.update(include_dashboard=False, num_cpus=o.local_cpus)
        if address != "local" and not address.startswith("ray://"):
            _check_reachable(address, o.connect_timeout_s)
            check_rewrite(address, o.connect_timeout_s)
            _check_token(address)
        # Ray warns that it set no SIGTERM handler (it runs in a thread: the runner keeps its own, which
        # saves the run) and that a local instance uses token auth; neither is the user's business.
        quiet = [logging.getLogger(n) for n in ("ray._private.worker", "ray._private.authentication")]
        levels = [q.level for q in quiet]
        for q in quiet:
            q.setLevel(logging.ERROR)
        try:
            ray.init(**kwargs)
        except Exception as exc:
            where = "a local Ray instance" if address == "local" else f"the Ray cluster at {address}"
            if type(exc).__name__ == "AuthenticationError":
                raise ExecutorError(_token_refused(where)) from None
            raise ExecutorError(f"executor 'ray': cannot reach {where}: {_short(exc)}") from None
        finally:
            for q, level in zip(quiet, levels, strict=True):
                q.setLevel(level)
        self._owns_ray = True

    # ----------------------------------------------------------------- attempts

    async def _acquire(self) -> _Host | None:
        assert self._changed is not None
        deadline = time.monotonic() + self.options.host_wait_s
        async with self._changed:
            while True:
                free = [h for h in self.hosts if h.alive and h.busy < h.slots]
                if free:
                    host = min(free, key=lambda h: h.busy / h.slots)
                    host.busy += 1
                    return host
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                try:
                    await asyncio.wait_for(self._changed.wait(), timeout=left)
                except TimeoutError:
                    return None

    async def _release(self, host: _Host) -> None:
        assert self._changed is not None
        async with self._changed:
            host.busy -= 1
            self._changed.notify_all()

    async def run_unit(self, unit: WorkUnit) -> AttemptOutcome:
        assert self.shipper is not None
        ray = self._ray
        if unit.task_id in self.shipper.by_task:  # shipped already: no thread hop
            keys, refs = self.shipper.for_task(unit.task_id)
        else:
            keys, refs = await asyncio.to_thread(self.shipper.for_task, unit.task_id)
        host = await self._acquire()
        if host is None:
            return AttemptOutcome(
                unit=unit,
                kind="infrastructure",
                error=f"ray: no live attempt host for {self.options.host_wait_s:g}s",
            )
        ref = None
        try:
            ref = host.actor.run.remote(unit, keys, refs)
            return await ref
        except asyncio.CancelledError:
            if ref is not None:
                ray.cancel(ref)
            raise
        except (
            ray.exceptions.RayActorError,
            ray.exceptions.WorkerCrashedError,
            ray.exceptions.NodeDiedError,
            ray.exceptions.ObjectLostError,
        ) as exc:
            await self._lost(host, exc)
            return AttemptOutcome(
                unit=unit,
                kind="infrastructure",
                error=f"ray: the attempt host on {host.where} died mid-attempt ({_short(exc)})",
            )
        except ray.exceptions.RayError as exc:
            return AttemptOutcome(unit=unit, kind="infrastructure", error=f"ray: {_short(exc)}")
        finally:
            await self._release(host)

    async def _lost(self, host: _Host, exc: BaseException) -> None:
        """Retire a dead host and start a replacement (Ray places it on a live node when one has room)."""
        if not host.alive:
            return
        host.alive = False
        self.notes.append(f"attempt host on {host.where} lost: {_short(exc)}")
        task = asyncio.create_task(self._replace(host.slots))
        self._replacing.add(task)
        task.add_done_callback(self._replacing.discard)

    async def _replace(self, slots: int) -> None:
        try:
            new = await self._ready(self._spawn(slots))
        except ExecutorError as exc:  # its node went too, or no node has room: the other hosts carry on
            self.notes.append(f"replacement attempt host: {exc}")
            return
        assert self._changed is not None
        async with self._changed:
            self.hosts.append(new)
            self._changed.notify_all()

    # ----------------------------------------------------------------- end

    async def close(self) -> None:
        await super().close()
        pending: list[asyncio.Future[None] | asyncio.Future[_Host]] = [*self._replacing, *self._starting]
        for task in pending:
            task.cancel()
        ray = self._ray
        if ray is None:
            return
        # Ready hosts close their agent and server and remove their folder; the others (never placed,
        # refused, dead) are killed, and the next host on their node sweeps what they left.
        live = [h.actor for h in self.hosts if h.alive]
        if live:
            try:
                await asyncio.wait_for(
                    asyncio.gather(*(a.shutdown.remote() for a in live), return_exceptions=True), timeout=30
                )
            except TimeoutError:
                pass
        for actor in self._actors:
            try:
                ray.kill(actor)
            except Exception:  # already gone with its node
                pass
        self.hosts, self._actors = [], []
        if self._owns_ray:
            await asyncio.to_thread(ray.shutdown)
            self._owns_ray = False


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ERROR_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception)): (.+)$")


def _creation_error(exc: BaseException) -> str:
    """The error a host's set-up raised on its node, from the remote traceback Ray wraps it in."""
    text = _ANSI.sub("", str(exc))
    missing = re.search(r"No module named '([^']+)'", text)
    if missing:
        return f"ModuleNotFoundError: No module named '{missing.group(1)}'"
    causes = [
        m
        for line in text.splitlines()
        if (m := _ERROR_LINE.match(line.strip())) and not m.group(1).startswith(("ray.", "Ray", "Actor"))
    ]
    if causes:
        name, message = causes[-1].groups()
        return f"{name}: {message[:300]}"
    return _ANSI.sub("", _short(exc))


def _actor_address(actor: Any) -> dict[str, Any]:
    """``{"ip", "node"}`` where Ray placed ``actor``, from the cluster's actor table (for a host that never
    got to say it itself); empty if unknown."""
    try:
        from ray._private.state import actors

        address = actors(actor._actor_id.hex()).get("Address") or {}
    except Exception:  # a private API of Ray's: its absence costs only the node's name
        return {}
    if not address.get("IPAddress"):
        return {}
    return {"ip": address["IPAddress"], "node": str(address.get("NodeID") or "")}


def _check_reachable(address: str, timeout_s: float) -> None:
    """Ray retries an unreachable address for minutes; one TCP connection attempt says it at once."""
    import socket

    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ExecutorError(
            f"executor 'ray': --ray-address {address!r}: expected HOST:PORT (the head's GCS "
            "address, e.g. 10.0.0.5:6379) or ray://HOST:PORT"
        )
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=min(5.0, timeout_s)):
                return
        except OSError as exc:
            if time.monotonic() >= deadline:
                raise ExecutorError(
                    f"executor 'ray': cannot reach the Ray cluster at {address}: "
                    f"{exc.strerror or exc} (is the head running? ray start --head)"
                ) from None
            time.sleep(0.5)


def _token_refused(where: str) -> str:
    return (
        f"executor 'ray': {where} refused this driver: authentication token missing or wrong: set "
        "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN (or RAY_AUTH_TOKEN_PATH) to the cluster's token"
    )


def _check_token(address: str) -> None:
    """A cluster with token authentication answers a driver without the right token at once; ``ray.init``
    would retry for a minute, print the GCS's refusals and then say only that it cannot connect."""
    try:
        from ray._raylet import GcsClient  # type: ignore[attr-defined]  # Ray's own: sends its token
        from ray.exceptions import AuthenticationError
    except ImportError:  # an older Ray: no token authentication to check
        return
    try:
        GcsClient(address=address, cluster_id=None)
    except AuthenticationError:
        raise ExecutorError(_token_refused(f"the Ray cluster at {address}")) from None
    except Exception:  # anything else is ray.init's to report
        return


def _agent_blob(agent: Agent | None, name: str) -> bytes | None:
    """The runner's agent class, pickled by value, when the hosts cannot build it by name.

    An installed agent is rebuilt on each host from its entry point; an agent handed to the runner
    directly (a benchmark's, a test's) exists only in the driver's code, so its class travels along.
    """
    if agent is None:
        return None
    from ctbench.evaluate.agents import agent_class

    try:
        if agent_class(name) is type(agent):
            return None
    except CtbError:
        pass
    import sys

    from ray import cloudpickle

    module = sys.modules.get(type(agent).__module__)
    by_value = module is not None and module.__name__ != "__main__"
    if by_value:
        cloudpickle.register_pickle_by_value(module)
    try:
        return cloudpickle.dumps(type(agent))
    finally:
        if by_value:
            cloudpickle.unregister_pickle_by_value(module)


__all__ = [
    "AttemptHost",
    "Bundle",
    "RayExecutor",
    "RayOptions",
    "Shipper",
    "set_bundle",
    "sweep_dead_hosts",
    "task_bundles",
]
