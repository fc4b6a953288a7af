"""No silent edits after approval (issue #17 item 2), through the real CLI and the authoring app.

An approved, merged task is edited with ``ctb-author`` (script and app): it moves back to draft,
says which criteria the change reopens, shows as needing re-review in ``ctb-review queue`` and
``status``, fails the run gate, and ``ctb-review submit`` reopens exactly those criteria.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from ctbench.approval.check import approval_state
from ctbench.approval.records import load_records
from ctbench.approval.states import Criterion
from ctbench.authoring.app.app import AuthorApp
from ctbench.authoring.app.dialogs.confirm import ChoiceDialog
from ctbench.authoring.app.screens.editor import EditorScreen
from ctbench.authoring.cli import main as author_main
from ctbench.store import TaskSet
from ctbench.yamlio import load_document
from tests.review_support import RCA_ANSWER, RCA_COMMANDS, World, copy_world, git, make_world, ok
from tests.test_app_flows import settle, until


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> World:
    w = make_world(tmp_path_factory.mktemp("rereview-template") / "w")
    (w.root / "a.txt").write_text(RCA_ANSWER)
    (w.root / "c.txt").write_text(RCA_COMMANDS)
    ok("submit", "RCA-101", "--as", "alice", tasks=w.tasks)
    ok(
        "blind",
        "RCA-101",
        "--as",
        "bob",
        "--answer",
        str(w.root / "a.txt"),
        "--commands",
        str(w.root / "c.txt"),
        tasks=w.tasks,
    )
    ok("reveal", "RCA-101", "--as", "bob", "--all-agree", tasks=w.tasks)
    ok("merge", "RCA-101", "--as", "maint", tasks=w.tasks)
    return w


@pytest.fixture
def world(template: World, tmp_path: Path) -> World:
    return copy_world(template, tmp_path / "w")


def author(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = author_main(list(args))
    return code, out.getvalue(), err.getvalue()


def status(world: World) -> str:
    return str(load_document(world.task_dir("rca", "RCA-101") / "task.yaml")["status"])


@pytest.fixture(autouse=True)
def _alice_edits(monkeypatch: pytest.MonkeyPatch) -> None:
    """ctb-author edits are alice's: her git identity (ctb-review steps name theirs with --as)."""
    monkeypatch.setenv("GIT_AUTHOR_NAME", "alice")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "alice@example.net")


def test_a_scripted_edit_of_an_approved_task_moves_it_out_of_approved(world: World) -> None:
    t = world.tasks
    assert status(world) == "approved" and approval_state(TaskSet.open(t), "RCA-101").approved
    code, out, err = author(
        "set-answer",
        "RCA-101",
        "--tasks",
        str(t),
        "--rca",
        "CORE_SW_01;GigabitEthernet0/0/24;physical link down",
        "--author",
        "alice",
    )
    assert code == 0, err
    assert "approved -> draft" in err and "answer completeness (gold answer)" in err and "solvability" in err
    assert status(world) == "draft"
    assert git("status", "--porcelain", cwd=world.work) == ""  # committed, as a draft
    assert "approved -> draft: the change reopens" in git("log", "-1", "--format=%B", cwd=world.work)
    assert not approval_state(TaskSet.open(t), "RCA-101").approved  # the run gate skips it

    items = json.loads(ok("queue", "alice", "--json", tasks=t))
    assert [(i["task"], i["status"], i["role"]) for i in items] == [
        ("RCA-101", "draft (needs re-review)", "author")
    ]
    assert "ctb-review submit RCA-101" in items[0]["next"]
    assert json.loads(ok("queue", "bob", "--json", tasks=t)) == []
    js = json.loads(ok("status", "--json", tasks=t))
    assert [r["task"] for r in js["needs_rereview"]] == ["RCA-101"]
    assert js["families"]["rca"]["retained"] == 0

    out = ok("submit", "RCA-101", "--as", "alice", tasks=t)
    assert "reopened: solvability, answer completeness" in out
    rec = load_records(t / "rca" / "RCA-101")[-1]
    assert rec.round == 2
    assert set(rec.open_criteria()) == {Criterion.SOLVABILITY, Criterion.ANSWER_COMPLETENESS}
    assert rec.criteria[Criterion.GOLDEN_ACTION_CONSISTENCY].carried


