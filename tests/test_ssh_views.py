"""IOS privilege levels and the views below configuration mode, with real netmiko and scrapli sessions.

The server is the real ``ctb-replay ssh`` on a bundled task (PATH-011: an IOS router, a VRP switch,
a Comware switch), once as recorded (privileged EXEC) and once with ``--user-exec``. netmiko's
``enable()``/``exit_enable_mode()`` and scrapli's ``cisco_iosxe`` modes (``enable`` with its
``Password:`` and the ``enable`` lookup) move between ``GW_01>`` and ``GW_01#``; at ``>`` a privileged
command is IOS's invalid input with the caret under the hidden keyword. On VRP and Comware,
``interface``, ``vlan``, ``ospf`` and ``bgp`` enter their views with the device's prompts, an
interface the device lacks is its ``Wrong parameter`` error, and ``quit``/``return`` go back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("asyncssh", reason="ctb-replay ssh needs: pip install -e '.[ssh,ssh-clients]'")
pytest.importorskip("netmiko", reason="the SSH client tests need: pip install -e '.[ssh-clients]'")
pytest.importorskip("scrapli", reason="the SSH client tests need: pip install -e '.[ssh-clients]'")

from ctbench.replay.engine import ReplayEngine  # noqa: E402 - after the extras are known to be here
from ctbench.replay.ssh_terminal import DeviceTerminal
from ctbench.store import TaskSet
from tests.ssh_support import NETMIKO_TYPES, PASSWORD, REPO, SCRAPLI_TYPES, SshServer, start_ssh

pytestmark = pytest.mark.xdist_group("ssh")

TASKS = REPO / "tasks"
TASK = "PATH-011"
INVALID = "% Invalid input detected at '^' marker."


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, SshServer]]:
    state = tmp_path_factory.mktemp("ssh-views")
    running = {
        "privileged": start_ssh(TASK, TASKS, state, trajectory=state / "privileged.jsonl"),
        "user": start_ssh(TASK, TASKS, state, "--user-exec", trajectory=state / "user.jsonl"),
    }
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


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def recorded(device: str, command: str) -> str:
    engine = ReplayEngine(TaskSet.open(TASKS))
    with engine.open_session(TASK) as session:
        return session.run(device, command).text


def caret_under(text: str, prompt_and_typed: str) -> None:
    """The caret line of IOS's error sits under the character after ``prompt_and_typed``."""
    lines = text.replace("\r\n", "\n").split("\n")
    i = next(n for n, line in enumerate(lines) if line.strip() == INVALID)
    assert lines[i - 1].rstrip() == " " * len(prompt_and_typed) + "^", lines


# --------------------------------------------------------------------------- IOS levels


def test_netmiko_moves_between_user_and_privileged_exec(servers: dict[str, SshServer]) -> None:
    server = servers["user"]
    before = len(records(server.trajectory))
    conn = connect(server, "GW_01", "cisco_ios", secret=PASSWORD)
    try:
        assert conn.find_prompt() == "GW_01>"
        assert not conn.check_enable_mode()
        # a user-level command answers as recorded; a privileged one is hidden at this level
        assert conn.send_command("show ip route").strip() == recorded("GW_01", "show ip route").strip()
        hidden = conn.send_command("show running-config", strip_prompt=False, strip_command=False)
        assert INVALID in hidden
        caret_under(hidden, "GW_01>show ")
        assert INVALID in conn.send_command("configure terminal", strip_prompt=False)
        conn.enable()
        assert conn.check_enable_mode() and conn.find_prompt() == "GW_01#"
        conn.config_mode()
        conn.send_command("interface GigabitEthernet1", expect_string=r"\(config-if\)#")
        assert conn.find_prompt() == "GW_01(config-if)#"
        # `do` still runs EXEC commands below configuration mode
        assert (
            conn.send_command("do show ip route", expect_string=r"#")
            .strip()
            .endswith(recorded("GW_01", "show ip route").strip().splitlines()[-1].strip())
        )
        conn.send_command("exit", expect_string=r"\(config\)#")
        conn.send_command("router ospf 1", expect_string=r"\(config-router\)#")
        conn.exit_config_mode()
        assert conn.find_prompt() == "GW_01#"
        conn.exit_enable_mode()
        assert conn.find_prompt() == "GW_01>"
    finally:
        conn.disconnect()
    mine = [r for r in records(server.trajectory)[before:] if r["device"] == "GW_01"]
    evidence = [(r["command"], r["outcome"]) for r in mine if r["outcome"] != "session"]
    assert evidence[:3] == [
        ("show ip route", "recorded"),
        ("show running-config", "invalid"),
        ("configure terminal", "invalid"),
    ], evidence
    setup = [r["command"] for r in mine if r["outcome"] == "session"]
    assert "enable" in setup and "disable" in setup and "interface GigabitEthernet1" in setup
    assert PASSWORD not in server.trajectory.read_text(encoding="utf-8")  # the secret is never logged


