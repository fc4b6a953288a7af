"""What the sandbox and the ``--connect`` MCP proxy cost, each beside its baseline in the same run.

    python tests/bench/bench_sandbox.py [--quick] [--part startup,mcp]

Figures (targets from issues 12 and 14):
  start-up per attempt     the same trivial agent through run_agent_process, --sandbox none vs
                           bwrap with the host network (the default before issue 25) vs bwrap with
                           the loopback network (the default: a network namespace of its own) as
                           first landed, with the forwarder inside the sandbox (bubblewrap's
                           namespace: a runner that is not root, and every runner before), as
                           a root runner started it before the held start (forked to set the caps,
                           nsenter) and as now (a root runner makes the namespace and serves it,
                           and starts bubblewrap held: vfork), interleaved
                                                                       target: bwrap - none < 50 ms
  MCP calls/s              real mcp ClientSession on stdio: `ctb-replay mcp TASK` (direct), the
                           `--connect` proxy to a runner-mode server outside the sandbox, and the
                           same proxy started inside bwrap, in interleaved rounds (medians, the
                           ratio round by round)               target: proxy >= 1/2 of direct
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ctbench.evaluate.agents.process import Launch, run_agent_process  # noqa: E402
from ctbench.evaluate.sandbox import NoSandbox, find_bwrap, make_launcher  # noqa: E402
from ctbench.evaluate.work import SandboxSettings  # noqa: E402
from tests.test_replay_support import ALL_TASK, build_vendor_task_set  # noqa: E402

CALL = ("run_command", {"device": "VRP_01", "command": "dis int br"})


class _Log:
    def __init__(self) -> None:
        self._fh = open(os.devnull, "wb")  # noqa: SIM115

    def fileno(self) -> int:
        return self._fh.fileno()

    def line(self, text: str) -> None:
        pass


async def _one_startup(launcher: Any, argv: list[str], ws: Path) -> float:
    """Wall time of one attempt's process tree, from spawn to the last process reaped."""
    t0 = time.perf_counter()
    code = await run_agent_process(Launch(argv=argv, workspace=ws), log=_Log(), launcher=launcher)
    assert code == 0
    return time.perf_counter() - t0


