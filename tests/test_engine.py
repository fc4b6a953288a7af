"""The evaluation engine's seams (issue 12), each exercised the way a user or a plug-in author would.

- an agent and an executor from a *separate* package, found through the ``ctbench.agents`` and
  ``ctbench.executors`` entry points of an installed distribution (a dist-info folder on the path);
- ``--agent-arg`` validated by the agent's own Options model, recorded in run.yaml, part of the resume
  identity;
- a run through a subprocess executor (each unit pickled to a child process, the outcome pickled back)
  killed with SIGKILL and resumed: every task exactly once;
- the gate: a task edited after approval is skipped with its reason and runs with --allow-unreviewed;
- trials: pass@1, pass@k and pass^k from a scripted agent that is right on 2 of 3 trials;
- a run folder written by the code before the engine (tests/fixtures/runs-v1) scores byte-identically.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ctbench.evaluate.agents import Agent, AgentContext, AgentResult
from ctbench.evaluate.runner import Runner, RunSettings
from ctbench.evaluate.score import SCORES_FILE, score_run
from ctbench.model import Family
from ctbench.store import TaskSet
from ctbench.yamlio import load_fast
from tests.conftest import REPO, copy_starters, run_cli

FIXTURES = Path(__file__).parent / "fixtures"

PLUGIN = '''
"""A plug-in package: one agent and one executor, registered through entry points."""
from __future__ import annotations

import asyncio
import pickle
import sys

from pydantic import BaseModel, ConfigDict, Field

from ctbench.evaluate.agents import Agent, AgentResult
from ctbench.evaluate.executors import QueueExecutor


class EchoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str = Field(default="", description="what to submit")
    commands: int = Field(default=1, ge=0, description="how many commands to run first")
    sleep: float = 0.0


class EchoAgent(Agent):
    name = "echo"
    description = "runs a few commands, then submits --agent-arg answer"
    Options = EchoOptions

    async def solve(self, ctx):
        devices = ctx.session.devices()
        for _ in range(self.args.commands):
            ctx.session.run(devices[0].name, "display version")
        if self.args.sleep:
            await asyncio.sleep(self.args.sleep)
        ctx.session.submit(self.args.answer or "no idea")
        return AgentResult(rounds=self.args.commands, input_tokens=7, output_tokens=3)


CHILD = """
import asyncio, pickle, sys
from ctbench.evaluate.attempt import LocalEnv, run_attempt
from ctbench.store import TaskSet

async def main():
    unit = pickle.load(sys.stdin.buffer)
    async with LocalEnv(TaskSet.open(sys.argv[1]), unit.settings) as env:
        outcome = await run_attempt(unit, env)
    sys.stdout.buffer.write(pickle.dumps(outcome.model_copy(update={"worker": "child"})))

