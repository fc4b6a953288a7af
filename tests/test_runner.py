"""``ctb-eval run``: the runner end to end on real task folders, run folders and subprocesses.

Covers the oracle's perfect scores through the real metrics, resume (skip finished, refuse changed
settings unless --force, survive SIGKILL at any moment), infrastructure retries, selection and the
progress protocol.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctbench.answer import Hop
from ctbench.errors import CtbError
from ctbench.evaluate.agents import (
    Agent,
    AgentContext,
    AgentError,
    AgentOptions,
    AgentResult,
    InfrastructureError,
)
from ctbench.evaluate.progress import CallbackDisplay, PlainDisplay, ProgressEvent, RichDisplay
from ctbench.evaluate.runfolder import RunFolder
from ctbench.evaluate.runner import Runner, RunSettings
from ctbench.replay.trajectory import read_trajectory
from ctbench.scoring.metrics import TaskRecord, score_task
from ctbench.scoring.parse import ParsedAnswer
from ctbench.store import TaskSet
from tests.conftest import REPO, copy_starters, needs_bwrap, run_cli

# --------------------------------------------------------------------------- helpers


def clone_tasks(dst: Path, n: int, *, template: str = "RCA-001", prefix: str = "GEN") -> list[str]:
    """The bundled starter tasks plus ``n`` clones of one task (real folders, new ids)."""
    if not dst.exists():
        copy_starters(dst)
    src = next(p for p in (dst / "rca" / template, dst / "path" / template) if p.is_dir())
    ids = []
    for i in range(1, n + 1):
        new_id = f"{prefix}-{i:04d}"
        folder = src.parent / new_id
        shutil.copytree(src, folder)
        for name in ("task.yaml", "hidden.yaml"):
            f = folder / name
            f.write_text(
                f.read_text(encoding="utf-8").replace(f"id: {template}", f"id: {new_id}"), encoding="utf-8"
            )
        ids.append(new_id)
    return ids


def results(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def agent_script(tmp_path: Path, name: str, body: str) -> str:
    """A Python agent program on disk; returns an --agent-cmd for it."""
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return f"{sys.executable} {path}"


SLOW_AGENT = """\
import os, sys, time
sys.stdin.read()
time.sleep(float(os.environ.get("SLOW_AGENT_DELAY", "0.3")))
print("<answer>CORE_SW_01;GigabitEthernet0/0/24;shutdown</answer>")
"""


class Recorder:
    def __init__(self) -> None:
        self.events: list[ProgressEvent] = []

    def __call__(self, event: ProgressEvent) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]


# --------------------------------------------------------------------------- oracle


def test_oracle_run_from_the_cli_scores_100_on_every_metric(task_set: Path, tmp_path: Path) -> None:
    proc = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "oracle",
        "--tasks",
        str(task_set),
        "--progress",
        "plain",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    run_dir = next((tmp_path / "runs").iterdir())
    assert run_dir.name.startswith("oracle-") and run_dir.name.endswith("Z")
    assert "3/3 task(s) complete: 3 answered" in proc.stderr
    assert "Scorecard" in proc.stdout and "100.00" in proc.stdout  # the run ends with the scorecard
    lines = results(run_dir)
    ts = TaskSet.open(task_set)
    assert sorted(r["task_id"] for r in lines) == sorted(r.id for r in ts.refs())
    for line in lines:
        hidden = ts.load_hidden(line["task_id"])
        assert line["status"] == "answered" and line["error_kind"] is None and line["attempts"] == 1
        trajectory = read_trajectory(run_dir / line["trajectory"])
        assert len(trajectory) == line["commands"] == len(hidden.golden_actions)
        assert all(r.outcome.value == "recorded" for r in trajectory)
        gold = hidden.rca_entries() if line["family"] == "rca" else hidden.gold_paths()
        record = TaskRecord(
            task_id=line["task_id"],
            family=line["family"],
            gold=gold,
            prediction=ParsedAnswer.from_json(line["answer"]),
            golden_actions=hidden.golden_keys(),
            executed_actions=tuple((r.device, r.canonical) for r in trajectory),
        )
        scores = score_task(record)
        assert scores.exact and scores.loc == 1.0
        assert (scores.ident if line["family"] == "rca" else scores.rest) == 1.0
        assert scores.evidence.covered == scores.evidence.golden == len(hidden.golden_actions)
        assert (
            (run_dir / line["log"]).read_text(encoding="utf-8").startswith(f"=== {line['task_id']} attempt 1")
        )
    config = RunFolder(run_dir).load_config()
    assert config.agent == "oracle" and config.finished is not None and config.task_set.commit == "none"
    assert config.tasks == [r.id for r in ts.refs()]


def test_null_and_probe_answer_nothing(task_set: Path, tmp_path: Path) -> None:
    for agent in ("null", "probe"):
        report = Runner(
            RunSettings(allow_unreviewed=True, agent=agent, tasks=task_set, out=tmp_path / agent)
        ).run()
        lines = results(report.folder)
        assert {r["status"] for r in lines} == {"unparsable"}
        assert all(r["answer"]["status"] == "empty" and r["error"] == "no answer" for r in lines)
        commands = [r["commands"] for r in lines]
        assert commands == [0, 0, 0] if agent == "null" else all(c > 10 for c in commands)


# --------------------------------------------------------------------------- resume


def test_resume_skips_finished_tasks_and_refuses_a_changed_model(task_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "null",
        "--model",
        "m1",
        "--tasks",
        str(task_set),
        "--out",
        str(out),
        "--select",
        "RCA-001",
        "--progress",
        "plain",
        "--no-score",
    )
    assert first.returncode == 0, first.stderr
    assert [r["task_id"] for r in results(out)] == ["RCA-001"]

    # Same settings, same folder: nothing to do, nothing duplicated.
    again = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "null",
        "--model",
        "m1",
        "--tasks",
        str(task_set),
        "--out",
        str(out),
        "--select",
        "RCA-001",
        "--progress",
        "plain",
        "--no-score",
    )
    assert again.returncode == 0, again.stderr
    assert "1 already done, 0 to run" in again.stderr
    assert len(results(out)) == 1

    changed = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "null",
        "--model",
        "m2",
        "--tasks",
        str(task_set),
        "--out",
        str(out),
        "--select",
        "RCA-001",
        "--no-score",
    )
    assert changed.returncode == 1
    assert "was run with different settings" in changed.stderr and "model: 'm1' -> 'm2'" in changed.stderr
    assert "Traceback" not in changed.stderr and len(results(out)) == 1

    forced = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "null",
        "--model",
        "m2",
        "--tasks",
        str(task_set),
        "--out",
        str(out),
        "--select",
        "RCA-001",
        "--force",
        "--progress",
        "plain",
        "--no-score",
    )
    assert forced.returncode == 0, forced.stderr
    config = RunFolder(out).load_config()
    assert config.model == "m2" and config.resumes[-1].forced
    assert any("model" in d for d in config.resumes[-1].differences)

    # --resume takes everything from run.yaml; widening the selection is a difference too.
    resumed = run_cli("evaluate", "run", "--resume", str(out), "--progress", "plain", "--no-score")
    assert resumed.returncode == 0, resumed.stderr
    wider = run_cli("evaluate", "run", "--resume", str(out), "--select", "rca", "--no-score")
    assert wider.returncode == 1 and "option select" in wider.stderr


def test_resume_refused_when_the_task_set_commit_changes(task_set: Path, tmp_path: Path) -> None:
    import git

    repo = git.Repo.init(tmp_path)
    repo.git.add("tasks")
    repo.index.commit("tasks")
    out = tmp_path / "runs" / "r1"  # inside the repository, outside the task set
    report = Runner(
        RunSettings(allow_unreviewed=True, agent="null", tasks=task_set, out=out, select="RCA-001")
    ).run()
    assert report.config.task_set.commit == repo.head.commit.hexsha and not report.config.task_set.dirty
    # The untracked run folder does not make the task set dirty: resuming is allowed.
    Runner(RunSettings(allow_unreviewed=True, agent="null", tasks=task_set, out=out, select="RCA-001")).run()
    # An edit to a task does, and a new commit changes the commit.
    statement = task_set / "rca" / "RCA-001" / "task.yaml"
    statement.write_text(statement.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    with pytest.raises(CtbError, match="task set uncommitted changes: False -> True"):
        Runner(
            RunSettings(allow_unreviewed=True, agent="null", tasks=task_set, out=out, select="RCA-001")
        ).prepare()
    repo.git.add("tasks")
    repo.index.commit("edit")
    with pytest.raises(CtbError, match="task-set commit"):
        Runner(
            RunSettings(allow_unreviewed=True, agent="null", tasks=task_set, out=out, select="RCA-001")
        ).prepare()
    # The refusals left the lock free and the results untouched.
    assert len(results(out)) == 1
    Runner(
        RunSettings(
            allow_unreviewed=True, agent="null", tasks=task_set, out=out, select="RCA-001", force=True
        )
    ).run()


@needs_bwrap
def test_sigkill_at_any_moment_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    ids = clone_tasks(tasks, 10)
    all_ids = sorted([*ids, "PATH-001", "RCA-001", "RCA-002"])
    out = tmp_path / "run"
    argv, env = slow_run(tmp_path, tasks, out, "0.25", "--concurrency", "3")
    # Kill the runner at different moments: before any result, after some, while others run.
    for kill_after_lines in (0, 2, 5):
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            done = (
                (out / "results.jsonl").read_bytes().count(b"\n") if (out / "results.jsonl").exists() else 0
            )
            if (done >= kill_after_lines and (out / "run.yaml").exists()) or proc.poll() is not None:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    before = results(out) if (out / "results.jsonl").exists() else []
    assert len(before) < len(all_ids), "the runner finished before it was killed; the test proves nothing"
    assert len({r["task_id"] for r in before}) == len(before)
    # A crash in the middle of a write leaves a torn last line: resume must drop it, not choke on it.
    with (out / "results.jsonl").open("ab") as fh:
        fh.write(b'{"task_id": "GEN-00')
    final = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr
    assert "dropped a torn last line" in final.stderr
    after = results(out)
    assert sorted(r["task_id"] for r in after) == all_ids  # nothing lost, nothing twice
    assert after[: len(before)] == before  # finished results were kept as they were, not redone
    assert all(r["status"] == "answered" or r["family"] == "path" for r in after)
    assert RunFolder(out).load_config().finished is not None


def slow_run(
    tmp_path: Path, tasks: Path, out: Path, delay: str, *extra: str
) -> tuple[list[str], dict[str, str]]:
    """``ctb-eval run`` of the slow command agent (``delay`` seconds an attempt) as a fresh process:
    its argv and environment."""
    argv = [
        *(sys.executable, "-m", "ctbench.evaluate.cli", "run", "--allow-unreviewed", "--agent", "command"),
        *("--agent-cmd", agent_script(tmp_path, "slow_agent.py", SLOW_AGENT)),
        *("--tasks", str(tasks), "--out", str(out), "--progress", "plain", "--no-score", *extra),
    ]
    return argv, {**os.environ, "PYTHONPATH": str(REPO), "SLOW_AGENT_DELAY": delay}


# --------------------------------------------------------------------------- retries and outcomes


class FlakyBackendAgent(Agent):
    """A plug-in adapter whose 'backend' fails on the first attempt of every task."""

    name = "flaky"
    description = "infrastructure error on attempt 1"

    async def solve(self, ctx: AgentContext) -> AgentResult:
        ctx.session.run("CORE_SW_01", "display interface brief")
        if ctx.attempt == 1:
            raise InfrastructureError("backend unavailable (attempt 1)")
        ctx.session.submit("CORE_SW_01;GigabitEthernet0/0/24;shutdown")
        return AgentResult(rounds=1, input_tokens=5, output_tokens=7)


class BrokenAgent(Agent):
    name = "broken"
    description = "always fails"

    def __init__(self, options: AgentOptions) -> None:
        super().__init__(options)
        self.calls = 0

    async def solve(self, ctx: AgentContext) -> AgentResult:
        self.calls += 1
        raise AgentError("the agent fell over")


def test_infrastructure_errors_are_retried_and_recorded_agent_errors_are_not(
    task_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ctbench.evaluate.runner.RETRY_BACKOFF_S", 0.0)
    rec = Recorder()
    settings = RunSettings(
        allow_unreviewed=True,
        agent="flaky",
        tasks=task_set,
        out=tmp_path / "flaky",
        select="RCA-001",
        retries=2,
    )
    report = Runner(settings, CallbackDisplay(rec), agent=FlakyBackendAgent(AgentOptions())).run()
    (line,) = results(report.folder)
    assert line["status"] == "answered" and line["attempts"] == 2
    assert [r["attempt"] for r in line["retries"]] == [1]
    assert "backend unavailable" in line["retries"][0]["error"]
    assert line["commands"] == 1  # the trajectory is the final attempt's; the first is kept aside
    assert (report.folder / "trajectories" / "RCA-001.jsonl.prev1").exists()
    assert "task_retry" in rec.kinds()
    log = (report.folder / "logs" / "RCA-001.log").read_text(encoding="utf-8")
    assert "attempt 1" in log and "attempt 2" in log

    broken = BrokenAgent(AgentOptions())
    settings = RunSettings(
        allow_unreviewed=True,
        agent="broken",
        tasks=task_set,
        out=tmp_path / "broken",
        select="RCA-001",
        retries=2,
    )
    report = Runner(settings, agent=broken).run()
    (line,) = results(report.folder)
    assert (line["status"], line["error_kind"], line["attempts"]) == ("error", "agent", 1)
    assert broken.calls == 1 and line["error"] == "the agent fell over"

    always = RunSettings(
        allow_unreviewed=True,
        agent="flaky",
        tasks=task_set,
        out=tmp_path / "never",
        select="RCA-001",
        retries=0,
    )
    report = Runner(always, agent=FlakyBackendAgent(AgentOptions())).run()
    (line,) = results(report.folder)
    assert (line["status"], line["error_kind"], line["attempts"]) == ("error", "infrastructure", 1)


class SubmitsAndSaysAgent(Agent):
    """A plug-in adapter that submits one answer and returns another as its final message."""

    name = "submits-and-says"
    description = "submit one answer, return another"

    async def solve(self, ctx: AgentContext) -> AgentResult:
        ctx.session.submit("CORE_SW_01;GigabitEthernet0/0/24;shutdown")
        return AgentResult(answer_text="nothing to see here", answer_source="final_message", rounds=1)


def test_a_session_submission_is_the_answer_for_every_adapter(task_set: Path, tmp_path: Path) -> None:
    """The runner, not each adapter, decides that a submission wins over whatever the agent returned."""
    settings = RunSettings(
        allow_unreviewed=True,
        agent="submits-and-says",
        tasks=task_set,
        out=tmp_path / "run",
        select="RCA-001",
    )
    report = Runner(settings, agent=SubmitsAndSaysAgent(AgentOptions())).run()
    (line,) = results(report.folder)
    assert (line["status"], line["answer_source"]) == ("answered", "submit")
    assert line["answer_text"] == "CORE_SW_01;GigabitEthernet0/0/24;shutdown"


# --------------------------------------------------------------------------- selection, progress, CLI


def test_progress_plain_lines_and_callback_events(task_set: Path, tmp_path: Path) -> None:
    import io

    stream = io.StringIO()
    Runner(
        RunSettings(allow_unreviewed=True, agent="oracle", tasks=task_set, out=tmp_path / "a"),
        PlainDisplay(stream),
    ).run()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("run: 3 task(s)")
    finished = [ln for ln in lines if ln.startswith("[")]
    assert [ln.split("]")[0] for ln in finished] == ["[1/3", "[2/3", "[3/3"]
    assert all("running" in ln and "errors 0" in ln and "elapsed" in ln and "eta" in ln for ln in finished)
    assert "\x1b" not in stream.getvalue()  # no terminal codes in CI logs

    rich_out = io.StringIO()
    Runner(
        RunSettings(allow_unreviewed=True, agent="oracle", tasks=task_set, out=tmp_path / "c"),
        RichDisplay(rich_out),
    ).run()
    text = rich_out.getvalue()
    assert "RCA-001" in text and "answered" in text and "3/3" in text

    # The Textual app runs the runner in a worker thread and gets events through a callback.
    import threading

    rec = Recorder()
    runner = Runner(
        RunSettings(allow_unreviewed=True, agent="oracle", tasks=task_set, out=tmp_path / "b", concurrency=2),
        CallbackDisplay(rec),
    )
    worker = threading.Thread(target=runner.run)
    worker.start()
    worker.join(60)
    assert not worker.is_alive()
    kinds = rec.kinds()
    assert kinds[0] == "start" and kinds[-1] == "finish"
    assert kinds.count("task_started") == kinds.count("task_finished") == 3
    last = rec.events[-1].snapshot
    assert (last.done, last.total, last.errors, last.running) == (3, 3, 0, ())


def test_cli_errors_are_messages_not_tracebacks(task_set: Path, tmp_path: Path) -> None:
    cases = [
        (["run", "--tasks", str(task_set)], "choose an agent"),
        (["run", "--allow-unreviewed", "--agent", "openai", "--tasks", str(task_set)], "needs --model"),
        (["run", "--allow-unreviewed", "--agent", "command", "--tasks", str(task_set)], "needs --agent-cmd"),
        (
            [
                "run",
                "--allow-unreviewed",
                "--agent",
                "command",
                "--agent-cmd",
                "no-such-program-xyz",
                "--tasks",
                str(task_set),
            ],
            "not found on PATH",
        ),
        (
            ["run", "--allow-unreviewed", "--agent", "null", "--tasks", str(task_set), "--select", "NOPE-*"],
            "no task to run",
        ),
        (
            ["run", "--allow-unreviewed", "--agent", "null", "--tasks", str(tmp_path / "missing")],
            "no such task set folder",
        ),
        (
            [
                "run",
                "--allow-unreviewed",
                "--agent",
                "null",
                "--tasks",
                str(task_set),
                "--out",
                str(task_set),
            ],
            "not a run folder",
        ),
        (["run", "--resume", str(tmp_path)], "not a run folder"),
    ]
    for args, message in cases:
        proc = run_cli("evaluate", *args, cwd=tmp_path, env={"OPENAI_API_KEY": "", "CTBENCH_API_KEY": ""})
        assert proc.returncode != 0, args
        assert message in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_oracle_scores_100_on_every_metric_through_the_scorer(task_set: Path, tmp_path: Path) -> None:
    proc = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "oracle",
        "--tasks",
        str(task_set),
        "--out",
        str(tmp_path / "r"),
        "--json",
        "--progress",
        "none",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["complete"] and data["counts"]["answered"] == 3 and data["ran"] == 3 and data["note"] is None
    summary = data["scores"]["summary"]
    assert (tmp_path / "r" / "scores.json").is_file()
    rca, path = summary["rca"], summary["path"]
    for value in (
        rca["accuracy"],
        rca["loc_iou"],
        rca["id_iou"],
        rca["triplet_iou"],
        rca["evidence"]["coverage"],
        rca["evidence"]["f1"],
        path["accuracy"],
        path["loc_iou"],
        path["rest_iou"],
        path["sequence_iou"],
        path["micro_edge_iou"],
        path["evidence"]["coverage"],
        path["evidence"]["f1"],
    ):
        assert value == 1.0
    for level in ("id_exact", "id_hierarchical", "loc_exact", "loc_hierarchical"):
        assert rca["entry_match"][level] == {"macro": 1.0, "micro": 1.0}


def test_path_answers_are_parsed_against_network_node_names(task_set: Path, tmp_path: Path) -> None:
    report = Runner(
        RunSettings(allow_unreviewed=True, agent="oracle", tasks=task_set, out=tmp_path / "p", select="path")
    ).run()
    (line,) = results(report.folder)
    parsed = ParsedAnswer.from_json(line["answer"])
    assert (
        parsed.paths and parsed.paths[0][0] == Hop("PC_01", "eth0") and parsed.paths[0][-1] == Hop("SRV_01")
    )


GATED_AGENT = """\
import os, sys, time
from pathlib import Path
gate = Path(sys.argv[1])
(gate.parent / f"pid-{os.environ['CTBENCH_TASK_ID']}").write_text(str(os.getpid()))
sys.stdin.read()
while not gate.exists():
    time.sleep(0.05)