def _remove_cgroup_as_landed(path: Path) -> bool:
    """The attempt cgroup's removal as first landed: a fixed 20 ms sleep while the group is busy."""
    import contextlib
    import errno
    import signal

    for _ in range(50):
        try:
            pids = [int(x) for x in (path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return False
        time.sleep(0.02)
    return False


class _ForkedStart:
    """A launcher whose starts are as before the held start (``ctbench/evaluate/agents/held.py``):
    no ``bwrap_at``/``enter``, so the runner forks to set the caps and ``nsenter`` enters the network."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def prepare(self, launch: Launch) -> Any:
        import dataclasses

        return dataclasses.replace(self._inner.prepare(launch), bwrap_at=None, enter=None)

    def close(self) -> None:
        self._inner.close()


def bench_startup(n: int, tmp: Path, replay_url: str | None, sock: Path | None) -> None:
    """Round-robin over the launchers, so a busy machine slows each of them alike."""
    from ctbench.evaluate import limits as limits_mod

    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    load_before = os.getloadavg()[0]
    launchers: list[tuple[str, Any]] = [("none", NoSandbox())]
    as_landed: set[str] = set()
    if find_bwrap():
        launchers.append(
            ("bwrap host (old default)", make_launcher(SandboxSettings(mode="bwrap", network="host")))
        )
        loopback = SandboxSettings(mode="bwrap", network="loopback")
        old = make_launcher(loopback, replay_url=replay_url, replay_socket=sock, runner_netns=False)
        old.etc_dir = None  # type: ignore[attr-defined]  # each name of /etc bound on its own
        launchers.append(("bwrap loopback, as landed", old))
        as_landed.add("bwrap loopback, as landed")
        launchers.append(
            (
                "bwrap loopback, fwd inside",
                make_launcher(loopback, replay_url=replay_url, replay_socket=sock, runner_netns=False),
            )
        )
        launchers.append(
            (
                "bwrap loopback, forked",
                _ForkedStart(make_launcher(loopback, replay_url=replay_url, replay_socket=sock)),
            )
        )
        launchers.append(
            ("bwrap loopback (default)", make_launcher(loopback, replay_url=replay_url, replay_socket=sock))
        )
    print(f"start-up per attempt ({n} attempts each, interleaved; median and p90):")
    print("  (as landed: /etc bound name by name, the attempt cgroup's removal polled every 20 ms;")
    print("   fwd inside: bubblewrap's network namespace and a forwarder in it, as a non-root runner;")
    print("   forked: as default, started as before the held start: the runner forks to cap the child,")
    print("   nsenter enters the namespace; default: a root runner makes the namespace, forwards from")
    print("   the runner and starts bubblewrap held - vfork, caps from outside)")
    real_remove = limits_mod.remove_cgroup
    for agent, argv in (
        ("/bin/true", ["/bin/true"]),
        ("python -c pass", [sys.executable, "-S", "-c", "pass"]),
    ):
        walls: dict[str, list[float]] = {name: [] for name, _ in launchers}
        for _ in range(n):
            for name, launcher in launchers:
                if name in as_landed:
                    limits_mod.remove_cgroup = _remove_cgroup_as_landed
                try:
                    walls[name].append(asyncio.run(_one_startup(launcher, argv, ws)))
                finally:
                    limits_mod.remove_cgroup = real_remove
        base = statistics.median(walls["none"]) * 1000
        for name, _ in launchers:
            med = statistics.median(walls[name]) * 1000
            p90 = sorted(walls[name])[int(len(walls[name]) * 0.9) - 1] * 1000
            extra = "" if name == "none" else f"   +{med - base:6.1f} ms over none (target < 50 ms)"
            print(f"  {agent:15s} {name:26s} {med:7.1f} ms  p90 {p90:7.1f} ms{extra}")
    load = os.getloadavg()
    print(
        f"  load average {load_before:.1f} before, {load[0]:.1f} after ({load[1]:.1f} over 5 min) on {os.cpu_count()} cores"
    )
    for _, launcher in launchers:
        launcher.close()


async def _rate(params: Any, n: int) -> float:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                for _ in range(20):
                    await s.call_tool(*CALL)
                t0 = time.perf_counter()
                for _ in range(n):
                    res = await s.call_tool(*CALL)
                    assert not res.is_error
                return n / (time.perf_counter() - t0)


SERVER = """
import sys, json
from pathlib import Path
from ctbench.replay.engine import ReplayEngine
from ctbench.replay.http_server import serve_in_thread
from ctbench.store import TaskSet
engine = ReplayEngine(TaskSet.open(sys.argv[1]))
handle = serve_in_thread(engine, runner=True, unix_socket=Path(sys.argv[2]))
grants = [handle.grant(engine.open_session(sys.argv[3])) for _ in range(int(sys.argv[4]))]
print(json.dumps({"url": handle.url, "grants": [[g.session_id, g.token] for g in grants]}), flush=True)
sys.stdin.read()
handle.stop()
"""


def bench_mcp(n: int, rounds: int, root: Path, tmp: Path) -> None:
    """The runner's server in its own process, as in a real run (the agent side is the client).

    One pass over every set-up is a round; the rounds are interleaved and each set-up's figure is
    its median, and the ratio to direct is taken round by round (each proxy against the direct run of
    its own round): a single pass moved by 0.40-0.63x on this host between runs of the same code.
    """
    import json
    import subprocess

    from mcp.client.stdio import StdioServerParameters

    env = {"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "")}
    cli = [sys.executable, "-m", "ctbench.replay.cli", "mcp"]
    sock = tmp / "replay.sock"
    proxies = 5 if find_bwrap() else 2
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(root), str(sock), ALL_TASK, str(proxies * rounds)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert server.stdout is not None
    info = json.loads(server.stdout.readline())
    grants = list(info["grants"])

    def proxy(url: str) -> tuple[list[str], dict[str, str]]:
        sid, token = grants.pop()
        return [*cli, "--connect", url, "--session", sid], {**env, "CTBENCH_REPLAY_TOKEN": token}

    def direct() -> float:
        params = StdioServerParameters(
            command=cli[0], args=[*cli[1:], ALL_TASK, "--tasks", str(root)], env=env
        )
        return asyncio.run(_rate(params, n))

    def outside(url: str) -> Callable[[], float]:
        def run() -> float:
            argv, penv = proxy(url)
            return asyncio.run(_rate(StdioServerParameters(command=argv[0], args=argv[1:], env=penv), n))

        return run

    def inside(net: str, runner_netns: bool) -> Callable[[], float]:
        def run() -> float:
            ws = tmp / "mcp-ws"
            ws.mkdir(exist_ok=True)
            launcher = make_launcher(
                SandboxSettings(mode="bwrap", network=net),  # type: ignore[arg-type]
                replay_url=info["url"],
                replay_socket=sock,
                runner_netns=runner_netns,
            )
            argv, penv = proxy(info["url"])
            prepared = launcher.prepare(
                Launch(argv=argv, workspace=ws, env={"CTBENCH_REPLAY_TOKEN": penv["CTBENCH_REPLAY_TOKEN"]})
            )
            params = StdioServerParameters(
                command=prepared.argv[0], args=prepared.argv[1:], env=prepared.env, cwd=str(prepared.cwd)
            )
            try:
                return asyncio.run(_rate(params, n))
            finally:
                if prepared.release is not None:
                    prepared.release()
                launcher.close()

        return run

    setups: list[tuple[str, Callable[[], float]]] = [
        ("direct `ctb-replay mcp TASK`", direct),
        ("--connect, outside (TCP)", outside(info["url"])),
        ("--connect, outside (Unix socket)", outside(f"unix:{sock}")),
    ]
    if find_bwrap():
        setups += [
            ("--connect, inside bwrap (host)", inside("host", True)),
            ("--connect, inside bwrap (loopback, fwd inside)", inside("loopback", False)),
            ("--connect, inside bwrap (loopback)", inside("loopback", True)),
        ]
    rates: dict[str, list[float]] = {name: [] for name, _ in setups}
    try:
        for _ in range(rounds):
            for name, run in setups:
                rates[name].append(run())
    finally:
        server.communicate("", timeout=30)
    base_name = setups[0][0]
    print(
        f"MCP stdio calls/s ({n} run_command calls each, {rounds} interleaved rounds, medians; "
        "the runner's server in its own process):"
    )
    for name, _ in setups:
        rate = statistics.median(rates[name])
        line = f"  {name:48s} {rate:8.0f}/s"
        if name != base_name:
            ratios = [r / b for r, b in zip(rates[name], rates[base_name], strict=True)]
            ratio = statistics.median(ratios)
            verdict = "met" if ratio >= 0.5 else "NOT met"
            line += (
                f"   {ratio:5.2f}x direct, round by round (target >= 0.50x: {verdict}; "
                f"rounds {', '.join(f'{x:.2f}' for x in ratios)})"
            )
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument(
        "--part",
        default="startup,mcp",
        help="comma-separated: startup (start-up per attempt), mcp (MCP calls/s); default both",
    )
    args = ap.parse_args()
    parts = {p.strip() for p in args.part.split(",") if p.strip()}
    if not parts or parts - {"startup", "mcp"}:
        ap.error(f"--part {args.part!r}: expected startup, mcp or both, comma-separated")
    n_start, n_calls, rounds = (10, 200, 2) if args.quick else (40, 1000, 5)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        root = build_vendor_task_set(tmp / "tasks")
        if "startup" in parts:
            from ctbench.replay.engine import ReplayEngine
            from ctbench.replay.http_server import serve_in_thread
            from ctbench.store import TaskSet

            engine = ReplayEngine(TaskSet.open(root))
            with serve_in_thread(engine, runner=True, unix_socket=tmp / "s.sock") as h:
                bench_startup(n_start, tmp, h.url, tmp / "s.sock")
        if "mcp" in parts:
            bench_mcp(n_calls, rounds, root, tmp)


if __name__ == "__main__":
    main()
