"""A plug-in family's gold check on the review desk, in the pull-request text and in the bundle export.

The family is ``tests/plugin_family/downports_family.py``, installed by an entry point as in
``tests/test_family_plugin.py``. Only the family can say whether its gold can be stated on the task's
network (its ``gold_problems``); ``ctb-author validate`` and the run gate ask it, and so must every
other place a task is validated: ``ctb-review submit`` (the review desk refuses a task that does not
validate), ``ctb-review pr`` (its Validation section; it, ``ctb-review status`` and ``ctb-author stats``
read a plug-in family's tasks at all), ``ctb-author export`` (refuses to bundle a task
that does not validate) and ``ctb-author stats`` (counts it as not validating). Without the check each
of them passes a gold naming a device the network lacks (the core validator sees a non-empty list).

The commands run as real subprocesses on a real git world (a bare remote on disk).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.review_support import World, git, make_world
from tests.test_family_plugin import GHOST, TASKS, _ghost_set, plugin_env  # noqa: F401 - a fixture

pytestmark = pytest.mark.xdist_group("family_plugin")


def _as(who: str, env: dict[str, str]) -> dict[str, str]:
    """The plug-in installed, and ``who``'s git identity (ctb-review takes the actor from it)."""
    return {
        **env,
        "GIT_AUTHOR_NAME": who,
        "GIT_COMMITTER_NAME": who,
        "GIT_AUTHOR_EMAIL": f"{who}@example.net",
        "GIT_COMMITTER_EMAIL": f"{who}@example.net",
    }


def _review(env: dict[str, str], world: World, *args: str) -> tuple[int, str]:
    res = run_cli("review", "--tasks", str(world.tasks), *args, env=env, cwd=world.work, timeout=300)
    assert "Traceback" not in res.stderr, res.stderr
    return res.returncode, res.stdout + res.stderr


@pytest.fixture
def world(tmp_path: Path) -> World:
    """The review world with alice's two downports drafts: DOWN-001's gold names ``GHOST_SW``, which
    the network lacks; DOWN-002's is right."""
    w = make_world(tmp_path / "w")
    bad = _ghost_set(tmp_path / "ghost")
    for task_id in ("DOWN-001", "DOWN-002"):
        dst = w.task_dir("downports", task_id)
        shutil.copytree(bad / "downports" / task_id, dst)
        task = dst / "task.yaml"
        task.write_text(
            task.read_text("utf-8").replace("authors: [plugin-test]", "authors: [alice]"), "utf-8"
        )
    git("add", "-A", cwd=w.work)
    git("commit", "-q", "-m", "two downports drafts", cwd=w.work)
    git("push", "-q", "origin", "main", cwd=w.work)
    return w


def test_the_review_desk_refuses_a_gold_the_family_finds_unstateable(
    plugin_env: dict[str, str],  # noqa: F811
    world: World,
) -> None:
    code, out = _review(_as("alice", plugin_env), world, "submit", "DOWN-001", "--as", "alice")
    assert code != 0, out
    assert "DOWN-001 does not pass validation; fix it before review" in out
    assert f"error[answer-network]: {GHOST}" in out
    assert "review/DOWN-001" not in git("branch", "--list", cwd=world.work)
    # the family is installed and its right gold passes: the refusal is the family's check, nothing else
    code, out = _review(_as("alice", plugin_env), world, "submit", "DOWN-002", "--as", "alice")
    assert code == 0, out
    # and the review statistics count the family as a family of its own
    res = run_cli("review", "--tasks", str(world.tasks), "status", "--json", env=plugin_env, cwd=world.work)
    assert res.returncode == 0, res.stderr
    counts = json.loads(res.stdout)["families"]["downports"]
    assert (counts["candidates"], counts["in_progress"], counts["never_reviewed"]) == (1, 1, 1)


def test_the_pull_request_text_validates_with_the_family_check(
    plugin_env: dict[str, str],  # noqa: F811
    world: World,
    tmp_path: Path,
) -> None:
    """DOWN-002 submitted with a right gold; then the branch's gold names GHOST_SW: the PR text fails it."""
    env = _as("alice", plugin_env)
    code, out = _review(env, world, "submit", "DOWN-002", "--as", "alice")
    assert code == 0, out
    pr = tmp_path / "pr.md"
    code, out = _review(env, world, "pr", "DOWN-002", "--no-push", "--out", str(pr))
    assert code == 0, out
    assert "`ctb-author validate` on `review/DOWN-002`: ✅ passes (0 error(s)" in pr.read_text("utf-8")

    git("checkout", "-q", "review/DOWN-002", cwd=world.work)
    hidden = world.task_dir("downports", "DOWN-002") / "hidden.yaml"
    text = hidden.read_text("utf-8")
    hidden.write_text(
        text.replace('["CORE_SW_01:GigabitEthernet0/0/2", ', '["GHOST_SW:GigabitEthernet0/0/1", ')
    )
    assert hidden.read_text("utf-8") != text
    git("commit", "-q", "-am", "gold on a ghost", cwd=world.work)
    code, out = _review(env, world, "pr", "DOWN-002", "--no-push", "--out", str(pr))
    assert code == 0, out
    desc = pr.read_text("utf-8")
    assert "`ctb-author validate` on `review/DOWN-002`: ❌ fails (1 error(s)" in desc
    assert "GHOST_SW:GigabitEthernet0/0/1: no device 'GHOST_SW' in the network" in desc


def test_the_bundle_export_and_stats_run_the_family_check(
    plugin_env: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    bad = _ghost_set(tmp_path / "ghost")
    out = tmp_path / "bundles"
    res = run_cli("authoring", "export", "--tasks", str(bad), "--out", str(out), env=plugin_env)
    assert res.returncode != 0, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert GHOST in res.stderr and "DOWN-001 does not validate; nothing written" in res.stderr
    assert not out.exists()
    # the right set exports
    res = run_cli("authoring", "export", "--tasks", str(TASKS), "--out", str(out), env=plugin_env)
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in out.iterdir()) == ["DOWN-001.json", "DOWN-002.json"]

    res = run_cli("authoring", "stats", "--tasks", str(bad), "--format", "json", env=plugin_env)
    assert res.returncode == 1, res.stdout + res.stderr
    assert GHOST in res.stderr and "1 of 2 task(s) do not validate" in res.stderr
