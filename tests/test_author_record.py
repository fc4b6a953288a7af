"""``ctb-author record`` against ``ctb-replay ssh`` as the "device": a byte-exact round trip.

The server replays the bundled tasks; the recorder (netmiko, a real subprocess) logs into every
device of one task per CLI family and writes into a copy of the task set whose recordings of that
task were removed. What it writes must be the original recordings, byte for byte (CRLF captures and
trailing blank lines included); killed half-way and started again, it asks only for the rest.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ruamel.yaml import YAML

# The recorder (netmiko) and the SSH device it records from (asyncssh) are extras: without them this
# module skips, as `pip install -e ".[test]"` alone must give a green suite.
pytest.importorskip("asyncssh", reason="needs: pip install -e '.[ssh,record]'")
pytest.importorskip("netmiko", reason="ctb-author record needs: pip install -e '.[record]'")

from tests.ssh_support import PASSWORD, REPO, SshServer, start_ssh  # noqa: E402 - after the extras check

TASKS = REPO / "tasks"
ROUND_TRIP = ("PATH-011", "PATH-006")
"""Together every CLI family: IOS, VRP, Comware and Junos in PATH-011; NX-OS (and more) in PATH-006."""

pytestmark = pytest.mark.xdist_group("ssh")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, SshServer]]:
    state = tmp_path_factory.mktemp("record-state")
    running = {task: start_ssh(task, TASKS, state) for task in ROUND_TRIP}
    try:
        yield running
    finally:
        for server in running.values():
            assert "Traceback" not in server.stop()


def stripped_copy(dst: Path, task_id: str) -> tuple[Path, dict[str, list[str]]]:
    """A copy of the bundled set with ``task_id``'s recordings removed; returns its folder and commands."""
    shutil.copytree(TASKS, dst)
    folder = next(dst.glob(f"*/{task_id}"))
    yaml = YAML()
    doc = yaml.load((folder / "task.yaml").read_text())
    commands: dict[str, list[str]] = {}
    for rec in doc["recordings"]:
        commands.setdefault(rec["device"], []).append(rec["command"])
    doc["recordings"] = []
    with (folder / "task.yaml").open("w") as fh:
        yaml.dump(doc, fh)
    shutil.rmtree(folder / "recordings")
    return folder, commands


def write_plan(path: Path, server: SshServer, commands: dict[str, list[str]]) -> Path:
    devices = [
        {"device": d, "host": "127.0.0.1", "port": server.port, "username": d, "commands": cmds}
        for d, cmds in commands.items()
    ]
    path.write_text(json.dumps({"devices": devices}))  # JSON is YAML
    return path


def record_argv(task_id: str, tasks: Path, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ctbench.authoring.cli",
        "record",
        "--task",
        task_id,
        "--tasks",
        str(tasks),
        *args,
    ]


def env(password: str = PASSWORD) -> dict[str, str]:
    out = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "CTBENCH_DEVICE_PASSWORD": password,
        "CTBENCH_AUTHOR": "t <t@x>",
    }
    out.pop("CTBENCH_DEBUG", None)
    return out


def agent_commands(server: SshServer, since: int = 0) -> list[tuple[str, str]]:
    lines = server.trajectory.read_text().splitlines()[since:]
    rows = [json.loads(x) for x in lines if x.strip()]
    return [(r["device"], r["command"]) for r in rows if r["outcome"] != "session"]