def test_scrapli_iosxe_takes_its_privilege_levels(servers: dict[str, SshServer], tmp_path: Path) -> None:
    from scrapli import Cli
    from scrapli.auth import LookupKeyValue
    from scrapli.auth import Options as AuthOptions
    from scrapli.session import Options as SessionOptions
    from scrapli.transport import BinOptions

    cli = Cli(
        "127.0.0.1",
        port=servers["user"].port,
        definition_file_or_name=SCRAPLI_TYPES["cisco_ios"],
        auth_options=AuthOptions(
            username="GW_01", password=PASSWORD, lookups=[LookupKeyValue("enable", PASSWORD)]
        ),
        transport_options=BinOptions(enable_strict_key=False, known_hosts_path=str(tmp_path / "kh")),
        session_options=SessionOptions(operation_timeout_s=20),
    )
    with cli as conn:  # on open scrapli goes to privileged_exec: enable, Password:, the lookup
        assert conn.get_prompt().result.strip() == "GW_01#"
        conn.enter_mode("exec")
        assert conn.get_prompt().result.strip() == "GW_01>"
        refused = conn.send_input("show running-config", requested_mode="exec")
        assert refused.failed and INVALID in refused.result
        conn.enter_mode("configuration")
        assert conn.get_prompt().result.strip() == "GW_01(config)#"
        inside = conn.send_input("interface GigabitEthernet2", requested_mode="configuration")
        assert not inside.failed
        assert conn.get_prompt().result.strip() == "GW_01(config-if)#"
        conn.enter_mode("privileged_exec")  # `end` from the interface view
        assert conn.get_prompt().result.strip() == "GW_01#"


def test_enable_asks_for_the_password_and_gives_up_after_three() -> None:
    engine = ReplayEngine(TaskSet.open(TASKS))
    with engine.open_session(TASK) as session:
        term = DeviceTerminal(session, "GW_01", user_exec=True, enable_secret="s3cret")
        assert term.greeting().endswith(b"\r\nGW_01>")
        assert term.feed(b"en\r") == b"en\r\nPassword: "
        assert term.feed(b"guess") == b""  # a password is never echoed
        assert term.feed(b"\r") == b"\r\nPassword: "
        term.feed(b"again\r")
        assert term.feed(b"wrong\r") == b"\r\n% Bad secrets\r\n\r\nGW_01>"
        assert term.feed(b"enable\r") == b"enable\r\nPassword: "
        assert term.feed(b"s3cret\r") == b"\r\nGW_01#"
        assert term.feed(b"enable\r") == b"enable\r\nGW_01#"  # already there: the prompt again
        assert term.feed(b"disa\r") == b"disa\r\nGW_01>"
        # the recorded level: logins start at #, and a key login (no password) enables at once
        as_recorded = DeviceTerminal(session, "GW_01")
        assert as_recorded.prompt == "GW_01#"
        keyed = DeviceTerminal(session, "GW_01", user_exec=True)
        assert keyed.feed(b"enable\r") == b"enable\r\nGW_01#"
        logged = [r.command for r in session.trajectory]
    assert "s3cret" not in logged and "guess" not in logged and "wrong" not in logged


