"""``?`` help and Tab completion through every transport: engine, MCP (real client), HTTP, shell (pty).

Whatever the shell shows for ``display ?``, the MCP and HTTP ``run_command`` answer the same text;
the call is in the trajectory as ``help`` (never executed, never denied), and help is the grammar's:
two devices of one OS with different recordings get the same list.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from ctbench.replay.engine import ReplayEngine
from ctbench.replay.observation import Outcome
from ctbench.replay.shell import DeviceShell
from ctbench.store import TaskSet
from tests.test_replay_http import exec_cli, start_serve
from tests.test_replay_mcp import run_async, stdio_session, text
from tests.test_replay_support import ALL_TASK, build_vendor_task_set

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
ENV.pop("CTBENCH_DEBUG", None)

# One help request per vendor and position, on the vendor lab of the captures.
REQUESTS = [
    ("VRP_01", "?"),
    ("VRP_01", "display ?"),
    ("VRP_01", "dis int b?"),
    ("VRP_01", "display clock ?"),
    ("VRP_01", "display clock | ?"),
    ("CMW_01", "display ip ?"),
    ("IOS_01", "show ip int b?"),
    ("IOS_01", "show clock | include ?"),
    ("NXOS_01", "show clock ?"),
    ("JUN_01", "show version ?"),
    ("JUN_01", "show zzz?"),
    ("VRP_01", "dis foo ?"),
]


@pytest.fixture(scope="module")
def vendor_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_vendor_task_set(tmp_path_factory.mktemp("help") / "tasks")


@pytest.fixture(scope="module")
def expected(vendor_root: Path) -> dict[tuple[str, str], str]:
    """What the dialect itself prints for each request, at the device's own prompt."""
    engine = ReplayEngine(TaskSet.open(vendor_root))
    task = engine.task(ALL_TASK)
    out = {}
    for device, line in REQUESTS:
        dev = task.device(device)
        assert dev is not None
        out[(device, line)] = dev.dialect.help(line, dev.prompt)
    return out


def echoed(device: str, line: str, text: str) -> str:
    """The answer as a transport without a terminal gives it: a caret answer under its echoed line."""
    prompt = {"VRP": "<{}>", "CMW": "<{}>", "IOS": "{}#", "NXOS": "{}#", "JUN": "admin@{}> "}[
        device.split("_")[0]
    ]
    return f"{prompt.format(device)}{line}\n{text}" if text.lstrip(" ").startswith("^") else text


def test_engine_answers_help_and_logs_it_as_help(
    vendor_root: Path, tmp_path: Path, expected: dict[tuple[str, str], str]
) -> None:
    traj = tmp_path / "t.jsonl"
    session = ReplayEngine(TaskSet.open(vendor_root)).open_session(ALL_TASK, trajectory_path=traj)
    for device, line in REQUESTS:
        obs = session.run(device, line)
        assert obs.outcome is Outcome.HELP and obs.canonical is None
        assert obs.text == expected[(device, line)]
        assert obs.with_echo() == echoed(device, line, obs.text)
    session.close()
    rows = [json.loads(x) for x in traj.read_text().splitlines()]
    assert {r["outcome"] for r in rows} == {"help"} and len(rows) == len(REQUESTS)


def test_help_does_not_depend_on_recordings(tmp_path: Path) -> None:
    """VRP_01 has every VRP capture, VRP_02 only the commands captured twice plus one command outside
    the vendor tree (valid for this task only), RCA-001's switch others again: the lists are the same,
    so neither help nor Tab can tell what was recorded."""
    root = build_vendor_task_set(tmp_path / "tasks")
    task_dir = root / "rca" / ALL_TASK
    spec = json.loads((task_dir / "task.yaml").read_text())
    (task_dir / "recordings" / "VRP_02" / "zz.txt").write_text("secret\n")
    spec["recordings"].append(
        {"device": "VRP_02", "command": "display zzsecret probe", "file": "recordings/VRP_02/zz.txt"}
    )
    (task_dir / "task.yaml").write_text(json.dumps(spec))
    vendor = ReplayEngine(TaskSet.open(root)).open_session(ALL_TASK)
    bundled = ReplayEngine(TaskSet.open(REPO / "tasks")).open_session("RCA-001")
    one, two = vendor.task.device("VRP_01"), vendor.task.device("VRP_02")
    assert one is not None and two is not None and one.recorded != two.recorded
    assert vendor.run("VRP_02", "dis zzs probe").outcome is Outcome.RECORDED  # the task's own command works
    for line in (
        "display ?",
        "dis z?",
        "display ip ?",
        "display interface ?",
        "dis cu?",
        "display bgp peer ?",
    ):
        a = vendor.run("VRP_01", line).text
        assert a == vendor.run("VRP_02", line).text
        assert a.replace("<VRP_01>", "<CORE_SW_01>") == bundled.run("CORE_SW_01", line).text
    assert "zzsecret" not in vendor.run("VRP_02", "display ?").text
    assert vendor.complete("VRP_01", "dis c") == vendor.complete("VRP_02", "dis c")
    assert vendor.complete("VRP_02", "display zz") == []


