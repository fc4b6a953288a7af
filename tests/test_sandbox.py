"""The sandbox launcher with the real ``bwrap``, and agent processes that must die with the runner.

Each view test runs a small probe program through :func:`run_agent_process` exactly as an adapter
does, and reads what it saw from its standard output.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ctbench.evaluate.agents.process import Launch, new_attempt_dir, owner_record, run_agent_process
from ctbench.evaluate.sandbox import (
    NoSandbox,
    SandboxError,
    make_launcher,
    secret_paths_for,
)
from ctbench.evaluate.work import SandboxSettings
from ctbench.replay.engine import ReplayEngine
from ctbench.replay.http_server import serve_in_thread
from ctbench.store import TaskSet
from ctbench.yamlio import load_fast
from tests.conftest import REPO, needs_bwrap, run_cli

needs_bwrap = needs_bwrap

PROBE = r"""
import json, os, sys
def can_write(d):
    try:
        with open(os.path.join(d, "probe-mark-" + os.environ["PROBE_ID"]), "w") as fh:
            fh.write("x")
        return True
    except OSError:
        return False
def listing(d):
    try:
        return sorted(os.listdir(d))
    except OSError as exc:
        return type(exc).__name__
secret = sys.argv[1]
print(json.dumps({
    "cwd": os.getcwd(), "env": dict(os.environ), "root": listing("/"), "pids": [p for p in os.listdir("/proc") if p.isdigit()],
    "secret": os.path.exists(secret), "secret_parent": listing(os.path.dirname(secret)),
    "repo": listing(sys.argv[2]), "repo_tasks": os.path.exists(os.path.join(sys.argv[2], "tasks")),
    "home": listing(os.path.expanduser("~")), "root_home": listing("/root"),
    # the system folders only when asked: unsandboxed (as root) the probe would litter the host
    "writes": {d: can_write(d) for d in (("/", "/etc", "/usr") if os.environ.get("PROBE_SYSTEM") else ())
               + ("/tmp", os.getcwd(), sys.argv[3])},
    "host_tmp_marker": os.path.exists(os.environ["PROBE_MARKER"]),
}))
"""


class Log:
    """An attempt log on a real file, as AgentLog is."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh = path.open("ab")

    def fileno(self) -> int:
        return self._fh.fileno()

    def line(self, text: str) -> None:
        self._fh.write(text.encode() + b"\n")
        self._fh.flush()


def run_probe(
    launcher: Any, tmp_path: Path, secret: Path, env: dict[str, str] | None = None
) -> dict[str, Any]:
    attempt = new_attempt_dir("probe", root=tmp_path)
    ws, io = attempt / "workspace", attempt / "io"
    ws.mkdir()
    io.mkdir()
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    probe_id = f"{os.getpid()}-{time.monotonic_ns()}"
    marker = Path(tempfile.gettempdir()) / f"host-marker-{probe_id}"
    marker.write_text("x")
    try:
        argv = [sys.executable, str(script), str(secret), str(REPO), str(io)]
        launch = Launch(
            argv=argv,
            workspace=ws,
            env={**(env or {}), "PROBE_MARKER": str(marker), "PROBE_ID": probe_id},
            read_write=(io,),
        )
        code = asyncio.run(
            run_agent_process(
                launch,
                log=Log(tmp_path / "log"),
                launcher=launcher,
                stdout=io / "out.json",
                attempt_dir=attempt,
            )
        )
        data_host_mark = (Path(tempfile.gettempdir()) / f"probe-mark-{probe_id}").exists()
    finally:
        marker.unlink()
        for d in ("/tmp", "/var/tmp", tempfile.gettempdir()):  # an unsandboxed probe writes there
            (Path(d) / f"probe-mark-{probe_id}").unlink(missing_ok=True)
    assert code == 0, (tmp_path / "log").read_text()
    data: dict[str, Any] = json.loads((io / "out.json").read_text())
    data["ws"] = str(ws.resolve())
    data["io"] = str(io.resolve())
    data["log"] = (tmp_path / "log").read_text()
    data["mark_on_host_tmp"] = data_host_mark
    data["id"] = probe_id
    return data


