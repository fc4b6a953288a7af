"""The executor contract (issue 12): where attempts run, as the runner sees it.

An executor is a class providing :class:`Executor`: ``start`` with the run's :class:`ExecutionContext`,
``submit`` work units, iterate ``events()`` for a :class:`UnitStarted` when a unit begins and its
:class:`~ctbench.plugin_api.work.AttemptOutcome` when it ends, ``cancel`` on interrupt, ``close`` at
the end. Resume, retries of infrastructure errors, SIGKILL safety and the live progress are the
runner's, built on this protocol alone, so they work the same through any executor.
:class:`QueueExecutor` is the shared machinery of executors that run each unit as an asyncio task
(the bundled ``local`` and ``ray`` executors are built on it). Executors register in the
``ctbench.executors`` entry-point group (:data:`GROUP`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from ctbench.errors import CtbError
from ctbench.plugin_api.settings import AgentSettings
from ctbench.plugin_api.work import AttemptOutcome, WorkUnit

if TYPE_CHECKING:
    from ctbench.model import TaskSpec
    from ctbench.plugin_api.agent import Agent
    from ctbench.store import TaskRef, TaskSet

GROUP = "ctbench.executors"


class ExecutorError(CtbError):
    """The executor cannot run at all (cluster unreachable, bad options): one clear line."""


@dataclass(frozen=True)
class UnitStarted:
    """A unit began running (for the live progress)."""

    unit: WorkUnit


ExecutorEvent = UnitStarted | AttemptOutcome


class Admission:
    """One unit's place among the run's ``concurrency`` running attempts, taken when its agent is
    about to run rather than when its set-up begins.

    A sandboxed process agent's set-up (its folder, its session, bubblewrap's namespaces and mounts)
    costs CPU the running attempts mostly leave idle while they wait on their model or their
    ``sleep``. An executor that stages units (:attr:`QueueExecutor.staged`) lets the next units make
    their sandbox, held (:mod:`ctbench.evaluate.agents.held`), while the running ones run; each waits
    here for a place and only then lets its agent go. The place is the concurrency bound: never more
    than ``concurrency`` agents run at once, and the attempt's time limit and latency start here.

    Calling it again is a no-op, so an agent that starts more than one process takes one place.
    """

    def __init__(self, places: asyncio.Semaphore, on_enter: Callable[[], None]) -> None:
        self._places = places
        self._on_enter = on_enter
        self.entered_at: float | None = None
        """``time.monotonic()`` when the place was given (None: not, or not yet)."""

    @property
    def entered(self) -> bool:
        return self.entered_at is not None

    async def __call__(self) -> None:
        if self.entered_at is not None:
            return
        await self._places.acquire()
        self.entered_at = time.monotonic()
        self._on_enter()

    def leave(self) -> None:
        """Give the place back (the attempt has ended); safe to call when none was taken."""
        if self.entered_at is not None:
            self.entered_at = None
            self._places.release()


@dataclass
class ExecutionContext:
    """What a run gives its executor: the task set (agent-visible parts are read from it), the agent
    settings every unit shares, the concurrency bound, and the tasks that will run (for warm-up or
    for shipping their visible parts ahead)."""

    task_set: TaskSet
    settings: AgentSettings
    concurrency: int
    task_ids: Sequence[str]
    agent: Agent | None = None
    """The runner's agent instance (already checked); in-process executors use it, remote ones rebuild."""
    options: dict[str, Any] = field(default_factory=dict)
    """Executor-specific options (``--ray-address`` ...)."""
    loaded: Mapping[str, tuple[TaskRef, TaskSpec]] = field(default_factory=dict)
    """The (ref, agent-visible spec) the runner parsed to select each task: an in-process executor
    serves them without parsing task.yaml again (a remote one reads its own copy)."""


@runtime_checkable
class Executor(Protocol):
    name: ClassVar[str]

    async def start(self, ctx: ExecutionContext) -> None: ...

    async def submit(self, unit: WorkUnit) -> None: ...

    def events(self) -> AsyncIterator[ExecutorEvent]: ...

    async def cancel(self) -> None: ...

    async def close(self) -> None: ...


