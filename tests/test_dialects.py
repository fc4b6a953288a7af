"""Vendor dialects against real device outputs (shared/data/vendor-cli) and the vendors' own texts."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.dialects import OS_FAMILIES, CliError, Dialect, OutputFilter, Resolution, get_dialect
from tests.conftest import VENDOR_CLI

REPO = Path(__file__).resolve().parents[1]
MANIFEST = VENDOR_CLI / "MANIFEST.tsv"

needs_data = pytest.mark.skipif(
    not MANIFEST.is_file(), reason=f"vendor-cli data not found at {VENDOR_CLI} (shared/ beside the repo)"
)


def _manifest_rows() -> list[dict[str, str]]:
    if not MANIFEST.is_file():
        return []
    with MANIFEST.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


ROWS = _manifest_rows()
MANIFEST_COMMANDS = sorted({(r["platform"], r["command"]) for r in ROWS})


def raw(platform: str, command: str, n: int = 1) -> bytes:
    """Bytes of a real capture, located through MANIFEST (not by guessing the folder name)."""
    files = [r["file"] for r in ROWS if r["platform"] == platform and r["command"] == command]
    if len(files) < n:
        pytest.skip(f"no capture #{n} of {platform} {command!r} in {MANIFEST}")
    return (VENDOR_CLI / files[n - 1]).read_bytes()


# --------------------------------------------------------------------------- identity and API


def test_families_and_identity() -> None:
    assert OS_FAMILIES == (
        "arista_eos",
        "cisco_ios",
        "cisco_iosxr",
        "cisco_nxos",
        "frr",
        "hp_comware",
        "huawei_vrp",
        "huawei_vrp8",
        "juniper_junos",
        "linux",
    )  # the data files
    names = {os_name: get_dialect(os_name).display_name for os_name in OS_FAMILIES}
    assert names["huawei_vrp"] == "Huawei VRP"
    assert names["juniper_junos"] == "Juniper Junos"
    for os_name in OS_FAMILIES:
        d = get_dialect(os_name)
        assert isinstance(d, Dialect)
        assert d.os == os_name
        assert d is get_dialect(os_name), "dialects are compiled once and shared"
        assert d.templates


def test_unknown_family_is_a_clear_error() -> None:
    with pytest.raises(
        ValueError,
        match="known: arista_eos, cisco_ios, cisco_iosxr, cisco_nxos, frr, hp_comware, huawei_vrp, huawei_vrp8, juniper_junos, linux",
    ):
        get_dialect("cisco_asa")


@pytest.mark.parametrize(
    ("os_name", "expected"),
    [
        ("huawei_vrp", "<CORE-01>"),
        ("hp_comware", "<CORE-01>"),
        ("cisco_ios", "CORE-01#"),
        ("cisco_nxos", "CORE-01#"),
        ("juniper_junos", "admin@CORE-01> "),  # Junos prints a space after ">"
    ],
)
def test_prompt(os_name: str, expected: str) -> None:
    assert get_dialect(os_name).prompt("CORE-01") == expected


def test_junos_prompt_names_the_user() -> None:
    assert get_dialect("juniper_junos").prompt("mx1", user="lab") == "lab@mx1> "


# --------------------------------------------------------------------------- abbreviation

ABBREVIATIONS = [
    ("huawei_vrp", "dis ip rou", "display ip routing-table"),
    ("huawei_vrp", "d cu", "display current-configuration"),  # Huawei's own documented example
    ("huawei_vrp", "di cu", "display current-configuration"),
    ("huawei_vrp", "DIS   Int   BRIEF", "display interface brief"),
    ("huawei_vrp", "dis ospf peer br", "display ospf peer brief"),
    ("huawei_vrp", "dis ip rou 10.0.0.0 255.255.255.0", "display ip routing-table 10.0.0.0 24"),
    ("huawei_vrp", "dis ip rou 10.0.0.0/24 verb", "display ip routing-table 10.0.0.0 24 verbose"),
    ("huawei_vrp", "dis ip rou vpn-instance VPN_A", "display ip routing-table vpn-instance VPN_A"),
    ("hp_comware", "di ip ro", "display ip routing-table"),
    ("hp_comware", "dis lldp nei list", "display lldp neighbor-information list"),
    ("hp_comware", "di link mem", "display link-aggregation member-port"),
    ("hp_comware", "dis counters in int", "display counters inbound interface"),
    ("cisco_ios", "sh ip int br", "show ip interface brief"),
    ("cisco_ios", "s ip int br", "show ip interface brief"),  # built-in alias s = show
    ("cisco_ios", "p 10.1.1.1", "ping 10.1.1.1"),  # built-in alias p = ping
    ("cisco_ios", "sh run", "show running-config"),
    ("cisco_ios", "Sh\tIp  Ro", "show ip route"),
    ("cisco_ios", "sh ip ro 10.0.0.0/24", "show ip route 10.0.0.0 255.255.255.0"),
    ("cisco_nxos", "sh ip int br vrf all", "show ip interface brief vrf all"),
    ("cisco_nxos", "sh lldp neighbor", "show lldp neighbors"),  # singular accepted (NOTES 3)
    ("cisco_nxos", "sh ip ospf nei", "show ip ospf neighbors"),
    ("cisco_nxos", "sh ip ro 10.0.0.0 255.255.255.0", "show ip route 10.0.0.0/24"),
    ("juniper_junos", "sh sys up", "show system uptime"),  # gnetcli mock dialogs (NOTES 3)
    ("juniper_junos", "sh sys us", "show system users"),
    ("juniper_junos", "sh int terse", "show interfaces terse"),
    ("juniper_junos", "sh conf | d s", "show configuration | display set"),
    ("juniper_junos", "sh route prot ospf tab inet.0", "show route protocol ospf table inet.0"),
]


@pytest.mark.parametrize(("os_name", "line", "canonical"), ABBREVIATIONS)
def test_abbreviation_resolves_like_the_full_command(os_name: str, line: str, canonical: str) -> None:
    d = get_dialect(os_name)
    short, full = d.resolve(line), d.resolve(canonical)
    assert short.ok and full.ok, (short.error, full.error)
    assert short.canonical == full.canonical == canonical
    assert d.canonical(line) == canonical


def _ntc_index_pairs() -> list[tuple[str, str, str]]:
    """(os, shortest form, full form) from ntc-templates' index, for the simple entries."""
    import re

    try:
        import ntc_templates
    except ImportError:
        return []
    index = Path(ntc_templates.__file__).parent / "templates" / "index"
    if not index.is_file():
        return []
    simple = re.compile(
        r"[A-Za-z0-9-]+(?:\[\[[A-Za-z0-9-]+\]\])?(?: [A-Za-z0-9-]+(?:\[\[[A-Za-z0-9-]+\]\])?)*"
    )
    pairs = []
    for line in index.read_text(encoding="utf-8").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 4 and parts[2] in OS_FAMILIES and simple.fullmatch(parts[3]):
            short = re.sub(r"\[\[[^\]]*\]\]", "", parts[3])
            full = re.sub(r"\[\[([^\]]*)\]\]", r"\1", parts[3])
            pairs.append((parts[2], short, full))
    return pairs