@pytest.fixture()
def secret(tmp_path: Path) -> Path:
    d = tmp_path / "task-set"
    d.mkdir()
    (d / "hidden.yaml").write_text("answer: gold\n")
    return d


@needs_bwrap
def test_bwrap_shows_the_workspace_and_runtimes_only(tmp_path: Path, secret: Path, monkeypatch) -> None:
    monkeypatch.setenv("PWD", str(secret))
    monkeypatch.setenv("OLDPWD", str(secret))
    monkeypatch.setenv("RUNNER_SECRET_KEY", "sk-runner")
    launcher = make_launcher(SandboxSettings(mode="bwrap"), secret_paths=secret_paths_for(secret))
    try:
        seen = run_probe(
            launcher,
            tmp_path,
            secret,
            env={"CTBENCH_TASK_ID": "T1", "LEAK": f"see {secret}", "PROBE_SYSTEM": "1"},
        )
    finally:
        launcher.close()
    assert seen["cwd"] == seen["ws"] and seen["env"]["HOME"] == seen["ws"]
    assert seen["secret"] is False and "task-set" not in seen["secret_parent"]  # only what was mounted
    # an editable install from a checkout with tasks/: the package folder shows, the checkout does not
    import ctbench

    editable = Path(ctbench.__file__).resolve().parent.parent == REPO
    # a venv made inside the checkout (`python3 -m venv .venv`, as the README does) is bound too
    venv = Path(sys.prefix).resolve()
    inside = [venv.relative_to(REPO.resolve()).parts[0]] if venv.is_relative_to(REPO.resolve()) else []
    shown = sorted((["ctbench"] if editable else []) + inside)
    assert seen["repo"] == (shown or "FileNotFoundError") and seen["repo_tasks"] is False
    assert seen["root_home"] in ([".pyenv"], [], "FileNotFoundError") or ".bashrc" not in seen["root_home"]
    # the system folders, plus the top folders of the checkout and of the Python in use (bound read-only)
    own = {
        REPO.resolve().parts[1],
        Path(sys.prefix).resolve().parts[1],
        Path(sys.base_prefix).resolve().parts[1],
    }
    assert (
        set(seen["root"])
        <= {
            "bin",
            "dev",
            "etc",
            "lib",
            "lib32",
            "lib64",
            "libx32",
            "proc",
            "root",
            "run",
            "sbin",
            "tmp",
            "usr",
            "var",
            "home",
            "opt",
        }
        | own
    )
    assert len(seen["pids"]) <= 3  # bwrap's init, the probe (and its shell, if any): no other process
    env = seen["env"]
    assert "PWD" not in env or env["PWD"] == seen["ws"]
    assert "OLDPWD" not in env and "RUNNER_SECRET_KEY" not in env and "LEAK" not in env
    assert env["CTBENCH_TASK_ID"] == "T1"
    assert not any(str(secret) in v for v in env.values())
    assert "LEAK not passed to the agent" in seen["log"]
    writes = seen["writes"]
    assert writes[seen["ws"]] and writes[seen["io"]] and writes["/tmp"]
    assert not writes["/"] and not writes["/etc"] and not writes["/usr"]
    assert seen["host_tmp_marker"] is False  # a private /tmp
    assert (Path(seen["ws"]) / f"probe-mark-{seen['id']}").exists() and not seen["mark_on_host_tmp"]


def test_none_passes_the_runner_environment_and_sees_everything(
    tmp_path: Path, secret: Path, monkeypatch
) -> None:
    monkeypatch.setenv("RUNNER_SECRET_KEY", "sk-runner")
    seen = run_probe(NoSandbox(), tmp_path, secret)
    assert seen["secret"] is True and seen["host_tmp_marker"] is True and seen["mark_on_host_tmp"] is True
    assert seen["env"]["RUNNER_SECRET_KEY"] == "sk-runner"


