"""The author's desk (issue 33): typing never vanishes, the findings panel folds away, 80x24 works.

Pilot tests (``App.run_test``) on a git copy of the bundled set; each drives the app by key presses
only and checks where the typed text landed, or what the screen shows.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from textual.widget import Widget
from textual.widgets import Input, TextArea

from ctbench.authoring.app.app import NewTaskDefaults
from ctbench.store import TaskSet
from tests.test_app_flows import SIZE, author_app, settle, type_text, until, validated
from tests.test_editing import make_repo

pytestmark = (
    pytest.mark.tui
)  # Textual pilot tests (conftest marks modules holding an App class; this one holds none)


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def inside(widget: Widget | None, section: str) -> bool:
    return widget is not None and any(getattr(a, "id", None) == section for a in widget.ancestors)


def test_typing_lands_in_a_field_after_tab_f_keys_and_the_findings(
    tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    network = TaskSet.open(tasks).network_names()[0]
    home = tmp_path / "home"  # an account without ~/Downloads yet
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))

    async def scenario() -> None:
        app = author_app(tasks, mode="new", new_defaults=NewTaskDefaults(network=network, title="Site down"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("ctrl+s")  # create with the suggested id
            editor = await validated(pilot)
            statement = editor.query_one("#statement-text", TextArea)
            title = editor.query_one("#statement-title", Input)
            assert app.focused is statement

            await pilot.press("tab")  # the habit of moving on from the title: stays in the statement
            await type_text(pilot, "Users lose the site")
            assert statement.text.strip() == "Users lose the site"
            await pilot.press("shift+tab")  # the title; Tab cycles inside the section, never beyond
            assert app.focused is title
            await pilot.press("end")
            await type_text(pilot, " at 09:40")
            assert title.value == "Site down at 09:40"
            await pilot.press("shift+tab")  # round the section, not off into the lists beside it
            assert app.focused is statement
            await pilot.press("shift+tab")
            assert app.focused is title

            await pilot.press("f9")  # the findings: typing there goes on to the field typed into last
            assert app.focused is editor.query_one("#val-list")
            await type_text(pilot, "!")
            await settle(pilot)
            assert title.value == "Site down at 09:40!" and app.focused is title

            for key, section in (("f3", "network"), ("f5", "golden"), ("f7", "metadata"), ("f8", "tryit")):
                await pilot.press("f9")
                assert app.focused is editor.query_one("#val-list")
                await pilot.press(key)
                await settle(pilot)
                assert inside(app.focused, section), (key, app.focused)
            assert app.focused is editor.query_one("#rc-input")
            await pilot.press("f2")  # from the Try-it command line
            await settle(pilot)
            assert app.focused is statement

            await pilot.press("ctrl+t")  # the prompt preview hides the text box; F2 brings it back
            await pilot.press("f2")
            await settle(pilot)
            assert app.focused is statement and statement.display
            await type_text(pilot, ".")
            assert statement.text.rstrip().endswith(".")

            await pilot.press("f9", "f9")  # shown and focused, then hidden: focus back in the field
            await settle(pilot)
            assert not editor.findings_shown and app.focused is statement
            assert "(F9)" in editor.sub_title  # the counts stay in the header
            await pilot.press("f9")
            assert editor.findings_shown

            app.action_screenshot()  # the palette's Screenshot, on an account with no ~/Downloads
            await until(pilot, lambda: any((home / "Downloads").glob("*.svg")), "the screenshot")

    asyncio.run(scenario())


def test_saving_after_an_import_keeps_the_imported_recording(tasks: Path, tmp_path: Path) -> None:
    from ctbench.authoring.app.dialogs.merge import MergeDialog
    from tests.conftest import run_cli

    ts = TaskSet.open(tasks)
    device = ts.load_task("RCA-001").recordings[0].device
    log = tmp_path / "securecrt.log"
    log.write_bytes(f"<{device}>display clock\r\n2031-02-03 04:05:06 UTC\r\n<{device}>".encode())

    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="RCA-001")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            await type_text(pilot, "Seen since 09:40. ")
            res = run_cli("authoring", "import-capture", str(log), "--task", "RCA-001", "--tasks", str(tasks))
            assert res.returncode == 0, res.stderr
            await pilot.press("ctrl+s")
            await until(pilot, lambda: isinstance(app.screen, MergeDialog), "the merge dialog")
            merge = app.screen
            assert isinstance(merge, MergeDialog)
            assert any("display clock" in line and "added on disk" in line for line in merge.plan.kept)
            assert merge.plan.conflicts == []
            await pilot.press("ctrl+s")
            await until(pilot, lambda: app.screen is editor and not editor.dirty, "the merged save")

    asyncio.run(scenario())
    task = TaskSet.open(tasks).load_task("RCA-001")
    assert task.statement.startswith("Seen since 09:40. Users")
    assert any(r.device == device and r.command == "display clock" for r in task.recordings)


def screen_text(app: object) -> str:
    """What the terminal shows now, as plain text lines (the compositor's last frame)."""
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    return "\n".join(strip.text for strip in strips)


def words(app: object) -> str:
    """The screen's words in reading order, borders and scrollbars left out, so wrapped text reads whole."""
    return " ".join(re.sub("[\u2500-\u259f]", " ", screen_text(app)).split())


def test_80x24_reaches_the_routing_table_and_160_columns_wrap(tasks: Path) -> None:
    from ctbench.authoring.app.widgets.sections.statement import prompt_preview
    from ctbench.tui.replay_console import ReplayConsole

    why = "The static default route points at the firewall's old address, " * 3

    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="RCA-001")
        async with app.run_test(size=(80, 24)) as pilot:
            editor = await validated(pilot)
            assert not editor.findings_shown and not editor.query_one("#editor-nav").display
            await pilot.press("f8")
            console = editor.query_one(ReplayConsole)
            await until(pilot, lambda: console.session is not None, "the replay session")
            while console.device != "CORE_SW_01":
                await pilot.press("ctrl+o")
            await settle(pilot)
            editor.query_one("#rc-input").focus()
            await type_text(pilot, "dis ip rou")
            await pilot.press("enter")
            await until(pilot, lambda: "NextHop" in screen_text(app), "the routing table")
            assert "Interface " not in screen_text(app)  # the last column runs past 80 columns…
            await pilot.press("shift+tab")  # …into the output, which scrolls sideways
            assert app.focused is editor.query_one("#rc-output")
            await pilot.press(*["right"] * 12)
            await settle(pilot)
            assert "Interface" in screen_text(app) and "InLoopBack0" in screen_text(app)
            help_text = " ".join(editor.current_section.HELP.split()[-4:])
            assert help_text in words(app)  # the help wraps instead of clipping

            await pilot.press("f9")  # the findings on demand, and away again
            assert editor.findings_shown and app.focused is editor.query_one("#val-list")
            await pilot.press("f9")
            assert not editor.findings_shown

            await pilot.press("f2", "ctrl+t")  # the agent's prompt: long lines wrap, not clipped
            await settle(pilot)
            first = prompt_preview(editor.session)[0].splitlines()[0]
            assert len(first) > 80 and first in words(app)
            await pilot.press("ctrl+t")

            await pilot.resize_terminal(160, 40)
            await settle(pilot)
            assert editor.query_one("#editor-nav").display
            assert not editor.findings_shown  # hidden by F9 stays hidden: the author chose so
            await pilot.press("f5", "e")  # a long reason, typed into the golden action's form
            await settle(pilot)
            await type_text(pilot, why.strip())  # replaces the selected old reason
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert editor.session.draft.hidden.golden_actions[0].why == why.strip()
            assert why.strip() in " ".join(
                screen_text(app).replace("▕", " ").split()
            )  # the reason in full, wrapped

    asyncio.run(scenario())


