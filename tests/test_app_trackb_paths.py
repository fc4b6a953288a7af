"""The authoring app keeps and edits the ingress ports of a path named port by port (Track B's L2 paths).

A Track B Phase 2 tree with an L2 path question is imported into a git repository, opened in the
app (``App.run_test``) and edited by key presses alone: the answer section shows the gold port by
port, the path builder opens in the same mode, adds a path whose ingress ports come from the links,
rebuilds the first path through a port typed in (live validation names the wrong cable), takes it
back, and the save writes both paths with every ingress port. ``ctb-author validate`` passes after.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import git
import pytest
from textual.widgets import DataTable, Static

from ctbench.authoring.editing import path_text
from ctbench.store import TaskSet
from tests.conftest import run_cli
from tests.test_app_flows import (
    SIZE,
    author_app,
    errors_of,
    settle,
    type_text,
    until,
    validate_cli,
    validated,
)
from tests.trackb_support import L2_GOLD, L2_PROMPT, L2_SID, add_questions, write_tree

pytestmark = pytest.mark.xdist_group("trackb_app")

TASK = "TTACB-P2-005"
GOLD_LINE = (
    "Core-R1(GigabitEthernet1/0/1) -> Core-R2(GigabitEthernet1/0/1) -> Core-R2(GigabitEthernet1/0/2)"
    " -> PSS(GigabitEthernet0/2)"
)
VIA_SWITCH = (
    "Core-R1(GigabitEthernet1/0/2) -> Edge-SW1(GigabitEthernet1/0/1) -> Edge-SW1(GigabitEthernet1/0/2)"
    " -> PSS(GigabitEthernet0/3)"
)


@pytest.fixture
def l2_repo(tmp_path: Path) -> Path:
    tree = write_tree(tmp_path / "tree")
    add_questions(tree, {5: (L2_SID, L2_PROMPT, L2_GOLD)})
    root = tmp_path / "repo"
    proc = run_cli(
        "authoring", "import-trackb", str(tree.phase_dir), "--outputs", str(tree.outputs),
        "--vendors", str(tree.vendors), "--phase", "2", "--gt", str(tree.gt), "--tasks", str(root / "tasks"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    repo = git.Repo.init(root)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Repo Owner")
        cw.set_value("user", "email", "owner@example.org")
    repo.git.add("-A")
    repo.git.commit("-q", "-m", "Track B Phase 2 import")
    return root / "tasks"


def so_far(app: object) -> str:
    return str(app.screen.query_one("#path-so-far", Static).render())  # type: ignore[attr-defined]


def test_the_path_editor_keeps_and_edits_ingress_ports(l2_repo: Path) -> None:
    ts = TaskSet.open(l2_repo)
    assert [path_text(p) for p in ts.load_hidden(TASK).answer.paths or []] == [GOLD_LINE]

    async def scenario() -> None:
        app = author_app(l2_repo, mode="edit", task_id=TASK)
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            assert errors_of(editor) == []
            await pilot.press("f6")
            await settle(pilot)
            lines = editor.query_one("#answer-lines", Static)
            assert str(lines.render()) == GOLD_LINE  # as the agent must write it: port by port

            # a second path: the builder names ingress ports, as the gold does, from the links' far ends
            await pilot.press("a")
            await settle(pilot)
            assert so_far(app).startswith("ports in and out")
            for step in ("start at Core-R1", "GigabitEthernet1/0/2 Edge-SW1", "GigabitEthernet1/0/2 PSS"):
                await type_text(pilot, step)
                await pilot.press("enter")
            assert so_far(app) == "ports in and out · " + VIA_SWITCH + "  (or end here)"
            await type_text(pilot, "end the path")
            await pilot.press("enter")
            await settle(pilot)
            assert [path_text(p) for p in editor.session.draft.hidden.answer.paths or []] == [
                GOLD_LINE,
                VIA_SWITCH,
            ]

            # edit path 1: take its last hop back and enter PSS by a port typed in: the wrong cable
            editor.query_one("#answer-table", DataTable).move_cursor(row=0)
            await pilot.press("e")
            await settle(pilot)
            assert so_far(app) == "ports in and out · " + GOLD_LINE + "  (or end here)"
            await pilot.press("backspace")
            await type_text(pilot, "GigabitEthernet1/0/2 > PSS(GigabitEthernet0/3)")
            await pilot.press("enter")
            await type_text(pilot, "end the path")
            await pilot.press("enter")
            await validated(pilot)
            (error,) = errors_of(editor)
            assert (
                "path 1: PSS GigabitEthernet0/3 is cabled to Edge-SW1, not to the hop before, Core-R2"
                in error
            )
            # and back through the link the network has
            await pilot.press("e")
            await settle(pilot)
            await pilot.press("backspace")
            for step in ("GigabitEthernet1/0/2 PSS", "end the path"):
                await type_text(pilot, step)
                await pilot.press("enter")
            await validated(pilot)
            assert errors_of(editor) == []

            # ctrl+n switches the builder to node_egress hops and back
            await pilot.press("a")
            await settle(pilot)
            await pilot.press("ctrl+n")
            assert so_far(app) == "(pick the source node)"
            await pilot.press("ctrl+n")
            assert so_far(app).startswith("ports in and out")
            await pilot.press("escape")
            await settle(pilot)

            await pilot.press("ctrl+s")
            await until(pilot, lambda: not editor.dirty, "the save")

    asyncio.run(scenario())
    saved = TaskSet.open(l2_repo).load_hidden(TASK)
    assert [path_text(p) for p in saved.answer.paths or []] == [GOLD_LINE, VIA_SWITCH]
    assert [[h.ingress for h in p.hops] for p in saved.answer.paths or []] == [
        [None, "GigabitEthernet1/0/1", "GigabitEthernet0/2"],
        [None, "GigabitEthernet1/0/1", "GigabitEthernet0/3"],
    ]
    assert saved.reference_answer == L2_GOLD  # Track B's own gold line is not the editor's to change
    validate_cli(l2_repo / "path" / TASK)


def test_set_answer_takes_a_path_port_by_port(l2_repo: Path) -> None:
    """``ctb-author set-answer --path`` reads the same Node(port) line, ingress kept; a bad token is named."""
    base = ["--tasks", str(l2_repo), "--author", "Pat <pat@example.org>"]
    res = run_cli("authoring", "set-answer", TASK, "--path", VIA_SWITCH, "--append", *base)
    assert res.returncode == 0, res.stderr
    saved = TaskSet.open(l2_repo).load_hidden(TASK)
    assert [path_text(p) for p in saved.answer.paths or []] == [GOLD_LINE, VIA_SWITCH]
    res = run_cli("authoring", "set-answer", TASK, "--path", "Core-R1(GE1) -> (GE2)", *base)
    assert res.returncode == 1 and "'(GE2)' is not Node(port)" in res.stderr and "Traceback" not in res.stderr
    res = run_cli(
        "authoring", "set-answer", TASK, "--path", "Core-R1(GE1) -> Core-R2(GE2) -> PSS(Gi0/2)", *base
    )
    assert res.returncode == 1 and "hop 2 (Core-R2)" in res.stderr  # entered and left by one port: which?
