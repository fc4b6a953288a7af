"""Ray nodes started with the docs' own commands (``ray start ... --block``), for the tests that run
docs/ray.md's recipes: a node's process group is the test's to end (``ray stop`` would end every Ray
on the machine), and every node gets what two clusters on one machine need to stay apart - a free
dashboard-agent port (Ray's default, 52365, is fixed), no usage stats, and an environment with the
test's own ``HOME`` and ``RAY_TMPDIR`` and none of the suite's or the user's Ray settings."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

RAY = str(Path(sys.executable).with_name("ray"))
CTB_EVAL = [sys.executable, "-m", "ctbench.evaluate.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_env(home: Path, temp: Path) -> dict[str, str]:
    """This process's environment without any Ray setting the suite or the user made."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("RAY_") and k not in ("CTB_RECIPE_KEY", "PYTEST_XDIST_WORKER")
    }
    return {**env, "HOME": str(home), "RAY_TMPDIR": str(temp), "PYTHONPATH": str(REPO)}


def node_flags() -> list[str]:
    return ["--dashboard-agent-listen-port", str(free_port()), "--disable-usage-stats"]


def new_token(env: dict[str, str]) -> str:
    """``ray get-auth-token --generate``, as on the head machine: the token it prints (and keeps in
    ``$HOME/.ray/auth_token``)."""
    made = subprocess.run(
        [RAY, "get-auth-token", "--generate"], env=env, capture_output=True, text=True, timeout=120
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert len(token) >= 32
    return token


def start(argv: list[str], env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``ray start ... --block`` in a process group of its own; its output once Ray says it started."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if "Ray runtime started" in text:
            return proc, text
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    stop([proc])
    pytest.fail(f"{' '.join(argv[:6])} did not start:\n{log.read_text(errors='replace')[-3000:]}")


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in procs:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
        time.sleep(3)
    for p in procs:
        p.wait(timeout=30)


def results(out: Path) -> list[dict[str, object]]:
    path = out / "results.jsonl"
    if not path.is_file():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
