"""Tab completion and ``?`` help in the replay console (the Try-it and blind-review console).

The console is driven through ``App.run_test()`` over a real replay session on the bundled task
RCA-001: keys in, the input line and the output log out.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.message import Message
from textual.widgets import Input, RichLog

from ctbench.replay.engine import ReplayEngine
from ctbench.store import TaskSet
from ctbench.tui.replay_console import ReplayConsole, completion_columns
from tests.test_app_flows import SIZE, type_text, until
from tests.test_app_widgets import ConsoleApp, log_text

REPO = Path(__file__).resolve().parents[1]


def _session() -> Any:
    return ReplayEngine(TaskSet.open(REPO / "tasks")).open_session("RCA-001")


async def _on_device(pilot: Any, app: ConsoleApp, device: str) -> Input:
    console = app.query_one(ReplayConsole)
    await pilot.pause()
    for _ in range(10):
        if console.device == device:
            break
        await pilot.press("ctrl+o")
    assert console.device == device
    field = app.query_one("#rc-input", Input)
    field.focus()
    return field


def test_tab_completes_and_lists_like_the_device() -> None:
    session = _session()

    async def scenario() -> None:
        app = ConsoleApp(session)
        async with app.run_test(size=SIZE) as pilot:
            field = await _on_device(pilot, app, "CORE_SW_01")
            await type_text(pilot, "dis cu")
            await pilot.press("tab")
            assert field.value == "dis current-configuration " and app.focused is field
            field.value = ""
            await type_text(pilot, "dis ip rou")
            await pilot.press("tab")
            assert field.value == "dis ip routing-table "
            field.value = ""
            await type_text(pilot, "display c")
            await pilot.press("tab")  # ambiguous, nothing in common to add: unchanged
            assert field.value == "display c"
            await pilot.press("tab")  # second Tab: the candidates
            await pilot.pause()
            text = log_text(app.query_one(RichLog))
            assert "<CORE_SW_01>display c" in text
            assert completion_columns(session.complete("CORE_SW_01", "display c")).splitlines()[0] in text
            field.value = ""
            await type_text(pilot, "dis cp")
            await pilot.press("tab")  # cpu-defend, cpu-usage: the common part is added
            assert field.value == "dis cpu-"
            assert app.focused is field

    asyncio.run(scenario())


def test_question_mark_answers_at_once_and_keeps_the_line() -> None:
    session = _session()
    seen: list[Message] = []

    async def scenario() -> None:
        app = ConsoleApp(session)
        async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
            field = await _on_device(pilot, app, "GW_01")
            await type_text(pilot, "show clock ?")
            await until(pilot, lambda: any(isinstance(m, ReplayConsole.CommandRan) for m in seen), "the help")
            assert field.value == "show clock "
            text = log_text(app.query_one(RichLog))
            assert "GW_01#show clock ?" in text
            assert "  detail  Detailed information" in text and "<cr>" in text
            assert "[help]" not in text  # no replay tag: it is what the device prints
            ran = next(m for m in seen if isinstance(m, ReplayConsole.CommandRan))
            assert ran.observation.outcome.value == "help" and ran.command == "show clock ?"

    asyncio.run(scenario())
    assert [r.outcome.value for r in session.trajectory] == ["help"]


def test_console_over_a_session_without_completion_still_types() -> None:
    """A session object without ``complete`` (a remote or minimal one): Tab does nothing, no crash."""

    class Minimal:
        def devices(self) -> list[str]:
            return ["R1"]

        def run(self, device: str, command: str) -> str:
            return f"ran {command}"

    async def scenario() -> None:
        app = ConsoleApp(Minimal())
        async with app.run_test(size=SIZE) as pilot:
            field = await _on_device(pilot, app, "R1")
            await type_text(pilot, "sh")
            await pilot.press("tab")
            assert field.value == "sh" and app.focused is field

    asyncio.run(scenario())


def test_blind_review_console_completes_and_answers_help(tmp_path: Path) -> None:
    """The blind reviewer's console is the same widget: Tab and '?' work there too, and a help call
    is in the blind trajectory as help."""
    from ctbench.replay.isolated import IsolatedSession
    from tests.review_support import copy_world, make_world, ok
    from tests.test_review_app import SIZE as REVIEW_SIZE
    from tests.test_review_app import BlindScreen, new_app, on_screen, quit_app, wait_for

    world = copy_world(make_world(tmp_path / "template"), tmp_path / "w")
    ok("submit", "RCA-101", "--as", "alice", "--no-push", tasks=world.tasks)
    app = new_app(world)

    async def run() -> None:
        async with app.run_test(size=REVIEW_SIZE) as pilot:
            await wait_for(pilot, on_screen(app, BlindScreen))
            assert isinstance(app._session, IsolatedSession)  # Tab and '?' cross to the isolated server
            assert "no hidden.yaml in view" in str(
                app.screen.query_one("#console").border_title
            )  # and it says so
            await pilot.press("ctrl+o")  # ACC_SW_01 -> CORE_SW_01
            field = app.screen.query_one("#rc-input", Input)
            await pilot.press(*"dis cu", "tab")
            assert field.value == "dis current-configuration " and app.focused is field
            field.value = ""
            await pilot.press(*"display clock ?")
            await wait_for(pilot, lambda: "Matching output" in _log(app))
            assert field.value == "display clock "
            assert [r.outcome.value for r in app._session.trajectory] == ["help"]  # Tab is not a call
            await quit_app(pilot, app)

    asyncio.run(run())


def _log(app: Any) -> str:
    if not app.screen.query("#rc-output"):
        return ""
    return log_text(app.screen.query_one("#rc-output", RichLog))
