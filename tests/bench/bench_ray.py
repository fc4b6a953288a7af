"""Ray executor benchmark (issue 15): throughput beside the local executor, and Ray's cost per attempt.

    python tests/bench/bench_ray.py [--tasks 256] [--concurrency 32] [--overhead-tasks 100]

On a Ray cluster of a head (1 CPU) and two worker nodes (2 CPUs each) started here on 127.0.0.1 with
Ray's own ``cluster_utils``:

1. Throughput: ``--tasks`` generated tasks with an agent that sleeps 1 s, at ``--concurrency``, through
   the local executor and then through Ray in two layouts (2 hosts x 16 attempts, 4 hosts x 8), each
   shown with its hosts' start (worker processes importing ctbench) and counted from the first host up.
   Target: Ray at least 80% of the local throughput.
2. Overhead per attempt: an agent that submits at once, concurrency 1, local and Ray; the difference
   per attempt is what Ray adds (an actor call, the unit and the outcome pickled both ways).

Needs ``pip install -e '.[ray]'``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ctbench.evaluate.agents import Agent, AgentContext, AgentOptions, AgentResult  # noqa: E402
from ctbench.evaluate.ray_executor import RayExecutor  # noqa: E402
from ctbench.evaluate.runner import Runner, RunSettings  # noqa: E402
from tests.test_runner import clone_tasks  # noqa: E402


class SleepAgent(Agent):
    name = "bench-sleep"
    description = "sleeps one second, answers nothing"

    async def solve(self, ctx: AgentContext) -> AgentResult:
        await asyncio.sleep(1.0)
        return AgentResult(rounds=0)


class InstantAgent(Agent):
    name = "bench-instant"
    description = "submits a valid answer at once"

    async def solve(self, ctx: AgentContext) -> AgentResult:
        ctx.session.submit("CORE_SW_01;GigabitEthernet0/0/24;shutdown")
        return AgentResult(rounds=1)


def _run(
    tasks: Path,
    out: Path,
    agent: Agent,
    *,
    concurrency: int,
    select: str,
    ray: bool,
    cpus: float,
    per_host: int = 16,
) -> tuple[float, int, float]:
    """(execute seconds, tasks run, executor start seconds)."""
    executor = RayExecutor(cpus_per_attempt=cpus, attempts_per_host=per_host) if ray else None
    started: dict[str, float] = {}
    if executor is not None:
        real_start = executor.start

        async def timed_start(ctx):  # type: ignore[no-untyped-def]
            t = time.perf_counter()
            await real_start(ctx)
            started["s"] = time.perf_counter() - t

        executor.start = timed_start  # type: ignore[method-assign]
    runner = Runner(
        RunSettings(
            agent=agent.name,
            tasks=tasks,
            out=out,
            select=select,
            concurrency=concurrency,
            allow_unreviewed=True,
            timeout_s=120,
            executor="ray" if ray else "local",
        ),
        agent=agent,
        executor=executor,
    )
    runner.prepare()
    t0 = time.perf_counter()
    report = runner.run()
    return time.perf_counter() - t0, report.ran, started.get("s", 0.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=256)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--overhead-tasks", type=int, default=100)
    args = ap.parse_args()
    try:
        import ray
        from ray.cluster_utils import Cluster
    except ImportError:
        print("ray is not installed: pip install -e '.[ray]'")
        return 2
    work = Path(tempfile.mkdtemp(prefix="ctbench-bench-ray-"))
    # Like the tests' cluster, one that shares nothing with another Ray on the machine: its own temp
    # root (short: Ray's socket paths must fit 107 bytes), the head's dashboard agent on a free port.
    ray_root = Path(tempfile.mkdtemp(prefix="ctbray-", dir="/tmp"))
    os.environ["RAY_TMPDIR"] = str(ray_root)
    os.environ.pop("RAY_ADDRESS", None)
    t = time.perf_counter()
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "dashboard_agent_listen_port": None},
    )
    try:
        cluster.add_node(num_cpus=2)
        cluster.add_node(num_cpus=2)
        ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
        up = time.perf_counter() - t
        cpus = ray.cluster_resources()["CPU"]
        per_attempt = 0.125  # eight attempts per host fit one CPU: four hosts over the three nodes
        tasks = work / "tasks"
        clone_tasks(tasks, max(args.tasks, args.overhead_tasks))
        n = args.tasks
        sel = " ".join(f"GEN-{i:04d}" for i in range(1, n + 1))
        print(
            f"cluster: head + 2 worker nodes, {cpus:g} CPUs, up in {up:.1f} s; "
            f"{per_attempt:g} CPU per attempt; machine: {os.cpu_count()} cores"
        )

        print(f"\n1. throughput, {n} tasks, 1 s agent, concurrency {args.concurrency}")
        local_s, ran, _ = _run(
            tasks,
            work / "local",
            SleepAgent(AgentOptions()),
            concurrency=args.concurrency,
            select=sel,
            ray=False,
            cpus=per_attempt,
        )
        ideal = n / args.concurrency
        print(
            f"   local executor        {local_s:6.2f} s  {ran / local_s:6.1f} tasks/s  (ideal {ideal:.1f} s)"
        )
        for per_host in (16, 8):
            label = f"ray, {args.concurrency // per_host} hosts x {per_host}"
            ray_s, ran, start_s = _run(
                tasks,
                work / f"ray-{per_host}",
                SleepAgent(AgentOptions()),
                concurrency=args.concurrency,
                select=sel,
                ray=True,
                cpus=per_attempt,
                per_host=per_host,
            )
            ratio = (ran / ray_s) / (n / local_s)
            steady = (ran / (ray_s - start_s)) / (n / local_s)
            print(
                f"   {label:<21} {ray_s:6.2f} s  {ran / ray_s:6.1f} tasks/s  = {ratio * 100:5.1f}% of local "
                f"(target >= 80%: {'met' if ratio >= 0.8 else 'MISSED'}); first host up in {start_s:.1f} s, "
                f"after it {steady * 100:.1f}% of local"
            )

        m = args.overhead_tasks
        sel = " ".join(f"GEN-{i:04d}" for i in range(1, m + 1))
        print(f"\n2. overhead per attempt, {m} tasks, instant agent, concurrency 1")
        local_s, _, _ = _run(
            tasks,
            work / "o-local",
            InstantAgent(AgentOptions()),
            concurrency=1,
            select=sel,
            ray=False,
            cpus=per_attempt,
        )
        ray_s, _, start_s = _run(
            tasks,
            work / "o-ray",
            InstantAgent(AgentOptions()),
            concurrency=1,
            select=sel,
            ray=True,
            cpus=per_attempt,
        )
        print(f"   local executor        {local_s / m * 1000:7.2f} ms/attempt")
        print(
            f"   ray executor          {(ray_s - start_s) / m * 1000:7.2f} ms/attempt (excluding {start_s:.1f} s "
            "to place the hosts)"
        )
        print(f"   added by ray          {(ray_s - start_s - local_s) / m * 1000:7.2f} ms/attempt")
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(ray_root, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
