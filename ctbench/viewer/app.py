"""``ctb-eval view RUN [RUN...]``: look at what agents did, task by task.

The first screen lists the runs and, below, the task table of the selected run (filter, sort,
search). A task opens into its detail: the prompt; the parsed answer beside the gold, entry by entry,
with the lines that could not be read; the trajectory step by step with the output as the device
printed it and the golden actions each step covered; the golden actions covered or missed; and the
agent's own log with the model turns the harness recorded. ``r`` flips the open task to the next run
that holds it, ``c`` puts two runs of the same task side by side.

Detail loading (scoring one task, replaying its outputs) runs in a thread worker; the task table of
every run is read up front from scores.json. The first paint puts only the first screenful of rows in
the table (:data:`FIRST_ROWS`); the rest follow in chunks after each refresh, so a thousand-task run
shows as fast as a ten-task one, and column widths are fixed from every row of every run up front so
the layout does not move while rows arrive or when the run changes (``tests/bench/bench_viewer.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import cast

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static, TabbedContent, TabPane

from ctbench.evaluate.details import DetailLoader, TaskDetail
from ctbench.evaluate.score import Scorer
from ctbench.evaluate.transcript import describe
from ctbench.scoring.metrics import THIRD_FIGURE
from ctbench.store import TaskSet
from ctbench.viewer.data import COLUMNS, RunData, TaskRow, load_runs, task_detail

FIRST_ROWS = 80
"""Task rows put in the table before the first paint: more than a tall terminal shows."""
FILL_CHUNK = 300
"""Task rows added per refresh after the first paint, until the table holds every visible row."""


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _provenance(detail: TaskDetail, trials: int) -> str:
    """Trial (in a run of several) and task content hash of the result line, when the runner wrote
    them (absent otherwise)."""
    r = detail.result
    parts = []
    if r is not None and trials > 1:
        parts.append(f"trial {r.trial} of {trials}")
    if r is not None and r.content_hash:
        parts.append(f"task content {r.content_hash[:12]}")
    return "".join(f"  ·  {_escape(p)}" for p in parts)


def answer_text(detail: TaskDetail) -> str:
    """The answer against the gold, entry by entry, as markup (shared by the task and compare screens)."""
    out = [
        f"[b]Outcome[/b] {detail.outcome}  ·  {'correct' if detail.scores.exact else 'wrong'}"
        + (f"  ·  {detail.scores.failure}" if detail.scores.failure else "")
    ]
    out.append("\n[b]Answer[/b] (✓ in the gold, ✗ not; parts: which of node / object / label or edges match)")
    if not detail.predicted:
        out.append("  (no entry could be read)")
    for e in detail.predicted:
        parts = " ".join(f"{name}{'✓' if ok else '✗'}" for name, ok in e.parts)
        out.append(f"  {'✓' if e.matched else '✗'} {_escape(e.text)}   [dim]{parts}[/dim]")
    out.append("\n[b]Gold[/b] (✓ found in the answer)")
    for e in detail.gold:
        out.append(f"  {'✓' if e.matched else '✗'} {_escape(e.text)}")
    if detail.invalid_lines:
        out.append("\n[b]Lines that could not be read[/b]")
        out += [f"  ? {_escape(line)}" for line in detail.invalid_lines]
    text = detail.answer_text
    out.append("\n[b]Answer as written[/b]")
    out.append(_escape(text) if text else "  (none)")
    return "\n".join(out)


def golden_text(detail: TaskDetail) -> str:
    covered = sum(g.covered for g in detail.golden)
    lines = [f"[b]Golden actions[/b] {covered}/{len(detail.golden)} covered"]
    lines += [
        f"  {'✓ covered' if g.covered else '✗ missed '}  {_escape(g.device)}: {_escape(g.command)}"
        for g in detail.golden
    ]
    return "\n".join(lines)


def log_text(detail: TaskDetail) -> str:
    out = []
    if detail.transcript:  # the conversation the harness recorded (transcripts/<ID>.jsonl)
        out.append(
            f"[b]Transcript[/b] ({len(detail.transcript)} entries, from {detail.transcript[0].source})"
        )
        for entry in detail.transcript:
            head, body = describe(entry)
            out.append(f"  [dim]{_escape(head)}[/dim]")
            out += [f"    {_escape(line)}" for line in body.splitlines()]
        out.append("")
    elif detail.turns:
        out.append(f"[b]Model turns recorded by the harness[/b] ({len(detail.turns)})")
        for i, t in enumerate(detail.turns, start=1):
            usage = (
                "" if t.input_tokens is None else f"  [dim]in {t.input_tokens} out {t.output_tokens}[/dim]"
            )
            tools = f"  [dim]tools: {', '.join(t.tool_calls)}[/dim]" if t.tool_calls else ""
            out.append(f"  {i}. {t.role}: {_escape(t.text[:500])}{usage}{tools}")
        out.append("")
    out.append("[b]Agent log[/b]")
    out.append(_escape(detail.log_text) if detail.log_text else "  (no log: the agent's output was not kept)")
    return "\n".join(out)


class TaskTable(DataTable[Text]):
    """The task table of one run: filtered and sorted rows."""

    DEFAULT_CSS = "TaskTable { height: 1fr; }"


class RunsScreen(Screen[None]):
    """The runs, then the task table of the selected run."""

    BINDINGS = [
        Binding(
            "slash", "search", "Filter", id="view.filter", tooltip="Filter: text in the id, or field=value"
        ),
        Binding("s", "sort", "Sort", id="view.sort", tooltip="Sort by the next column"),
        Binding("S", "reverse", "Reverse", id="view.reverse", tooltip="Reverse the sort"),
        Binding("tab", "next_run", "Next run", id="view.next_run", tooltip="Show the next run's tasks"),
    ]

    run_index: reactive[int] = reactive(0)
    """Which run's tasks the table shows."""
    sort_column: reactive[str] = reactive("id")
    descending: reactive[bool] = reactive(False)
    filter_text: reactive[str] = reactive("")

    def __init__(self, runs: Sequence[RunData], *, first_rows: int | None = FIRST_ROWS) -> None:
        """``first_rows=None`` fills the whole table before the first paint (the benchmark's baseline)."""
        super().__init__()
        self.runs = list(runs)
        self.first_rows = first_rows
        self._keys: list[tuple[str, int]] = []
        self._pending: list[TaskRow] = []
        self._fill_generation = 0
        self._widths: list[int] = []

    def compose(self) -> ComposeResult:

        yield Static(f"[b]ctb-eval view[/b]  ·  {len(self.runs)} run(s)", id="title")
        runs = DataTable[str](id="runs", cursor_type="row", zebra_stripes=True)
        yield runs
        yield Input(
            placeholder="filter: text in the task id, or field=value (family=rca outcome=unparsable "
            "correct=no failure=F5 observability=O2)",
            id="filter",
        )
        yield Static(id="count")
        yield TaskTable(id="tasks", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        runs = self.query_one("#runs", DataTable)
        runs.add_columns("Run", "Agent", "Model", "Harness", "Tasks", "Correct", "From")
        for i, r in enumerate(self.runs):
            runs.add_row(
                r.info.name,
                r.info.agent or "",
                r.info.model or "",
                r.info.harness or "",
                str(r.n_tasks),
                r.summary(),
                r.source,
                key=str(i),
            )
        runs.styles.height = min(len(self.runs) + 2, 8)
        self._widths = [len(title) for _, title in COLUMNS]
        self.refill()
        self.query_one(TaskTable).focus()

    @property
    def run(self) -> RunData:
        return self.runs[self.run_index]

    def visible_rows(self) -> list[TaskRow]:
        words = self.filter_text.split()
        rows = [r for r in self.run.rows if r.matches(words)]
        return sorted(rows, key=lambda r: r.sort_key(self.sort_column), reverse=self.descending)

    def refill(self) -> None:
        """Refill the task table: the first rows now, the others after the next refreshes (a newer
        refill, e.g. a keystroke in the filter, drops the rows an older one had still to add)."""
        table = self.query_one(TaskTable)
        self._fit_columns(table)
        table.clear()
        rows = self.visible_rows()
        self._keys = [r.key for r in rows]
        self._fill_generation += 1
        first = len(rows) if self.first_rows is None else self.first_rows
        self._pending = rows[first:]
        self._add_rows(table, rows[:first])
        if self._pending:
            self.call_after_refresh(self._fill_more, self._fill_generation)
        title = dict(COLUMNS)[self.sort_column]
        self.query_one("#count", Static).update(
            f"{self.run.label}: {len(rows)} of {len(self.run.rows)} task(s)"
            f"{f' x {self.run.trials} trials' if self.run.trials > 1 else ''}, sorted by {title}"
            f"{' (descending)' if self.descending else ''}  ·  Enter opens a task"
        )

    def _fit_columns(self, table: TaskTable) -> None:
        """Fixed column widths, as wide as the widest cell of every run shown so far: the layout does
        not move while the rows arrive, and only widens (once) when a run with wider cells is shown."""
        widths = list(self._widths)
        for row in self.run.rows:
            widths = [max(w, len(c)) for w, c in zip(widths, row.cells(), strict=True)]
        if table.columns and widths == self._widths:
            return
        self._widths = widths
        table.clear(columns=True)
        for (key, title), width in zip(COLUMNS, widths, strict=True):
            table.add_column(title, key=key, width=width)

    @staticmethod
    def _add_rows(table: TaskTable, rows: Sequence[TaskRow]) -> None:
        # rich Text cells: the table does not parse each of the thousands of cells as markup
        table.add_rows([[Text(c) for c in r.cells()] for r in rows])

    def _fill_more(self, generation: int) -> None:
        if generation != self._fill_generation or not self.is_mounted:
            return
        chunk, self._pending = self._pending[:FILL_CHUNK], self._pending[FILL_CHUNK:]
        self._add_rows(self.query_one(TaskTable), chunk)
        if self._pending:
            self.call_after_refresh(self._fill_more, generation)

    @property
    def filled(self) -> bool:
        """True once the table holds every row of the filter (tests and the benchmark wait for it)."""
        return not self._pending

    def watch_run_index(self) -> None:
        if self.is_mounted:
            runs = self.query_one("#runs", DataTable)
            if runs.cursor_row != self.run_index:
                runs.move_cursor(row=self.run_index)  # the runs table shows which run the tasks are of
            self.refill()

    def watch_sort_column(self) -> None:
        if self.is_mounted:
            self.refill()

    def watch_descending(self) -> None:
        if self.is_mounted:
            self.refill()

    def watch_filter_text(self) -> None:
        if self.is_mounted:
            self.refill()

    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        self.filter_text = event.value

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one(TaskTable).focus()

    @on(DataTable.RowHighlighted, "#runs")
    def _run_chosen(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.run_index = int(event.row_key.value)

    @on(DataTable.HeaderSelected, "#tasks")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        key = str(event.column_key.value)
        if key == self.sort_column:
            self.descending = not self.descending
        else:
            self.sort_column = key

    @on(DataTable.RowSelected, "#tasks")
    def _open(self, event: DataTable.RowSelected) -> None:
        if 0 <= event.cursor_row < len(self._keys):
            task_id, trial = self._keys[event.cursor_row]
            self.app.push_screen(TaskScreen(self.runs, self.run_index, task_id, trial))

    def action_search(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_sort(self) -> None:
        keys = [k for k, _ in COLUMNS]
        self.sort_column = keys[(keys.index(self.sort_column) + 1) % len(keys)]

    def action_reverse(self) -> None:
        self.descending = not self.descending

    def action_next_run(self) -> None:
        self.run_index = (self.run_index + 1) % len(self.runs)


class DetailLoaded(Message):
    """A task's detail is ready (posted by the loading worker)."""

    def __init__(self, run_index: int, detail: TaskDetail) -> None:
        super().__init__()
        self.run_index = run_index
        self.detail = detail


class TaskScreen(Screen[None]):
    """One task of one run: answer against gold, trajectory, golden actions, log."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="task.back", tooltip="Back to the task table"),
        Binding(
            "r", "flip", "Other run", id="task.flip", tooltip="The same task in the next run that has it"
        ),
        Binding(
            "c", "compare", "Side by side", id="task.compare", tooltip="This run and the next side by side"
        ),
        Binding("n", "step(1)", "Next step", id="task.next_step", tooltip="Next trajectory step"),
        Binding("p", "step(-1)", "Prev step", id="task.prev_step", tooltip="Previous trajectory step"),
    ]

    run_index: reactive[int] = reactive(0, init=False)
    """Which run's attempt at the task is shown."""

    def __init__(self, runs: Sequence[RunData], run_index: int, task_id: str, trial: int = 1) -> None:
        super().__init__()
        self.runs = list(runs)
        self.task_id = task_id
        self.trial = trial
        self.detail: TaskDetail | None = None
        self.set_reactive(TaskScreen.run_index, run_index)

    def compose(self) -> ComposeResult:

        yield Static(id="title")
        with TabbedContent(initial="answer"):
            with TabPane("Answer", id="answer"):
                with VerticalScroll():
                    yield Static(id="answer-text")
                    yield Static(id="prompt-text", classes="prompt")
            with TabPane("Trajectory", id="trajectory"):
                with Horizontal():
                    yield DataTable[str](id="steps", cursor_type="row", zebra_stripes=True)
                    with VerticalScroll(id="output-pane"):
                        yield Static(id="output")
            with TabPane("Golden actions", id="golden"):
                with VerticalScroll():
                    yield Static(id="golden-text")
            with TabPane("Log", id="log"):
                with VerticalScroll():
                    yield Static(id="log-text")
        yield Footer()

    def on_mount(self) -> None:
        steps = self.query_one("#steps", DataTable)
        steps.add_columns("#", "Device", "Command", "Outcome", "Golden")
        self.load()

    @property
    def run(self) -> RunData:
        return self.runs[self.run_index]

    def watch_run_index(self) -> None:
        self.load()

    def load(self) -> None:
        self.query_one("#title", Static).update(
            f"[b]{_escape(self.task_id)}[/b] in {_escape(self.run.label)} "
            f"({_escape(self.run.info.name)})  ·  loading…"
        )
        self._load(self.run_index)

    @work(thread=True, exclusive=True, group="task-detail", exit_on_error=False)
    def _load(self, run_index: int) -> None:
        loader = cast(ViewerApp, self.app).loader
        detail = task_detail(loader, self.runs[run_index], self.task_id, self._trial_in(run_index))
        self.post_message(DetailLoaded(run_index, detail))

    def on_detail_loaded(self, message: DetailLoaded) -> None:
        if message.run_index != self.run_index:
            return
        d = self.detail = message.detail
        s = d.scores
        third = s.third
        self.query_one("#title", Static).update(
            f"[b]{_escape(d.task_id)}[/b] in {_escape(self.run.label)} ({_escape(self.run.info.name)})  ·  "
            f"{d.outcome}, {'correct' if s.exact else 'wrong'}  ·  Loc {100 * s.loc:.0f}  "
            f"{THIRD_FIGURE[d.family][1]} {100 * (third or 0):.0f}  ·  evidence "
            f"{s.evidence.covered}/{s.evidence.golden}  ·  {len(d.steps)} step(s)"
            + _provenance(d, self.run.trials)
            + ("  ·  [yellow]" + _escape("; ".join(d.warnings)) + "[/yellow]" if d.warnings else "")
        )
        self.query_one("#answer-text", Static).update(answer_text(d))
        self.query_one("#prompt-text", Static).update(
            "[b]Prompt[/b]\n" + _escape(d.prompt or "(not available)")
        )
        steps = self.query_one("#steps", DataTable)
        steps.clear()
        for st in d.steps:
            steps.add_row(str(st.seq), st.device, st.command, st.outcome, "✓" if st.golden else "")
        self.query_one("#golden-text", Static).update(golden_text(d))
        self.query_one("#log-text", Static).update(log_text(d))
        self._show_step(0)

    def _show_step(self, i: int) -> None:
        d = self.detail
        out = self.query_one("#output", Static)
        if d is None or not d.steps:
            out.update("(the agent ran no command)")
            return
        st = d.steps[max(0, min(i, len(d.steps) - 1))]
        head = (
            f"[b]step {st.seq}[/b] at {st.t:.1f}s  {_escape(st.device)}: {_escape(st.command)}\n"
            f"outcome {st.outcome}"
            + (f", canonical {_escape(st.canonical)}" if st.canonical else "")
            + ("  [b]covers a golden action[/b]" if st.golden else "")
            + "\n"
        )
        out.update(head + "\n" + _escape(st.output if st.output is not None else "(output not available)"))

    @on(DataTable.RowHighlighted, "#steps")
    def _step(self, event: DataTable.RowHighlighted) -> None:
        self._show_step(event.cursor_row)

    def action_step(self, delta: int) -> None:
        """Next or previous step; from another tab, first show the trajectory at the current step."""
        tabs = self.query_one(TabbedContent)
        steps = self.query_one("#steps", DataTable)
        if tabs.active != "trajectory":
            tabs.active = "trajectory"
            steps.focus()
            return
        if steps.row_count:
            steps.move_cursor(row=max(0, min(steps.cursor_row + delta, steps.row_count - 1)))
            steps.focus()

    def _trial_in(self, run_index: int) -> int:
        """The trial shown in a run: the one opened where the run has it, else trial 1 (a run of one
        trial beside a run of several)."""
        return self.trial if self.runs[run_index].holds((self.task_id, self.trial)) else 1

    def _other(self) -> int | None:
        n = len(self.runs)
        for k in range(1, n):
            j = (self.run_index + k) % n
            if self.runs[j].holds((self.task_id, self._trial_in(j))):
                return j
        return None

    def action_flip(self) -> None:
        j = self._other()
        if j is None:
            self.notify("no other run holds this task")
        else:
            self.run_index = j

    def action_compare(self) -> None:
        j = self._other()
        if j is None:
            self.notify("no other run holds this task")
        else:
            self.app.push_screen(
                CompareScreen(
                    self.runs,
                    (self.run_index, j),
                    self.task_id,
                    (self._trial_in(self.run_index), self._trial_in(j)),
                )
            )


class CompareScreen(Screen[None]):
    """The same task in two runs, side by side: answers against the gold and the trajectories."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="compare.back", tooltip="Back to the task")]

    def __init__(
        self, runs: Sequence[RunData], pair: tuple[int, int], task_id: str, trials: tuple[int, int] = (1, 1)
    ) -> None:
        super().__init__()
        self.runs = list(runs)
        self.pair = pair
        self.task_id = task_id
        self.trials = trials

    def compose(self) -> ComposeResult:

        with Horizontal():
            for side in ("left", "right"):
                with VerticalScroll(classes="side"):
                    yield Static(id=f"{side}-text")
        yield Footer()

    def on_mount(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False)
    def _load(self) -> None:
        loader = cast(ViewerApp, self.app).loader
        details = [
            task_detail(loader, self.runs[i], self.task_id, t)
            for i, t in zip(self.pair, self.trials, strict=True)
        ]
        self.app.call_from_thread(self._show, details)

    def _show(self, details: list[TaskDetail]) -> None:
        for side, i, t, d in zip(("left", "right"), self.pair, self.trials, details, strict=True):
            steps = (
                "\n".join(
                    f"  {st.seq:>3} {'★' if st.golden else ' '} {_escape(st.device)}: {_escape(st.command)} "
                    f"[dim]({st.outcome})[/dim]"
                    for st in d.steps
                )
                or "  (no command)"
            )
            self.query_one(f"#{side}-text", Static).update(
                f"[b]{_escape(self.runs[i].label)}[/b] ({_escape(self.runs[i].info.name)})"
                f"{f'  ·  trial {t}' if self.runs[i].trials > 1 else ''}\n\n{answer_text(d)}\n\n"
                f"[b]Trajectory[/b] ({len(d.steps)} step(s), ★ covers a golden action)\n{steps}\n\n{golden_text(d)}"
            )


class ViewerApp(App[None]):
    """Look at one or more runs of agents on the benchmark."""

    CSS_PATH = "app.tcss"
    TITLE = "ctb-eval view"
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True, tooltip="Leave the viewer")]

    def __init__(
        self,
        run_dirs: Sequence[Path | str],
        task_set: TaskSet,
        *,
        runs: Sequence[RunData] | None = None,
        first_rows: int | None = FIRST_ROWS,
    ) -> None:
        super().__init__()
        self.first_rows = first_rows
        self.task_set = task_set
        self.scorer = Scorer(task_set)
        self.loader = DetailLoader(self.scorer)
        self.runs = list(runs) if runs is not None else load_runs(run_dirs, self.scorer)

    def on_mount(self) -> None:
        self.sub_title = f"{len(self.runs)} run(s) · task set {self.task_set.root.name}"
        self.push_screen(RunsScreen(self.runs, first_rows=self.first_rows))
        for r in self.runs:
            for w in r.warnings[:3]:
                self.notify(f"{r.info.name}: {w}", severity="warning", timeout=8)
