"""``ctb-replay ssh`` with the real clients: netmiko, scrapli and OpenSSH against a real server on 127.0.0.1.

The server is the real command in a subprocess; the clients are the libraries and the ``ssh`` binary
network engineers use. What they must get back is the recorded output of the bundled tasks, and
the trajectory must hold the commands they sent, with their session setup logged apart.
"""

from __future__ import annotations

import json
import os
import pty
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

# The SSH front end and the clients driven against it are extras: without them these tests skip,
# as `pip install -e ".[test]"` alone must give a green suite (.ci/run installs them and runs these).
pytest.importorskip("asyncssh", reason="ctb-replay ssh needs: pip install -e '.[ssh,ssh-clients]'")
pytest.importorskip("netmiko", reason="the SSH client tests need: pip install -e '.[ssh-clients]'")
pytest.importorskip("scrapli", reason="the SSH client tests need: pip install -e '.[ssh-clients]'")

from ctbench.replay.engine import ReplayEngine  # noqa: E402 - after the extras are known to be here
from ctbench.replay.login_banner import ios_motd, nxos_header
from ctbench.replay.observation import Outcome
from ctbench.replay.ssh_terminal import DeviceTerminal
from ctbench.store import TaskSet
from tests.ssh_support import NETMIKO_TYPES, PASSWORD, REPO, SCRAPLI_TYPES, SshServer, start_ssh

TASKS = REPO / "tasks"

CASES = [
    ("PATH-011", "GW_01", "cisco_ios"),
    ("PATH-011", "CORE_SW_01", "huawei_vrp"),
    ("PATH-011", "ACC_SW_01", "hp_comware"),
    ("PATH-011", "PE_01", "juniper_junos"),
    ("PATH-006", "DC_SPINE_01", "cisco_nxos"),
]
"""(task, device, CLI family): one bundled device with recordings per family."""


def recordings(task_id: str, device: str) -> dict[str, bytes]:
    engine = ReplayEngine(TaskSet.open(TASKS))
    task = engine.task(task_id)
    dev = task.devices[device]
    out: dict[str, bytes] = {}
    for command, rec in dev.index.items():
        if command == rec.command:
            data = engine.recording_bytes(task, rec)
            assert data is not None
            out[command] = data
    return out


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def lines_of(text: str | bytes) -> list[str]:
    """Text compared line by line, line endings and trailing blank lines aside."""
    if isinstance(text, bytes):
        text = text.decode()
    return text.replace("\r\n", "\n").rstrip("\n").split("\n")


def trimmed_lines(text: str | bytes) -> list[str]:
    """As scrapli returns output: trailing blanks of each line and blank lines at both ends removed."""
    return [line.rstrip() for line in "\n".join(lines_of(text)).strip("\n").split("\n")]


# --------------------------------------------------------------------------- the terminal itself


@pytest.fixture
def terminal() -> Iterator[DeviceTerminal]:
    engine = ReplayEngine(TaskSet.open(TASKS))
    with engine.open_session("PATH-011") as session:
        yield DeviceTerminal(session, "CORE_SW_01")


def test_terminal_buffers_input_until_enter_whatever_the_chunks(terminal: DeviceTerminal) -> None:
    assert terminal.greeting().endswith(b"\r\n<CORE_SW_01>")
    # scrapli writes the command, then its Enter; netmiko sends \n, a terminal \r, some clients \r\n
    assert terminal.feed(b"dis") == b"dis"
    assert terminal.feed(b" arp all") == b" arp all"
    out = terminal.feed(b"\r\n")
    assert out.startswith(b"\r\n") and out.endswith(b"\r\n<CORE_SW_01>")
    assert b"\n" not in out.replace(b"\r\n", b"")  # every line end goes out as CRLF
    assert terminal.feed(b"\n") == b"\r\n<CORE_SW_01>"  # a bare Enter: the prompt alone
    assert terminal.feed(b"\r") == b"\r\n<CORE_SW_01>"
    assert [r.command for r in terminal.session.trajectory] == ["dis arp all"]  # blank lines not logged