def test_ntc_templates_abbreviations_never_mean_another_command() -> None:
    """The ntc-templates index spells a short form per command (NOTES 3: contributor choices, not
    device truth). Where our tree knows the full command, the short form must resolve to it or be
    refused as ambiguous/incomplete (the tree has a keyword the contributor's device lacked), and
    never silently mean another command."""
    pairs = _ntc_index_pairs()
    if not pairs:
        pytest.skip("ntc-templates (test extra) is not installed")
    same = checked = 0
    for os_name, short, full in pairs:
        d = get_dialect(os_name)
        full_res = d.resolve(full)
        if not full_res.ok:
            continue  # a command outside our tree (sdwan, wireless ...)
        checked += 1
        res = d.resolve(short)
        if res.ok:
            assert res.canonical == full_res.canonical, (os_name, short, full)
            same += 1
        else:
            assert res.error is not None and res.error.kind in ("ambiguous", "incomplete"), (os_name, short)
    assert checked >= 150
    assert same / checked >= 0.8


def test_incomplete_keyword_rule_from_huawei_doc() -> None:
    """'you can enter d cu, di cu, or dis cu. However, you cannot enter d c or dis c'."""
    d = get_dialect("huawei_vrp")
    for line in ("d cu", "di cu", "dis cu"):
        assert d.resolve(line).canonical == "display current-configuration"
    for line in ("d c", "dis c"):
        err = d.resolve(line).error
        assert err is not None and err.kind == "ambiguous"
        assert "current-configuration" in err.candidates


# --------------------------------------------------------------------------- errors, carets

