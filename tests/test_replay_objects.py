"""An interface the device does not have gets the vendor's parameter error, not a permission refusal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from ctbench.replay.engine import ReplayEngine
from ctbench.replay.observation import Outcome
from ctbench.store import TaskSet

REPO = Path(__file__).resolve().parents[1]

MISSING = [
    # (task, device, line, the interface the caret goes under (None: no caret), message)
    (
        "PATH-011",
        "CORE_SW_01",
        "dis int GE0/0/99",
        "GE0/0/99",
        "Error: Wrong parameter found at '^' position.",
    ),
    (
        "PATH-011",
        "ACC_SW_01",
        "display interface GE1/0/99",
        "GE1/0/99",
        " % Wrong parameter found at '^' position.",
    ),
    ("PATH-011", "GW_01", "show int Gi9", "Gi9", "% Invalid input detected at '^' marker."),
    ("PATH-011", "PE_01", "show interfaces ge-0/0/9", None, "error: device ge-0/0/9 not found"),
    ("PATH-006", "DC_SPINE_01", "show int Eth1/99", "Eth1/99", "% Invalid command at '^' marker."),
]


@pytest.fixture(scope="module")
def engine() -> ReplayEngine:
    return ReplayEngine(TaskSet.open(REPO / "tasks"))


@pytest.mark.parametrize(("task", "device", "line", "token", "message"), MISSING, ids=[m[1] for m in MISSING])
def test_an_interface_the_device_lacks_gets_the_vendors_error(
    engine: ReplayEngine, task: str, device: str, line: str, token: str | None, message: str
) -> None:
    with engine.open_session(task) as session:
        obs = session.run(device, line)
    assert obs.outcome is Outcome.INVALID
    lines = obs.text.splitlines()
    assert lines[-1] == message
    if token is not None:  # under the interface of the echoed <prompt><line>, as the device puts it
        assert lines[0] == " " * (len(session.prompt(device)) + line.index(token)) + "^"


def test_interfaces_it_has_stay_refused_as_unrecorded(engine: ReplayEngine) -> None:
    with engine.open_session("PATH-011") as session:
        for device, line in (
            ("CORE_SW_01", "display interface GigabitEthernet0/0/1"),  # listed in the network
            ("CORE_SW_01", "display interface Vlanif24"),
            ("PE_01", "show interfaces ge-0/0/1.0"),  # a unit of a listed port
            ("GW_01", "show interfaces GigabitEthernet2"),
        ):
            assert session.run(device, line).outcome is Outcome.DENIED, (device, line)
        # a name in an output filter is a pattern, not a parameter
        assert session.run("CORE_SW_01", "display arp all | include GE0/0/99").outcome is Outcome.RECORDED


def test_interfaces_printed_by_the_recordings_count_as_present(engine: ReplayEngine) -> None:
    # DC_LEAF_03 lists few interfaces in its network, but its `display interface brief` prints them all
    task = engine.task("PATH-006")
    dev = task.devices["DC_LEAF_03"]
    assert dev.inventory is not None
    printed = sorted(dev.inventory.known - dev.inventory.declared)
    assert printed, "the recordings add interfaces the network file does not list"
    with engine.open_session("PATH-006") as session:
        assert session.run("DC_LEAF_03", f"display interface {printed[0]}").outcome is Outcome.DENIED


def test_without_a_declared_inventory_nothing_is_called_missing(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(REPO / "tasks", tasks)
    yaml = YAML()
    path = tasks / "networks" / "campus-lab.yaml"
    doc = yaml.load(path.read_text())
    for dev in doc["devices"]:
        dev.pop("interfaces", None)
    with path.open("w") as fh:
        yaml.dump(doc, fh)
    engine = ReplayEngine(TaskSet.open(tasks))
    with engine.open_session("PATH-011") as session:
        assert session.run("CORE_SW_01", "dis int GE0/0/99").outcome is Outcome.DENIED


# --------------------------------------------------------------------------- VLANs, VPN instances, peers

FIXTURES = REPO / "tests" / "fixtures" / "vendor-cli"
LISTED = [
    # (device, command, real capture it answers with)
    ("CORE_SW_01", "display vlan", "huawei_vrp/display_vlan/1.raw"),
    ("CORE_SW_01", "display ip vpn-instance", "huawei_vrp/display_ip_vpn-instance/1.raw"),
    ("ACC_SW_01", "display vlan all", "hp_comware/display_vlan_all/1.raw"),
    ("GW_01", "show vlan", "cisco_ios/show_vlan/1.raw"),
    ("GW_01", "show vrf", "cisco_ios/show_vrf/1.raw"),
]


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory) -> ReplayEngine:
    """PATH-011 with its devices' full VLAN and VPN listings recorded (real captures)."""
    tasks = tmp_path_factory.mktemp("objects") / "tasks"
    shutil.copytree(REPO / "tasks", tasks)
    folder = tasks / "path" / "PATH-011"
    yaml = YAML()
    doc = yaml.load((folder / "task.yaml").read_text())
    for device, command, capture in LISTED:
        rel = f"recordings/{device}/{command.replace(' ', '_')}.txt"
        shutil.copy(FIXTURES / capture, folder / rel)
        doc["recordings"].append({"device": device, "command": command, "file": rel})
    with (folder / "task.yaml").open("w") as fh:
        yaml.dump(doc, fh)
    return ReplayEngine(TaskSet.open(tasks))


