"""`ctb-eval score`: run folders written by hand against the bundled tasks, scored through the adapter.

Checks the oracle ceiling (100 on every metric), hand-computed numbers for a run with wrong answers,
the rules of the adapter (re-parsing, normalised gold, executed = recorded or denied, unfinished
tasks count as wrong), byte-identical scores.json, and clear messages on broken run folders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.errors import CtbError
from ctbench.evaluate.score import SCORES_FILE, Scorer, score_run
from ctbench.store import TaskSet
from tests.conftest import REPO, run_cli
from tests.test_score_support import gold_text, golden_calls, oracle_run, starter_copy, write_run

N = 400  # bootstrap resamples in tests: enough to exercise the code, fast to run


@pytest.fixture
def starter_set(tmp_path: Path) -> Path:
    """The bundled task set reduced to the three starter tasks the expected numbers are worked out on."""
    return starter_copy(tmp_path)


WRONG = {
    # RCA-001 gold: CORE_SW_01;GigabitEthernet0/0/24;shutdown -> right place (abbreviated), wrong mechanism
    "RCA-001": "The port is down.\n<answer>\nCORE_SW_01;GE0/0/24;physical link down\n</answer>",
    # RCA-002 gold: two causes (FW_01 policy, GW_01 static route) -> only the firewall one (paper q7 shape)
    "RCA-002": "FW_01;10.10.10.10;security policy rule does not permit the corresponding user",
    # PATH-001: CORE_SW_01 leaves by the wrong port: the two edges touching that hop are wrong
    "PATH-001": (
        "PC_01_eth0 -> ACC_SW_01_GE1/0/48 -> CORE_SW_01_GigabitEthernet0/0/1 -> FW_01_GigabitEthernet1/0/2"
        " -> GW_01_GigabitEthernet2 -> PE_01_ge-0/0/2 -> SRV_01"
    ),
}
WRONG_CALLS = {
    "RCA-001": [
        ("CORE_SW_01", "dis int br", "display interface brief", "recorded"),
        ("core_sw_01", "dis ip rou", "display ip routing-table", "recorded"),  # case-insensitive device
        ("CORE_SW_01", "display ip routing-table", "display ip routing-table", "recorded"),  # repeat
        ("CORE_SW_01", "display version", "display version", "denied"),  # executed, not golden
        ("CORE_SW_01", "dis foo", None, "invalid"),  # executes nothing
        ("NOPE_01", "display version", None, "unknown-device"),
    ],
    "RCA-002": [
        (
            "FW_01",
            "dis security-policy rule name policy-to-dc",
            "display security-policy rule name policy-to-dc",
            "recorded",
        )
    ],
    "PATH-001": [],
}


def wrong_run(tmp_path: Path, starter_set: Path, **kwargs: object) -> Path:
    return write_run(tmp_path / "wrong", starter_set, answers=WRONG, calls=WRONG_CALLS, **kwargs)  # type: ignore[arg-type]


def load(run: Path) -> dict:
    return json.loads((run / SCORES_FILE).read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- the ceiling


def test_oracle_like_run_scores_100_on_every_metric(starter_set: Path, tmp_path: Path) -> None:
    run = oracle_run(tmp_path / "oracle", starter_set)
    scores = score_run(run, TaskSet.open(starter_set), n_resamples=N)
    assert scores == load(run)
    rca, path = scores["summary"]["rca"], scores["summary"]["path"]
    assert (rca["n_tasks"], path["n_tasks"]) == (2, 1)
    for value in (
        rca["accuracy"],
        rca["loc_iou"],
        rca["id_iou"],
        rca["triplet_iou"],
        rca["evidence"]["coverage"],
        rca["evidence"]["f1"],
        rca["evidence_on_correct"]["coverage"],
        path["accuracy"],
        path["loc_iou"],
        path["rest_iou"],
        path["sequence_iou"],
        path["micro_edge_iou"],
        path["evidence"]["coverage"],
        path["evidence"]["f1"],
        path["evidence_on_correct"]["coverage"],
    ):
        assert value == 1.0
    for key in ("id_exact", "id_hierarchical", "loc_exact", "loc_hierarchical"):
        assert rca["entry_match"][key] == {"macro": 1.0, "micro": 1.0}
    assert rca["evidence_on_correct"]["incomplete"] == path["evidence_on_correct"]["incomplete"] == 0
    assert scores["failures"]["counts"] == {"F1": 0, "F2": 0, "F3": 0, "F4": 0, "F5": 0}
    assert scores["se"]["rca"]["accuracy"] == 0.0 and scores["se"]["rca"]["evidence_coverage"] == 0.0
    assert all(t["exact"] and t.get("failure") is None for t in scores["tasks"])
    assert scores["incomplete"] is False and scores["missing_results"] == []
    assert scores["run"]["agent"] == "test-agent" and scores["scoring"]["n_resamples"] == N


# --------------------------------------------------------------------------- hand-computed numbers


def test_wrong_answers_give_the_hand_computed_numbers(starter_set: Path, tmp_path: Path) -> None:
    scores = score_run(wrong_run(tmp_path, starter_set), TaskSet.open(starter_set), n_resamples=N)
    tasks = {t["task_id"]: t for t in scores["tasks"]}

    t1 = tasks["RCA-001"]  # GE0/0/24 normalised to the gold's full name; label wrong
    assert (t1["exact"], t1["loc"], t1["ident"], t1["triplet"], t1["failure"]) == (False, 1.0, 0.0, 0.0, "F4")
    # golden: interface brief, current-configuration GE0/0/24, ip routing-table; executed: brief, routing-table,
    # version (denied still executed); invalid and unknown-device calls execute nothing; repeats count once
    assert t1["evidence"] == {"covered": 2, "golden": 3, "executed": 3}
    # hierarchical: shutdown vs physical link down share L2 "interface" -> 0.5; same node -> 1.0
    assert t1["entry_match"] == {
        "n_gold": 1,
        "id_exact": 0.0,
        "id_hierarchical": 0.5,
        "loc_exact": 1.0,
        "loc_hierarchical": 1.0,
    }

    t2 = tasks["RCA-002"]  # one of two causes: F1 coverage deficit
    assert (t2["exact"], t2["loc"], t2["ident"], t2["triplet"], t2["failure"]) == (False, 0.5, 0.5, 0.5, "F1")
    assert t2["evidence"] == {"covered": 1, "golden": 3, "executed": 1}
    assert t2["failure_name"] == "causal coverage deficit"

    p = tasks["PATH-001"]  # 6 gold edges; the wrong hop spoils 2 of them: 4 common, union 6 + 2
    assert (p["exact"], p["loc"], p["rest"], p["sequence"]) == (False, 1.0, 0.5, 0.0)
    assert (p["edges_intersection"], p["edges_union"]) == (4, 8)
    assert p["evidence"] == {"covered": 0, "golden": 6, "executed": 0}

    rca = scores["summary"]["rca"]
    assert rca["accuracy"] == 0.0 and rca["n_correct"] == 0
    assert rca["loc_iou"] == pytest.approx(0.75) and rca["id_iou"] == pytest.approx(0.25)
    assert rca["triplet_iou"] == pytest.approx(0.25)
    assert rca["evidence"] == {"covered": 3, "golden": 6, "executed": 4, "coverage": 0.5, "f1": 0.6}
    assert rca["entry_match"]["id_hierarchical"]["micro"] == pytest.approx((0.5 + 1.0) / 3)
    assert rca["entry_match"]["id_exact"]["micro"] == pytest.approx(1 / 3)
    assert rca["evidence_on_correct"] == {
        "n_correct": 0,
        "incomplete": 0,
        "incomplete_freq": None,
        "covered": 0,
        "golden": 0,
        "coverage": None,
    }
    assert scores["failures"]["counts"] == {"F1": 1, "F2": 0, "F3": 0, "F4": 1, "F5": 0}
    assert scores["failures"]["tasks"] == {"RCA-001": "F4", "RCA-002": "F1"}
    path = scores["summary"]["path"]
    assert (path["accuracy"], path["loc_iou"], path["rest_iou"], path["sequence_iou"]) == (0.0, 1.0, 0.5, 0.0)
    assert path["micro_edge_iou"] == 0.5 and path["evidence"]["coverage"] == 0.0

    se = scores["se"]["rca"]
    assert se["accuracy"] == 0.0
    assert se["loc_iou"] == pytest.approx(0.25)  # sd([1, 0.5]) / sqrt(2)
    assert se["id_iou"] == pytest.approx(0.25)
    assert scores["se"]["path"]["accuracy"] is None  # one task: no sample sd

    # efficiency from the result lines: rounds = calls + 1, latency 12.5 s, 1000 + 200 tokens
    eff = scores["summary"]["efficiency"]["rca"]
    assert eff["rounds"]["mean"] == pytest.approx((7 + 2) / 2) and eff["latency_s"]["mean"] == 12.5
    assert eff["total_tokens"]["mean"] == 1200.0


def test_breakdowns_cover_every_metadata_field(starter_set: Path, tmp_path: Path) -> None:
    scores = score_run(wrong_run(tmp_path, starter_set), TaskSet.open(starter_set), n_resamples=N)
    bd = scores["breakdowns"]
    assert list(bd) == [
        "category",
        "observability",
        "heterogeneity",
        "root_cause_count",
        "chain_length",
        "protocol_complexity",
        "golden_tier",
        "path_count",
    ]
    cats = bd["category"]["strata"]
    assert list(cats) == ["C1", "C2", "C4"]  # RCA-002 counts in C2 and C4
    assert cats["C1"]["metrics"]["rca"]["loc_iou"] == 1.0 and cats["C2"]["metrics"]["rca"]["loc_iou"] == 0.5
    assert cats["C4"]["n_rca"] == 1 and bd["category"]["unassigned"] == 1  # the path task
    assert list(bd["root_cause_count"]["strata"]) == ["1", "2"]
    assert list(bd["chain_length"]["strata"]) == ["1", "2"]
    assert bd["path_count"]["strata"]["1"]["n_path"] == 1 and bd["path_count"]["unassigned"] == 2
    het = bd["heterogeneity"]["strata"]  # levels come from ctbench.yaml; every task is in exactly one
    assert sum(st["n_rca"] for st in het.values()) == 2 and sum(st["n_path"] for st in het.values()) == 1
    assert het["low"]["n_rca"] == 2  # h_L 1 and 2 under the RCA threshold of 2
    assert all(st["warning"] for b in bd.values() for st in b["strata"].values())  # all below min_stratum 10
    assert any("fewer than 10 tasks" in w for w in scores["warnings"])
    meta = {t["task_id"]: t["meta"] for t in scores["tasks"]}
    assert meta["RCA-002"]["categories"] == ["C2", "C4"] and meta["RCA-001"]["observability"] == "O1"
    assert meta["PATH-001"]["golden_length"] == 6 and "observability" not in meta["PATH-001"]


# --------------------------------------------------------------------------- adapter rules


def test_unanswered_timeouts_and_unfinished_tasks_count_as_wrong(starter_set: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(starter_set)
    run = write_run(
        tmp_path / "partial",
        starter_set,
        answers={"RCA-001": gold_text(ts, "RCA-001"), "RCA-002": "I could not decide."},
        statuses={"RCA-001": "timeout"},
        selected=["RCA-001", "RCA-002", "PATH-001"],
        calls={"RCA-001": golden_calls(ts, "RCA-001")},
    )
    scores = score_run(run, ts, n_resamples=N)
    tasks = {t["task_id"]: t for t in scores["tasks"]}
    # a timeout is scored as no answer even though it left text; its evidence still counts
    assert tasks["RCA-001"]["status"] == "missing" and tasks["RCA-001"]["failure"] == "F5"
    assert tasks["RCA-001"]["evidence"]["covered"] == 3
    assert tasks["RCA-002"]["status"] == "unparsable" and tasks["RCA-002"]["failure"] == "F5"
    assert tasks["PATH-001"]["status"] == "missing" and tasks["PATH-001"]["loc"] == 0.0
    assert scores["incomplete"] is True and scores["missing_results"] == ["PATH-001"]
    assert scores["summary"]["path"]["n_tasks"] == 1 and scores["summary"]["rca"]["status"]["missing"] == 1
    assert any("incomplete: 1 of 3" in w for w in scores["warnings"])


def test_gold_goes_through_the_same_normalisers(starter_set: Path, tmp_path: Path) -> None:
    hidden = starter_set / "rca" / "RCA-001" / "hidden.yaml"
    text = hidden.read_text(encoding="utf-8")
    hidden.write_text(
        text.replace("object: GigabitEthernet0/0/24", "object: GE0/0/24")
        .replace("label: shutdown", "label: interface administratively down")  # an alias
        .replace("command: display interface brief", "command: dis int brief"),
        encoding="utf-8",
    )
    run = oracle_run(tmp_path / "oracle", starter_set)
    write_run(
        run,
        starter_set,
        answers={"RCA-001": "CORE_SW_01;GigabitEthernet0/0/24;shutdown"},
        calls={"RCA-001": [("CORE_SW_01", "display interface brief", "display interface brief", "recorded")]},
    )
    scores = score_run(run, TaskSet.open(starter_set), n_resamples=N)
    (task,) = scores["tasks"]
    assert task["exact"] is True and task["evidence"]["covered"] == 1


def test_stored_answer_is_used_only_without_text(starter_set: Path, tmp_path: Path) -> None:
    run = write_run(tmp_path / "stored", starter_set, answers={"RCA-001": None})
    line = json.loads((run / "results.jsonl").read_text())
    line["status"] = "answered"
    line["answer"] = {
        "status": "answered",
        "paths": None,
        "invalid_lines": [],
        "rca": [{"node": "CORE_SW_01", "object": "GigabitEthernet0/0/24", "label": "shutdown"}],
    }
    (run / "results.jsonl").write_text(json.dumps(line) + "\n")
    scores = score_run(run, TaskSet.open(starter_set), n_resamples=N)
    assert scores["tasks"][0]["exact"] is True


def test_filtered_command_covers_the_bare_golden_action(starter_set: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(starter_set)
    scorer = Scorer(ts)
    ctx = scorer.judge("RCA-001")
    assert ctx.action_key("core_sw_01", "dis int br | include GE") == (
        "CORE_SW_01",
        "display interface brief",
    )
    assert ctx.action_key("PC_01", "ping  10.0.0.1") == ("PC_01", "ping 10.0.0.1")  # no CLI dialect
    assert ("CORE_SW_01", "display interface brief") in ctx.golden_actions


# --------------------------------------------------------------------------- determinism


def test_scores_json_is_byte_identical_across_runs_and_hash_seeds(starter_set: Path, tmp_path: Path) -> None:
    run = wrong_run(tmp_path, starter_set)
    score_run(run, TaskSet.open(starter_set), n_resamples=N)
    first = (run / SCORES_FILE).read_bytes()
    score_run(run, TaskSet.open(starter_set), n_resamples=N)
    assert (run / SCORES_FILE).read_bytes() == first
    code = (
        "import sys; from pathlib import Path; from ctbench.store import TaskSet; "
        "from ctbench.evaluate.score import score_run; "
        f"score_run(Path({str(run)!r}), TaskSet.open({str(starter_set)!r}), n_resamples={N})"
    )
    for seed in ("1", "4242"):
        (run / SCORES_FILE).unlink()
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        assert (run / SCORES_FILE).read_bytes() == first
    assert b"NaN" not in first and str(tmp_path).encode() not in first  # strict JSON, no absolute paths


# --------------------------------------------------------------------------- the command


def test_score_command_prints_the_scorecard_and_writes_scores(starter_set: Path, tmp_path: Path) -> None:
    run = wrong_run(tmp_path, starter_set)
    proc = run_cli("evaluate", "score", str(run), "--tasks", str(starter_set), "--resamples", "200")
    assert proc.returncode == 0, proc.stderr
    assert "Scorecard" in proc.stdout and "Evidence" in proc.stdout
    assert "0.00 ± 0.00" in proc.stdout and "75.00 ± 25.00" in proc.stdout  # RCA Acc, RCA Loc
    assert "failure modes of 2 wrong answer(s): F1 1, F4 1" in proc.stdout
    assert "warning:" in proc.stdout and (run / SCORES_FILE).is_file()
    # without --tasks and no ./tasks here: the task set recorded in run.yaml
    proc = run_cli("evaluate", "score", str(run), "--resamples", "200", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == load(run)


def test_broken_run_folders_give_clear_messages(starter_set: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(starter_set)
    with pytest.raises(CtbError, match="not a run folder"):
        score_run(tmp_path, ts)
    with pytest.raises(CtbError, match="no such run folder"):
        score_run(tmp_path / "nope", ts)
    # a torn last line: warned about, its task counts as unfinished
    run = oracle_run(tmp_path / "torn", starter_set)
    with (run / "results.jsonl").open("a") as fh:
        fh.write('{"task_id": "RCA-00')
    lines = (run / "results.jsonl").read_text().splitlines()
    (run / "results.jsonl").write_text("\n".join(lines[:2]) + "\n" + lines[-1])  # RCA-002 lost, then torn
    scores = score_run(run, ts, n_resamples=N)
    assert any("last line is incomplete" in w for w in scores["warnings"])
    assert scores["missing_results"] == ["RCA-002"]
    # garbage in the middle of results.jsonl: error with file and line
    (run / "results.jsonl").write_text(lines[0] + "\nnot json\n" + lines[1] + "\n")
    with pytest.raises(CtbError, match=r"results\.jsonl:2: not a JSON object"):
        score_run(run, ts)
    # a task id the task set does not know
    bad = write_run(tmp_path / "unknown", starter_set, answers={"RCA-001": "x"})
    text = (bad / "results.jsonl").read_text().replace('"RCA-001"', '"RCA-999"')
    (bad / "results.jsonl").write_text(text)
    (bad / "run.yaml").write_text((bad / "run.yaml").read_text().replace("- RCA-001", "- RCA-999"))
    with pytest.raises(CtbError, match=r"RCA-999 \(results\.jsonl:1\).*--tasks"):
        score_run(bad, ts)
    # the same through the command: a message, no traceback
    for args in ([str(tmp_path / "nope")], [str(bad)], [str(run)]):
        proc = run_cli("evaluate", "score", *args, "--tasks", str(starter_set))
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        assert proc.stderr.startswith("ctb-eval: ") and len(proc.stderr.strip().splitlines()) == 1


def test_run_yaml_from_another_tool_is_read_leniently(starter_set: Path, tmp_path: Path) -> None:
    run = oracle_run(tmp_path / "other", starter_set)
    (run / "run.yaml").write_text(
        "name: other-tool\nagent: my-harness\nmodel: big\ntasks: [RCA-001]\nextra_field: 1\n"
    )
    scores = score_run(run, TaskSet.open(starter_set), n_resamples=N)
    assert scores["run"]["name"] == "other-tool" and scores["n_tasks"] == 3
    assert any("read leniently" in w for w in scores["warnings"])
    (run / "run.yaml").write_text("- just\n- a list\n")
    with pytest.raises(CtbError, match="expected a mapping"):
        score_run(run, TaskSet.open(starter_set))


def test_broken_task_files_and_trajectories_are_named(starter_set: Path, tmp_path: Path) -> None:
    run = oracle_run(tmp_path / "oracle", starter_set)
    with (run / "trajectories" / "RCA-001.jsonl").open("a") as fh:
        fh.write('{"seq": 4, "device": "CORE_SW_0')  # killed mid-line
    scores = score_run(run, TaskSet.open(starter_set), n_resamples=N)
    assert any(
        "trajectories/RCA-001.jsonl:4: not JSON" in w and "1 unreadable line(s) skipped" in w
        for w in scores["warnings"]
    )
    assert scores["summary"]["rca"]["evidence"]["coverage"] == 1.0  # the complete calls still count
    hidden = starter_set / "rca" / "RCA-002" / "hidden.yaml"
    hidden.write_text(hidden.read_text().replace("answer:", "answer: [", 1))
    with pytest.raises(CtbError, match=r"hidden\.yaml") as err:
        score_run(run, TaskSet.open(starter_set))
    assert "not in the task set" not in str(err.value)


def test_help_calls_are_never_executed_actions(starter_set: Path, tmp_path: Path) -> None:
    """A ``?`` on a golden command (outcome ``help``) executes nothing, even with a canonical form."""
    ts = TaskSet.open(starter_set)
    golden = golden_calls(ts, "RCA-001")
    as_help = [(device, f"{command} ?", canonical, "help") for device, command, canonical, _ in golden]
    run = write_run(
        tmp_path / "help",
        starter_set,
        answers={"RCA-001": gold_text(ts, "RCA-001")},
        calls={"RCA-001": as_help},
    )
    task = score_run(run, ts, n_resamples=N)["tasks"][0]
    assert task["evidence"] == {"covered": 0, "golden": len(golden), "executed": 0}
    run = write_run(
        tmp_path / "ran",
        starter_set,
        answers={"RCA-001": gold_text(ts, "RCA-001")},
        calls={"RCA-001": as_help + golden},
    )
    task = score_run(run, ts, n_resamples=N)["tasks"][0]
    assert task["evidence"]["covered"] == len(golden) and task["evidence"]["executed"] == len(golden)