@needs_bwrap
def test_refuses_to_mount_a_secret_path(tmp_path: Path, secret: Path) -> None:
    launcher = make_launcher(SandboxSettings(mode="bwrap"), secret_paths=secret_paths_for(secret))
    try:
        for bad in (secret, secret / "hidden.yaml", secret.parent):
            with pytest.raises(SandboxError, match="must not see"):
                launcher.prepare(Launch(argv=["/bin/true"], workspace=tmp_path, read_only=(bad,)))
    finally:
        launcher.close()


@needs_bwrap
def test_a_file_on_the_command_line_is_shown_unless_it_lies_in_any_task_set(
    tmp_path: Path, secret: Path
) -> None:
    """An agent script named by path is bound read-only; a file of another copy of a task set (same gold,
    not the run's task set) named by mistake in --agent-cmd is refused, not mounted."""
    other = tmp_path / "other-checkout" / "tasks"
    (other / "rca" / "RCA-001").mkdir(parents=True)
    (other / "ctbench.yaml").write_text("canary: x\n")
    gold = other / "rca" / "RCA-001" / "hidden.yaml"
    gold.write_text("answer: gold\n")
    script = tmp_path / "agent.py"
    script.write_text("print('hi')\n")
    launcher = make_launcher(SandboxSettings(mode="bwrap"), secret_paths=secret_paths_for(secret))
    try:
        prepared = launcher.prepare(Launch(argv=["/bin/cat", str(script)], workspace=tmp_path / "ws"))
        assert str(script.resolve()) in prepared.argv
        with pytest.raises(SandboxError, match="inside the task set"):
            launcher.prepare(Launch(argv=["/bin/cat", str(gold)], workspace=tmp_path / "ws"))
    finally:
        launcher.close()


def test_git_folder_of_a_checkout_is_secret_but_not_its_package(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    (repo / "tasks").mkdir(parents=True)
    (repo / "ctbench").mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    secrets = secret_paths_for(repo / "tasks")
    assert repo / ".git" in secrets and repo / "tasks" in secrets and repo not in secrets


def test_auto_without_bubblewrap_refuses_in_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap anywhere
    with pytest.raises(SandboxError) as exc:
        make_launcher(SandboxSettings(mode="auto"))
    text = str(exc.value)
    assert "apt-get install -y bubblewrap" in text and "--sandbox none" in text and "\n" not in text
    assert isinstance(make_launcher(SandboxSettings(mode="none")), NoSandbox)


def test_cli_auto_without_bubblewrap_refuses_an_external_agent(task_set: Path, tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}  # no bwrap on PATH
    proc = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "command",
        "--agent-cmd",
        f"{sys.executable} -c pass",
        "--tasks",
        str(task_set),
        "--out",
        str(tmp_path / "run"),
        "--progress",
        "none",
        env=env,
    )
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "bubblewrap" in lines[0] and "--sandbox none" in lines[0], proc.stderr
    assert not (tmp_path / "run" / "results.jsonl").exists()
    # in-process agents need no sandbox
    ok = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "oracle",
        "--tasks",
        str(task_set),
        "--out",
        str(tmp_path / "oracle"),
        "--progress",
        "none",
        "--no-score",
        env=env,
    )
    assert ok.returncode == 0, ok.stderr


