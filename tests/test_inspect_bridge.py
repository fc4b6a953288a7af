"""The Inspect AI bridge: the real ``inspect eval ctbench/all`` CLI against the scripted model server,
then ``ctb-eval import-inspect``, scored like ``ctb-eval run --agent openai`` on the same answers.

Both runs talk to one :class:`ScriptedModelServer` over chat completions, so the model gives the same
tool calls and the same answers to both: the golden script on RCA-001 and PATH-001, on RCA-002 a near
miss (one golden command left out, a wrong label), and on the topology task TOPO-002 a near miss too
(one cable right, one with the wrong far port, one left out). Every per-task figure and every headline
figure of the two run folders must then be equal; Inspect's epochs must arrive as trials. The family
task ``ctbench/topology`` takes the topology task alone and scores it the same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctbench.model import HiddenSpec
from ctbench.yamlio import load_fast
from tests.conftest import BUNDLED, run_cli
from tests.support.model_server import ScriptedModelServer, Step, TaskScript, usage_for

inspect_ai = pytest.importorskip("inspect_ai", reason="the Inspect bridge needs: pip install -e '.[inspect]'")

pytestmark = pytest.mark.xdist_group("inspect")

IDS = ("RCA-001", "RCA-002", "PATH-001", "TOPO-002")
TOPOLOGY_NEAR_MISS = (
    "nx-osv9000-1(Ethernet1/1)->nx-osv9000-3-long-name.com(Ethernet1/1)\n"
    "nx-osv9000-1(Ethernet1/2)->nx-osv9000-4-extremely-long-name(Ethernet1/2)"
)
"""TOPO-002's gold has three cables: this gets one right, the second's far port wrong, the third missing.
By hand: link IoU 1 / 4 (one shared link of four distinct); node-pair IoU 2 / 3; not exact."""


def _near_miss(task_dir: Path) -> TaskScript:
    """The golden script less its last golden command, answering with the right node and a wrong label."""
    golden = TaskScript.golden(task_dir)
    hidden = HiddenSpec.model_validate(load_fast(task_dir / "hidden.yaml"))
    first = hidden.answer.rca[0]
    runs = [s for s in golden.steps if s.tool == "run_command"][:-1]
    answer = f"<answer>\n{first.node};{first.object};interface error-down\n</answer>"
    steps = (Step("list_devices"), *runs, Step("submit_answer", {"answer": answer}), Step(None, text="Done."))
    return TaskScript(golden.task_id, steps)


def _topology_near_miss(task_dir: Path) -> TaskScript:
    golden = TaskScript.golden(task_dir)
    runs = [s for s in golden.steps if s.tool == "run_command"]
    answer = f"<answer>\n{TOPOLOGY_NEAR_MISS}\n</answer>"
    steps = (Step("list_devices"), *runs, Step("submit_answer", {"answer": answer}), Step(None, text="Done."))
    return TaskScript(golden.task_id, steps)


def _scripts(tasks: Path) -> list[TaskScript]:
    return [
        TaskScript.golden(tasks / "rca" / "RCA-001"),
        _near_miss(tasks / "rca" / "RCA-002"),
        TaskScript.golden(tasks / "path" / "PATH-001"),
        _topology_near_miss(tasks / "topology" / "TOPO-002"),
    ]


def _inspect_eval(
    server: ScriptedModelServer, tasks: Path, log_dir: Path, epochs: int, name: str = "ctbench/all"
) -> Path:
    # No PYTHONPATH: with the repository on it, Inspect does not resolve `ctbench/all` through the
    # entry point (it finds the package folder first); the installed package is what users run.
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        "SCRIPTED_BASE_URL": server.url,
        "SCRIPTED_API_KEY": "sk-test",
        "INSPECT_LOG_DIR": str(log_dir),
    }
    argv = [
        str(Path(sys.executable).parent / "inspect"), "eval", name,
        "--model", "openai-api/scripted/scripted-model",
        "-T", f"tasks={tasks}", "-T", "allow_unreviewed=true",
        *(["-T", f"select={','.join(IDS)}"] if name == "ctbench/all" else []),
        "--epochs", str(epochs), "--log-format", "json", "--display", "plain", "--max-connections", "2",
    ]  # fmt: skip
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=240, cwd=log_dir.parent)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    (log,) = sorted(log_dir.glob("*.json"))
    return log


def _scores(run_dir: Path, tasks: Path) -> dict[str, Any]:
    proc = run_cli("evaluate", "score", str(run_dir), "--tasks", str(tasks), "--json", "--resamples", "200")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _per_task(scores: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    drop = {"usage", "latency_s", "rounds", "input_tokens", "output_tokens", "cached_tokens", "cost_usd"}
    return {
        (row["task_id"], row.get("trial", 1)): {k: v for k, v in row.items() if k not in drop}
        for row in scores["tasks"]
    }


@pytest.fixture(scope="module")
def both_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from tests.conftest import copy_starters

    root = tmp_path_factory.mktemp("inspect")
    tasks = copy_starters(root / "tasks")
    shutil.copytree(BUNDLED / "topology" / "TOPO-002", tasks / "topology" / "TOPO-002")
    log_dir = root / "logs"
    log_dir.mkdir()
    (root / "logs-topology").mkdir()
    with ScriptedModelServer(_scripts(tasks), max_requests=300, max_seconds=400) as server:
        log = _inspect_eval(server, tasks, log_dir, epochs=2)
        topology_log = _inspect_eval(server, tasks, root / "logs-topology", epochs=1, name="ctbench/topology")
        native = root / "native"
        proc = run_cli(
            "evaluate", "run", "--allow-unreviewed", "--agent", "openai", "--model", "scripted-model",
            "--base-url", server.url, "--tasks", str(tasks), "--select", ",".join(IDS), "--trials", "2",
            "--out", str(native), "--progress", "plain", "--no-score",
            env={"CTBENCH_API_KEY": "sk-test", "OPENAI_API_KEY": ""}, timeout=240,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    imported = root / "imported"
    proc = run_cli("evaluate", "import-inspect", str(log), "--out", str(imported), "--tasks", str(tasks))
    assert proc.returncode == 0, proc.stderr
    topology_run = root / "imported-topology"
    done = run_cli(
        "evaluate", "import-inspect", str(topology_log), "--out", str(topology_run), "--tasks", str(tasks)
    )
    assert done.returncode == 0, done.stderr
    return {
        "tasks": tasks,
        "log": log,
        "native": native,
        "imported": imported,
        "import_out": proc.stdout,
        "topology": topology_run,
    }


def test_inspect_run_scores_as_ctbench_run_scores_the_same_answers(both_runs: dict[str, Any]) -> None:
    tasks = both_runs["tasks"]
    native, imported = _scores(both_runs["native"], tasks), _scores(both_runs["imported"], tasks)
    rows_native, rows_imported = _per_task(native), _per_task(imported)
    assert set(rows_imported) == {(t, k) for t in IDS for k in (1, 2)}
    assert rows_imported == rows_native
    # the near miss really is one: wrong label, one golden command short; the golden ones are right
    near = rows_imported[("RCA-002", 1)]
    assert near["exact"] is False and 0 < near["loc"] <= 1
    assert rows_imported[("RCA-001", 1)]["exact"] is True and rows_imported[("PATH-001", 2)]["exact"] is True
    # the topology near miss, as worked out by hand (TOPOLOGY_NEAR_MISS)
    topo = rows_imported[("TOPO-002", 2)]
    assert topo["family"] == "topology" and topo["exact"] is False
    assert topo["link_iou"] == pytest.approx(0.25) and topo["loc"] == pytest.approx(2 / 3)
    for key in ("rca", "path", "topology"):
        assert imported["summary"][key] == native["summary"][key], key
    assert imported["summary"]["topology"]["n_tasks"] == 1
    # the usage is what the scripted server reported for each of Inspect's requests (prompt tokens
    # counting the cached ones, as everywhere in ctbench). Inspect asks once more than the openai agent,
    # which stops at submit_answer, so the two runs' token figures differ by design.
    lines = [json.loads(x) for x in (both_runs["imported"] / "results.jsonl").read_text().splitlines()]
    for line in lines:
        steps = [usage_for(step) for step in range(line["rounds"])]
        assert line["input_tokens"] == sum(u.input for u in steps), line["task_id"]
        assert line["cached_tokens"] == sum(u.cached for u in steps), line["task_id"]
        assert line["output_tokens"] == sum(u.output for u in steps), line["task_id"]
        assert line["answer_source"] == "submit" and line["rounds_kind"] == "model requests"
    config = (both_runs["imported"] / "run.yaml").read_text(encoding="utf-8")
    assert "harness: inspect" in config and "trials: 2" in config
    assert "imported 8 task(s)" in both_runs["import_out"]


def test_the_topology_family_task_takes_the_topology_tasks_and_scores_them_alike(
    both_runs: dict[str, Any],
) -> None:
    """``inspect eval ctbench/topology``: only the set's topology task, scored as ``ctb-eval run`` does."""
    tasks = both_runs["tasks"]
    alone, native = _scores(both_runs["topology"], tasks), _scores(both_runs["native"], tasks)
    rows = _per_task(alone)
    assert set(rows) == {("TOPO-002", 1)}
    assert rows[("TOPO-002", 1)] == _per_task(native)[("TOPO-002", 1)]
    assert alone["summary"]["topology"]["link_iou"] == pytest.approx(0.25)
    assert alone["summary"]["rca"]["n_tasks"] == 0 and alone["summary"]["path"]["n_tasks"] == 0


