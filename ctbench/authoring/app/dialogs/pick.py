"""Pick one value from a list by typing a few letters of it: the pickers behind nodes, objects, labels.

Typing filters the list (every word must appear, in any order, case ignored); Up/Down move the
highlight; Enter takes the highlighted entry. When ``allow_custom`` is set, text that matches nothing
is returned as typed, and an explicit "use as typed" entry is offered at the end of the list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from ctbench.authoring.app.dialogs.base import Dialog


@dataclass(frozen=True)
class Choice:
    """A value and how it is shown: ``label`` in full, ``detail`` dimmed after it (searched too)."""

    value: str
    label: str
    detail: str = ""

    def matches(self, words: Sequence[str]) -> bool:
        hay = f"{self.label} {self.detail} {self.value}".lower()
        return all(w in hay for w in words)


CUSTOM = "\x00custom"


class PickDialog(Dialog[str | None]):
    """Returns the chosen value, the typed text (``allow_custom``), or None when cancelled."""

    DEFAULT_CSS = """
    PickDialog OptionList { height: auto; max-height: 16; margin-top: 1; }
    """

    BINDINGS = [
        Binding("down", "move(1)", "Next", show=False, id="pick.down"),
        Binding("up", "move(-1)", "Previous", show=False, id="pick.up"),
        Binding("pagedown", "move(10)", show=False, id="pick.pagedown"),
        Binding("pageup", "move(-10)", show=False, id="pick.pageup"),
    ]

    def __init__(
        self,
        title: str,
        choices: Sequence[Choice],
        *,
        allow_custom: bool = False,
        initial: str = "",
        help: str = "",
        placeholder: str = "type to filter, Enter to choose",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.choices = list(choices)
        self.allow_custom = allow_custom
        self.initial = initial
        self.help = help
        self.placeholder = placeholder
        self.shown: list[Choice] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield Input(value=self.initial, placeholder=self.placeholder, id="pick-filter")
            yield OptionList(id="pick-options")
            hint = self.help or (
                "Enter: choose · ↑↓: move · Esc: cancel"
                + (" · text that matches nothing is used as typed" if self.allow_custom else "")
            )
            yield Static(hint, classes="dialog-help")

    def on_mount(self) -> None:
        self._refilter(self.initial)
        self.query_one("#pick-filter", Input).focus()

    def _refilter(self, text: str) -> None:
        words = text.lower().split()
        exact = [c for c in self.choices if c.value.lower() == text.strip().lower() and text.strip()]
        rest = [c for c in self.choices if c.matches(words) and c not in exact]
        self.shown = exact + rest
        options: list[Option] = []
        for c in self.shown:
            prompt = Text(c.label)
            if c.detail:
                prompt.append("  " + c.detail, style="dim")
            options.append(Option(prompt))
        typed = text.strip()
        if self.allow_custom and typed and not exact:
            self.shown.append(Choice(CUSTOM, typed))
            options.append(Option(Text.assemble(("✎ use as typed: ", "italic"), typed)))
        ol = self.query_one("#pick-options", OptionList)
        ol.set_options(options)
        ol.highlighted = 0 if options else None

    @on(Input.Changed, "#pick-filter")
    def _changed(self, event: Input.Changed) -> None:
        self._refilter(event.value)

    @on(Input.Submitted, "#pick-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        ol = self.query_one("#pick-options", OptionList)
        if ol.highlighted is not None and ol.highlighted < len(self.shown):
            self._choose(ol.highlighted)
        elif self.allow_custom and event.value.strip():
            self.dismiss(event.value.strip())
        else:
            self.app.bell()

    @on(OptionList.OptionSelected, "#pick-options")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._choose(event.option_index)

    def _choose(self, index: int) -> None:
        choice = self.shown[index]
        if choice.value == CUSTOM:
            self.dismiss(choice.label)
        else:
            self.dismiss(choice.value)

    def action_move(self, step: int) -> None:
        ol = self.query_one("#pick-options", OptionList)
        if not ol.option_count:
            return
        current = ol.highlighted if ol.highlighted is not None else 0
        ol.highlighted = max(0, min(ol.option_count - 1, current + step))
