"""What every editor section shares: access to the edit session, and one way to make an edit.

A section never writes files. It calls an :class:`~ctbench.authoring.editing.EditSession` method
through :meth:`Section.edit`, which turns a refused edit into a notification and a successful one
into an :class:`Section.Edited` message; the editor screen reacts to that message (dirty flag,
autosave, live validation, refreshing the other sections), so no section needs to know the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeVar, cast

from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable

from ctbench.authoring.app.workers import ReportsWorkerErrors
from ctbench.authoring.editing import EditSession
from ctbench.authoring.working_copy import EditError
from ctbench.errors import CtbError

if TYPE_CHECKING:
    from ctbench.authoring.app.widgets.validation_panel import Target

T = TypeVar("T")


class EditorHost(Protocol):
    """The screen sections live on (the editor screen)."""

    session: EditSession
    author: str


class Section(ReportsWorkerErrors, Vertical):
    """Base of the editor sections; ``SECTION_ID``/``TITLE`` name it in the navigation list."""

    SECTION_ID: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    HELP: ClassVar[str] = ""

    DEFAULT_CSS = """
    Section { height: 1fr; padding: 0 1; }
    Section .section-title { text-style: bold; color: $accent; height: 1; }
    Section .section-help { color: $text-muted; height: auto; width: 1fr; }  /* wraps on a narrow screen */
    Section .detail { height: auto; max-height: 6; width: 1fr; padding: 0 1; color: $text-muted; }
    Section .label { padding-top: 1; color: $text-muted; }
    Section DataTable { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # Tab and shift+tab cycle through this section's fields only: they never carry the focus (and
        # the typing that follows) off into the navigation or the findings list.
        self.trap_focus()

    @dataclass
    class Edited(Message):
        """The draft changed through this section; ``what`` is a short description."""

        section: str
        what: str = ""

    @property
    def host(self) -> EditorHost:
        return cast(EditorHost, self.screen)  # sections are only mounted on the editor screen

    @property
    def session(self) -> EditSession:
        return self.host.session

    def edit(self, change: Callable[[EditSession], T], what: str = "") -> T | None:
        """Apply ``change`` to the session; refused edits are shown, accepted ones announced."""
        try:
            result = change(self.session)
        except (EditError, CtbError, ValueError) as exc:
            self.notify(str(exc), title="Not changed", severity="error", timeout=8)
            return None
        self.post_message(self.Edited(self.SECTION_ID, what))
        return result

    def try_edit(self, change: Callable[[EditSession], object]) -> str | None:
        """For a dialog's ``check``: None when the edit was made, else the reason it was refused."""
        try:
            change(self.session)
        except (EditError, CtbError, ValueError) as exc:
            return str(exc)
        self.post_message(self.Edited(self.SECTION_ID))
        return None

    def refresh_view(self) -> None:
        """Show the session's current state (called after every edit anywhere in the editor)."""

    def focus_first(self) -> None:
        """Put the focus where work in this section starts."""
        self.focus_next_in()

    def focus_next_in(self) -> None:
        for widget in self.query("*"):
            if widget.focusable:
                widget.focus()
                return

    def focus_target(self, target: Target) -> None:
        """Show what a validation finding points at (a row of a table, a field)."""
        self.focus_first()

    @staticmethod
    def move_to_row(table: DataTable, row: int | None) -> None:
        table.focus()
        if row is not None and 0 <= row < table.row_count:
            table.move_cursor(row=row, animate=False)