def test_mcp_run_command_answers_help_like_the_shell(
    vendor_root: Path, tmp_path: Path, expected: dict[tuple[str, str], str]
) -> None:
    traj = tmp_path / "trajectories" / f"{ALL_TASK}.jsonl"

    async def main() -> None:
        async with stdio_session(ALL_TASK, "--tasks", str(vendor_root), "--trajectory", str(traj)) as s:
            for device, line in REQUESTS:
                res = await s.call_tool("run_command", {"device": device, "command": line})
                assert not res.is_error and res.meta["outcome"] == "help"
                assert text(res) == echoed(device, line, expected[(device, line)])

    run_async(main)
    assert {json.loads(x)["outcome"] for x in traj.read_text().splitlines()} == {"help"}


def test_http_run_answers_help_like_the_shell(
    vendor_root: Path, expected: dict[tuple[str, str], str]
) -> None:
    proc, url = start_serve("--tasks", str(vendor_root))
    http = httpx.Client(timeout=60)  # a session compiles every vendor's grammar: slow on a busy machine
    try:
        sid = http.post(f"{url}/sessions", json={"task_id": ALL_TASK}).json()["session_id"]
        for device, line in REQUESTS:
            obs = http.post(f"{url}/sessions/{sid}/run", json={"device": device, "command": line}).json()
            assert obs["outcome"] == "help" and obs["canonical"] is None
            assert obs["text"] == expected[(device, line)]
        records = http.get(f"{url}/sessions/{sid}/trajectory").json()["records"]
        assert [r["outcome"] for r in records] == ["help"] * len(REQUESTS)
        # ctb-replay exec (agents with only a shell): the same text, and help is not a failure.
        shown = exec_cli(url, sid, "exec", "NXOS_01", "show clock ?")
        assert shown.returncode == 0 and shown.stdout == expected[("NXOS_01", "show clock ?")]
        wrong = exec_cli(url, sid, "exec", "VRP_01", "dis foo ?")
        assert wrong.returncode == 0 and wrong.stdout == echoed(
            "VRP_01", "dis foo ?", expected[("VRP_01", "dis foo ?")]
        )
        assert wrong.stdout.splitlines()[1] == " " * len("<VRP_01>dis ") + "^"  # under "foo" of the echo
    finally:
        http.close()
        proc.terminate()
        proc.wait(10)


def test_shell_core_answers_help_and_completes(
    vendor_root: Path, expected: dict[tuple[str, str], str]
) -> None:
    shell = DeviceShell(ReplayEngine(TaskSet.open(vendor_root)).open_session(ALL_TASK))
    for device, line in REQUESTS:
        shell.feed(f"connect {device}")
        assert shell.feed(line) == expected[(device, line)]
        shell.feed("quit")
    shell.feed("connect IOS_01")
    assert shell.complete("int", "show ip int") == ["interface "]
    assert shell.complete("s", "show ip s") == ["sla", "sockets", "source", "ssh"]


# --------------------------------------------------------------------------- a real terminal


