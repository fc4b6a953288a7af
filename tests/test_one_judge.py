"""One judge: the reveal, the oracle check, ``ctb-eval run``'s scorecard and ``ctb-eval score`` agree.

Every bundled task is answered four ways - the gold and three near misses made from it (a sibling
label, a neighbouring node, an extra line outside the schema for RCA; a dropped hop, a wrong egress,
a truncated path for path tasks) - by a real ``command`` agent that runs commands through the real
replay API and prints its answer, in real ``ctb-eval run`` subprocesses. The same answers and the
same trajectories then go through the review reveal's :func:`ctbench.review.blind_judge.judge_blind`, and the
gold through the oracle check; ``ctb-eval score`` rescores each run folder. Every per-task figure must
be the same in all of them (usage aside: the reveal counts a reviewer's rounds, the run a model's).

Before the one judge, the reveal scored a near-miss label with default settings and no topology, so
``entry_match.id_hierarchical`` was null there and 0.5 in ``ctb-eval score``: the ``label`` variant
fails on exactly that.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ctbench.authoring.oracle_check import check_task
from ctbench.review.blind_judge import judge_blind, trajectory_lines
from ctbench.scoring.judge import Judges
from ctbench.store import TaskSet
from tests.conftest import run_cli

pytestmark = pytest.mark.xdist_group("one_judge")

AGENT = """\
import json, os, sys, urllib.request
sys.stdin.read()
plan = json.load(open(sys.argv[1], encoding="utf-8"))[os.environ["CTBENCH_TASK_ID"]]
url, sid = os.environ["CTBENCH_REPLAY_URL"], os.environ["CTBENCH_REPLAY_SESSION"]
token = os.environ["CTBENCH_REPLAY_TOKEN"]
for device, command in plan["commands"]:
    req = urllib.request.Request(
        f"{url}/sessions/{sid}/run", data=json.dumps({"device": device, "command": command}).encode(),
        headers={"content-type": "application/json", "authorization": f"Bearer {token}"})
    urllib.request.urlopen(req).read()
