"""The reveal screen: the blind answer against the gold, and the reviewer's verdict on each criterion.

It lays out what the four criteria are judged on, side by side: the answer lines (gold | blind),
the golden actions against the commands the reviewer ran, and the authored metadata against what
ctbench derives. Each criterion gets a verdict (``a`` agree, ``d`` disagree, ``o`` open) and a
comment; a disagreement needs one. Criteria carried over from an earlier round start as agreed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Label, Static

from ctbench.approval.records import cell_value
from ctbench.approval.states import CRITERIA, Criterion, Verdict
from ctbench.errors import CtbError
from ctbench.review.widgets import TitleBar, VerdictToggle
from ctbench.review.workflow import Revealed, ReviewDesk, StepResult


class _HasExitStatus(Protocol):
    """The review app this screen runs in (:class:`ctbench.review.blind_app.BlindApp`): its exit code."""

    exit_status: int


class RevealScreen(Screen[None]):
    """Scores, side-by-side comparison and verdicts for the current round."""

    BINDINGS = [
        Binding(
            "ctrl+s",
            "record",
            "Record verdicts",
            id="reveal.record",
            priority=True,
            tooltip="Commit a verdict for every criterion you ruled on",
        ),
        Binding("ctrl+q", "app.quit", "Quit", id="reveal.quit", priority=True),
    ]

    @dataclass
    class Loaded(Message):
        revealed: Revealed
        result: StepResult

    @dataclass
    class Recorded(Message):
        result: StepResult

    @dataclass
    class Failed(Message):
        text: str

    @dataclass
    class RuleRefused(Message):
        """The verdicts were not recorded (e.g. a comment quotes sealed gold): fix them and save again."""

        text: str

    def __init__(self, desk: ReviewDesk, task_id: str, reviewer: str) -> None:
        super().__init__()
        self.desk = desk
        self.task_id = task_id
        self.reviewer = reviewer
        self.revealed: Revealed | None = None
        self._opened = time.monotonic()

    def compose(self) -> ComposeResult:
        yield TitleBar(f"reveal: {self.task_id} ({self.reviewer})")
        with VerticalScroll(id="reveal-body"):
            yield Static("Revealing the gold...", id="summary")
            yield Label("Answer lines", classes="section")
            yield DataTable(id="lines", cursor_type="none", zebra_stripes=True)
            yield Label("Golden actions vs your commands", classes="section")
            yield DataTable(id="actions", cursor_type="none")
            yield Label("Metadata: authored vs derived", classes="section")
            yield DataTable(id="metadata", cursor_type="none")
            yield Label("Verdicts (a agree, d disagree, o open; Tab to the comment)", classes="section")
            for crit in CRITERIA:
                with Horizontal(classes="verdict-row", id=f"row-{crit.value}"):
                    yield Label(crit.label, classes="verdict-name")
                    yield VerdictToggle(crit, id=f"verdict-{crit.value}")
                    yield Input(
                        placeholder="comment (required when you disagree)",
                        id=f"comment-{crit.value}",
                        classes="verdict-comment",
                    )
                    yield Label("", id=f"note-{crit.value}", classes="verdict-note")
            yield Static("", id="outcome")
        yield Footer()

    def on_mount(self) -> None:
        if not getattr(self.app, "blink", True):
            for w in self.query(Input):
                w.cursor_blink = False
        self._load()

    @work(thread=True, exclusive=True, group="reveal")
    def _load(self) -> None:
        try:
            revealed, result = self.desk.reveal(self.task_id, self.reviewer)  # the first read of hidden.yaml
        except CtbError as exc:
            self.post_message(self.Failed(str(exc)))
            return
        self.post_message(self.Loaded(revealed, result))

    def on_reveal_screen_failed(self, event: Failed) -> None:
        self.query_one("#summary", Static).update(Text(f"Cannot reveal: {event.text}", style="bold"))
        cast(_HasExitStatus, self.app).exit_status = 1

    def on_reveal_screen_loaded(self, event: Loaded) -> None:
        rev = event.revealed
        self.revealed = rev
        c = rev.comparison
        nums = [f"exact match: {'yes' if c.exact else 'no'}", f"parse: {c.parse_status}", *c.score_parts()]
        head = (
            f"{rev.task.id} round {rev.record.round}: blind answer by {rev.blind.reviewer} "
            f"({rev.blind.commands} command(s)) against the gold\n" + "   ".join(nums)
        )
        self.query_one("#summary", Static).update(Text(head))
        lines = self.query_one("#lines", DataTable)
        lines.add_columns("", "gold", "blind")
        for row in c.answer_rows():
            lines.add_row(*row)
        acts = self.query_one("#actions", DataTable)
        acts.add_columns("", "device", "command")
        for row in c.action_rows():
            acts.add_row(*row)
        meta = self.query_one("#metadata", DataTable)
        meta.add_columns("field", "authored", "derived", "agrees")
        for m in c.metadata:
            meta.add_row(
                m.field,
                cell_value(m.authored, text=True),
                cell_value(m.derived, text=True),
                "" if m.agrees is None else ("yes" if m.agrees else "NO"),
            )
        for crit in CRITERIA:
            cr = rev.record.criteria[crit]
            self.query_one(f"#verdict-{crit.value}", VerdictToggle).verdict = cr.verdict
            last = cr.last_reviewer_comment()
            if last is not None and last.text:
                self.query_one(f"#comment-{crit.value}", Input).value = last.text
            note = cr.carry_note()
            author = cr.author_stance()
            if author:
                note = (note + "; " if note else "") + f"author {author}s"
            self.query_one(f"#note-{crit.value}", Label).update(note)
        first_open = next(
            (c for c in CRITERIA if rev.record.criteria[c].verdict == Verdict.OPEN), CRITERIA[0]
        )
        self.query_one(f"#verdict-{first_open.value}", VerdictToggle).focus()
        self._opened = time.monotonic()

    def action_record(self) -> None:
        if self.revealed is None:
            self.notify("Nothing revealed yet.", severity="warning")
            return
        rulings: dict[Criterion, tuple[Verdict, str]] = {}
        for crit in CRITERIA:
            verdict = self.query_one(f"#verdict-{crit.value}", VerdictToggle).verdict
            comment = self.query_one(f"#comment-{crit.value}", Input).value.strip()
            if verdict == Verdict.OPEN:
                continue
            if verdict == Verdict.DISAGREE and not comment:
                self.notify(f"Say what is wrong with {crit.label}.", severity="error")
                self.query_one(f"#comment-{crit.value}", Input).focus()
                return
            rulings[crit] = (verdict, comment)
        if not rulings:
            self.notify("Rule on at least one criterion (a / d).", severity="warning")
            return
        self.query_one("#outcome", Static).update("Recording verdicts...")
        self._record(rulings, time.monotonic() - self._opened)

    @work(thread=True, exclusive=True, group="reveal")
    def _record(self, rulings: dict[Criterion, tuple[Verdict, str]], spent: float) -> None:
        try:
            result = self.desk.rule(self.task_id, self.reviewer, rulings, review_time_s=round(spent, 1))
        except CtbError as exc:
            self.post_message(self.RuleRefused(str(exc)))
            return
        self.post_message(self.Recorded(result))

    def on_reveal_screen_rule_refused(self, event: RuleRefused) -> None:
        outcome = self.query_one("#outcome", Static)
        outcome.update(Text(f"Not recorded: {event.text}", style="bold red"))
        outcome.scroll_visible()
        self.notify(event.text, severity="error")

    def on_reveal_screen_recorded(self, event: Recorded) -> None:
        r = event.result
        text = "\n".join(r.messages[-2:]) if r.messages else f"{r.task} is {r.status.value}"
        outcome = self.query_one("#outcome", Static)
        outcome.update(Text(f"{text}\nThe task is now {r.status.value}. Ctrl+Q quits.", style="bold"))
        outcome.scroll_visible()
