"""Runner benchmarks: per-task overhead, concurrency speed-up, MCP proxy rate (issues 5, 12). Prints figures.

    python tests/bench/bench_runner.py [--tasks 1000] [--sleep-tasks 64] [--mcp-calls 500]

1. Overhead: an agent that answers instantly (no replay call, a valid answer submitted) on 1,000
   generated tasks, concurrency 1 - everything measured is the runner's own work per task through
   the executor protocol: work unit, replay session, in-memory log, outcome, the trajectory file
   written whole, answer parsing, the fsynced result line, progress. Target: under 20 ms per task.
   Printed beside it, in the same run: the bare ``run_attempt`` on the same units (no executor, no
   run folder), so the executor and the single writer's share is the difference.
2. Speed-up: an agent that sleeps 1 s, at concurrency 1 and 32, both as an in-process agent and as a
   real ``command`` agent (``sleep 1`` in its own process group). Target: near 32x.
3. The ``ctb-replay mcp --connect`` proxy (what every agent CLI starts) against the direct
   ``ctb-replay mcp TASK``, real MCP client on stdio, in the same run (tests/bench/bench_sandbox.py's
   measurement, there also from inside the sandbox). Target: at least half the direct rate.
4. The run gate (``apply_gate``: validation and approval) over the 1,000 generated tasks: as it was
   (every task validated, the copied-gold comparison included), the first time with the validation
   cache (every task validated, outcomes stored), then reused by content hash, twice each with the
   cache's folder walk as first landed and as now, interleaved. Target: under 2 s reused (11 s
   before the cache, issue 25).

``--part overhead,speedup,mcp,gate`` runs only those parts (default: all).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ctbench.evaluate.agents import Agent, AgentContext, AgentOptions, AgentResult  # noqa: E402
from ctbench.evaluate.executors import ExecutionContext, LocalExecutor  # noqa: E402
from ctbench.evaluate.runner import Runner, RunSettings  # noqa: E402
from tests.test_runner import clone_tasks  # noqa: E402

_T = TypeVar("_T")


class InstantAgent(Agent):
    name = "instant"
    description = "submits a valid answer at once"

    async def solve(self, ctx: AgentContext) -> AgentResult:
        ctx.session.submit("CORE_SW_01;GigabitEthernet0/0/24;shutdown")
        return AgentResult(rounds=1, input_tokens=0, output_tokens=0)


class SleepAgent(Agent):
    name = "sleep"
    description = "sleeps one second, answers nothing"

    async def solve(self, ctx: AgentContext) -> AgentResult:
        await asyncio.sleep(1.0)
        return AgentResult(rounds=0)


def _run(
    tasks: Path,
    out: Path,
    *,
    agent: Agent | None,
    name: str,
    concurrency: int,
    select: str,
    agent_cmd: str | None = None,
) -> tuple[float, float, int]:
    """(prepare seconds, execute seconds, tasks run)."""
    runner = Runner(
        RunSettings(
            allow_unreviewed=True,
            agent=name,
            tasks=tasks,
            out=out,
            select=select,
            concurrency=concurrency,
            agent_cmd=agent_cmd,
            timeout_s=60,
        ),
        agent=agent,
    )
    t0 = time.perf_counter()
    runner.prepare()
    t1 = time.perf_counter()
    report = runner.run()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, report.ran


def _bare_attempts(tasks: Path, n: int, *, loaded: bool) -> float:
    """ms per unit for run_attempt alone on the overhead run's units (same agent, same tasks).

    ``loaded``: the environment gets the task specs the runner parsed to select them (as the runner's
    executor does now), so the bare attempt does the same work as one inside the runner.
    """
    from ctbench.evaluate.attempt import LocalEnv, run_attempt
    from ctbench.store import TaskSet

    settings = RunSettings(
        allow_unreviewed=True,
        agent="instant",
        tasks=tasks,
        select=_overhead_select(n),
        out=Path(tempfile.mkdtemp(prefix="ctbench-bench-bare-")),
    )
    runner = Runner(settings, agent=InstantAgent(AgentOptions()))
    runner.prepare()
    units = runner.units(runner.keys())
    specs = {t.id: (t.ref, t.spec) for t in runner.plan} if loaded else None
    runner.folder.close()  # type: ignore[union-attr]

    async def go() -> float:
        async with LocalEnv(
            TaskSet.open(tasks), units[0].settings, agent=InstantAgent(AgentOptions()), loaded=specs
        ) as env:
            t0 = time.perf_counter()
            for u in units:
                await run_attempt(u, env)
            return (time.perf_counter() - t0) / len(units) * 1000

    try:
        return asyncio.run(go())
    finally:
        shutil.rmtree(settings.out, ignore_errors=True)  # type: ignore[arg-type]


class _LandedExecutor(LocalExecutor):
    """The local executor as landed: its warm-up and every attempt parse task.yaml again."""

    async def start(self, ctx: ExecutionContext) -> None:
        await super().start(dataclasses.replace(ctx, loaded={}))


class _LandedRunner(Runner):
    """The runner as landed: finished attempts written on the attempts' own thread pool."""

    async def _in_record_pool(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.to_thread(fn, *args)


def _overhead_select(n_tasks: int) -> str:
    return f"GEN-{'?' * 4}" if n_tasks >= 1000 else "GEN-*"


def bench_gate(tasks: Path, cache: Path) -> None:
    """Part 4: the gate as it was, with a cold cache and with a warm one, in one run."""
    import os

    from ctbench.approval import gate as gate_mod
    from ctbench.evaluate.runner import Selection, select_tasks
    from ctbench.store import TaskSet
    from ctbench.validation import cache as cache_mod
    from ctbench.validation.validator import Validator

    os.environ["CTBENCH_CACHE_DIR"] = str(cache)
    shutil.rmtree(cache, ignore_errors=True)
    ts = TaskSet.open(tasks)
    pairs = [(c.ref, c.spec) for c in select_tasks(ts, Selection.parse(None), [])]

    def timed(label: str) -> float:
        fresh = TaskSet.open(tasks)
        t0 = time.perf_counter()
        result = gate_mod.apply_gate(fresh, pairs, allow_unreviewed=True)
        took = time.perf_counter() - t0
        print(
            f"   {label:<34}{took:6.2f} s  ({len(result.admitted)} admitted, {len(result.skipped)} skipped)"
        )
        return took

    def old_validation(task_set, refs, specs=None, *, reuse=True):  # type: ignore[no-untyped-def]
        report = Validator(task_set).run(refs)  # the copied-gold warnings too, every task every time
        return {f.task: f.render() for f in report.errors if f.task}

    def walk_as_landed(h, folder, label):  # type: ignore[no-untyped-def]
        """The cache's folder walk as first landed: ``os.walk``, ``relpath``, an ``lstat`` per file."""
        import stat

        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, folder)
            for name in sorted(dirnames):
                path = os.path.join(dirpath, name)
                if os.path.islink(path):
                    h.update(f"{label}|L|{rel_dir}/{name}|{os.readlink(path)}\n".encode())
                else:
                    h.update(f"{label}|D|{rel_dir}/{name}\n".encode())
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode):
                    with open(path, "rb") as fh:
                        h.update(f"{label}|F|{rel_dir}/{name}|{st.st_size}\n".encode())
                        while chunk := fh.read(1 << 20):
                            h.update(chunk)

    print(f"\n4. the run gate over {len(pairs)} tasks (--allow-unreviewed: validation and approval state)")
    real = gate_mod.validation_problems
    gate_mod.validation_problems = old_validation
    try:
        timed("baseline: no cache, as it was")
    finally:
        gate_mod.validation_problems = real
    timed("cache cold (validate, store)")
    walk = cache_mod._hash_tree
    cache_mod._hash_tree = walk_as_landed  # its keys differ from the new walk's: stored once first
    try:
        timed("cache cold, walk as landed")
    finally:
        cache_mod._hash_tree = walk
    for _ in range(2):  # interleaved, so the machine's load falls on both alike
        cache_mod._hash_tree = walk_as_landed
        try:
            timed("warm, folder walk as landed")
        finally:
            cache_mod._hash_tree = walk
        warm = timed("warm, scandir walk (now)")
    print(
        f"   target < 2 s reused: {'met' if warm < 2 else 'MISSED'}   (issue 25: 11 s before the cache; "
        f"2.32 s as landed, at load 8-17)   load now {os.getloadavg()[0]:.1f}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=1000, help="generated tasks for the overhead run")
    ap.add_argument("--sleep-tasks", type=int, default=64, help="tasks for the concurrency-32 run")
    ap.add_argument("--mcp-calls", type=int, default=500, help="run_command calls per MCP transport")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each path in parts 1 and 2 (medians)")
    ap.add_argument(
        "--part", default="overhead,speedup,mcp,gate", help="which parts to run (comma-separated)"
    )
    args = ap.parse_args()
    parts = set(args.part.split(","))
    work = Path(tempfile.mkdtemp(prefix="ctbench-bench-runner-"))
    try:
        tasks = work / "tasks"
        clone_tasks(tasks, max(args.tasks, args.sleep_tasks))
        print(f"task set: {tasks} ({args.tasks} generated RCA tasks + the 3 bundled)")
        if "gate" in parts:
            bench_gate(tasks, work / "cache")
        if "overhead" in parts:
            _overhead(tasks, work, args.tasks, args.repeat)
        if "speedup" in parts:
            _speedup(tasks, work, args.sleep_tasks)
        if "mcp" in parts:
            # the figure issue 12 asks for beside these: the agent side of every external agent's calls
            from tests.bench.bench_sandbox import bench_mcp
            from tests.test_replay_support import build_vendor_task_set

            print(
                f"\n3. the --connect MCP proxy beside the direct `ctb-replay mcp`, {args.mcp_calls} calls each"
            )
            bench_mcp(args.mcp_calls, build_vendor_task_set(work / "vendor-tasks"), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _overhead(tasks: Path, work: Path, n_tasks: int, repeat: int) -> None:
    """Part 1: the runner as landed and as now, and the bare attempt both ways, interleaved."""
    import os

    rows: dict[str, list[float]] = {}
    preps: list[float] = []
    n = 0
    for rep in range(repeat):  # round-robin, so the machine's load falls on every path alike
        for label, runner_cls, executor in (
            ("runner as landed", _LandedRunner, _LandedExecutor),
            ("runner now", Runner, LocalExecutor),
        ):
            runner = runner_cls(
                RunSettings(
                    allow_unreviewed=True,
                    agent="instant",
                    tasks=tasks,
                    out=work / f"overhead-{rep}-{runner_cls.__name__}",
                    select=_overhead_select(n_tasks),
                    concurrency=1,
                    timeout_s=60,
                ),
                agent=InstantAgent(AgentOptions()),
                executor=executor(),
            )
            t0 = time.perf_counter()
            runner.prepare()
            t1 = time.perf_counter()
            n = runner.run().ran
            rows.setdefault(label, []).append((time.perf_counter() - t1) / n * 1000)
            preps.append(t1 - t0)
        for label, loaded in (("bare attempt as landed", False), ("bare attempt now", True)):
            rows.setdefault(label, []).append(_bare_attempts(tasks, n, loaded=loaded))
    med = {k: statistics.median(v) for k, v in rows.items()}
    prep = statistics.median(preps)
    print(f"\n1. runner overhead, instant agent, concurrency 1 ({n} tasks, {repeat} runs each, interleaved)")
    print(f"   selection + folder setup  {prep:.2f} s ({prep / n * 1000:.2f} ms/task, median)")
    for label, values in rows.items():
        print(
            f"   {label:<26}{med[label]:6.2f} ms/task median   (runs: {', '.join(f'{v:.2f}' for v in values)})"
        )
    for when, runner_key, bare_key in (
        ("as landed", "runner as landed", "bare attempt as landed"),
        ("now", "runner now", "bare attempt now"),
    ):
        ratio = med[runner_key] / med[bare_key]
        verdict = "" if when != "now" else f"   target <= 2x: {'met' if ratio <= 2 else 'MISSED'}"
        print(
            f"   runner / bare, {when:<10}{ratio:5.2f}x  (executor + writer add "
            f"{med[runner_key] - med[bare_key]:.2f} ms/task){verdict}"
        )
    print(
        f"   (issue 25: 8.97 ms vs 2.0 ms = 4.5x; 5.87x last session at load 12)   target < 20 ms/task: "
        f"{'met' if med['runner now'] < 20 else 'MISSED'}   load now {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores"
    )


def _speedup(tasks: Path, work: Path, k: int) -> None:
    first = "GEN-0001,GEN-000[2-8]"
    for label, agent, name, cmd in (
        ("in-process agent", SleepAgent(AgentOptions()), "sleep", None),
        ("command agent 'sleep 1'", None, "command", "sleep 1"),
    ):
        _, t1, n1 = _run(
            tasks, work / f"c1-{name}", agent=agent, name=name, concurrency=1, select=first, agent_cmd=cmd
        )
        sel = ",".join(f"GEN-{i:04d}" for i in range(1, k + 1))
        _, t32, n32 = _run(
            tasks, work / f"c32-{name}", agent=agent, name=name, concurrency=32, select=sel, agent_cmd=cmd
        )
        per1, per32 = t1 / n1, t32 / n32
        print(f"\n2. speed-up, {label}, 1 s per task")
        print(f"   concurrency 1             {n1} tasks in {t1:.2f} s = {per1:.3f} s/task")
        print(f"   concurrency 32            {n32} tasks in {t32:.2f} s = {per32:.3f} s/task")
        speed = per1 / per32
        print(f"   speed-up                  {speed:.1f}x   (ideal 32x)")
        if name == "command":
            print(
                f"   target >= 28x: {'met' if speed >= 28 else 'MISSED'} (issue 25 measured 23.7x before, "
                "on an idle machine)"
            )


if __name__ == "__main__":
    sys.exit(main())
