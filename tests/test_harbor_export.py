"""Harbor opens ctbench's ATIF export: its own models validate every file, its viewer counts the trials.

Harbor needs Python >= 3.12 and ctbench's suite runs on 3.11, so Harbor lives in a venv of its own,
made by ``.ci/harbor-env`` (CPython 3.13 built from Debian's source package, Harbor at a pinned
version). The tests find its Python through ``CTBENCH_HARBOR_PYTHON`` (``.ci/run`` sets it: there a
missing or broken Harbor fails the tests) or at the script's default place, and skip only when neither
exists. Harbor reads the export in its own process: ``tests/harbor_check.py`` validates every
``trajectory.json`` with Harbor's Pydantic ``Trajectory`` model and runs Harbor's viewer loader
(``JobScanner``) over the folder, and ``harbor view`` serves the folder on 127.0.0.1 for its HTTP API
(the one its web page reads) to list the jobs, the trials and each trial's trajectory.

An export laid out as before (one ``<ID>/trajectory.json`` per task and nothing else) is read by the
same checks and fails them: Harbor sees every task as a job with no trial in it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from ctbench.evaluate.transcript import bare_tool
from ctbench.store import TaskSet
from tests.conftest import REPO, needs_bwrap, run_cli
from tests.support.harness_runs import TASK, HarnessRuns
from tests.test_harness_agents import HARNESSES
from tests.test_score_support import starter_copy

pytestmark = pytest.mark.timeout(900)

HARBOR_PYTHON = "CTBENCH_HARBOR_PYTHON"
HARBOR_VERSION = "0.26.0"
CHECK = REPO / "tests" / "harbor_check.py"


def _default_python() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    home = Path(os.environ.get("CTBENCH_HARBOR_HOME") or base / "ctbench" / "harbor")
    return home / f"venv-harbor-{HARBOR_VERSION}" / "bin" / "python"


@pytest.fixture(scope="session")
def harbor() -> Path:
    """Harbor's Python: set and broken fails, absent (outside CI) skips with how to get it."""
    given = os.environ.get(HARBOR_PYTHON)
    python = Path(given) if given else _default_python()
    if not given and not python.exists():
        pytest.skip(f"Harbor is not installed: run .ci/harbor-env (CI does) or set {HARBOR_PYTHON}")
    if not python.exists():
        pytest.fail(f"{HARBOR_PYTHON}={python}: no such file (run .ci/harbor-env, it prints the path)")
    probe = subprocess.run(
        [str(python), "-c", "import harbor, importlib.metadata as m; print(m.version('harbor'))"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if probe.returncode != 0:
        pytest.fail(f"{HARBOR_PYTHON}={python} does not import Harbor: {probe.stderr[-2000:]}")
    assert probe.stdout.strip() == HARBOR_VERSION, probe.stdout
    return python


def _env() -> dict[str, str]:
    return {**os.environ, "HARBOR_TELEMETRY": "0", "PYTHONDONTWRITEBYTECODE": "1"}


def harbor_read(python: Path, jobs_dir: Path) -> dict[str, Any]:
    """What Harbor's models and viewer loader make of ``jobs_dir`` (see tests/harbor_check.py)."""
    res = subprocess.run(
        [str(python), str(CHECK), str(jobs_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
        check=False,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as resp:  # noqa: S310 - our own server on 127.0.0.1
        return json.loads(resp.read())


@contextmanager
def harbor_view(python: Path, jobs_dir: Path) -> Iterator[str]:
    """``harbor view JOBS_DIR`` on a free port of 127.0.0.1; yields its base URL, stops it after."""
    port = _free_port()
    proc = subprocess.Popen(
        [str(python.parent / "harbor"), "view", str(jobs_dir), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                out = proc.stdout.read() if proc.stdout else ""
                pytest.fail(f"harbor view exited with {proc.returncode}: {out[-3000:]}")
            try:
                _get(f"{url}/api/jobs")
                break
            except OSError:
                assert time.monotonic() < deadline, "harbor view did not answer within 120 s"
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()


def check_one_trial_per_attempt(report: dict[str, Any], job: str, attempts: dict[str, str]) -> None:
    """Harbor parsed every file and its loader found ``job`` holding exactly ``attempts`` (trial -> task)."""
    bad = {k: v["errors"] for k, v in report["trajectories"].items() if v["errors"]}
    assert not bad, bad
    assert list(report["jobs"]) == [job], f"Harbor sees jobs {sorted(report['jobs'])}"
    found = report["jobs"][job]
    assert found["errors"] == [], found["errors"]
    trials = found["trials"]
    assert {t: v["errors"] for t, v in trials.items() if v["errors"]} == {}
    assert {t: v["task_name"] for t, v in trials.items()} == attempts
    assert found["n_total_trials"] == len(attempts)
    assert {f"{job}/{t}/agent/trajectory.json" for t in attempts} <= set(report["trajectories"])


def _run_name(run: Path) -> str:
    return next(
        x.split(":", 1)[1].strip()
        for x in (run / "run.yaml").read_text().splitlines()
        if x.startswith("name:")
    )


def _export(run: Path, tasks: Path, out: Path) -> Path:
    """Export ``run`` to ``out``; the folder the command's hint tells the user to open with Harbor."""
    res = run_cli(
        "evaluate", "export", str(run), "--format", "atif", "--out", str(out), "--tasks", str(tasks)
    )
    assert res.returncode == 0, res.stderr
    return Path(shlex.split(res.stdout.split("open it with: harbor view ", 1)[1])[0])


@pytest.mark.xdist_group("harbor")
def test_harbor_opens_an_export_of_two_trials_as_one_job_with_a_trial_per_attempt(
    harbor: Path, tmp_path: Path
) -> None:
    tasks = starter_copy(tmp_path)
    run = tmp_path / "runs" / "oracle"
    res = run_cli(
        "evaluate", "run", "--agent", "oracle", "--trials", "2", "--tasks", str(tasks), "--out", str(run),
        "--no-score", "--progress", "none", "--all-statuses",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    jobs = tmp_path / "atif"
    opened = _export(run, tasks, jobs / "oracle")
    assert opened == jobs  # the hint names the folder Harbor lists jobs in, not the job itself
    ids = sorted(r.id for r in TaskSet.open(tasks).refs())
    attempts = {f"{t}{s}": t for t in ids for s in ("", ".trial2")}

    report = harbor_read(harbor, jobs)
    job = _run_name(run)
    assert job == "oracle"
    check_one_trial_per_attempt(report, job, attempts)
    # the link where earlier exports wrote the trajectory is the same document
    for trial in attempts:
        link = report["trajectories"][f"oracle/{trial}/trajectory.json"]
        assert link == report["trajectories"][f"oracle/{trial}/agent/trajectory.json"]
    trials = report["jobs"][job]["trials"]
    assert all(t["rewards"]["reward"] == 1.0 and t["reward_valid"] for t in trials.values())  # the oracle

    with harbor_view(harbor, opened) as url:
        listed = _get(f"{url}/api/jobs")
        assert [(j["name"], j["n_total_trials"]) for j in listed["items"]] == [(job, len(attempts))]
        rollouts = _get(f"{url}/api/jobs/{job}/trials")
        assert rollouts["total"] == len(attempts)
        assert Counter(t["task_name"] for t in rollouts["items"]) == Counter({t: 2 for t in ids})
        assert {t["reward"] for t in rollouts["items"]} == {1.0}
        shown = _get(f"{url}/api/jobs/{job}/trials/RCA-001.trial2/trajectory")
        on_disk = json.loads((jobs / "oracle" / "RCA-001.trial2" / "agent" / "trajectory.json").read_text())
        assert shown == on_disk

    # the layout before: one trajectory.json per task folder, no Harbor records. Harbor's loader reads
    # it as one job per task with no trial in it ("30 jobs with 0 rollouts"), and the check says so.
    before = tmp_path / "before" / "oracle"
    for trial in attempts:
        (before / trial).mkdir(parents=True)
        shutil.copy(jobs / "oracle" / trial / "agent" / "trajectory.json", before / trial / "trajectory.json")
    report = harbor_read(harbor, before)
    assert sorted(report["jobs"]) == sorted(attempts)
    assert all(j["trials"] == {} for j in report["jobs"].values())
    with pytest.raises(AssertionError):
        check_one_trial_per_attempt(report, job, attempts)


@pytest.mark.xdist_group("harness-transcripts")  # shares the CLI runs (harness_runs) with that test
@pytest.mark.parametrize("name", HARNESSES)
@needs_bwrap
def test_harbor_reads_each_cli_export_in_the_order_the_model_server_saw(
    name: str, harness_runs: HarnessRuns, harbor: Path, tmp_path: Path
) -> None:
    run = harness_runs.get(name)
    job = _run_name(run.folder)
    jobs = tmp_path / "atif"
    _export(run.folder, run.task_set, jobs / job)

    report = harbor_read(harbor, jobs)
    check_one_trial_per_attempt(report, job, {TASK: TASK})
    parsed = report["trajectories"][f"{job}/{TASK}/agent/trajectory.json"]
    steps = parsed["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    assert steps[0]["source"] == "user" and TASK in steps[0]["message"]
    agent = steps[1:]
    assert all(s["source"] == "agent" for s in agent)
    # one agent step per model response, in the server's order, each what the server played
    assert len(agent) == len(run.served), [s["tool_calls"] for s in agent]
    for step, request in zip(agent, run.served, strict=True):
        assert request.step is not None
        played = run.script.steps[request.step]
        if played.tool is None:
            assert step["message"] == played.text and step["tool_calls"] == []
            continue
        (call,) = step["tool_calls"]
        assert (bare_tool(call["function"]), call["arguments"]) == (played.tool, played.arguments)
        (result,) = step["results"]
        assert result["call"] == call["id"] and result["content"]
        if played.tool == "submit_answer":
            assert "Answer recorded: 3 line(s)." in result["content"]
        elif played.tool == "run_command":
            assert "Unknown" not in result["content"] and len(result["content"]) > 20
    stamps = [datetime.fromisoformat(s["timestamp"].replace("Z", "+00:00")) for s in steps]
    assert stamps == sorted(stamps) and len(set(stamps[1:])) > 1, stamps
    (trial,) = report["jobs"][job]["trials"].values()
    assert trial["rewards"]["reward"] == 1.0 and trial["reward_valid"], trial

    with harbor_view(harbor, jobs) as url:
        rollouts = _get(f"{url}/api/jobs/{job}/trials")
        assert [(t["name"], t["task_name"]) for t in rollouts["items"]] == [(TASK, TASK)]
        shown = _get(f"{url}/api/jobs/{job}/trials/{TASK}/trajectory")
        assert [s["step_id"] for s in shown["steps"]] == [s["step_id"] for s in steps]