# (os, hostname, typed line, exactly what the device prints after echoing <prompt><line>)
ERRORS = [
    # Huawei VRP: prompt "<HUAWEI>" is 8 wide; the caret goes under the offending token.
    (
        "huawei_vrp",
        "HUAWEI",
        "display ip routting-table",
        "                   ^\nError: Unrecognized command found at '^' position.\n",
    ),
    ("huawei_vrp", "HUAWEI", "dis c", "            ^\nError:Ambiguous command found at '^' position.\n"),
    (
        "huawei_vrp",
        "HUAWEI",
        "display ip",
        "                  ^\nError:Incomplete command found at '^' position.\n",
    ),
    (
        "huawei_vrp",
        "HUAWEI",
        "display clock now",
        "                      ^\nError:Too many parameters found at '^' position.\n",
    ),
    (
        "huawei_vrp",
        "HUAWEI",
        "display ip routing-table 300.1.1.1",
        "                                 ^\nError: Wrong parameter found at '^' position.\n",
    ),
    # H3C Comware: leading space before '%'.
    (
        "hp_comware",
        "H3C",
        "display lldp neighbour-information",
        "                  ^\n % Unrecognized command found at '^' position.\n",
    ),
    ("hp_comware", "H3C", "dis l", "         ^\n % Ambiguous command found at '^' position.\n"),
    (
        "hp_comware",
        "H3C",
        "display lldp",
        "                 ^\n % Incomplete command found at '^' position.\n",
    ),
    (
        "hp_comware",
        "H3C",
        "display clock now",
        "                   ^\n % Too many parameters found at '^' position.\n",
    ),
    # Cisco IOS: caret only for invalid input; one unknown word is tried as a host name.
    ("cisco_ios", "R1", "show ip intreface brief", "           ^\n% Invalid input detected at '^' marker.\n"),
    ("cisco_ios", "R1", "shwo", "% Unknown command or computer name, or unable to find computer address\n"),
    ("cisco_ios", "R1", "sh i", '% Ambiguous command:  "sh i"\n'),
    ("cisco_ios", "R1", "show ip", "% Incomplete command.\n"),
    ("cisco_ios", "R1", "show", '% Type "show ?" for a list of subcommands\n'),
    # Cisco NX-OS: "N9K#" is 4 wide.
    ("cisco_nxos", "N9K", "show ip routes", "            ^\n% Invalid command at '^' marker.\n"),
    ("cisco_nxos", "N9K", "show i", "         ^\n% Ambiguous command at '^' marker.\n"),
    ("cisco_nxos", "N9K", "show ip", "           ^\n% Incomplete command at '^' marker.\n"),
    # Junos: "admin@vmx1> " is 12 wide (a space after ">"); first word unknown vs a later word.
    ("juniper_junos", "vmx1", "shwo version", "            ^\nunknown command.\n"),
    (
        "juniper_junos",
        "vmx1",
        "show interfacs terse",
        "                 ^\nsyntax error, expecting <command>.\n",
    ),
    (
        "juniper_junos",
        "vmx1",
        "show i",
        "                 ^\n'i' is ambiguous.\nPossible completions:\n  igmp\n  interfaces\n  ipv6\n  isis\n",
    ),
    ("juniper_junos", "vmx1", "show", "                ^\nsyntax error, expecting <command>.\n"),
]


@pytest.mark.parametrize(("os_name", "host", "line", "expected"), ERRORS)
def test_error_text_and_caret(os_name: str, host: str, line: str, expected: str) -> None:
    d = get_dialect(os_name)
    res = d.resolve(line)
    assert not res.ok and res.canonical is None
    assert isinstance(res.error, CliError)
    assert d.render_error(res.error, line, d.prompt(host)) == expected


@pytest.mark.parametrize("os_name", [o for o in OS_FAMILIES if o not in ("frr", "linux")])  # own tests
def test_ambiguous_and_incomplete_have_their_own_messages(os_name: str) -> None:
    d = get_dialect(os_name)
    first = "display" if os_name.startswith(("huawei_vrp", "hp_comware")) else "show"
    prompt = d.prompt("R")

    def message(line: str, kind: str) -> str:
        res = d.resolve(line)
        assert res.error is not None and res.error.kind == kind, res.error
        lines = d.render_error(res.error, line, prompt).splitlines()
        return "\n".join(lines[1:] if lines[0].strip() == "^" else lines)

    ambiguous = message(f"{first} i", "ambiguous")
    incomplete = message(f"{first} ip", "incomplete")
    unknown = message(f"{first} zzz", "unrecognised")
    assert ambiguous not in (incomplete, unknown)
    if os_name == "juniper_junos":
        # Junos has no incomplete-command message: it expects a further word (NOTES 2.5).
        assert incomplete == unknown == "syntax error, expecting <command>."
    else:
        assert incomplete != unknown


