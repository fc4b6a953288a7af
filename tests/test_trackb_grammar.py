"""The vendor dialects accept Track B's whitelisted commands, with their ``?`` help, as data."""

from __future__ import annotations

import pytest

from ctbench.dialects import get_dialect
from ctbench.replay.trackb.layout import VENDOR_OS
from ctbench.replay.trackb.whitelist import refusal, sample_commands, whitelist

LEFT_OUT = {
    # beside 'display lldp neighbor-information' it would make 'dis lldp nei' ambiguous on every H3C
    # device; an imported task records it, and a recorded command is valid on its device
    ("h3c", "display lldp neighbor-list"),
    # Comware's syntax is 'display ip vpn-instance [instance-name NAME]'; a bare name is Track B's
    ("h3c", "display ip vpn-instance VPN1"),
}

CASES = [(v, c) for v in ("huawei", "h3c", "cisco") for c in sample_commands(v)]


@pytest.mark.parametrize(("vendor", "command"), CASES, ids=[f"{v}:{c}" for v, c in CASES])
def test_every_whitelisted_command_resolves(vendor: str, command: str) -> None:
    assert whitelist(vendor).accepts(command)
    res = get_dialect(VENDOR_OS[vendor]).resolve(command)
    if (vendor, command) in LEFT_OUT:
        assert not res.ok
        return
    assert res.ok, (vendor, command, res.error)


@pytest.mark.parametrize(("vendor", "command"), CASES, ids=[f"{v}:{c}" for v, c in CASES])
def test_help_along_every_whitelisted_command_has_descriptions(vendor: str, command: str) -> None:
    if (vendor, command) in LEFT_OUT:
        return
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