def test_the_inspect_log_carries_the_replay_trajectory_and_never_the_gold_in_a_sample(
    both_runs: dict[str, Any],
) -> None:
    log = json.loads(both_runs["log"].read_text(encoding="utf-8"))
    tasks: Path = both_runs["tasks"]
    for sample in log["samples"]:
        family = sample["metadata"]["family"]
        task_dir = tasks / family / sample["id"]
        hidden = HiddenSpec.model_validate(load_fast(task_dir / "hidden.yaml"))
        from ctbench.model import Family

        gold_lines = hidden.gold_answer_lines(Family(family))
        visible = json.dumps({k: sample.get(k) for k in ("input", "target", "metadata", "choices")})
        assert gold_lines and not any(line in visible for line in gold_lines), sample["id"]
        judged = sample["scores"]["ctbench_judge"]["metadata"]
        assert judged["task_id"] == sample["id"]
        outcomes = {r["outcome"] for r in judged["trajectory"]}
        assert outcomes and outcomes <= {"recorded", "denied", "invalid", "unknown-device", "help"}


def test_import_inspect_says_what_is_wrong_with_a_bad_log(tmp_path: Path, task_set: Path) -> None:
    bad = tmp_path / "not-a-log.json"
    bad.write_text('{"hello": 1}', encoding="utf-8")
    proc = run_cli(
        "evaluate", "import-inspect", str(bad), "--out", str(tmp_path / "r"), "--tasks", str(task_set)
    )
    assert proc.returncode != 0
    assert "not an Inspect eval log" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "r").exists()
