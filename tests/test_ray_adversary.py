"""The adversary cases of issue 25 under ``--executor ray``, on a Ray node of this module's own.

Each runs through the real ``ctb-eval run --executor ray --ray-address ...`` with the default sandbox,
and again with its protection taken out, where the attack must work:

- an attempt tries to reach the cluster's GCS and raylet and lists every listening port it can see,
  and two trials or two tasks on one host try to pass each other a note (``tests/adversary/
  neighbour.py``); protection off: ``--sandbox-network host``;
- an agent replaces its answer or stdout file with a link to a review record, an oracle run's log,
  ``hidden.yaml`` or ``/proc/self/environ`` (``tests/adversary/leave_behind.py``), which the Ray
  worker running the attempt reads after it; protection off: the workers' reading put back as it was
  before (``tests/adversary/naive_runner.py`` as Ray's ``worker_process_setup_hook``).

The node is a head of 2 CPUs on 127.0.0.1 with a private temp root; its workers run with this
checkout on ``PYTHONPATH`` (for the hook) and with the test's API key in their environment (what a
link to ``/proc/self/environ`` would copy out).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, copy_starters, needs_bwrap
from tests.test_agent_leftovers import AGENT, GOLD_LINE, GOLD_WHY, LINKS, SECRET, arena
from tests.test_agent_leftovers import _run as run_in_arena
from tests.test_attempts_alone import LISTEN_S, PAIRS, POLICIES, _found, _free_port, check_notes
from tests.test_attempts_alone import _run as run_neighbour

pytestmark = [
    pytest.mark.xdist_group("ray-cluster"),
    needs_bwrap,
]

__all__ = ["arena"]  # the fixture, imported: the arena of test_agent_leftovers (task set, oracle run)

NAIVE_HOOK = {"worker_process_setup_hook": "tests.adversary.naive_runner.take_out_protection"}


@pytest.fixture(scope="module")
def ray_head() -> Any:
    """One Ray node of this module's own on 127.0.0.1 (a private temp root, OS-picked ports)."""
    try:
        import ray
        from ray.cluster_utils import Cluster
    except ImportError:
        if os.environ.get("CTBENCH_REQUIRE_RAY"):
            raise
        pytest.skip("ray is not installed (pip install -e '.[test,ray]')")
    tempfile.gettempdir()
    root = Path(tempfile.mkdtemp(prefix="ctbray-", dir="/tmp"))  # short: Ray's socket paths
    (root / "tmp").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_TMPDIR", str(root))
        mp.setenv("TMPDIR", str(root / "tmp"))
        mp.setenv("PYTHONPATH", str(REPO))
        mp.setenv("CTB_TEST_API_KEY", SECRET)
        mp.delenv("RAY_ADDRESS", raising=False)
        c = None
        try:
            c = Cluster(
                initialize_head=True,
                head_node_args={
                    "num_cpus": 2,
                    "node_ip_address": "127.0.0.1",
                    "include_dashboard": False,
                    "dashboard_agent_listen_port": None,
                },
            )
            ray.init(
                address=c.address,
                _node_ip_address="127.0.0.1",
                namespace=f"ctbench-adversary-{uuid.uuid4().hex[:8]}",
                log_to_driver=False,
                configure_logging=False,
            )
            (node,) = ray.nodes()
            raylet = [f"127.0.0.1:{node['NodeManagerPort']}", f"127.0.0.1:{node['ObjectManagerPort']}"]
            ray.shutdown()
            yield c.address, raylet
        finally:
            ray.shutdown()
            if c is not None:
                c.shutdown()
            shutil.rmtree(root, ignore_errors=True)


def _ray_args(address: str, concurrency: int = 1) -> list[str]:
    flags = ["--executor", "ray", "--ray-address", address, "--ray-cpus-per-attempt", "0.5"]
    return [*flags, "--concurrency", str(concurrency)]


# --------------------------------------------------------------------------- the network


@pytest.mark.parametrize("network", POLICIES)
def test_under_ray_an_attempt_cannot_reach_the_cluster(
    ray_head: tuple[str, list[str]], tmp_path: Path, network: str | None
) -> None:
    gcs, raylet = ray_head
    tasks = copy_starters(tmp_path / "tasks")
    (line,) = run_neighbour(
        tasks,
        tmp_path / "run",
        ["scan", gcs, *raylet],
        "--select",
        "RCA-001",
        *_ray_args(gcs),
        network=network,
    )
    assert line["worker"].startswith("ray:127.0.0.1/"), line
    found = _found(line)
    gcs_port = int(gcs.rsplit(":", 1)[1])
    if network is None:
        assert all(v not in ("open", "answers-http2") for v in found["reach"].values()), found
        assert gcs_port not in found["listening"]
        assert len(found["listening"]) <= 1, found  # the forwarder's replay port, nothing else
    else:  # the shared network: the unauthenticated GCS answers the agent
        assert found["reach"][gcs] == "answers-http2", found
        assert gcs_port in found["listening"], found


