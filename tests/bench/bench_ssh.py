"""SSH command round trips beside HTTP `run` calls, on the same task and commands in one run.

    python tests/bench/bench_ssh.py [--quick]

Figures (target from issue 28: SSH >= 0.5x HTTP):
  SSH round trips/s    one asyncssh client with a pty -> `ctb-replay ssh`: a command line and its
                       Enter written, read until the device prompt comes back (what netmiko and
                       scrapli wait for), one login per device, sequential
  HTTP run calls/s     one keep-alive httpx client -> `ctb-replay serve`: POST /sessions/ID/run,
                       sequential, the same (device, command) pairs
Both servers run the bundled task PATH-011 from tasks/ as subprocesses.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import asyncssh
import httpx

REPO = Path(__file__).resolve().parents[2]
TASK = "PATH-011"
COMMANDS: list[tuple[str, str, str]] = [
    # (device, prompt, command)
    ("CORE_SW_01", "<CORE_SW_01>", "dis arp all"),
    ("CORE_SW_01", "<CORE_SW_01>", "display ip routing-table 10.10.10.10"),
    ("GW_01", "GW_01#", "sh ip route"),
    ("GW_01", "GW_01#", "show ip cef 10.10.10.10"),
    ("ACC_SW_01", "<ACC_SW_01>", "dis mac-address"),
    ("PE_01", "admin@PE_01> ", "show route 10.10.10.10"),
    ("PE_01", "admin@PE_01> ", "sh ip foo"),
]
ENV = {**os.environ, "PYTHONPATH": str(REPO), "CTBENCH_SSH_PASSWORD": "bench"}
ENV.pop("CTBENCH_DEBUG", None)


def start(*args: str, state: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctbench.replay.cli", *args, "--tasks", str(REPO / "tasks"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**ENV, "XDG_STATE_HOME": state},
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


async def ssh_rate(port: int, rounds: int) -> float:
    by_device: dict[str, list[tuple[str, str]]] = {}
    for device, prompt, command in COMMANDS:
        by_device.setdefault(device, []).append((prompt, command))
    calls = 0
    elapsed = 0.0
    for device, items in by_device.items():
        async with asyncssh.connect(
            "127.0.0.1", port, username=device, password="bench", known_hosts=None, encoding=None
        ) as conn:
            proc = await conn.create_process(term_type="vt100", encoding=None)
            prompt = items[0][0].encode()
            await proc.stdout.readuntil(prompt)
            start = time.perf_counter()
            for _ in range(rounds):
                for _, command in items:
                    proc.stdin.write(command.encode() + b"\n")
                    await proc.stdout.readuntil(b"\n" + prompt)
                    calls += 1
            elapsed += time.perf_counter() - start
            proc.stdin.write(b"quit\n")
    return calls / elapsed


def http_rate(url: str, rounds: int) -> float:
    with httpx.Client(base_url=url) as client:
        sid = client.post("/sessions", json={"task_id": TASK}).json()["session_id"]
        start = time.perf_counter()
        calls = 0
        for _ in range(rounds):
            for device, _, command in COMMANDS:
                r = client.post(f"/sessions/{sid}/run", json={"device": device, "command": command})
                r.raise_for_status()
                calls += 1
        return calls / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args = parser.parse_args()
    rounds = 20 if args.quick else 200
    with tempfile.TemporaryDirectory() as state:
        ssh_proc, ssh_url = start("ssh", TASK, state=state)
        http_proc, http_url = start("serve", state=state)
        try:
            ssh = asyncio.run(ssh_rate(int(ssh_url.rsplit(":", 1)[1]), rounds))
            http = http_rate(http_url, rounds)
        finally:
            for proc in (ssh_proc, http_proc):
                proc.terminate()
                proc.wait(10)
    print(f"{'figure':<22}{'per second':>12}")
    print(f"{'SSH round trips':<22}{ssh:>12,.0f}")
    print(f"{'HTTP run calls':<22}{http:>12,.0f}")
    ratio = ssh / http
    print(f"SSH / HTTP = {ratio:.2f}x (target >= 0.5x): {'met' if ratio >= 0.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