print(plan["answer"])
"""

VARIANTS = ("gold", "near1", "near2", "near3")


def _sibling_label(levels: dict[str, tuple[str, str, str]], label: str) -> str:
    """Another label under the same L1 parent (a near miss the hierarchical score half-credits)."""
    mine = levels[label]
    same = sorted(lab for lab, lv in levels.items() if lab != label and lv[0] == mine[0])
    return same[0] if same else sorted(lab for lab in levels if lab != label)[0]


def _rca_variants(ts: TaskSet, judges: Judges, task_id: str) -> dict[str, str]:
    judge = judges.judge(task_id)
    gold = sorted(judge.gold)  # type: ignore[type-var]
    levels = dict(ts.taxonomy.levels())
    _, spec = judges.loaded(task_id)
    neighbours = ts.network(spec.network).neighbours()
    first = gold[0]
    label = ";".join((first.node, first.object, _sibling_label(levels, first.label)))
    other = sorted(neighbours.get(first.node) or [n for n in judge.node_names if n != first.node])[0]
    node = ";".join((other, first.object, first.label))
    rest = [e.line() for e in gold[1:]]
    return {
        "gold": "\n".join(e.line() for e in gold),
        "near1": "\n".join([label, *rest]),
        "near2": "\n".join([node, *rest]),
        "near3": "\n".join([*(e.line() for e in gold), f"{first.node};{first.object};not_a_known_label"]),
    }


def _path_variants(gold_lines: list[str]) -> dict[str, str]:
    first = gold_lines[0].split("->")
    dropped = [*first[:1], *first[2:]] if len(first) > 2 else first[:1]
    node, _, _ = first[0].partition("(")
    wrong_egress = [f"{node}(eth9)", *first[1:]]
    return {
        "gold": "\n".join(gold_lines),
        "near1": "->".join(dropped),
        "near2": "\n".join(["->".join(wrong_egress), *gold_lines[1:]]),
        "near3": "->".join(first[: max(2, len(first) // 2)]),
    }


def _topology_variants(gold_lines: list[str]) -> dict[str, str]:
    """The gold links; the first through a wrong far port; written backwards with all but the last;
    every link plus one to a node the network does not have."""
    first = gold_lines[0]
    near, _, _ = first.rpartition("(")
    flipped = ["->".join(reversed(line.split("->"))) for line in gold_lines[:-1]] or gold_lines[:1]
    return {
        "gold": "\n".join(gold_lines),
        "near1": "\n".join([f"{near}(eth9)", *gold_lines[1:]]),
        "near2": "\n".join(flipped),
        "near3": "\n".join([*gold_lines, "GHOST_01(eth0)->" + first.split("->")[0]]),
    }


def _figures(scores: dict[str, Any]) -> dict[str, Any]:
    """A task's figures without usage (and scores.json's own additions)."""
    drop = {"usage", "meta", "failure_name", "trial"}
    return {k: v for k, v in scores.items() if k not in drop}


def test_reveal_oracle_run_and_score_judge_alike(full_task_set: Path, tmp_path: Path) -> None:
    ts = TaskSet(full_task_set)
    judges = Judges(ts)
    refs = list(ts.refs())
    assert len(refs) >= 30  # every bundled task
    plans: dict[str, dict[str, dict[str, Any]]] = {v: {} for v in VARIANTS}
    for ref in refs:
        hidden = ts.load_hidden(ref)
        golden = [(a.device, a.command) for a in hidden.golden_actions]
        lines = hidden.gold_answer_lines(ref.family)
        answers = (
            _rca_variants(ts, judges, ref.id)
            if ref.family.value == "rca"
            else _topology_variants(lines)
            if ref.family.value == "topology"
            else _path_variants(lines)
        )
        for v in VARIANTS:
            # the gold answer with all the evidence; the near misses with every other golden action
            commands = golden if v == "gold" else golden[::2]
            plans[v][ref.id] = {"answer": answers[v], "commands": commands}
    script = tmp_path / "agent.py"
    script.write_text(AGENT, encoding="utf-8")

    for variant in VARIANTS:
        plan_file = tmp_path / f"{variant}.json"
        plan_file.write_text(json.dumps(plans[variant]), encoding="utf-8")
        run_dir = tmp_path / f"run-{variant}"
        res = run_cli(
            "evaluate",
            "run",
            "--agent",
            "command",
            "--agent-cmd",
            f"{sys.executable} {script} {plan_file}",
            "--tasks",
            str(full_task_set),
            "--allow-unreviewed",
            "--sandbox",
            "none",
            "--concurrency",
            "2",
            "--out",
            str(run_dir),
            "--progress",
            "none",
            "--json",
            timeout=600,
        )
        assert res.returncode == 0, res.stdout + res.stderr
        run_scores = json.loads(res.stdout)["scores"]
        rescored = run_cli("evaluate", "score", str(run_dir), "--tasks", str(full_task_set), "--json")
        assert rescored.returncode == 0, rescored.stderr
        score_scores = json.loads(rescored.stdout)
        assert score_scores["summary"] == run_scores["summary"]
        by_task = {t["task_id"]: _figures(t) for t in run_scores["tasks"]}
        assert by_task == {t["task_id"]: _figures(t) for t in score_scores["tasks"]}
        assert set(by_task) == {r.id for r in refs}

        results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
        for line in results:
            ref = ts.ref(line["task_id"])
            traj = (run_dir / line["trajectory"]).read_bytes()
            side = judge_blind(
                ts, ts.load_task(ref), ts.load_hidden(ref), line["answer_text"], trajectory_lines(traj)
            )
            assert _figures(side.scores) == by_task[ref.id], (variant, ref.id)
            if variant == "gold":
                assert by_task[ref.id]["exact"] is True, ref.id
                oracle = check_task(ts, ref, judges=judges)
                assert oracle.ok, oracle.problems
                assert oracle.scores is not None
                assert _figures(oracle.scores) == by_task[ref.id], ref.id
            else:
                assert by_task[ref.id]["exact"] is False, (variant, ref.id, line["answer_text"])
        if variant == "near1":
            # the near-miss label is half-credited on every path (B.2), not null on the reveal's
            rca = [t for t in by_task.values() if t["family"] == "rca"]
            assert rca and all(t["entry_match"]["id_hierarchical"] is not None for t in rca)
            assert any(0 < t["entry_match"]["id_hierarchical"] < 1 for t in rca)
