"""The task list: one row per task folder, filled in as the background loaders learn more.

A row appears as soon as the folder is listed (id and family cost no file read); status, title and
root-cause categories arrive when ``task.yaml``/``hidden.yaml`` are read; the validation state last.
So a task set of thousands of tasks shows its list at once and never waits for validation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from rich.text import Text
from textual.widgets import DataTable

from ctbench.model import Family


@dataclass
class TaskRow:
    """What the list knows about one task (None: not known yet)."""

    id: str
    family: Family
    status: str | None = None
    title: str | None = None
    categories: list[str] | None = None
    errors: int | None = None
    warnings: int | None = None
    problem: str | None = None
    """Why the files could not be read, when they could not."""
    has_draft: bool = False
    extra: dict[str, str] = field(default_factory=dict)

    def validation(self) -> Text:
        if self.problem is not None:
            return Text("✗ unreadable", style="bold red")
        if self.errors is None:
            return Text("…", style="dim")
        if self.errors:
            text = Text(f"✗ {self.errors}", style="bold red")
            if self.warnings:
                text.append(f" !{self.warnings}", style="yellow")
            return text
        if self.warnings:
            return Text(f"✓ !{self.warnings}", style="yellow")
        return Text("✓", style="green")

    def cells(self) -> tuple[str | Text, ...]:
        pending = Text("…", style="dim")
        title = self.title if self.title is not None else pending
        if self.has_draft:
            title = Text.assemble(("✎ ", "bold"), title)
        return (
            self.id,
            self.family.value,
            self.status or pending,
            ", ".join(self.categories) if self.categories is not None else pending,
            self.validation(),
            title,
        )

    def matches(self, query: ParsedQuery) -> bool:
        for key, value in query.fields:
            if key == "family" and self.family.value != value:
                return False
            if key == "status" and (self.status or "") != value:
                return False
            if key in ("cat", "category") and value.upper() not in (self.categories or []):
                return False
            if key == "valid":
                ok = self.errors == 0 and self.problem is None
                if ok != (value in ("yes", "true", "1", "ok")):
                    return False
        hay = f"{self.id} {self.title or ''} {self.status or ''} {self.family.value}".lower()
        return all(w in hay for w in query.words)


@dataclass(frozen=True)
class ParsedQuery:
    words: tuple[str, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()


FILTER_HELP = "filter: words in id/title · family:rca · status:draft · cat:C1 · valid:no"


def parse_query(text: str) -> ParsedQuery:
    """``family:rca status:draft cat:C4 valid:no vrrp`` -> field filters and free words."""
    words: list[str] = []
    fields: list[tuple[str, str]] = []
    for tok in text.split():
        m = re.fullmatch(r"(family|status|cat|category|valid):(\S+)", tok, re.IGNORECASE)
        if m:
            fields.append(
                (m.group(1).lower(), m.group(2).lower() if m.group(1).lower() != "cat" else m.group(2))
            )
        elif tok.lower() == "invalid":
            fields.append(("valid", "no"))
        else:
            words.append(tok.lower())
    return ParsedQuery(tuple(words), tuple(fields))


COLUMNS = (
    ("ID", "id", 12),
    ("Family", "family", 6),
    ("Status", "status", 14),
    ("Categories", "categories", 12),
    ("Valid", "valid", 8),
    ("Title", "title", 72),
)


class TaskTable(DataTable[str | Text]):
    """Rows keyed by task id; :meth:`show` lays out a filtered selection, :meth:`update_rows` refreshes cells."""

    DEFAULT_CSS = """
    TaskTable { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.rows_by_id: dict[str, TaskRow] = {}
        self.shown: list[str] = []

    def on_mount(self) -> None:
        for label, key, width in COLUMNS:
            self.add_column(label, key=key, width=width)

    @property
    def current_id(self) -> str | None:
        if not self.shown or self.cursor_row is None or not 0 <= self.cursor_row < len(self.shown):
            return None
        return self.shown[self.cursor_row]

    def show(self, rows: Iterable[TaskRow]) -> None:
        """Replace the visible rows, keeping the cursor on the same task when it is still shown."""
        keep = self.current_id
        self.clear()
        self.shown = []
        for row in rows:
            self.rows_by_id[row.id] = row
            self.add_row(*row.cells(), key=row.id)
            self.shown.append(row.id)
        if keep in self.shown:
            self.move_cursor(row=self.shown.index(keep), animate=False)

    def update_rows(self, rows: Iterable[TaskRow], columns: Iterable[str] | None = None) -> None:
        """Refresh the cells (``columns``: only these) of rows already shown; others are only remembered."""
        shown = set(self.shown)
        wanted = set(columns) if columns is not None else {key for _, key, _ in COLUMNS}
        for row in rows:
            self.rows_by_id[row.id] = row
            if row.id not in shown:
                continue
            for (_, key, width), value in zip(COLUMNS, row.cells(), strict=True):
                if key in wanted:
                    self.update_cell(row.id, key, value, update_width=width is None)

    def remove_task(self, task_id: str) -> None:
        self.rows_by_id.pop(task_id, None)
        if task_id in self.shown:
            self.remove_row(task_id)
            self.shown.remove(task_id)
