"""Golden actions: the recorded observations the diagnosis needs, each with the reason it matters.

They are picked from the recordings (a golden action without a recording could never be replayed),
and their order is free: the paper scores coverage of the set, not the sequence.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Label, Static

from ctbench.authoring.app.dialogs.confirm import ConfirmDialog
from ctbench.authoring.app.dialogs.form import FormDialog, FormField, FormValues
from ctbench.authoring.app.dialogs.pick import Choice, PickDialog
from ctbench.authoring.app.widgets.sections.base import Section
from ctbench.authoring.app.widgets.validation_panel import Target
from ctbench.authoring.app.workers import background


class GoldenSection(Section):
    SECTION_ID = "golden"
    TITLE = "Golden actions"
    HELP = "Key evidence steps, picked from the recordings; the order is free. Each needs a reason."

    BINDINGS = [
        Binding("a", "add", "Add", id="golden.add", tooltip="Pick a recording as a golden action"),
        Binding(
            "e", "edit", "Edit reason", id="golden.edit", tooltip="Change why the highlighted action matters"
        ),
        Binding("x", "remove", "Remove", id="golden.remove", tooltip="Remove the highlighted golden action"),
    ]

    def compose(self) -> ComposeResult:
        yield Label(self.TITLE, classes="section-title")
        yield Label(self.HELP, classes="section-help")
        yield DataTable(id="golden-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="golden-why", classes="detail")  # the highlighted reason in full, wrapped

    def on_mount(self) -> None:
        self.query_one("#golden-table", DataTable).add_columns("#", "Device", "Command", "Why")
        self.refresh_view()

    def refresh_view(self) -> None:
        table = self.query_one("#golden-table", DataTable)
        row = table.cursor_row
        table.clear()
        for i, act in enumerate(self.session.draft.hidden.golden_actions):
            table.add_row(str(i + 1), act.device, act.command, act.why or "(no reason given)")
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1), animate=False)
        self._show_why(table.cursor_row)

    @on(DataTable.RowHighlighted, "#golden-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_why(event.cursor_row)

    def _show_why(self, row: int) -> None:
        actions = self.session.draft.hidden.golden_actions
        text = f"Why #{row + 1}: {actions[row].why or '(no reason given)'}" if 0 <= row < len(actions) else ""
        self.query_one("#golden-why", Static).update(text)

    def focus_first(self) -> None:
        self.query_one("#golden-table", DataTable).focus()

    def focus_target(self, target: Target) -> None:
        self.move_to_row(self.query_one("#golden-table", DataTable), target.row)

    def _index(self) -> int | None:
        table = self.query_one("#golden-table", DataTable)
        n = len(self.session.draft.hidden.golden_actions)
        return table.cursor_row if n and table.cursor_row is not None and table.cursor_row < n else None

    @background()
    async def action_add(self) -> None:
        candidates = self.session.golden_candidates()
        if not candidates:
            self.notify(
                "Every recording is already a golden action; add recordings first.", severity="warning"
            )
            return
        choices = [Choice(str(i), f"{r.device}  {r.command}") for i, r in enumerate(candidates)]
        picked = await self.app.push_screen_wait(
            PickDialog("Which recorded observation is key evidence?", choices)
        )
        if picked is None:
            return
        rec = candidates[int(picked)]

        def check(values: FormValues) -> str | None:
            return self.try_edit(lambda s: s.add_golden(rec.device, rec.command, values["why"]))

        await self.app.push_screen_wait(
            FormDialog(
                f"Golden action: {rec.device} {rec.command}",
                [
                    FormField("why", "Why this observation matters for the diagnosis", required=True),
                ],
                check=check,
                submit_label="Add",
            )
        )

    @background()
    async def action_edit(self) -> None:
        idx = self._index()
        if idx is None:
            return
        act = self.session.draft.hidden.golden_actions[idx]

        def check(values: FormValues) -> str | None:
            return self.try_edit(lambda s: s.set_golden_why(idx, values["why"]))

        await self.app.push_screen_wait(
            FormDialog(
                f"Golden action: {act.device} {act.command}",
                [
                    FormField(
                        "why", "Why this observation matters for the diagnosis", act.why, required=True
                    ),
                ],
                check=check,
                submit_label="Save",
            )
        )

    @background()
    async def action_remove(self) -> None:
        idx = self._index()
        if idx is None:
            return
        act = self.session.draft.hidden.golden_actions[idx]
        if await self.app.push_screen_wait(
            ConfirmDialog(
                f"Remove the golden action {act.device} {act.command}?", detail="The recording stays."
            )
        ):
            self.edit(lambda s: s.remove_golden(idx), "golden removed")

    @on(DataTable.RowSelected, "#golden-table")
    def _selected(self) -> None:
        self.action_edit()
