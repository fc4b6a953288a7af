"""The task changed on disk while it was open: what is kept from there, and a choice per clashing part.

Shown instead of a bare "overwrite?" when a save finds the files changed behind the author's back
(:mod:`ctbench.authoring.merge`). What only the other side changed is listed and kept; each part both
sides changed is a row with the two versions side by side, and Space switches which one is kept.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, DataTable, Label, Static

from ctbench.authoring.app.dialogs.base import Dialog
from ctbench.authoring.merge import MergePlan, Side

KEEP_TEXT: dict[Side, str] = {"mine": "yours", "disk": "on disk"}


class MergeDialog(Dialog[dict[str, Side] | None]):
    """Returns the side kept for each conflict (key -> "mine"/"disk"), or None to cancel the save."""

    DEFAULT_CSS = """
    MergeDialog .merge-kept { height: auto; max-height: 8; color: $text; }
    MergeDialog #merge-table { height: auto; max-height: 10; }
    MergeDialog #merge-sides { height: auto; max-height: 12; }
    MergeDialog #merge-sides Static { width: 1fr; padding: 0 1; }
    """

    BINDINGS = [
        Binding(
            "space",
            "switch_side",
            "Keep the other",
            id="merge.toggle",
            tooltip="Switch which version is kept",
        ),
        Binding("ctrl+s", "save", "Save merged", id="merge.save", priority=True, tooltip="Save the merge"),
    ]

    def __init__(self, task_id: str, plan: MergePlan) -> None:
        super().__init__()
        self.task_id = task_id
        self.plan = plan
        self.choices: dict[str, Side] = {c.key: "mine" for c in plan.conflicts}

    def compose(self) -> ComposeResult:
        plan = self.plan
        with Vertical(classes="dialog"):
            yield Label(f"{self.task_id} changed on disk since you opened it", classes="dialog-title")
            kept = "\n".join(f"• {line}" for line in plan.kept) or "• nothing changed there that you did not"
            with VerticalScroll(classes="merge-kept"):
                yield Static(f"Merged into your version:\n{kept}", id="merge-kept")
            if plan.conflicts:
                yield Static(
                    f"Changed on both sides ({len(plan.conflicts)}): Space switches which one is kept",
                    classes="dialog-help",
                )
                yield DataTable(id="merge-table", cursor_type="row", zebra_stripes=True)
                with Horizontal(id="merge-sides"):
                    yield Static("", id="merge-mine")
                    yield Static("", id="merge-disk")
            yield Static("Your edits are safe in the draft either way.", classes="dialog-help")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save merged (ctrl+s)", id="merge-save", variant="primary")
                yield Button("Cancel (esc)", id="merge-cancel")

    def on_mount(self) -> None:
        if not self.plan.conflicts:
            self.query_one("#merge-save", Button).focus()
            return
        table = self.query_one("#merge-table", DataTable)
        table.add_column("part", key="part")
        table.add_column("keep", key="keep")
        for c in self.plan.conflicts:
            table.add_row(c.what, KEEP_TEXT["mine"], key=c.key)
        table.focus()
        self._show_sides(0)

    def _show_sides(self, row: int) -> None:
        if not 0 <= row < len(self.plan.conflicts):
            return
        c = self.plan.conflicts[row]
        self.query_one("#merge-mine", Static).update(f"Yours:\n{c.mine}")
        self.query_one("#merge-disk", Static).update(f"On disk:\n{c.disk}")

    @on(DataTable.RowHighlighted, "#merge-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_sides(event.cursor_row)

    @on(DataTable.RowSelected, "#merge-table")
    def _selected(self) -> None:
        self.action_switch_side()

    def action_switch_side(self) -> None:
        if not self.plan.conflicts:
            return
        table = self.query_one("#merge-table", DataTable)
        key = self.plan.conflicts[table.cursor_row].key
        self.choices[key] = "disk" if self.choices[key] == "mine" else "mine"
        table.update_cell(key, "keep", KEEP_TEXT[self.choices[key]])

    def action_save(self) -> None:
        self.dismiss(dict(self.choices))

    @on(Button.Pressed, "#merge-save")
    def _save(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#merge-cancel")
    def _cancel(self) -> None:
        self.dismiss(None)
