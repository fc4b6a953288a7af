"""Arista EOS, Cisco IOS XR and Huawei VRP8: the checks the first five dialects pass.

Each is one data file (``arista_eos.yaml``, ``cisco_iosxr.yaml``; ``huawei_vrp8.yaml`` is based on
``huawei_vrp.yaml`` and says only what differs). Their real outputs are in the MANIFEST of
tests/fixtures/vendor-cli and replay byte-exact in tests/test_replay_support.py; here: the commands
those captures were taken with, engineer abbreviations, the vendors' error texts where their carets
go, and ``?``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctbench.dialects import get_dialect
from ctbench.dialects._profile import DATA_DIR
from ctbench.replay.engine import ReplayEngine
from ctbench.replay.observation import Outcome
from ctbench.store import TaskSet
from tests.test_replay_support import ALL_TASK, build_vendor_task_set, captures

NEW = ("arista_eos", "cisco_iosxr", "huawei_vrp8")


@pytest.mark.parametrize(
    ("os_name", "expected"),
    [("arista_eos", "leaf1#"), ("cisco_iosxr", "RP/0/RP0/CPU0:leaf1#"), ("huawei_vrp8", "<leaf1>")],
)
def test_prompt(os_name: str, expected: str) -> None:
    assert get_dialect(os_name).prompt("leaf1") == expected


ABBREVIATIONS = [
    ("arista_eos", "sh ip int br", "show ip interface brief"),
    ("arista_eos", "sh int sta", "show interfaces status"),
    ("arista_eos", "sh lldp nei", "show lldp neighbors"),
    ("arista_eos", "sh ip bgp sum", "show ip bgp summary"),
    ("arista_eos", "sh ip ro vrf MGMT 10.0.0.0 255.255.255.0", "show ip route vrf MGMT 10.0.0.0/24"),
    ("arista_eos", "sh int et1 st", "show interfaces Ethernet1 status"),
    ("arista_eos", "sh mac add dyn", "show mac address-table dynamic"),
    ("cisco_iosxr", "sh ip int br", "show ip interface brief"),
    ("cisco_iosxr", "sh ipv4 int br", "show ipv4 interface brief"),
    ("cisco_iosxr", "sh bgp sum", "show bgp summary"),
    ("cisco_iosxr", "sh mpls ldp nei br", "show mpls ldp neighbor brief"),
    ("cisco_iosxr", "sh isis adj", "show isis adjacency"),
    ("cisco_iosxr", "sh int Gi0/0/0/1 br", "show interfaces GigabitEthernet0/0/0/1 brief"),
    ("cisco_iosxr", "sh int mg0/RP0/CPU0/0", "show interfaces MgmtEth0/RP0/CPU0/0"),
    ("cisco_iosxr", "sh route ipv4 10.1.1.0/24", "show route ipv4 10.1.1.0/24"),
    ("huawei_vrp8", "d cu", "display current-configuration"),  # the VRP tree, inherited
    ("huawei_vrp8", "dis lldp nei br", "display lldp neighbor brief"),
    ("huawei_vrp8", "dis dfs 1 m", "display dfs-group 1 m-lag"),  # VRP8's own commands
    ("huawei_vrp8", "dis int 10GE1/0/1", "display interface 10GE1/0/1"),
]


@pytest.mark.parametrize(("os_name", "line", "canonical"), ABBREVIATIONS)
def test_abbreviation(os_name: str, line: str, canonical: str) -> None:
    d = get_dialect(os_name)
    assert d.canonical(line) == canonical
    assert d.canonical(canonical) == canonical


def test_vrp8_commands_are_not_vrp5s() -> None:
    """VRP8 adds commands to the tree it is based on; the base does not get them."""
    assert get_dialect("huawei_vrp8").resolve("display dfs-group 1 m-lag").ok
    assert not get_dialect("huawei_vrp").resolve("display dfs-group 1 m-lag").ok


ERRORS = [
    # EOS: no caret line, the bad word and its place counted from 0.
    ("arista_eos", "show bogus", "% Invalid input (at token 1: 'bogus')\n"),
    ("arista_eos", "show ip rout x", "% Invalid input (at token 3: 'x')\n"),
    ("arista_eos", "ruter bgp 1", "% Invalid input (at token 0: 'ruter')\n"),
    ("arista_eos", "show", "% Incomplete command\n"),
    ("arista_eos", "sh i", "% Ambiguous command\n"),
    # IOS XR: the IOS caret line under the echoed prompt and line.
    (
        "cisco_iosxr",
        "show ip rout x",
        " " * len("RP/0/RP0/CPU0:R1#show ip rout ") + "^\n% Invalid input detected at '^' marker.\n",
    ),
    (
        "cisco_iosxr",
        "sh i",
        " " * len("RP/0/RP0/CPU0:R1#sh ") + "^\n% Ambiguous command at '^' marker.\n",
    ),
    ("cisco_iosxr", "show", "% Incomplete command.\n"),
    # VRP8: numbered errors.
    (
        "huawei_vrp8",
        "display ip routng-table",
        " " * len("<R1>display ip ") + "^\nError[1]: Unrecognized command found at '^' position.\n",
    ),
    (
        "huawei_vrp8",
        "display",
        " " * len("<R1>display") + "^\nError[2]: Incomplete command found at '^' position.\n",
    ),
]


@pytest.mark.parametrize(("os_name", "line", "expected"), ERRORS)
def test_error_text_and_caret(os_name: str, line: str, expected: str) -> None:
    d = get_dialect(os_name)
    res = d.resolve(line)
    assert res.error is not None
    assert d.render_error(res.error, line, d.prompt("R1")) == expected


def test_vrp8_keeps_vrp5s_tree_but_not_its_texts() -> None:
    vrp5, vrp8 = get_dialect("huawei_vrp"), get_dialect("huawei_vrp8")
    line = "display ip routng-table"
    five = vrp5.render_error(vrp5.resolve(line).error, line, "<R1>")  # type: ignore[arg-type]
    eight = vrp8.render_error(vrp8.resolve(line).error, line, "<R1>")  # type: ignore[arg-type]
    assert five.splitlines()[0] == eight.splitlines()[0]  # same caret
    assert "Error: Unrecognized" in five and "Error[1]: Unrecognized" in eight
    assert vrp8.denied_text("display version") == "Error: No permission to run the command.\n"
    assert vrp8.help("display ?", "<R1>").count("\n") > vrp5.help("display ?", "<R1>").count("\n")


@pytest.mark.parametrize("os_name", NEW)
def test_help_lists_the_next_words_with_descriptions(os_name: str) -> None:
    d = get_dialect(os_name)
    first = "display" if os_name == "huawei_vrp8" else "show"
    text = d.help(f"{first} ?", d.prompt("R1"))
    rows = [ln.split(None, 1) for ln in text.splitlines() if ln.startswith("  ")]
    words = [r[0] for r in rows]
    assert len(words) > 30 and "lldp" in words and all(len(r) == 2 for r in rows if r[0] != "|")


def test_partial_word_help() -> None:
    eos = get_dialect("arista_eos")
    assert eos.help("sh ip ro?", "leaf1#").split() == ["route"]
    xr = get_dialect("cisco_iosxr")
    assert set(xr.help("sh r?", "R1#").split()) == {"redundancy", "rib", "route", "rpl", "running-config"}


def test_captures_resolve_to_themselves() -> None:
    """The command each real capture was taken with is a command of its dialect, spelled as canonical."""
    seen = {c.os for c in captures() if c.os in NEW}
    assert seen == set(NEW)
    for c in captures():
        if c.os in NEW:
            assert get_dialect(c.os).canonical(c.command) == c.command, (c.os, c.command)


@pytest.fixture(scope="module")
def vendor_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_vendor_task_set(tmp_path_factory.mktemp("vendor") / "tasks")


def test_replay_answers_abbreviated_commands_byte_exact(vendor_root: Path) -> None:
    session = ReplayEngine(TaskSet.open(vendor_root)).open_session(ALL_TASK)
    by = {(c.os, c.command): c for c in captures()}
    for os_name, typed, full in [
        ("arista_eos", "sh ip int br", "show ip interface brief"),
        ("cisco_iosxr", "sh mpls ldp nei br", "show mpls ldp neighbor brief"),
        ("huawei_vrp8", "dis lldp nei br", "display lldp neighbor brief"),
    ]:
        cap = by[(os_name, full)]
        obs = session.run(cap.device, typed)
        assert obs.outcome is Outcome.RECORDED and obs.data == cap.source.read_bytes()
    wrong = session.run(by[("arista_eos", "show ip route")].device, "show ip rout x")
    assert wrong.outcome is Outcome.INVALID and wrong.text == "% Invalid input (at token 3: 'x')\n"


def test_vrp8_describes_its_own_commands_in_its_own_file() -> None:
    """A release line's help is merged into its base's, table by table: VRP8's file describes the
    commands it adds, VRP5's knows nothing of them, and VRP8 still has every description of VRP5's."""
    vrp5, vrp8 = get_dialect("huawei_vrp"), get_dialect("huawei_vrp8")
    eight = vrp8.help("display ?", "<R1>")
    assert "Dynamic fabric service group" in eight
    assert "Multichassis link aggregation group" in vrp8.help("display dfs-group 1 ?", "<R1>")
    for row in vrp5.help("display ?", "<R1>").splitlines():
        assert row in eight.splitlines()  # the base's descriptions survive the merge
    assert "Dynamic fabric" not in (DATA_DIR / "huawei_vrp.yaml").read_text(encoding="utf-8")