# --------------------------------------------------------------------------- VRP and Comware views

VIEW_CASES = [
    ("CORE_SW_01", "huawei_vrp", "GigabitEthernet0/0/1", "GE0/0/1", "GigabitEthernet0/0/9", "bgp"),
    ("ACC_SW_01", "hp_comware", "GigabitEthernet1/0/1", "GE1/0/1", "GigabitEthernet1/0/9", "bgp-default"),
]


@pytest.mark.parametrize(
    ("device", "family", "name", "short", "missing", "bgp"), VIEW_CASES, ids=[c[1] for c in VIEW_CASES]
)
def test_netmiko_enters_and_leaves_the_views_below_system_view(
    servers: dict[str, SshServer], device: str, family: str, name: str, short: str, missing: str, bgp: str
) -> None:
    server = servers["privileged"]
    conn = connect(server, device, family)
    try:
        conn.config_mode()
        assert conn.find_prompt() == f"[{device}]"
        # the short form enters the interface's view under its full name
        conn.send_command(f"interface {short}", expect_string=r"\]")
        assert conn.find_prompt() == f"[{device}-{name}]"
        wrong = conn.send_command(f"interface {missing}", expect_string=r"\]")
        assert "Wrong parameter found at '^' position." in wrong
        assert conn.find_prompt() == f"[{device}-{name}]"  # no such view: still where it was
        conn.send_command("quit", expect_string=r"\]")
        assert conn.find_prompt() == f"[{device}]"
        for line, prompt in (("vlan 10", "vlan10"), ("ospf 1", "ospf-1"), ("bgp 65001", bgp)):
            conn.send_command(line, expect_string=r"\]")
            assert conn.find_prompt() == f"[{device}-{prompt}]", line
        conn.exit_config_mode()  # netmiko sends `return`: back to the user view from any depth
        assert conn.find_prompt() == f"<{device}>"
    finally:
        conn.disconnect()


@pytest.mark.parametrize(("device", "family", "name", "short", "missing", "bgp"), VIEW_CASES[:1], ids=["vrp"])
def test_scrapli_sends_configuration_into_the_views(
    servers: dict[str, SshServer],
    device: str,
    family: str,
    name: str,
    short: str,
    missing: str,
    bgp: str,
    tmp_path: Path,
) -> None:
    from scrapli import Cli
    from scrapli.auth import Options as AuthOptions
    from scrapli.session import Options as SessionOptions
    from scrapli.transport import BinOptions

    cli = Cli(
        "127.0.0.1",
        port=servers["privileged"].port,
        definition_file_or_name=SCRAPLI_TYPES[family],
        auth_options=AuthOptions(username=device, password=PASSWORD),
        transport_options=BinOptions(enable_strict_key=False, known_hosts_path=str(tmp_path / "kh")),
        session_options=SessionOptions(operation_timeout_s=20),
    )
    # VRP only: scrapli's hp_comware definition cannot reach system view on any device (its general
    # prompt pattern ends in [>#$], never `]`: enter_mode("configuration") times out)
    with cli as conn:
        conn.enter_mode("configuration")
        entered = conn.send_input(f"interface {short}", requested_mode="configuration")
        assert not entered.failed, entered.result
        assert conn.get_prompt().result.strip() == f"[{device}-{name}]"
        wrong = conn.send_input(f"interface {missing}", requested_mode="configuration")
        assert wrong.failed and "Wrong parameter" in wrong.result
        conn.enter_mode("privileged_exec")
        assert conn.get_prompt().result.strip() == f"<{device}>"
