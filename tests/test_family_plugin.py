"""A fourth task family from its own module plus data, with no edit to ctbench.

``tests/plugin_family/downports_family.py`` is a task family written as a plug-in author would ("which
ports are down?", one ``node:interface`` per line), importing only :mod:`ctbench.plugins`; its tasks
are ``tests/fixtures/family-plugin/tasks/downports/DOWN-001..002``. The test installs it the way a
package would be installed - a ``.dist-info`` with an entry point in the ``ctbench.families`` group on
the path - and drives the real console scripts in subprocesses: ``ctb-author validate``, ``ctb-eval run``
with the oracle (100 everywhere) and with a ``command`` agent giving hand-made wrong answers (scored as
computed by hand), ``ctb-eval score`` (same bytes again, from the stored parses) and ``ctb-eval report``.
Without the entry point the same tasks are not a family at all, and ``ctbench/`` never names it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

pytestmark = pytest.mark.xdist_group("family_plugin")

TASKS = Path(__file__).parent / "fixtures" / "family-plugin" / "tasks"
MODULE_DIR = Path(__file__).parent / "plugin_family"

AGENT = """\
import json, os, sys
sys.stdin.read()
print(json.load(open(sys.argv[1], encoding="utf-8"))[os.environ["CTBENCH_TASK_ID"]])
"""
WRONG = {
    # gold CORE_SW_01:GigabitEthernet0/0/24; one extra port: port IoU 1/2, Loc 1
    "DOWN-001": "<answer>\nCORE_SW_01:GE0/0/24\ncore_sw_01:GE0/0/2\n</answer>",
    # gold GE0/0/2 and GE0/0/24; one right, one on another node: port IoU 1/3, Loc (nodes) 1/2
    "DOWN-002": "Final ports:\n<answer>\nCORE_SW_01:GigabitEthernet0/0/2\nACC_SW_01:GigabitEthernet0/0/1\n</answer>",
}


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The family installed as a distribution with an entry point (what ``pip install`` would leave)."""
    site = tmp_path_factory.mktemp("site")
    info = site / "ctbench_downports-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ctbench-downports\nVersion: 0.1\n", "utf-8")
    (info / "entry_points.txt").write_text(
        "[ctbench.families]\ndownports = downports_family:DownPortsFamily\n", "utf-8"
    )
    return {"PYTHONPATH": os.pathsep.join([str(REPO), str(site), str(MODULE_DIR)]), "COLUMNS": "140"}


def _lines(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "results.jsonl").read_text("utf-8").splitlines()]


def test_ctbench_does_not_name_the_family() -> None:
    """The seam claim itself: nothing under ctbench/ knows this family."""
    hits = [p for p in (REPO / "ctbench").rglob("*") if p.is_file() and b"downports" in p.read_bytes()]
    assert hits == []