def test_terminal_edits_helps_and_completes_like_the_device(terminal: DeviceTerminal) -> None:
    terminal.feed(b"dis ipx\x7f")
    assert terminal.line == "dis ip"
    terminal.feed(b"\x15")  # Ctrl-U
    assert terminal.line == ""
    terminal.feed(b"display ip rou\x1b[A")  # an arrow key is swallowed
    assert terminal.line == "display ip rou"
    out = terminal.feed(b"\t")  # Tab completes the keyword with its blank
    assert out == b"ting-table " and terminal.line == "display ip routing-table "
    help_out = terminal.feed(b"?")  # answered at once, then the line comes back
    assert help_out.startswith(b"?\r\n")
    assert help_out.endswith(b"<CORE_SW_01>display ip routing-table ")
    assert terminal.line == "display ip routing-table "
    terminal.feed(b"\x03")
    assert terminal.line == ""
    assert terminal.feed(b"quit\n") == b"quit\r\n" and terminal.closed


def test_each_family_greets_with_its_login_banner() -> None:
    """VRP's VTY lines with the login time, Comware's copyright box, NX-OS's header; IOS and Junos
    print no banner of their own. None of it is a call."""
    engine = ReplayEngine(TaskSet.open(TASKS))
    at = datetime(2026, 12, 2, 8, 30, 5)
    with engine.open_session("PATH-011") as session:
        vrp = DeviceTerminal(session, "CORE_SW_01").greeting(now=at)
        assert vrp == (
            b"\r\nInfo: The max number of VTY users is 10, and the number\r\n"
            b"      of current VTY users on line is 1.\r\n"
            b"      The current login time is 2026-12-02 08:30:05.\r\n<CORE_SW_01>"
        )
        comware = DeviceTerminal(session, "ACC_SW_01").greeting()
        assert comware.startswith(b"\r\n*****") and comware.endswith(b"*\r\n\r\n<ACC_SW_01>")
        assert b"* Copyright (c) 2004-2017 New H3C Technologies Co., Ltd. All rights reserved.*" in comware
        assert DeviceTerminal(session, "GW_01").greeting() == b"\r\nGW_01#"
        assert DeviceTerminal(session, "PE_01").greeting() == f"\r\n{session.prompt('PE_01')}".encode()
        assert session.trajectory == []
    with engine.open_session("PATH-006") as session:
        nxos = DeviceTerminal(session, "DC_SPINE_01").greeting()
        assert nxos.startswith(b"\r\nCisco Nexus Operating System (NX-OS) Software\r\nTAC support:")
        assert nxos.endswith(b"library.txt.\r\nDC_SPINE_01#")


def test_a_vrp8_device_greets_with_vrp8_s_one_line_form(tmp_path: Path) -> None:
    import shutil

    from ruamel.yaml import YAML

    tasks = tmp_path / "tasks"
    shutil.copytree(TASKS, tasks)
    path, yaml = tasks / "networks" / "campus-lab.yaml", YAML()
    doc = yaml.load(path.read_text())
    next(d for d in doc["devices"] if d["name"] == "CORE_SW_01")["os"] = "huawei_vrp8"
    with path.open("w") as fh:
        yaml.dump(doc, fh)
    engine = ReplayEngine(TaskSet.open(tasks))
    with engine.open_session("PATH-011") as session:
        greeting = DeviceTerminal(session, "CORE_SW_01").greeting(now=datetime(2026, 12, 2, 9, 0, 0))
    assert greeting == (
        b"\r\nInfo: The max number of VTY users is 5, the number of current VTY users online is 1, "
        b"and total number of terminal users online is 1.\r\n"
        b"      The current login time is 2026-12-02 09:00:00.\r\n<CORE_SW_01>"
    )


