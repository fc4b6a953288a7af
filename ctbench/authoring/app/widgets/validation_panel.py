"""The live validation panel: the findings ``ctb-author validate`` would print, and where each one points.

:func:`target_for` maps a finding (file + location in it) to the editor section and row or field it
concerns, so Enter on a finding takes the author straight to what needs fixing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ctbench.authoring.app.widgets.side_list import SideList
from ctbench.validation import Finding, Severity

SECTIONS = ("statement", "network", "recordings", "golden", "answer", "metadata", "tryit")


@dataclass(frozen=True)
class Target:
    """Where a finding sends the author: a section, and optionally a row in its table or a field."""

    section: str
    row: int | None = None
    field: str | None = None


def _int(loc: Sequence[str | int], i: int) -> int | None:
    value = loc[i] if len(loc) > i else None
    return value if isinstance(value, int) else None


def target_for(finding: Finding) -> Target:
    """The part of the editor a finding concerns, from its file and its location in that file."""
    path = finding.file.replace("\\", "/")
    name = path.rsplit("/", 1)[-1]
    loc = list(finding.loc)
    head = str(loc[0]) if loc else ""
    if "/networks/" in f"/{path}":
        return Target("network", _int(loc, 1) if head == "devices" else None, head or None)
    if name == "task.yaml":
        if head in ("network", "accessible"):
            return Target("network", _int(loc, 1), head)
        if head == "recordings" or finding.code in ("unused-recording", "recording-file"):
            return Target("recordings", _int(loc, 1), str(loc[2]) if len(loc) > 2 else None)
        return Target("statement", None, head or "statement")
    if name == "hidden.yaml":
        if head == "answer":
            return Target("answer", _int(loc, 2), str(loc[-1]) if len(loc) > 3 else None)
        if head == "golden_actions":
            return Target("golden", _int(loc, 1))
        if head in ("metadata", "rationale"):
            return Target("metadata", None, str(loc[-1]) if len(loc) > 1 else head)
        if finding.code == "golden":
            return Target("golden")
        if finding.code == "answer":
            return Target("answer")
        return Target("metadata", None, head or None)
    return Target("statement")


def counts(findings: Sequence[Finding]) -> tuple[int, int]:
    return (
        sum(f.severity == Severity.ERROR for f in findings),
        sum(f.severity == Severity.WARNING for f in findings),
    )


class ValidationPanel(Vertical):
    """Findings of the latest check; Enter (or a click) on one jumps to its field."""

    DEFAULT_CSS = """
    ValidationPanel { width: 38; max-width: 30%; border-left: vkey $primary-background; padding: 0 1; }
    ValidationPanel #val-summary { height: auto; text-style: bold; }
    ValidationPanel #val-summary.ok { color: $success; }
    ValidationPanel #val-summary.errors { color: $error; }
    ValidationPanel #val-summary.warnings { color: $warning; }
    ValidationPanel #val-list { height: 1fr; border: none; }
    """

    @dataclass
    class JumpTo(Message):
        """The author asked to see what ``finding`` is about."""

        finding: Finding
        target: Target

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.findings: list[Finding] = []
        self.running = False

    def compose(self) -> ComposeResult:
        yield Static("Validation: not run yet", id="val-summary")
        yield SideList(id="val-list")

    def set_running(self, running: bool) -> None:
        if running != self.running:
            self.running = running
            self._summary()

    def show(self, findings: Sequence[Finding]) -> None:
        self.findings = sorted(
            findings,
            key=lambda f: (
                f.severity != Severity.ERROR,
                SECTIONS.index(target_for(f).section) if target_for(f).section in SECTIONS else 99,
            ),
        )
        ol = self.query_one("#val-list", OptionList)
        keep = ol.highlighted
        options = []
        for f in self.findings:
            err = f.severity == Severity.ERROR
            text = Text("✗ " if err else "! ", style="bold red" if err else "yellow")
            text.append(f.message)
            if f.expected:
                text.append(f" (expected {f.expected})", style="dim")
            where = f.file.rsplit("/", 1)[-1] + (f":{f.line}" if f.line else "")
            text.append(f"\n  {target_for(f).section} · {where} · {f.code}", style="dim")
            options.append(Option(text))
        ol.set_options(options)
        if options:
            ol.highlighted = min(keep or 0, len(options) - 1)
        self.running = False
        self._summary()

    def _summary(self) -> None:
        label = self.query_one("#val-summary", Static)
        errors, warnings = counts(self.findings)
        label.set_classes("errors" if errors else "warnings" if warnings else "ok")
        if errors:
            text = f"✗ {errors} error(s)" + (f" · ! {warnings} warning(s)" if warnings else "")
        elif warnings:
            text = f"✓ no errors · ! {warnings} warning(s)"
        else:
            text = "✓ no findings: ready for review"
        label.update(text + ("  (checking…)" if self.running else ""))

    def section_counts(self) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for f in self.findings:
            sec = target_for(f).section
            e, w = out.get(sec, (0, 0))
            out[sec] = (e + (f.severity == Severity.ERROR), w + (f.severity == Severity.WARNING))
        return out

    @on(OptionList.OptionSelected, "#val-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        finding = self.findings[event.option_index]
        self.post_message(self.JumpTo(finding, target_for(finding)))
