"""The task editor: sections on the left, the section on screen in the middle, live findings on the right.

Every edit goes through the :class:`~ctbench.authoring.editing.EditSession` and is announced by the
section that made it. The screen then does the bookkeeping in one place: the dirty flag, a draft
autosave a moment later (so a killed terminal loses at most that moment), a validation run in a
worker (the same checks as ``ctb-author validate``), and a refresh of the other sections. Saving
writes and commits in a worker too, so git never freezes the screen.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Footer, Header, Input, OptionList, TextArea
from textual.widgets.option_list import Option

from ctbench.authoring.app.blink import apply_blink
from ctbench.authoring.app.dialogs.confirm import ChoiceDialog
from ctbench.authoring.app.dialogs.confirm import Option as Answer
from ctbench.authoring.app.messages import TaskSaved
from ctbench.authoring.app.widgets.sections.answer import AnswerSection
from ctbench.authoring.app.widgets.sections.base import Section
from ctbench.authoring.app.widgets.sections.golden import GoldenSection
from ctbench.authoring.app.widgets.sections.metadata import MetadataSection
from ctbench.authoring.app.widgets.sections.network import NetworkSection
from ctbench.authoring.app.widgets.sections.recordings import RecordingsSection
from ctbench.authoring.app.widgets.sections.statement import StatementSection
from ctbench.authoring.app.widgets.sections.tryit import TryItSection
from ctbench.authoring.app.widgets.side_list import SideList
from ctbench.authoring.app.widgets.validation_panel import ValidationPanel, counts
from ctbench.authoring.app.workers import ReportsWorkerErrors, background
from ctbench.authoring.drafts import DraftStore
from ctbench.authoring.editing import EditSession
from ctbench.authoring.shadow import validate_draft
from ctbench.authoring.working_copy import ConflictError, SaveResult, TaskDraft
from ctbench.errors import CtbError
from ctbench.validation import Finding

SECTION_CLASSES: tuple[type[Section], ...] = (
    StatementSection,
    NetworkSection,
    RecordingsSection,
    GoldenSection,
    AnswerSection,
    MetadataSection,
    TryItSection,
)
SECTION_KEYS = ("f2", "f3", "f4", "f5", "f6", "f7", "f8")
NARROW_WIDTH = 100
"""Below this many columns the navigation and the findings panel collapse, leaving the width to the
section (an 80x24 SecureCRT or PuTTY window); F2-F8 still switch sections and F9 shows the findings."""


class EditorScreen(ReportsWorkerErrors, Screen[None]):
    """Edit one task. ``recovered`` marks a session restored from an autosaved draft (it starts dirty)."""

    BINDINGS = [
        Binding(
            "ctrl+s",
            "save",
            "Save",
            id="editor.save",
            priority=True,
            tooltip="Write the task folder and commit it to git with trailers",
        ),
        *[
            Binding(
                key,
                f"section('{cls.SECTION_ID}')",
                cls.TITLE,
                id=f"editor.section.{cls.SECTION_ID}",
                tooltip=f"Go to {cls.TITLE}: {cls.HELP}",
                show=False,
                priority=True,
            )
            for key, cls in zip(SECTION_KEYS, SECTION_CLASSES, strict=True)
        ],
        Binding(
            "f9",
            "findings",
            "Findings",
            id="editor.findings",
            priority=True,
            tooltip="Show the validation findings and go to them (Enter on one jumps to its field); "
            "F9 again hides them",
        ),
        Binding(
            "escape",
            "close",
            "Close",
            id="editor.close",
            tooltip="Back to the task list (asks about unsaved work)",
        ),
    ]

    dirty: reactive[bool] = reactive(False)
    """True while the working copy differs from what was last saved."""

    revision: reactive[int] = reactive(0, init=False)
    """Counts edits; stale worker results (validation, saves) are recognised by it."""

    @dataclass
    class Validated(Message):
        findings: list[Finding]
        revision: int

    @dataclass
    class Saved(Message):
        result: SaveResult
        snapshot: TaskDraft
        revision: int

    @dataclass
    class SaveFailed(Message):
        error: str
        conflict: bool

    def __init__(
        self,
        session: EditSession,
        *,
        author: str,
        drafts: DraftStore,
        recovered: bool = False,
        autosave_delay: float = 1.0,
        validate_delay: float = 0.4,
    ) -> None:
        super().__init__()
        self.session = session
        self.author = author
        self.drafts = drafts
        self.recovered = recovered
        self.autosave_delay = autosave_delay
        self.validate_delay = validate_delay
        self.saved_revision = 0
        self.validated_revision = -1
        self.saving = False
        self._draft_lock = threading.Lock()
        self._draft_floor = 0  # autosaves of revisions at or below this are obsolete (already saved)
        self._draft_written = 0  # the newest revision written to the draft file
        self._autosave_timer: Timer | None = None
        self._validate_timer: Timer | None = None
        self._stale: set[str] = set()
        self._nav_counts: dict[str, tuple[int, int]] = {}
        self._findings_shown: bool | None = None  # F9's choice; None: shown when the screen is wide
        self._last_field: Widget | None = None  # the text field typing went to last

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="editor-body"):
            yield SideList(
                *[
                    Option(self._nav_label(cls, key, (0, 0)), id=f"nav-{cls.SECTION_ID}")
                    for key, cls in zip(SECTION_KEYS, SECTION_CLASSES, strict=True)
                ],
                id="editor-nav",
            )
            with ContentSwitcher(initial="statement", id="editor-sections"):
                for cls in SECTION_CLASSES:
                    yield cls(id=cls.SECTION_ID)
            yield ValidationPanel(id="editor-validation")
        yield Footer()

    @staticmethod
    def _nav_label(cls: type[Section], key: str, counts: tuple[int, int]) -> Text:
        text = Text(f"{key.upper():<3}", style="dim")
        text.append(cls.TITLE)
        errors, warnings = counts
        if errors:
            text.append(f"  ✗{errors}", style="bold red")
        elif warnings:
            text.append(f"  !{warnings}", style="yellow")
        return text

    def on_mount(self) -> None:
        apply_blink(self)
        if self.recovered or self.session.draft.is_new:  # nothing of it is on disk yet
            self.revision = 1
            self.dirty = True
        self._update_title()
        self.query_one("#editor-nav", OptionList).highlighted = 0
        self._layout(self.app.size.width)
        self.query_one(StatementSection).focus_first()
        self.request_validation(now=True)

    def on_resize(self, event: events.Resize) -> None:
        self._layout(event.size.width)

    def _layout(self, width: int) -> None:
        """Collapse the navigation and (unless F9 asked for it) the findings panel on a narrow screen."""
        narrow = width < NARROW_WIDTH
        self.set_class(narrow, "-narrow")
        self.query_one("#editor-nav").display = not narrow
        shown = self._findings_shown if self._findings_shown is not None else not narrow
        self.query_one(ValidationPanel).display = shown
        self._update_title()

    @property
    def findings_shown(self) -> bool:
        return bool(self.query_one(ValidationPanel).display)

    def _update_title(self) -> None:
        draft = self.session.draft
        mark = " ●" if self.dirty else ""
        kind = "new " if draft.is_new else ""
        self.title = f"{draft.id}{mark}"
        extra = " · recovered draft" if self.recovered and self.dirty else ""
        if self.is_mounted and not self.findings_shown:  # the counts stay in sight with the panel hidden
            errors, warnings = counts(self.query_one(ValidationPanel).findings)
            extra += f" · ✗{errors} !{warnings} (F9)" if errors or warnings else " · ✓ (F9)"
        self.sub_title = f"{kind}{draft.family.value} task · {draft.task.title or 'untitled'}{extra}"

    def watch_dirty(self) -> None:
        self._update_title()

    # ------------------------------------------------------------------ sections

    @property
    def current_section(self) -> Section:
        switcher = self.query_one("#editor-sections", ContentSwitcher)
        return self.query_one(f"#{switcher.current}", Section)

    def action_section(self, section: str) -> None:
        self.show_section(section)
        self.current_section.focus_first()
        self.call_after_refresh(self._focus_into_section)

    def _focus_into_section(self) -> None:
        """Make sure the focus ended inside the section on screen (never in a list beside it)."""
        section = self.current_section
        focused = self.focused
        if focused is not None and section in focused.ancestors and focused.display:
            return
        for widget in section.query("*"):
            if widget.focusable:
                widget.focus()
                return

    @on(events.DescendantFocus)
    def _remember_field(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, Input | TextArea):
            self._last_field = event.widget

    @on(SideList.Typed)
    def _typed_into_a_list(self, event: SideList.Typed) -> None:
        """A character typed into the navigation or the findings goes to the field typed into last."""
        event.stop()
        field = self._last_field
        section = self.current_section
        if field is None or section not in field.ancestors or not field.display or not field.focusable:
            field = None
            section.focus_first()
            self._focus_into_section()
            candidate = self.focused
            if isinstance(candidate, Input | TextArea) and section in candidate.ancestors:
                field = candidate
        if field is None:
            self.app.bell()
            self.notify(
                f"{section.TITLE} has no text field for {event.character!r}: the lists beside it take "
                "no typing. F2-F8 go to a section, Enter on a finding goes to its field.",
                title="Not typed",
                severity="warning",
                timeout=6,
            )
            return
        if isinstance(field, Input):  # its select-on-focus would make the key replace the whole value
            keep = field.cursor_position
            self.set_focus(field)
            field.call_later(setattr, field, "cursor_position", keep)  # after the focus event
        else:
            self.set_focus(field)
        self.app.post_message(events.Key(event.key, event.character))  # after the focus moved

    def _refresh_section(self, section: Section) -> None:
        self._stale.discard(section.SECTION_ID)
        section.refresh_view()

    def show_section(self, section: str) -> None:
        switcher = self.query_one("#editor-sections", ContentSwitcher)
        switcher.current = section
        if section in self._stale:
            self._refresh_section(self.current_section)
        ids = [cls.SECTION_ID for cls in SECTION_CLASSES]
        nav = self.query_one("#editor-nav", OptionList)
        with nav.prevent(OptionList.OptionHighlighted):
            nav.highlighted = ids.index(section)

    @on(OptionList.OptionSelected, "#editor-nav")
    def _nav_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        section = (event.option.id or "").removeprefix("nav-")
        self.action_section(section)

    @on(OptionList.OptionHighlighted, "#editor-nav")
    def _nav_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        section = (event.option.id or "").removeprefix("nav-")
        if event.option_list.has_focus and section:
            self.show_section(section)

    def action_findings(self) -> None:
        """F9: show the findings and go to them; from the findings, hide them and go back to work."""
        findings = self.query_one("#val-list", OptionList)
        if self.findings_shown and findings.has_focus:
            self._findings_shown = False
            self._layout(self.size.width)
            field = self._last_field
            if field is not None and self.current_section in field.ancestors and field.display:
                field.focus()
            else:
                self.current_section.focus_first()
            return
        self._findings_shown = True
        self._layout(self.size.width)
        findings.focus()

    @on(ValidationPanel.JumpTo)
    def _jump(self, event: ValidationPanel.JumpTo) -> None:
        self.show_section(event.target.section)
        self.current_section.focus_target(event.target)

    # ------------------------------------------------------------------ edits

    @on(Section.Edited)
    def _edited(self, event: Section.Edited) -> None:
        event.stop()
        self.revision += 1
        self.dirty = True
        self._update_title()
        # Only the section on screen is redrawn now; the others when they are next shown.
        self._stale = {cls.SECTION_ID for cls in SECTION_CLASSES}
        if event.section != "statement":  # the statement box already shows what was typed
            self._refresh_section(self.current_section)
        else:
            self._stale.discard("statement")
        self._schedule_autosave()
        self.request_validation()

    def _schedule_autosave(self) -> None:
        if self._autosave_timer is not None:
            self._autosave_timer.stop()
        self._autosave_timer = self.set_timer(self.autosave_delay, self.autosave_now)

    def autosave_now(self) -> None:
        """Write the draft file now (in a worker); called by the timer, and by tests."""
        if not self.dirty:
            return
        self._write_draft(self.session.snapshot(), self.revision)

    @background(thread=True, group="autosave", name="autosave draft")
    def _write_draft(self, draft: TaskDraft, revision: int) -> None:
        with self._draft_lock:
            if revision <= self._draft_floor or revision < self._draft_written:
                return  # saved meanwhile, or a newer draft is already on disk: this one is stale
            self._draft_written = revision
            try:
                self.drafts.save(draft)
            except (OSError, CtbError) as exc:
                self.app.call_from_thread(self.notify, f"Draft autosave failed: {exc}", severity="error")

    def _discard_draft(self, revision: int) -> None:
        with self._draft_lock:
            self._draft_floor = max(self._draft_floor, revision)
            self.drafts.discard(self.session.task_id)

    # ------------------------------------------------------------------ validation

    def request_validation(self, *, now: bool = False) -> None:
        if self._validate_timer is not None:
            self._validate_timer.stop()
        panel = self.query_one(ValidationPanel)
        panel.set_running(True)
        if now:
            self._validate(self.session.snapshot(), self.revision)
        else:
            self._validate_timer = self.set_timer(
                self.validate_delay, lambda: self._validate(self.session.snapshot(), self.revision)
            )

    @background(thread=True, exclusive=True, group="validate", name="validate draft")
    def _validate(self, draft: TaskDraft, revision: int) -> None:
        try:
            findings = validate_draft(self.session.ts, draft)
        except Exception as exc:  # validation must never take the editor down
            from ctbench.validation import Finding, Severity

            findings = [
                Finding(
                    severity=Severity.ERROR,
                    code="internal",
                    file=draft.id,
                    message=f"validation failed: {type(exc).__name__}: {exc}",
                )
            ]
        self.post_message(self.Validated(findings, revision))

    def on_editor_screen_validated(self, message: Validated) -> None:
        if message.revision != self.revision:
            return  # an edit came in meanwhile; its own run is on the way
        self.validated_revision = message.revision
        panel = self.query_one(ValidationPanel)
        panel.show(message.findings)
        self._update_title()
        section_counts = panel.section_counts()
        nav = self.query_one("#editor-nav", OptionList)
        for i, (key, cls) in enumerate(zip(SECTION_KEYS, SECTION_CLASSES, strict=True)):
            now = section_counts.get(cls.SECTION_ID, (0, 0))
            if self._nav_counts.get(cls.SECTION_ID) != now:
                self._nav_counts[cls.SECTION_ID] = now
                nav.replace_option_prompt_at_index(i, self._nav_label(cls, key, now))

    # ------------------------------------------------------------------ saving

    @background(group="save-check", name="check what the save reopens")
    async def action_save(self, force: bool = False) -> None:
        """Save; an approved task first says which review criteria the change reopens, and asks."""
        import asyncio

        from ctbench.authoring.saving import approval_change, reopen_text

        if self.saving:
            return
        self.saving = True
        snapshot, revision = self.session.snapshot(), self.revision
        try:
            reopens = await asyncio.to_thread(approval_change, self.session.ts, snapshot)
        except (CtbError, OSError) as exc:
            self.saving = False
            self.notify(str(exc), title="Not saved", severity="error", timeout=12)
            return
        if reopens:
            answer = await self.app.push_screen_wait(
                ChoiceDialog(
                    f"{snapshot.id} is approved: this change reopens its review",
                    [
                        Answer("save", "Save as draft for re-review", "s", "primary"),
                        Answer("cancel", "Cancel", "c"),
                    ],
                    detail=f"Reopens: {reopen_text(reopens)}.\nThe task becomes a draft, runs skip it, and it "
                    f"waits for you to resubmit it (ctb-review submit {snapshot.id}).",
                    focus="cancel",
                )
            )
            if answer != "save":
                self.saving = False
                self.notify("Not saved; your edits are still here", timeout=4)
                return
        self.notify(f"Saving {self.session.task_id}…", timeout=2)
        self._save(snapshot, revision, force)

    @background(thread=True, exclusive=True, group="save", name="save task")
    def _save(self, snapshot: TaskDraft, revision: int, force: bool) -> None:
        from ctbench.authoring.saving import save_draft

        try:
            result = save_draft(self.session.ts, snapshot, commit=True, author=self.author, force=force)
        except ConflictError as exc:
            self.post_message(self.SaveFailed(str(exc), conflict=True))
            return
        except (CtbError, OSError) as exc:
            self.post_message(self.SaveFailed(str(exc), conflict=False))
            return
        except Exception as exc:  # never lose the editor (and the unsaved work) to an unexpected error
            self.post_message(
                self.SaveFailed(
                    f"internal error while saving: {type(exc).__name__}: {exc}; "
                    "your edits are still in the editor and the draft",
                    conflict=False,
                )
            )
            return
        self._discard_draft(revision)
        self.post_message(self.Saved(result, snapshot, revision))

    def on_editor_screen_saved(self, message: Saved) -> None:
        self.saving = False
        self.session.mark_saved(message.snapshot)
        self.saved_revision = message.revision
        self.dirty = self.revision != message.revision
        self.recovered = False
        self._update_title()
        self._stale = {cls.SECTION_ID for cls in SECTION_CLASSES}
        self._refresh_section(self.current_section)
        result = message.result
        where = f"commit {result.commit[:10]}" if result.commit else (result.note or "no commit")
        self.notify(f"Saved {result.task_id} ({where})", title="Saved", timeout=6)
        if result.status_note and result.status_note != result.note:
            self.notify(result.status_note, title="Status", severity="warning", timeout=12)
        self.app.post_message(TaskSaved(result.task_id, result.commit))
        if self.dirty:
            self._schedule_autosave()

    @background()
    async def on_editor_screen_save_failed(self, message: SaveFailed) -> None:
        self.saving = False
        if not message.conflict:
            self.notify(message.error, title="Not saved", severity="error", timeout=12)
            return
        import asyncio

        from ctbench.authoring.app.dialogs.merge import MergeDialog
        from ctbench.authoring.merge import plan_merge

        snapshot = self.session.snapshot()
        try:  # planned on a copy: the author may keep typing while the dialog is up
            plan = await asyncio.to_thread(plan_merge, self.session.ts, snapshot, self.session.base)
        except (CtbError, OSError) as exc:
            self.notify(
                f"{message.error}\nThe version on disk cannot be read to merge with: {exc}",
                title="Not saved",
                severity="error",
                timeout=15,
            )
            return
        choices = await self.app.push_screen_wait(MergeDialog(self.session.task_id, plan))
        if choices is None:
            self.notify("Not saved; your edits are still here", timeout=4)
            return
        plan = plan_merge(self.session.ts, self.session.draft, self.session.base)  # now on the real copy
        plan.apply(choices)
        self.session.base = (
            (plan.disk_task, plan.disk_hidden) if plan.disk_task and plan.disk_hidden else None
        )
        self._edited(Section.Edited("merge", "merge"))  # revision, dirty, autosave, validation
        focused = self.focused  # a focused field keeps what it shows; this one must show the merge
        self.set_focus(None)
        self._refresh_section(self.current_section)
        self.set_focus(focused)
        self.action_save()

    # ------------------------------------------------------------------ closing

    @background()
    async def action_close(self) -> None:
        if not self.dirty:
            self.app.pop_screen()
            return
        answer = await self.app.push_screen_wait(
            ChoiceDialog(
                f"{self.session.task_id} has unsaved changes",
                [
                    Answer("save", "Save", "s", "primary"),
                    Answer("discard", "Discard", "d", "error"),
                    Answer("keep", "Keep as draft", "k"),
                    Answer("cancel", "Cancel", "c"),
                ],
                detail="Keep as draft: the changes stay in the drafts folder and are offered back next time.",
                focus="cancel",
            )
        )
        if answer == "save":
            self.action_save()
        elif answer == "discard":
            self._discard_draft(self.revision)
            self.app.pop_screen()
        elif answer == "keep":
            self._write_draft(self.session.snapshot(), self.revision)
            self.app.pop_screen()

    # ------------------------------------------------------------------ command palette

    def palette_commands(self) -> Iterable[SystemCommand]:
        """Every editor action, for the command palette (the app adds them to its own)."""
        yield SystemCommand("Save task", "Write the task folder and commit it (ctrl+s)", self.action_save)
        yield SystemCommand("Close editor", "Back to the task list (escape)", self.action_close)
        yield SystemCommand(
            "Validation findings",
            "Show and focus the findings; again to hide them (f9)",
            self.action_findings,
        )
        for key, cls in zip(SECTION_KEYS, SECTION_CLASSES, strict=True):
            yield SystemCommand(
                f"Go to {cls.TITLE}",
                f"{cls.HELP} ({key})",
                lambda sid=cls.SECTION_ID: self.action_section(sid),
            )
        for section in self.query(Section):
            for binding in section.BINDINGS:
                if not isinstance(binding, Binding) or not binding.description:
                    continue
                yield SystemCommand(
                    f"{section.TITLE}: {binding.description}",
                    f"{binding.tooltip or binding.description} ({binding.key})",
                    lambda s=section, b=binding: self._run_section_action(s, b.action),
                )

    def _run_section_action(self, section: Section, action: str) -> None:
        self.show_section(section.SECTION_ID)
        section.focus_first()
        self.call_after_refresh(section.run_action, action)
