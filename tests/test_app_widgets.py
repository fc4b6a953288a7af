"""Parts of the authoring app on their own: the replay console (shared with the review app), jumping
from a finding to its field, the command palette, network and capture editing, quitting with unsaved work.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets import DataTable, RichLog

from ctbench.authoring.app.screens.editor import EditorScreen
from ctbench.authoring.app.widgets.sections.recordings import describe_bytes, render_bytes
from ctbench.authoring.app.widgets.validation_panel import Target, target_for
from ctbench.store import TaskSet
from ctbench.tui.replay_console import ReplayConsole, visible
from ctbench.validation import Finding, Severity
from tests.test_app_flows import SIZE, author_app, errors_of, settle, type_text, until, validated
from tests.test_editing import make_repo


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def log_text(log: RichLog) -> str:
    return "\n".join("".join(seg.text for seg in strip) for strip in log.lines)


# --------------------------------------------------------------------------- replay console


class ConsoleApp(App[None]):
    """How the review app embeds the console: a session object and nothing else."""

    def __init__(self, session: Any) -> None:
        super().__init__()
        self.session = session

    def compose(self) -> ComposeResult:
        yield ReplayConsole(self.session, id="console")


def open_session(tasks: Path, task_id: str) -> Any:
    try:
        from ctbench.replay.engine import ReplayEngine
    except ImportError:
        pytest.skip("the replay engine is not in this tree yet")
    try:
        return ReplayEngine(TaskSet.open(tasks)).open_session(task_id)
    except Exception as exc:  # the engine is another component; its own tests cover its failures
        pytest.skip(f"the replay engine cannot open {task_id} here: {exc}")


def test_replay_console_over_a_real_session(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    rec = ts.load_task("RCA-001").recordings[0]
    recorded = ts.read_recording("RCA-001", rec).decode("utf-8", "replace")
    session = open_session(tasks, "RCA-001")
    seen: list[Message] = []

    def answers() -> list[ReplayConsole.CommandRan]:
        """Each answer once (the hook sees a bubbling message at every level it passes)."""
        unique = {id(m): m for m in seen if isinstance(m, ReplayConsole.CommandRan)}
        return list(unique.values())

    async def scenario() -> None:
        app = ConsoleApp(session)
        async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
            console = app.query_one(ReplayConsole)
            await pilot.pause()
            assert console.device is not None
            for _ in range(len(session.devices())):
                if console.device == rec.device:
                    break
                await pilot.press("ctrl+o")
            assert console.device == rec.device
            app.query_one("#rc-input").focus()
            await type_text(pilot, rec.command)
            await pilot.press("enter")
            await until(pilot, lambda: len(answers()) == 1, "the answer")
            await type_text(pilot, "zzqx nonsense")
            await pilot.press("enter")
            await until(pilot, lambda: len(answers()) == 2, "the error")
            await pilot.press("up")
            assert app.query_one("#rc-input").value == "zzqx nonsense"  # type: ignore[attr-defined]
            text = log_text(app.query_one(RichLog))
            prompt = session.prompt(rec.device) if hasattr(session, "prompt") else f"{rec.device}>"
            assert f"{prompt}{rec.command}" in text
            first_line = next(ln for ln in visible(recorded).splitlines() if ln.strip())
            assert first_line.rstrip() in text
            first, second = answers()
            assert str(first.observation.outcome.value) == "recorded" and first.device == rec.device
            assert str(second.observation.outcome.value) != "recorded"

    asyncio.run(scenario())


def test_replay_console_without_a_session() -> None:
    async def scenario() -> None:
        app = ConsoleApp(None)
        async with app.run_test(size=SIZE) as pilot:
            console = app.query_one(ReplayConsole)
            console.set_session(None, note="the replay engine is not available")
            app.query_one("#rc-input").focus()
            await type_text(pilot, "show version")
            await pilot.press("enter")
            await pilot.pause()
            text = log_text(app.query_one(RichLog))
            assert "the replay engine is not available" in text and "no replay session" in text

    asyncio.run(scenario())


def test_visible_output_keeps_text_and_shows_control_bytes() -> None:
    assert visible("a\r\nb\x1b[7m\tc\r") == "a\nb\\x1b[7m\tc␍"


# --------------------------------------------------------------------------- recordings view


def test_recording_description_and_invisibles() -> None:
    data = b"Interface  PHY \r\nGE0/0/1\tup\r\nlast"
    assert (
        describe_bytes(data)
        == "33 bytes · 3 lines · CRLF · 1 line(s) with trailing spaces · no final newline"
    )
    assert describe_bytes(b"a\nb\n") == "4 bytes · 2 lines · LF"
    shown = render_bytes(data, invisibles=True).plain
    assert "·␍␊" in shown and "→" in shown
    assert render_bytes(data, invisibles=False).plain.splitlines()[0] == "Interface  PHY "
    assert "not UTF-8" in describe_bytes(b"\xff\xfe\n")


# --------------------------------------------------------------------------- findings, palette


def test_findings_point_at_their_section() -> None:
    def f(file: str, loc: list[str | int], code: str = "x") -> Finding:
        return Finding(severity=Severity.ERROR, code=code, file=file, message="m", loc=loc)

    assert target_for(f("tasks/rca/X/hidden.yaml", ["golden_actions", 2, "command"])) == Target("golden", 2)
    assert target_for(f("tasks/rca/X/hidden.yaml", ["answer", "rca", 1, "label"])) == Target(
        "answer", 1, "label"
    )
    assert target_for(f("tasks/rca/X/hidden.yaml", ["metadata", "declared", "h_l"])).section == "metadata"
    assert target_for(f("tasks/rca/X/task.yaml", ["recordings", 3])) == Target("recordings", 3)
    assert target_for(f("tasks/rca/X/task.yaml", ["accessible", 0])).section == "network"
    assert target_for(f("tasks/networks/lab.yaml", ["links", 1])).section == "network"
    assert target_for(f("tasks/rca/X/task.yaml", ["statement"])) == Target("statement", None, "statement")


def test_jump_from_a_finding_to_its_field_and_fix_it(tasks: Path) -> None:
    """With the golden length declared, removing a golden action makes it a mismatch error."""
    from ctbench.authoring.editing import EditSession

    setup = EditSession.open(TaskSet.open(tasks), "RCA-001")
    setup.set_metadata(declared={"golden_length": len(setup.draft.hidden.golden_actions)})
    setup.save(commit=False)

    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="RCA-001")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            assert errors_of(editor) == []
            await pilot.press("f5", "x")
            await settle(pilot)
            await pilot.press("y")
            await validated(pilot)
            assert any("golden_length" in e for e in errors_of(editor))
            await pilot.press("f9", "enter")  # errors come first in the panel
            await settle(pilot)
            assert editor.current_section.SECTION_ID == "metadata"
            table = editor.query_one("#meta-table", DataTable)
            assert app.focused is table
            assert str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value) == "golden_length"
            await pilot.press("equals_sign")  # declare the derived value
            await validated(pilot)
            assert errors_of(editor) == []

    asyncio.run(scenario())


def test_command_palette_lists_editor_actions(tasks: Path) -> None:
    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="PATH-001")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            titles = [c.title for c in app.get_system_commands(editor)]
            assert "Save task" in titles and "Go to Gold answer" in titles
            assert any(t.startswith("Recordings: ") for t in titles)
            await pilot.press("ctrl+p")
            await settle(pilot)
            await type_text(pilot, "Go to Gold answer")
            await pilot.pause(0.1)
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            assert editor.current_section.SECTION_ID == "answer"

    asyncio.run(scenario())


# --------------------------------------------------------------------------- network, capture, quit


def test_network_device_and_access_by_keys(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    net_name = ts.load_task("RCA-001").network

    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="RCA-001")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            await pilot.press("f3", "a")
            await settle(pilot)
            await type_text(pilot, "LAB_R9")
            await pilot.press("tab")
            await type_text(pilot, "Cisco")
            await pilot.press("tab", "enter")  # CLI family select
            await type_text(pilot, "cisco_ios")
            await pilot.press("enter", "tab")
            await type_text(pilot, "router")
            await pilot.press("ctrl+s")
            await settle(pilot)
            net = editor.session.network
            assert net.device("LAB_R9") is not None and net.device("LAB_R9").os == "cisco_ios"  # type: ignore[union-attr]
            table = editor.query_one("#network-devices", DataTable)
            assert app.focused is table
            # RCA-001 lists its accessible devices, so a new device is closed to agents until opened
            assert "LAB_R9" not in editor.session.accessible_devices()
            table.move_cursor(row=[d.name for d in net.devices].index("LAB_R9"))
            await pilot.press("space")
            await settle(pilot)
            assert "LAB_R9" in editor.session.accessible_devices()
            await validated(pilot)
            assert errors_of(editor) == []
            await pilot.press("ctrl+s")
            await until(pilot, lambda: not editor.dirty, "the save")

    asyncio.run(scenario())
    saved = TaskSet.open(tasks)
    assert saved.network(net_name).device("LAB_R9") is not None
    assert "LAB_R9" in (saved.load_task("RCA-001").accessible or [])


def test_attach_a_session_log(tasks: Path, tmp_path: Path) -> None:
    pytest.importorskip("ctbench.authoring.capture")
    ts = TaskSet.open(tasks)
    task = ts.load_task("RCA-001")
    rec = task.recordings[0]
    dev = ts.network(task.network).device(rec.device)
    assert dev is not None and dev.os is not None
    from ctbench.dialects import get_dialect

    prompt = get_dialect(dev.os).prompt(dev.name)
    output = b"Interface                   PHY   Protocol\r\nGE0/0/9                     up    up\r\n"
    log = tmp_path / "session.log"
    log.write_bytes(f"{prompt}display interface brief\r\n".encode() + output + prompt.encode())

    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="RCA-001")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            before = len(editor.session.draft.task.recordings)
            await pilot.press("f4", "a")
            await settle(pilot)
            await type_text(pilot, str(log))
            await pilot.press("tab", "tab", "ctrl+u")
            await type_text(pilot, "yes")  # replace an existing recording of it
            await pilot.press("ctrl+s")
            await until(
                pilot,
                lambda: any(
                    editor.session.read_recording(r) == output for r in editor.session.draft.task.recordings
                ),
                "the import",
            )
            assert len(editor.session.draft.task.recordings) in (before, before + 1)

    asyncio.run(scenario())


def test_quit_with_unsaved_work_keeps_a_draft(tasks: Path) -> None:
    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="PATH-001")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            await pilot.press("ctrl+up")  # focus stays in the statement
            await type_text(pilot, "x")
            assert editor.dirty and not app.drafts.path_for("PATH-001").exists()
            await pilot.press("ctrl+q")
            await settle(pilot)
            await pilot.press("k")
            await pilot.pause()
        assert app.return_code == 0

    asyncio.run(scenario())
    assert (tasks / ".drafts" / "PATH-001.json").is_file()
    assert isinstance(EditorScreen, type)


def test_the_mouse_works_too(tasks: Path) -> None:
    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="RCA-001")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            for index, section in ((2, "recordings"), (4, "answer"), (0, "statement")):
                await pilot.click(
                    "#editor-nav", offset=(3, 1 + index)
                )  # one line per entry, below the padding
                await settle(pilot)
                assert editor.current_section.SECTION_ID == section
            await pilot.click("#editor-nav", offset=(3, 1 + 3))
            await settle(pilot)
            table = editor.query_one("#golden-table", DataTable)
            await pilot.click("#golden-table", offset=(4, 2))  # a click on a row selects it…
            await pilot.click("#golden-table", offset=(4, 2))  # …and a second one edits it
            await settle(pilot)
            assert table.cursor_row == 1
            assert type(app.screen).__name__ == "FormDialog"
            await pilot.press("escape")

    asyncio.run(scenario())


def test_keys_can_be_remapped_by_binding_id(tasks: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTBENCH_KEYMAP", "list.new=b, editor.section.golden=f12")

    async def scenario() -> None:
        app = author_app(tasks)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("n")  # no longer bound
            await settle(pilot)
            assert type(app.screen).__name__ == "TaskListScreen"
            await pilot.press("b")
            await settle(pilot)
            assert type(app.screen).__name__ == "NewTaskDialog"
            await pilot.press("ctrl+s")
            editor = await validated(pilot)
            await pilot.press("f12")
            assert editor.current_section.SECTION_ID == "golden"

    asyncio.run(scenario())


def test_try_it_replays_the_unsaved_working_copy(tasks: Path) -> None:
    """A recording pasted a moment ago, not saved, already answers in the Try it console."""
    open_session(tasks, "RCA-001")  # skips when the replay engine is not usable here
    ts = TaskSet.open(tasks)
    task = ts.load_task("RCA-001")
    net = ts.network(task.network)
    device = next(
        n for n in (task.accessible or [d.name for d in net.devices]) if net.device(n) and net.device(n).os
    )

    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="RCA-001")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            await pilot.press("f4", "p")
            await settle(pilot)
            await pilot.press("ctrl+u")
            await type_text(pilot, device)
            await pilot.press("enter")
            await type_text(pilot, "display clock")
            await pilot.press("enter")
            await type_text(pilot, "2031-02-03 04:05:06 UTC\n")
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert editor.dirty
            await pilot.press("f8")
            console = editor.query_one(ReplayConsole)
            await until(pilot, lambda: console.session is not None, "the replay session")
            while console.device != device:
                await pilot.press("ctrl+o")
            editor.query_one("#rc-input").focus()
            await type_text(pilot, "display clock")
            await pilot.press("enter")
            await until(
                pilot,
                lambda: "2031-02-03 04:05:06 UTC" in log_text(console.query_one(RichLog)),
                "the replayed output",
            )

    asyncio.run(scenario())
    assert TaskSet.open(tasks).load_task("RCA-001").recordings == task.recordings  # nothing was saved