@needs_bwrap
@pytest.mark.parametrize("runner_netns", [True, False], ids=["runner-network", "forwarder-inside"])
def test_loopback_reaches_the_replay_and_the_model_only(
    task_set: Path, tmp_path: Path, runner_netns: bool
) -> None:
    """Both ways to the attempt's own network: made by a root runner and served from it, or made
    by bubblewrap and served by the forwarder inside (a runner that is not root)."""
    model = socket.socket()
    model.bind(("127.0.0.1", 0))
    model.listen(8)
    model_port = model.getsockname()[1]

    def answer() -> None:
        while True:
            try:
                conn, _ = model.accept()
            except OSError:
                return
            conn.recv(4096)
            conn.sendall(b"HTTP/1.0 200 OK\r\ncontent-length: 8\r\n\r\nmodel-ok")
            conn.close()

    threading.Thread(target=answer, daemon=True).start()
    elsewhere = socket.socket()
    elsewhere.bind(("127.0.0.1", 0))
    elsewhere.listen(8)
    other_port = elsewhere.getsockname()[1]
    engine = ReplayEngine(TaskSet.open(task_set))
    sock = tmp_path / "replay.sock"
    with serve_in_thread(engine, runner=True, unix_socket=sock) as handle:
        grant = handle.grant(engine.open_session("RCA-001"))
        launcher = make_launcher(
            SandboxSettings(mode="bwrap", network="loopback"),
            replay_url=handle.url,
            replay_socket=sock,
            model_endpoints=[f"http://127.0.0.1:{model_port}/v1"],
            runner_netns=runner_netns,
        )
        script = tmp_path / "net.py"
        script.write_text(f"""
import json, socket, urllib.request
def get(url, headers={{}}):
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5).read().decode()
    except Exception as exc:
        return type(exc).__name__
def connect(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return "open"
    except OSError as exc:
        return type(exc).__name__
print(json.dumps({{
    "devices": get("{handle.url}/sessions/{grant.session_id}/devices", {{"authorization": "Bearer {grant.token}"}}),
    "model": get("http://127.0.0.1:{model_port}/v1"),
    "other": connect({other_port}),
    "outside": connect(80),
}}))
""")
        ws = tmp_path / "ws"
        ws.mkdir()
        try:
            code = asyncio.run(
                run_agent_process(
                    Launch(argv=[sys.executable, str(script)], workspace=ws),
                    log=Log(tmp_path / "log"),
                    launcher=launcher,
                    stdout=ws / "out.json",
                )
            )
        finally:
            launcher.close()
    model.close()
    elsewhere.close()
    assert code == 0, (tmp_path / "log").read_text()
    seen = json.loads((ws / "out.json").read_text())
    assert "CORE_SW_01" in seen["devices"] and seen["model"] == "model-ok"
    assert seen["other"] != "open" and seen["outside"] != "open"


@needs_bwrap
@pytest.mark.parametrize(
    ("capability", "runner_netns"),
    [(True, True), (True, False), (False, False)],
    ids=["as-shipped", "forwarder-inside", "protection-off-no-capability"],
)
def test_loopback_serves_an_https_model_endpoint_on_port_443(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capability: bool, runner_netns: bool
) -> None:
    """The usual model endpoint (``https://HOST/v1``) is on a port below 1024. A root runner binds
    it in the attempt's network itself (``as-shipped`` here); where bubblewrap makes the network
    (a runner that is not root), the sandbox's forwarder gets the capability to listen there (in its
    own network only); without it the run refuses to start, in one line, rather than every attempt
    failing to reach its model."""
    from ctbench.evaluate.sandbox import BwrapSandbox

    if not capability:
        monkeypatch.setattr(BwrapSandbox, "_bind_service_args", lambda self: [])
        with pytest.raises(SandboxError) as err:
            make_launcher(
                SandboxSettings(mode="bwrap", network="loopback"),
                model_endpoints=["https://model.example.invalid/v1"],
                runner_netns=False,
            )
        assert "cannot listen on port 443 for the model endpoint" in str(err.value)
        assert "--sandbox-network host" in str(err.value) and "\n" not in str(err.value)
        return
    launcher = make_launcher(
        SandboxSettings(mode="bwrap", network="loopback"),
        model_endpoints=["https://model.example.invalid/v1"],
        runner_netns=runner_netns,
    )
    assert (getattr(launcher, "forwarder", None) is not None) == (runner_netns and os.geteuid() == 0)
    script = tmp_path / "net.py"
    script.write_text(
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('model.example.invalid', 443), timeout=5).close()\n"
        "    print('open')\n"
        "except OSError as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    try:
        code = asyncio.run(
            run_agent_process(
                Launch(argv=[sys.executable, str(script)], workspace=ws),
                log=Log(tmp_path / "log"),
                launcher=launcher,
                stdout=ws / "out.txt",
            )
        )
    finally:
        launcher.close()
    assert code == 0, (tmp_path / "log").read_text()
    assert (ws / "out.txt").read_text().strip() == "open"  # the name maps to 127.0.0.1, port 443 listens


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="a runner that is not root leaves the network to bubblewrap")
@pytest.mark.parametrize("network", ["loopback", "host"], ids=["as-shipped", "protection-off-host"])
def test_a_root_runner_gives_each_attempt_a_network_of_its_own_and_frees_it(
    tmp_path: Path, network: str
) -> None:
    """The runner-made namespace: each attempt's agent is in a network that is neither the runner's
    nor another attempt's, and once the attempt ends the runner holds nothing of it (no listening
    socket, no namespace descriptor). Under ``host`` every agent shares the runner's network."""
    launcher = make_launcher(SandboxSettings(mode="bwrap", network=network), runner_netns=True)  # type: ignore[arg-type]
    forwarder = getattr(launcher, "forwarder", None)
    assert (forwarder is not None) == (network == "loopback")
    fds_before = len(os.listdir("/proc/self/fd"))
    seen = []
    try:
        for i in range(2):
            ws = tmp_path / f"ws{i}"
            ws.mkdir()
            code = asyncio.run(
                run_agent_process(
                    Launch(argv=["/bin/sh", "-c", "readlink /proc/self/ns/net"], workspace=ws),
                    log=Log(tmp_path / "log"),
                    launcher=launcher,
                    stdout=ws / "ns.txt",
                )
            )
            assert code == 0, (tmp_path / "log").read_text()
            seen.append((ws / "ns.txt").read_text().strip())
            if forwarder is not None:
                assert not forwarder._open  # released when its process tree ended
    finally:
        launcher.close()
    runner = os.readlink("/proc/self/ns/net")
    if network == "host":
        assert seen == [runner, runner]
        return
    assert seen[0].startswith("net:[") and runner not in seen and seen[0] != seen[1]
    assert len(os.listdir("/proc/self/fd")) <= fds_before  # no socket or namespace left open