def test_error_positions_are_offsets_in_the_typed_line() -> None:
    d = get_dialect("cisco_ios")
    err = d.resolve("  show   ip   bogus brief").error
    assert err is not None
    assert (err.kind, err.position, err.token, err.index) == ("unrecognised", 14, "bogus", 2)
    assert err.context == ("show", "ip")


def test_canonical_raises_with_the_rendered_error() -> None:
    d = get_dialect("huawei_vrp")
    with pytest.raises(ValueError, match=r"Error: Unrecognized command found at '\^' position\."):
        d.canonical("display bogus")


def test_filter_errors() -> None:
    ios = get_dialect("cisco_ios")
    nx = get_dialect("cisco_nxos")
    err = ios.resolve("show version | bogus x").error
    assert err is not None and (err.kind, err.position, err.token) == ("unrecognised", 15, "bogus")
    err = ios.resolve("show version | include").error
    assert err is not None and err.kind == "incomplete"
    err = nx.resolve("show version | e x").error  # egrep / exclude
    assert err is not None and err.kind == "ambiguous" and err.candidates == ("egrep", "exclude")
    err = nx.resolve("show version | count x").error  # NX-OS count takes no argument
    assert err is not None and err.kind == "too_many"
    err = get_dialect("juniper_junos").resolve("show version | last x").error
    assert err is not None and err.kind == "wrong_parameter"


# --------------------------------------------------------------------------- valid, not recorded


@pytest.mark.parametrize(
    ("os_name", "line", "denied"),
    [
        (
            "huawei_vrp",
            "display ip routing-table",
            "Error: You do not have permission to run the command or the command is incomplete.\n",
        ),
        ("hp_comware", "display ip routing-table", "Permission denied.\n"),
        ("cisco_ios", "show ip route", "Command authorization failed.\n"),
        ("cisco_nxos", "show ip route", "% Permission denied for the role\n"),
        ("juniper_junos", "show route", "error: permission denied\n"),
    ],
)
def test_valid_command_not_recorded_resolves_and_has_a_denial_text(
    os_name: str, line: str, denied: str
) -> None:
    d = get_dialect(os_name)
    res = d.resolve(line, recorded=frozenset({"something else entirely"}))
    assert res.ok and res.canonical == line and not res.recorded
    assert d.denied_text(res.canonical) == denied


# --------------------------------------------------------------------------- recorded extras


def test_recorded_commands_outside_the_tree_are_valid_and_abbreviable() -> None:
    d = get_dialect("huawei_vrp")
    recorded = frozenset({"display firewall hrp detail", "display widget GigabitEthernet1/0/1 VPN_A"})
    assert not d.resolve("display firewall hrp detail").ok
    res = d.resolve("dis firewall hrp det", recorded=recorded)
    assert res.ok and res.canonical == "display firewall hrp detail" and res.recorded
    res = d.resolve("dis widg GE1/0/1 VPN_A | i up", recorded=recorded)
    assert res.ok and res.canonical == "display widget GigabitEthernet1/0/1 VPN_A"
    assert [str(f) for f in res.filters] == ["| include up"]
    # The recorded value is exact: another VPN is not that command.
    assert not d.resolve("dis widg GE1/0/1 VPN_B", recorded=recorded).ok
    # The tree still wins where it knows the command.
    res = d.resolve("dis ver", recorded=recorded)
    assert res.canonical == "display version" and not res.recorded


def test_recorded_commands_on_junos_keep_their_spelling() -> None:
    d = get_dialect("juniper_junos")
    recorded = frozenset({"show security idp status", "show route table VPN-A.inet.0"})
    res = d.resolve("sh security idp stat", recorded=recorded)
    assert res.ok and res.canonical == "show security idp status"
    assert (
        d.resolve("show route table VPN-A.inet.0", recorded=recorded).canonical
        == "show route table VPN-A.inet.0"
    )


def test_recorded_accepts_any_iterable() -> None:
    d = get_dialect("cisco_ios")
    assert d.resolve("sh foo bar", recorded={"show foo bar"}).canonical == "show foo bar"
    assert d.resolve("sh foo bar", recorded=["show foo bar"]).canonical == "show foo bar"


# --------------------------------------------------------------------------- MANIFEST


