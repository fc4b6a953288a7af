"""Attempts are alone (issue 25, item 3): under the default sandbox each attempt has its own network.

Every case runs the adversary of ``tests/adversary/neighbour.py`` through the real ``ctb-eval run``
in a subprocess, with the default network policy (no ``--sandbox-network`` given), and again with
the shared network of before (``--sandbox-network host``), where the same attack must work - so each
assertion of the first kind is shown able to fail:

- two trials of one task, and two tasks, run at the same time and try to pass each other a note over
  TCP on 127.0.0.1 and over an abstract Unix socket;
- (in ``tests/test_ray_adversary.py``) an attempt on the Ray executor tries to reach the cluster's
  GCS and raylet and lists every listening port it can see.
"""

from __future__ import annotations

import json
import shlex
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, copy_starters, needs_bwrap, run_cli

pytestmark = needs_bwrap

NEIGHBOUR = REPO / "tests" / "adversary" / "neighbour.py"
LISTEN_S = 8.0
"""How long an attempt that holds a channel listens for a note (both start within this)."""

POLICIES = [
    pytest.param(None, id="default"),
    pytest.param("host", id="protection-off-shared-network"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(tasks: Path, out: Path, agent: list[str], *args: str, network: str | None) -> list[dict[str, Any]]:
    argv = [
        "run",
        "--allow-unreviewed",
        "--agent",
        "command",
        "--agent-cmd",
        shlex.join([sys.executable, str(NEIGHBOUR), *agent]),
        "--tasks",
        str(tasks),
        "--out",
        str(out),
        "--progress",
        "none",
        "--no-score",
        "--retries",
        "0",
        *args,
    ]
    if network is not None:
        argv += ["--sandbox-network", network]
    r = run_cli("evaluate", *argv, env={"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    run_yaml = (out / "run.yaml").read_text(encoding="utf-8")
    assert "mode: bwrap" in run_yaml
    assert f"network: {network or 'loopback'}" in run_yaml
    return lines


def _found(line: dict[str, Any]) -> dict[str, Any]:
    assert line["answer_text"], line
    found: dict[str, Any] = json.loads(line["answer_text"])
    return found


def check_notes(lines: list[dict[str, Any]], network: str | None) -> None:
    """Two attempts' reports of the note game: none heard under the default, both passed under host."""
    assert len(lines) == 2
    a, b = (_found(line) for line in lines)
    heard = a["heard"] + b["heard"]
    if network is None:
        # they did run at the same time: each bound both channels itself, and nobody heard a thing
        assert max(a["start"], b["start"]) < min(a["end"], b["end"]), (a, b)
        assert heard == [] and a["sent"] == [] and b["sent"] == [], (a, b)
    else:  # one network for all: whoever came second found the first and passed its note on
        assert sorted(a["sent"] + b["sent"]) == ["abstract", "tcp"], (a, b)
        assert len(heard) == 2 and all(h.startswith("note from RCA-00") for h in heard), (a, b)


PAIRS = {
    "two-trials-of-one-task": ["--select", "RCA-001", "--trials", "2"],
    "two-tasks": ["--select", "RCA-001 RCA-002"],
}


@pytest.mark.xdist_group("attempts-alone")
@pytest.mark.parametrize("network", POLICIES)
@pytest.mark.parametrize("pair", list(PAIRS))
def test_two_attempts_cannot_pass_each_other_a_note(tmp_path: Path, pair: str, network: str | None) -> None:
    tasks = copy_starters(tmp_path / "tasks")
    port = _free_port()
    agent = ["note", str(port), "{task_id}", str(LISTEN_S)]
    lines = _run(tasks, tmp_path / "run", agent, *PAIRS[pair], "--concurrency", "2", network=network)
    check_notes(lines, network)


@pytest.mark.xdist_group("attempts-alone")
@pytest.mark.parametrize("agent", ["oracle", "command-unsandboxed"])
def test_a_run_without_a_sandbox_records_the_shared_network(tmp_path: Path, agent: str) -> None:
    """In-process agents and ``--sandbox none`` share the runner's network whatever the default says:
    run.yaml must not claim a network of their own."""
    tasks = copy_starters(tmp_path / "tasks")
    out = tmp_path / "run"
    if agent == "oracle":
        args = ["--agent", "oracle"]
    else:
        args = ["--agent", "command", "--agent-cmd", f"{sys.executable} -c pass", "--sandbox", "none"]
    r = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--select",
        "RCA-001",
        "--tasks",
        str(tasks),
        "--out",
        str(out),
        "--progress",
        "none",
        "--no-score",
        *args,
    )
    assert r.returncode == 0, r.stderr
    run_yaml = (out / "run.yaml").read_text(encoding="utf-8")
    assert "network: host" in run_yaml and "loopback" not in run_yaml
