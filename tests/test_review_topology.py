"""The review history's statistics count topology-restoration tasks as a family of their own.

On a real git world (bare remote on disk): one topology draft is submitted, solved blind and approved;
another is submitted and its folder later deleted from main. ``ctb-review status`` must then count both
as topology candidates (the deleted one found in the history's submit commits, as for RCA and path), one
retained, one discarded, and the reviewer's exact blind solve; and ``ctb-author stats`` takes the yields.
"""

from __future__ import annotations

import json
import shutil

import pytest

from ctbench.authoring.stats import dataset_stats
from ctbench.review.gitflow import ReviewRepo
from ctbench.review.history import review_counts, submitted_in_history
from ctbench.store import TaskSet
from tests.conftest import BUNDLED
from tests.review_support import World, git, make_world, ok

pytestmark = pytest.mark.xdist_group("review-topology")


def _draft(world: World, source: str, task_id: str) -> None:
    """A bundled topology task copied into the world as alice's draft ``task_id``, committed on main."""
    dst = world.task_dir("topology", task_id)
    shutil.copytree(BUNDLED / "topology" / source, dst)
    task = (dst / "task.yaml").read_text(encoding="utf-8")
    task = task.replace(f"id: {source}", f"id: {task_id}").replace("status: approved", "status: draft")
    task = task.replace("authors: [ctbench sample set]", "authors: [alice]")
    (dst / "task.yaml").write_text(task, encoding="utf-8")
    hidden = (dst / "hidden.yaml").read_text(encoding="utf-8").replace(f"id: {source}", f"id: {task_id}")
    (dst / "hidden.yaml").write_text(hidden, encoding="utf-8")
    network = task.split("network: ", 1)[1].split()[0]
    shutil.copy(BUNDLED / "networks" / f"{network}.yaml", world.tasks / "networks" / f"{network}.yaml")
    git("add", "-A", cwd=world.work)
    git("commit", "-q", "-m", f"draft {task_id}", cwd=world.work)
    git("push", "-q", "origin", "main", cwd=world.work)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("review-topology")
    world = make_world(root / "w")
    _draft(world, "TOPO-003", "TOPO-103")
    _draft(world, "TOPO-001", "TOPO-101")
    t = world.tasks
    answer, commands = root / "answer.txt", root / "commands.txt"
    answer.write_text(
        "AGG_SW_01(Ten-GigabitEthernet1/0/0/1)->SWITCH01(Ten-GigabitEthernet1/0/47)\n"
        "AGG_SW_01(XGE1/0/0/2)->SWITCH01(Ten-GigabitEthernet2/0/47)\n",
        encoding="utf-8",
    )
    commands.write_text("AGG_SW_01 display lldp neighbor-information list\n", encoding="utf-8")
    ok("submit", "TOPO-103", "--as", "alice", tasks=t)
    ok("blind", "TOPO-103", "--as", "bob", "--answer", str(answer), "--commands", str(commands), tasks=t)
    ok("reveal", "TOPO-103", "--as", "bob", "--all-agree", tasks=t)
    # TOPO-101: reviewed, merged, then withdrawn: its folder and branch are gone, its submit commit stays
    commands.write_text("vmx1 show lldp neighbors\n", encoding="utf-8")
    answer.write_text("vmx1(ge-0/0/1)->vmx2(ge-0/0/1)\n", encoding="utf-8")  # one of two links: wrong
    ok("submit", "TOPO-101", "--as", "alice", tasks=t)
    ok("blind", "TOPO-101", "--as", "bob", "--answer", str(answer), "--commands", str(commands), tasks=t)
    ok("reveal", "TOPO-101", "--as", "bob", "--all-agree", tasks=t)
    ok("merge", "TOPO-101", "--as", "maint", tasks=t)
    git("checkout", "-q", "main", cwd=world.work)
    git("branch", "-q", "-D", "review/TOPO-101", cwd=world.work)
    git("push", "-q", "origin", "--delete", "review/TOPO-101", cwd=world.work)
    git("rm", "-q", "-r", "tasks/topology/TOPO-101", cwd=world.work)
    git("commit", "-q", "-m", "TOPO-101 withdrawn", cwd=world.work)
    return world


def test_review_status_counts_the_topology_family(world: World) -> None:
    assert "TOPO-103" in (world.tasks / "topology" / "TOPO-103" / "task.yaml").read_text()
    data = json.loads(ok("status", "--json", tasks=world.tasks))
    topo = data["families"]["topology"]
    assert (topo["candidates"], topo["retained"], topo["discarded"]) == (2, 1, 1)
    assert topo["blind_solves"] == 1 and topo["blind_exact"] == 1  # XGE1/0/0/2 is the same port
    assert {"task": "TOPO-101", "reason": "task folder removed after review"} in data["discarded"]
    assert data["families"]["rca"]["candidates"] == 0 and data["families"]["path"]["candidates"] == 0
    assert submitted_in_history(ReviewRepo(TaskSet.open(world.tasks))) == {
        "TOPO-103": "topology",
        "TOPO-101": "topology",
    }


def test_author_stats_take_the_topology_yields_from_the_history(world: World) -> None:
    ts = TaskSet.open(world.tasks)
    assert review_counts(ts)["topology"] == {"candidates": 2}
    res = dataset_stats(ts, review_counts=review_counts(ts))
    yields = next(t for t in res.tables if t.key == "yields")
    # candidates from the history; the rest from main's working tree, where TOPO-103 is still a draft
    # (approved on its review branch, not merged)
    assert ["topology", 2, 0, 0, 0, 0.0] in [list(r) for r in yields.rows]
    families = next(t for t in res.tables if t.key == "families")
    assert sum(r[1] for r in families.rows if r[0] != "total") == next(
        r[1] for r in families.rows if r[0] == "total"
    )
