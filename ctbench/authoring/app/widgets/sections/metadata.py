"""Metadata: the fields an author annotates, and beside them what ctbench derives from the task.

Observability, propagation-chain length, protocol mechanisms and (when it differs from the entries)
the root-cause count are authored. Categories, entries, path count, golden length, vendors, device
types and heterogeneity are derived; an author may also *declare* them, and any declared value that
disagrees with the derived one is highlighted (it is a validation error, as in ``ctb-author validate``).
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.widgets import DataTable, Input, Label, Select, Static

from ctbench.authoring.app.dialogs.form import FormDialog, FormField, FormValues
from ctbench.authoring.app.widgets.sections.base import Section
from ctbench.authoring.app.widgets.validation_panel import Target
from ctbench.authoring.app.workers import background
from ctbench.authoring.working_copy import EditError, split_csv
from ctbench.model import Family

AUTHORED_HELP = {
    "observability": "O1: decisive evidence directly observable with a permitted command; O2: only inferable.",
    "chain_length": "Propagation-chain length N_c: causal hops from the root cause to the observed symptom.",
    "protocol_mechanisms": "Mechanisms involved (forwarding, control plane, policy, redundancy…); N_p is their count.",
    "root_cause_count": "Independent root causes N_r, only when it differs from the number of gold entries.",
}


def show(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "—"
    return str(value)


def parse_declared(name: str, text: str) -> object:
    text = text.strip()
    if not text:
        return None
    if name == "categories":
        return [c.upper() for c in split_csv(text)]
    if name == "heterogeneity":
        return text
    try:
        return int(text)
    except ValueError:
        raise EditError(f"{name} is a whole number, not {text!r}") from None


def _int_or_none(text: str, what: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise EditError(f"{what}: a whole number, not {text!r}") from None


class MetadataSection(Section):
    SECTION_ID = "metadata"
    TITLE = "Metadata"
    HELP = "Authored fields above; below, declared values beside derived ones (red: they disagree)."

    BINDINGS = [
        Binding(
            "equals_sign",
            "declare_derived",
            "Declare derived",
            id="metadata.declare",
            tooltip="Declare the highlighted field with its derived value",
        ),
        Binding(
            "D",
            "declare_all",
            "Declare all",
            id="metadata.declare_all",
            tooltip="Declare every derived field with its derived value",
        ),
        Binding(
            "delete",
            "clear_declared",
            "Clear",
            id="metadata.clear",
            tooltip="Stop declaring the highlighted field",
        ),
    ]

    DEFAULT_CSS = """
    MetadataSection #meta-form { grid-size: 2; grid-columns: 24 1fr; grid-rows: 3; height: auto; }
    MetadataSection #meta-form Label { padding: 1 1 0 0; }
    MetadataSection #meta-form Select, MetadataSection #meta-form Input { min-width: 20; }
    MetadataSection #meta-status { height: auto; color: $text-muted; }
    MetadataSection #meta-error { height: auto; color: $error; }
    MetadataSection #meta-table { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        rca = self.session.family == Family.RCA
        yield Label(self.TITLE, classes="section-title")
        yield Label(self.HELP, classes="section-help")
        yield Static("", id="meta-status")
        with Grid(id="meta-form"):
            if rca:
                yield Label("Observability")
                yield Select[str](
                    [("O1 (direct)", "O1"), ("O2 (inferred)", "O2")],
                    id="meta-observability",
                    prompt="not set",
                    allow_blank=True,
                    tooltip=AUTHORED_HELP["observability"],
                )
                yield Label("Propagation chain N_c")
                yield Input(
                    id="meta-chain_length", placeholder="e.g. 2", tooltip=AUTHORED_HELP["chain_length"]
                )
            yield Label("Protocol mechanisms")
            yield Input(
                id="meta-protocol_mechanisms",
                placeholder="comma-separated, e.g. OSPF, static routing",
                tooltip=AUTHORED_HELP["protocol_mechanisms"],
            )
            if rca:
                yield Label("Root causes N_r (if ≠ entries)")
                yield Input(
                    id="meta-root_cause_count",
                    placeholder="leave empty when equal to the entries",
                    tooltip=AUTHORED_HELP["root_cause_count"],
                )
            yield Label("Rationale (one sentence)")
            yield Input(id="meta-rationale", placeholder="how the evidence leads to the answer")
        yield Static("", id="meta-error")
        yield Label(
            "Declared vs derived  (Enter: edit · =: declare the derived value · D: declare all · Del: clear)",
            classes="label",
        )
        yield DataTable(id="meta-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#meta-table", DataTable).add_columns("Field", "Declared", "Derived", "Check")
        self.refresh_view()

    # ------------------------------------------------------------------ view

    def refresh_view(self) -> None:
        draft = self.session.draft
        meta = draft.hidden.metadata
        self.query_one("#meta-status", Static).update(
            f"Status: {draft.task.status.value} (changed by the review workflow, not here) · "
            f"authors: {', '.join(draft.task.authors) or '—'}"
        )
        values = {
            "chain_length": "" if meta.chain_length is None else str(meta.chain_length),
            "protocol_mechanisms": ", ".join(meta.protocol_mechanisms),
            "root_cause_count": "" if meta.root_cause_count is None else str(meta.root_cause_count),
            "rationale": draft.hidden.rationale,
        }
        for key, value in values.items():
            for field in self.query(f"#meta-{key}").results(Input):
                if not field.has_focus and field.value != value:
                    with field.prevent(Input.Changed):
                        field.value = value
        for select in self.query("#meta-observability").results(Select):
            want = meta.observability.value if meta.observability else Select.NULL
            if select.value != want and not select.has_focus:
                with select.prevent(Select.Changed):
                    select.value = want
        table = self.query_one("#meta-table", DataTable)
        row = table.cursor_row
        table.clear()
        try:
            rows = self.session.metadata_rows()
        except Exception as exc:
            self.query_one("#meta-error", Static).update(f"derived metadata unavailable: {exc}")
            return
        for r in rows:
            if r.mismatch:
                check = Text("✗ mismatch", style="bold red")
                name = Text(r.name, style="bold red")
            elif r.declared is None:
                check, name = Text("derived only", style="dim"), Text(r.name)
            else:
                check, name = Text("✓", style="green"), Text(r.name)
            table.add_row(name, show(r.declared), show(r.derived), check, key=r.name)
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1), animate=False)

    def focus_first(self) -> None:
        first = self.query("#meta-observability, #meta-protocol_mechanisms").first()
        first.focus()

    def focus_target(self, target: Target) -> None:
        field = target.field or ""
        if field in ("observability", "chain_length", "protocol_mechanisms", "root_cause_count", "rationale"):
            found = self.query(f"#meta-{field}")
            if found:
                found.first().focus()
                return
        table = self.query_one("#meta-table", DataTable)
        names = [r.name for r in self.session.metadata_rows()]
        self.move_to_row(table, names.index(field) if field in names else None)

    # ------------------------------------------------------------------ authored fields

    def _apply(self, change: dict[str, object] | None = None, *, rationale: str | None = None) -> None:
        error = self.query_one("#meta-error", Static)
        try:
            if change:
                self.session.set_metadata(**change)
            if rationale is not None:
                self.session.set_rationale(rationale)
        except EditError as exc:
            error.update(str(exc))
            return
        error.update("")
        self.post_message(self.Edited(self.SECTION_ID, "metadata"))

    @on(Select.Changed, "#meta-observability")
    def _observability(self, event: Select.Changed) -> None:
        value = event.value if isinstance(event.value, str) else None
        current = self.session.draft.hidden.metadata.observability
        if (current.value if current else None) != value:
            self._apply({"observability": value})

    @on(Input.Changed, "#meta-chain_length")
    def _chain(self, event: Input.Changed) -> None:
        try:
            self._apply({"chain_length": _int_or_none(event.value, "propagation chain")})
        except EditError as exc:
            self.query_one("#meta-error", Static).update(str(exc))

    @on(Input.Changed, "#meta-root_cause_count")
    def _rcc(self, event: Input.Changed) -> None:
        try:
            self._apply({"root_cause_count": _int_or_none(event.value, "root-cause count")})
        except EditError as exc:
            self.query_one("#meta-error", Static).update(str(exc))

    @on(Input.Changed, "#meta-protocol_mechanisms")
    def _mechanisms(self, event: Input.Changed) -> None:
        self._apply({"protocol_mechanisms": split_csv(event.value)})

    @on(Input.Changed, "#meta-rationale")
    def _rationale(self, event: Input.Changed) -> None:
        self._apply(rationale=event.value)

    @on(Input.Submitted)
    def _next_field(self, event: Input.Submitted) -> None:
        event.stop()
        self.screen.focus_next()

    # ------------------------------------------------------------------ declared values

    def _current_row(self) -> str | None:
        table = self.query_one("#meta-table", DataTable)
        rows = self.session.metadata_rows()
        if not rows or table.cursor_row is None or table.cursor_row >= len(rows):
            return None
        return rows[table.cursor_row].name

    def _declare(self, name: str, value: object) -> None:
        if name == "root_cause_count":
            self.edit(lambda s: s.set_metadata(root_cause_count=value), name)
        else:
            self.edit(lambda s: s.set_metadata(declared={name: value}), name)

    def action_declare_derived(self) -> None:
        name = self._current_row()
        if name is None:
            return
        derived = next(r.derived for r in self.session.metadata_rows() if r.name == name)
        self._declare(name, derived)

    def action_declare_all(self) -> None:
        rows = [r for r in self.session.metadata_rows() if r.name != "root_cause_count"]
        self.edit(lambda s: s.set_metadata(declared={r.name: r.derived for r in rows}), "declared all")

    def action_clear_declared(self) -> None:
        name = self._current_row()
        if name is not None:
            self._declare(name, None)

    @on(DataTable.RowSelected, "#meta-table")
    def _edit_declared(self) -> None:
        self._edit_declared_dialog()

    @background()
    async def _edit_declared_dialog(self) -> None:
        name = self._current_row()
        if name is None:
            return
        row = next(r for r in self.session.metadata_rows() if r.name == name)

        def check(values: FormValues) -> str | None:
            try:
                value = parse_declared(name, values["value"])
            except EditError as exc:
                return str(exc)
            if name == "root_cause_count":
                return self.try_edit(lambda s: s.set_metadata(root_cause_count=value))
            return self.try_edit(lambda s: s.set_metadata(declared={name: value}))

        current = "" if row.declared is None else show(row.declared)
        await self.app.push_screen_wait(
            FormDialog(
                f"Declare {name} (derived: {show(row.derived)})",
                [
                    FormField("value", f"{name} (empty: do not declare)", current),
                ],
                check=check,
                submit_label="Save",
            )
        )
