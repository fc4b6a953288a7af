"""The authoring app driven by key presses alone (``App.run_test``), on a copy of the bundled tasks in git.

A complete RCA task and a complete path task are written from an empty editor, saved (a real commit
with trailers) and must then pass ``ctb-author validate`` as a subprocess. A session killed with
unsaved work leaves a draft that the next start offers back. Names of devices, interfaces and links
are read from the bundled network, so the tests keep working when the sample set grows.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

import git
import pytest
from textual import events
from textual.keys import _character_to_key  # the key names Textual gives typed characters
from textual.pilot import Pilot
from textual.widgets import TextArea

from ctbench.authoring.app.app import AuthorApp
from ctbench.authoring.app.dialogs.recover import RecoverDialog
from ctbench.authoring.app.screens.editor import EditorScreen
from ctbench.authoring.app.screens.task_list import TaskListScreen
from ctbench.authoring.app.widgets.task_table import TaskTable
from ctbench.authoring.editing import EditSession
from ctbench.commits import TRAILER_ACTION, TRAILER_TASK
from ctbench.model import Network
from ctbench.store import TaskSet
from tests.conftest import run_cli
from tests.test_editing import make_repo, trailers

SIZE = (110, 32)
AUTHOR = "Pat Pilot <pat@example.org>"


# --------------------------------------------------------------------------- helpers


def author_app(tasks: Path, **kw: object) -> AuthorApp:
    """The app as a test drives it: no blinking cursor, short autosave and validation delays."""
    opts: dict[str, object] = {
        "cursor_blink": False,
        "author": AUTHOR,
        "autosave_delay": 10.0,
        "validate_delay": 0.3,
    }
    opts.update(kw)
    app = AuthorApp(TaskSet.open(tasks), **opts)  # type: ignore[arg-type]
    app.animation_level = "none"  # nothing to wait for between key presses
    return app


async def settle(pilot: Pilot) -> None:
    """Let thread workers (loading, validation, saving, git) finish and their messages land."""
    app = pilot.app

    def running() -> list:
        # The list's loader pauses while the editor covers the list: only wait for it when it can run.
        list_shown = any(isinstance(s, TaskListScreen) and s.is_current for s in app.screen_stack)
        return [
            w
            for w in app.workers
            if getattr(w, "_thread_worker", False)
            and not w.is_finished
            and (list_shown or not (w.group or "").startswith("task-list"))
        ]

    for _ in range(500):
        await pilot.pause()
        busy = running()
        if not busy:
            return
        await app.workers.wait_for_complete(busy)
    raise AssertionError("workers did not settle")


async def until(pilot: Pilot, cond: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await settle(pilot)


async def type_text(pilot: Pilot, text: str) -> None:
    """Type ``text`` into the focused widget as a fast typist (or a terminal paste of keys) would.

    The key events are the ones ``pilot.press`` sends, queued in one burst instead of waiting for the
    screen to go idle after each, which keeps the tests fast.
    """
    app = pilot.app
    for ch in text:
        key = "enter" if ch == "\n" else _character_to_key(ch)
        app.post_message(events.Key(key, None if ch == "\n" else ch))
    await pilot.pause()


async def validated(pilot: Pilot) -> EditorScreen:
    """Wait for the editor to be on screen and its live validation to have caught up with the edits."""
    await until(pilot, lambda: isinstance(pilot.app.screen, EditorScreen), "the editor")
    editor = pilot.app.screen
    assert isinstance(editor, EditorScreen)
    await until(pilot, lambda: editor.validated_revision == editor.revision, "live validation")
    return editor


def errors_of(editor: EditorScreen) -> list[str]:
    from ctbench.validation import Severity

    panel = editor.query_one("ValidationPanel")
    return [f.render() for f in panel.findings if f.severity == Severity.ERROR]  # type: ignore[attr-defined]


def validate_cli(folder: Path) -> dict[str, object]:
    res = run_cli("authoring", "validate", "--json", str(folder))
    report = json.loads(res.stdout)
    assert res.returncode == 0, json.dumps(report["findings"], indent=1)
    return report


def pick_rca_material(ts: TaskSet) -> tuple[str, str, str, str]:
    """(network, device, interface, label) from the bundled set."""
    for network in ts.network_names():
        for dev in ts.network(network).devices:
            if dev.os and dev.interfaces:
                return network, dev.name, dev.interfaces[-1], ts.taxonomy.labels[0].label
    raise AssertionError("no device with a CLI and interfaces in the bundled networks")


def pick_path(net: Network) -> list[tuple[str, str | None]]:
    """A path of at least three hops along the links, starting and ending anywhere, as (node, egress)."""
    adjacency: dict[str, list[tuple[str, str]]] = {}
    for lk in net.links:
        adjacency.setdefault(lk.a.node, []).append((lk.a.interface, lk.b.node))
        adjacency.setdefault(lk.b.node, []).append((lk.b.interface, lk.a.node))
    best: list[tuple[str, str | None]] = []
    for start in adjacency:
        path: list[tuple[str, str | None]] = [(start, None)]
        seen = {start}
        while True:
            node = path[-1][0]
            step = next(((e, n) for e, n in adjacency.get(node, []) if n not in seen), None)
            if step is None:
                break
            path[-1] = (node, step[0])
            path.append((step[1], None))
            seen.add(step[1])
        if len(path) > len(best):
            best = path
    assert len(best) >= 3, "the bundled network has no path of three hops"
    trimmed = best[:4]
    trimmed[-1] = (trimmed[-1][0], None)
    return trimmed


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


# --------------------------------------------------------------------------- complete tasks by keys


def test_author_a_complete_rca_task_by_keys(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    network, device, iface, label = pick_rca_material(ts)

    async def scenario() -> None:
        app = author_app(tasks)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, TaskListScreen)
            await pilot.press("n")  # new task dialog: family rca, suggested id
            await settle(pilot)
            new_id = app.screen.query_one("#new-id").value  # type: ignore[attr-defined]
            await pilot.press("shift+tab")  # network select (focus starts on the title)
            await pilot.press("enter")
            await type_text(pilot, network)
            await pilot.press("enter", "tab")
            await type_text(pilot, "Office users lose the remote site")
            await pilot.press("ctrl+s")
            await settle(pilot)
            editor = await validated(pilot)
            assert editor.session.task_id == new_id and editor.session.draft.is_new

            await type_text(
                pilot,
                "Users in the office report that the remote site is unreachable.\n"
                "Answer with one line per root cause: node;object;root-cause label",
            )
            await pilot.press("f4", "p")  # recordings: paste one
            await settle(pilot)
            await pilot.press("ctrl+u")
            await type_text(pilot, device)
            await pilot.press("enter")
            await type_text(pilot, "display interface brief")
            await pilot.press("enter")
            await type_text(pilot, f"Interface  PHY  Protocol\n{iface}  *down  down\n")
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert len(editor.session.draft.task.recordings) == 1

            await pilot.press("f5", "a")  # golden action: picked from the recordings
            await settle(pilot)
            await pilot.press("enter")
            await type_text(pilot, "the uplink is administratively down")
            await pilot.press("enter")
            await settle(pilot)

            await pilot.press("f6", "a")  # gold answer: node, object, label pickers
            await settle(pilot)
            for text in (device, iface, label):
                await type_text(pilot, text)
                await pilot.press("enter")
                await settle(pilot)

            await pilot.press("f7")  # metadata, field by field
            await pilot.press("enter", "down", "enter", "tab")
            await type_text(pilot, "1")
            await pilot.press("tab")
            await type_text(pilot, "interface state")
            await pilot.press("tab", "tab")
            await type_text(pilot, "The interface brief shows the uplink administratively down.")
            await validated(pilot)
            assert errors_of(editor) == []
            assert editor.dirty

            await pilot.press("ctrl+s")
            await until(pilot, lambda: not editor.dirty, "the save")
            assert not app.drafts.path_for(new_id).exists()
            hidden = ts.load_hidden(new_id)
            assert [t.entry().line() for t in hidden.answer.rca or []] == [f"{device};{iface};{label}"]
            assert hidden.metadata.observability is not None and hidden.metadata.observability.value == "O1"
            assert hidden.metadata.chain_length == 1 and hidden.golden_actions[0].why
            await pilot.press("escape")  # back to the list, which shows the new task
            await settle(pilot)
            assert isinstance(app.screen, TaskListScreen)
            assert new_id in app.screen.query_one(TaskTable).shown

    asyncio.run(scenario())
    folder = tasks / "rca" / [r.id for r in TaskSet.open(tasks).refs() if r.family.value == "rca"][-1]
    assert trailers(tasks)[TRAILER_ACTION] == "create"
    report = validate_cli(tasks / "rca" / trailers(tasks)[TRAILER_TASK])
    assert report["errors"] == 0 and folder.exists()
    assert not git.Repo(tasks.parent).is_dirty(untracked_files=True)


def test_author_a_complete_path_task_by_keys(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    network = ts.network_names()[0]
    path = pick_path(ts.network(network))
    recorded = next(node for node, _ in path if ts.network(network).device(node).os)  # type: ignore[union-attr]
    expected = " -> ".join(n if e is None else f"{n}_{e}" for n, e in path)

    async def scenario() -> None:
        app = author_app(tasks)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("n")
            await settle(pilot)
            for _ in range(3):  # back from the title to the family select
                await pilot.press("shift+tab")
            await pilot.press("enter", "down", "enter")  # path restoration
            await settle(pilot)
            new_id = app.screen.query_one("#new-id").value  # type: ignore[attr-defined]
            assert new_id.startswith("PATH-")
            await pilot.press("tab", "tab", "enter")
            await type_text(pilot, network)
            await pilot.press("enter", "tab")
            await type_text(pilot, "Path between two sites")
            await pilot.press("enter")  # Enter in the title creates the task
            await settle(pilot)
            editor = await validated(pilot)
            assert editor.session.family.value == "path"
            first, last = path[0][0], path[-1][0]
            await type_text(
                pilot,
                f"Restore the forwarding path from {first} to {last}.\n"
                "Answer with one line per path, hops joined by ->.",
            )

            await pilot.press("f4", "p")
            await settle(pilot)
            await pilot.press("ctrl+u")
            await type_text(pilot, recorded)
            await pilot.press("enter")
            await type_text(pilot, "display ip routing-table")
            await pilot.press("enter")
            await type_text(pilot, "Route Flags: R - relay\n0.0.0.0/0  Static  60  0  RD  10.0.0.1\n")
            await pilot.press("ctrl+s")
            await settle(pilot)
            await pilot.press("g")  # the highlighted recording becomes golden
            await settle(pilot)
            await type_text(pilot, "default route towards the next hop")
            await pilot.press("ctrl+s")
            await settle(pilot)

            await pilot.press("f6", "a")  # the path builder, hop by hop along the links
            await settle(pilot)
            await type_text(pilot, f"start at {first}")
            await pilot.press("enter")
            for node, egress in path[:-1]:
                nxt = path[[n for n, _ in path].index(node) + 1][0]
                await type_text(pilot, f"{egress} {nxt}")
                await pilot.press("enter")
            await type_text(pilot, "end the path")
            await pilot.press("enter")
            await settle(pilot)
            assert [p for p in editor.session.draft.hidden.answer.paths or []], "no path was added"

            await pilot.press("f7")
            await type_text(pilot, "static routing")
            await validated(pilot)
            assert errors_of(editor) == []
            await pilot.press("ctrl+s")
            await until(pilot, lambda: not editor.dirty, "the save")
            saved = ts.load_hidden(new_id)
            from ctbench.authoring.editing import path_text

            assert [path_text(p) for p in saved.answer.paths or []] == [expected]

    asyncio.run(scenario())
    new_id = trailers(tasks)[TRAILER_TASK]
    assert new_id.startswith("PATH-")
    validate_cli(tasks / "path" / new_id)


# --------------------------------------------------------------------------- drafts


def test_a_killed_session_is_recovered(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    task_file = tasks / "rca" / "RCA-001" / "task.yaml"
    before = task_file.read_bytes()
    head = git.Repo(tasks.parent).head.commit.hexsha

    async def first_run() -> None:
        app = author_app(tasks, mode="edit", task_id="RCA-001", autosave_delay=0.05)
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            assert isinstance(app.focused, TextArea)
            await type_text(pilot, "UNSAVED NOTE: ")
            await until(pilot, lambda: app.drafts.path_for("RCA-001").exists(), "the autosave")
            assert editor.dirty
        # leaving run_test without saving or quitting is what a killed terminal looks like to the files

    async def second_run() -> None:
        app = author_app(tasks)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, RecoverDialog), "the recovery offer")
            await pilot.press("enter")
            editor = await validated(pilot)
            assert editor.dirty and editor.recovered
            assert editor.session.draft.statement.startswith("UNSAVED NOTE: ")
            await pilot.press("ctrl+s")
            await until(pilot, lambda: not editor.dirty, "the save")

    asyncio.run(first_run())
    assert task_file.read_bytes() == before and git.Repo(tasks.parent).head.commit.hexsha == head
    assert (tasks / ".drafts" / "RCA-001.json").is_file()
    asyncio.run(second_run())
    assert ts.load_task("RCA-001").statement.startswith("UNSAVED NOTE: ")
    assert not (tasks / ".drafts" / "RCA-001.json").exists()
    assert trailers(tasks)[TRAILER_TASK] == "RCA-001"
    validate_cli(tasks / "rca" / "RCA-001")


def test_a_draft_can_be_discarded_and_edit_offers_it(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    from ctbench.authoring.drafts import DraftStore

    s = EditSession.open(ts, "PATH-001")
    s.set_title("draft title")
    DraftStore(ts.root).save(s.snapshot())

    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="PATH-001")
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, RecoverDialog), "the recovery offer")
            await pilot.press("d")  # discard, then confirm
            await settle(pilot)
            await pilot.press("y")
            editor = await validated(pilot)  # edit ID then opens the saved task
            assert editor.session.draft.task.title != "draft title" and not editor.dirty

    asyncio.run(scenario())
    assert not (tasks / ".drafts" / "PATH-001.json").exists()


def test_opening_the_saved_task_sets_the_draft_aside(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    from ctbench.authoring.drafts import DraftStore

    s = EditSession.open(ts, "RCA-002")
    s.set_title("work from yesterday")
    DraftStore(ts.root).save(s.snapshot())

    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="RCA-002", autosave_delay=0.05)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, RecoverDialog), "the recovery offer")
            await pilot.press("escape")  # later: open the saved task instead
            editor = await validated(pilot)
            await type_text(pilot, "today ")
            await until(pilot, lambda: app.drafts.path_for("RCA-002").exists(), "the new autosave")
            assert editor.session.draft.task.title != "work from yesterday"

    asyncio.run(scenario())
    kept = list((tasks / ".drafts").glob("RCA-002.*.json.set-aside"))
    assert len(kept) == 1 and "work from yesterday" in kept[0].read_text()


# --------------------------------------------------------------------------- the list


def test_list_filter_duplicate_and_delete(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    ids = [r.id for r in ts.refs()]

    async def scenario() -> None:
        app = author_app(tasks)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, TaskListScreen)
            table = screen.query_one(TaskTable)
            assert table.shown == ids
            rows = table.rows_by_id
            assert all(r.status is not None and r.errors is not None for r in rows.values())
            await pilot.press("slash")
            await type_text(pilot, "family:path")
            await settle(pilot)
            assert table.shown and all(rows[i].family.value == "path" for i in table.shown)
            await pilot.press("escape")
            assert table.shown == ids

            await pilot.press("d")  # duplicate the first task
            await settle(pilot)
            await pilot.press("ctrl+s")
            editor = await validated(pilot)
            dup_id = editor.session.task_id
            assert editor.session.draft.origin == ids[0] and dup_id not in ids
            await pilot.press("ctrl+s")
            await until(pilot, lambda: not editor.dirty and not editor.saving, "the save")
            await pilot.press("escape")
            await settle(pilot)
            assert dup_id in table.shown

            table.move_cursor(row=table.shown.index(dup_id))
            await pilot.press("x")  # delete asks first; "n" keeps it
            await settle(pilot)
            await pilot.press("n")
            await settle(pilot)
            assert (ts.task_dir(ts.ref(dup_id).family, dup_id)).exists()
            await pilot.press("x")
            await settle(pilot)
            await pilot.press("y")
            await until(pilot, lambda: dup_id not in table.shown, "the deleted row to go")
            assert trailers(tasks) == {
                "Ctbench-Task": dup_id,
                "Ctbench-Action": "delete",
                "Ctbench-Author": AUTHOR,
            }

    asyncio.run(scenario())
    assert [r.id for r in TaskSet.open(tasks).refs()] == ids