# --------------------------------------------------------------------------- dying with the runner


HUNG = """\
import subprocess, sys, time
sys.stdin.read()
marker = sys.argv[1]
subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                  "time.sleep(300)", marker + "-child"])
time.sleep(300)
"""


def processes(marker: str) -> list[int]:
    out = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(entry.name) != os.getpid() and any(marker.encode() in part for part in cmd):
            try:
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state != "Z":
                out.append(int(entry.name))
    return out


def wait_for(cond: Any, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return False


def start_runner(
    task_set: Path, out: Path, script: Path, marker: str, sandbox: str
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CTBENCH_DEBUG", None)
    argv = [
        sys.executable,
        "-m",
        "ctbench.evaluate.cli",
        "run",
        "--allow-unreviewed",
        "--agent",
        "command",
        "--agent-cmd",
        f"{sys.executable} {script} {marker}",
        "--tasks",
        str(task_set),
        "--out",
        str(out),
        "--concurrency",
        "2",
        "--progress",
        "none",
        "--no-score",
        "--sandbox",
        sandbox,
        "--timeout",
        "600",
    ]
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def owner(folder: Path) -> int | None:
    try:
        return int(json.loads(owner_record(folder).read_text())["runner_pid"])
    except (OSError, ValueError, KeyError):
        return None


def workspaces() -> set[Path]:
    tmp = Path(tempfile.gettempdir())
    return set(tmp.glob("ctbench-ws-*")) | set(tmp.glob("ctbench-run-*"))  # workspaces, the replay socket's


@pytest.mark.parametrize("sandbox", [pytest.param("bwrap", marks=needs_bwrap), "none"])
def test_agents_die_with_a_sigkilled_runner_and_the_next_run_cleans_up(
    sandbox: str, task_set: Path, tmp_path: Path
) -> None:
    script = tmp_path / "hung.py"
    script.write_text(HUNG)
    marker = f"ctbench-hung-{os.getpid()}-{sandbox}"
    before = workspaces()
    runner = start_runner(task_set, tmp_path / "run", script, marker, sandbox)
    try:
        assert wait_for(lambda: len(processes(marker + "-child")) >= 2), "the agents did not start"
        assert len(processes(marker)) >= 4  # two agents, two children
        # this runner's folders (others on the machine may be running tests of their own)
        left = {p for p in workspaces() - before if owner(p) == runner.pid}
        assert len(left) >= 3 and any(p.name.startswith("ctbench-run-") for p in left)
        runner.send_signal(signal.SIGKILL)
        runner.wait()
        # the agents themselves die with the runner at once: PR_SET_PDEATHSIG, or bwrap --die-with-parent
        agents_gone = wait_for(
            lambda: not [p for p in processes(marker) if p not in processes(marker + "-child")], timeout=10
        )
        assert agents_gone, "agents outlived the runner"
        if sandbox == "bwrap":  # the whole PID namespace goes: the children too
            assert wait_for(lambda: not processes(marker), timeout=10), "the sandbox outlived the runner"
        # the next run (any agent) kills what is left of the dead run and removes its workspaces
        again = run_cli(
            "evaluate",
            "run",
            "--allow-unreviewed",
            "--agent",
            "oracle",
            "--tasks",
            str(task_set),
            "--out",
            str(tmp_path / "next"),
            "--progress",
            "none",
            "--no-score",
        )
        assert again.returncode == 0, again.stderr
        assert wait_for(lambda: not processes(marker), timeout=10), "the next run left the dead run's agents"
        assert not (left & workspaces()), "the dead run's workspaces are still there"
    finally:
        if runner.poll() is None:
            runner.kill()
        for pid in processes(marker):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("sandbox", [pytest.param("bwrap", marks=needs_bwrap), "none"])
def test_an_unsandboxed_run_says_so_on_the_scorecard_and_in_reports(
    sandbox: str, task_set: Path, tmp_path: Path
) -> None:
    script = tmp_path / "echo.py"
    script.write_text("import sys\nsys.stdin.read()\nprint('<answer>X;y;z</answer>')\n")
    out = tmp_path / "run"
    proc = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "command",
        "--agent-cmd",
        f"{sys.executable} {script}",
        "--tasks",
        str(task_set),
        "--out",
        str(out),
        "--progress",
        "none",
        "--sandbox",
        sandbox,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    # the harness column names the agent's command, whose path holds this test's name ("unsandboxed")
    said = proc.stdout.replace(str(tmp_path), "TMP")
    assert ("unsandboxed" in said) is (sandbox == "none"), proc.stdout
    assert load_fast(out / "run.yaml")["settings"]["agent"]["sandbox"]["mode"] == sandbox
    scores = json.loads((out / "scores.json").read_text())
    assert scores["run"]["sandbox"] == sandbox
    report = run_cli("evaluate", "report", str(out), timeout=300)
    assert report.returncode == 0, report.stderr
    assert ("unsandboxed" in report.stdout.replace(str(tmp_path), "TMP")) is (sandbox == "none"), (
        report.stdout
    )


@needs_bwrap
@pytest.mark.parametrize("network", ["host", "loopback"])
def test_a_run_works_when_the_temp_folder_is_too_long_for_a_unix_socket(
    task_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, network: str
) -> None:
    """A deep $TMPDIR (pytest's under xdist, a CI runner's): the replay socket and the loopback relays
    would pass the 107-byte limit of a Unix socket path; the runner puts them in a short folder instead."""
    from ctbench.evaluate.runner import Runner, RunSettings

    deep = tmp_path / ("d" * 60) / ("e" * 40)
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    script = tmp_path / "agent.py"
    script.write_text("print('CORE_SW_01;GigabitEthernet0/0/24;shutdown')\n")
    report = Runner(
        RunSettings(
            agent="command",
            agent_cmd=f"{sys.executable} {script}",
            tasks=task_set,
            out=tmp_path / "run",
            select="RCA-001",
            allow_unreviewed=True,
            sandbox="bwrap",
            sandbox_network=network,
            timeout_s=60,
        )
    ).run()
    (line,) = [json.loads(x) for x in (report.folder / "results.jsonl").read_text().splitlines()]
    assert line["status"] == "answered" and line["error"] is None, line
    assert line["answer"]["rca"][0]["node"] == "CORE_SW_01"
