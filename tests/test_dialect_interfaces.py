"""Interface names as engineers type them, per vendor: what the device takes and what it refuses.

Each vendor has one table. An accepted row gives the typed name and the full name the recording key
uses; a rejected row gives the device's exact answer (caret line included, aligned under the typed
name counting the prompt). The command used is the vendor's ``display/show interface`` with the
name, and ``display current-configuration interface`` on the Huawei/H3C boxes, which is how most
people look at one port's configuration.
"""

from __future__ import annotations

import pytest

from ctbench.dialects import get_dialect

HOST = "R1"

ACCEPTED: dict[str, list[tuple[str, str]]] = {
    "huawei_vrp": [
        ("g0/0/1", "GigabitEthernet0/0/1"),
        ("G0/0/24", "GigabitEthernet0/0/24"),
        ("gi0/0/1", "GigabitEthernet0/0/1"),
        ("GE0/0/1", "GigabitEthernet0/0/1"),
        ("ge0/0/1", "GigabitEthernet0/0/1"),
        ("GigabitEthernet 0/0/1", "GigabitEthernet0/0/1"),
        ("XGE0/0/1", "XGigabitEthernet0/0/1"),
        ("xge1/0/1", "XGigabitEthernet1/0/1"),
        ("eth-trunk1", "Eth-Trunk1"),
        ("Eth-Trunk1.100", "Eth-Trunk1.100"),
        ("vlanif10", "Vlanif10"),
        ("loop0", "LoopBack0"),
        ("LoopBack0", "LoopBack0"),
        ("10GE1/0/1", "10GE1/0/1"),
    ],
    "hp_comware": [
        ("g1/0/1", "GigabitEthernet1/0/1"),
        ("ge1/0/1", "GigabitEthernet1/0/1"),
        ("GE1/0/1", "GigabitEthernet1/0/1"),
        ("xge1/0/49", "Ten-GigabitEthernet1/0/49"),
        ("bagg1", "Bridge-Aggregation1"),
        ("BAGG1", "Bridge-Aggregation1"),
        ("vlan10", "Vlan-interface10"),
        ("Vlan-interface10", "Vlan-interface10"),
        ("loop0", "LoopBack0"),
    ],
    "cisco_ios": [
        ("g0/1", "GigabitEthernet0/1"),
        ("gi0/1", "GigabitEthernet0/1"),
        ("Gi1/0/1.100", "GigabitEthernet1/0/1.100"),
        ("te1/1/1", "TenGigabitEthernet1/1/1"),
        ("Te1/1/1", "TenGigabitEthernet1/1/1"),
        ("po1", "Port-channel1"),
        ("lo0", "Loopback0"),
        ("fa0/1", "FastEthernet0/1"),
        ("f0/1", "FastEthernet0/1"),
        ("vlan10", "Vlan10"),
        ("GigabitEthernet 0/1", "GigabitEthernet0/1"),
    ],
    "cisco_nxos": [
        ("e1/1", "Ethernet1/1"),
        ("eth1/1", "Ethernet1/1"),
        ("Ethernet1/1", "Ethernet1/1"),
        ("po1", "port-channel1"),
        ("Po10", "port-channel10"),
        ("mgmt0", "mgmt0"),
        ("lo0", "loopback0"),
        ("vlan10", "Vlan10"),
    ],
    "juniper_junos": [
        ("ge-0/0/0", "ge-0/0/0"),
        ("ge-0/0/0.0", "ge-0/0/0.0"),
        ("xe-0/0/0:1", "xe-0/0/0:1"),
        ("ae0.0", "ae0.0"),
        ("lo0.0", "lo0.0"),
        ("irb.10", "irb.10"),
    ],
}

# (typed name, message); the caret (when the vendor prints one) goes under the typed name.
REJECTED: dict[str, list[tuple[str, str]]] = {
    "huawei_vrp": [
        ("Bogus0/0/1", "Error: Wrong parameter found at '^' position."),
        ("e0/0/1", "Error: Wrong parameter found at '^' position."),  # Ethernet or Eth-Trunk
        ("GE0/0/1/", "Error: Wrong parameter found at '^' position."),
    ],
    "hp_comware": [
        ("t1/0/1", " % Wrong parameter found at '^' position."),  # Ten-GigabitEthernet or Tunnel
        ("x1/0/1", " % Wrong parameter found at '^' position."),
    ],
    "cisco_ios": [
        ("t0/1", "% Invalid input detected at '^' marker."),  # Ten, Two, TwentyFive, Tunnel
        ("Bogus0/1", "% Invalid input detected at '^' marker."),
    ],
    "cisco_nxos": [
        ("x1/1", "% Invalid command at '^' marker."),
        ("Gi0/1", "% Invalid command at '^' marker."),  # NX-OS has no GigabitEthernet
    ],
    "juniper_junos": [
        ("GE-0/0/0", "error: device GE-0/0/0 not found"),  # names are exact, lower case
        ("ge0/0/0", "error: device ge0/0/0 not found"),
        ("ge-0/0/0.x", "error: device ge-0/0/0.x not found"),
    ],
}

SHOW = {
    "huawei_vrp": "display interface",
    "hp_comware": "display interface",
    "cisco_ios": "show interfaces",
    "cisco_nxos": "show interface",
    "juniper_junos": "show interfaces",
}
CONFIG = {
    "huawei_vrp": "display current-configuration interface",
    "hp_comware": "display current-configuration interface",
}


def _rows(table: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str, str]]:
    return [(os_name, a, b) for os_name, rows in table.items() for a, b in rows]


@pytest.mark.parametrize(("os_name", "typed", "full"), _rows(ACCEPTED))
def test_accepted_interface_names(os_name: str, typed: str, full: str) -> None:
    d = get_dialect(os_name)
    assert d.normalize_interface(typed) == full
    for command in filter(None, (SHOW[os_name], CONFIG.get(os_name))):
        res = d.resolve(f"{command} {typed}")
        assert res.ok, d.render_error(res.error, f"{command} {typed}", d.prompt(HOST)) if res.error else ""
        assert res.canonical == f"{command} {full}"


def test_abbreviated_command_with_short_interface_on_vrp() -> None:
    """The issue's own example: how most people look at a port on a Huawei switch."""
    d = get_dialect("huawei_vrp")
    for line in ("dis cur int g0/0/24", "dis cur int G0/0/24", "dis cu int GE0/0/24"):
        assert d.resolve(line).canonical == "display current-configuration interface GigabitEthernet0/0/24"


@pytest.mark.parametrize(("os_name", "typed", "message"), _rows(REJECTED))
def test_rejected_interface_names(os_name: str, typed: str, message: str) -> None:
    d = get_dialect(os_name)
    assert d.normalize_interface(typed) == typed  # unknown forms are left alone
    line = f"{SHOW[os_name]} {typed}"
    res = d.resolve(line)
    assert res.error is not None and res.error.kind == "wrong_parameter"
    prompt = d.prompt(HOST)
    text = d.render_error(res.error, line, prompt)
    if "^" in message:
        caret = " " * (len(prompt) + len(SHOW[os_name]) + 1) + "^"
        assert text == f"{caret}\n{message}\n"
    else:
        assert text == f"{message}\n"
