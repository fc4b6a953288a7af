"""The Ray executor (issue 15) on a real multi-node Ray cluster started by the test on 127.0.0.1.

One module-wide cluster (a head with 1 CPU and two worker nodes with 2 CPUs each, Ray's own
``cluster_utils``), kept small because the CI machine has 2 cores. ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``
makes every node use the loopback address; one test checks that no Ray process listens or talks
anywhere else. Skipped, with the reason, when ``ray`` is not installed (``pip install -e '.[test,ray]'``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # before ray is imported: loopback only

from ctbench.errors import CtbError  # noqa: E402
from ctbench.evaluate.agents import Agent, AgentContext, AgentOptions, AgentResult  # noqa: E402
from ctbench.evaluate.agents.base import Availability  # noqa: E402
from ctbench.evaluate.ray_executor import RayExecutor, task_bundles  # noqa: E402
from ctbench.evaluate.runner import Runner, RunSettings  # noqa: E402
from ctbench.evaluate.score import dumps, score_run  # noqa: E402
from ctbench.store import TaskSet  # noqa: E402
from tests.conftest import BUNDLED, REPO, copy_starters, needs_bwrap  # noqa: E402

try:
    import ray
    from ray.cluster_utils import Cluster
except ImportError:  # the optional extra
    if os.environ.get("CTBENCH_REQUIRE_RAY"):  # CI installed the extra: missing is a failure, not a skip
        raise
    ray = None  # type: ignore[assignment]

# Under pytest-xdist (CI: -n auto, --dist loadgroup in pyproject) this file runs on one worker, so one
# cluster serves it; were it split, each worker's cluster would still share nothing with the other.
pytestmark = pytest.mark.xdist_group("ray-cluster")

needs_ray = pytest.mark.skipif(ray is None, reason="ray is not installed (pip install -e '.[test,ray]')")

ANSWER = "CORE_SW_01;GigabitEthernet0/0/24;shutdown"


# --------------------------------------------------------------------------- agents shipped by value


class SleepAgent(Agent):
    """Sleeps, then submits a valid answer: long enough to kill things under it."""

    name = "ray-test-sleep"
    description = "sleeps 1.5 s and answers"

    async def solve(self, ctx: AgentContext) -> AgentResult:
        import asyncio

        await asyncio.sleep(1.5)
        ctx.session.submit(ANSWER)
        return AgentResult(rounds=1)


class PeekAgent(Agent):
    """Reports everything its worker's copy of the task set holds (for the no-hidden-part test)."""

    name = "ray-test-peek"
    description = "lists the files on its worker"

    async def solve(self, ctx: AgentContext) -> AgentResult:
        root = ctx.session.task.ref.path.parents[1]
        files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        blob = b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())
        notes = [
            f"pid {os.getpid()}",
            f"root {root}",
            f"hidden given {ctx.hidden is not None}",
            "files " + json.dumps(files),
            f"marker found {b'SECRET-' in blob}",
        ]
        return AgentResult(rounds=0, notes=notes)


class NeedsToolAgent(Agent):
    """Available only where CTB_RAY_TEST_TOOL=1 (set in the driver after the nodes started)."""

    name = "ray-test-needs-tool"
    description = "needs a tool the workers lack"

    @classmethod
    def availability(cls) -> Availability:
        ok = os.environ.get("CTB_RAY_TEST_TOOL") == "1"
        return Availability(ok, None, "found" if ok else "the test tool is not installed here")

    async def solve(self, ctx: AgentContext) -> AgentResult:
        return AgentResult()


# --------------------------------------------------------------------------- the cluster