class QueueExecutor:
    """Shared machinery of executors that run each unit as an asyncio task and report through a queue.

    Subclasses implement :meth:`run_unit`; the concurrency bound, ordering, start events, cancellation
    and "an unexpected failure becomes an infrastructure outcome" are here. A subclass that sets
    :attr:`staged` implements :meth:`run_admitted` instead and starts up to ``concurrency`` more
    units ahead, each taking its running place through its :class:`Admission`.
    """

    name: ClassVar[str] = "queue"
    staged: ClassVar[bool] = False
    """Units are set up ahead of their running place (:class:`Admission`): up to ``concurrency`` of
    them make their sandbox while ``concurrency`` others run."""

    def __init__(self) -> None:
        # events, and the failure of the executor itself (a subclass's: a host that cannot start)
        self._queue: asyncio.Queue[ExecutorEvent | ExecutorError] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()
        self._sem: asyncio.Semaphore | None = None
        self._setting_up: asyncio.Semaphore | None = None
        self._first_fill = 0  # units yet to join the first fill
        self._first_pending = 0  # of those that joined, not yet in a place nor ended
        self._filled = asyncio.Event()
        self.ctx: ExecutionContext | None = None

    async def start(self, ctx: ExecutionContext) -> None:
        self.ctx = ctx
        self._sem = asyncio.Semaphore(ctx.concurrency)
        self._setting_up = asyncio.Semaphore(ctx.concurrency) if self.staged else None
        self._first_fill = ctx.concurrency

    async def submit(self, unit: WorkUnit) -> None:
        task = asyncio.create_task(self._run(unit), name=f"ctb-{unit.task_id}-t{unit.trial}-a{unit.attempt}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, unit: WorkUnit) -> None:
        assert self._sem is not None
        # Staged: at most ``concurrency`` units set up or wait for a place at once, and a unit's
        # set-up slot is freed when it has its place. The run's first ``concurrency`` units set up
        # alone, so the places fill as soon as their CPU allows; the next ones set up once every
        # place has been taken or ended without one, while those run.
        setting_up = self._setting_up
        first = False
        if setting_up is not None:
            await setting_up.acquire()
            if self._first_fill > 0:
                self._first_fill -= 1
                self._first_pending += 1
                first = True
            else:
                try:
                    await self._filled.wait()
                except BaseException:
                    setting_up.release()
                    raise

        def first_done() -> None:
            nonlocal first
            if first:
                first = False
                self._first_pending -= 1
                if self._first_pending == 0:
                    self._filled.set()

        def entered() -> None:
            nonlocal setting_up
            if setting_up is not None:
                setting_up.release()
                setting_up = None
            first_done()
            self._queue.put_nowait(UnitStarted(unit))

        admission = Admission(self._sem, entered)
        try:
            try:
                if self.staged:
                    outcome = await self.run_admitted(unit, admission)
                else:  # the place first, then the whole unit: nothing sets up ahead
                    await admission()
                    outcome = await self.run_unit(unit)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the executor's own failure: the harness side, worth a retry
                outcome = AttemptOutcome(
                    unit=unit,
                    kind="infrastructure",
                    error=f"executor {self.name}: {type(exc).__name__}: {exc}",
                )
            if not admission.entered:  # it ended during its set-up: it started all the same
                self._queue.put_nowait(UnitStarted(unit))
            self._queue.put_nowait(outcome)
        finally:
            admission.leave()
            if setting_up is not None:  # it ended without a place
                setting_up.release()
            first_done()

    async def run_admitted(self, unit: WorkUnit, admission: Admission) -> AttemptOutcome:
        """Run ``unit``, taking its running place through ``admission`` before its agent runs
        (called only where :attr:`staged` is set; otherwise :meth:`run_unit` runs in its place).

        The default takes the place first and then runs :meth:`run_unit` (no set-up ahead).
        """
        await admission()
        return await self.run_unit(unit)

    async def run_unit(self, unit: WorkUnit) -> AttemptOutcome:
        raise NotImplementedError

    async def events(self) -> AsyncIterator[ExecutorEvent]:
        while True:
            event = await self._queue.get()
            if isinstance(event, ExecutorError):
                raise event
            yield event

    async def cancel(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def close(self) -> None:
        await self.cancel()