print("<answer>CORE_SW_01;GigabitEthernet0/0/24;shutdown</answer>")
"""


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_ends_every_agent_and_resume_finishes(task_set: Path, tmp_path: Path, sig: int) -> None:
    gate = tmp_path / "gate" / "open"
    gate.parent.mkdir()
    cmd = agent_script(tmp_path, "gated.py", GATED_AGENT) + f" {gate}"
    out = tmp_path / "run"
    # unsandboxed: the agents report their pids in, and wait on, files of this test
    argv = [
        sys.executable,
        "-m",
        "ctbench.evaluate.cli",
        "run",
        "--allow-unreviewed",
        "--agent",
        "command",
        "--agent-cmd",
        cmd,
        "--tasks",
        str(task_set),
        "--out",
        str(out),
        "--progress",
        "plain",
        "--no-score",
        "--sandbox",
        "none",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONFAULTHANDLER": "1"}
    # Ctrl-C as a terminal sends it: a shell running this suite in the background (CI scripts often do)
    # starts it with SIGINT ignored, and an ignored signal stays ignored across exec unless reset.
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint
    )
    deadline = time.monotonic() + 30
    # each file holds its pid once written (created first, then written: a signal between the two
    # would leave it empty)
    while len([f for f in gate.parent.glob("pid-*") if f.read_text().strip()]) < 3:
        assert time.monotonic() < deadline and proc.poll() is None, "agents did not start"
        time.sleep(0.02)
    proc.send_signal(sig)
    try:
        _, stderr = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        # A hang: SIGABRT makes faulthandler print every thread's stack, so the failure says where.
        proc.send_signal(signal.SIGABRT)
        _, stderr = proc.communicate(timeout=30)
        gate.touch()  # let any agent still waiting finish instead of lingering
        pytest.fail(f"the runner did not stop within 30 s of signal {sig}; its stderr:\n{stderr}")
    assert proc.returncode == 130, stderr
    assert "interrupted: 0 of 3 task(s) done" in stderr and f"--out {out}" in stderr
    assert "Traceback" not in stderr
    for pid_file in gate.parent.glob("pid-*"):
        with pytest.raises(ProcessLookupError):
            os.killpg(int(pid_file.read_text()), 0)
    assert not (out / "results.jsonl").exists() or results(out) == []
    gate.touch()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(r["task_id"] for r in results(out)) == ["PATH-001", "RCA-001", "RCA-002"]
