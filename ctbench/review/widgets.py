"""Small widgets of the review app: the title bar and the verdict toggle."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from ctbench.approval.states import Criterion, Verdict


class TitleBar(Static):
    """One line naming the task and the step (a plain bar: the stock header races quick screen switches)."""

    DEFAULT_CSS = """
    TitleBar { dock: top; height: 1; background: $panel; color: $foreground; text-style: bold; padding: 0 1; }
    """

    def __init__(self, text: str) -> None:
        super().__init__(f"ctb-review - {text}", markup=False)


class VerdictToggle(Widget, can_focus=True):
    """A criterion's verdict, set from the keyboard: a = agree, d = disagree, o = open, space = next."""

    DEFAULT_CSS = """
    VerdictToggle { width: 14; height: 1; padding: 0 1; background: $boost; }
    VerdictToggle:focus { background: $accent 40%; text-style: bold; }
    VerdictToggle.-agree { color: $success; }
    VerdictToggle.-disagree { color: $error; }
    """
    BINDINGS = [
        Binding("a", "set('agree')", "Agree", id="verdict.agree"),
        Binding("d", "set('disagree')", "Disagree", id="verdict.disagree"),
        Binding("o", "set('open')", "Open", id="verdict.open"),
        Binding("space", "cycle", "Next verdict", show=False, id="verdict.cycle"),
    ]

    verdict: reactive[Verdict] = reactive(Verdict.OPEN)
    """The verdict shown; the screen reads it when the reviewer records the verdicts."""

    def __init__(self, criterion: Criterion, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.criterion = criterion

    def render(self) -> Text:
        return Text(f"[ {self.verdict.value} ]")

    def watch_verdict(self, old: Verdict, new: Verdict) -> None:
        self.remove_class(f"-{old.value}")
        self.add_class(f"-{new.value}")

    def action_set(self, value: str) -> None:
        self.verdict = Verdict(value)

    def action_cycle(self) -> None:
        order = [Verdict.OPEN, Verdict.AGREE, Verdict.DISAGREE]
        self.verdict = order[(order.index(self.verdict) + 1) % len(order)]
