"""Try it: the task from the agent's side, through the real replay engine, unsaved edits included.

The working copy is laid out as a one-task task set in a temporary folder (the same shadow live
validation uses) and a replay session is opened on its visible part by a separate process
(:mod:`ctbench.replay.isolated`: no hidden.yaml in its view), so prompts, abbreviations, errors and
permission denials are exactly what an agent will get once the task is saved.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Label

from ctbench.authoring.app.widgets.sections.base import Section
from ctbench.authoring.app.workers import background
from ctbench.authoring.shadow import write_shadow
from ctbench.authoring.working_copy import TaskDraft
from ctbench.replay.isolated import IsolatedEngine
from ctbench.store import TaskSet
from ctbench.tui.replay_console import ReplayConsole


def open_replay(ts: TaskSet, draft: TaskDraft, folder: Path) -> tuple[Any | None, str]:
    """(session or None, note) — a replay session on the draft laid out under ``folder``."""
    try:
        shadow = write_shadow(ts, draft, folder)
        # served apart, as blind review is: the answering process has no hidden.yaml in its view
        session = IsolatedEngine(shadow).open_session(draft.id)
    except Exception as exc:  # the engine refuses broken tasks with its own message: show it
        return None, f"The replay engine cannot open this task yet: {exc}"
    return session, (
        f"Replaying the working copy of {draft.id} (unsaved edits included) from a process "
        "with no hidden.yaml in its view; the agent sees exactly this. Ctrl+R reloads after edits."
    )


class TryItSection(Section):
    SECTION_ID = "tryit"
    TITLE = "Try it"
    HELP = (
        "Query the devices as an agent will: abbreviations, errors and denials as the replay backend answers."
    )

    BINDINGS = [
        Binding(
            "ctrl+r",
            "reload",
            "Reload",
            id="tryit.reload",
            tooltip="Reopen the replay session on the current working copy",
        )
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._tmp: Path | None = None
        self._session: Any | None = None
        self._opened_revision = -1

    def compose(self) -> ComposeResult:
        yield Label(self.TITLE, classes="section-title")
        yield Label(self.HELP, classes="section-help")
        yield ReplayConsole(id="tryit-console", note="")

    def on_show(self) -> None:
        revision = getattr(self.screen, "revision", 0)
        if revision != self._opened_revision:
            self.action_reload()

    def action_reload(self) -> None:
        self._opened_revision = getattr(self.screen, "revision", 0)
        self._open(self.session.snapshot())

    @background(thread=True, exclusive=True, group="tryit")
    def _open(self, draft: TaskDraft) -> None:
        old_tmp, old_session = self._tmp, self._session
        tmp = Path(tempfile.mkdtemp(prefix="ctb-tryit-"))
        session, note = open_replay(self.session.ts, draft, tmp)
        self._tmp, self._session = tmp, session
        self.app.call_from_thread(self.query_one(ReplayConsole).set_session, session, note=note)
        _close(old_session, old_tmp)

    def focus_first(self) -> None:
        self.query_one("#rc-input").focus()

    def on_unmount(self) -> None:
        _close(self._session, self._tmp)
        self._session, self._tmp = None, None


def _close(session: Any | None, folder: Path | None) -> None:
    """End a replay session and remove the shadow task set it replayed."""
    close = getattr(session, "close", None)
    if callable(close):
        try:
            close()
        except Exception:  # closing twice or a transport already gone: nothing left to clean
            pass
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