def test_nxos_header_and_ios_motd_come_from_the_device_s_own_recordings() -> None:
    mine = (
        "Cisco Nexus Operating System (NX-OS) Software\r\nTAC support: http://www.cisco.com/tac\r\n"
        "Copyright (C) 2002-2021, Cisco and/or its affiliates.\r\n\r\nSoftware\r\n  BIOS: version 05.45\r\n"
    )
    assert nxos_header(mine) == (
        "Cisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\n"
        "Copyright (C) 2002-2021, Cisco and/or its affiliates.\n"
    )
    assert nxos_header("Cisco IOS Software, ...") == nxos_header(None)  # not an NX-OS output: the default
    config = "hostname GW_01\n!\nbanner motd ^C\nAuthorized access only\nLab GW_01\n^C\n!\nline vty 0 4\n"
    assert ios_motd(config) == "Authorized access only\nLab GW_01\n"
    assert ios_motd("banner motd #Keep out#\n") == "Keep out\n"
    assert ios_motd("hostname GW_01\n") == ios_motd(None) == ""


VIEWS = [
    # (device, enter, view prompt, inside: (line, outcome logged, answer's tail), leave, back)
    (
        "CORE_SW_01",
        b"sys\r",
        "[CORE_SW_01]",
        [(b"dis arp all\r", "recorded", b"Interface:2\r\n[CORE_SW_01]")],
        b"quit\r",
        b"<CORE_SW_01>",
    ),
    ("ACC_SW_01", b"system-view\r", "[ACC_SW_01]", [], b"\x1a", b"<ACC_SW_01>"),
    (
        "GW_01",
        b"conf t\r",
        "GW_01(config)#",
        [
            (b"show ip route\r", "invalid", b"% Invalid input detected at '^' marker.\r\nGW_01(config)#"),
            (b"do show ip route\r", "recorded", b"via 10.0.56.2\r\nGW_01(config)#"),
            (b"interface Gi1\r", "session", b"\r\nGW_01(config-if)#"),
            (b"ip address 10.9.9.9 255.255.255.0\r", "denied", b"failed.\r\nGW_01(config-if)#"),
        ],
        b"end\r",
        b"GW_01#",
    ),
    (
        "PE_01",
        b"configure\r",
        "\n[edit]\nadmin@PE_01# ",
        [(b"run show arp no-resolve\r", "recorded", b"Total entries: 2\r\n\r\n[edit]\r\nadmin@PE_01# ")],
        b"exit\r",
        b"Exiting configuration mode\r\n\r\nadmin@PE_01> ",
    ),
]


@pytest.mark.parametrize(
    ("device", "enter", "prompt", "inside", "leave", "back"), VIEWS, ids=[v[0] for v in VIEWS]
)
def test_configuration_views_are_entered_used_and_left_as_on_the_device(
    device: str, enter: bytes, prompt: str, inside: list[tuple[bytes, str, bytes]], leave: bytes, back: bytes
) -> None:
    engine = ReplayEngine(TaskSet.open(TASKS))
    with engine.open_session("PATH-011") as session:
        term = DeviceTerminal(session, device)
        assert term.feed(enter).endswith(prompt.replace("\n", "\r\n").encode())
        for line, outcome, tail in inside:
            assert term.feed(line).endswith(tail), line
            assert session.trajectory[-1].outcome.value == outcome, line
        assert term.feed(leave).endswith(back)
        assert not term.closed and term.prompt == session.prompt(device)
        calls = session.trajectory
    assert calls[0].outcome is Outcome.SESSION and calls[-1].outcome is Outcome.SESSION
    assert [c.outcome.value for c in calls[1:-1]] == [o for _, o, _ in inside]


def test_terminal_without_a_pty_gives_the_recorded_bytes_unchanged() -> None:
    engine = ReplayEngine(TaskSet.open(TASKS))
    want = recordings("PATH-011", "CORE_SW_01")["display arp all"]
    with engine.open_session("PATH-011") as session:
        term = DeviceTerminal(session, "CORE_SW_01", pty=False)
        assert term.greeting() == b""
        assert term.feed(b"display arp all\n") == (want if want.endswith(b"\n") else want + b"\n")


# --------------------------------------------------------------------------- real clients


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, SshServer]]:
    state = tmp_path_factory.mktemp("ssh-state")
    running = {task: start_ssh(task, TASKS, state) for task in sorted({c[0] for c in CASES})}
    try:
        yield running
    finally:
        for server in running.values():
            assert "Traceback" not in server.stop()