@needs_data
@pytest.mark.parametrize(("os_name", "command"), MANIFEST_COMMANDS or [("huawei_vrp", "display version")])
def test_every_manifest_command_resolves_to_itself(os_name: str, command: str) -> None:
    """The canonical form of every captured command is the command string itself. Filters are not
    part of the canonical form, so a capture taken with one equals canonical plus filters."""
    d = get_dialect(os_name)
    res = d.resolve(command)
    assert res.ok, d.render_error(res.error, command, d.prompt("R")) if res.error else ""
    assert res.full == command
    assert res.canonical == command.split(" | match")[0]
    assert d.resolve(res.canonical).canonical == res.canonical  # idempotent


@needs_data
def test_manifest_covers_every_platform() -> None:
    platforms = {os_name for os_name, _ in MANIFEST_COMMANDS}
    # FRR: its live vtysh answers (tests/test_frr_dialect.py); linux: lab hosts (tests/test_lab.py)
    assert platforms == set(OS_FAMILIES) - {"frr", "linux"}
    assert len(MANIFEST_COMMANDS) >= 200


# --------------------------------------------------------------------------- interface names

INTERFACES = [
    ("huawei_vrp", "GE1/0/1", "GigabitEthernet1/0/1"),
    ("huawei_vrp", "ge1/0/1", "GigabitEthernet1/0/1"),
    ("huawei_vrp", "GigabitEthernet 0/0/1", "GigabitEthernet0/0/1"),
    ("huawei_vrp", "XGE0/0/1", "XGigabitEthernet0/0/1"),
    ("huawei_vrp", "Eth-Trunk10", "Eth-Trunk10"),
    ("huawei_vrp", "eth-trunk10.100", "Eth-Trunk10.100"),
    ("huawei_vrp", "Vlanif100", "Vlanif100"),
    ("huawei_vrp", "Loop0", "LoopBack0"),
    ("huawei_vrp", "10GE1/0/1", "10GE1/0/1"),
    ("huawei_vrp", "Eth0/0/1", "Ethernet0/0/1"),
    ("hp_comware", "GE1/0/1", "GigabitEthernet1/0/1"),
    ("hp_comware", "XGE1/0/49", "Ten-GigabitEthernet1/0/49"),
    ("hp_comware", "BAGG1", "Bridge-Aggregation1"),
    ("hp_comware", "Vlan-int10", "Vlan-interface10"),
    ("hp_comware", "vlan 10", "Vlan-interface10"),
    ("hp_comware", "RAGG2", "Route-Aggregation2"),
    ("cisco_ios", "Gi0/1", "GigabitEthernet0/1"),
    ("cisco_ios", "gi1/0/1.100", "GigabitEthernet1/0/1.100"),
    ("cisco_ios", "Te1/1/1", "TenGigabitEthernet1/1/1"),
    ("cisco_ios", "Po1", "Port-channel1"),
    ("cisco_ios", "Lo0", "Loopback0"),
    ("cisco_ios", "Vl10", "Vlan10"),
    ("cisco_ios", "Fa0/1", "FastEthernet0/1"),
    ("cisco_ios", "Se0/0/0:1", "Serial0/0/0:1"),
    ("cisco_nxos", "Eth1/1", "Ethernet1/1"),
    ("cisco_nxos", "e1/1", "Ethernet1/1"),
    ("cisco_nxos", "Po10", "port-channel10"),
    ("cisco_nxos", "Lo0", "loopback0"),
    ("cisco_nxos", "mgmt0", "mgmt0"),
    ("juniper_junos", "xe-0/0/0", "xe-0/0/0"),
    ("juniper_junos", "ge-0/0/1.0", "ge-0/0/1.0"),
    ("juniper_junos", "ae0", "ae0"),
]


@pytest.mark.parametrize(("os_name", "typed", "full"), INTERFACES)
def test_interface_forms(os_name: str, typed: str, full: str) -> None:
    d = get_dialect(os_name)
    assert d.normalize_interface(typed) == full
    command = {
        "huawei_vrp": "display interface",
        "hp_comware": "display interface",
        "cisco_nxos": "show interface",  # NX-OS spells it in the singular
    }.get(os_name, "show interfaces")
    res = d.resolve(f"{command} {typed}")
    assert res.ok, res.error
    assert res.canonical is not None and res.canonical.endswith(f" {full}")


