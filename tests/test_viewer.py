"""``ctb-eval view``: pilot tests through real run folders (open a task, step through its trajectory,
flip between two runs, side by side) and SVG snapshots of the task table and a task's trajectory."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static, TabbedContent

from ctbench.evaluate.score import Scorer
from ctbench.store import TaskSet
from ctbench.viewer.app import CompareScreen, RunsScreen, TaskScreen, ViewerApp
from ctbench.viewer.data import load_run
from tests.conftest import run_cli
from tests.test_score_support import gold_text, golden_calls, oracle_run, starter_copy, write_run

SIZE = (130, 36)


def _runs(tmp_path: Path) -> tuple[Path, list[Path]]:
    tasks = starter_copy(tmp_path)
    ts = TaskSet.open(tasks)
    good = oracle_run(tmp_path / "runs" / "good", tasks, name="good", agent="oracle", model="gold")
    weak = write_run(
        tmp_path / "runs" / "weak",
        tasks,
        name="weak",
        agent="cheap",
        model="small",
        answers={
            "RCA-001": "I think:\n<answer>\nCORE_SW_01;GigabitEthernet0/0/24;physical link down\nnot a line\n</answer>",
            "RCA-002": gold_text(ts, "RCA-002"),
            "PATH-001": "",
        },
        calls={
            "RCA-001": [
                ("CORE_SW_01", "dis int br", "display interface brief", "recorded"),
                ("CORE_SW_01", "display version", "display version", "denied"),
            ],
            "RCA-002": golden_calls(ts, "RCA-002"),
        },
    )
    (weak / "logs").mkdir()
    (weak / "logs" / "RCA-001.log").write_text(
        "=== RCA-001 attempt 1 ===\n"
        '{"event": "model_turn", "role": "agent", "text": "Let me look at the core switch.", '
        '"input_tokens": 800, "output_tokens": 40, "tool_calls": ["run_command"]}\n'
        "the agent printed this\n",
        encoding="utf-8",
    )
    res = run_cli("evaluate", "score", str(good), "--tasks", str(tasks), "--resamples", "100")
    assert res.returncode == 0, res.stderr
    return tasks, [good, weak]  # weak is left unscored: the viewer scores it on opening


async def wait(pilot: Pilot, cond: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def row(table: DataTable, i: int) -> list[str]:
    """A task-table row as plain strings (the table holds rich Text cells)."""
    return [str(c) for c in table.get_row_at(i)]


def _text(screen: object, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())  # type: ignore[attr-defined]


def test_runs_table_filter_sort_and_next_run(tmp_path: Path) -> None:
    tasks, runs = _runs(tmp_path)
    asyncio.run(_table_scenario(ViewerApp(runs, TaskSet.open(tasks))))


async def _table_scenario(app: ViewerApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        assert [r.source for r in app.runs] == ["scores.json", "scored now"]
        table = screen.query_one("#tasks", DataTable)
        assert table.row_count == 3
        assert [row(table, i)[0] for i in range(3)] == ["PATH-001", "RCA-001", "RCA-002"]
        await pilot.press("slash", *"family=rca", "enter")
        assert table.row_count == 2
        await pilot.press("slash", *["backspace"] * 12, "enter")
        await pilot.press("tab")  # the weak run
        assert screen.run.info.name == "weak" and table.row_count == 3
        rows = {row(table, i)[0]: row(table, i) for i in range(3)}
        assert rows["RCA-001"][2:4] == ["answered", "✗"] and rows["RCA-002"][3] == "✓"
        assert rows["PATH-001"][2] == "unparsable"  # a blank answer has the one name
        assert rows["RCA-001"][6] == "1/3"  # dis int br covered one golden action
        await pilot.press("slash", *"correct=no", "enter")
        assert table.row_count == 2
        await pilot.press("s", "s")  # sort by family, then by outcome
        assert screen.sort_column == "outcome"
        assert [row(table, i)[2] for i in range(2)] == ["answered", "unparsable"]
        await pilot.press("S")
        assert [row(table, i)[2] for i in range(2)] == ["unparsable", "answered"]


def test_rows_of_a_run_are_read_when_shown_and_the_table_fills_in_chunks(tmp_path: Path) -> None:
    tasks, runs = _runs(tmp_path)
    res = run_cli("evaluate", "score", str(runs[1]), "--tasks", str(tasks), "--resamples", "100")
    assert res.returncode == 0, res.stderr
    asyncio.run(_chunk_scenario(ViewerApp(runs, TaskSet.open(tasks), first_rows=1)))


async def _chunk_scenario(app: ViewerApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        assert [r.source for r in app.runs] == ["scores.json", "scores.json"]
        assert app.runs[0].loaded and not app.runs[1].loaded  # the weak run's rows wait until it is shown
        assert (
            "RCA 1/2 (50.0%)" in row(screen.query_one("#runs", DataTable), 1)[5]
        )  # counted from scores.json
        table = screen.query_one("#tasks", DataTable)
        await wait(pilot, lambda: screen.filled, "the rest of the rows")
        assert [row(table, i)[0] for i in range(table.row_count)] == ["PATH-001", "RCA-001", "RCA-002"]
        await pilot.press("tab")
        assert app.runs[1].loaded
        await wait(pilot, lambda: screen.filled, "the weak run's rows")
        rows = {row(table, i)[0]: row(table, i) for i in range(table.row_count)}
        assert len(rows) == 3 and rows["PATH-001"][2] == "unparsable" and rows["RCA-001"][6] == "1/3"
        screen.filter_text = "RCA"
        screen.filter_text = "RCA-002"  # a newer filter drops the rows an older refill had still to add
        await wait(pilot, lambda: screen.filled, "the filtered rows")
        await pilot.pause()
        assert [row(table, i)[0] for i in range(table.row_count)] == ["RCA-002"]


def test_scores_json_is_used_only_when_newer_than_the_run_and_whole(tmp_path: Path) -> None:
    tasks, (good, _) = _runs(tmp_path)
    scorer = Scorer(TaskSet.open(tasks))
    assert load_run(good, scorer).source == "scores.json"
    later = (good / "scores.json").stat().st_mtime + 5
    os.utime(good / "run.yaml", (later, later))  # run.yaml edited after scoring: score again
    assert load_run(good, scorer).source == "scored now"
    doc = json.loads((good / "scores.json").read_text(encoding="utf-8"))
    del doc["tasks"][0]["evidence"]  # not what ctb-eval score writes
    (good / "scores.json").write_text(json.dumps(doc), encoding="utf-8")
    os.utime(good / "scores.json", (later + 5, later + 5))
    run = load_run(good, scorer)
    assert run.source == "scored now" and len(run.rows) == 3


def test_a_run_of_two_trials_shows_and_opens_each_trial(tmp_path: Path) -> None:
    tasks, (good, _) = _runs(tmp_path)
    run = tmp_path / "runs" / "trials"
    res = run_cli(
        "evaluate",
        "run",
        "--agent",
        "oracle",
        "--trials",
        "2",
        "--tasks",
        str(tasks),
        "--out",
        str(run),
        "--progress",
        "none",
        "--all-statuses",
        "--no-score",
    )
    assert res.returncode == 0, res.stderr
    traj2 = run / "trajectories" / "RCA-001.trial2.jsonl"  # trial 2 skipped its last golden action
    traj2.write_text(
        "".join(x + "\n" for x in traj2.read_text(encoding="utf-8").splitlines()[:-1]), encoding="utf-8"
    )
    res = run_cli("evaluate", "score", str(run), "--tasks", str(tasks), "--resamples", "100")
    assert res.returncode == 0, res.stderr
    asyncio.run(_trials_scenario(ViewerApp([run, good], TaskSet.open(tasks))))


async def _trials_scenario(app: ViewerApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, RunsScreen) and app.runs[0].source == "scores.json"
        assert row(screen.query_one("#runs", DataTable), 0)[4] == "3"  # tasks, each with two rows
        table = screen.query_one("#tasks", DataTable)
        await wait(pilot, lambda: screen.filled, "the rows")
        ids = [row(table, i)[0] for i in range(table.row_count)]
        assert ids == ["PATH-001 #1", "PATH-001 #2", "RCA-001 #1", "RCA-001 #2", "RCA-002 #1", "RCA-002 #2"]
        assert [row(table, i)[6] for i in (2, 3)] == ["3/3", "2/3"]
        await pilot.press("slash", *"trial=2", "enter")
        assert [row(table, i)[0] for i in range(table.row_count)] == [
            "PATH-001 #2",
            "RCA-001 #2",
            "RCA-002 #2",
        ]
        table.move_cursor(row=1)
        await pilot.press("enter")
        await wait(
            pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.detail is not None, "the task"
        )
        task = app.screen
        assert isinstance(task, TaskScreen) and (task.task_id, task.trial) == ("RCA-001", 2)
        assert "trial 2 of 2" in _text(task, "#title") and "2/3 covered" in _text(task, "#golden-text")
        await pilot.press("r")  # the one-trial run has trial 1 only: that is what is shown beside it
        await wait(
            pilot,
            lambda: (
                task.run.info.name == "good"
                and task.detail is not None
                and task.detail.result is not None
                and task.detail.result.trial == 1
            ),
            "the flip",
        )
        assert "3/3 covered" in _text(task, "#golden-text")


def test_open_a_task_step_through_flip_and_compare(tmp_path: Path) -> None:
    tasks, runs = _runs(tmp_path)
    asyncio.run(_task_scenario(ViewerApp(runs, TaskSet.open(tasks))))


async def _task_scenario(app: ViewerApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("tab")  # the weak run
        table = app.screen.query_one("#tasks", DataTable)
        table.move_cursor(row=1)  # RCA-001
        await pilot.press("enter")
        await wait(
            pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.detail is not None, "the task"
        )
        screen = app.screen
        assert (
            isinstance(screen, TaskScreen) and screen.task_id == "RCA-001" and screen.run.info.name == "weak"
        )
        answer = _text(screen, "#answer-text")
        assert "✗ CORE_SW_01;GigabitEthernet0/0/24;physical link down" in answer
        assert "node✓ object✓ label✗" in answer and "? not a line" in answer
        assert "✗ CORE_SW_01;GigabitEthernet0/0/24;shutdown" in answer  # the gold, not found
        assert "Prompt" in _text(screen, "#prompt-text")
        await pilot.press("n")  # into the trajectory
        assert screen.query_one(TabbedContent).active == "trajectory"
        output = _text(screen, "#output")
        assert "step 1" in output and "covers a golden action" in output and "GigabitEthernet0/0/24" in output
        await pilot.press("n")
        output = _text(screen, "#output")
        assert "step 2" in output and "display version" in output and "covers" not in output
        golden = _text(screen, "#golden-text")
        assert "1/3 covered" in golden and "✓ covered  CORE_SW_01: display interface brief" in golden
        log = _text(screen, "#log-text")
        assert (
            "Let me look at the core switch." in log
            and "in 800 out 40" in log
            and "the agent printed this" in log
        )
        await pilot.press("r")  # the same task in the other run
        await wait(
            pilot,
            lambda: (
                screen.detail is not None
                and screen.detail.result is not None
                and screen.run.info.name == "good"
                and "3/3" in _text(screen, "#golden-text")
            ),
            "the flip",
        )
        assert "✓ CORE_SW_01;GigabitEthernet0/0/24;shutdown" in _text(screen, "#answer-text")
        assert "no log" in _text(screen, "#log-text")
        await pilot.press("c")
        await wait(
            pilot,
            lambda: (
                isinstance(app.screen, CompareScreen) and "Trajectory" in _text(app.screen, "#right-text")
            ),
            "side by side",
        )
        left, right = _text(app.screen, "#left-text"), _text(app.screen, "#right-text")
        assert "oracle+gold" in left and "cheap+small" in right
        assert "3/3 covered" in left and "1/3 covered" in right
        await pilot.press("escape", "escape")
        assert isinstance(app.screen, RunsScreen)


def _snap_app(tmp_path: Path) -> ViewerApp:
    tasks, runs = _runs(tmp_path)
    return ViewerApp(runs, TaskSet.open(tasks))


async def _settled(pilot: Pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_snapshot_task_table(snap_compare, tmp_path: Path) -> None:
    async def run_before(pilot: Pilot) -> None:
        await pilot.press("tab")
        await _settled(pilot)

    assert snap_compare(_snap_app(tmp_path), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("keys", [(), ("n", "n")], ids=["answer", "trajectory"])
def test_snapshot_task(snap_compare, tmp_path: Path, keys: tuple[str, ...]) -> None:
    async def run_before(pilot: Pilot) -> None:
        await pilot.press("tab", "down", "enter")
        await wait(
            pilot,
            lambda: isinstance(pilot.app.screen, TaskScreen) and pilot.app.screen.detail is not None,
            "the task",
        )
        if keys:
            await pilot.press(*keys)
        await _settled(pilot)

    assert snap_compare(_snap_app(tmp_path), terminal_size=SIZE, run_before=run_before)