def connect(server: SshServer, device: str, family: str, **extra: object):  # type: ignore[no-untyped-def]
    from netmiko import ConnectHandler

    return ConnectHandler(
        device_type=NETMIKO_TYPES[family],
        host="127.0.0.1",
        port=server.port,
        username=device,
        password=PASSWORD,
        fast_cli=True,
        timeout=20,
        **extra,
    )


@pytest.mark.xdist_group("ssh")
@pytest.mark.parametrize(("task_id", "device", "family"), CASES, ids=[c[2] for c in CASES])
def test_netmiko_send_command_returns_each_recording(
    servers: dict[str, SshServer], task_id: str, device: str, family: str
) -> None:
    server = servers[task_id]
    before = len(records(server.trajectory))
    want = recordings(task_id, device)
    assert want
    conn = connect(server, device, family)
    try:
        for command, data in want.items():
            got = conn.send_command(command, read_timeout=20)
            assert lines_of(got) == lines_of(data), f"{device}: {command}"
        assert conn.send_command("displya nothing").strip()  # the vendor's error, then the prompt
    finally:
        conn.disconnect()
    new = records(server.trajectory)[before:]
    mine = [r for r in new if r["device"] == device]
    agent = [r["command"] for r in mine if r["outcome"] != "session"]
    setup = [r["command"] for r in mine if r["outcome"] == "session"]
    assert agent == [*want, "displya nothing"]
    assert setup, "netmiko's session setup is logged, as outcome 'session'"
    assert all(r["outcome"] in ("recorded", "invalid") for r in mine if r["outcome"] != "session")


@pytest.mark.xdist_group("ssh")
def test_netmiko_textfsm_parses_the_replayed_output(servers: dict[str, SshServer]) -> None:
    conn = connect(servers["PATH-006"], "DC_SPINE_01", "cisco_nxos")
    try:
        parsed = conn.send_command("show lldp neighbors", use_textfsm=True)
    finally:
        conn.disconnect()
    assert isinstance(parsed, list) and parsed and isinstance(parsed[0], dict), parsed
    assert any("DC_LEAF" in str(v) for row in parsed for v in row.values())


@pytest.mark.xdist_group("ssh")
@pytest.mark.parametrize(("task_id", "device", "family"), CASES, ids=[c[2] for c in CASES])
def test_scrapli_opens_and_runs_each_recording(
    servers: dict[str, SshServer], task_id: str, device: str, family: str, tmp_path: Path
) -> None:
    from scrapli import Cli
    from scrapli.auth import Options as AuthOptions
    from scrapli.session import Options as SessionOptions
    from scrapli.transport import BinOptions

    server = servers[task_id]
    want = recordings(task_id, device)
    cli = Cli(
        "127.0.0.1",
        port=server.port,
        definition_file_or_name=SCRAPLI_TYPES[family],
        auth_options=AuthOptions(username=device, password=PASSWORD),
        transport_options=BinOptions(enable_strict_key=False, known_hosts_path=str(tmp_path / "kh")),
        session_options=SessionOptions(operation_timeout_s=20),
    )
    with cli as conn:
        for command, data in want.items():
            result = conn.send_input(command)
            assert trimmed_lines(result.result) == trimmed_lines(data), f"{device}: {command}"


# --------------------------------------------------------------------------- OpenSSH


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SshServer, Path, Path]]:
    """A server that takes one key (and the password); also a second key it does not know."""
    base = tmp_path_factory.mktemp("ssh-keys")
    for name in ("good", "bad"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(base / name)], check=True)
    server = start_ssh("PATH-011", TASKS, base, "--authorized-keys", str(base / "good.pub"))
    try:
        yield server, base / "good", base / "bad"
    finally:
        assert "Traceback" not in server.stop()


def ssh_argv(server: SshServer, key: Path, device: str, *extra: str) -> list[str]:
    return [
        "ssh",
        "-F",
        "/dev/null",
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "BatchMode=yes",
        "-o",
        "LogLevel=ERROR",
        "-i",
        str(key),
        "-p",
        str(server.port),
        *extra,
        f"{device}@127.0.0.1",
    ]


