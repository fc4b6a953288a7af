"""``ctb-review blind ID``: the blind solve in a terminal app, then the reveal.

The blind screen shows what an agent gets and nothing more: the task statement and a device console
over the replay backend (the shared :class:`~ctbench.tui.replay_console.ReplayConsole`), plus an
editor for the answer. Nothing on it can reach ``hidden.yaml``: the screen holds a
:class:`~ctbench.review.workflow.BlindStart` (the visible task) and a replay session served by a
separate process whose view holds only the task's visible part (:mod:`ctbench.replay.isolated`:
a copy without ``hidden.yaml``, inside bubblewrap where it works), so not even a recording that
points at the gold can show it; the console's title says so. Submitting commits (and pushes) the answer and the trajectory
first; only when that commit exists does the app move to the reveal screen, which is the first code
that loads the gold (:meth:`ReviewDesk.reveal` refuses otherwise).

Slow work (git, the replay engine's first load, the reveal's scoring) runs in thread workers that
post their results back as messages, so the screen never freezes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer, Input, Label, Static, TextArea

from ctbench.errors import CtbError
from ctbench.review.widgets import TitleBar
from ctbench.review.workflow import BlindStart, ReviewDesk, StepResult
from ctbench.yamlio import atomic_write_text

if TYPE_CHECKING:
    from textual.timer import Timer

    from ctbench.store import TaskSet

_KEEP_LINE = re.compile(r"^\s|^[-*•]\s|^\d+[.)]\s")


class ReviewSession(Protocol):
    """The replay session a blind review runs on: what the console needs, and ``close``.

    An isolated session (:class:`ctbench.replay.isolated.IsolatedSession`, the default) or, from
    a test's ``engine_factory``, an in-process :class:`ctbench.replay.session.Session`.
    """

    def devices(self) -> Sequence[Any]: ...

    def run(self, device: str, command: str) -> Any: ...

    def close(self) -> None: ...


class SessionOpener(Protocol):
    """What ``engine_factory`` makes of the task set: an engine that opens review sessions."""

    def open_session(self, task_id: str, *, trajectory_path: Path | None = None) -> ReviewSession: ...


def reflow(text: str) -> str:
    """Join an author's hard-wrapped lines into paragraphs so the statement fits any pane width.

    Blank lines, list items and indented lines (CLI snippets) keep their line breaks.
    """
    out = []
    for para in re.split(r"\n\s*\n", text.strip("\n")):
        lines = para.splitlines()
        joined: list[str] = []
        for line in lines:
            if joined and not _KEEP_LINE.match(line) and not _KEEP_LINE.match(joined[-1]):
                joined[-1] = joined[-1].rstrip() + " " + line.strip()
            else:
                joined.append(line.rstrip())
        out.append("\n".join(joined))
    return "\n\n".join(out)


class ConfirmSubmit(ModalScreen[bool]):
    """Last chance before the answer becomes permanent and the gold becomes visible."""

    BINDINGS = [
        Binding("y", "answer(True)", "Submit", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "Keep working", id="confirm.no"),
    ]

    def __init__(self, lines: int) -> None:
        super().__init__()
        self._lines = lines

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Label(f"Submit your blind answer ({self._lines} line(s))?", id="confirm-title")
            yield Static(
                "It is committed and pushed before the gold is shown, and cannot be changed afterwards.",
                id="confirm-text",
            )
            with Horizontal(id="confirm-buttons"):
                yield Button("Submit (y)", variant="primary", id="confirm-yes")
                yield Button("Keep working (n)", id="confirm-no")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")


class MessageScreen(Screen[None]):
    """A full-screen message (an error that ends the session, or a notice)."""

    BINDINGS = [Binding("q,escape", "app.quit", "Quit", id="message.quit")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self._title = title
        self._text = text

    def compose(self) -> ComposeResult:
        yield TitleBar(self._title)
        with Vertical(id="message-box"):
            yield Label(self._title, id="message-title")
            yield Static(self._text, id="message-text")
        yield Footer()


class BlindScreen(Screen[None]):
    """Statement, device console and answer editor: everything a blind reviewer may see."""

    BINDINGS = [
        Binding(
            "ctrl+s",
            "submit",
            "Submit answer",
            id="blind.submit",
            priority=True,
            tooltip="Commit the blind answer and trajectory, then reveal the gold",
        ),
        Binding("f2", "focus_answer", "Answer", id="blind.answer", tooltip="Write the answer"),
        Binding("f3", "focus_console", "Console", id="blind.console", tooltip="Type commands on a device"),
    ]

    @dataclass
    class Submitted(Message):
        """The reviewer confirmed the answer; the app commits it."""

        answer: str

    def __init__(
        self, start: BlindStart, session: ReviewSession, draft: str = "", prompt: str | None = None
    ) -> None:
        super().__init__()
        self.start = start
        self.session = session
        self._draft = draft
        self.prompt = prompt if prompt is not None else start.task.statement
        """What the runner tells an agent about this task (ctb-eval prompt ID), rendered by the same code."""
        self.heading = f"blind: {start.task_id} round {start.round} - {start.task.title or start.task_id}"

    def compose(self) -> ComposeResult:
        from ctbench.tui.replay_console import ReplayConsole

        yield TitleBar(self.heading)
        with Horizontal(id="blind-main"):
            with Vertical(id="blind-left"):
                with VerticalScroll(id="statement-box"):
                    yield Static(reflow(self.prompt), id="statement", markup=False)
                yield Label("Your answer (one line per root cause or path)", id="answer-label")
                yield TextArea(self._draft, id="answer", soft_wrap=True, tab_behavior="focus")
            yield ReplayConsole(self.session, id="console")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#statement-box").border_title = "What an agent is told (ctb-eval prompt)"
        self.query_one("#statement-box").border_subtitle = (
            "blind by seal" if self.start.sealed else "blind by honour: the gold is readable in your clone"
        )
        # an isolated session (ctbench.replay.isolated) is served by a process without the hidden part
        apart = hasattr(self.session, "sandboxed")
        self.query_one("#console").border_title = (
            "Devices (replayed apart, no hidden.yaml in view)" if apart else "Devices (replayed)"
        )
        if not getattr(self.app, "blink", True):
            for w in [*self.query(Input), *self.query(TextArea)]:
                w.cursor_blink = False
        self.query_one("#rc-input", Input).focus()

    def action_focus_answer(self) -> None:
        self.query_one("#answer", TextArea).focus()

    def action_focus_console(self) -> None:
        self.query_one("#rc-input", Input).focus()

    def action_submit(self) -> None:
        answer = self.query_one("#answer", TextArea).text
        lines = [line for line in answer.splitlines() if line.strip()]
        if not lines:
            self.notify("Write your answer first (F2): one line per root cause or path.", severity="warning")
            self.action_focus_answer()
            return

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self.post_message(self.Submitted(answer if answer.endswith("\n") else answer + "\n"))

        self.app.push_screen(ConfirmSubmit(len(lines)), done)

    @on(TextArea.Changed, "#answer")
    def _changed(self, event: TextArea.Changed) -> None:
        app = self.app
        if isinstance(app, BlindApp):
            app.save_draft(event.text_area.text)


class BlindApp(App[int]):
    """Blind solve then reveal (or, with ``reveal_only``, the reveal of an answer committed earlier)."""

    CSS_PATH = "blind_app.tcss"
    TITLE = "ctb-review"
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True)]

    @dataclass
    class Ready(Message):
        """The branch is checked out and the replay session is open."""

        start: BlindStart
        session: ReviewSession
        draft: str
        prompt: str = ""

    @dataclass
    class BlindCommitted(Message):
        """The blind answer is a commit: from now on the gold may be shown."""

        result: StepResult

    @dataclass
    class Failed(Message):
        title: str
        text: str

    def __init__(
        self,
        desk: ReviewDesk,
        task_id: str,
        reviewer: str,
        *,
        reveal_only: bool = False,
        blink: bool = True,
        engine_factory: Callable[[TaskSet], SessionOpener] | None = None,
    ) -> None:
        super().__init__()
        self.desk = desk
        self.task_id = task_id
        self.reviewer = reviewer
        self.reveal_only = reveal_only
        self.blink = blink
        self.exit_status = 0
        """The process exit code on quit: 1 after an error that ended the session."""
        self._engine_factory = engine_factory
        self._stack = ExitStack()
        self._session: ReviewSession | None = None
        self._draft_timer: Timer | None = None

    # -------------------------------------------------------------- life cycle

    def compose(self) -> ComposeResult:
        yield TitleBar(f"{'reveal' if self.reveal_only else 'blind'}: {self.task_id} ({self.reviewer})")
        with Vertical(id="message-box"):
            yield Label("Preparing", id="message-title")
            yield Static(f"Opening the review of {self.task_id}...", id="preparing")
        yield Footer()

    def on_mount(self) -> None:
        self._prepare()

    def on_unmount(self) -> None:
        if self._session is not None:
            try:
                self._session.close()
            except Exception:
                pass
        self._stack.close()

    @work(thread=True, exclusive=True, group="review")
    def _prepare(self) -> None:
        try:
            self._stack.enter_context(
                self.desk.repo.locked(f"{'reveal' if self.reveal_only else 'blind'} {self.task_id}")
            )
            if self.reveal_only:
                self.call_from_thread(self._show_reveal, False)
                return
            start = self.desk.begin_blind(self.task_id, self.reviewer)
            factory = self._engine_factory
            if factory is None:
                from ctbench.replay.isolated import IsolatedEngine

                factory = IsolatedEngine
            trajectory = self._blind_dir / f"{self.task_id}.jsonl"
            session = factory(self.desk.ts).open_session(self.task_id, trajectory_path=trajectory)
            self._session = session
            draft_file = self._draft_file
            draft = draft_file.read_text(encoding="utf-8") if draft_file.is_file() else ""
            from ctbench.scoring.prompt import prompt_for  # the runner's own prompt: same text, same code

            prompt = prompt_for(self.desk.ts, start.ref, start.task)
            self.post_message(self.Ready(start, session, draft, prompt))
        except CtbError as exc:
            self.post_message(self.Failed(f"Cannot open {self.task_id}", str(exc)))

    @property
    def _blind_dir(self) -> Path:
        return self.desk.repo.state_dir / "blind"

    @property
    def _draft_file(self) -> Path:
        return self._blind_dir / f"{self.task_id}.answer"

    def on_blind_app_ready(self, event: Ready) -> None:
        self.push_screen(BlindScreen(event.start, event.session, event.draft, event.prompt or None))
        if not event.start.sealed:
            from ctbench.review.workflow import HONOUR_NOTE

            self.notify(HONOUR_NOTE.format(id=event.start.task_id), severity="warning", timeout=12)
        if event.draft:
            self.notify("Your unsent answer from the last session is back in the editor.")

    def on_blind_app_failed(self, event: Failed) -> None:
        self.exit_status = 1
        self.push_screen(MessageScreen(event.title, event.text))

    async def action_quit(self) -> None:
        self.exit(return_code=self.exit_status)

    # -------------------------------------------------------------- draft autosave

    def save_draft(self, text: str) -> None:
        """Keep the unsent answer across a crash or a closed terminal (debounced)."""
        if self._draft_timer is not None:
            self._draft_timer.stop()
        self._draft_timer = self.set_timer(0.5, lambda: self._write_draft(text))

    def _write_draft(self, text: str) -> None:
        try:
            atomic_write_text(self._draft_file, text)
        except OSError:
            pass

    # -------------------------------------------------------------- submit and reveal

    def on_blind_screen_submitted(self, event: BlindScreen.Submitted) -> None:
        screen = self.screen
        if isinstance(screen, BlindScreen):
            self._commit_blind(screen.start, event.answer)

    @work(thread=True, exclusive=True, group="review")
    def _commit_blind(self, start: BlindStart, answer: str) -> None:
        try:
            if self._draft_timer is not None:
                self.call_from_thread(self._draft_timer.stop)
            session = self._session
            trajectory = None
            path = getattr(session, "trajectory_path", None)
            if session is not None:
                session.close()
            if path is not None and Path(path).is_file():
                trajectory = Path(path).read_bytes()
            result = self.desk.record_blind(start, answer, trajectory)
            if path is not None:
                Path(path).unlink(missing_ok=True)
            self._draft_file.unlink(missing_ok=True)
            self.post_message(self.BlindCommitted(result))
        except CtbError as exc:
            self.post_message(self.Failed("The blind answer was not committed", str(exc)))

    def on_blind_app_blind_committed(self, event: BlindCommitted) -> None:
        self.notify("Blind answer committed; revealing the gold.")
        self._show_reveal(True)

    def _show_reveal(self, replace: bool) -> None:
        from ctbench.review.reveal_screen import RevealScreen

        screen = RevealScreen(self.desk, self.task_id, self.reviewer)
        if replace:
            self.switch_screen(screen)  # no way back to the blind screen once the gold is shown
        else:
            self.push_screen(screen)