asyncio.run(main())
"""


class SubprocessExecutor(QueueExecutor):
    """Each unit in a fresh Python process: the unit pickled in, the outcome pickled out."""

    name = "subproc"

    def __init__(self, **options):
        super().__init__()

    async def run_unit(self, unit):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CHILD, str(self.ctx.task_set.root), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            out, err = await proc.communicate(pickle.dumps(unit))
        except BaseException:
            proc.kill()
            raise
        if proc.returncode != 0:
            raise RuntimeError(f"child exited {proc.returncode}: {err.decode()[-300:]}")
        return pickle.loads(out)
'''


@pytest.fixture
def plugin_path(tmp_path: Path) -> Path:
    """A separate, installed package: its module and its dist-info (METADATA + entry_points.txt)."""
    root = tmp_path / "site"
    (root / "ctbplug").mkdir(parents=True)
    (root / "ctbplug" / "__init__.py").write_text(PLUGIN, encoding="utf-8")
    dist = root / "ctbplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ctbplug\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent("""\
        [ctbench.agents]
        echo = ctbplug:EchoAgent

        [ctbench.executors]
        subproc = ctbplug:SubprocessExecutor
        """),
        encoding="utf-8",
    )
    return root


def _env(plugin_path: Path) -> dict[str, str]:
    return {"PYTHONPATH": f"{REPO}{os.pathsep}{plugin_path}"}


def _lines(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def test_plugin_agent_found_through_its_entry_point_and_run_end_to_end(
    plugin_path: Path, task_set: Path, tmp_path: Path
) -> None:
    listed = run_cli("evaluate", "agents", "--json", env=_env(plugin_path))
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)["agents"]}
    assert list(rows)[:5] == ["oracle", "null", "probe", "openai", "command"]
    assert rows["echo"]["package"] == "ctbplug" and rows["echo"]["available"]
    assert rows["echo"]["options"]["commands"] == {
        "type": "int",
        "default": 1,
        "required": False,
        "help": "how many commands to run first",
    }
    # The same list without the plug-in on the path: it is the entry point that finds it.
    assert "echo" not in run_cli("evaluate", "agents").stdout

    out = tmp_path / "run"
    proc = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "echo",
        "--agent-arg",
        "commands=2",
        "--agent-arg",
        "answer=CORE_SW_01;GE0/0/1;static route missing",
        "--tasks",
        str(task_set),
        "--out",
        str(out),
        "--progress",
        "none",
        "--select",
        "RCA-001",
        env=_env(plugin_path),
    )
    assert proc.returncode == 0, proc.stderr
    (line,) = _lines(out)
    assert line["status"] == "answered" and line["commands"] == 2 and line["answer_source"] == "submit"
    assert line["content_hash"].startswith("sha256:") and line["trial"] == 1
    assert load_fast(out / "run.yaml")["settings"]["agent"]["args"]["commands"] == 2
    # --agent-arg is part of the resume identity
    again = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "echo",
        "--agent-arg",
        "commands=3",
        "--tasks",
        str(task_set),
        "--out",
        str(out),
        "--progress",
        "none",
        "--select",
        "RCA-001",
        env=_env(plugin_path),
    )
    assert again.returncode != 0 and "option args: {" in again.stderr, again.stderr
    assert "'commands': 2" in again.stderr and "'commands': 3" in again.stderr


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (
            "colour=red",
            "--agent-arg colour: agent 'echo' has no option 'colour' (its options: answer, commands, sleep)",
        ),
        ("commands=many", "--agent-arg commands=many: Input should be a valid integer"),
        ("commands=-1", "--agent-arg commands=-1: Input should be greater than or equal to 0"),
        ("commands", "--agent-arg 'commands': expected KEY=VALUE"),
    ],
)
def test_an_agent_arg_the_agent_rejects_is_one_clear_line(
    plugin_path: Path, task_set: Path, tmp_path: Path, arg: str, message: str
) -> None:
    proc = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "echo",
        "--agent-arg",
        arg,
        "--tasks",
        str(task_set),
        "--out",
        str(tmp_path / "run"),
        env=_env(plugin_path),
    )
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [f"ctb-eval: {message}"] or message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_builtin_agents_registered_by_entry_points_match_the_fallback_table() -> None:
    from importlib.metadata import entry_points

    from ctbench.evaluate.agents import BUILTIN, GROUP

    found = {ep.name: ep.value for ep in entry_points(group=GROUP)}
    assert {k: found.get(k) for k in BUILTIN} == BUILTIN


def test_subprocess_executor_runs_a_whole_run_and_resumes_after_sigkill(
    plugin_path: Path, full_task_set: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    argv = [
        sys.executable,
        "-m",
        "ctbench.evaluate.cli",
        "run",
        "--allow-unreviewed",
        "--agent",
        "echo",
        "--agent-arg",
        "sleep=0.4",
        "--executor",
        "subproc",
        "--concurrency",
        "2",
        "--tasks",
        str(full_task_set),
        "--out",
        str(out),
        "--progress",
        "plain",
        "--no-score",
    ]
    env = {**os.environ, **_env(plugin_path)}
    first = subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_bytes().splitlines()) >= 4:
            break
        time.sleep(0.05)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    killed_at = len(results.read_bytes().splitlines())
    assert 4 <= killed_at < 30
    config = (out / "run.yaml").read_text(encoding="utf-8")
    assert "executor: subproc" in config

    resumed = subprocess.run(
        [*argv[:4], "--resume", str(out), "--progress", "plain", "--no-score"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    lines = _lines(out)
    ids = [x["task_id"] for x in lines]
    assert (
        sorted(ids) == sorted(r.id for r in TaskSet.open(full_task_set).refs())
        and len(ids) == len(set(ids)) == 34
    )
    assert all(
        x["status"] == "unparsable" and x["worker"] == "child" and x["error_kind"] is None for x in lines
    )
    for x in lines:  # each trajectory is whole: the two commands the agent ran
        traj = (out / x["trajectory"]).read_text(encoding="utf-8").splitlines()
        assert len(traj) == x["commands"] == 1
    assert "resumes:" in (out / "run.yaml").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- the gate


def _approve(task_dir: Path, task_id: str, family: str) -> None:
    """Write the review record an approved round leaves: every criterion agreed on today's content."""
    from datetime import UTC, datetime

    from ctbench.approval.hashes import CRITERION_PARTS, content_hashes, disk_reader
    from ctbench.approval.records import CriterionReview, ReviewRecord, record_rel, render_record
    from ctbench.approval.states import Verdict

    now = content_hashes(disk_reader(task_dir))
    when = datetime(2026, 11, 30, tzinfo=UTC)
    record = ReviewRecord(
        task=task_id,
        family=family,
        round=1,
        authors=["alice"],
        reviewer="bob",
        opened=when,
        finished=when,
        outcome="approved",
        criteria={
            c: CriterionReview(verdict=Verdict.AGREE, basis=now.subset(parts))
            for c, parts in CRITERION_PARTS.items()
        },
    )
    path = task_dir / record_rel(1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_record(record), encoding="utf-8")


