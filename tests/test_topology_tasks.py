"""The topology family end to end on the bundled tasks (tasks/topology/): validated, replayed, run by the
oracle through ``ctb-eval run``, scored 100, reported in every format, and hand-made wrong answers
scored as computed by hand.

The four tasks restore one device's cabling each from a real LLDP neighbour table (the vendor-cli
captures: Junos, NX-OS with wrapped system names, Comware with two uplinks to one stack, Junos bundle
members); their gold is in hidden.yaml (``answer.links``), not in the network file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctbench.authoring.oracle_check import check_task
from ctbench.model import Family
from ctbench.scoring.judge import Judges
from ctbench.store import TaskSet
from ctbench.validation import validate_paths
from tests.conftest import BUNDLED, run_cli

TOPOLOGY = ("TOPO-001", "TOPO-002", "TOPO-003", "TOPO-004")


@pytest.fixture(scope="module")
def ts() -> TaskSet:
    return TaskSet(BUNDLED)


def test_the_bundled_topology_tasks_validate_and_replay(ts: TaskSet) -> None:
    refs = [r for r in ts.refs() if r.family == Family.TOPOLOGY]
    assert [r.id for r in refs] == list(TOPOLOGY)
    report = validate_paths([str(r.path) for r in refs])
    assert not report.errors, report.errors
    judges = Judges(ts)
    for ref in refs:
        result = check_task(ts, ref, judges=judges)  # golden actions through the replay engine
        assert result.ok, result.problems
        assert result.outcomes == {"recorded": 1}
        assert result.scores is not None and result.scores["exact"] is True


def test_validation_refuses_a_gold_link_it_cannot_state(tmp_path: Path) -> None:
    root = tmp_path / "tasks"
    shutil.copytree(BUNDLED, root)
    hidden = root / "topology" / "TOPO-003" / "hidden.yaml"
    text = hidden.read_text(encoding="utf-8")
    # a port the switch does not have, and a second cable on a port that already holds one
    text = text.replace("SWITCH01:Ten-GigabitEthernet2/0/47", "SWITCH01:Ten-GigabitEthernet1/0/47")
    text = text.replace("AGG_SW_01:Ten-GigabitEthernet1/0/0/1", "AGG_SW_01:Ten-GigabitEthernet9/9/9")
    hidden.write_text(text, encoding="utf-8")
    report = validate_paths([str(root / "topology" / "TOPO-003")])
    messages = [f.message for f in report.errors]
    assert any("has no port 'Ten-GigabitEthernet9/9/9'" in m for m in messages), messages
    assert any("already holds link 1" in m for m in messages), messages
    assert all(f.code == "answer-link" for f in report.errors)


def test_hand_made_wrong_answers_score_as_computed_by_hand(ts: TaskSet) -> None:
    judges = Judges(ts)

    def scores(task_id: str, answer: str) -> dict[str, object]:
        judge = judges.judge(task_id)
        return judge.score(judge.parse(f"<answer>\n{answer}\n</answer>")).to_json()

    # TOPO-003, two uplinks to one stack, ports swapped: no link right (link IoU 0/4), the one node pair
    # right (node-pair IoU 1/1)
    s = scores(
        "TOPO-003",
        "AGG_SW_01(XGE1/0/0/1)->SWITCH01(Ten-GigabitEthernet2/0/47)\n"
        "AGG_SW_01(XGE1/0/0/2)->SWITCH01(Ten-GigabitEthernet1/0/47)",
    )
    assert (s["exact"], s["link_iou"], s["loc"]) == (False, 0.0, 1.0)
    # TOPO-004, the bundle named instead of two of its four members: P = {ae7, m1, m2}, G = {m1..m4};
    # |P ∩ G| = 2, |P ∪ G| = 5, so link IoU 2/5; every line pairs the same two nodes (node-pair IoU 1)
    s = scores(
        "TOPO-004",
        "edge01.sjc01(ae7)->core01.sjc01(Ethernet3/29/1)\n"
        "edge01.sjc01(xe-0/1/1)->core01.sjc01(Ethernet3/29/1)\n"
        "core01.sjc01(Ethernet3/29/2)->edge01.sjc01(xe-0/3/3)",
    )
    assert (s["exact"], s["link_iou"], s["loc"]) == (False, pytest.approx(2 / 5), 1.0)
    # TOPO-002, short port names and any case are the same links; one of three left out and one to a
    # node the network lacks: P = {l1, l2, ghost}, G = {l1, l2, l3}: link IoU 2/4; node pairs the same 2/4
    s = scores(
        "TOPO-002",
        "NX-OSV9000-1(Eth1/1)->nx-osv9000-3-long-name.com(Eth1/1)\n"
        "nx-osv9000-4-extremely-long-name(Eth1/1)->nx-osv9000-1(Eth1/2)\n"
        "nx-osv9000-1(Eth1/3)->nx-osv9000-9(Eth1/3)",
    )
    assert (s["exact"], s["link_iou"], s["loc"]) == (False, 0.5, 0.5)
    # the gold itself, written backwards with short names: exact
    s = scores("TOPO-001", "vmx2(ge-0/0/1)->vmx1(ge-0/0/1)\nvmx3(ge-0/0/0)->vmx1(ge-0/0/0)")
    assert (s["exact"], s["link_iou"], s["loc"]) == (True, 1.0, 1.0)


@pytest.mark.xdist_group("topology-run")
def test_the_oracle_run_scores_100_and_every_report_shows_the_family(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    res = run_cli(
        "evaluate", "run", "--agent", "oracle", "--allow-unreviewed", "--tasks", str(BUNDLED),
        "--select", "family=topology", "--out", str(runs / "topo"), timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Topology" in res.stdout and "link IoU 100.00" in res.stdout
    scores = json.loads((runs / "topo" / "scores.json").read_text(encoding="utf-8"))
    topo = scores["summary"]["topology"]
    assert topo["n_tasks"] == 4 and topo["accuracy"] == 1.0 and topo["link_iou"] == 1.0
    assert topo["loc_iou"] == 1.0 and not scores["incomplete"]
    assert scores["summary"]["rca"]["n_tasks"] == scores["summary"]["path"]["n_tasks"] == 0
    lines = [json.loads(x) for x in (runs / "topo" / "results.jsonl").read_text().splitlines()]
    assert {x["family"] for x in lines} == {"topology"}
    assert all(x["answer"]["links"] and x["answer"]["status"] == "answered" for x in lines)
    for fmt, needle in (
        ("text", "Topology restoration"),
        ("md", "| 4 | 100.00 ± 0.00 | 100.00 ± 0.00 | 100.00 ± 0.00 | 100.00 ± 0.00 |"),
        ("json", '"table5_topology"'),
        ("latex", "Topology restoration"),
        ("html", "Topology restoration"),
    ):
        out = tmp_path / f"report.{fmt}"
        rep = run_cli(
            "evaluate", "report", str(runs / "topo"), "--tasks", str(BUNDLED), "--format", fmt, "--out", str(out)
        )  # fmt: skip
        assert rep.returncode == 0, rep.stderr
        assert needle in out.read_text(encoding="utf-8"), fmt
    site = tmp_path / "site"
    res = run_cli(
        "evaluate", "export", str(runs / "topo"), "--tasks", str(BUNDLED), "--format", "leaderboard",
        "--out", str(site),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    board = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    assert board["tasks"] == {"rca": 0, "path": 0, "topology": 4}
    row = board["results"][0]
    assert row["rca"]["accuracy"]["mean"] is None and row["topology"]["reasoning"] == {
        "mean": 100.0,
        "sd": 0.0,
    }
