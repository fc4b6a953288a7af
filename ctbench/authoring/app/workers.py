"""Background work that fails must cost the author a message, never the app and its unsaved work.

Every worker of the app is started with ``exit_on_error=False`` (:func:`background`); the node that
started it reports a failure as a notification through :class:`ReportsWorkerErrors`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, Protocol

from textual import work
from textual.notifications import SeverityLevel
from textual.worker import Worker, WorkerState

P = ParamSpec("P")


def background(
    *, name: str = "", group: str = "default", exclusive: bool = False, thread: bool = False
) -> Callable[[Callable[P, object]], Callable[P, Worker[Any]]]:
    """``@work`` for the app: a failure is reported, the app keeps running."""
    return work(name=name, group=group, exclusive=exclusive, thread=thread, exit_on_error=False)


class _Notifies(Protocol):
    """What the mixin needs from the node it is mixed into (App, Screen and Widget all have it)."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...


class ReportsWorkerErrors:
    """Mixin for widgets, screens and the app: turn a failed worker into an error notification."""

    def on_worker_state_changed(self: _Notifies, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        what = event.worker.name or "background work"
        message = str(error) or type(error).__name__
        self.notify(f"{what}: {message}", title="Something went wrong", severity="error", timeout=15)