class Pty:
    """``ctb-replay shell`` on a pseudo-terminal: keys in, what the screen shows out."""

    def __init__(self, tasks: Path, task: str, home: Path) -> None:
        import pty

        self.master, slave = pty.openpty()
        env = {**ENV, "XDG_STATE_HOME": str(home), "TERM": "dumb"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ctbench.replay.cli", "shell", task, "--tasks", str(tasks)],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            close_fds=True,
        )
        os.close(slave)
        self.seen = b""

    def send(self, keys: bytes) -> int:
        mark = len(self.seen)
        os.write(self.master, keys)
        return mark

    def until(self, marker: bytes, start: int = 0, timeout: float = 20) -> bytes:
        deadline = time.monotonic() + timeout
        while marker not in self.seen[start:]:
            left = deadline - time.monotonic()
            assert left > 0, f"waited for {marker!r}, got {self.seen[-400:]!r}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:
                    break
        return self.seen[start:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        os.close(self.master)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_shell_in_a_terminal_answers_question_mark_at_once_and_tab_completes(
    vendor_root: Path, tmp_path: Path, expected: dict[tuple[str, str], str]
) -> None:
    term = Pty(vendor_root, ALL_TASK, tmp_path)
    try:
        term.until(b"VENDOR-ALL> ")
        mark = term.send(b"connect VRP_0?")  # the jump host answers '?' at once too, and keeps the line
        listed = term.until(b"VENDOR-ALL> connect VRP_0", mark + len(b"connect VRP_0?"))
        assert b"  VRP_01\r\n" in listed and b"IOS_01" not in listed
        term.until(b"<VRP_01>", term.send(b"1\r"))
        # '?' answers without Enter, then the device types the line again for more input.
        mark = term.send(b"display clock ?")
        shown = term.until(b"<VRP_01>display clock ", mark).replace(b"\r\n", b"\n")
        assert expected[("VRP_01", "display clock ?")].encode() in shown
        term.send(b"\x15")  # Ctrl-U: clear the line
        # Tab: a unique prefix completes (with the blank after it) ...
        mark = term.send(b"dis cu\t")
        term.until(b"current-configuration ", mark)
        term.send(b"\x15")
        # ... an ambiguous one lists the candidates on the second Tab, as the device does on '?'.
        mark = term.send(b"dis ip rou\t\t")
        term.until(b"routing-table ", mark)
        term.send(b"\x15")
        mark = term.send(b"display c\t\t")
        # the list is complete when the prompt and the line are printed again under it
        listed = term.until(b"\n<VRP_01>display c", mark)
        assert all(w in listed for w in (b"clock", b"cpu-usage", b"css", b"current-configuration"))
        term.send(b"\x15quit\r")
        term.until(b"admin@JUN_01> ", term.send(b"connect JUN_01\r"))
        mark = term.send(b"show version ?")
        shown = term.until(b"admin@JUN_01> show version ", mark).replace(b"\r\n", b"\n")
        assert expected[("JUN_01", "show version ?")].encode() in shown
        term.send(b"\x15quit\r")
        term.send(b"exit\r")
        assert term.proc.wait(20) == 0
    finally:
        term.close()


def test_shell_says_a_host_has_no_cli_and_why_an_empty_device_denies(tmp_path: Path) -> None:
    """Small truths for a person at the shell; agents keep the device's plain texts."""
    root = build_vendor_task_set(tmp_path / "tasks")
    task_file = root / "rca" / ALL_TASK / "task.yaml"
    spec = json.loads(task_file.read_text())
    spec["accessible"].append("SECRET_RTR")  # now reachable, but nothing recorded on it
    task_file.write_text(json.dumps(spec))
    session = ReplayEngine(TaskSet.open(root)).open_session(ALL_TASK)
    shell = DeviceShell(session)
    host = shell.feed("connect pc_01")
    assert host.startswith("PC_01 is a pc without a command line") and "VRP_01" in host
    assert "Unknown device" in shell.feed("connect NOPE_9")
    agent = session.run("PC_01", "show version")
    assert agent.outcome is Outcome.UNKNOWN_DEVICE and "Unknown device 'PC_01'" in agent.text

    hello = shell.feed("connect SECRET_RTR")
    assert "nothing was recorded on SECRET_RTR" in hello
    denial = session.task.device("SECRET_RTR").dialect.denied_text("show version")  # type: ignore[union-attr]
    first = shell.feed("show version")
    assert first.startswith(denial) and "[ctbench: nothing was recorded on SECRET_RTR" in first
    assert shell.feed("show clock") == denial.replace("show version", "show clock")  # said once
    assert session.run("SECRET_RTR", "show version").text == denial  # the agent's answer is the device's
    shell.feed("quit")
    shell.feed("connect VRP_01")
    assert "nothing was recorded" not in shell.feed("display ospf peer")  # denied, but VRP_01 has recordings
