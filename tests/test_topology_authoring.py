"""Authoring a topology-restoration gold: the app's answer section and ``ctb-author set-answer --link``.

In a real git repository holding the bundled set (TOPO-003: two cables from AGG_SW_01 to the stack
SWITCH01): the app shows the links as the agent must write them, removes one, adds it back through the
node and port pickers and saves; the CLI sets links by their agent-written lines, refuses the same
cable written backwards, and refuses another family's answer on a topology task.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from ctbench.store import TaskSet
from tests.conftest import run_cli
from tests.test_app_flows import SIZE, author_app, settle, type_text, until, validated
from tests.test_editing import make_repo

pytestmark = pytest.mark.xdist_group("topology-authoring")

LINK_1 = "AGG_SW_01(Ten-GigabitEthernet1/0/0/1)->SWITCH01(Ten-GigabitEthernet1/0/47)"
LINK_2 = "AGG_SW_01(Ten-GigabitEthernet1/0/0/2)->SWITCH01(Ten-GigabitEthernet2/0/47)"


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def _links(tasks: Path, task_id: str = "TOPO-003") -> list[str]:
    hidden = TaskSet.open(tasks).load_hidden(task_id)
    return [f"{x.a.node}({x.a.interface})->{x.b.node}({x.b.interface})" for x in hidden.answer.links or []]


def test_the_answer_section_shows_removes_and_adds_links(tasks: Path) -> None:
    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="TOPO-003")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            await pilot.press("f6")
            await settle(pilot)
            assert editor.current_section.SECTION_ID == "answer"
            table = editor.query_one("#answer-table", DataTable)
            assert table.row_count == 2
            assert str(editor.query_one("#answer-lines", Static).render()) == f"{LINK_1}\n{LINK_2}"
            await pilot.press("x")  # the first row
            await settle(pilot)
            await pilot.press("y")
            await until(pilot, lambda: table.row_count == 1, "the removal")
            assert editor.session.draft.hidden.answer.links[0].a.interface == "Ten-GigabitEthernet1/0/0/2"
            await pilot.press("a")  # end A: node, port; end B: node, port (typed: not in the list)
            await settle(pilot)
            for text in ("SWITCH01", "Ten-GigabitEthernet1/0/47", "AGG_SW_01", "Ten-GigabitEthernet1/0/0/1"):
                await type_text(pilot, text)
                await pilot.press("enter")
                await settle(pilot)
            await until(pilot, lambda: table.row_count == 2, "the added link")
            await validated(pilot)
            await pilot.press("ctrl+s")
            await until(pilot, lambda: not editor.dirty, "the save")
        return None

    asyncio.run(scenario())
    # saved: the cable written from the stack's side, the same two cables as before
    assert _links(tasks) == [
        LINK_2,
        "SWITCH01(Ten-GigabitEthernet1/0/47)->AGG_SW_01(Ten-GigabitEthernet1/0/0/1)",
    ]
    res = run_cli("authoring", "validate", str(tasks / "topology" / "TOPO-003"))
    assert res.returncode == 0, res.stdout + res.stderr


def test_set_answer_sets_links_and_refuses_the_same_cable_twice(tasks: Path) -> None:
    res = run_cli("authoring", "set-answer", "TOPO-003", "--link", LINK_2, "--tasks", str(tasks), "--json")
    assert res.returncode == 0, res.stderr
    assert _links(tasks) == [LINK_2]
    backwards = "SWITCH01(Ten-GigabitEthernet2/0/47)->AGG_SW_01(Ten-GigabitEthernet1/0/0/2)"
    res = run_cli(
        "authoring", "set-answer", "TOPO-003", "--link", backwards, "--append", "--tasks", str(tasks)
    )
    assert res.returncode != 0 and "already in the answer" in res.stderr and "Traceback" not in res.stderr
    res = run_cli(
        "authoring", "set-answer", "TOPO-003", "--link", "AGG_SW_01 -- SWITCH01", "--tasks", str(tasks)
    )
    assert res.returncode != 0 and "expected NODE-A(port)->NODE-B(port)" in res.stderr
    res = run_cli(
        "authoring", "set-answer", "TOPO-003", "--rca", "AGG_SW_01;x;shutdown", "--tasks", str(tasks)
    )
    assert res.returncode != 0 and "topology task" in res.stderr
    assert _links(tasks) == [LINK_2]
