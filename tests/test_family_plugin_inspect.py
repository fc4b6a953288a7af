"""A plug-in family has an Inspect task of its own: ``inspect eval ctbench/downports``.

The family is ``tests/plugin_family/downports_family.py``, installed by an entry point as in
``tests/test_family_plugin.py``. ctbench writes out ``ctbench/rca``, ``ctbench/path`` and
``ctbench/topology``; every other installed family gets its task when Inspect loads ctbench's registry
module. The real ``inspect`` CLI runs the family's task against the scripted model server (DOWN-001
answered with its gold, DOWN-002 with the hand-made wrong answer of ``test_family_plugin``), then
``ctb-eval import-inspect`` and ``ctb-eval score`` must give the figures worked out by hand there.
Without the generic task Inspect does not know the name and the eval fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.support.model_server import ScriptedModelServer, Step, TaskScript
from tests.test_family_plugin import MODULE_DIR, TASKS, WRONG, plugin_env  # noqa: F401 - a fixture

pytest.importorskip("inspect_ai", reason="the Inspect bridge needs: pip install -e '.[inspect]'")

pytestmark = pytest.mark.xdist_group("inspect")


def _scripts() -> list[TaskScript]:
    """Both tasks' golden action (the plug-in is not installed in this process, so written out), then
    DOWN-001's gold and DOWN-002's wrong answer."""
    run = Step("run_command", {"device": "CORE_SW_01", "command": "display interface brief"})
    answers = {
        "DOWN-001": "<answer>\nCORE_SW_01:GigabitEthernet0/0/24\n</answer>",
        "DOWN-002": WRONG["DOWN-002"],
    }
    return [
        TaskScript(
            i, (Step("list_devices"), run, Step("submit_answer", {"answer": a}), Step(None, text="Done."))
        )
        for i, a in answers.items()
    ]


def test_inspect_eval_names_the_plugin_family_task(
    plugin_env: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    # The plug-in's dist-info and module on the path, the repository not (the installed ctbench is what
    # Inspect resolves `ctbench/...` through, as in tests/test_inspect_bridge.py).
    site = next(
        p
        for p in plugin_env["PYTHONPATH"].split(os.pathsep)
        if Path(p, "ctbench_downports-0.1.dist-info").is_dir()
    )
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    with ScriptedModelServer(_scripts(), max_requests=60, max_seconds=240) as server:
        env = {
            **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            "PYTHONPATH": os.pathsep.join([site, str(MODULE_DIR)]),
            "SCRIPTED_BASE_URL": server.url,
            "SCRIPTED_API_KEY": "sk-test",
            "INSPECT_LOG_DIR": str(log_dir),
        }
        argv = [
            str(Path(sys.executable).parent / "inspect"), "eval", "ctbench/downports",
            "--model", "openai-api/scripted/scripted-model",
            "-T", f"tasks={TASKS}", "-T", "allow_unreviewed=true",
            "--log-format", "json", "--display", "plain", "--max-connections", "2",
        ]  # fmt: skip
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    (log,) = sorted(log_dir.glob("*.json"))
    data = json.loads(log.read_text("utf-8"))
    assert data["eval"]["task"] == "ctbench/downports"
    assert sorted(s["id"] for s in data["samples"]) == ["DOWN-001", "DOWN-002"]
    assert {s["metadata"]["family"] for s in data["samples"]} == {"downports"}

    run = tmp_path / "imported"
    res = run_cli(
        "evaluate", "import-inspect", str(log), "--out", str(run), "--tasks", str(TASKS), env=plugin_env
    )
    assert res.returncode == 0, res.stderr
    res = run_cli("evaluate", "score", str(run), "--tasks", str(TASKS), "--json", env=plugin_env)
    assert res.returncode == 0, res.stderr
    scores = json.loads(res.stdout)
    tasks = {t["task_id"]: t for t in scores["tasks"]}
    assert (tasks["DOWN-001"]["exact"], tasks["DOWN-001"]["port_iou"]) == (True, 1.0)
    assert (tasks["DOWN-002"]["exact"], tasks["DOWN-002"]["loc"]) == (False, 0.5)
    assert tasks["DOWN-002"]["port_iou"] == pytest.approx(1 / 3)
    summ = scores["summary"]["downports"]
    assert (summ["n_tasks"], summ["accuracy"]) == (2, 0.5)
    assert summ["port_iou"] == pytest.approx(2 / 3)
