"""docs/ray.md's quick start, run as written on one machine (issue 29, item 7).

The commands of "Start a cluster, run, resume" as subprocesses: ``ray get-auth-token --generate``,
``ray start --head``, ``ray start --address`` for a second node (with ``RAY_AUTH_MODE=token`` and
the head's token, as on another machine), then ``ctb-eval run --executor ray --ray-address`` with an
API key handed to the workers through ``runtime_env`` ``env_vars``; killed, and finished by
``ctb-eval run --resume DIR --ray-address``. Added to the documented commands, for a test only:
a free port for 6379 (two CI runs may share the machine), ``--temp-dir`` and ``HOME`` of the test's
own (Ray's sessions and its token stay apart from any other Ray here), ``--block`` so the test
owns the processes and ends them by their process group (``ray stop`` would end every Ray on the
machine), free dashboard-agent ports (Ray's default, 52365, is fixed), no dashboard, no usage stats.

The second test starts a head that listens on the loopback alone (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``
and ``--node-ip-address 127.0.0.1``): ``ctb-eval run --ray-address 127.0.0.1:PORT`` from a shell
without that variable reached it only after ctbench started turning the switch off for a loopback
address before importing Ray (:mod:`ctbench.evaluate.ray_address`); before, Ray dialled eth0's
address and the driver hung for minutes. With the switch on (the protection's case "off") the run
stops within seconds, naming the address Ray would dial.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import BUNDLED, copy_starters
from tests.support.ray_nodes import (
    CTB_EVAL,
    RAY,
    clean_env,
    free_port,
    new_token,
    node_flags,
    results,
    start,
    stop,
)

pytest.importorskip("ray")
pytestmark = pytest.mark.xdist_group("ray-cluster")

KEY = "sk-recipe-test-0123456789"
"""Stands for an API key: it must reach the agent on every node, and never run.yaml."""


@dataclass
class Cluster:
    head_address: str
    """What the head printed for ``ray start --address`` (this machine's outward address)."""
    port: int
    token: str
    env: dict[str, str]
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)


