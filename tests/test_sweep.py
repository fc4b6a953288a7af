"""``ctb-eval sweep``: a model x effort x trials matrix against the scripted model server, killed with
SIGKILL in the middle and run again, writes the same report as a sweep that was never interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tests.support.model_server import ScriptedModelServer, TaskScript

pytestmark = pytest.mark.xdist_group("sweep")

IDS = ("RCA-001", "PATH-001")


def _sweep_file(path: Path, tasks: Path, base_url: str) -> Path:
    path.write_text(
        f"""\
name: grid
tasks: {tasks}
select: {",".join(IDS)}
trials: 2
allow_unreviewed: true
common: {{timeout: 120, concurrency: 1, base_url: "{base_url}"}}
cells:
  - agent: openai
    model: [scripted-a, scripted-b]
    reasoning_effort: [low, high]
report: [json, text]
""",
        encoding="utf-8",
    )
    return path


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "CTBENCH_API_KEY": "sk-test", "OPENAI_API_KEY": ""}


def _stable(report_json: Path) -> list[dict[str, object]]:
    """The report's tables with what differs between two honest runs of the same answers blanked: the
    latency column (wall time) and the sweep folder's own path."""
    tables = json.loads(report_json.read_text(encoding="utf-8").replace(str(report_json.parent), "SWEEP"))
    for table in tables:
        timed = [i for i, c in enumerate(table["columns"]) if "Latency" in c]
        for row in table["rows"]:
            for i in timed:
                row[i] = None
    return tables


def _log(path: Path, text: str) -> dict[str, Path]:
    path.write_text(text, encoding="utf-8")
    return {}


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.conftest import copy_starters

    root = tmp_path_factory.mktemp("sweep")
    tasks = copy_starters(root / "tasks")
    scripts = [TaskScript.golden(tasks / "rca" / "RCA-001"), TaskScript.golden(tasks / "path" / "PATH-001")]
    with ScriptedModelServer(scripts, max_requests=2000, max_seconds=280, delay_s=0.05) as server:
        spec = _sweep_file(root / "grid.yaml", tasks, server.url)
        whole = root / "whole"
        done = run_cli("evaluate", "sweep", str(spec), "--out", str(whole), env=_env(), timeout=240)
        assert done.returncode == 0, done.stderr[-3000:]
        # The same sweep, SIGKILLed once the second cell has a result, then run again.
        cut = root / "cut"
        argv = [sys.executable, "-m", "ctbench.evaluate.cli", "sweep", str(spec), "--out", str(cut)]
        proc = subprocess.Popen(
            argv, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        second = cut / "openai-scripted-a-high" / "results.jsonl"
        deadline = time.monotonic() + 120
        while not (second.is_file() and second.read_text(encoding="utf-8").strip()):
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the second cell never started"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert not (cut / "openai-scripted-b-high").exists(), "killed too late: the sweep had finished"
        again = run_cli("evaluate", "sweep", str(spec), "--out", str(cut), env=_env(), timeout=240)
        assert again.returncode == 0, again.stderr[-3000:]
    return {"whole": whole, "cut": cut, "again_log": root / "again.log"} | _log(
        root / "again.log", again.stderr
    )


def test_a_killed_sweep_run_again_gives_the_report_of_an_uninterrupted_one(sweeps: dict[str, Path]) -> None:
    whole, cut = sweeps["whole"], sweeps["cut"]
    cells = sorted(p.name for p in whole.iterdir() if p.is_dir())
    assert cells == [
        "openai-scripted-a-high",
        "openai-scripted-a-low",
        "openai-scripted-b-high",
        "openai-scripted-b-low",
    ]
    assert sorted(p.name for p in cut.iterdir() if p.is_dir()) == cells
    for cell in cells:
        lines = [json.loads(x) for x in (cut / cell / "results.jsonl").read_text().splitlines() if x]
        latest = {(x["task_id"], x["trial"]): x["status"] for x in lines}
        assert latest == {(t, k): "answered" for t in IDS for k in (1, 2)}, cell
        config = (cut / cell / "run.yaml").read_text(encoding="utf-8")
        effort = cell.rsplit("-", 1)[1]
        assert f"reasoning_effort: {effort}" in config and "trials: 2" in config
    assert _stable(cut / "report.json") == _stable(whole / "report.json")
    text = (cut / "report.txt").read_text(encoding="utf-8")
    assert all(cell in text for cell in cells)
    again = sweeps["again_log"].read_text(encoding="utf-8")
    assert "openai-scripted-a-low: resuming" in again and "openai-scripted-b-low: starting" in again
    assert (cut / "sweep.yaml").is_file()


def test_a_sweep_file_with_a_mistake_is_one_line_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ncells:\n  - agent: openai\n    modle: m\n", encoding="utf-8")
    proc = run_cli("evaluate", "sweep", str(bad), "--dry-run")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "block 1: unknown key(s) modle" in proc.stderr
    twice = tmp_path / "twice.yaml"
    twice.write_text("name: x\ncells:\n  - {agent: openai, model: m}\n  - {agent: openai, model: m}\n")
    proc = run_cli("evaluate", "sweep", str(twice), "--dry-run")
    assert proc.returncode != 0 and "two cells would share a folder: openai-m" in proc.stderr


def test_dry_run_lists_each_cell_with_its_run_command(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: s\ntrials: 3\ncells:\n  - agent: codex\n    model: gpt-5.5\n    reasoning_effort: [low, high]\n"
        "    executor: ray\n    executor_options: {runtime_env: '{}'}\n"
    )
    proc = run_cli("evaluate", "sweep", str(spec), "--out", str(tmp_path / "o"), "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["cells"]
    assert [r["cell"] for r in rows] == ["codex-gpt-5.5-low", "codex-gpt-5.5-high"]
    argv = rows[1]["argv"]
    assert argv[:3] == ["run", "--out", str(tmp_path / "o" / "codex-gpt-5.5-high")]
    assert "--trials" in argv and "reasoning_effort=high" in argv and "runtime_env={}" in argv
    assert not (tmp_path / "o").exists()