@pytest.fixture(scope="module")
def cluster() -> Any:
    """A head and two worker nodes of this test module's own, sharing nothing with any other Ray.

    Two of these may run at once (two xdist workers, two checkouts' CI on one machine), so nothing is
    left to a default that is shared: Ray's temp root (sessions, sockets, logs and the "current
    cluster" file a later ``ray.init()`` would join) and the nodes' TMPDIR (the hosts' task folders and
    the agents' workspaces) are a private folder removed afterwards; every port is picked by the OS
    (Ray's one fixed default, the head's dashboard agent on 52365, is set to 0); the driver joins by
    the cluster's address in a namespace of its own, with any ``RAY_ADDRESS`` of the caller unset.
    """
    if ray is None:
        pytest.skip("ray is not installed (pip install -e '.[test,ray]')")
    tempfile.gettempdir()  # this process's temp folder, fixed before TMPDIR changes below
    root = Path(
        tempfile.mkdtemp(prefix="ctbray-", dir="/tmp")
    )  # short: Ray's socket paths must fit 107 bytes
    (root / "tmp").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_TMPDIR", str(root))
        mp.setenv("TMPDIR", str(root / "tmp"))  # read by the node processes; this process cached its own
        mp.delenv("RAY_ADDRESS", raising=False)
        c = None
        try:
            # A killed node is declared dead after 3 missed health checks a second apart, not 5 x 3 s.
            c = Cluster(
                initialize_head=True,
                head_node_args={
                    "num_cpus": 1,
                    "node_ip_address": "127.0.0.1",
                    "include_dashboard": False,
                    "dashboard_agent_listen_port": None,
                    "_system_config": {
                        "health_check_initial_delay_ms": 0,
                        "health_check_period_ms": 1000,
                        "health_check_failure_threshold": 3,
                    },
                },
            )
            # Ray names a node by the address of the interface its default route leaves by; these
            # nodes listen on 127.0.0.1 only, whatever the machine's own address is.
            c.add_node(num_cpus=2, node_ip_address="127.0.0.1")
            c.add_node(num_cpus=2, node_ip_address="127.0.0.1")
            ray.init(
                address=c.address,
                _node_ip_address="127.0.0.1",
                namespace=f"ctbench-test-{uuid.uuid4().hex[:8]}",
                log_to_driver=False,
                configure_logging=False,
            )
            c.private_root = root  # type: ignore[attr-defined]
            yield c
        finally:
            ray.shutdown()
            if c is not None:
                c.shutdown()
            shutil.rmtree(root, ignore_errors=True)


def _settings(tasks: Path, out: Path, agent: str, **kw: Any) -> RunSettings:
    return RunSettings(
        agent=agent, tasks=tasks, out=out, allow_unreviewed=True, timeout_s=60, executor="ray", **kw
    )


def _oracle_argv(tasks: Path, out: Path) -> list[str]:
    """``ctb-eval run`` of the oracle on ``tasks`` into ``out``; a test adds the flags it is about."""
    return ["run", "--agent", "oracle", "--tasks", str(tasks), "--allow-unreviewed", "--out", str(out)]