WRONG_OBJECTS = [
    # (device, line, token under the caret (None: the device's own words), last line of the answer)
    ("CORE_SW_01", "dis vlan 999", "999", "Error: Wrong parameter found at '^' position."),
    (
        "CORE_SW_01",
        "display ip routing-table vpn-instance blue",
        "blue",
        "Error: Wrong parameter found at '^' position.",
    ),
    ("ACC_SW_01", "display vlan 999", "999", " % Wrong parameter found at '^' position."),
    ("GW_01", "show vlan id 77", None, "VLAN id 77 not found in current VLAN database"),
    ("GW_01", "sh ip ro vrf nope", None, "% IP routing table vrf nope does not exist"),
]


@pytest.mark.parametrize(
    ("device", "line", "token", "message"), WRONG_OBJECTS, ids=[w[1] for w in WRONG_OBJECTS]
)
def test_a_vlan_or_vpn_instance_the_device_lacks_gets_the_vendors_answer(
    listed: ReplayEngine, device: str, line: str, token: str | None, message: str
) -> None:
    with listed.open_session("PATH-011") as session:
        obs = session.run(device, line)
    assert obs.outcome is Outcome.INVALID, obs.text
    lines = obs.text.splitlines()
    assert lines[-1] == message
    if token is not None:
        assert lines[0] == " " * (len(session.prompt(device)) + line.index(token)) + "^"
    else:
        assert len(lines) == 1


def test_objects_the_listings_show_stay_refused_as_unrecorded(listed: ReplayEngine) -> None:
    with listed.open_session("PATH-011") as session:
        for device, line in (
            ("CORE_SW_01", "display vlan 1"),
            ("CORE_SW_01", "display ip routing-table vpn-instance red"),
            ("ACC_SW_01", "display vlan 1"),
            ("GW_01", "show vlan id 50"),
            ("GW_01", "show ip route vrf gy3"),
            ("GW_01", "show ip route vrf *"),  # every table: names no instance
            ("FW_01", "display vlan 999"),  # no listing recorded: the replay cannot tell
        ):
            assert session.run(device, line).outcome is Outcome.DENIED, (device, line)
        # the listings themselves replay as recorded
        assert session.run("GW_01", "show vlan").outcome is Outcome.RECORDED


def test_a_bgp_peer_the_device_lacks_gets_the_vendors_answer(engine: ReplayEngine) -> None:
    # RCA-004's BJ_CE (IOS) has `show ip bgp summary`, RCA-017's GZ_CE (VRP) `display bgp peer`
    with engine.open_session("RCA-004") as session:
        obs = session.run("BJ_CE", "sh ip bgp nei 9.9.9.9")
        assert (obs.outcome, obs.text) == (Outcome.INVALID, "% No such neighbor or address family\n")
        assert session.run("BJ_CE", "show ip bgp neighbors 10.0.254.1").outcome is Outcome.DENIED
        # a VPN peer is not in the global summary: not judged from it
        assert session.run("BJ_CE", "show ip bgp vpnv4 all neighbors 9.9.9.9").outcome is not Outcome.INVALID
    with engine.open_session("RCA-017") as session:
        obs = session.run("GZ_CE", "dis bgp peer 9.9.9.9 verbose")
        assert (obs.outcome, obs.text) == (Outcome.INVALID, "Info: The peer does not exist.\n")
        assert session.run("GZ_CE", "display bgp peer 10.3.254.1").outcome is Outcome.DENIED
    with engine.open_session("PATH-011") as session:  # GW_01 has no BGP listing recorded
        assert session.run("GW_01", "show ip bgp neighbors 9.9.9.9").outcome is Outcome.DENIED


