"""Yes/no and several-way questions, answered with a key or a click."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.events import Key
from textual.widgets import Button, Label, Static
from textual.widgets.button import ButtonVariant

from ctbench.authoring.app.dialogs.base import Dialog


class ConfirmDialog(Dialog[bool]):
    """Ask before doing something that cannot be undone; returns True only on an explicit yes.

    The safe answer has the focus, so a stray Enter never deletes anything.
    """

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes", tooltip="Go ahead"),
        Binding("n", "answer(False)", "No", id="confirm.no", tooltip="Leave things as they are"),
    ]
    cancel_value = False

    def __init__(
        self, question: str, *, detail: str = "", yes: str = "Yes", no: str = "No", danger: bool = False
    ) -> None:
        super().__init__()
        self.question, self.detail, self.yes, self.no, self.danger = question, detail, yes, no, danger

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="dialog-title")
            if self.detail:
                yield Static(self.detail, classes="dialog-help")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.yes} (y)", id="yes", variant="error" if self.danger else "primary")
                yield Button(f"{self.no} (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


@dataclass(frozen=True)
class Option:
    """One answer of a :class:`ChoiceDialog`: ``key`` answers it from the keyboard."""

    value: str
    label: str
    key: str
    variant: ButtonVariant = "default"


class ChoiceDialog(Dialog[str | None]):
    """A question with several answers (Save / Discard / Keep draft / Cancel); returns the value or None."""

    def __init__(
        self, question: str, options: Sequence[Option], *, detail: str = "", focus: str | None = None
    ) -> None:
        super().__init__()
        self.question, self.options, self.detail = question, list(options), detail
        self.focus_value = focus or (self.options[-1].value if self.options else None)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="dialog-title")
            if self.detail:
                yield Static(self.detail, classes="dialog-help")
            with Horizontal(classes="dialog-buttons"):
                for opt in self.options:
                    yield Button(f"{opt.label} ({opt.key})", id=f"choice-{opt.value}", variant=opt.variant)

    def on_mount(self) -> None:
        if self.focus_value is not None:
            self.query_one(f"#choice-{self.focus_value}", Button).focus()

    def on_key(self, event: Key) -> None:
        for opt in self.options:
            if event.key == opt.key:
                event.stop()
                self.dismiss(opt.value)
                return

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        value = (event.button.id or "").removeprefix("choice-")
        self.dismiss(value)