def _lines(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def _timings_of(doc: Any, ref: Any, path: tuple[str, ...] = ()) -> Any:
    """``doc`` with what may differ between two runs of the same thing taken from ``ref``: every
    latency (timings) and the run's name (its folder). Anything else that differs stays different."""
    if isinstance(doc, dict) and isinstance(ref, dict):
        return {
            k: ref.get(k)
            if k == "latency_s" or (*path, k) == ("run", "name")
            else _timings_of(v, ref.get(k), (*path, k))
            for k, v in doc.items()
        }
    if isinstance(doc, list) and isinstance(ref, list) and len(doc) == len(ref):
        return [_timings_of(a, b, path) for a, b in zip(doc, ref, strict=True)]
    return doc


# --------------------------------------------------------------------------- without a cluster


def test_bundles_are_a_whitelist_of_visible_files(full_task_set: Path) -> None:
    (full_task_set / "rca" / "RCA-001" / "notes.txt").write_text("author scratch\n", encoding="utf-8")
    ts = TaskSet.open(full_task_set)
    for task_id in ("RCA-001", "PATH-001"):
        bundles = task_bundles(ts, task_id)
        names = [rel for b in bundles for rel in b.files]
        assert not any(n.endswith("hidden.yaml") or n.endswith("notes.txt") for n in names), names
        assert any(n.endswith("/task.yaml") for n in names) and any(n.startswith("networks/") for n in names)
        hidden = ts.ref(task_id).hidden_file.read_bytes()
        assert all(hidden not in data for b in bundles for data in b.files.values())
        again = task_bundles(ts, task_id)
        assert [b.key for b in again] == [b.key for b in bundles]  # content-addressed: same files, same key


def test_bad_option_is_one_line() -> None:
    with pytest.raises(CtbError, match=r"option cpus_per_attempt: .*greater than 0"):
        RayExecutor(cpus_per_attempt=0)
    with pytest.raises(CtbError, match=r"option colour"):
        RayExecutor(colour="red")


def test_ray_options_need_the_ray_executor(task_set: Path, tmp_path: Path) -> None:
    from tests.conftest import run_cli

    r = run_cli(
        "evaluate",
        *_oracle_argv(task_set, tmp_path / "run"),
        "--ray-address",
        "127.0.0.1:1",
    )
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0
    assert "need --executor ray" in r.stderr


def test_ray_not_installed_is_one_clear_line(task_set: Path, tmp_path: Path) -> None:
    from tests.conftest import run_cli

    shadow = tmp_path / "no-ray" / "ray"  # first on the path: `import ray` fails as if it were not installed
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'ray'\", name='ray')\n")
    r = run_cli(
        "evaluate",
        *_oracle_argv(task_set, tmp_path / "run"),
        "--executor",
        "ray",
        "--progress",
        "none",
        env={"PYTHONPATH": f"{shadow.parent}{os.pathsep}{REPO}"},
    )
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip().splitlines() == ["ctb-eval: executor 'ray' needs Ray: pip install 'ctbench[ray]'"]


def test_executor_options_from_the_command_line_are_checked_in_one_line(
    task_set: Path, tmp_path: Path
) -> None:
    from tests.conftest import run_cli

    r = run_cli(
        "evaluate", *_oracle_argv(task_set, tmp_path / "a"), "--executor-option", "attempts_per_host=2"
    )
    assert r.returncode == 2 and r.stderr.strip() == (
        "ctb-eval: --executor-option: the local executor has no options"
    )
    r = run_cli(
        "evaluate",
        *_oracle_argv(task_set, tmp_path / "b"),
        "--executor",
        "ray",
        "--executor-option",
        "noequals",
    )
    assert r.returncode == 2 and "--executor-option 'noequals': expected KEY=VALUE" in r.stderr
    if ray is not None:
        r = run_cli(
            "evaluate",
            *_oracle_argv(task_set, tmp_path / "c"),
            "--executor",
            "ray",
            "--executor-option",
            "attempts_per_hst=2",
        )
        assert r.returncode == 1 and r.stderr.strip().count("\n") == 0, r.stderr
        assert "option attempts_per_hst: Extra inputs are not permitted (options: address," in r.stderr


def test_run_help_explains_the_ray_options() -> None:
    from tests.conftest import run_cli

    r = run_cli("evaluate", "run", "--executor", "ray", "--help")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "--ray-address ADDR" in text and "$RAY_ADDRESS" in text and "give it again on --resume" in text
    assert "--ray-cpus-per-attempt N" in text and "--executor NAME" in text


@needs_ray
def test_unreachable_cluster_is_one_clear_line(task_set: Path, tmp_path: Path) -> None:
    import socket

    from tests.conftest import run_cli

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = run_cli(
        "evaluate",
        *_oracle_argv(task_set, tmp_path / "run"),
        "--executor",
        "ray",
        "--ray-address",
        f"127.0.0.1:{port}",
        "--progress",
        "none",
    )
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"ctb-eval: executor 'ray': cannot reach the Ray cluster at 127.0.0.1:{port}: Connection refused "
        "(is the head running? ray start --head)"
    ]