@pytest.mark.xdist_group("ssh")
def test_openssh_runs_a_command_and_returns_the_exact_bytes(keyed: tuple[SshServer, Path, Path]) -> None:
    server, good, _ = keyed
    want = recordings("PATH-011", "CORE_SW_01")["display arp all"]
    done = subprocess.run(
        [*ssh_argv(server, good, "core_sw_01"), "dis arp all"], capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (want if want.endswith(b"\n") else want + b"\n")
    # with a pty (ssh -tt HOST CMD) the same bytes come as a terminal shows them: no prompt, CRLF
    done = subprocess.run(
        [*ssh_argv(server, good, "CORE_SW_01", "-tt"), "dis arp all"], capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (want if want.endswith(b"\n") else want + b"\n").replace(b"\n", b"\r\n")


@pytest.mark.xdist_group("ssh")
def test_openssh_refuses_a_key_or_device_it_does_not_know(keyed: tuple[SshServer, Path, Path]) -> None:
    server, good, bad = keyed
    for key, device in ((bad, "CORE_SW_01"), (good, "NO_SUCH_DEVICE"), (good, "PC_01")):
        done = subprocess.run(
            [*ssh_argv(server, key, device), "display arp all"], capture_output=True, timeout=30
        )
        assert done.returncode == 255, (key, device, done.stdout)
        assert b"Permission denied" in done.stderr
        assert done.stdout == b""


def read_until(fd: int, marker: bytes, timeout: float = 15) -> bytes:
    out = b""
    end = time.monotonic() + timeout
    while marker not in out:
        left = end - time.monotonic()
        if left <= 0:
            raise AssertionError(f"waited for {marker!r}, got {out[-400:]!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out


@pytest.mark.xdist_group("ssh")
def test_openssh_in_a_pty_with_help_tab_and_abbreviations(keyed: tuple[SshServer, Path, Path]) -> None:
    server, good, _ = keyed
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*ssh_argv(server, good, "GW_01", "-tt")], stdin=slave, stdout=slave, stderr=slave, close_fds=True
    )
    os.close(slave)
    try:
        read_until(master, b"GW_01#")
        os.write(master, b"show ip ?")  # no Enter: the device answers at once
        out = read_until(master, b"GW_01#show ip ")
        assert b"route" in out and b"cef" in out
        os.write(master, b"\x15sh ip ro\t")  # Tab completes the abbreviation to the keyword
        assert read_until(master, b"ute ").endswith(b"ute ")
        os.write(master, b"\r")
        out = read_until(master, b"GW_01#")
        want = recordings("PATH-011", "GW_01")["show ip route"]
        assert lines_of(out)[1 : 1 + len(lines_of(want))] == lines_of(want)
        os.write(master, b"show ip rout 10.0.0.0 255.0.0.0 foo\r")
        out = read_until(master, b"GW_01#")
        assert b"% Invalid input detected at '^' marker." in out
        os.write(master, b"exit\r")
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


@pytest.mark.xdist_group("ssh")
def test_openssh_in_a_pty_sees_the_login_banner_then_the_prompt(keyed: tuple[SshServer, Path, Path]) -> None:
    server, good, _ = keyed
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*ssh_argv(server, good, "CORE_SW_01", "-tt")],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
    )
    os.close(slave)
    try:
        out = read_until(master, b"<CORE_SW_01>")
        assert b"Info: The max number of VTY users is 10, and the number\r\n" in out
        assert b"of current VTY users on line is 1.\r\n      The current login time is 20" in out
        os.write(master, b"quit\r")
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


@pytest.mark.xdist_group("ssh")
@pytest.mark.parametrize(("task", "device", "family"), CASES[:4], ids=[c[2] for c in CASES[:4]])
def test_netmiko_enters_and_leaves_configuration_mode(
    servers: dict[str, SshServer], task: str, device: str, family: str
) -> None:
    conn = connect(servers[task], device, family)
    try:
        assert not conn.check_config_mode()
        conn.config_mode()
        assert conn.check_config_mode()
        conn.exit_config_mode()
        assert not conn.check_config_mode()
        command, want = next(iter(recordings(task, device).items()))
        assert lines_of(conn.send_command(command)) == lines_of(want)
    finally:
        conn.disconnect()


