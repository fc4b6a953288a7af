"""A small form in a dialog: a few labelled fields, checked before the dialog closes.

Enter in a one-line field moves to the next field and submits from the last one; Ctrl+S submits from
anywhere (multi-line fields keep Enter for new lines). The ``check`` callback sees the values and
returns an error message to keep the dialog open with the message shown, or None to close it: the
caller can run the real edit inside ``check`` so that a refused edit never loses what was typed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Select, Static, TextArea

from ctbench.authoring.app.dialogs.base import Dialog

FormValues = dict[str, str]


@dataclass(frozen=True)
class FormField:
    key: str
    label: str
    value: str = ""
    kind: Literal["input", "text", "select"] = "input"
    placeholder: str = ""
    options: Sequence[tuple[str, str]] = field(default_factory=tuple)
    """(label, value) pairs for ``select`` fields."""
    required: bool = False
    help: str = ""
    suggestions: Sequence[str] = field(default_factory=tuple)
    """Completions offered while typing in an ``input`` field (Right arrow accepts)."""


class FormDialog(Dialog[FormValues | None]):
    """Returns the field values by key, or None when cancelled."""

    DEFAULT_CSS = """
    FormDialog .form-body { height: auto; max-height: 30; }
    FormDialog .form-label { padding-top: 1; }
    FormDialog .form-help { color: $text-muted; }
    FormDialog TextArea { height: 10; }
    """

    BINDINGS = [
        Binding(
            "ctrl+s", "submit", "Done", id="form.submit", tooltip="Check and accept the form", priority=True
        )
    ]

    def __init__(
        self,
        title: str,
        fields: Sequence[FormField],
        *,
        check: Callable[[FormValues], str | None] | None = None,
        submit_label: str = "OK",
        help: str = "",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.fields = list(fields)
        self.check = check
        self.submit_label = submit_label
        self.help = help

    def compose(self) -> ComposeResult:
        from textual.suggester import SuggestFromList

        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            with VerticalScroll(classes="form-body"):
                for f in self.fields:
                    yield Label(f.label + (" *" if f.required else ""), classes="form-label")
                    wid = f"field-{f.key}"
                    if f.kind == "text":
                        yield TextArea(
                            f.value, id=wid, soft_wrap=False, show_line_numbers=False, tab_behavior="focus"
                        )
                    elif f.kind == "select":
                        yield Select[str](
                            list(f.options),
                            id=wid,
                            value=f.value if f.value else Select.NULL,
                            allow_blank=not f.required,
                        )
                    else:
                        suggester = (
                            SuggestFromList(f.suggestions, case_sensitive=False) if f.suggestions else None
                        )
                        yield Input(f.value, id=wid, placeholder=f.placeholder, suggester=suggester)
                    if f.help:
                        yield Static(f.help, classes="form-help")
            yield Static("", classes="dialog-error", id="form-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.submit_label} (ctrl+s)", id="form-ok", variant="primary")
                yield Button("Cancel (esc)", id="form-cancel")
            if self.help:
                yield Static(self.help, classes="dialog-help")

    def on_mount(self) -> None:
        if self.fields:
            self.query_one(f"#field-{self.fields[0].key}").focus()

    def values(self) -> FormValues:
        out: FormValues = {}
        for f in self.fields:
            w = self.query_one(f"#field-{f.key}")
            if isinstance(w, TextArea):
                out[f.key] = w.text
            elif isinstance(w, Select):
                out[f.key] = "" if w.value is Select.NULL or w.value is None else str(w.value)
            elif isinstance(w, Input):
                out[f.key] = w.value
        return out

    def show_error(self, message: str) -> None:
        self.query_one("#form-error", Static).update(message)

    def action_submit(self) -> None:
        values = self.values()
        missing = [f.label for f in self.fields if f.required and not values.get(f.key, "").strip()]
        if missing:
            self.show_error("Please fill in: " + ", ".join(missing))
            return
        if self.check is not None:
            problem = self.check(values)
            if problem:
                self.show_error(problem)
                return
        self.dismiss(values)

    @on(Input.Submitted)
    def _enter(self, event: Input.Submitted) -> None:
        event.stop()
        keys = [f.key for f in self.fields]
        current = (event.input.id or "").removeprefix("field-")
        if current in keys and keys.index(current) < len(keys) - 1:
            self.focus_next()
        else:
            self.action_submit()

    @on(Button.Pressed, "#form-ok")
    def _ok(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#form-cancel")
    def _cancel(self) -> None:
        self.dismiss(None)
