"""Harness benchmark: wall time per task of each real agent CLI through ctbench, beside the same CLI
run by hand on the same scripted task, in one run (issue 13). Prints figures.

    python tests/bench/bench_harness.py [--repeats 3] [--task RCA-001] [--harness codex ...]

"By hand" is what a researcher would do without ctbench: the same CLI, the same config files and
flags (written by the adapter, so only the orchestration differs), its MCP server ``ctb`` being the
stand-alone ``ctb-replay mcp TASK`` on the task set, started by the CLI itself. "Through ctbench" is a
whole ``Runner`` run (``--trials N``, concurrency 1): work units, the replay session served over HTTP,
the MCP proxy, event streaming into the log, result lines. Both talk to the same scripted model
server on 127.0.0.1, so model time is the same and the difference is ctbench's overhead.
Target: under 10%. Harnesses that are not installed are listed as skipped.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ctbench.evaluate.agents import AgentOptions, agent_class  # noqa: E402
from ctbench.evaluate.agents.harness_base import HarnessAgent  # noqa: E402
from ctbench.evaluate.runner import Runner, RunSettings  # noqa: E402
from ctbench.scoring.prompt import prompt_for  # noqa: E402
from ctbench.store import TaskSet  # noqa: E402
from tests.conftest import copy_starters  # noqa: E402
from tests.support.model_server import ScriptedModelServer, scripts_for  # noqa: E402

HARNESSES = ("codex", "claude-code", "hermes")


def by_hand(name: str, task_set: Path, task_id: str, url: str, scratch: Path) -> float:
    """One run of the CLI as a researcher would start it (config from the adapter, direct MCP server)."""
    cls = agent_class(name)
    agent = cls(AgentOptions(model="scripted-model", base_url=url))
    assert isinstance(agent, HarnessAgent)
    ts = TaskSet.open(task_set)
    workdir = Path(tempfile.mkdtemp(prefix="bench-hand-", dir=scratch))
    home, workspace = workdir / "home", workdir / "workspace"
    home.mkdir()
    workspace.mkdir()
    ctx = SimpleNamespace(
        options=agent.options,
        prompt=prompt_for(ts, task_id),
        workdir=workdir,
        agent_args=agent.args,
        task_id=task_id,
    )
    mcp = [str(Path(sys.executable).with_name("ctb-replay")), "mcp", task_id, "--tasks", str(task_set)]
    launch = agent.launch(ctx, home, workspace, mcp)  # type: ignore[arg-type]
    started = time.perf_counter()
    done = subprocess.run(
        launch.argv,
        env=launch.full_env(),
        cwd=launch.cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=300,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{name} by hand exited with status {done.returncode}")
    shutil.rmtree(workdir, ignore_errors=True)
    return elapsed


def through_ctbench(
    name: str, task_set: Path, task_id: str, url: str, out: Path, repeats: int
) -> tuple[float, list[float]]:
    """Per-task wall time of one whole run with ``--trials repeats``, and each attempt's own latency."""
    import json

    settings = RunSettings(
        agent=name,
        model="scripted-model",
        base_url=url,
        tasks=task_set,
        out=out,
        select=task_id,
        trials=repeats,
        concurrency=1,
        retries=0,
        timeout_s=300,
        allow_unreviewed=True,
    )
    started = time.perf_counter()
    report = Runner(settings).run()
    elapsed = time.perf_counter() - started
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    if [x["status"] for x in lines] != ["answered"] * repeats:
        raise SystemExit(f"{name} through ctbench: {report.summary_line()}")
    return elapsed / repeats, [float(x["latency_s"]) for x in lines]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--task", default="RCA-001")
    p.add_argument("--harness", action="append", choices=HARNESSES)
    args = p.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-bench")
    scratch = Path(tempfile.mkdtemp(prefix="ctbench-bench-harness-"))
    try:
        task_set = copy_starters(scratch / "tasks")
        print(
            f"harness benchmark: task {args.task}, {args.repeats} run(s) each way, scripted model on 127.0.0.1"
        )
        print(f"{'harness':<12} {'version':<9} {'by hand s':>10} {'ctbench s':>10} {'overhead':>9}")
        with ScriptedModelServer(
            scripts_for(task_set, [args.task]), max_requests=10_000, max_seconds=3600
        ) as model:
            for name in args.harness or HARNESSES:
                found = agent_class(name).availability()
                if not found.available:
                    print(f"{name:<12} skipped: {found.detail}")
                    continue
                by_hand(name, task_set, args.task, model.url, scratch)  # warm the CLI's files into the cache
                hand = [by_hand(name, task_set, args.task, model.url, scratch) for _ in range(args.repeats)]
                per_task, attempts = through_ctbench(
                    name, task_set, args.task, model.url, scratch / name, args.repeats
                )
                h = statistics.median(hand)
                print(
                    f"{name:<12} {found.version or '?':<9} {h:>10.2f} {per_task:>10.2f} "
                    f"{100 * (per_task - h) / h:>8.1f}%   (target < 10%; by hand: "
                    f"{', '.join(f'{x:.2f}' for x in hand)}; ctbench attempts: "
                    f"{', '.join(f'{x:.2f}' for x in attempts)}, whole run / {args.repeats})"
                )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
