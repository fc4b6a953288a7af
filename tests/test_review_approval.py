"""approval_state: the one answer to "approved and unchanged since?" that the run gate and status use."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctbench.approval.check import SEED_REASON, approval_state
from ctbench.store import TaskSet
from ctbench.yamlio import load_document, save_document
from tests.review_support import RCA_ANSWER, RCA_COMMANDS, REPO, World, copy_world, make_world, ok


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> World:
    w = make_world(tmp_path_factory.mktemp("approval-template") / "w")
    root = w.root
    (root / "a.txt").write_text(RCA_ANSWER)
    (root / "c.txt").write_text(RCA_COMMANDS)
    ok("submit", "RCA-101", "--as", "alice", tasks=w.tasks)
    ok(
        "blind",
        "RCA-101",
        "--as",
        "bob",
        "--answer",
        str(root / "a.txt"),
        "--commands",
        str(root / "c.txt"),
        tasks=w.tasks,
    )
    ok("reveal", "RCA-101", "--as", "bob", "--all-agree", tasks=w.tasks)
    return w


@pytest.fixture
def world(template: World, tmp_path: Path) -> World:
    return copy_world(template, tmp_path / "w")


def test_bundled_tasks_are_unreviewed_seed_tasks() -> None:
    ts = TaskSet.open(REPO / "tasks")
    states = {ref.id: approval_state(ts, ref) for ref in ts.refs()}
    assert states and all(s == (False, SEED_REASON) for s in states.values())


def test_approved_unchanged_then_edited(world: World) -> None:
    ts = TaskSet.open(world.tasks)
    assert approval_state(ts, "RCA-101") == (True, None)
    assert approval_state(ts, "RCA-102") == (False, "not approved (status draft)")
    hidden = world.task_dir("rca", "RCA-101") / "hidden.yaml"
    doc = load_document(hidden)
    doc["metadata"]["chain_length"] = 3
    save_document(hidden, doc)
    approved, reason = approval_state(TaskSet.open(world.tasks), "RCA-101")
    assert not approved and reason is not None
    assert reason == "edited after approval: metadata changed since the review approved it"


def test_status_line_edited_to_approved_without_review(world: World) -> None:
    task = world.task_dir("rca", "RCA-102") / "task.yaml"
    doc = load_document(task)
    doc["status"] = "approved"
    save_document(task, doc)
    approved, reason = approval_state(TaskSet.open(world.tasks), "RCA-102")
    assert (approved, reason) == (False, "never reviewed (approved in task.yaml, but no review record)")
