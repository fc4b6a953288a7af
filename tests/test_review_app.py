"""The blind review app, driven by key presses: blind by construction, then the reveal and the verdicts."""

from __future__ import annotations

import asyncio
import builtins
import io
import os
import pathlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctbench.approval.records import load_records
from ctbench.approval.states import Criterion, Verdict
from ctbench.review.blind_app import BlindApp, BlindScreen, ConfirmSubmit, reflow
from ctbench.review.reveal_screen import RevealScreen
from ctbench.review.widgets import VerdictToggle
from ctbench.review.workflow import ReviewDesk
from ctbench.store import TaskSet
from tests.review_support import RCA_ANSWER, World, copy_world, git, make_world, ok

SIZE = (130, 40)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("review-template") / "w")


@pytest.fixture
def world(template: World, tmp_path: Path) -> World:
    w = copy_world(template, tmp_path / "w")
    ok("submit", "RCA-101", "--as", "alice", "--no-push", tasks=w.tasks)
    return w


def new_app(world: World, **kw: Any) -> BlindApp:
    desk = ReviewDesk(TaskSet.open(world.tasks), push=False)
    return BlindApp(desk, "RCA-101", "bob", blink=False, **kw)


async def wait_for(pilot: Any, cond: Callable[[], bool], timeout: float = 15) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        assert loop.time() < end, "timed out waiting for the app"
        await pilot.pause(0.02)


async def quit_app(pilot: Any, app: BlindApp) -> None:
    """Quit as Ctrl+Q does, once pending callbacks ran: calling the action directly, because a key
    press that ends the app leaves the pilot waiting on a dead message loop, and a quit in the same
    frame as a mount races Textual's teardown of freshly composed widgets."""
    await pilot.pause(0.1)
    await app.action_quit()


def on_screen(app: BlindApp, kind: type) -> Callable[[], bool]:
    """The screen is on top *and* mounted (the blind screen ends its mount by focusing the console)."""

    def check() -> bool:
        screen = app.screen
        if not isinstance(screen, kind) or not screen.is_mounted:
            return False
        if isinstance(screen, BlindScreen):
            return app.focused is not None and app.focused.id == "rc-input"
        return True

    return check


def revealed(app: BlindApp) -> Callable[[], bool]:
    return lambda: isinstance(app.screen, RevealScreen) and app.screen.revealed is not None