def test_gate_runs_approved_tasks_and_skips_an_edited_one_with_its_reason(
    task_set: Path, tmp_path: Path
) -> None:
    _approve(task_set / "rca" / "RCA-001", "RCA-001", "rca")
    _approve(task_set / "rca" / "RCA-002", "RCA-002", "rca")
    out = tmp_path / "gated"
    proc = run_cli(
        "evaluate",
        "run",
        "--agent",
        "oracle",
        "--tasks",
        str(task_set),
        "--out",
        str(out),
        "--progress",
        "plain",
        "--no-score",
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(x["task_id"] for x in _lines(out)) == ["RCA-001", "RCA-002"]
    assert "skipped 1 task(s) never reviewed" in proc.stderr and "PATH-001" in proc.stderr

    task_file = task_set / "rca" / "RCA-002" / "task.yaml"
    task_file.write_text(
        task_file.read_text(encoding="utf-8")
        .replace("title: ", "title: Edited: ", 1)
        .replace("title: Edited: ", "title: Edited - ", 1),
        encoding="utf-8",
    )
    out2 = tmp_path / "edited"
    proc = run_cli(
        "evaluate",
        "run",
        "--agent",
        "oracle",
        "--tasks",
        str(task_set),
        "--out",
        str(out2),
        "--progress",
        "plain",
        "--no-score",
    )
    assert proc.returncode == 0, proc.stderr
    assert [x["task_id"] for x in _lines(out2)] == ["RCA-001"]
    assert "RCA-002" in proc.stderr and "edited after approval: statement changed" in proc.stderr
    config = (out2 / "run.yaml").read_text(encoding="utf-8")
    assert "reason: 'edited after approval: statement changed since the review approved it'" in config

    out3 = tmp_path / "allowed"
    proc = run_cli(
        "evaluate",
        "run",
        "--agent",
        "oracle",
        "--allow-unreviewed",
        "--tasks",
        str(task_set),
        "--out",
        str(out3),
        "--progress",
        "none",
        "--no-score",
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(x["task_id"] for x in _lines(out3)) == ["PATH-001", "RCA-001", "RCA-002"]
    config = (out3 / "run.yaml").read_text(encoding="utf-8")
    assert "allow_unreviewed: true" in config and "- RCA-002" in config.split("unreviewed:")[-1]
    hashes = {x["task_id"]: x["content_hash"] for x in _lines(out3)}
    assert hashes["RCA-002"] != {x["task_id"]: x["content_hash"] for x in _lines(out)}["RCA-002"]

    # compare warns that the two runs scored RCA-002 with different content
    cmp = run_cli(
        "evaluate",
        "compare",
        str(out),
        str(out3),
        "--common-tasks",
        "--tasks",
        str(task_set),
        "--resamples",
        "200",
    )
    assert cmp.returncode == 0, cmp.stderr
    assert "ran 1 task(s) with different content under the same id (RCA-002)" in cmp.stdout + cmp.stderr


def test_a_task_file_that_does_not_parse_is_skipped_not_fatal(task_set: Path, tmp_path: Path) -> None:
    (task_set / "rca" / "RCA-002" / "task.yaml").write_text(
        "id: RCA-002\nstatus: [approved\n", encoding="utf-8"
    )
    proc = run_cli(
        "evaluate",
        "run",
        "--agent",
        "oracle",
        "--allow-unreviewed",
        "--tasks",
        str(task_set),
        "--out",
        str(tmp_path / "r"),
        "--progress",
        "plain",
        "--no-score",
    )
    assert proc.returncode == 0, proc.stderr
    assert "RCA-002" in proc.stderr and "task.yaml" in proc.stderr
    assert sorted(x["task_id"] for x in _lines(tmp_path / "r")) == ["PATH-001", "RCA-001"]


def test_nothing_left_after_the_gate_exits_non_zero_with_the_reasons(task_set: Path, tmp_path: Path) -> None:
    proc = run_cli(
        "evaluate", "run", "--agent", "oracle", "--tasks", str(task_set), "--out", str(tmp_path / "r")
    )
    assert proc.returncode != 0
    assert "the gate kept out all 3 selected task(s)" in proc.stderr and "--allow-unreviewed" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2 and "Traceback" not in proc.stderr


def test_a_task_that_fails_validation_is_skipped_and_with_allow_invalid_ends_as_a_task_error(
    task_set: Path, tmp_path: Path
) -> None:
    task_file = task_set / "rca" / "RCA-002" / "task.yaml"
    text = task_file.read_text(encoding="utf-8")
    task_file.write_text(text.replace("network: campus-lab", "network: no-such-network"), encoding="utf-8")
    proc = run_cli(
        "evaluate",
        "run",
        "--agent",
        "oracle",
        "--allow-unreviewed",
        "--tasks",
        str(task_set),
        "--out",
        str(tmp_path / "a"),
        "--progress",
        "plain",
        "--no-score",
    )
    assert proc.returncode == 0, proc.stderr
    assert "RCA-002" in proc.stderr and "fails validation" in proc.stderr
    assert sorted(x["task_id"] for x in _lines(tmp_path / "a")) == ["PATH-001", "RCA-001"]
    proc = run_cli(
        "evaluate",
        "run",
        "--agent",
        "oracle",
        "--allow-unreviewed",
        "--allow-invalid",
        "--tasks",
        str(task_set),
        "--out",
        str(tmp_path / "b"),
        "--progress",
        "plain",
        "--no-score",
    )
    assert proc.returncode == 1  # a task error remains
    bad = next(x for x in _lines(tmp_path / "b") if x["task_id"] == "RCA-002")
    assert bad["status"] == "error" and bad["error_kind"] == "task" and bad["attempts"] == 1, bad


# --------------------------------------------------------------------------- trials


class TwoOfThree(Agent):
    """Right on trials 1 and 2, wrong on trial 3."""

    name = "two-of-three"
    description = "gold on trials 1-2, a wrong answer on trial 3"
    needs_hidden = True

    async def solve(self, ctx: AgentContext) -> AgentResult:
        assert ctx.hidden is not None
        if ctx.trial < 3:
            ctx.session.submit("\n".join(ctx.hidden.gold_answer_lines(Family(ctx.family))))
        else:
            ctx.session.submit("CORE_SW_01;GigabitEthernet0/0/1;routing loop")
        return AgentResult(rounds=1, input_tokens=0, output_tokens=0)


def test_trials_give_pass_at_1_pass_at_k_and_pass_hat_k(task_set: Path, tmp_path: Path) -> None:
    settings = RunSettings(
        allow_unreviewed=True,
        agent="two-of-three",
        tasks=task_set,
        out=tmp_path / "t",
        select="RCA-001",
        trials=3,
    )
    report = Runner(settings, agent=TwoOfThree(settings.agent)).run()
    assert report.complete and report.counts()["answered"] + report.counts()["unparsable"] == 3
    lines = _lines(report.folder)
    assert sorted(x["trial"] for x in lines) == [1, 2, 3]
    assert sorted(p.name for p in (report.folder / "trajectories").iterdir()) == [
        "RCA-001.jsonl",
        "RCA-001.trial2.jsonl",
        "RCA-001.trial3.jsonl",
    ]
    scores = score_run(report.folder, TaskSet.open(task_set), n_resamples=200)
    block = scores["pass_k"]["families"]["rca"]
    # fractions, as every figure of scores.json (the renderers scale to percent once)
    assert block["pass@1"]["value"] == pytest.approx(2 / 3)
    assert block["pass@3"]["value"] == 1.0 and block["pass^3"]["value"] == 0.0
    assert block["pass@2"]["value"] == 1.0 and block["pass^2"]["value"] == pytest.approx(1 / 3)
    assert scores["summary"]["rca"]["accuracy"] == pytest.approx(2 / 3)  # pass@1: the mean over trials
    # over tasks: one task, three task-trials
    assert scores["trials"] == 3 and scores["n_tasks"] == 1 and scores["n_task_trials"] == 3
    # a resume after all trials are done runs nothing
    again = Runner(settings, agent=TwoOfThree(settings.agent)).run()
    assert again.ran == 0 and len(_lines(report.folder)) == 3


def test_pass_estimators_against_hand_values() -> None:
    from ctbench.scoring.trials import pass_at_k, pass_hat_k

    assert (
        pass_at_k(3, 2, 1) == pytest.approx(2 / 3)
        and pass_at_k(3, 2, 3) == 1.0
        and pass_hat_k(3, 2, 3) == 0.0
    )
    assert pass_at_k(5, 1, 2) == pytest.approx(1 - 6 / 10) and pass_hat_k(5, 4, 2) == pytest.approx(6 / 10)
    assert pass_at_k(4, 0, 4) == 0.0 and pass_hat_k(4, 4, 4) == 1.0


@pytest.mark.parametrize("agent", ["oracle", "probe"])
def test_a_run_folder_written_before_the_engine_scores_byte_identically(agent: str, tmp_path: Path) -> None:
    """Run folders from commit 2070abb (one trial, no hashes) stay readable and score the same."""
    import shutil

    ts = copy_starters(tmp_path / "tasks")
    run_dir = tmp_path / agent
    shutil.copytree(FIXTURES / "runs-v1" / agent, run_dir)
    before = (run_dir / SCORES_FILE).read_text(encoding="utf-8")
    (run_dir / SCORES_FILE).unlink()
    score_run(run_dir, TaskSet.open(ts))
    after = json.loads((run_dir / SCORES_FILE).read_text(encoding="utf-8"))
    # scores.json now also records the task-set commit it was scored against (issue 18); all else is equal
    for key in ("task_set_commit", "task_set_dirty"):
        after["scoring"].pop(key, None)
    # and what did not finish (issue 27): nothing, in these complete runs
    unfinished = after.pop("unfinished")
    assert [unfinished[k] for k in ("infrastructure_errors", "timeouts", "missing_results")] == [0, 0, 0]
    # and the third task family's blocks (issue 27), empty in these runs of rca and path tasks only
    assert _drop_family(after, "topology") > 0 and '"topology":' not in before
    assert json.dumps(after, indent=2, ensure_ascii=False) + "\n" == before


def _drop_family(doc: object, family: str) -> int:
    """Remove every ``family`` block of a scores document in place; how many there were. Each must be
    empty: a run with no task of the family says so, it scores nothing there."""
    found = 0
    if isinstance(doc, dict):
        for key in [k for k in doc if k == family or k == f"n_{family}"]:
            block = doc.pop(key)
            found += 1
            text = json.dumps(block)
            assert block in (0, {}, []) or any(z in text for z in ('"n_tasks": 0', '"n": 0', "null")), text[
                :200
            ]
        for value in doc.values():
            found += _drop_family(value, family)
    elif isinstance(doc, list):
        for value in doc:
            found += _drop_family(value, family)
    return found


class FlakyExecutor:
    """An executor written against the protocol alone: the first attempt of every unit fails as the
    infrastructure would (the runner must retry it), later attempts run for real in this process."""

    name = "flaky"

    def __init__(self) -> None:
        from ctbench.evaluate.executors import LocalExecutor

        self.inner = LocalExecutor()
        self.submitted: list[tuple[str, int, int]] = []

    async def start(self, ctx):  # type: ignore[no-untyped-def]
        await self.inner.start(ctx)

    async def submit(self, unit):  # type: ignore[no-untyped-def]
        from ctbench.evaluate.executors import UnitStarted
        from ctbench.evaluate.work import AttemptOutcome

        self.submitted.append((unit.task_id, unit.trial, unit.attempt))
        if unit.attempt == 1:
            self.inner._queue.put_nowait(UnitStarted(unit))
            self.inner._queue.put_nowait(AttemptOutcome(unit=unit, kind="infrastructure", error="node lost"))
        else:
            await self.inner.submit(unit)

    def events(self):  # type: ignore[no-untyped-def]
        return self.inner.events()

    async def cancel(self) -> None:
        await self.inner.cancel()

    async def close(self) -> None:
        await self.inner.close()


def test_retries_and_progress_work_through_any_executor(
    task_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ctbench.evaluate.runner as runner_module
    from ctbench.evaluate.executors import Executor
    from ctbench.evaluate.progress import CallbackDisplay

    monkeypatch.setattr(runner_module, "RETRY_BACKOFF_S", 0.01)
    events: list[tuple[str, str | None]] = []
    executor = FlakyExecutor()
    assert isinstance(executor, Executor)
    settings = RunSettings(allow_unreviewed=True, agent="oracle", tasks=task_set, out=tmp_path / "r")
    report = Runner(
        settings, CallbackDisplay(lambda e: events.append((e.kind, e.task_id))), executor=executor
    ).run()
    assert report.complete
    lines = _lines(report.folder)
    assert sorted(x["task_id"] for x in lines) == ["PATH-001", "RCA-001", "RCA-002"]
    assert all(
        x["status"] == "answered" and x["attempts"] == 2 and x["retries"][0]["error"] == "node lost"
        for x in lines
    )
    assert sorted(executor.submitted) == sorted(
        (t, 1, a) for t in ("PATH-001", "RCA-001", "RCA-002") for a in (1, 2)
    )
    kinds = [k for k, _ in events]
    assert (
        kinds.count("task_started") == 3
        and kinds.count("task_retry") == 3
        and kinds.count("task_finished") == 3
    )
    # the failed attempt's (empty) trajectory was set aside, the retry's is the one the line names
    for x in lines:
        assert (report.folder / x["trajectory"]).read_text(encoding="utf-8").count("\n") == x["commands"] > 0


def test_a_second_runs_sweep_leaves_a_live_runs_fresh_workspace_and_removes_a_dead_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs on one machine (or two pytest workers): a workspace made but not yet any process's cwd
    belongs to its live runner; only the folders of a runner that is gone are swept."""
    import tempfile

    from ctbench.evaluate.agents.process import start_time
    from ctbench.evaluate.attempt import LOG_PREFIX, WORKSPACE_PREFIX, sweep_stale_workspaces

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead_start = start_time(dead.pid)
    dead.wait()
    try:

        def folder(prefix: str, pid: int, start: int | None) -> Path:
            path = tmp_path / f"{prefix}RCA-001-o{pid}.{start or 0}-abc"
            path.mkdir()
            (path / "note.txt").write_text("x")
            return path

        kept = [
            folder(WORKSPACE_PREFIX, live.pid, start_time(live.pid)),
            folder(LOG_PREFIX, live.pid, start_time(live.pid)),
        ]
        swept = [folder(WORKSPACE_PREFIX, dead.pid, dead_start), folder(LOG_PREFIX, dead.pid, dead_start)]
        untagged = tmp_path / f"{WORKSPACE_PREFIX}old-run"  # an older ctbench's, no process in it
        untagged.mkdir()
        assert sweep_stale_workspaces() == 3
        assert all(p.is_dir() for p in kept) and not any(p.exists() for p in [*swept, untagged])
    finally:
        live.kill()
        live.wait()


def test_agent_options_are_named_as_the_user_types_them(task_set: Path, tmp_path: Path) -> None:
    """The listing names a Literal's values, not typing's ``Optional``; a refused value names the
    option, not pydantic's path through the union's branches."""
    listed = run_cli("evaluate", "agents", "--json")
    rows = {r["name"]: r for r in json.loads(listed.stdout)["agents"]}
    assert rows["openai"]["options"]["reasoning_effort"]["type"] == "minimal | low | medium | high"
    assert rows["openai"]["options"]["temperature"]["type"] == "float"
    proc = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "openai",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--tasks",
        str(task_set),
        "--out",
        str(tmp_path / "run"),
        "--agent-arg",
        "reasoning_effort=ultra",
        env={"OPENAI_API_KEY": "x"},
    )
    assert proc.returncode != 0 and proc.stderr.strip().count("\n") == 0, proc.stderr
    assert proc.stderr.startswith(
        "ctb-eval: --agent-arg reasoning_effort=ultra: Input should be 'minimal'"
    ), proc.stderr