@pytest.mark.parametrize("network", POLICIES)
@pytest.mark.parametrize("pair", list(PAIRS))
def test_under_ray_two_attempts_cannot_pass_each_other_a_note(
    ray_head: tuple[str, list[str]], tmp_path: Path, pair: str, network: str | None
) -> None:
    """Two trials, or two tasks, at once on one Ray host (the node's one attempt host runs both)."""
    gcs, _ = ray_head
    tasks = copy_starters(tmp_path / "tasks")
    agent = ["note", str(_free_port()), "{task_id}", str(LISTEN_S)]
    lines = run_neighbour(tasks, tmp_path / "run", agent, *PAIRS[pair], *_ray_args(gcs, 2), network=network)
    assert all(line["worker"].startswith("ray:127.0.0.1/") for line in lines), lines
    check_notes(lines, network)


# --------------------------------------------------------------------------- links left behind


def _target(root: Path, target: str) -> str:
    """What the link points at, from a Ray worker (whose working directory is not the arena): the
    absolute path, hex-encoded on the agent's command line (the sandbox refuses to show a path inside
    a task set there)."""
    paths = {
        "review": root / "tasks" / "rca" / "RCA-001" / "reviews" / "round-01.yaml",
        "oracle-log": root / "runs" / "oracle" / "logs" / "RCA-001.log",
        "hidden": root / "tasks" / "rca" / "RCA-001" / "hidden.yaml",
    }
    if target == "environ":
        return "environ"  # leave_behind.py's own name for /proc/self/environ, which resolves anywhere
    return "hex:" + str(paths[target]).encode().hex()


OFF = {("answer", "review"), ("answer", "hidden"), ("stdout", "oracle-log"), ("stdout", "environ")}
"""The protection-off runs: each target once (every run costs a Ray job, ~15 s on 2 cores)."""
CASES = [
    pytest.param(*link, protected, id=f"{link[0]}-{link[1]}-{'protected' if protected else 'protection-off'}")
    for link in LINKS
    for protected in (True, False)
    if protected or link[:2] in OFF
]


@pytest.mark.parametrize(("file", "target", "refusal", "secret", "protected"), CASES)
def test_under_ray_a_link_left_by_the_agent_is_refused(
    ray_head: tuple[str, list[str]],
    arena: Path,
    file: str,
    target: str,
    refusal: str,
    secret: str,
    protected: bool,
) -> None:
    gcs, _ = ray_head
    case = f"ray-link-{file}-{target}-{'on' if protected else 'off'}"
    shutil.rmtree(arena / "runs" / case, ignore_errors=True)
    cmd = shlex.join([sys.executable, str(AGENT), f"link-{file}", _target(arena, target)])
    args = ["--agent", "command", "--agent-cmd", cmd, "--out", f"runs/{case}", *_ray_args(gcs)]
    if not protected:
        args += ["--executor-option", f"runtime_env={json.dumps(NAIVE_HOOK)}"]
    ran = run_in_arena(arena, args, naive=False, deadline_s=240)
    assert ran.returncode == 0, ran.stderr
    (line,) = ran.lines()
    assert line["worker"].startswith("ray:127.0.0.1/"), line
    leaked = secret in ran.text()
    if protected:
        assert (line["status"], line["error_kind"], line["error"]) == ("error", "agent", refusal)
        assert line["answer_text"] is None
        assert not leaked
    else:  # the worker reading as it did: the gold (or the key) travels back into the run folder
        assert leaked, (line["status"], line.get("error"))
        if target in ("review", "oracle-log") and file == "answer":
            assert line["answer"]["rca"][0]["label"] == "shutdown"


def test_the_gold_it_would_leak_is_what_the_arena_holds(arena: Path) -> None:
    """The secrets the link cases look for are really there to be leaked (the assertions mean something)."""
    assert GOLD_LINE in (arena / "tasks" / "rca" / "RCA-001" / "reviews" / "round-01.yaml").read_text()
    assert GOLD_WHY in (arena / "tasks" / "rca" / "RCA-001" / "hidden.yaml").read_text()