# --------------------------------------------------------------------------- refusals and keys


@pytest.mark.xdist_group("ssh")
def test_a_wrong_password_is_refused(servers: dict[str, SshServer]) -> None:
    from netmiko import ConnectHandler
    from netmiko.exceptions import NetmikoAuthenticationException

    server = servers["PATH-011"]
    before = len(records(server.trajectory))
    for user, password in (("CORE_SW_01", "wrong"), ("NOT_A_DEVICE", PASSWORD)):
        with pytest.raises(NetmikoAuthenticationException):
            ConnectHandler(
                device_type="huawei",
                host="127.0.0.1",
                port=server.port,
                username=user,
                password=password,
                timeout=10,
            )
    assert len(records(server.trajectory)) == before


def test_the_host_key_is_kept_per_task_set(tmp_path: Path) -> None:
    def host_key(server: SshServer) -> bytes:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10):
            pass
        done = subprocess.run(
            ["ssh-keyscan", "-t", "ed25519", "-p", str(server.port), "127.0.0.1"],
            capture_output=True,
            timeout=30,
        )
        return done.stdout.split(b" ", 1)[1].strip()

    first = start_ssh("PATH-011", TASKS, tmp_path)
    try:
        key1 = host_key(first)
    finally:
        first.stop()
    second = start_ssh("RCA-001", TASKS, tmp_path)
    try:
        key2 = host_key(second)
    finally:
        second.stop()
    assert key1 and key1 == key2  # same task set, another task, a new process: the same key
    keys = list((tmp_path / "ctbench" / "ssh").glob("*/ssh_host_ed25519_key"))
    assert len(keys) == 1 and keys[0].stat().st_mode & 0o777 == 0o600


