"""Executors: where attempts run. The runner submits work units and reads outcomes as they finish.

The :class:`Executor` protocol is the whole contract (issue 12): ``start`` with the run's
:class:`ExecutionContext`, ``submit`` units, iterate ``events()`` for a :class:`UnitStarted` when a unit
begins and its :class:`~ctbench.evaluate.work.AttemptOutcome` when it ends, ``cancel`` on interrupt,
``close`` at the end. Resume, retries of infrastructure errors, SIGKILL safety and the live progress
are the runner's, built on this protocol alone, so they work the same through any executor.

:class:`LocalExecutor` (the default) runs attempts in the runner's event loop, at most ``concurrency``
at once, in submission order; up to ``concurrency`` more set up ahead (a ``command`` agent's sandbox
is made and held) and wait for a place (:class:`~ctbench.plugin_api.executor.Admission`). Other
executors (``ray``, or one of a plug-in package) are found through the ``ctbench.executors``
entry-point group.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points
from typing import Any, ClassVar

from ctbench.evaluate.attempt import LocalEnv, run_attempt
from ctbench.plugin_api import EXECUTORS_GROUP as GROUP
from ctbench.plugin_api.executor import (
    Admission,
    ExecutionContext,
    Executor,
    ExecutorError,
    ExecutorEvent,
    QueueExecutor,
    UnitStarted,
)
from ctbench.plugin_api.work import AttemptOutcome, WorkUnit

BUILTIN: dict[str, str] = {
    "local": "ctbench.evaluate.executors:LocalExecutor",
}


class LocalExecutor(QueueExecutor):
    """Attempts in this process's event loop, sharing one replay engine, agent and server."""

    name: ClassVar[str] = "local"
    staged: ClassVar[bool] = True  # the next attempts make their sandbox while these run

    def __init__(self, **options: Any) -> None:
        super().__init__()
        if options:
            raise ExecutorError(f"executor 'local' takes no options (got {', '.join(sorted(options))})")
        self.env: LocalEnv | None = None

    async def start(self, ctx: ExecutionContext) -> None:
        await super().start(ctx)
        self.env = LocalEnv(
            ctx.task_set, ctx.settings, agent=ctx.agent, warm_tasks=ctx.task_ids, loaded=ctx.loaded
        )
        await self.env.start()

    async def run_admitted(self, unit: WorkUnit, admission: Admission) -> AttemptOutcome:
        assert self.env is not None
        return await run_attempt(unit, self.env, admission=admission)

    async def run_unit(self, unit: WorkUnit) -> AttemptOutcome:
        assert self.env is not None
        return await run_attempt(unit, self.env)

    async def close(self) -> None:
        await super().close()
        if self.env is not None:
            await self.env.close()
            self.env = None


def executor_names() -> list[str]:
    found = [ep.name for ep in entry_points(group=GROUP)]
    return list(dict.fromkeys([*BUILTIN, *found]))


def make_executor(name: str, options: dict[str, Any] | None = None) -> Executor:
    """The executor called ``name`` (entry point ``ctbench.executors``), built with its options."""
    target = next((ep.value for ep in entry_points(group=GROUP) if ep.name == name), None) or BUILTIN.get(
        name
    )
    if target is None:
        raise ExecutorError(f"unknown executor {name!r}; choose one of: {', '.join(executor_names())}")
    module, _, attr = target.partition(":")
    try:
        cls = getattr(import_module(module), attr)
    except ImportError as exc:
        hint = f" (pip install 'ctbench[{name}]')" if name == "ray" else ""
        raise ExecutorError(f"executor {name!r} cannot be loaded: {exc}{hint}") from None
    executor: Executor = cls(**(options or {}))
    return executor


__all__ = [
    "ExecutionContext",
    "Executor",
    "ExecutorError",
    "ExecutorEvent",
    "LocalExecutor",
    "QueueExecutor",
    "UnitStarted",
    "executor_names",
    "make_executor",
]
