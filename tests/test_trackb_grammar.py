"""The vendor dialects accept Track B's whitelisted commands, with their ``?`` help, as data."""

from __future__ import annotations

import pytest

from ctbench.dialects import get_dialect
from ctbench.replay.trackb.layout import VENDOR_OS
from ctbench.replay.trackb.whitelist import refusal, sample_commands, whitelist

CASES = [(v, c) for v in ("huawei", "h3c", "cisco") for c in sample_commands(v)]


@pytest.mark.parametrize(("vendor", "command"), CASES, ids=[f"{v}:{c}" for v, c in CASES])
def test_every_whitelisted_command_resolves(vendor: str, command: str) -> None:
    assert whitelist(vendor).accepts(command)
    res = get_dialect(VENDOR_OS[vendor]).resolve(command)
    assert res.ok, (vendor, command, res.error)


@pytest.mark.parametrize(("vendor", "command"), CASES, ids=[f"{v}:{c}" for v, c in CASES])
def test_help_along_every_whitelisted_command_has_descriptions(vendor: str, command: str) -> None:
    d = get_dialect(VENDOR_OS[vendor])
    words = command.split()
    for k in range(1, len(words)):
        text = d.help(" ".join(words[:k]) + " ?", d.prompt("R1"))
        assert "^" not in text, (command, k, text)
        for line in text.splitlines():
            item = line.strip()
            if not line.startswith("  ") or item in ("<cr>", "<CR>", "|") or item.startswith("<"):
                continue
            assert len(item.split(None, 1)) == 2, f"{vendor}: no description for {item!r} after {words[:k]}"


def test_refusals_name_the_offending_word() -> None:
    assert refusal("h3c", "SW1", "display vlan brief").splitlines() == [
        "<SW1> display vlan brief",
        " " * len("<SW1> display vlan ") + "^",
        "% Too many parameters found at '^' position.",
    ]
    assert refusal("cisco", "PSS", "show ip").splitlines() == ["PSS# show ip", "% Incomplete command."]
    assert refusal("cisco", "PSS", "show i route").splitlines() == [
        "PSS# show i route",
        '% Ambiguous command:  "show i route"',
    ]
    assert refusal("huawei", "R1", "display eth-trunk abc").splitlines()[-1] == (
        "Error: Wrong parameter found at '^' position."
    )
    assert refusal("huawei", "R1", "") == "<R1>\n"


@pytest.mark.parametrize(
    ("line", "canonical"),
    [
        ("display lldp neighbor-list", "display lldp neighbor-list"),  # Track B's spelling, in full
        ("dis lldp neighbor-l", "display lldp neighbor-list"),  # a prefix only it begins
        ("dis lldp nei", "display lldp neighbor-information"),  # a shared prefix: Comware's keyword
        ("di lldp n list", "display lldp neighbor-information list"),
        ("display ip vpn-instance VPN1", "display ip vpn-instance VPN1"),  # Track B's bare name
        ("display ip vpn-instance instance-name VPN1", "display ip vpn-instance instance-name VPN1"),
    ],
)
def test_track_b_spellings_leave_comware_abbreviations_alone(line: str, canonical: str) -> None:
    res = get_dialect("hp_comware").resolve(line)
    assert res.ok and res.canonical == canonical, res.error


def test_a_minor_keyword_is_what_keeps_the_shared_prefix_unambiguous() -> None:
    """The same tree without ``minor_keywords``: the shared prefix is ambiguous (the test can fail)."""
    from dataclasses import replace

    from ctbench.dialects._profile import load_profile
    from ctbench.dialects.dialect import Dialect

    profile = load_profile("hp_comware")
    assert profile.minor_keywords == frozenset({"neighbor-list"})
    plain = Dialect(replace(profile, minor_keywords=frozenset()))
    res = plain.resolve("dis lldp nei")
    assert not res.ok and res.error is not None and res.error.kind == "ambiguous"
    assert plain.resolve("display lldp neighbor-list").ok  # typed in full, either way
    res = get_dialect("hp_comware").resolve("dis lldp neighbor-")  # any prefix both begin
    assert res.ok and res.canonical == "display lldp neighbor-information"


def test_a_bare_instance_name_never_swallows_a_keyword_prefix() -> None:
    d = get_dialect("hp_comware")
    res = d.resolve("di ip vpn in")  # ntc-templates' short form of '... instance-name': still the keyword
    assert not res.ok and res.error is not None and res.error.kind == "incomplete"
    assert d.resolve("display ip vpn-instance i1").canonical == "display ip vpn-instance i1"
