"""``ctb-author`` in a terminal: the authoring app.

One app, three ways in: browse (the task list), new (the new-task questions, then the editor) and
edit ID (straight to the editor). Whichever way, autosaved drafts left by a session that never saved
are offered back first. The app holds what the screens share (the task set, the author's name, the
drafts folder) and the flows that cross screens (open, new, duplicate, delete).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from ctbench.authoring.app.dialogs.confirm import ChoiceDialog, ConfirmDialog
from ctbench.authoring.app.dialogs.confirm import Option as Answer
from ctbench.authoring.app.dialogs.form import FormDialog, FormField, FormValues
from ctbench.authoring.app.dialogs.new_task import NewTaskDialog, NewTaskRequest
from ctbench.authoring.app.dialogs.recover import RecoverDialog
from ctbench.authoring.app.messages import TaskDeleted, TaskSaved
from ctbench.authoring.app.screens.editor import EditorScreen
from ctbench.authoring.app.screens.task_list import TaskListScreen
from ctbench.authoring.app.workers import ReportsWorkerErrors, background
from ctbench.authoring.drafts import DraftStore, empty_drafts, holds_no_work
from ctbench.authoring.editing import EditSession
from ctbench.authoring.saving import delete_task
from ctbench.authoring.working_copy import EditError, check_new_id, default_author, files_digest, next_free_id
from ctbench.errors import CtbError
from ctbench.model import Family, Network
from ctbench.store import TaskSet, set_relative

Mode = Literal["browse", "new", "edit"]


@dataclass(frozen=True)
class NewTaskDefaults:
    """What ``ctb-author new`` was told on the command line, to prefill the new-task dialog."""

    family: str | None = None
    task_id: str | None = None
    network: str | None = None
    title: str | None = None


KEYMAP_ENV = "CTBENCH_KEYMAP"


def keymap_from_env() -> dict[str, str]:
    """Rebound keys from ``$CTBENCH_KEYMAP``: ``binding-id=key`` pairs, comma-separated.

    Example: ``CTBENCH_KEYMAP="editor.save=ctrl+w,list.new=a"``. Binding ids are shown in the
    bindings of each screen (``list.*``, ``editor.*``, ``recordings.*``...).
    """
    out: dict[str, str] = {}
    for part in os.environ.get(KEYMAP_ENV, "").split(","):
        binding_id, sep, key = part.partition("=")
        if sep and binding_id.strip() and key.strip():
            out[binding_id.strip()] = key.strip()
    return out


class AuthorApp(ReportsWorkerErrors, App[int]):
    """Write and revise the tasks of one task set."""

    CSS_PATH = "app.tcss"
    TITLE = "ctb-author"

    BINDINGS = [
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            id="app.quit",
            priority=True,
            tooltip="Leave ctb-author (asks about unsaved work)",
        ),
    ]

    def __init__(
        self,
        ts: TaskSet,
        *,
        mode: Mode | str = "browse",
        task_id: str | None = None,
        author: str | None = None,
        new_defaults: NewTaskDefaults | None = None,
        cursor_blink: bool = True,
        autosave_delay: float = 1.0,
        validate_delay: float = 0.4,
        keymap: dict[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.ts = ts
        self.mode = mode
        self.start_task = task_id
        self.author = default_author(ts.root, author)
        self.new_defaults = new_defaults or NewTaskDefaults()
        self.cursor_blink = cursor_blink
        self.autosave_delay = autosave_delay
        self.validate_delay = validate_delay
        self.drafts = DraftStore(ts.root)
        self.changed_tasks: set[str] = set()
        self.user_keymap = keymap if keymap is not None else keymap_from_env()

    # ------------------------------------------------------------------ start

    def on_mount(self) -> None:
        if self.user_keymap:
            self.set_keymap(self.user_keymap)
        self.push_screen(TaskListScreen(self.ts))
        self._start()

    @background(group="start")
    async def _start(self) -> None:
        for empty in await asyncio.to_thread(empty_drafts, self.ts, self.drafts):
            self.drafts.discard(empty)  # kept with no change in it: nothing to offer back, ever
        drafts = self.drafts.list()
        if self.mode == "edit":
            drafts = [d for d in drafts if d.task_id == self.start_task]
        if drafts:
            choice = await self.push_screen_wait(RecoverDialog(drafts))
            if choice is not None and choice.action == "recover":
                self.recover(choice.task_id)
                return
            if choice is not None and choice.action == "discard":
                await self._discard(choice.task_id)
        if self.mode == "new":
            self.new_task()
        elif self.mode == "edit" and self.start_task:
            self.open_task(self.start_task, offer_draft=False)

    async def _discard(self, task_id: str) -> bool:
        if await self.push_screen_wait(
            ConfirmDialog(
                f"Discard the unsaved work on {task_id}?",
                detail="The autosaved draft is deleted; this cannot be undone.",
                yes="Discard",
                danger=True,
            )
        ):
            self.drafts.discard(task_id)
            self.changed_tasks.add(task_id)
            return True
        return False

    # ------------------------------------------------------------------ opening

    def open_session(self, session: EditSession, *, recovered: bool = False) -> None:
        if not recovered:
            aside = self.drafts.set_aside(session.task_id)
            if aside is not None:  # this session's autosaves would overwrite it otherwise
                self.notify(
                    f"The older draft of {session.task_id} was kept as {aside.relative_to(self.ts.root)}",
                    title="Draft set aside",
                    timeout=10,
                )
        self.push_screen(
            EditorScreen(
                session,
                author=self.author,
                drafts=self.drafts,
                recovered=recovered,
                autosave_delay=self.autosave_delay,
                validate_delay=self.validate_delay,
            )
        )

    def recover(self, task_id: str) -> None:
        try:
            draft = self.drafts.load(task_id)
        except CtbError as exc:
            self.notify(str(exc), title="Draft unreadable", severity="error", timeout=12)
            return
        if draft is None:
            self.notify(f"No draft for {task_id} any more", severity="warning")
            return
        session = EditSession(self.ts, draft)
        if not draft.is_new:
            folder = self.ts.task_dir(draft.family, draft.id)
            if not folder.is_dir():
                self.notify(
                    f"{task_id} was deleted since the draft was made; saving recreates it",
                    severity="warning",
                    timeout=10,
                )
                draft.is_new = True
            elif draft.base_digest and files_digest(folder) != draft.base_digest:
                self.notify(
                    f"{task_id} changed on disk since the draft was made; saving will ask before overwriting",
                    severity="warning",
                    timeout=10,
                )
        self.open_session(session, recovered=True)

    @background(group="open")
    async def open_task(self, task_id: str, *, offer_draft: bool = True) -> None:
        if offer_draft and self.drafts.path_for(task_id).is_file():
            answer = await self.push_screen_wait(
                ChoiceDialog(
                    f"{task_id} has an autosaved draft with unsaved changes",
                    [
                        Answer("recover", "Open the draft", "r", "primary"),
                        Answer("saved", "Open the saved task", "s"),
                        Answer("cancel", "Cancel", "c"),
                    ],
                    detail="Opening the saved task sets the draft aside in the drafts folder (it is not deleted).",
                    focus="recover",
                )
            )
            if answer == "recover":
                self.recover(task_id)
                return
            if answer != "saved":
                return
        try:
            session = EditSession.open(self.ts, task_id)
        except CtbError as exc:
            self.notify(
                f"{task_id} cannot be opened: {exc}", title="Fix the file first", severity="error", timeout=15
            )
            return
        self.open_session(session)

    @background(group="new")
    async def new_task(self) -> None:
        d = self.new_defaults
        family = Family(d.family) if d.family in {f.value for f in Family} else Family.RCA

        def check(req: NewTaskRequest) -> str | None:
            try:
                check_new_id(self.ts, req.task_id)
                if req.new_network:
                    Network(name=req.network, devices=[])
                    if self.ts.network_path(req.network).exists():
                        return f"network {req.network} exists already: pick it from the list"
            except (EditError, ValueError) as exc:
                return str(exc).splitlines()[0]
            return None

        req = await self.push_screen_wait(
            NewTaskDialog(
                self.ts.network_names(),
                lambda fam: next_free_id(self.ts, fam),
                check=check,
                family=family,
                task_id=d.task_id,
                network=d.network,
                title=d.title or "",
            )
        )
        if req is None:
            return
        try:
            new_net = Network(name=req.network, devices=[]) if req.new_network else None
            session = EditSession.create(
                self.ts,
                req.family,
                req.task_id,
                req.network,
                title=req.title,
                author=self.author,
                new_network=new_net,
                statement="",
            )
        except (CtbError, ValueError) as exc:
            self.notify(str(exc), title="Not created", severity="error")
            return
        self.open_session(session)

    @background(group="duplicate")
    async def duplicate_task(self, task_id: str) -> None:
        try:
            family = self.ts.ref(task_id).family
        except CtbError as exc:
            self.notify(str(exc), title="Not duplicated", severity="error")
            return
        suggestion = next_free_id(self.ts, family)

        def check(values: FormValues) -> str | None:
            try:
                check_new_id(self.ts, values["id"].strip())
            except EditError as exc:
                return str(exc)
            return None

        values = await self.push_screen_wait(
            FormDialog(
                f"Duplicate {task_id} as a new task",
                [
                    FormField("id", "New task id", suggestion, required=True),
                ],
                check=check,
                submit_label="Duplicate",
                help="The copy keeps statement, recordings, answer and metadata, starts as a draft, "
                "and is written when you save it.",
            )
        )
        if values is None:
            return
        self._duplicate(task_id, values["id"].strip())

    @background(thread=True, group="duplicate-read")
    def _duplicate(self, source: str, new_id: str) -> None:
        try:
            session = EditSession.duplicate(self.ts, source, new_id, author=self.author)
        except (CtbError, OSError) as exc:
            self.call_from_thread(self.notify, str(exc), title="Not duplicated", severity="error")
            return
        self.call_from_thread(self.open_session, session)

    @background(group="delete")
    async def delete_task(self, task_id: str) -> None:
        try:
            ref = self.ts.ref(task_id)
        except CtbError as exc:
            self.notify(str(exc), title="Not deleted", severity="error")
            return
        rel = set_relative(self.ts.root, ref.path)
        if not await self.push_screen_wait(
            ConfirmDialog(
                f"Delete task {task_id}?",
                detail=f"This removes {rel}/ (task, hidden part, recordings, review records) and commits "
                "the removal to git, where it can still be recovered.",
                yes="Delete",
                danger=True,
            )
        ):
            return
        self._delete(task_id)

    @background(thread=True, group="delete-write")
    def _delete(self, task_id: str) -> None:
        try:
            result = delete_task(self.ts, task_id, author=self.author)
        except (CtbError, OSError) as exc:
            self.call_from_thread(self.notify, str(exc), title="Not deleted", severity="error")
            return
        self.drafts.discard(task_id)
        where = f"commit {result.commit[:10]}" if result.commit else result.note
        self.call_from_thread(self.notify, f"Deleted {task_id} ({where})", title="Deleted")
        self.post_message(TaskDeleted(task_id))

    # ------------------------------------------------------------------ app-wide messages

    def on_task_saved(self, message: TaskSaved) -> None:
        self.changed_tasks.add(message.task_id)

    def on_task_deleted(self, message: TaskDeleted) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, TaskListScreen):
                screen.reload(only=[message.task_id])

    # ------------------------------------------------------------------ quitting

    def dirty_editors(self) -> list[EditorScreen]:
        return [s for s in self.screen_stack if isinstance(s, EditorScreen) and s.dirty]

    async def action_quit(self) -> None:
        self._quit()  # a worker: the unsaved-changes question waits for its answer

    @background(group="quit", name="quit")
    async def _quit(self) -> None:
        dirty = self.dirty_editors()
        if not dirty:
            self.exit(0)
            return
        names = ", ".join(s.session.task_id for s in dirty)
        answer = await self.push_screen_wait(
            ChoiceDialog(
                f"Unsaved changes in {names}",
                [
                    Answer("keep", "Quit, keep the draft", "k", "primary"),
                    Answer("discard", "Quit, discard the changes", "d", "error"),
                    Answer("cancel", "Cancel", "c"),
                ],
                detail="A kept draft is offered back the next time ctb-author starts.",
                focus="cancel",
            )
        )
        if answer == "keep":
            for screen in dirty:
                if holds_no_work(self.ts, screen.session.snapshot()):
                    continue  # nothing changed: a draft of it would only come back at every start
                try:
                    self.drafts.save(screen.session.snapshot())
                except (CtbError, OSError) as exc:
                    self.notify(
                        f"The draft of {screen.session.task_id} could not be written: {exc}",
                        title="Not quitting",
                        severity="error",
                        timeout=15,
                    )
                    return
            self.exit(0)
        elif answer == "discard":
            for screen in dirty:
                screen._discard_draft(screen.revision)
            self.exit(0)

    # ------------------------------------------------------------------ command palette

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """The palette's Screenshot: into the downloads folder, made first if the account has none yet."""
        if path is None:
            from platformdirs import user_downloads_path

            folder = user_downloads_path()
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                self.notify(f"No screenshot: {folder} cannot be made ({exc.strerror})", severity="error")
                return None
            path = str(folder)
        return super().deliver_screenshot(filename, path, time_format)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, EditorScreen):
            yield from screen.palette_commands()
        elif isinstance(screen, TaskListScreen):
            for binding in TaskListScreen.BINDINGS:
                if isinstance(binding, Binding) and binding.show:
                    yield SystemCommand(
                        f"Tasks: {binding.description}",
                        binding.tooltip or binding.description,
                        lambda action=binding.action: screen.run_action(action),
                    )