@pytest.fixture(scope="module")
def recipe_cluster() -> Iterator[Cluster]:
    root = Path(tempfile.mkdtemp(prefix="ctb-recipe-", dir="/tmp"))
    home, temp = root / "home", root / "ray"
    home.mkdir()
    temp.mkdir()
    env = clean_env(home, temp)
    port = free_port()
    cluster = Cluster(head_address="", port=port, token="", env=env)
    try:
        # On the head machine (docs/ray.md): a token, then the head.
        cluster.token = new_token(env)
        head, text = start(
            [RAY, "start", "--head", "--port", str(port), "--num-cpus", "1", "--block"]
            + ["--temp-dir", str(temp), "--include-dashboard=false", *node_flags()],
            env,
            root / "head.log",
        )
        cluster.procs.append(head)
        printed = re.search(r"ray start --address='([^']+)'", text)
        assert printed, text
        cluster.head_address = printed.group(1)
        assert cluster.head_address.endswith(f":{port}")
        # On every other node: the head's token, then join at the address the head printed.
        worker_env = {**env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": cluster.token}
        worker, _ = start(
            [RAY, "start", "--address", cluster.head_address, "--num-cpus", "1", "--block", *node_flags()],
            worker_env,
            root / "worker.log",
        )
        cluster.procs.append(worker)
        yield cluster
    finally:
        stop(cluster.procs)
        subprocess.run(["rm", "-rf", str(root)], check=False)


def test_docs_quick_start_runs_on_both_nodes_with_keys_and_resumes(
    recipe_cluster: Cluster, tmp_path: Path
) -> None:
    c = recipe_cluster
    tasks = tmp_path / "tasks"
    subprocess.run(["cp", "-r", str(BUNDLED), str(tasks)], check=True)
    out = tmp_path / "run"
    # The driver, as the docs say: the head's token, the key in the driver's environment, named (not
    # written) in runtime_env's env_vars. The agent prints the key it sees; each attempt takes a
    # second, so both hosts are up long before the tasks run out.
    env = {**c.env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": c.token, "CTB_RECIPE_KEY": KEY}
    argv = [
        *CTB_EVAL,
        "run",
        "--agent",
        "command",
        "--model",
        "probe",
        "--agent-cmd",
        "sh -c 'sleep 1; echo key=$CTB_RECIPE_KEY'",
        "--sandbox",
        "none",
        "--tasks",
        str(tasks),
        "--allow-unreviewed",
        "--concurrency",
        "2",
        "--executor",
        "ray",
        "--ray-address",
        f"127.0.0.1:{c.port}",
        "--executor-option",
        "attempts_per_host=1",
        "--executor-option",
        'runtime_env={"env_vars": {"CTB_RECIPE_KEY": "$CTB_RECIPE_KEY"}}',
        "--progress",
        "none",
        "--no-score",
        "--out",
        str(out),
    ]
    driver = subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and driver.poll() is None and len(results(out)) < 8:
            time.sleep(0.2)
        assert driver.poll() is None, driver.stderr.read().decode() if driver.stderr else ""
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait(timeout=30)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait(timeout=30)
    first = results(out)
    assert len(first) >= 8
    stored = (out / "run.yaml").read_text(encoding="utf-8")
    assert KEY not in stored and "<redacted>" in stored and "attempts_per_host: 1" in stored

    # Resumed as the docs say, naming the cluster again: the stored options (one attempt per host,
    # the key's variable) come back; the key is the driver's again.
    done = subprocess.run(
        [*CTB_EVAL, "run", "--resume", str(out), "--ray-address", f"127.0.0.1:{c.port}"]
        + ["--progress", "plain", "--no-score"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    said = re.search(r"run: (\d+) task\(s\)", done.stdout + done.stderr)
    assert said, done.stdout + done.stderr
    total = int(said.group(1))
    lines = results(out)
    assert len(first) < total
    assert len(lines) == total and len({x["task_id"] for x in lines}) == total
    assert all(str(x["answer_text"]).strip() == f"key={KEY}" for x in lines), {
        str(x["answer_text"]).strip() for x in lines
    }
    nodes = {str(x["worker"]).split("/")[1] for x in lines}
    assert len(nodes) == 2, nodes  # the head and the worker each ran attempts
    assert {str(x["worker"]).split("/")[1] for x in lines[len(first) :]} == nodes  # after the resume too
    assert KEY not in (out / "run.yaml").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def loopback_head() -> Iterator[tuple[int, dict[str, str]]]:
    root = Path(tempfile.mkdtemp(prefix="ctb-loop-", dir="/tmp"))
    home, temp = root / "home", root / "ray"
    home.mkdir()
    temp.mkdir()
    env = clean_env(home, temp)
    port = free_port()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        head, _ = start(
            [RAY, "start", "--head", "--port", str(port), "--num-cpus", "1", "--block"]
            + ["--temp-dir", str(temp), "--include-dashboard=false", "--node-ip-address", "127.0.0.1"]
            + node_flags(),
            {**env, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled"},
            root / "head.log",
        )
        procs.append(head)
        yield port, env
    finally:
        stop(procs)
        subprocess.run(["rm", "-rf", str(root)], check=False)


@pytest.mark.parametrize("switch", [None, "1"], ids=["unset", "protection-off"])
def test_a_loopback_only_head_is_reached_by_its_loopback_address(
    loopback_head: tuple[int, dict[str, str]], tmp_path: Path, switch: str | None
) -> None:
    port, env = loopback_head
    if switch is not None:
        env = {**env, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": switch}
    tasks = copy_starters(tmp_path / "tasks")
    out = tmp_path / "run"
    started = time.monotonic()
    done = subprocess.run(
        [*CTB_EVAL, "run", "--agent", "oracle", "--tasks", str(tasks), "--allow-unreviewed"]
        + ["--executor", "ray", "--ray-address", f"127.0.0.1:{port}", "--concurrency", "1"]
        + ["--progress", "none", "--no-score", "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if switch is None:
        assert done.returncode == 0, done.stderr[-3000:]
        lines = results(out)
        assert len(lines) == 3 and all(str(x["worker"]).startswith("ray:127.0.0.1/") for x in lines)
    else:
        assert done.returncode != 0
        assert time.monotonic() - started < 60
        last = done.stderr.strip().splitlines()[-1]
        assert "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER is on" in last and f"127.0.0.1:{port} into" in last, (
            done.stderr
        )
        assert "Traceback" not in done.stderr
