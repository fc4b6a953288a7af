"""Run progress behind one small protocol, so the runner has a single code path for every front end.

The runner reports events to a :class:`ProgressTracker`; the tracker keeps the numbers (done/total,
running, errors, elapsed, ETA) and hands an immutable :class:`ProgressSnapshot` to a
:class:`ProgressDisplay`. Three displays ship here:

- :class:`RichDisplay` - a live bar for a terminal (rich);
- :class:`PlainDisplay` - one line per finished task, for CI logs and pipes;
- :class:`CallbackDisplay` - calls a function with every event; the Textual app passes a function
  that posts a message to itself (``app.call_from_thread(app.post_message, ...)``), which keeps
  Textual out of this module.

:func:`choose_display` picks rich in an interactive terminal and plain lines elsewhere (``CI`` set,
``TERM=dumb``, output redirected).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol

from ctbench.safetext import visible

if TYPE_CHECKING:
    from ctbench.evaluate.runfolder import ResultLine

EventKind = Literal["start", "task_started", "task_finished", "task_retry", "note", "finish"]


@dataclass(frozen=True)
class ProgressSnapshot:
    """Where a run stands. ``done`` includes tasks finished by an earlier, resumed invocation."""

    total: int
    done: int
    resumed: int
    running: tuple[str, ...]
    errors: int
    timeouts: int
    elapsed_s: float
    eta_s: float | None


@dataclass(frozen=True)
class ProgressEvent:
    """One thing that happened; ``result`` is set on ``task_finished``, ``message`` on notes and retries."""

    kind: EventKind
    snapshot: ProgressSnapshot
    task_id: str | None = None
    result: ResultLine | None = None
    message: str | None = None


class ProgressDisplay(Protocol):
    """Anything that can show a run's progress."""

    def handle(self, event: ProgressEvent) -> None: ...

    def close(self) -> None: ...


@dataclass
class ProgressTracker:
    """Counts, timing and the ETA; forwards every event to the display."""

    display: ProgressDisplay
    total: int = 0
    resumed: int = 0
    clock: Callable[[], float] = time.monotonic
    _done: int = 0
    _errors: int = 0
    _timeouts: int = 0
    _running: dict[str, None] = field(default_factory=dict)
    _t0: float | None = None

    def snapshot(self) -> ProgressSnapshot:
        elapsed = 0.0 if self._t0 is None else self.clock() - self._t0
        remaining = self.total - self.resumed - self._done
        eta = None
        if self._done and remaining >= 0:
            eta = elapsed / self._done * remaining
        return ProgressSnapshot(
            total=self.total,
            done=self.resumed + self._done,
            resumed=self.resumed,
            running=tuple(self._running),
            errors=self._errors,
            timeouts=self._timeouts,
            elapsed_s=elapsed,
            eta_s=eta,
        )

    def _emit(self, kind: EventKind, **kw: Any) -> None:
        self.display.handle(ProgressEvent(kind=kind, snapshot=self.snapshot(), **kw))

    def start(self, total: int, resumed: int, message: str | None = None) -> None:
        self.total, self.resumed, self._t0 = total, resumed, self.clock()
        self._emit("start", message=message)

    def task_started(self, task_id: str) -> None:
        self._running[task_id] = None
        self._emit("task_started", task_id=task_id)

    def task_retry(self, task_id: str, message: str) -> None:
        self._emit("task_retry", task_id=task_id, message=message)

    def task_finished(self, result: ResultLine) -> None:
        trial = getattr(result, "trial", 1)
        self._running.pop(result.task_id if trial == 1 else f"{result.task_id}#{trial}", None)
        self._done += 1
        if result.status == "error":
            self._errors += 1
        elif result.status == "timeout":
            self._timeouts += 1
        self._emit("task_finished", task_id=result.task_id, result=result)

    def note(self, message: str) -> None:
        self._emit("note", message=message)

    def finish(self, message: str | None = None) -> None:
        self._emit("finish", message=message)
        self.display.close()


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def _outcome(result: ResultLine) -> str:
    if result.status == "error":
        return f"error ({result.error_kind or 'unknown'})"
    return result.status


def _counters(s: ProgressSnapshot) -> str:
    return (
        f"running {len(s.running)}  errors {s.errors}  timeouts {s.timeouts}  "
        f"elapsed {fmt_duration(s.elapsed_s)}  eta {fmt_duration(s.eta_s)}"
    )


