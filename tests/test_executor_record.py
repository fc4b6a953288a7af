"""``--resume`` runs where the run ran: run.yaml keeps the executor's options (Ray address, CPUs per
attempt, runtime_env...) and never their secrets (API keys in runtime_env env_vars, tokens, an
address's password); a resume refills env_vars from the driver's environment or names what is missing.

The end-to-end case points the Ray executor at a port on 127.0.0.1 where nothing listens: the run
folder is made, the run stops at once with the address in its error, and a bare ``--resume`` stops
on the same address - the option was kept - without the key ever reaching a file.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.errors import CtbError
from ctbench.evaluate.executor_record import REDACTED, redact, restore
from ctbench.yamlio import load_fast
from tests.conftest import REPO

pytest.importorskip("ray")
SECRET = "sk-ctbench-never-stored-31337"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ctb_eval(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "CTB_TEST_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "ctbench.evaluate.cli", *args],
        capture_output=True,
        text=True,
        env={**full, "PYTHONPATH": str(REPO), **env},
        timeout=120,
    )


def test_resume_keeps_the_executor_options_and_never_the_key(task_set: Path, tmp_path: Path) -> None:
    out, port = tmp_path / "run", _free_port()
    first = _ctb_eval(
        "run", "--agent", "oracle", "--tasks", str(task_set), "--allow-unreviewed", "--out", str(out),
        "--progress", "none", "--executor", "ray", "--ray-address", f"127.0.0.1:{port}",
        "--ray-cpus-per-attempt", "0.5", "--executor-option", "connect_timeout_s=2",
        "--executor-option", 'runtime_env={"env_vars": {"CTB_TEST_KEY": "$CTB_TEST_KEY"}}',
        env={"CTB_TEST_KEY": SECRET},
    )  # fmt: skip
    assert first.returncode == 1 and f"cannot reach the Ray cluster at 127.0.0.1:{port}" in first.stderr
    config = load_fast(out / "run.yaml")["settings"]
    assert config["executor"] == "ray"
    assert config["executor_options"] == {
        "address": f"127.0.0.1:{port}",
        "cpus_per_attempt": 0.5,
        "connect_timeout_s": 2,
        "runtime_env": {"env_vars": {"CTB_TEST_KEY": REDACTED}},
    }
    # A resume without the key names it, and nothing is run.
    bare = _ctb_eval("run", "--resume", str(out), "--progress", "none", env={})
    assert bare.returncode == 2 and "runtime_env.env_vars.CTB_TEST_KEY (set $CTB_TEST_KEY)" in bare.stderr
    # With it, the resume goes where the run went (the stored address), and an address given now wins.
    again = _ctb_eval("run", "--resume", str(out), "--progress", "none", env={"CTB_TEST_KEY": SECRET})
    assert again.returncode == 1 and f"cannot reach the Ray cluster at 127.0.0.1:{port}" in again.stderr
    other = _free_port()
    moved = _ctb_eval(
        "run", "--resume", str(out), "--progress", "none", "--ray-address", f"127.0.0.1:{other}",
        env={"CTB_TEST_KEY": SECRET},
    )  # fmt: skip
    assert f"cannot reach the Ray cluster at 127.0.0.1:{other}" in moved.stderr
    assert load_fast(out / "run.yaml")["settings"]["executor_options"]["address"] == f"127.0.0.1:{other}"
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_what_is_redacted_and_how_it_comes_back() -> None:
    given = {
        "address": "ray://me:hunter2@10.0.0.5:10001",
        "runtime_env": {"env_vars": {"OPENAI_API_KEY": "sk-1", "LOG_LEVEL": "debug"}, "pip": ["ctbench"]},
        "auth_token": "t0k",
        "resources": {"codex": 1},
        "cpus_per_attempt": 0.5,
    }
    stored = redact(given)
    assert stored == {
        "address": f"ray://me:{REDACTED}@10.0.0.5:10001",
        "runtime_env": {"env_vars": {"OPENAI_API_KEY": REDACTED, "LOG_LEVEL": REDACTED}, "pip": ["ctbench"]},
        "auth_token": REDACTED,
        "resources": {"codex": 1},
        "cpus_per_attempt": 0.5,
    }
    assert "sk-1" not in json.dumps(stored) and "hunter2" not in json.dumps(stored)
    env = {"OPENAI_API_KEY": "sk-2", "LOG_LEVEL": "info"}
    back = restore(stored, {"address": "10.0.0.6:6379", "auth_token": "t1"}, env)
    assert back["runtime_env"]["env_vars"] == env and back["address"] == "10.0.0.6:6379"
    with pytest.raises(CtbError, match=r"address \(--executor-option address=...\)"):
        restore(stored, {"auth_token": "t1"}, env)
    with pytest.raises(CtbError, match=r"runtime_env.env_vars.LOG_LEVEL \(set \$LOG_LEVEL\)"):
        restore(stored, {"address": "h:1", "auth_token": "t1"}, {"OPENAI_API_KEY": "x"})
    # "$NAME" in a new run's env_vars is the driver's variable; a literal value stays as given
    fresh = restore({}, {"runtime_env": {"env_vars": {"A": "$K", "B": "${K}", "C": "plain"}}}, {"K": "v"})
    assert fresh["runtime_env"]["env_vars"] == {"A": "v", "B": "v", "C": "plain"}
