"""Live labs: real FRR routers and Linux hosts in network namespaces (root and FRR, else skipped).

One lab per session (tests/frr_lab_support.py, xdist group ``frr_lab``); every test here shares it.
"""

from __future__ import annotations

import subprocess

import pytest

from ctbench.dialects import get_dialect

pytest_plugins = ["tests.frr_lab_support"]  # the session-shared live lab (frr_lab)


def test_linux_dialect_reads_what_hosts_are_typed() -> None:
    d = get_dialect("linux")
    assert d.resolve("ip a").canonical == "ip address"
    assert d.resolve("ip -br a").canonical == "ip -br address"
    assert d.resolve("ip r").canonical == "ip route"
    assert d.resolve("ping -c 3 192.168.3.10").canonical == "ping -c 3 192.168.3.10"
    assert d.resolve("IP a").error is not None  # programs are case-sensitive
    assert d.prompt("H1") == "root@H1:~# "


@pytest.mark.xdist_group("frr_lab")
def test_linux_dialect_errors_are_the_programs_own(frr_lab: object) -> None:
    d = get_dialect("linux")
    ns = frr_lab.ns("H1")  # type: ignore[attr-defined]
    for line, argv in (
        ("ip foo", ["ip", "foo"]),
        ("ping", ["ping"]),
        ("foo", ["bash", "-c", "foo"]),
    ):
        res = d.resolve(line)
        assert res.error is not None, line
        real = subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True, check=False)
        text = (real.stdout + real.stderr).replace("bash: line 1:", "-bash:")
        assert d.render_error(res.error, line, d.prompt("H1")) == text, line


@pytest.mark.xdist_group("frr_lab")
def test_linux_abbreviations_print_what_the_full_command_prints(frr_lab: object) -> None:
    d = get_dialect("linux")
    run = frr_lab.run  # type: ignore[attr-defined]
    for typed in ("ip a", "ip r", "ip -br a", "ip neigh"):
        canonical = d.resolve(typed).canonical
        assert canonical is not None and canonical != typed
        assert run("H1", typed) == run("H1", canonical), typed