@pytest.mark.parametrize(
    ("os_name", "name"),
    [
        ("huawei_vrp", "Bogus1/0/1"),
        ("cisco_ios", "T1/0/1"),  # Ten/Twenty-Five/Two/Tunnel: ambiguous type, left alone
        ("juniper_junos", "GE-0/0/0"),  # Junos names are exact
        ("juniper_junos", "ge0/0/0"),
        ("cisco_nxos", "not an interface"),
    ],
)
def test_unknown_interface_forms_are_returned_unchanged(os_name: str, name: str) -> None:
    assert get_dialect(os_name).normalize_interface(name) == name


# --------------------------------------------------------------------------- filters on real output


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


@needs_data
def test_ios_include_exclude_begin_count_on_real_output() -> None:
    d = get_dialect("cisco_ios")
    data = raw("cisco_ios", "show ip interface brief")
    lines = _lines(data)

    res = d.resolve("sh ip int br | i up")
    assert res.canonical == "show ip interface brief"
    assert d.apply_filters(data, res.filters) == b"".join(ln for ln in lines if b"up" in ln)

    res = d.resolve("sh ip int br | ex unassigned")
    assert d.apply_filters(data, res.filters) == b"".join(ln for ln in lines if b"unassigned" not in ln)

    res = d.resolve("sh ip int br | b Loopback")
    first = next(i for i, ln in enumerate(lines) if b"Loopback" in ln)
    assert d.apply_filters(data, res.filters) == b"".join(lines[first:])

    res = d.resolve("sh ip int br | c up")
    n = sum(1 for ln in lines if b"up" in ln)
    assert d.apply_filters(data, res.filters) == f"Number of lines which match regexp = {n}\n".encode()

    # Chained, and the include takes a regular expression as on the device.
    res = d.resolve("sh ip int br | inc ^Ethernet0/0 | exclude deleted")
    out = d.apply_filters(data, res.filters)
    assert out == b"".join(ln for ln in lines if ln.startswith(b"Ethernet0/0") and b"deleted" not in ln)
    assert [str(f) for f in res.filters] == ["| include ^Ethernet0/0", "| exclude deleted"]
    assert res.full == "show ip interface brief | include ^Ethernet0/0 | exclude deleted"


@needs_data
def test_ios_section_on_real_running_config() -> None:
    d = get_dialect("cisco_ios")
    data = raw("cisco_ios", "show running-config")
    res = d.resolve("sh run | sec ^interface")
    out = d.apply_filters(data, res.filters)
    assert out.startswith(b"interface ")
    for ln in _lines(out):
        assert ln.startswith((b"interface ", b" ")), ln
    assert out.count(b"\ninterface ") + 1 == sum(1 for ln in _lines(data) if ln.startswith(b"interface "))


@needs_data
def test_vrp_filters_on_real_output() -> None:
    d = get_dialect("huawei_vrp")
    data = raw("huawei_vrp", "display interface brief")
    lines = _lines(data)
    res = d.resolve("dis int br | i ^Eth-Trunk")
    assert res.canonical == "display interface brief"
    assert d.apply_filters(data, res.filters) == b"".join(ln for ln in lines if ln.startswith(b"Eth-Trunk"))
    res = d.resolve("dis int br | count Eth-Trunk")
    n = sum(1 for ln in lines if b"Eth-Trunk" in ln)
    assert d.apply_filters(data, res.filters) == f"Total lines: {n}.\n".encode()
    res = d.resolve("dis int br | begin ^Interface | exclude GigabitEthernet")
    first = next(i for i, ln in enumerate(lines) if ln.startswith(b"Interface"))
    assert d.apply_filters(data, res.filters) == b"".join(
        ln for ln in lines[first:] if b"GigabitEthernet" not in ln
    )


@needs_data
def test_vrp_underscore_is_a_delimiter() -> None:
    d = get_dialect("huawei_vrp")
    data = raw("huawei_vrp", "display interface brief")
    res = d.resolve("dis int br | include _up_")
    out = d.apply_filters(data, res.filters)
    assert out and all(b" up " in ln for ln in _lines(out))


@needs_data
def test_junos_match_except_count_on_real_output() -> None:
    d = get_dialect("juniper_junos")
    data = raw("juniper_junos", "show interfaces terse")
    lines = _lines(data)
    res = d.resolve("show interfaces terse | match ge-0/0")
    assert res.canonical == "show interfaces terse"
    expected = b"".join(ln for ln in lines if b"ge-0/0" in ln)
    assert d.apply_filters(data, res.filters) == expected
    # Junos match ignores case.
    assert d.apply_filters(data, d.resolve("show interfaces terse | match GE-0/0").filters) == expected
    res = d.resolve("show interfaces terse | match ge- | except inet")
    assert d.apply_filters(data, res.filters) == b"".join(
        ln for ln in lines if b"ge-" in ln and b"inet" not in ln
    )
    res = d.resolve("show interfaces terse | count")
    assert d.apply_filters(data, res.filters) == f"Count: {len(lines)} lines\n".encode()
    res = d.resolve('show interfaces terse | match "up    up"')
    assert [str(f) for f in res.filters] == ['| match "up    up"']
    assert d.apply_filters(data, res.filters) == b"".join(ln for ln in lines if b"up    up" in ln)


