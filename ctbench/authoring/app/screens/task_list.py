"""The first screen: every task of the set, filterable, with open / new / duplicate / delete.

Listing is instant (folder names only); a thread worker then reads each task's two YAML files for
status, title and categories, and after that validates tasks a few at a time, posting what it learned
as it goes. Nothing waits for the whole set, so a thousand tasks paint as fast as three.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static
from textual.worker import Worker, get_current_worker

from ctbench.authoring.app.blink import apply_blink
from ctbench.authoring.app.widgets.task_table import FILTER_HELP, TaskRow, TaskTable, parse_query
from ctbench.authoring.app.workers import ReportsWorkerErrors, background
from ctbench.errors import CtbError
from ctbench.model import Family
from ctbench.store import REVIEWS_DIR, TaskRef, TaskSet
from ctbench.yamlio import load_fast

POST_EVERY = 0.4
"""Seconds between two updates of the list from the background loader."""
YIELD = 0.001
"""Pause after each task: a sleep, even of 0 s, hands the interpreter to the screen's thread."""
FIRST_POST = 50
"""Rows read before the first update, so the top of the list fills in almost at once."""


def read_row(ts: TaskSet, ref: TaskRef) -> TaskRow:
    """Status, title and categories of one task from its files (plain data: no model validation)."""
    row = TaskRow(ref.id, ref.family)
    try:
        task = load_fast(ref.task_file)
        if isinstance(task, dict):
            row.status = str(task.get("status") or "draft")
            row.title = str(task.get("title") or "")
        if ts.is_sealed(ref):  # sealed gold: categories only for a recipient (the user's identity)
            try:
                hidden = load_fast(ref.hidden_file, ts.hidden_text(ref))
            except CtbError:
                hidden = None
        else:
            hidden = load_fast(ref.hidden_file)
        cats: set[str] = set()
        if isinstance(hidden, dict):
            answer = hidden.get("answer") or {}
            for triple in (answer.get("rca") or []) if isinstance(answer, dict) else []:
                if isinstance(triple, dict):
                    cat = ts.taxonomy.category_of(str(triple.get("label", "")))
                    if cat:
                        cats.add(cat)
        row.categories = sorted(cats)
        if (ref.path / REVIEWS_DIR).is_dir():  # approved once: has it changed since?
            from ctbench.approval.check import rereview_reason

            if rereview_reason(ts, ref):
                row.status = f"{row.status} (re-review)"
    except CtbError as exc:
        row.problem = str(exc)
        row.status = row.status or "?"
        row.title = row.title if row.title is not None else str(exc)
        row.categories = row.categories or []
    return row


class _TaskActions(Protocol):
    """What the task list asks of the app it is on (:class:`ctbench.authoring.app.app.AuthorApp`)."""

    def open_task(self, task_id: str) -> object: ...
    def new_task(self) -> object: ...
    def duplicate_task(self, task_id: str) -> object: ...
    def delete_task(self, task_id: str) -> object: ...