# --------------------------------------------------------------------------- NX-OS, Junos, Comware peers

LISTED_MORE = [
    # (task, device, command, real capture it answers with)
    ("PATH-006", "DC_SPINE_01", "show vlan", "cisco_nxos/show_vlan/1.raw"),
    ("PATH-006", "DC_SPINE_01", "show vrf", "cisco_nxos/show_vrf/1.raw"),
    ("PATH-006", "DC_SPINE_01", "show ip bgp summary", "cisco_nxos/show_ip_bgp_summary/1.raw"),
    ("PATH-011", "PE_01", "show bgp summary", "juniper_junos/show_bgp_summary/1.raw"),
]


@pytest.fixture(scope="module")
def listed_more(tmp_path_factory: pytest.TempPathFactory) -> ReplayEngine:
    """PATH-006's NX-OS spine and PATH-011's Junos PE with full listings recorded (real captures)."""
    tasks = tmp_path_factory.mktemp("objects-more") / "tasks"
    shutil.copytree(REPO / "tasks", tasks)
    yaml = YAML()
    for task in sorted({t for t, _, _, _ in LISTED_MORE}):
        folder = tasks / "path" / task
        doc = yaml.load((folder / "task.yaml").read_text())
        for _, device, command, capture in [row for row in LISTED_MORE if row[0] == task]:
            rel = f"recordings/{device}/{command.replace(' ', '_')}.txt"
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(FIXTURES / capture, folder / rel)
            doc["recordings"].append({"device": device, "command": command, "file": rel})
        with (folder / "task.yaml").open("w") as fh:
            yaml.dump(doc, fh)
    return ReplayEngine(TaskSet.open(tasks))


NXOS = "% Invalid command at '^' marker."
WRONG_MORE = [
    # (task, device, line, token under the caret, last line of the answer)
    ("PATH-006", "DC_SPINE_01", "show vlan id 999", "999", NXOS),
    ("PATH-006", "DC_SPINE_01", "sh ip route vrf nope", "nope", NXOS),
    ("PATH-006", "DC_SPINE_01", "show ip bgp neighbors 9.9.9.9", "9.9.9.9", NXOS),
    ("PATH-011", "PE_01", "show bgp neighbor 9.9.9.9", "9.9.9.9", "syntax error."),
]


@pytest.mark.parametrize(
    ("task", "device", "line", "token", "message"), WRONG_MORE, ids=[w[2] for w in WRONG_MORE]
)
def test_nxos_and_junos_objects_the_device_lacks_get_the_parameter_error(
    listed_more: ReplayEngine, task: str, device: str, line: str, token: str, message: str
) -> None:
    with listed_more.open_session(task) as session:
        obs = session.run(device, line)
    assert obs.outcome is Outcome.INVALID, obs.text
    assert obs.text.splitlines() == [" " * (len(session.prompt(device)) + line.index(token)) + "^", message]


def test_nxos_and_junos_objects_the_listings_show_stay_refused(listed_more: ReplayEngine) -> None:
    with listed_more.open_session("PATH-006") as session:
        for line in (
            "show vlan id 1",  # in the listing
            "show ip route vrf VRF1",
            "show ip route vrf all",  # every VRF: names none
            "show ip bgp neighbors 10.0.0.1",
        ):
            got = session.run("DC_SPINE_01", line)
            assert got.outcome is Outcome.DENIED, (line, got.text)
        assert session.run("DC_SPINE_01", "show vrf").outcome is Outcome.RECORDED
    with listed_more.open_session("PATH-011") as session:
        assert session.run("PE_01", "show bgp neighbor 10.145.0.2").outcome is Outcome.DENIED
    with ReplayEngine(TaskSet.open(REPO / "tasks")).open_session("PATH-006") as session:
        # without the listings the replay cannot tell a missing object from an unrecorded one
        assert session.run("DC_SPINE_01", "show vlan id 999").outcome is Outcome.DENIED


def test_a_comware_bgp_peer_the_device_lacks_gets_wrong_parameter(engine: ReplayEngine) -> None:
    # RCA-008's SH_CE (Comware) has `display bgp peer ipv4` recorded (bundled)
    line = "display bgp peer ipv4 9.9.9.9 verbose"
    with engine.open_session("RCA-008") as session:
        obs = session.run("SH_CE", line)
        prompt = session.prompt("SH_CE")
        assert obs.outcome is Outcome.INVALID, obs.text
        assert obs.text.splitlines() == [
            " " * (len(prompt) + line.index("9.9.9.9")) + "^",
            " % Wrong parameter found at '^' position.",
        ]