@needs_data
def test_junos_capture_taken_with_filters_is_reproduced() -> None:
    """MANIFEST holds both 'show log messages' and the same log filtered by '| match sshd | except
    Received': applying the resolved filters to the first gives the second."""
    d = get_dialect("juniper_junos")
    res = d.resolve("show log messages | match sshd | except Received")
    assert res.canonical == "show log messages"
    unfiltered = raw("juniper_junos", "show log messages")
    out = d.apply_filters(unfiltered, res.filters)
    assert out
    for ln in _lines(out):
        assert b"sshd" in ln.lower() and b"received" not in ln.lower()
    filtered = raw("juniper_junos", "show log messages | match sshd | except Received")
    assert d.apply_filters(filtered, res.filters) == filtered  # the capture already satisfies them


@needs_data
def test_junos_display_set_is_part_of_the_command() -> None:
    d = get_dialect("juniper_junos")
    res = d.resolve("show configuration | display set | match interfaces")
    assert res.canonical == "show configuration | display set"
    data = raw("juniper_junos", "show configuration | display set")
    out = d.apply_filters(data, res.filters)
    assert out and all(b"interfaces" in ln.lower() for ln in _lines(out))


@needs_data
def test_nxos_and_comware_filters_on_real_output() -> None:
    nx = get_dialect("cisco_nxos")
    data = raw("cisco_nxos", "show interface brief")
    lines = _lines(data)
    res = nx.resolve("sh int br | inc Eth | last 3")
    assert nx.apply_filters(data, res.filters) == b"".join([ln for ln in lines if b"Eth" in ln][-3:])
    res = nx.resolve("sh int br | count")
    assert nx.apply_filters(data, res.filters) == f"{len(lines)}\n".encode()

    h3c = get_dialect("hp_comware")
    data = raw("hp_comware", "display interface brief")
    lines = _lines(data)
    res = h3c.resolve("dis int brief | inc UP | ex Loop")
    assert res.canonical == "display interface brief"
    assert h3c.apply_filters(data, res.filters) == b"".join(
        ln for ln in lines if b"UP" in ln and b"Loop" not in ln
    )


def test_filters_keep_crlf_and_bytes_exact() -> None:
    d = get_dialect("cisco_ios")
    data = b"Interface  Status\r\nGi0/1  up  \r\nGi0/2  down\r\n\xff\xfe odd bytes up\r\n"
    res = d.resolve("show ip interface brief | include up")
    assert d.apply_filters(data, res.filters) == b"Gi0/1  up  \r\n\xff\xfe odd bytes up\r\n"
    res = d.resolve("show ip interface brief | count")
    assert d.apply_filters(data, res.filters) == b"Number of lines which match regexp = 4\r\n"
    assert d.apply_filters(data, ()) is data


def test_pipe_inside_a_regex_is_an_alternation() -> None:
    d = get_dialect("cisco_ios")
    res = d.resolve("show run | i ospf|bgp")
    assert [f.pattern for f in res.filters] == ["ospf|bgp"]
    data = b"router ospf 1\nrouter bgp 65000\nhostname R1\n"
    assert d.apply_filters(data, res.filters) == b"router ospf 1\nrouter bgp 65000\n"


def test_pipe_glued_to_the_command() -> None:
    res = get_dialect("huawei_vrp").resolve("dis ip rou|i 10.0")
    assert res.canonical == "display ip routing-table"
    assert [str(f) for f in res.filters] == ["| include 10.0"]


def test_output_filter_is_a_value() -> None:
    flt = get_dialect("cisco_ios").resolve("sh ver | i Version").filters[0]
    assert flt == OutputFilter("include", "include", pattern="Version", underscore=True)
    assert str(flt) == "| include Version"
    assert hash(flt) == hash(OutputFilter("include", "include", pattern="Version", underscore=True))


# --------------------------------------------------------------------------- hostile input

