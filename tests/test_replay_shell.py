"""``ctb-replay shell``: the line-driven core, a piped subprocess, and a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctbench.replay.engine import ReplayEngine
from ctbench.replay.shell import DeviceShell
from ctbench.store import TaskSet

REPO = Path(__file__).resolve().parents[1]
TASKS = REPO / "tasks"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
ENV.pop("CTBENCH_DEBUG", None)


def rec(device: str, name: str) -> str:
    return (TASKS / "rca" / "RCA-001" / "recordings" / device / name).read_text()


@pytest.fixture
def shell() -> DeviceShell:
    return DeviceShell(ReplayEngine(TaskSet.open(TASKS)).open_session("RCA-001"))


def test_home_prompt_and_connect(shell: DeviceShell) -> None:
    assert shell.prompt == "ctbench RCA-001> "
    assert "CORE_SW_01" in shell.banner() and "PC_01" not in shell.banner()
    assert "connect DEVICE" in shell.feed("help")
    assert "Huawei" in shell.feed("devices")
    assert "Connected to CORE_SW_01" in shell.feed("connect core_sw_01")
    assert shell.prompt == "<CORE_SW_01>"
    assert shell.feed("dis int br") == rec("CORE_SW_01", "display_interface_brief.txt")
    assert shell.feed("") == ""
    caret, message = shell.feed("dis foo").splitlines()
    assert caret == " " * len("<CORE_SW_01>dis ") + "^"
    assert message == "Error: Unrecognized command found at '^' position."
    assert "closed" in shell.feed("quit")
    assert shell.prompt == "ctbench RCA-001> "


def test_each_vendor_prompt_looks_like_the_device(shell: DeviceShell) -> None:
    prompts = {}
    for device in ("ACC_SW_01", "CORE_SW_01", "GW_01", "PE_01"):
        shell.feed(f"ssh {device}")
        prompts[device] = shell.prompt
        shell.feed("exit")
    assert prompts == {
        "ACC_SW_01": "<ACC_SW_01>",
        "CORE_SW_01": "<CORE_SW_01>",
        "GW_01": "GW_01#",
        "PE_01": "admin@PE_01> ",
    }


def test_unknown_inaccessible_and_host_devices(shell: DeviceShell) -> None:
    unknown = shell.feed("connect NOPE")
    host = shell.feed("connect PC_01")  # in the network, but a host without a CLI
    assert "Unknown device 'NOPE'" in unknown and "CORE_SW_01" in unknown
    assert host.startswith("PC_01 is a pc without a command line") and "CORE_SW_01" in host
    assert shell.current is None
    assert "Not connected" in shell.feed("display version")
    assert "usage" in shell.feed("connect")


def test_exit_ends_and_completion_offers_devices(shell: DeviceShell) -> None:
    assert shell.complete("CO", "connect CO") == ["CORE_SW_01"]
    assert shell.feed("connect ?").split() == [d.name for d in shell.session.devices()]
    assert shell.feed("connect ac?") == "  ACC_SW_01\n"
    assert shell.complete("d", "d") == ["devices"]
    shell.feed("connect GW_01")
    assert {"ip", "interfaces", "version"} <= set(shell.complete("", "show "))  # the vendor's keywords
    assert shell.complete("ver", "show ver") == ["version "]
    shell.feed("exit")
    shell.feed("exit")
    assert shell.done and shell.feed("connect GW_01") == ""


def test_piped_subprocess_gives_a_transcript(tmp_path: Path) -> None:
    traj = tmp_path / "t.jsonl"
    lines = "connect CORE_SW_01\ndis int br\ndis foo\nquit\nconnect GW_01\nsh ip route\nshow ip protocols\nexit\nexit\n"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctbench.replay.cli",
            "shell",
            "RCA-001",
            "--tasks",
            str(TASKS),
            "--trajectory",
            str(traj),
        ],
        input=lines,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "<CORE_SW_01>dis int br\n" + rec("CORE_SW_01", "display_interface_brief.txt") in out
    assert "<CORE_SW_01>dis foo\n" + " " * len("<CORE_SW_01>dis ") + "^\n" in out
    assert "GW_01#sh ip route\n" + rec("GW_01", "show_ip_route.txt") in out
    assert "ctbench RCA-001> exit" in out
    outcomes = [json.loads(x)["outcome"] for x in traj.read_text().splitlines()]
    assert outcomes == ["recorded", "invalid", "recorded", "denied"]


def test_shell_for_an_unknown_task_is_a_clean_error() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "ctbench.replay.cli", "shell", "NOPE-9", "--tasks", str(TASKS)],
        input="",
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert r.returncode == 1 and "task 'NOPE-9' not found" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_interactive_prompt_in_a_real_terminal(tmp_path: Path) -> None:
    import pty

    master, slave = pty.openpty()
    env = {**ENV, "XDG_STATE_HOME": str(tmp_path), "TERM": "dumb"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctbench.replay.cli", "shell", "RCA-001", "--tasks", str(TASKS)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    seen = b""

    def send(line: bytes) -> int:
        os.write(master, line + b"\r")
        return len(seen)

    def until(marker: bytes, start: int = 0, timeout: float = 20) -> None:
        nonlocal seen
        deadline = time.monotonic() + timeout
        while marker not in seen[start:]:
            left = deadline - time.monotonic()
            assert left > 0, f"waited for {marker!r}, got {seen[-400:]!r}"
            ready, _, _ = select.select([master], [], [], left)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break

    try:
        until(b"ctbench RCA-001> ")
        until(b"admin@PE_01> ", send(b"connect PE_01"))
        mark = send(b"show route 172.16.1.10")
        until(b"admin@PE_01>", mark + len(b"show route 172.16.1.10"))
        seen_after = seen[mark:]
        until(b"ctbench RCA-001> ", send(b"quit"))
        send(b"exit")
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    denial = ReplayEngine(TaskSet.open(TASKS)).dialect("juniper_junos").denied_text("show route 172.16.1.10")
    assert denial.strip().encode() in seen_after
    assert (tmp_path / "ctbench" / "replay_history").read_text().count("connect PE_01") == 1