def test_the_tasks_validate_as_their_family(plugin_env: dict[str, str]) -> None:
    res = run_cli("authoring", "validate", str(TASKS), env=plugin_env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "2 task(s) checked: 0 error(s)" in res.stdout


def test_the_oracle_scores_100_through_run_and_score(plugin_env: dict[str, str], tmp_path: Path) -> None:
    run = tmp_path / "oracle"
    res = run_cli(
        "evaluate", "run", "--agent", "oracle", "--tasks", str(TASKS), "--allow-unreviewed",
        "--out", str(run), env=plugin_env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    # the scorecard names the family by its title, as the built-ins by theirs ("RCA")
    row = next(x for x in res.stdout.splitlines() if x.startswith("│ down-port audit"))
    assert row.count("100.00") == 4  # Acc, Loc, port_iou, evidence
    lines = _lines(run)
    assert {x["family"] for x in lines} == {"downports"}
    assert all(x["answer"]["family"] == "downports" and x["answer"]["status"] == "answered" for x in lines)
    scores = json.loads((run / "scores.json").read_text("utf-8"))
    summ = scores["summary"]["downports"]
    assert (summ["accuracy"], summ["loc_iou"], summ["port_iou"]) == (1.0, 1.0, 1.0)
    assert summ["evidence"]["coverage"] == 1.0
    assert {t["task_id"]: t["port_iou"] for t in scores["tasks"]} == {"DOWN-001": 1.0, "DOWN-002": 1.0}


def test_wrong_answers_score_as_computed_by_hand(plugin_env: dict[str, str], tmp_path: Path) -> None:
    plan = tmp_path / "answers.json"
    plan.write_text(json.dumps(WRONG), "utf-8")
    script = tmp_path / "agent.py"
    script.write_text(AGENT, "utf-8")
    run = tmp_path / "wrong"
    res = run_cli(
        "evaluate", "run", "--agent", "command", "--agent-cmd", f"{sys.executable} {script} {plan}",
        "--tasks", str(TASKS), "--allow-unreviewed", "--sandbox", "none", "--out", str(run),
        env=plugin_env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    first = (run / "scores.json").read_bytes()
    scores = json.loads(first)
    tasks = {t["task_id"]: t for t in scores["tasks"]}
    assert (tasks["DOWN-001"]["exact"], tasks["DOWN-001"]["loc"]) == (False, 1.0)
    assert tasks["DOWN-001"]["port_iou"] == pytest.approx(1 / 2)
    assert (tasks["DOWN-002"]["exact"], tasks["DOWN-002"]["loc"]) == (False, 0.5)
    assert tasks["DOWN-002"]["port_iou"] == pytest.approx(1 / 3)
    summ = scores["summary"]["downports"]
    assert summ["accuracy"] == 0.0
    assert summ["loc_iou"] == pytest.approx(0.75)
    assert summ["port_iou"] == pytest.approx(5 / 12)
    assert scores["se"]["downports"]["port_iou"] == pytest.approx(abs(1 / 2 - 1 / 3) / 2)
    # the parse was stored once, entries normalised by the node's dialect (GE0/0/24 -> GigabitEthernet...)
    stored = {x["task_id"]: x["answer"] for x in _lines(run)}
    assert stored["DOWN-001"]["entries"] == [
        ["CORE_SW_01", "GigabitEthernet0/0/2"],
        ["CORE_SW_01", "GigabitEthernet0/0/24"],
    ]
    assert stored["DOWN-002"]["unresolved_lines"] == []

    again = run_cli("evaluate", "score", str(run), "--tasks", str(TASKS), env=plugin_env, timeout=300)
    assert again.returncode == 0, again.stderr
    assert (run / "scores.json").read_bytes() == first
    assert "port_iou 41.67" in again.stdout

    report = run_cli("evaluate", "report", str(run), "--tasks", str(TASKS), "--format", "md", env=plugin_env)
    assert report.returncode == 0, report.stderr
    assert "Down-port audit: pass@1" in report.stdout and "41.67" in report.stdout

    twin = tmp_path / "twin"
    shutil.copytree(run, twin)
    both = run_cli("evaluate", "compare", str(run), str(twin), "--tasks", str(TASKS), env=plugin_env)
    assert both.returncode == 0, both.stderr
    assert "│ down-port audit" in both.stdout


def test_without_the_entry_point_the_family_does_not_exist(tmp_path: Path) -> None:
    """Protection off: the same tasks with the plug-in module importable but not registered."""
    env = {"PYTHONPATH": os.pathsep.join([str(REPO), str(MODULE_DIR)])}
    res = run_cli(
        "evaluate", "run", "--agent", "oracle", "--tasks", str(TASKS), "--allow-unreviewed",
        "--out", str(tmp_path / "run"), env=env, timeout=300,
    )  # fmt: skip
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    assert "no task to run" in res.stderr and "downports/: no such task family is installed" in res.stderr
    check = run_cli("authoring", "validate", str(TASKS), env=env)
    assert check.returncode != 0
    assert "no task family 'downports' is installed" in check.stdout + check.stderr
    assert not (tmp_path / "run" / "results.jsonl").exists() or not _lines(tmp_path / "run")


ORACLE_CHECK = """
import json, sys
from ctbench.authoring.oracle_check import check_oracle
print(json.dumps({r.task: r.problems for r in check_oracle([sys.argv[1]])}))
"""


def test_the_oracle_check_runs_the_family_gold_check(plugin_env: dict[str, str], tmp_path: Path) -> None:
    """The oracle check replays, parses the gold written as the family writes answers, scores it
    exact, and asks the family whether its gold can be stated on the network."""

    def check(tasks: Path) -> dict[str, list[str]]:
        res = subprocess.run(
            [sys.executable, "-c", ORACLE_CHECK, str(tasks)],
            capture_output=True, text=True, env={**os.environ, **plugin_env}, timeout=300,
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout)

    assert check(TASKS) == {"DOWN-001": [], "DOWN-002": []}
    bad = tmp_path / "tasks"
    shutil.copytree(TASKS, bad)
    hidden = bad / "downports" / "DOWN-001" / "hidden.yaml"
    hidden.write_text(hidden.read_text("utf-8").replace('["CORE_SW_01:', '["GHOST_SW:'), "utf-8")
    problems = check(bad)["DOWN-001"]
    assert "gold: GHOST_SW:GigabitEthernet0/0/24: no device 'GHOST_SW' in the network" in problems


GHOST_GOLD = """\
answer:
  downports:
    - CORE_SW_01:GigabitEthernet0/0/24
    - GHOST_SW:GigabitEthernet0/0/1
"""


def _ghost_set(tmp_path: Path) -> Path:
    """The fixture set with DOWN-001's gold naming a device its network does not have."""
    bad = tmp_path / "tasks"
    shutil.copytree(TASKS, bad)
    hidden = bad / "downports" / "DOWN-001" / "hidden.yaml"
    text = hidden.read_text("utf-8")
    old = 'answer:\n  downports: ["CORE_SW_01:GigabitEthernet0/0/24"]\n'
    assert old in text
    hidden.write_text(text.replace(old, GHOST_GOLD), "utf-8")
    return bad


GHOST = "GHOST_SW:GigabitEthernet0/0/1: no device 'GHOST_SW' in the network"


def test_validate_runs_the_family_gold_check(plugin_env: dict[str, str], tmp_path: Path) -> None:
    """``ctb-author validate`` asks the plug-in family whether its gold can be stated on the network
    (its ``gold_problems``), and reports the answer as it reports a built-in's unknown node: an error
    on the gold item's line, in the text output and in ``--json``."""
    bad = _ghost_set(tmp_path)
    res = run_cli("authoring", "validate", str(bad), env=plugin_env)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert f"tasks/downports/DOWN-001/hidden.yaml:5: error[answer-network]: {GHOST}" in res.stdout
    assert "2 task(s) checked: 1 error(s)" in res.stderr

    as_json = run_cli("authoring", "validate", "--json", str(bad), env=plugin_env)
    assert as_json.returncode == 1
    found = json.loads(as_json.stdout)
    errors = [f for f in found["findings"] if f["severity"] == "error"]
    assert [(f["task"], f["file"], f["line"], f["code"], f["message"]) for f in errors] == [
        ("DOWN-001", "tasks/downports/DOWN-001/hidden.yaml", 5, "answer-network", GHOST)
    ]


def test_the_run_gate_keeps_out_a_task_whose_family_gold_check_fails(
    plugin_env: dict[str, str], tmp_path: Path
) -> None:
    """``ctb-eval run`` skips the task with its reason (the family's message) and runs the other."""
    bad = _ghost_set(tmp_path)
    run = tmp_path / "run"
    env = {**plugin_env, "CTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    res = run_cli(
        "evaluate", "run", "--agent", "oracle", "--tasks", str(bad), "--allow-unreviewed",
        "--out", str(run), env=env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 task(s) fails validation" in res.stdout + res.stderr
    assert GHOST in res.stdout + res.stderr
    assert [x["task_id"] for x in _lines(run)] == ["DOWN-002"]
    scores = json.loads((run / "scores.json").read_text("utf-8"))
    assert [t["task_id"] for t in scores["tasks"]] == ["DOWN-002"]
