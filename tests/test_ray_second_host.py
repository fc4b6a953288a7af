"""docs/ray.md's quick start with a real second host (issue 29, item 7): the worker node runs in a
network namespace of its own (:mod:`tests.support.netns_host`), at another address, with its own
``HOME`` and temporary folder and no token file - only what the docs tell the other machine to have.

The head is started as the docs say for a machine with several addresses (``--node-ip-address``, the
host side of the link), the worker joins with the docs' command run in the namespace
(``RAY_AUTH_MODE=token RAY_AUTH_TOKEN=... ray start --address HEAD_IP:PORT``), and ``ctb-eval run
--executor ray --ray-address HEAD_IP:PORT`` runs the command agent, which prints the API key it was
given through ``runtime_env`` ``env_vars``. Both nodes pin their ports, and a packet filter in the
namespace opens only the ports docs/ray.md lists between two machines, so the list is checked too
(with the worker node's worker ports left out, the namespace's node ran no attempt). Added for a
test only, as in tests/test_ray_recipe.py: a free port for 6379, the test's own temporary folders,
``--block`` and free dashboard-agent ports.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import BUNDLED
from tests.support.netns_host import NetnsHost, netns_host
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

KEY = "sk-second-host-0123456789"


@dataclass
class TwoHosts:
    host: NetnsHost
    port: int
    env: dict[str, str]
    """The head machine's environment (its ``HOME`` holds the token)."""
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)


@dataclass(frozen=True)
class Ports:
    """A node's pinned ports, as nft port expressions."""

    manager: str
    objects: str
    workers: str

    def flags(self) -> list[str]:
        low, high = self.workers.split("-")
        return ["--node-manager-port", self.manager, "--object-manager-port", self.objects] + [
            "--min-worker-port",
            low,
            "--max-worker-port",
            high,
        ]


def _pinned(manager: int, objects: int, base: int) -> tuple[Ports, Ports]:
    """The head's ports (free here; worker ports from ``base``, below the ephemeral range) and the
    worker node's (its own network stack: any port is free there)."""
    head = Ports(str(manager), str(objects), f"{base}-{base + 19}")
    return head, Ports("20001", "20002", "20100-20119")


def _folders(root: Path, name: str) -> tuple[Path, Path]:
    home, temp = root / name / "home", root / name / "ray"
    home.mkdir(parents=True)
    temp.mkdir()
    return home, temp


@pytest.fixture(scope="module")
def two_hosts() -> Iterator[TwoHosts]:
    root = Path(tempfile.mkdtemp(prefix="ctb-2host-", dir="/tmp"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with netns_host() as host:
            env = clean_env(*_folders(root, "head"))
            port = free_port()
            token = new_token(env)
            # Every port the two hosts need pinned, and only those open between them (docs/ray.md).
            head_ports, worker_ports = _pinned(free_port(), free_port(), 21000 + os.getpid() % 400 * 20)
            host.allow_only(
                inbound=[worker_ports.manager, worker_ports.objects, worker_ports.workers],
                outbound=[str(port), head_ports.manager, head_ports.objects, head_ports.workers],
            )
            head, text = start(
                [RAY, "start", "--head", "--port", str(port), "--node-ip-address", host.host_ip]
                + [
                    "--num-cpus",
                    "1",
                    "--block",
                    "--include-dashboard=false",
                    *head_ports.flags(),
                    *node_flags(),
                ],
                env,
                root / "head.log",
            )
            procs.append(head)
            assert f"ray start --address='{host.host_ip}:{port}'" in text, text
            # The other machine: its own HOME and temporary folder, the head's token in its environment.
            worker_env = {
                **clean_env(*_folders(root, "worker")),
                "RAY_AUTH_MODE": "token",
                "RAY_AUTH_TOKEN": token,
            }
            worker, _ = start(
                host.exec([RAY, "start", "--address", f"{host.host_ip}:{port}", "--num-cpus", "1", "--block"])
                + worker_ports.flags()
                + node_flags(),
                worker_env,
                root / "worker.log",
            )
            procs.append(worker)
            try:
                yield TwoHosts(host, port, env, procs)
            finally:
                stop(procs)
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=False)


def test_attempts_run_on_the_second_host_with_the_key_from_runtime_env(
    two_hosts: TwoHosts, tmp_path: Path
) -> None:
    c = two_hosts
    tasks = tmp_path / "tasks"
    subprocess.run(["cp", "-r", str(BUNDLED), str(tasks)], check=True)
    out = tmp_path / "run"
    # On the head machine RAY_AUTH_MODE=token is enough (the token is in its HOME); the key is named,
    # not written, in runtime_env's env_vars. Each attempt takes a second, so both nodes get some.
    env = {**c.env, "RAY_AUTH_MODE": "token", "CTB_RECIPE_KEY": KEY}
    done = subprocess.run(
        [*CTB_EVAL, "run", "--agent", "command", "--model", "probe"]
        + ["--agent-cmd", "sh -c 'sleep 1; echo key=$CTB_RECIPE_KEY'", "--sandbox", "none"]
        + ["--tasks", str(tasks), "--allow-unreviewed", "--concurrency", "2"]
        + ["--executor", "ray", "--ray-address", f"{c.host.host_ip}:{c.port}"]
        + ["--executor-option", "attempts_per_host=1"]
        + ["--executor-option", 'runtime_env={"env_vars": {"CTB_RECIPE_KEY": "$CTB_RECIPE_KEY"}}']
        + ["--progress", "plain", "--no-score", "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = results(out)
    said = re.search(r"(\d+)/(\d+) task\(s\) complete", done.stdout + done.stderr)
    assert said and said.group(1) == said.group(2), done.stdout[-2000:]
    assert len(lines) == len({x["task_id"] for x in lines}) == int(said.group(1)) > 8
    assert all(str(x["answer_text"]).strip() == f"key={KEY}" for x in lines), {
        str(x["answer_text"]).strip() for x in lines
    }
    ips = {str(x["worker"]).split("/")[0] for x in lines}
    assert ips == {f"ray:{c.host.host_ip}", f"ray:{c.host.peer_ip}"}, ips  # the namespace's node ran attempts
    stored = (out / "run.yaml").read_text(encoding="utf-8")
    assert KEY not in stored and "<redacted>" in stored