HOSTILE = [
    "x" * 10_000_000,
    "show\x00version",
    "display\x1b[2J version",
    "\x07\x08\x7f",
    "sh ver\nshow run",
    "ｓｈｏｗ version",
    "display 版本",
    "../../etc/passwd",
    "cat ../../etc/passwd",
    "",
    "   ",
    "|",
    "| include x",
    "show version | include (a+)+$",
    "show version | include " + "a" * 5000,
    "?",
    "%s%s%n",
    "' OR 1=1 --",
    "{{7*7}}",
]


@pytest.mark.parametrize("os_name", OS_FAMILIES)
@pytest.mark.parametrize("line", HOSTILE, ids=lambda s: repr(s[:20]))
def test_hostile_input_gives_a_clean_error(os_name: str, line: str) -> None:
    d = get_dialect(os_name)
    res = d.resolve(line)
    assert isinstance(res, Resolution)
    assert not res.ok and res.canonical is None and res.error is not None
    text = d.render_error(res.error, line, d.prompt("R1"))
    assert isinstance(text, str) and text.endswith("\n") and len(text) < 4096
    assert all(ch == "\n" or ch.isprintable() for ch in text), "no control characters are echoed"


def test_path_like_parameters_are_just_words() -> None:
    """Where the tree takes a free word (a Junos log file name), a path is a valid command that was
    not recorded, so the engine denies it; nothing in the dialect touches the file system."""
    d = get_dialect("juniper_junos")
    res = d.resolve("show log ../../etc/passwd")
    assert res.ok and res.canonical == "show log ../../etc/passwd"


def test_huge_line_is_not_cached_or_scanned() -> None:
    d = get_dialect("huawei_vrp")
    res = d.resolve("display " * 2_000_000)
    assert res.error is not None and res.error.position == 510 and res.error.token == ""


# --------------------------------------------------------------------------- extra trees


def test_extra_tree_files_extend_a_vendor(tmp_path: Path) -> None:
    extra = tmp_path / "huawei_vrp.yaml"
    extra.write_text("commands:\n  - display widget [<number>] [verbose]\n", encoding="utf-8")
    other = tmp_path / "ios-extra.yaml"
    other.write_text("os: cisco_ios\ncommands:\n  - show widget\n", encoding="utf-8")
    d = get_dialect("huawei_vrp", extra_trees=(extra, other))
    assert d is get_dialect("huawei_vrp", extra_trees=[extra, other])
    assert d.resolve("dis widg 3 verb").canonical == "display widget 3 verbose"
    assert not get_dialect("huawei_vrp").resolve("dis widg 3").ok
    assert not d.resolve("show widget").ok  # the other file is for IOS
    assert get_dialect("cisco_ios", extra_trees=(extra, other)).resolve("sh widg").canonical == "show widget"


def test_bad_extra_tree_files_say_what_is_wrong(tmp_path: Path) -> None:
    bad_key = tmp_path / "huawei_vrp.yaml"
    bad_key.write_text("prompt: x\ncommands: []\n", encoding="utf-8")
    with pytest.raises(ValueError, match="may hold only"):
        get_dialect("huawei_vrp", extra_trees=(bad_key,))
    no_os = tmp_path / "misc.yaml"
    no_os.write_text("commands: [display x]\n", encoding="utf-8")
    with pytest.raises(ValueError, match="cannot tell which OS"):
        get_dialect("huawei_vrp", extra_trees=(no_os,))
    bad_template = tmp_path / "cisco_ios.yaml"
    bad_template.write_text("commands:\n  - show [unclosed\n", encoding="utf-8")
    with pytest.raises(ValueError, match="show \\[unclosed"):
        get_dialect("cisco_ios", extra_trees=(bad_template,))
    bad_type = tmp_path / "cisco_nxos.yaml"
    bad_type.write_text("commands:\n  - show thing <colour>\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown parameter type <colour>"):
        get_dialect("cisco_nxos", extra_trees=(bad_type,))


# --------------------------------------------------------------------------- hygiene


def test_core_imports_nothing_of_the_ui_or_components() -> None:
    code = (
        "import sys, ctbench.dialects as d; d.get_dialect('huawei_vrp').resolve('dis ver');"
        "bad = [m for m in sys.modules if m == 'textual' or m.startswith(('textual.', 'ctbench.authoring',"
        " 'ctbench.review', 'ctbench.replay', 'ctbench.evaluate'))]; print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_resolutions_are_cached_and_shared() -> None:
    d = get_dialect("cisco_ios")
    rec = frozenset({"show version"})
    assert d.resolve("sh ver", rec) is d.resolve("sh ver", rec)