def test_malformed_address_is_one_clear_line() -> None:
    from ctbench.evaluate.ray_executor import _check_reachable

    with pytest.raises(CtbError, match=r"^executor 'ray': --ray-address 'head\.lab': expected HOST:PORT "):
        _check_reachable("head.lab", 1)


@needs_ray
def test_no_address_starts_a_local_instance_for_the_run_and_stops_it(task_set: Path, tmp_path: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix="ctbray-", dir="/tmp"))  # the instance's temp root: found by it below
    try:
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "RAY_TMPDIR": str(root),
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        }
        env.pop("RAY_ADDRESS", None)
        out = tmp_path / "run"
        driver = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ctbench.evaluate.cli",
                *_oracle_argv(task_set, out),
                "--executor",
                "ray",
                "--ray-cpus-per-attempt",
                "0.5",
                "--concurrency",
                "2",
                "--progress",
                "none",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        seen: set[int] = set()
        while driver.poll() is None:  # the instance's processes, while they live
            seen |= _ray_processes(root)
            time.sleep(0.2)
        assert driver.returncode == 0, driver.stderr.read().decode() if driver.stderr else ""
        lines = _lines(out)
        assert len(lines) == 3 and all(x["status"] == "answered" for x in lines)
        assert all(x["worker"].startswith("ray:127.0.0.1/") for x in lines)
        summary = json.loads((out / "scores.json").read_text(encoding="utf-8"))["summary"]
        assert summary["rca"]["accuracy"] == 1.0 and summary["path"]["accuracy"] == 1.0, summary
        assert len(seen) >= 2  # a GCS and a raylet at least were started for the run...
        assert _ray_processes(root) == set()  # ...and none outlives it
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _ray_processes(root: Path) -> set[int]:
    """Live processes whose command line names Ray's temp root ``root`` (every Ray process started there)."""
    found = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes()
            state = (cmdline.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(root).encode() in text and state != "Z":
            found.add(int(cmdline.parent.name))
    return found


# --------------------------------------------------------------------------- on the cluster


def test_oracle_through_ray_scores_exactly_like_local(cluster: Any, tmp_path: Path) -> None:
    ts = TaskSet.open(BUNDLED)
    local = Runner(
        RunSettings(
            agent="oracle", tasks=BUNDLED, out=tmp_path / "local", allow_unreviewed=True, concurrency=4
        )
    )
    local.run()
    executor = RayExecutor(cpus_per_attempt=0.5, attempts_per_host=2)
    report = Runner(_settings(BUNDLED, tmp_path / "ray", "oracle", concurrency=4), executor=executor).run()
    assert report.complete
    lines = _lines(tmp_path / "ray")
    assert len(lines) == len({x["task_id"] for x in lines}) == len(ts.refs())
    workers = {x["worker"] for x in lines}
    assert all(w.startswith("ray:127.0.0.1/") for w in workers), workers
    assert 1 <= len(workers) <= 2  # two hosts of two attempts each; the second joins when it is up
    score_run(tmp_path / "local", ts)
    score_run(tmp_path / "ray", ts)
    local_bytes = (tmp_path / "local" / "scores.json").read_bytes()
    a, b = (json.loads((tmp_path / d / "scores.json").read_text(encoding="utf-8")) for d in ("local", "ray"))
    assert a != b  # the latencies and the name differ: the next line is no tautology
    assert dumps(_timings_of(b, a)).encode() == local_bytes  # byte-identical apart from timings
    assert b["summary"]["rca"]["accuracy"] == 1.0 and b["summary"]["path"]["n_correct"] == 11
    # Every Ray process this test started listens and talks on 127.0.0.1 only.
    assert _non_loopback_sockets() == []


class LookingRayExecutor(RayExecutor):
    """The Ray executor, plus a look at what it sends: every unit handed to a host, and - at close, while
    the run's objects still live - every object it put into the store and every file on the nodes."""

    def __init__(self, root: Path, **options: Any) -> None:
        super().__init__(**options)
        self.root = root
        self.sent: list[bytes] = []
        self.seen: dict[str, Any] = {}

    async def run_unit(self, unit: Any) -> Any:
        from ray import cloudpickle

        self.sent.append(cloudpickle.dumps(unit))  # the unit as the host gets it
        return await super().run_unit(unit)

    async def close(self) -> None:
        assert self.shipper is not None
        self.seen["shipped"] = {k: ray.get(ref) for k, ref in self.shipper.refs.items()}
        self.seen["host_files"] = [await h.actor.files.remote() for h in self.hosts if h.alive]
        # Everything any node process wrote: Ray's sessions (logs, spilled objects), the nodes' TMPDIR
        # (the agents' workspaces) and the hosts' task folders (in /dev/shm where it has room).
        roots = [self.root, *(Path(h.info["root"]) for h in self.hosts if h.alive)]
        self.seen["disk"] = {
            str(f): f.read_bytes() for r in roots for f in r.rglob("*") if f.is_file() and not f.is_symlink()
        }
        self.seen["host_roots"] = roots[1:]
        await super().close()


def test_no_hidden_part_reaches_a_worker(cluster: Any, tmp_path: Path) -> None:
    tasks = copy_starters(tmp_path / "tasks")
    secret = f"SECRET-{uuid.uuid4()}".encode()
    for hidden in tasks.rglob("hidden.yaml"):  # in a field, so a parsed gold carries it too
        text = hidden.read_bytes()
        assert text.count(b"\nrationale: ") == 1
        hidden.write_bytes(text.replace(b"\nrationale: ", b"\nrationale: " + secret + b" "))
    statement = (tasks / "rca" / "RCA-001" / "task.yaml").read_bytes()
    executor = LookingRayExecutor(cluster.private_root, cpus_per_attempt=0.5, attempts_per_host=2)
    report = Runner(
        _settings(tasks, tmp_path / "run", "ray-test-peek", concurrency=2),
        agent=PeekAgent(AgentOptions()),
        executor=executor,
    ).run()
    assert report.complete
    lines = _lines(tmp_path / "run")
    assert len(lines) == 3
    for line in lines:
        notes = line["notes"]
        assert f"pid {os.getpid()}" not in notes  # it ran in a worker process
        assert "hidden given False" in notes and "marker found False" in notes, notes
        assert "hidden.yaml" not in next(n for n in notes if n.startswith("files "))
    # The units sent to the hosts.
    assert len(executor.sent) == 3 and not any(secret in blob for blob in executor.sent)
    # The object store: each bundle once - the set's files, each network, each task.
    shipped = executor.seen["shipped"]
    ts = TaskSet.open(tasks)
    networks = {ts.load_task(r).network for r in ts.refs()}
    assert len(shipped) == 1 + len(networks) + 3
    for files in shipped.values():
        for rel, data in files.items():
            assert not rel.endswith("hidden.yaml") and secret not in data
    # The workers' file systems: the hosts' folders hold the visible files, and nothing any node wrote
    # holds the hidden part (the scan does see what the hosts wrote: the task statement is there).
    assert executor.seen["host_files"]
    for files in executor.seen["host_files"]:
        assert files and not any(rel.endswith("hidden.yaml") or secret in data for rel, data in files.items())
    disk = executor.seen["disk"]
    assert any(
        Path(path).is_relative_to(host) and data == statement
        for path, data in disk.items()
        for host in executor.seen["host_roots"]
    )
    leaked = [rel for rel, data in disk.items() if secret in data or rel.endswith("hidden.yaml")]
    assert leaked == []


def test_worker_without_what_the_agent_needs_fails_early_naming_the_node(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTB_RAY_TEST_TOOL", "1")  # the driver has it; the nodes started without it
    tasks = copy_starters(tmp_path / "tasks")
    runner = Runner(
        _settings(tasks, tmp_path / "run", "ray-test-needs-tool", concurrency=1),
        agent=NeedsToolAgent(AgentOptions()),
        executor=RayExecutor(cpus_per_attempt=0.5),
    )
    with pytest.raises(CtbError) as err:
        runner.run()
    assert str(err.value).startswith("executor 'ray': node 127.0.0.1 (")
    assert "cannot run agent 'ray-test-needs-tool': the test tool is not installed here" in str(err.value)
    results = tmp_path / "run" / "results.jsonl"
    assert not results.exists() or results.read_bytes() == b""  # nothing ran
    assert _settled_cpus() == CLUSTER_CPUS  # and the refused host is gone, its CPU free again


def test_a_node_that_cannot_import_the_host_fails_early_naming_the_node(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node without ctbench, as the driver's code reaches it: the hosts' class lives in a module only
    the driver can import (its folder is on the driver's sys.path alone), so unpickling it on a node
    fails exactly as it does where ctbench is not installed."""
    only_here = tmp_path / "driver_only"
    only_here.mkdir()
    (only_here / "ctb_driver_only_host.py").write_text(
        "from ctbench.evaluate.ray_executor import AttemptHost\n\nclass DriverOnlyHost(AttemptHost):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(only_here))
    import ctb_driver_only_host  # type: ignore[import-not-found]

    class DriverOnlyExecutor(RayExecutor):
        host_class = ctb_driver_only_host.DriverOnlyHost

    tasks = copy_starters(tmp_path / "tasks")
    runner = Runner(
        _settings(tasks, tmp_path / "run", "oracle", concurrency=1),
        executor=DriverOnlyExecutor(cpus_per_attempt=0.5),
    )
    with pytest.raises(CtbError) as err:
        runner.run()
    text = str(err.value)
    assert text.startswith("executor 'ray': node 127.0.0.1 ("), text
    assert (
        "cannot start an attempt host (ModuleNotFoundError: No module named 'ctb_driver_only_host')" in text
    )
    assert "install ctbench" in text and "runtime_env" in text and "\n" not in text
    results = tmp_path / "run" / "results.jsonl"
    assert not results.exists() or results.read_bytes() == b""
    assert _settled_cpus() == CLUSTER_CPUS


def test_a_cluster_too_small_for_the_concurrency_is_one_clear_line(cluster: Any, tmp_path: Path) -> None:
    tasks = copy_starters(tmp_path / "tasks")
    runner = Runner(
        _settings(tasks, tmp_path / "run", "oracle", concurrency=6), executor=RayExecutor(cpus_per_attempt=1)
    )
    with pytest.raises(CtbError) as err:
        runner.run()
    assert str(err.value) == (
        "executor 'ray': concurrency 6 x 1 CPU per attempt needs 6 CPUs; the cluster has 5. "
        "Lower --concurrency or --ray-cpus-per-attempt, or add nodes"
    )
    assert _settled_cpus() == CLUSTER_CPUS  # no host was started


def test_executor_options_given_on_the_command_line_reach_the_hosts(cluster: Any, tmp_path: Path) -> None:
    from tests.conftest import run_cli

    tasks = copy_starters(tmp_path / "tasks")
    hosts = tmp_path / "scratch" / "hosts"  # not there yet: the host makes it
    r = run_cli(
        "evaluate",
        *_oracle_argv(tasks, tmp_path / "run"),
        "--concurrency",
        "2",
        "--executor",
        "ray",
        "--ray-address",
        cluster.address,
        "--ray-cpus-per-attempt",
        "0.5",
        "--executor-option",
        "attempts_per_host=1",
        "--executor-option",
        f"host_dir={hosts}",
        "--progress",
        "none",
        "--json",
        env={"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"},
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 3 and all(line["status"] == "answered" for line in lines)
    assert hosts.is_dir() and list(hosts.iterdir()) == []  # the hosts' folders were there, and are gone


@needs_bwrap
def test_driver_sigkilled_leaves_nothing_running_and_resume_finishes(cluster: Any, tmp_path: Path) -> None:
    tasks = copy_starters(tmp_path / "tasks")
    from tests.test_runner import clone_tasks

    clone_tasks(tasks, 5)  # 8 tasks
    out = tmp_path / "run"
    free_cpus = _settled_cpus()
    env = {**os.environ, "PYTHONPATH": str(REPO), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    argv = [
        sys.executable,
        "-m",
        "ctbench.evaluate.cli",
        "run",
        "--agent",
        "command",
        "--agent-cmd",
        "sleep 2",
        "--tasks",
        str(tasks),
        "--allow-unreviewed",
        "--concurrency",
        "4",
        "--executor",
        "ray",
        "--ray-address",
        cluster.address,
        "--ray-cpus-per-attempt",
        "0.5",
        "--progress",
        "none",
        "--no-score",
    ]
    driver = subprocess.Popen(
        [*argv, "--out", str(out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and driver.poll() is None:
            if (out / "results.jsonl").is_file() and len(_lines(out)) >= 2:
                break
            time.sleep(0.1)
        assert driver.poll() is None, driver.stderr.read().decode() if driver.stderr else ""
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(timeout=30)
    finally:
        if driver.poll() is None:
            driver.kill()
    before = (out / "results.jsonl").read_bytes()
    assert 2 <= len(before.splitlines()) < 8
    # Ray kills the dead driver's hosts: every CPU they held comes back, and nothing writes the folder.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and ray.available_resources().get("CPU", 0) < free_cpus:
        time.sleep(0.2)
    assert ray.available_resources().get("CPU", 0) >= free_cpus
    time.sleep(2.5)  # longer than an attempt: a surviving one would have finished by now
    assert (out / "results.jsonl").read_bytes() == before
    # Resumed with the cluster in RAY_ADDRESS this time, the other way to name it.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctbench.evaluate.cli",
            "run",
            "--resume",
            str(out),
            "--ray-cpus-per-attempt",
            "0.5",
            "--progress",
            "none",
            "--no-score",
        ],
        env={**env, "RAY_ADDRESS": cluster.address},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    lines = _lines(out)
    ids = [x["task_id"] for x in lines]
    assert len(ids) == 8 and len(set(ids)) == 8
    assert lines[: len(before.splitlines())] == [json.loads(x) for x in before.splitlines()]
    assert all(x["worker"].startswith("ray:127.0.0.1/") for x in lines)


# The last test on the cluster: it takes a node away for good (adding one back costs seconds).


def test_host_process_and_node_killed_mid_run_complete_every_task_once(cluster: Any, tmp_path: Path) -> None:
    tasks = copy_starters(tmp_path / "tasks")
    from tests.test_runner import clone_tasks

    clone_tasks(tasks, 9)  # 12 tasks
    executor = RayExecutor(cpus_per_attempt=0.5, attempts_per_host=2)
    runner = Runner(
        _settings(tasks, tmp_path / "run", "ray-test-sleep", concurrency=4, retries=3),
        agent=SleepAgent(AgentOptions()),
        executor=executor,
    )
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.setdefault("report", runner.run()), daemon=True)
    thread.start()
    # Both hosts at work: one on a worker node (that node goes), the other anywhere else (its process goes).
    victim = other = None
    deadline = time.monotonic() + 120
    while (victim is None or other is None) and time.monotonic() < deadline:
        time.sleep(0.2)
        busy = [h for h in list(executor.hosts) if h.busy and h.alive]
        victim = next(
            (n for n in cluster.worker_nodes if any(h.info.get("node") == n.node_id for h in busy)), None
        )
        other = next((h for h in busy if victim is not None and h.info.get("node") != victim.node_id), None)
    assert victim is not None and other is not None, "the two hosts never ran attempts at once"
    time.sleep(0.5)  # mid-attempt: the sleep agent takes 1.5 s
    os.kill(other.info["pid"], signal.SIGKILL)  # a host's worker process dies...
    cluster.remove_node(victim, allow_graceful=False)  # ...and a whole node; no test after this one needs it
    thread.join(timeout=180)
    assert not thread.is_alive(), "the run did not finish after a host and a node died"
    report = box["report"]
    assert report.complete
    lines = _lines(tmp_path / "run")
    ids = [x["task_id"] for x in lines]
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 12  # every task once: none lost, none doubled
    assert all(x["status"] in ("answered", "unparsable") for x in lines), [x["error"] for x in lines]
    errors = [r["error"] for x in lines for r in x["retries"]]
    assert errors and all("died mid-attempt" in e for e in errors), errors
    assert any(other.where in e for e in errors) and any(f"({victim.node_id[:8]})" in e for e in errors), (
        errors
    )


# --------------------------------------------------------------------------- helpers


CLUSTER_CPUS = 5.0


def _settled_cpus() -> float:
    """Wait until Ray sees exactly the live nodes (a killed one takes seconds to be marked dead) and
    nothing holds a CPU; returns the free CPUs."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        total = sum(n["Resources"].get("CPU", 0) for n in ray.nodes() if n["Alive"])
        free = ray.available_resources().get("CPU", 0)
        if total == CLUSTER_CPUS and free == CLUSTER_CPUS:
            return free
        time.sleep(0.5)
    raise AssertionError(
        f"the test cluster did not settle: free {ray.available_resources()}, nodes {ray.nodes()}"
    )


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def _non_loopback_sockets() -> list[str]:
    """TCP sockets of this process's children (the Ray nodes) listening on or connected to anything but
    127.0.0.1."""
    if shutil.which("ss") is None:
        if os.environ.get("CTBENCH_REQUIRE_RAY"):  # CI installs iproute2 for this check: missing is a failure
            raise AssertionError("ss (iproute2) is not installed: cannot check what Ray listens on")
        pytest.skip("ss is not installed")
    mine = _descendants(os.getpid()) | {os.getpid()}
    bad = []
    rows = subprocess.run(["ss", "-Htanp"], capture_output=True, text=True, check=True).stdout.splitlines()
    for row in rows:
        if not {int(p) for p in re.findall(r"pid=(\d+)", row)} & mine:
            continue
        local, peer = row.split()[3:5]
        if not all(
            a.startswith(("127.0.0.1:", "[::ffff:127.0.0.1]:")) or a in ("*:*", "0.0.0.0:*", "[::]:*")
            for a in (local, peer)
        ):
            bad.append(row)
    return bad


def test_a_dead_hosts_folder_is_swept_a_live_ones_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctbench.evaluate.ray_executor import HOST_PREFIX, sweep_dead_hosts

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = tmp_path / f"{HOST_PREFIX}{dead.pid}-abc"
    mine = tmp_path / f"{HOST_PREFIX}{os.getpid()}-def"
    for folder in (gone, mine):
        (folder / "rca").mkdir(parents=True)
    assert sweep_dead_hosts() >= 1  # /dev/shm may hold another dead run's too
    assert not gone.exists() and mine.exists()


def test_a_host_keeps_its_task_files_in_ram_where_the_node_has_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctbench.evaluate import ray_executor as rx

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert rx.host_parent(str(tmp_path / "scratch")) == tmp_path / "scratch"  # --ray-host-dir wins
    shm = tmp_path / "shm"
    shm.mkdir()
    monkeypatch.setattr(rx, "SHM", shm)
    monkeypatch.setattr(rx, "SHM_MIN_FREE", 1)
    assert rx.host_parent() == shm
    monkeypatch.setattr(rx, "SHM_MIN_FREE", 1 << 62)  # a container's small /dev/shm: the temp folder
    assert rx.host_parent() == tmp_path
    monkeypatch.setattr(rx, "SHM", tmp_path / "absent")
    assert rx.host_parent() == tmp_path
