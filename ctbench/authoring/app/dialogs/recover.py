"""Offer autosaved drafts back after a crash: recover one, discard one, or decide later."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Label, OptionList, Static
from textual.widgets.option_list import Option

from ctbench.authoring.app.dialogs.base import Dialog
from ctbench.authoring.drafts import DraftInfo


@dataclass(frozen=True)
class RecoverChoice:
    action: Literal["recover", "discard"]
    task_id: str


class RecoverDialog(Dialog[RecoverChoice | None]):
    """Returns what to do with which draft, or None for "later" (the drafts stay on disk)."""

    BINDINGS = [
        Binding(
            "enter",
            "choose('recover')",
            "Recover",
            id="recover.recover",
            tooltip="Open the highlighted draft in the editor",
            priority=True,
        ),
        Binding(
            "d",
            "choose('discard')",
            "Discard",
            id="recover.discard",
            tooltip="Delete the highlighted draft (asks first)",
        ),
        Binding("escape", "cancel", "Later", id="recover.later", tooltip="Keep the drafts and go on"),
    ]

    def __init__(self, drafts: Sequence[DraftInfo]) -> None:
        super().__init__()
        self.drafts = list(drafts)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Unsaved work was found", classes="dialog-title")
            yield Static(
                "These drafts were autosaved by an editing session that did not end with a save "
                "(a crash, a closed terminal, a lost connection)."
            )
            yield OptionList(*[Option(Text(d.describe())) for d in self.drafts], id="recover-list")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Recover (enter)", id="recover", variant="primary")
                yield Button("Discard (d)", id="discard", variant="error")
                yield Button("Later (esc)", id="later")

    def on_mount(self) -> None:
        ol = self.query_one("#recover-list", OptionList)
        ol.highlighted = 0
        ol.focus()

    def _current(self) -> DraftInfo | None:
        idx = self.query_one("#recover-list", OptionList).highlighted
        return self.drafts[idx] if idx is not None and idx < len(self.drafts) else None

    def action_choose(self, action: Literal["recover", "discard"]) -> None:
        draft = self._current()
        if draft is not None:
            self.dismiss(RecoverChoice(action, draft.task_id))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "later":
            self.dismiss(None)
        elif event.button.id == "recover":
            self.action_choose("recover")
        elif event.button.id == "discard":
            self.action_choose("discard")