class PlainDisplay:
    """Plain lines, one per finished task: what CI logs and ``| tee`` want."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def _print(self, text: str) -> None:
        self.stream.write(visible(text) + "\n")  # task errors quote the agent: its escapes stay inert
        self.stream.flush()

    def handle(self, event: ProgressEvent) -> None:
        s = event.snapshot
        width = len(str(s.total))
        if event.kind == "start":
            todo = s.total - s.resumed
            resumed = f" ({s.resumed} already done, {todo} to run)" if s.resumed else ""
            self._print(f"run: {s.total} task(s){resumed}" + (f"; {event.message}" if event.message else ""))
        elif event.kind == "task_finished" and event.result is not None:
            r = event.result
            latency = f"{r.latency_s:.1f}s" if r.latency_s is not None else "-"
            extra = f"  {r.error}" if r.error and r.status in ("error", "timeout") else ""
            retry = (
                f"  (after {r.attempts - 1} retr{'y' if r.attempts == 2 else 'ies'})"
                if r.attempts > 1
                else ""
            )
            self._print(
                f"[{s.done:>{width}}/{s.total}] {r.task_id:<12} {_outcome(r):<22} {latency:>7}  "
                f"| {_counters(s)}{retry}{extra}"
            )
        elif event.kind == "task_retry":
            self._print(f"retry: {event.task_id}: {event.message}")
        elif event.kind in ("note", "finish") and event.message:
            self._print(event.message)

    def close(self) -> None:
        return None


class CallbackDisplay:
    """Forwards every event to a function (the Textual app's bridge, or a test's recorder)."""

    def __init__(self, callback: Callable[[ProgressEvent], None]) -> None:
        self.callback = callback

    def handle(self, event: ProgressEvent) -> None:
        self.callback(event)

    def close(self) -> None:
        return None


class NullDisplay:
    """Shows nothing (``--quiet``, benchmarks)."""

    def handle(self, event: ProgressEvent) -> None:
        return None

    def close(self) -> None:
        return None


class RichDisplay:
    """A live progress bar with the counters, and a line per finished task printed above it."""

    def __init__(self, stream: IO[str]) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.console = Console(file=stream, highlight=False)
        self.progress = Progress(
            TextColumn("[bold]run[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counters]}"),
            console=self.console,
            transient=False,
            refresh_per_second=4,
        )
        self._task: Any = None
        self._started = False

    def _update(self, s: ProgressSnapshot) -> None:
        if self._task is None:
            self._task = self.progress.add_task("run", total=s.total, counters="")
        running = ", ".join(s.running[:4]) + (" ..." if len(s.running) > 4 else "")
        counters = _counters(s) + (f"  [dim]{running}[/]" if running else "")
        self.progress.update(self._task, completed=s.done, total=s.total, counters=counters)

    def handle(self, event: ProgressEvent) -> None:
        s = event.snapshot
        if not self._started:
            self.progress.start()
            self._started = True
        if event.kind == "start":
            resumed = f" ({s.resumed} already done)" if s.resumed else ""
            self.console.print(
                visible(f"run: {s.total} task(s){resumed}" + (f"; {event.message}" if event.message else "")),
                markup=False,
            )
        elif event.kind == "task_finished" and event.result is not None:
            r = event.result
            style = {"answered": "green", "unparsable": "yellow", "timeout": "magenta"}.get(r.status, "red")
            latency = f"{r.latency_s:.1f}s" if r.latency_s is not None else "-"
            err = f"  [dim]{_escape(r.error)}[/]" if r.error and r.status in ("error", "timeout") else ""
            self.console.print(f"  {_escape(r.task_id):<12} [{style}]{_outcome(r):<22}[/] {latency:>7}{err}")
        elif event.kind == "task_retry":
            self.console.print(
                f"  [yellow]retry[/] {_escape(event.task_id or '')}: {_escape(event.message or '')}"
            )
        elif event.kind in ("note", "finish") and event.message:
            self.console.print(visible(event.message, keep_newlines=True), markup=False)
        self._update(s)

    def close(self) -> None:
        if self._started:
            self.progress.stop()
            self._started = False


def _escape(text: str) -> str:
    """Agent-provided text for a Rich line: markup escaped, control characters made visible."""
    from rich.markup import escape

    return escape(visible(text))


DisplayMode = Literal["auto", "rich", "plain", "none"]


def choose_display(mode: DisplayMode, stream: IO[str]) -> ProgressDisplay:
    """Rich in an interactive terminal, plain lines in CI, pipes and dumb terminals."""
    if mode == "none":
        return NullDisplay()
    if mode == "plain":
        return PlainDisplay(stream)
    if mode == "rich":
        return RichDisplay(stream)
    interactive = bool(getattr(stream, "isatty", lambda: False)())
    if not interactive or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return PlainDisplay(stream)
    return RichDisplay(stream)