def test_without_credentials_it_only_listens_on_loopback(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_STATE_HOME": str(tmp_path)}
    env.pop("CTBENCH_SSH_PASSWORD", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctbench.replay.cli",
            "ssh",
            "PATH-011",
            "--tasks",
            str(TASKS),
            "--host",
            "0.0.0.0",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2
    assert "reachable from other machines" in done.stderr and "Traceback" not in done.stderr


# --------------------------------------------------------------------------- session setup, every transport


SETUP = {
    "GW_01": [("terminal length 0", ""), ("term width 511", ""), ("enable", "")],
    "CORE_SW_01": [
        (
            "screen-length 0 temporary",
            "Info: The configuration takes effect on the current user terminal interface only.\n",
        ),
    ],
    "ACC_SW_01": [("screen-length disable", "% Screen-length configuration is disabled for current user.\n")],
    "PE_01": [
        ("set cli screen-length 0", "Screen length set to 0\n"),
        ("set cli screen-width 511", "Screen width set to 511\n"),
        ("set cli complete-on-space off", "Disabling complete-on-space\n"),
    ],
}


def test_session_setup_is_answered_as_the_device_does_and_logged_apart() -> None:
    engine = ReplayEngine(TaskSet.open(TASKS))
    with engine.open_session("PATH-011") as session:
        for device, lines in SETUP.items():
            for line, text in lines:
                obs = session.run(device, line)
                assert (obs.outcome, obs.text) == (Outcome.SESSION, text), (device, line)
        stray = session.run("CORE_SW_01", "screen-width 255\\ny\\n\\n")
        assert stray.outcome is Outcome.SESSION
        caret, message = stray.text.splitlines()
        assert message == "Error: Wrong parameter found at '^' position."
        assert caret.index("^") == len("<CORE_SW_01>screen-width 255")
        # anything else keeps its answer: a valid unrecorded command is still refused
        assert session.run("CORE_SW_01", "screen-length 0").outcome is not Outcome.SESSION


def test_serve_prints_its_url_only_once_it_accepts_connections(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for _ in range(3):  # the race it fixes was lost most of the time; three starts show it
        proc = subprocess.Popen(
            [sys.executable, "-m", "ctbench.replay.cli", "serve", "--port", "0", "--tasks", str(TASKS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            host, port = url.removeprefix("http://").rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=10) as sock:  # at once, no retry
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                assert sock.recv(64).startswith(b"HTTP/1.1 200")
        finally:
            proc.terminate()
            proc.wait(10)


def test_an_idle_login_is_closed(tmp_path: Path) -> None:
    import asyncio

    import asyncssh

    server = start_ssh("PATH-011", TASKS, tmp_path, "--idle-timeout", "1")

    async def idle() -> float:
        async with asyncssh.connect(
            "127.0.0.1", server.port, username="CORE_SW_01", password=PASSWORD, known_hosts=None
        ) as conn:
            proc = await conn.create_process(term_type="vt100", encoding=None)
            await proc.stdout.readuntil(b"<CORE_SW_01>")
            proc.stdin.write(b"dis arp all\r")  # activity restarts the clock
            await proc.stdout.readuntil(b"\r\n<CORE_SW_01>")
            began = time.monotonic()
            await asyncio.wait_for(proc.wait(), 20)
            return time.monotonic() - began

    try:
        waited = asyncio.run(idle())
    finally:
        assert "Traceback" not in server.stop()
    assert 0.8 <= waited < 15


# --------------------------------------------------------------------------- runner sessions by token


@pytest.mark.xdist_group("ssh")
def test_a_token_logs_into_its_own_runner_session_only(tmp_path: Path) -> None:
    from netmiko import ConnectHandler
    from netmiko.exceptions import NetmikoAuthenticationException

    from ctbench.replay.http_server import SessionRegistry
    from ctbench.replay.ssh_server import TokenSshServer, load_host_key

    engine = ReplayEngine(TaskSet.open(TASKS))
    registry = SessionRegistry(engine, runner=True)
    mine = engine.open_session("PATH-011", trajectory_path=tmp_path / "mine.jsonl")
    other = engine.open_session("PATH-006", trajectory_path=tmp_path / "other.jsonl")
    grant, other_grant = registry.grant(mine), registry.grant(other)
    server = TokenSshServer(registry.by_token, load_host_key(tmp_path / "key"))
    server.start()
    try:
        conn = ConnectHandler(
            device_type="huawei",
            host="127.0.0.1",
            port=server.port,
            username="CORE_SW_01",
            password=grant.token,
            fast_cli=True,
            timeout=20,
        )
        try:
            want = recordings("PATH-011", "CORE_SW_01")["display arp all"]
            assert lines_of(conn.send_command("dis arp all")) == lines_of(want)
        finally:
            conn.disconnect()
        # refused alike: a wrong token, another session's token for a device of mine, my token for
        # a device my task does not have
        for user, token in (
            ("CORE_SW_01", "not-a-token"),
            ("CORE_SW_01", other_grant.token),
            ("DC_SPINE_01", grant.token),
        ):
            with pytest.raises(NetmikoAuthenticationException):
                ConnectHandler(
                    device_type="huawei",
                    host="127.0.0.1",
                    port=server.port,
                    username=user,
                    password=token,
                    timeout=10,
                )
    finally:
        server.stop()
        mine.close()
        other.close()
    agent = [r for r in records(tmp_path / "mine.jsonl") if r["outcome"] != "session"]
    assert [(r["device"], r["command"]) for r in agent] == [("CORE_SW_01", "dis arp all")]
    assert records(tmp_path / "other.jsonl") == []


def test_bad_arguments_get_one_clear_line(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_STATE_HOME": str(tmp_path)}
    junk = tmp_path / "junk_keys"
    junk.write_text("not a key\n")
    cases = [
        (["NOPE"], "task 'NOPE' not found"),
        (["PATH-011", "--authorized-keys", str(tmp_path / "missing")], "No such file or directory"),
        (["PATH-011", "--authorized-keys", str(junk)], "not an authorized_keys file"),
        (["PATH-011", "--port", "70000"], "expected 0 to 65535"),
    ]
    for args, message in cases:
        done = subprocess.run(
            [sys.executable, "-m", "ctbench.replay.cli", "ssh", *args, "--tasks", str(TASKS)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode != 0 and done.stdout == "", args
        assert message in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