def test_the_quit_dialog_under_fast_key_presses(tasks: Path) -> None:
    """Keys typed faster than the dialog goes: one answer counts, the rest never pop the screens below."""
    from textual import events

    async def burst(app: object, keys: str) -> None:
        for key in keys:
            app.post_message(events.Key(key, key))  # type: ignore[attr-defined]

    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="PATH-001")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            await type_text(pilot, "x")
            await pilot.press("ctrl+q")
            await settle(pilot)
            await burst(app, "ccccc")  # cancel, four times over: once popped the editor, then everything
            await pilot.pause(0.3)
            await settle(pilot)
            assert app.screen is editor and editor.dirty
            await pilot.press("ctrl+q")
            await settle(pilot)
            await burst(app, "kkd")
            await pilot.pause(0.3)
        assert app.return_code == 0

    asyncio.run(scenario())
    assert (tasks / ".drafts" / "PATH-001.json").is_file()  # "keep" was the answer, not "discard"


def test_a_part_both_sides_changed_is_a_choice_and_the_other_side_is_kept(tasks: Path) -> None:
    """The statement changed in the app and on disk: both shown, Space keeps the disk's; the title, changed
    only on disk, is merged in without asking."""
    from ruamel.yaml import YAML

    from ctbench.authoring.app.dialogs.merge import MergeDialog

    path = tasks / "rca" / "RCA-001" / "task.yaml"
    disk_statement = "Rewritten by a colleague: the server 10.20.30.40 is unreachable from HQ.\n"

    def colleague_edits() -> None:
        yaml = YAML()
        doc = yaml.load(path.read_text(encoding="utf-8"))
        doc["statement"] = disk_statement
        doc["title"] = "HQ users lose the DC server"
        with path.open("w", encoding="utf-8") as fh:
            yaml.dump(doc, fh)

    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="RCA-001")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            await type_text(pilot, "Seen since 09:40. ")
            colleague_edits()
            await pilot.press("ctrl+s")
            await until(pilot, lambda: isinstance(app.screen, MergeDialog), "the merge dialog")
            merge = app.screen
            assert isinstance(merge, MergeDialog)
            assert [c.what for c in merge.plan.conflicts] == ["statement"]
            assert any("title" in line for line in merge.plan.kept), merge.plan.kept
            shown = words(app)
            # side by side: the two columns' lines interleave in reading order
            assert "Yours: On disk: Seen since 09:40." in shown, shown
            assert "Rewritten by a colleague" in shown, shown
            assert merge.choices == {merge.plan.conflicts[0].key: "mine"}
            await pilot.press("space")  # keep the colleague's statement
            assert merge.choices == {merge.plan.conflicts[0].key: "disk"}
            await pilot.press("ctrl+s")
            await until(pilot, lambda: app.screen is editor and not editor.dirty, "the merged save")

    asyncio.run(scenario())
    task = TaskSet.open(tasks).load_task("RCA-001")
    assert task.statement == disk_statement
    assert task.title == "HQ users lose the DC server"
