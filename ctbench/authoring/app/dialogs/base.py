"""What every dialog of the app shares: a centred framed box, Escape to cancel, no blinking in tests."""

from __future__ import annotations

from typing import TypeVar

from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.screen import ModalScreen

from ctbench.authoring.app.blink import apply_blink

ResultT = TypeVar("ResultT")


class Dialog(ModalScreen[ResultT]):
    """A modal dialog; ``dismiss(value)`` returns the typed result, Escape returns ``cancel_value``."""

    DEFAULT_CSS = """
    Dialog {
        align: center middle;
        background: $background 60%;
    }
    Dialog > .dialog {
        width: 90;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: thick $primary 80%;
        background: $surface;
        padding: 1 2;
    }
    Dialog .dialog-title { text-style: bold; padding-bottom: 1; width: 1fr; }
    Dialog .dialog-help { color: $text-muted; padding-top: 1; }
    Dialog .dialog-error { color: $error; height: auto; }
    Dialog .dialog-buttons { height: auto; align-horizontal: right; padding-top: 1; }
    Dialog .dialog-buttons Button { margin-left: 2; }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel", tooltip="Close without a choice")]

    cancel_value: ResultT | None = None

    _answered = False

    def dismiss(self, result: ResultT | None = None) -> AwaitComplete:
        """Answer once. Keys typed fast reach the dialog before it is gone: a second answer would
        dismiss the screen under it (closing the editor unasked) or, at the bottom, raise
        ``ScreenStackError``. Any answer after the first is ignored."""
        if self._answered or not self.is_current:
            return AwaitComplete()
        self._answered = True
        return super().dismiss(result)

    def on_screen_resume(self) -> None:
        apply_blink(self)

    def action_cancel(self) -> None:
        self.dismiss(self.cancel_value)
