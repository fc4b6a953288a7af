"""Saving over changes another tool made meanwhile merges them in: nothing is dropped silently.

Two real edit sessions on a git copy of the bundled set stand for the app and for ``ctb-author
import-capture``/``add-golden`` run in another terminal while the task is open.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctbench.authoring.editing import EditSession
from ctbench.authoring.merge import plan_merge
from ctbench.authoring.working_copy import ConflictError
from ctbench.store import TaskSet
from tests.test_editing import make_repo

OUTPUT = b"2031-02-03 04:05:06 UTC\r\n"


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def device_of(session: EditSession) -> str:
    return session.draft.task.recordings[0].device


def test_what_another_tool_added_is_kept_and_a_clash_is_a_choice(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    mine = EditSession.open(ts, "RCA-001")
    mine.set_title("HQ users lose the data-centre server")
    mine.set_rationale("my reading of the evidence")
    removed_gold = mine.draft.hidden.golden_actions[0]
    mine.remove_golden(0)

    other = EditSession.open(ts, "RCA-001")  # the importer, in another terminal
    device = device_of(other)
    rec, _ = other.add_recording(device, "display clock", OUTPUT)
    other.add_golden(device, rec.command, "the clock shows when it happened")
    other.set_rationale("the importer's reading")
    other.save(commit=True, author="Importer <imp@example.org>")

    with pytest.raises(ConflictError):
        mine.save(commit=True, author="Pat <pat@example.org>")  # never a silent overwrite

    plan = plan_merge(ts, mine.snapshot(), mine.base)
    assert f"kept recording {device}: {rec.command} (added on disk)" in plan.kept
    assert f"kept golden action {device}: {rec.command} (added on disk)" in plan.kept
    assert [c.key for c in plan.conflicts] == ["hidden:rationale"]
    assert plan.conflicts[0].mine == "my reading of the evidence"
    assert plan.conflicts[0].disk == "the importer's reading"

    plan = plan_merge(ts, mine.draft, mine.base)
    plan.apply({"hidden:rationale": "disk"})
    mine.save(commit=True, author="Pat <pat@example.org>")

    task, hidden = ts.load_task("RCA-001"), ts.load_hidden("RCA-001")
    assert task.title == "HQ users lose the data-centre server"  # mine
    assert any(r.key == rec.key for r in task.recordings)  # the import
    assert (ts.task_dir(task.family, "RCA-001") / rec.file).read_bytes() == OUTPUT
    assert hidden.rationale == "the importer's reading"  # chosen
    assert [g.key for g in hidden.golden_actions].count(rec.key) == 1
    assert removed_gold.key not in [g.key for g in hidden.golden_actions]  # my removal stands


def test_a_recovered_draft_without_a_base_keeps_disk_additions_and_asks_the_rest(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    mine = EditSession(ts, EditSession.open(ts, "RCA-001").snapshot())  # as recovered: no base
    mine.set_title("mine")
    dropped = mine.draft.task.recordings[-1]
    mine.remove_recording(dropped.device, dropped.command, cascade=True)

    other = EditSession.open(ts, "RCA-001")
    rec, _ = other.add_recording(device_of(other), "display clock", OUTPUT)
    other.save(commit=True)

    plan = plan_merge(ts, mine.draft, mine.base)
    assert any(line.startswith("kept recording") and rec.command in line for line in plan.kept)
    assert not any(dropped.command in line for line in plan.kept)  # removed by me, not re-added
    assert "task:title" in [c.key for c in plan.conflicts]  # no base: a difference is a question
    plan.apply({})  # default: mine
    mine.save(commit=True)
    task = ts.load_task("RCA-001")
    assert task.title == "mine" and any(r.key == rec.key for r in task.recordings)
    assert dropped.key not in [r.key for r in task.recordings]


def test_a_draft_without_changes_is_no_work_and_is_dropped(tasks: Path) -> None:
    """A draft kept with nothing changed came back at every start; now it is recognised and dropped."""
    from ctbench.authoring.drafts import DraftStore, empty_drafts, holds_no_work

    ts = TaskSet.open(tasks)
    store = DraftStore(ts.root)
    same = EditSession.open(ts, "RCA-001")
    same.set_title("typed")
    same.set_title(ts.load_task("RCA-001").title)  # and undone: still no work
    assert holds_no_work(ts, same.snapshot())
    store.save(same.snapshot())
    changed = EditSession.open(ts, "PATH-001")
    changed.set_title("a real change")
    assert not holds_no_work(ts, changed.snapshot())
    store.save(changed.snapshot())
    assert empty_drafts(ts, store) == ["RCA-001"]