async def _edit(app: AuthorApp, change: str, answer: str | None) -> EditorScreen:
    async with app.run_test(size=(110, 32)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, EditorScreen), "the editor")
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        draft = editor.session.draft
        if change == "metadata":
            editor.session.set_metadata(chain_length=4)
        else:  # invalid, but no reviewed part changes: a canary that is not the set's
            draft.hidden = draft.hidden.model_copy(update={"canary": "CTBENCH CANARY wrong"})
        editor.revision += 1
        editor.dirty = True
        await pilot.press("ctrl+s")
        if answer is not None:
            await until(pilot, lambda: isinstance(app.screen, ChoiceDialog), "the reopen dialog")
            dialog = app.screen
            assert isinstance(dialog, ChoiceDialog)
            assert "metadata correctness (metadata)" in dialog.detail and "becomes a draft" in dialog.detail
            await pilot.press(answer)
        await settle(pilot)
        await settle(pilot)
        return editor


def test_the_app_says_what_a_save_reopens_and_asks(world: World) -> None:
    import asyncio

    t = world.tasks
    head = git("rev-parse", "HEAD", cwd=world.work)
    app = AuthorApp(
        TaskSet.open(t),
        mode="edit",
        task_id="RCA-101",
        author="alice <a@example.net>",
        cursor_blink=False,
        autosave_delay=30.0,
        validate_delay=0.3,
    )
    asyncio.run(_edit(app, "metadata", "c"))  # cancel: nothing saved
    assert status(world) == "approved" and git("rev-parse", "HEAD", cwd=world.work) == head
    app = AuthorApp(
        TaskSet.open(t),
        mode="edit",
        task_id="RCA-101",
        author="alice <a@example.net>",
        cursor_blink=False,
        autosave_delay=30.0,
        validate_delay=0.3,
    )
    asyncio.run(_edit(app, "metadata", "s"))
    assert status(world) == "draft" and git("rev-parse", "HEAD", cwd=world.work) != head
    assert not approval_state(TaskSet.open(t), "RCA-101").approved


def test_the_app_commits_a_task_that_fails_validation_only_as_draft(world: World) -> None:
    import asyncio

    app = AuthorApp(
        TaskSet.open(world.tasks),
        mode="edit",
        task_id="RCA-101",
        author="alice <a@example.net>",
        cursor_blink=False,
        autosave_delay=30.0,
        validate_delay=0.3,
    )
    head = git("rev-parse", "HEAD", cwd=world.work)
    asyncio.run(_edit(app, "invalid", None))  # no reviewed part changed: no question, but not approved either
    assert status(world) == "draft"
    assert (
        git("status", "--porcelain", cwd=world.work) == ""
        and git("rev-parse", "HEAD", cwd=world.work) != head
    )
    assert "fails validation" in git("log", "-1", "--format=%B", cwd=world.work)


def test_the_task_list_marks_a_task_changed_after_approval(world: World) -> None:
    from ctbench.authoring.app.screens.task_list import read_row

    ts = TaskSet.open(world.tasks)
    assert read_row(ts, ts.ref("RCA-101")).status == "approved"
    code, _out, err = author(
        "set-answer",
        "RCA-101",
        "--tasks",
        str(world.tasks),
        "--rca",
        "CORE_SW_01;GigabitEthernet0/0/24;physical link down",
        "--author",
        "alice",
    )
    assert code == 0, err
    ts = TaskSet.open(world.tasks)
    assert read_row(ts, ts.ref("RCA-101")).status == "draft (re-review)"
