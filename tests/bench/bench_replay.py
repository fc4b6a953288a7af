"""Replay throughput, each figure beside a plain dict lookup of the same keys in the same run.

    python tests/bench/bench_replay.py [--quick]

Figures (targets from issue 3):
  in-process resolutions/s   Session.run on mixed commands (recorded, abbreviated, filtered,
                             denied, invalid, unknown device)                      target >= 50,000/s
  MCP stdio round trips/s    real mcp ClientSession -> `ctb-replay mcp` subprocess  target >= 500/s
  HTTP requests/s            32 sessions on 32 keep-alive connections -> `ctb-replay serve`
                                                                                    target >= 2,000/s
The dict column answers the same (device, command) keys from a dict of bytes: the floor cost of
"look the answer up", so the ratio shows what resolving like a device costs on top of it.
The task set is built in a temporary folder from tests/fixtures/vendor-cli (all 339 captures).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.test_replay_support import ALL_TASK, KeepAliveClient, build_vendor_task_set  # noqa: E402

KEYS: list[tuple[str, str]] = [
    ("VRP_01", "display interface brief"),
    ("VRP_01", "dis int br"),
    ("VRP_01", "dis int br | i up"),
    ("VRP_01", "display ospf peer"),
    ("VRP_01", "dis foo"),
    ("CMW_01", "dis int br"),
    ("CMW_01", "display ip interface"),
    ("IOS_01", "sh ip int br"),
    ("IOS_01", "show ip route"),
    ("IOS_01", "sh ip prot"),
    ("IOS_01", "show c"),
    ("NXOS_01", "sh int br"),
    ("NXOS_01", "show version"),
    ("JUN_01", "sh int terse"),
    ("JUN_01", "show route | match 10"),
    ("JUN_01", "sh o ne"),
    ("NO_SUCH", "show version"),
    ("JUN_02", "show version"),
]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
ENV.pop("CTBENCH_DEBUG", None)


def rate(fn: Callable[[int], None], n: int) -> tuple[float, float]:
    start = time.perf_counter()
    fn(n)
    elapsed = time.perf_counter() - start
    return n / elapsed, elapsed


def dict_lookup_rate(n: int) -> float:
    table = {key: f"output of {key}".encode() for key in KEYS}
    keys = KEYS

    def loop(count: int) -> None:
        k = len(keys)
        for i in range(count):
            table.get(keys[i % k])

    loop(1000)
    return rate(loop, n)[0]


def in_process(root: Path, n: int) -> dict[str, float]:
    from ctbench.replay.engine import ReplayEngine
    from ctbench.store import TaskSet

    engine = ReplayEngine(TaskSet.open(root), max_calls=10 * n)
    out: dict[str, float] = {}
    task = engine.task(ALL_TASK)
    dialects = [
        (task.devices[d].dialect, task.devices[d].recorded, line) for d, line in KEYS if d in task.devices
    ]

    def resolve(count: int) -> None:
        k = len(dialects)
        for i in range(count):
            d, rec, line = dialects[i % k]
            d.resolve(line, recorded=rec)

    resolve(1000)
    out["dialect.resolve (cached)"] = rate(resolve, n)[0]
    for label, traj in (
        ("Session.run", None),
        ("Session.run + trajectory file", root.parent / "bench.jsonl"),
    ):
        session = engine.open_session(ALL_TASK, trajectory_path=traj)

        def run(count: int, s: object = session) -> None:
            k = len(KEYS)
            for i in range(count):
                s.run(*KEYS[i % k])  # type: ignore[attr-defined]

        run(1000)
        out[label] = rate(run, n)[0]
        session.close()
    return out


def mcp_stdio(root: Path, n: int) -> float:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        env={"PYTHONPATH": str(REPO)},
        args=["-m", "ctbench.replay.cli", "mcp", ALL_TASK, "--tasks", str(root)],
    )
    result: list[float] = []

    async def main() -> None:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    for device, command in KEYS * 5:  # warm caches
                        await s.call_tool("run_command", {"device": device, "command": command})
                    start = time.perf_counter()
                    for i in range(n):
                        device, command = KEYS[i % len(KEYS)]
                        await s.call_tool("run_command", {"device": device, "command": command})
                    result.append(n / (time.perf_counter() - start))

    anyio.run(main)
    return result[0]


def http_api(root: Path, n: int, sessions: int = 32) -> float:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctbench.replay.cli", "serve", "--port", "0", "--tasks", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=ENV,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    per = n // sessions

    async def worker(k: int) -> None:
        for _ in range(100):
            try:
                client = await KeepAliveClient(url).__aenter__()
                break
            except OSError:
                await asyncio.sleep(0.05)
        try:
            _, body = await client.request("POST", "/sessions", {"task_id": ALL_TASK})
            run = f"/sessions/{body['session_id']}/run"
            for device, command in KEYS:  # warm up
                await client.request("POST", run, {"device": device, "command": command})
            await barrier.wait()
            for i in range(per):
                device, command = KEYS[(i + k) % len(KEYS)]
                status, _ = await client.request("POST", run, {"device": device, "command": command})
                assert status == 200
        finally:
            await client.__aexit__()

    class Barrier:
        def __init__(self, parties: int) -> None:
            self.parties, self.count, self.event = parties, 0, asyncio.Event()
            self.start = 0.0

        async def wait(self) -> None:
            self.count += 1
            if self.count == self.parties:
                self.start = time.perf_counter()
                self.event.set()
            await self.event.wait()

    barrier = Barrier(sessions)

    async def main() -> float:
        await asyncio.gather(*(worker(k) for k in range(sessions)))
        return per * sessions / (time.perf_counter() - barrier.start)

    try:
        return asyncio.run(main())
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller counts (a smoke run)")
    args = parser.parse_args()
    scale = 0.2 if args.quick else 1.0
    n_local, n_mcp, n_http = int(200_000 * scale), int(3_000 * scale), int(20_000 * scale)

    rows: list[tuple[str, float, float, float | None]] = []
    with tempfile.TemporaryDirectory(prefix="ctb-bench-") as tmp:
        root = build_vendor_task_set(Path(tmp) / "tasks")
        print(f"task set: {root} ({len(KEYS)} distinct keys, cycled); cpus: {os.cpu_count()}")
        local = in_process(root, n_local)
        dict_rate = dict_lookup_rate(n_local)
        for label, value in local.items():
            rows.append((f"in-process {label}", value, dict_rate, 50_000 if label == "Session.run" else None))
        rows.append(
            ("MCP stdio round trips (real client)", mcp_stdio(root, n_mcp), dict_lookup_rate(n_mcp), 500)
        )
        rows.append(
            ("HTTP requests, 32 concurrent sessions", http_api(root, n_http), dict_lookup_rate(n_http), 2_000)
        )

    print(f"\n{'measure':<44} {'ops/s':>12} {'dict lookup/s':>14} {'ratio':>9} {'target':>9}  ok")
    for label, value, base, target in rows:
        verdict = "" if target is None else ("yes" if value >= target else "NO")
        tgt = f"{target:,.0f}" if target else "-"
        print(f"{label:<44} {value:>12,.0f} {base:>14,.0f} {base / value:>8,.0f}x {tgt:>9}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