@pytest.mark.parametrize("task_id", ROUND_TRIP)
def test_record_gives_back_the_recordings_byte_for_byte(
    servers: dict[str, SshServer], task_id: str, tmp_path: Path
) -> None:
    server = servers[task_id]
    folder, commands = stripped_copy(tmp_path / "tasks", task_id)
    plan = write_plan(tmp_path / "plan.yaml", server, commands)
    done = subprocess.run(
        record_argv(task_id, tmp_path / "tasks", "--plan", str(plan), "--json"),
        capture_output=True,
        text=True,
        env=env(),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sum(s["action"] == "recorded" for s in report["steps"]) == sum(map(len, commands.values()))
    original = next(TASKS.glob(f"*/{task_id}"))
    files = sorted(p.relative_to(original) for p in (original / "recordings").rglob("*") if p.is_file())
    assert files
    for rel in files:
        assert (folder / rel).read_bytes() == (original / rel).read_bytes(), rel
    # the index is the original's too: same (device, command, file) entries
    yaml = YAML(typ="safe")
    want = {
        (r["device"], r["command"], r["file"])
        for r in yaml.load((original / "task.yaml").read_text())["recordings"]
    }
    got = {
        (r["device"], r["command"], r["file"])
        for r in yaml.load((folder / "task.yaml").read_text())["recordings"]
    }
    assert got == want


def test_killed_half_way_it_finishes_without_asking_again(
    servers: dict[str, SshServer], tmp_path: Path
) -> None:
    server = servers["PATH-011"]
    folder, commands = stripped_copy(tmp_path / "tasks", "PATH-011")
    plan = write_plan(tmp_path / "plan.yaml", server, commands)
    total = sum(map(len, commands.values()))
    start = len(server.trajectory.read_text().splitlines())
    proc = subprocess.Popen(
        record_argv("PATH-011", tmp_path / "tasks", "--plan", str(plan)),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env(),
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    for line in proc.stderr:  # progress lines: kill it hard once 4 outputs are written
        if " 4/" in line and "bytes" in line:
            proc.send_signal(signal.SIGKILL)
            break
        assert time.monotonic() < deadline
    proc.wait(30)
    first = agent_commands(server, start)
    recorded_first = [p for p in (folder / "recordings").rglob("*") if p.is_file()]
    assert 4 <= len(recorded_first) < total
    middle = len(server.trajectory.read_text().splitlines())
    done = subprocess.run(
        record_argv("PATH-011", tmp_path / "tasks", "--plan", str(plan), "--json"),
        capture_output=True,
        text=True,
        env=env(),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    second = agent_commands(server, middle)
    report = json.loads(done.stdout)
    kept = [s for s in report["steps"] if s["action"] == "kept"]
    assert len(kept) == len(recorded_first)
    # the second run asked each device only for what the first did not write
    assert len(second) == total - len(recorded_first)
    assert not set(second) & {(s["device"], s["command"]) for s in kept}
    original = TASKS / "path" / "PATH-011"
    for rel in (p.relative_to(original) for p in (original / "recordings").rglob("*") if p.is_file()):
        assert (folder / rel).read_bytes() == (original / rel).read_bytes(), rel
    assert len(first) >= 4


def test_record_in_git_commits_once_and_writes_no_credential(
    servers: dict[str, SshServer], tmp_path: Path
) -> None:
    server = servers["PATH-011"]
    tasks = tmp_path / "tasks"
    folder, commands = stripped_copy(tasks, "PATH-011")
    git = ["git", "-C", str(tasks), "-c", "user.name=t", "-c", "user.email=t@x"]
    subprocess.run(["git", "init", "-q", str(tasks)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    commands_file = tmp_path / "gw.txt"
    commands_file.write_text("# the gateway\n" + "\n".join(commands["GW_01"]) + "\n\n")
    done = subprocess.run(
        record_argv(
            "PATH-011",
            tasks,
            "--device",
            "GW_01",
            "--host",
            "127.0.0.1",
            "--port",
            str(server.port),
            "--username",
            "GW_01",
            "--commands-file",
            str(commands_file),
        ),
        capture_output=True,
        text=True,
        env=env(),
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "committed" in done.stdout
    log = subprocess.run([*git, "log", "--format=%s"], capture_output=True, text=True, check=True).stdout
    assert log.splitlines()[0].startswith("PATH-011") and len(log.splitlines()) == 2
    assert subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True).stdout == ""
    leaked = subprocess.run(["grep", "-rl", PASSWORD, str(tasks)], capture_output=True, text=True)
    assert leaked.stdout == ""  # not in the task files, nor in any git object (they are compressed:
    objects = subprocess.run([*git, "log", "-p", "--all"], capture_output=True, text=True).stdout
    assert PASSWORD not in objects  # so the history is read through git too)
    assert (folder / "recordings" / "GW_01").is_dir()


def test_a_refused_login_names_the_device_and_the_step(servers: dict[str, SshServer], tmp_path: Path) -> None:
    server = servers["PATH-011"]
    tasks = tmp_path / "tasks"
    stripped_copy(tasks, "PATH-011")
    commands_file = tmp_path / "c.txt"
    commands_file.write_text("display arp all\n")
    base = [
        "--device",
        "CORE_SW_01",
        "--host",
        "127.0.0.1",
        "--port",
        str(server.port),
        "--username",
        "CORE_SW_01",
        "--commands-file",
        str(commands_file),
        "--no-commit",
    ]
    done = subprocess.run(
        record_argv("PATH-011", tasks, *base), capture_output=True, text=True, env=env("wrong"), timeout=120
    )
    assert done.returncode != 0
    assert "CORE_SW_01: login to CORE_SW_01@127.0.0.1" in done.stderr
    assert "Traceback" not in done.stderr
    commands_file.write_text("display arp all\ndisplya version\n")
    done = subprocess.run(
        record_argv("PATH-011", tasks, *base), capture_output=True, text=True, env=env(), timeout=120
    )
    assert done.returncode != 0
    assert "CORE_SW_01: 'displya version': the device refused it: Error: Unrecognized command" in done.stderr
    assert "Traceback" not in done.stderr
    # what came before the refusal is kept (and not asked again); the refusal is never a recording
    kept = [p.name for p in (tasks / "path" / "PATH-011" / "recordings").rglob("*") if p.is_file()]
    assert kept == ["display_arp_all.txt"]
