"""Review you can trust (issue #17 items 3, 4, 7): submit validates first, honest statistics, roles.

Real git repositories with a bare remote on disk, the real ``ctb-review`` / ``ctb-author`` commands.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.yamlio import load_document, save_document
from tests.review_support import (
    RCA_ANSWER,
    RCA_COMMANDS,
    REPO,
    World,
    copy_world,
    git,
    make_world,
    ok,
    refused,
    review,
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("trust-template") / "w")


@pytest.fixture
def world(template: World, tmp_path: Path) -> World:
    w = copy_world(template, tmp_path / "w")
    (w.root / "a.txt").write_text(RCA_ANSWER)
    (w.root / "c.txt").write_text(RCA_COMMANDS)
    return w


def blind(world: World, task_id: str, who: str, tasks: Path | None = None) -> None:
    ok(
        "blind",
        task_id,
        "--as",
        who,
        "--answer",
        str(world.root / "a.txt"),
        "--commands",
        str(world.root / "c.txt"),
        tasks=tasks or world.tasks,
    )


def cli(component: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CTBENCH_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", f"ctbench.{component}.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def edit_yaml(path: Path, **changes: object) -> None:
    doc = load_document(path)
    for dotted, value in changes.items():
        node = doc
        keys = dotted.split("__")
        steps = [int(k) if k.isdigit() else k for k in keys]
        for k in steps[:-1]:
            node = node[k]
        node[steps[-1]] = value
    save_document(path, doc)


# --------------------------------------------------------------------------- item 4


def test_submit_validates_before_creating_or_switching_branches(world: World) -> None:
    hidden = world.task_dir("rca", "RCA-101") / "hidden.yaml"
    doc = load_document(hidden)
    doc["answer"]["rca"][0]["label"] = "no such label anywhere"
    save_document(hidden, doc)
    before = hidden.read_bytes()
    err = refused("submit", "RCA-101", "--as", "alice", tasks=world.tasks)
    assert "does not pass validation" in err and "hidden.yaml" in err
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=world.work) == "main"
    assert git("branch", "--list", "review/RCA-101", cwd=world.work) == ""
    assert git("ls-remote", str(world.remote), "review/RCA-101", cwd=world.work) == ""
    assert hidden.read_bytes() == before  # the user's edit is where it was
    assert git("status", "--porcelain", cwd=world.work) == "M tasks/rca/RCA-101/hidden.yaml"


def test_submit_of_a_broken_branch_version_goes_back(world: World) -> None:
    """Valid where the user is (main), broken on its review branch: refused, and the user is on main again."""
    ok("submit", "RCA-101", "--as", "alice", tasks=world.tasks)
    edit_yaml(world.task_dir("rca", "RCA-101") / "hidden.yaml", metadata__observability="O9")
    git("commit", "-qam", "a broken edit committed by hand", cwd=world.work)
    git("checkout", "-q", "main", cwd=world.work)
    err = refused("submit", "RCA-101", "--as", "alice", tasks=world.tasks)
    assert "does not pass validation" in err and "back on branch main" in err
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=world.work) == "main"
    assert git("branch", "--list", "review/RCA-101", cwd=world.work) != ""  # an existing branch is kept


# --------------------------------------------------------------------------- item 3


def test_status_on_the_bundled_tasks_says_never_reviewed(tmp_path: Path) -> None:
    shutil.copytree(REPO / "tasks", tmp_path / "tasks")
    git("init", "-q", "-b", "main", cwd=tmp_path)
    res = cli("review", "status", "--tasks", "tasks", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["total"]["never_reviewed"] == 34 and data["total"]["candidates"] == 0
    assert data["total"]["retained"] == 0 and data["unreviewed_seed"] is True
    text = cli("review", "status", "--tasks", "tasks", cwd=tmp_path)
    words = " ".join(text.stdout.split())  # the note wraps with the terminal's width
    assert "never reviewed" in words and "unreviewed seed tasks" in words


def test_status_counts_match_a_hand_count_of_the_history(world: World) -> None:
    t = world.tasks
    # RCA-101: approved after two rounds, merged; PATH-101: discarded; RCA-102: "approved" by hand, no review
    ok("submit", "RCA-101", "--as", "alice", tasks=t)
    blind(world, "RCA-101", "bob")
    ok(
        "reveal",
        "RCA-101",
        "--as",
        "bob",
        "--agree",
        "solvability",
        "completeness",
        "golden",
        "--disagree",
        "metadata",
        "chain is 3",
        tasks=t,
    )
    edit_yaml(world.task_dir("rca", "RCA-101") / "hidden.yaml", metadata__chain_length=3)
    ok("respond", "RCA-101", "--as", "alice", "--concede", "metadata", "3 now", tasks=t)
    ok("reveal", "RCA-101", "--as", "bob", "--agree", "metadata", tasks=t)
    ok("merge", "RCA-101", "--as", "maint", tasks=t)
    ok("submit", "PATH-101", "--as", "carol", tasks=t)
    ok("discard", "PATH-101", "--as", "maint", "--reason", "two valid paths", tasks=t)
    ok("merge", "PATH-101", "--as", "maint", tasks=t)
    edit_yaml(world.task_dir("rca", "RCA-102") / "task.yaml", status="approved")
    git("commit", "-qam", "approve RCA-102 by hand", cwd=world.work)
    data = json.loads(ok("status", "--json", tasks=t))
    rca, path = data["families"]["rca"], data["families"]["path"]
    assert (rca["candidates"], rca["retained"], rca["never_reviewed"], rca["yield_pct"]) == (1, 1, 1, 100.0)
    assert rca["revised_before_consensus"] == 1 and rca["rounds_mean"] == 2
    assert (path["candidates"], path["discarded"], path["retained"]) == (1, 1, 0)
    assert data["total"]["yield_pct"] == 50.0 and data["total"]["never_reviewed"] == 1

    # a silent edit of the approved gold on main: its audit fails, so it is no longer retained
    edit_yaml(world.task_dir("rca", "RCA-101") / "hidden.yaml", metadata__chain_length=4)
    git("commit", "-qam", "quiet fix", cwd=world.work)
    data = json.loads(ok("status", "--json", tasks=t))
    rca = data["families"]["rca"]
    assert (rca["candidates"], rca["retained"], rca["audit_failed"], rca["yield_pct"]) == (1, 0, 1, 0.0)
    assert data["audit_failures"][0]["task"] == "RCA-101"
    assert "metadata correctness reopened" in data["audit_failures"][0]["problem"]


def test_status_and_queue_read_the_remote_and_say_when_behind(world: World) -> None:
    alice = world.clone("alice")
    bob = world.clone("bob")
    ok("submit", "RCA-101", "--as", "alice", tasks=alice / "tasks")
    ok("checkout", "RCA-101", "--as", "bob", tasks=bob / "tasks")
    blind(world, "RCA-101", "bob", tasks=bob / "tasks")
    # alice is still on review/RCA-101 at her submit commit; the remote holds bob's blind commit
    code_err = ok("queue", "--json", tasks=alice / "tasks")
    items = json.loads(code_err)
    assert [(i["task"], i["status"]) for i in items] == [("RCA-101", "in_review")]

    code, out, err = review("status", "--json", tasks=alice / "tasks")
    assert code == 0
    assert "local review/RCA-101 is 1 commit(s) behind origin/review/RCA-101" in err
    assert json.loads(out)["states"]["in_review"] == 1
    # the maintainer's main clone, offline: told plainly that it did not fetch
    code, out, err = review("--offline", "status", tasks=world.tasks)
    assert code == 0 and "not fetched from origin (--offline)" in err


# --------------------------------------------------------------------------- item 7


def approve(world: World, task_id: str = "RCA-101") -> None:
    ok("submit", task_id, "--as", "alice", tasks=world.tasks)
    blind(world, task_id, "bob")
    ok("reveal", task_id, "--as", "bob", "--all-agree", tasks=world.tasks)


def set_people(world: World, **fields: object) -> None:
    """Change the roles on main (where merge reads them), then come back to where we were."""
    here = git("rev-parse", "--abbrev-ref", "HEAD", cwd=world.work)
    git("checkout", "-q", "main", cwd=world.work)
    path = world.tasks / "reviewers.yaml"
    doc = load_document(path)
    for k, v in fields.items():
        if v is None:
            doc.pop(k, None)
        else:
            doc[k] = v
    save_document(path, doc)
    git("commit", "-qam", f"roles: {fields}", cwd=world.work)
    git("checkout", "-q", here, cwd=world.work)


def test_merge_needs_a_maintainer_who_is_not_the_author(world: World) -> None:
    approve(world)
    assert "bob is not a maintainer" in refused("merge", "RCA-101", "--as", "bob", tasks=world.tasks)
    assert "alice is not a maintainer" in refused("merge", "RCA-101", "--as", "alice", tasks=world.tasks)
    set_people(world, maintainers=["alice"])
    assert "alice is an author of RCA-101" in refused("merge", "RCA-101", "--as", "alice", tasks=world.tasks)
    set_people(world, maintainers=None)
    assert "names no maintainers" in refused("merge", "RCA-101", "--as", "maint", tasks=world.tasks)
    # roles granted on the author's own review branch do not count
    path = world.tasks / "reviewers.yaml"
    text = path.read_text()
    assert "maintainers: [maint]" in text
    path.write_text(text.replace("maintainers: [maint]", "maintainers: [alice]\nsolo: true"))
    git("commit", "-qam", "make me solo", cwd=world.work)
    assert "names no maintainers" in refused("merge", "RCA-101", "--as", "alice", tasks=world.tasks)
    git("reset", "-q", "--hard", "HEAD~1", cwd=world.work)
    set_people(world, maintainers=["alice"], solo=True)  # a one-person repository says so on main
    assert "merged review/RCA-101" in ok("merge", "RCA-101", "--as", "alice", tasks=world.tasks)


def test_validate_warns_on_a_gold_answer_copied_on_the_same_network(world: World) -> None:
    src = world.task_dir("rca", "RCA-101")
    dst = world.task_dir("rca", "RCA-103")
    shutil.copytree(src, dst)
    for name in ("task.yaml", "hidden.yaml"):
        edit_yaml(dst / name, id="RCA-103")
    res = cli("authoring", "validate", str(world.tasks), cwd=world.work)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.count("warning[duplicate-gold]") == 2
    assert "the gold answer is the same as RCA-103 on network campus-lab" in res.stdout
    one = cli("authoring", "validate", str(dst), cwd=world.work)
    assert "the gold answer is the same as RCA-101" in one.stdout
    edit_yaml(dst / "hidden.yaml", answer__rca__0__label="ACL deny")  # now a different fault
    res = cli("authoring", "validate", str(world.tasks), cwd=world.work)
    assert "duplicate-gold" not in res.stdout


def test_a_reviewer_who_could_read_an_earlier_reveal_is_refused_before_answering(world: World) -> None:
    """Round 1's record shows the gold lines revealed to bob; erin could read them, so she is refused at
    assignment and at her blind answer (the reviewer's first step), not only by the audit afterwards."""
    t = world.tasks
    ok("submit", "RCA-101", "--as", "alice", tasks=t)
    blind(world, "RCA-101", "bob")
    ok(
        "reveal",
        "RCA-101",
        "--as",
        "bob",
        "--agree",
        "solvability",
        "completeness",
        "golden",
        "--disagree",
        "metadata",
        "chain is 3",
        tasks=t,
    )
    edit_yaml(world.task_dir("rca", "RCA-101") / "hidden.yaml", metadata__chain_length=3)
    ok("respond", "RCA-101", "--as", "alice", "--concede", "metadata", "3 now", tasks=t)
    err = refused("assign", "RCA-101", "--reviewer", "erin", "--apply", "--as", "maint", tasks=t)
    assert "round 1's reveal to bob is in the review records" in err and "erin could read it" in err
    # the round handed to nobody by a hand edit: erin's blind answer is still refused before it is taken
    round2 = world.task_dir("rca", "RCA-101") / "reviews" / "round-02.yaml"
    round2.write_text(round2.read_text().replace("reviewer: bob\n", "", 1))
    git("commit", "-qam", "round 2 unassigned by hand", cwd=world.work)
    err = refused("blind", "RCA-101", "--as", "erin", "--answer", str(world.root / "a.txt"), tasks=t)
    assert "erin could read it" in err
    assert git("log", "-1", "--format=%s", cwd=world.work) == "round 2 unassigned by hand"
