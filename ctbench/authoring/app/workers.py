"""Background work that fails must cost the author a message, never the app and its unsaved work.

Every worker of the app is started with ``exit_on_error=False`` (:func:`background`); the node that
started it reports a failure as a notification through :class:`ReportsWorkerErrors`.
"""

from __future__ import annotations

from typing import Any

from textual import work
from textual.worker import Worker, WorkerState


def background(**kwargs: Any) -> Any:
    """``@work`` for the app: a failure is reported, the app keeps running."""
    return work(exit_on_error=False, **kwargs)


class ReportsWorkerErrors:
    """Mixin for widgets, screens and the app: turn a failed worker into an error notification."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        what = event.worker.name or "background work"
        message = str(error) or type(error).__name__
        self.notify(f"{what}: {message}", title="Something went wrong", severity="error",  # type: ignore[attr-defined]
                    timeout=15)