class TaskListScreen(ReportsWorkerErrors, Screen[None]):
    """Browse the task set."""

    BINDINGS = [
        Binding("enter", "open", "Open", id="list.open", tooltip="Open the highlighted task in the editor"),
        Binding("n", "new", "New", id="list.new", tooltip="Write a new task"),
        Binding(
            "d",
            "duplicate",
            "Duplicate",
            id="list.duplicate",
            tooltip="Start a new task from a copy of the highlighted one",
        ),
        Binding(
            "x,delete",
            "delete",
            "Delete",
            id="list.delete",
            tooltip="Delete the highlighted task folder (asks first; committed to git)",
        ),
        Binding("slash", "search", "Filter", id="list.search", tooltip=FILTER_HELP),
        Binding("r", "reload", "Reload", id="list.reload", tooltip="Read the task folders again"),
        Binding("escape", "clear_search", "Clear filter", show=False, id="list.clear_search"),
    ]

    @dataclass
    class RowsRead(Message):
        rows: list[TaskRow]

    @dataclass
    class RowsValidated(Message):
        results: dict[str, tuple[int, int]]
        done: int
        total: int

    @dataclass
    class FirstPaint(Message):
        """The list is on screen (posted once per load; the start-up benchmark waits for it)."""

        rows: int
        at: float

    def __init__(self, ts: TaskSet) -> None:
        super().__init__()
        self.ts = ts
        self.rows: dict[str, TaskRow] = {}
        self.validated: set[str] = set()
        self.first_paint_at: float | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="list-bar"):
            yield Input(placeholder=FILTER_HELP, id="list-search")
        yield TaskTable(id="task-table")
        yield Static("", id="list-status")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"task set {self.ts.config.name} ({self.ts.root.name}/)"
        apply_blink(self)
        self.query_one(TaskTable).focus()
        self.reload()

    # ------------------------------------------------------------------ loading

    def reload(self, only: Iterable[str] | None = None) -> None:
        """List the folders now; read and validate them in the background (``only``: just these ids)."""
        drafts = {d.task_id for d in self.app.drafts.list()} if hasattr(self.app, "drafts") else set()
        refs = self.ts.refs()
        if only is None:
            self.rows = {r.id: TaskRow(r.id, r.family, has_draft=r.id in drafts) for r in refs}
            self.validated = set()
            targets = refs
        else:
            wanted = set(only)
            targets = [r for r in refs if r.id in wanted]
            for rid in wanted - {r.id for r in refs}:
                self.rows.pop(rid, None)
            for r in targets:
                self.rows[r.id] = TaskRow(r.id, r.family, has_draft=r.id in drafts)
                self.validated.discard(r.id)
        for row in self.rows.values():
            row.has_draft = row.id in drafts
        self._apply_filter()
        self._status()
        if only is None:
            self.call_after_refresh(self._painted)
        dup = Counter(r.id for r in refs)
        duplicated = {r.id for r in refs if dup[r.id] > 1}
        if only is None:
            self._load_all(targets, duplicated)
        else:
            self._load_some(targets, duplicated)

    def _painted(self) -> None:
        self.first_paint_at = time.perf_counter()
        self.post_message(self.FirstPaint(len(self.rows), self.first_paint_at))

    @background(thread=True, exclusive=True, group="task-list", name="load tasks")
    def _load_all(self, refs: list[TaskRef], duplicated: set[str]) -> None:
        self._load(refs, duplicated)

    @background(thread=True, group="task-list-changed", name="reload changed tasks")
    def _load_some(self, refs: list[TaskRef], duplicated: set[str]) -> None:
        self._load(refs, duplicated)

    def _load(self, refs: list[TaskRef], duplicated: set[str]) -> None:
        """Runs in a worker thread: read every task, then validate them, posting what it learned.

        Results go to the screen at most every ``POST_EVERY`` seconds (and at the end): each post
        redraws the visible rows, and a thousand small posts would starve the screen.
        """
        worker = get_current_worker()
        rows: list[TaskRow] = []
        last = time.monotonic()
        for i, ref in enumerate(refs):
            if not self._wait_until_shown(worker):
                return
            rows.append(read_row(self.ts, ref))
            time.sleep(YIELD)
            if i == len(refs) - 1 or (len(rows) >= FIRST_POST and time.monotonic() - last > POST_EVERY):
                self.post_message(self.RowsRead(rows))
                rows, last = [], time.monotonic()
        from ctbench.scoring.gold_check import PluginGoldCheck
        from ctbench.validation import Severity, Validator

        validator = Validator(self.ts, gold_check=PluginGoldCheck(self.ts))
        validator.check_set_files()
        results: dict[str, tuple[int, int]] = {}
        for i, ref in enumerate(refs):
            if not self._wait_until_shown(worker):
                return
            before = len(validator.report.findings)
            try:
                validator.check_task(ref, duplicate=ref.id in duplicated)
                new = validator.report.findings[before:]
                results[ref.id] = (
                    sum(f.severity == Severity.ERROR for f in new),
                    sum(f.severity == Severity.WARNING for f in new),
                )
            except Exception:  # one broken task must not stop the list; it shows as having an error
                results[ref.id] = (1, 0)
            time.sleep(YIELD)
            if i == len(refs) - 1 or time.monotonic() - last > POST_EVERY:
                self.post_message(self.RowsValidated(results, i + 1, len(refs)))
                results, last = {}, time.monotonic()

    def _wait_until_shown(self, worker: Worker[None]) -> bool:
        """Pause the loader while the editor covers the list (it would only slow the editor down).

        Returns False when the worker was cancelled meanwhile.
        """
        while not worker.is_cancelled and self.is_mounted and not self.is_current:
            time.sleep(0.1)
        return not worker.is_cancelled and self.is_mounted

    def on_task_list_screen_rows_read(self, message: RowsRead) -> None:
        for new in message.rows:
            old = self.rows.get(new.id)
            if old is not None:
                new.has_draft, new.errors, new.warnings = old.has_draft, old.errors, old.warnings
            self.rows[new.id] = new
        self.query_one(TaskTable).update_rows(message.rows, ("status", "categories", "title", "valid"))
        self._status()

    def on_task_list_screen_rows_validated(self, message: RowsValidated) -> None:
        changed = []
        for tid, (errors, warnings) in message.results.items():
            row = self.rows.get(tid)
            if row is not None:
                row.errors, row.warnings = errors, warnings
                changed.append(row)
        self.validated.update(message.results)
        self.query_one(TaskTable).update_rows(changed, ("valid",))
        self._status()

    def _status(self) -> None:
        table = self.query_one(TaskTable)
        total = len(self.rows)
        fams = Counter(r.family for r in self.rows.values())
        parts = [
            f"{len(table.shown)} of {total} task(s) shown"
            if len(table.shown) != total
            else f"{total} task(s)",
            f"{fams[Family.RCA]} rca, {fams[Family.PATH]} path",
        ]
        done = len(self.validated & self.rows.keys())
        if done < total:
            parts.append(f"validating {done}/{total}…")
        else:
            bad = sum(1 for r in self.rows.values() if (r.errors or 0) > 0 or r.problem)
            parts.append(f"{bad} with errors" if bad else "all valid")
        self.query_one("#list-status", Static).update(" · ".join(parts))

    # ------------------------------------------------------------------ filtering

    def _apply_filter(self) -> None:
        query = parse_query(self.query_one("#list-search", Input).value)
        self.query_one(TaskTable).show(r for r in self.rows.values() if r.matches(query))

    @on(Input.Changed, "#list-search")
    def _search_changed(self) -> None:
        self._apply_filter()
        self._status()

    @on(Input.Submitted, "#list-search")
    def _search_done(self) -> None:
        self.query_one(TaskTable).focus()

    def action_search(self) -> None:
        self.query_one("#list-search", Input).focus()

    def action_clear_search(self) -> None:
        field = self.query_one("#list-search", Input)
        field.value = ""
        self.query_one(TaskTable).focus()

    # ------------------------------------------------------------------ actions

    @property
    def current_id(self) -> str | None:
        return self.query_one(TaskTable).current_id

    @on(DataTable.RowSelected, "#task-table")
    def _row_selected(self) -> None:
        self.action_open()

    @property
    def _actions(self) -> _TaskActions:
        return cast(_TaskActions, self.app)  # this screen is only pushed by the authoring app

    def action_open(self) -> None:
        tid = self.current_id
        if tid is not None:
            self._actions.open_task(tid)

    def action_new(self) -> None:
        self._actions.new_task()

    def action_duplicate(self) -> None:
        tid = self.current_id
        if tid is not None:
            self._actions.duplicate_task(tid)

    def action_delete(self) -> None:
        tid = self.current_id
        if tid is not None:
            self._actions.delete_task(tid)

    def action_reload(self) -> None:
        self.reload()

    def on_screen_resume(self) -> None:
        changed = getattr(self.app, "changed_tasks", None)
        if changed:
            ids = set(changed)
            changed.clear()
            self.reload(only=ids)
