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
from collections.abc import AsyncIterator, Mapping, Sequence
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
    and "an unexpected failure becomes an infrastructure outcome" are here.
    """

    name: ClassVar[str] = "queue"

    def __init__(self) -> None:
        # events, and the failure of the executor itself (a subclass's: a host that cannot start)
        self._queue: asyncio.Queue[ExecutorEvent | ExecutorError] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()
        self._sem: asyncio.Semaphore | None = None
        self.ctx: ExecutionContext | None = None

    async def start(self, ctx: ExecutionContext) -> None:
        self.ctx = ctx
        self._sem = asyncio.Semaphore(ctx.concurrency)

    async def submit(self, unit: WorkUnit) -> None:
        task = asyncio.create_task(self._run(unit), name=f"ctb-{unit.task_id}-t{unit.trial}-a{unit.attempt}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, unit: WorkUnit) -> None:
        assert self._sem is not None
        async with self._sem:
            self._queue.put_nowait(UnitStarted(unit))
            try:
                outcome = await self.run_unit(unit)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the executor's own failure: the harness side, worth a retry
                outcome = AttemptOutcome(
                    unit=unit,
                    kind="infrastructure",
                    error=f"executor {self.name}: {type(exc).__name__}: {exc}",
                )
            self._queue.put_nowait(outcome)

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