class OpenWatcher:
    """Records every file opened through builtins.open, io.open, os.open and Path.open, in order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        real_open, real_os_open, real_path_open = builtins.open, os.open, pathlib.Path.open

        def note(path: Any) -> None:
            if isinstance(path, str | bytes | os.PathLike):
                with self._lock:
                    self.events.append(("open", os.fsdecode(path)))

        def watched_open(file: Any, *a: Any, **k: Any) -> Any:
            note(file)
            return real_open(file, *a, **k)

        def watched_os_open(path: Any, *a: Any, **k: Any) -> Any:
            note(path)
            return real_os_open(path, *a, **k)

        def watched_path_open(self_: pathlib.Path, *a: Any, **k: Any) -> Any:
            note(self_)
            return real_path_open(self_, *a, **k)

        monkeypatch.setattr(builtins, "open", watched_open)
        monkeypatch.setattr(io, "open", watched_open)
        monkeypatch.setattr(os, "open", watched_os_open)
        monkeypatch.setattr(pathlib.Path, "open", watched_path_open)

    def mark(self, what: str) -> None:
        with self._lock:
            self.events.append(("mark", what))

    def opened(self, name: str) -> list[int]:
        return [i for i, (kind, p) in enumerate(self.events) if kind == "open" and Path(p).name == name]

    def index(self, mark: str) -> int:
        return self.events.index(("mark", mark))


async def solve_by_keys(pilot: Any, app: BlindApp) -> None:
    await wait_for(pilot, on_screen(app, BlindScreen))
    await pilot.press("ctrl+o")  # ACC_SW_01 -> CORE_SW_01
    await pilot.press(*"dis int br", "enter")
    await wait_for(pilot, lambda: "GigabitEthernet0/0/24" in _console_text(app))
    await pilot.press("f2", *"CORE_SW_01;GE0/0/24;shutdown")


def test_blind_app_never_opens_the_hidden_file_before_the_blind_commit(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher = OpenWatcher(monkeypatch)
    app = new_app(world)

    def hook(message: Any) -> None:
        if isinstance(message, BlindApp.BlindCommitted):
            watcher.mark("blind committed")

    async def run() -> None:
        async with app.run_test(size=SIZE, message_hook=hook) as pilot:
            await solve_by_keys(pilot, app)
            assert watcher.opened("hidden.yaml") == []
            await pilot.press("ctrl+s")
            await wait_for(pilot, on_screen(app, ConfirmSubmit))
            await pilot.press("y")
            await wait_for(pilot, revealed(app))
            screen = app.screen
            assert isinstance(screen, RevealScreen) and screen.revealed is not None
            assert screen.revealed.comparison.exact
            # rule by keys: agree, agree, agree, disagree with a comment
            for _ in range(3):
                await pilot.press("a", "tab", "tab")
            await pilot.press("d", "ctrl+s")
            await pilot.pause(0.05)
            # a disagreement needs a comment: nothing is recorded, the cursor goes to the comment
            assert app.focused is not None and app.focused.id == "comment-metadata_correctness"
            assert (
                load_records(world.tasks / "rca" / "RCA-101")[-1].criteria[Criterion.SOLVABILITY].verdict
                == Verdict.OPEN
            )
            await pilot.press(*"3 hops", "ctrl+s")
            await wait_for(
                pilot, lambda: any("needs_revision" in str(w.render()) for w in app.screen.query("#outcome"))
            )
            await quit_app(pilot, app)

    asyncio.run(run())
    commit = watcher.index("blind committed")
    hidden_reads = watcher.opened("hidden.yaml")
    assert hidden_reads, "the reveal must load the gold (or the watcher sees nothing)"
    assert min(hidden_reads) > commit, "hidden.yaml was opened before the blind answer was committed"
    assert (
        watcher.opened("task.yaml") and min(watcher.opened("task.yaml")) < commit
    )  # the watcher saw the blind phase

    rec = load_records(world.tasks / "rca" / "RCA-101")[-1]
    assert rec.blind is not None and rec.blind.answer == RCA_ANSWER and rec.blind.commands == 1
    assert rec.comparison is not None and rec.comparison.golden_covered == [
        ["CORE_SW_01", "display interface brief"]
    ]
    assert rec.criteria[Criterion.METADATA_CORRECTNESS].verdict == Verdict.DISAGREE
    assert rec.criteria[Criterion.METADATA_CORRECTNESS].thread[-1].text == "3 hops"
    assert rec.outcome == "needs_revision"
    actions = git(
        "log", "--reverse", "--format=%(trailers:key=Ctbench-Action,valueonly)", cwd=world.work
    ).split()
    assert actions.index("blind") < actions.index("reveal") < actions.index("request-revision")
    assert app.return_code == 0


def test_closing_without_submitting_reads_nothing_hidden_and_keeps_the_draft(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher = OpenWatcher(monkeypatch)
    app = new_app(world)

    async def first() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, on_screen(app, BlindScreen))
            await pilot.press("f2", *"R1;x;y")
            await pilot.pause(0.7)  # the draft is saved after half a second without typing
            await quit_app(pilot, app)

    asyncio.run(first())
    assert watcher.opened("hidden.yaml") == []
    assert load_records(world.tasks / "rca" / "RCA-101")[-1].blind is None
    again = new_app(world)

    async def second() -> None:
        async with again.run_test(size=SIZE) as pilot:
            await wait_for(pilot, on_screen(again, BlindScreen))
            assert again.screen.query_one("#answer").text == "R1;x;y"
            await quit_app(pilot, again)

    asyncio.run(second())
    assert watcher.opened("hidden.yaml") == []


def test_reveal_app_refuses_without_a_blind_commit(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    watcher = OpenWatcher(monkeypatch)
    app = new_app(world, reveal_only=True)

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(
                pilot, lambda: any("Cannot reveal" in str(w.render()) for w in app.screen.query("#summary"))
            )
            await quit_app(pilot, app)

    asyncio.run(run())
    assert watcher.opened("hidden.yaml") == []
    assert app.return_code == 1


def test_blind_app_refuses_an_author(world: World) -> None:
    desk = ReviewDesk(TaskSet.open(world.tasks), push=False)
    app = BlindApp(desk, "RCA-101", "alice", blink=False)

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(
                pilot, lambda: any("author" in str(w.render()) for w in app.screen.query("#message-text"))
            )
            await quit_app(pilot, app)

    asyncio.run(run())
    assert app.return_code == 1


def test_verdict_toggle_keys() -> None:
    from textual.app import App, ComposeResult

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield VerdictToggle(Criterion.SOLVABILITY, id="v")

    app = One()

    async def run() -> None:
        async with app.run_test() as pilot:
            toggle = app.query_one("#v", VerdictToggle)
            toggle.focus()
            await pilot.press("a")
            assert toggle.verdict == Verdict.AGREE and toggle.has_class("-agree")
            await pilot.press("space")
            assert toggle.verdict == Verdict.DISAGREE
            await pilot.press("o")
            assert toggle.verdict == Verdict.OPEN and not toggle.has_class("-disagree")

    asyncio.run(run())


def test_reflow_joins_hard_wrapped_lines_but_keeps_structure() -> None:
    text = "Users report a\nproblem here.\n\nAnswer with:\n  node;object;label\n- a bullet\n- another\n"
    assert (
        reflow(text)
        == "Users report a problem here.\n\nAnswer with:\n  node;object;label\n- a bullet\n- another"
    )


# --------------------------------------------------------------------------- snapshots


def test_snapshot_blind_screen(world: World, snap_compare: Any) -> None:
    app = new_app(world)

    async def before(pilot: Any) -> None:
        await wait_for(pilot, on_screen(app, BlindScreen))
        await pilot.press("ctrl+o", *"dis int br", "enter")
        await wait_for(pilot, lambda: "GigabitEthernet0/0/24" in _console_text(app))
        await pilot.press("f2", *"CORE_SW_01;GE0/0/24;")

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_snapshot_confirm_dialog(world: World, snap_compare: Any) -> None:
    app = new_app(world)

    async def before(pilot: Any) -> None:
        await wait_for(pilot, on_screen(app, BlindScreen))
        await pilot.press("f2", *"R1;x;y", "ctrl+s")
        await wait_for(pilot, on_screen(app, ConfirmSubmit))

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_snapshot_reveal_screen(world: World, snap_compare: Any, tmp_path: Path) -> None:
    answer = tmp_path / "a.txt"
    answer.write_text("CORE_SW_01;GE0/0/24;shutdown\nFW_01;GE1/0/1;shutdown\n")
    cmds = tmp_path / "c.txt"
    cmds.write_text("CORE_SW_01 display interface brief\nGW_01 show ip route\n")
    ok(
        "blind",
        "RCA-101",
        "--as",
        "bob",
        "--answer",
        str(answer),
        "--commands",
        str(cmds),
        "--no-push",
        tasks=world.tasks,
    )
    app = new_app(world, reveal_only=True)

    async def before(pilot: Any) -> None:
        await wait_for(pilot, revealed(app))
        await pilot.press("a", "tab", *"all shown")

    assert snap_compare(app, terminal_size=(130, 50), run_before=before)


def _console_text(app: BlindApp) -> str:
    from textual.widgets import RichLog

    if not isinstance(app.screen, BlindScreen):
        return ""
    log = app.screen.query_one("#rc-output", RichLog)
    return "\n".join(str(line.text) for line in log.lines)


def test_blind_app_shows_the_prompt_the_runner_gives_agents(world: World) -> None:
    """Same text as ctb-eval prompt (the runner's prompt_for): labels, device table, format; reflowed only."""
    from ctbench.scoring.prompt import prompt_for

    app = new_app(world)
    shown: list[str] = []

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, on_screen(app, BlindScreen))
            static = app.screen.query_one("#statement")
            shown.append(str(static.render()))
            await quit_app(pilot, app)

    asyncio.run(run())
    prompt = prompt_for(TaskSet.open(world.tasks), "RCA-101")
    assert " ".join(shown[0].split()) == " ".join(prompt.split())
    for part in (
        "Root-cause labels:",
        "- CORE_SW_01: Huawei",
        "role ",
        "site ",
        "node;object;root-cause label",
    ):
        assert part in prompt and part.split()[0] in shown[0]
