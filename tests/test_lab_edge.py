"""The five-router live lab: four FRR routers and a Linux firewall (FW1) in their forwarding path.

The heterogeneous case of issue 32: FRR's vtysh beside a Linux router's iproute2 and nftables in one
network, each device answering in its own dialect, a fault on the Linux device seen through the FRR
routers' protocols. Root and FRR are required (else skipped, naming what is missing); the lab is
shared by the session (tests/frr_lab_support.py) and these tests run in the ``frr_lab`` group.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["tests.frr_lab_support"]

ROOT = Path(__file__).resolve().parent.parent
TO_H4 = (
    ("H1", "eth0"),
    ("R1", "eth1"),
    ("R2", "eth2"),
    ("R3", "eth2"),
    ("FW1", "eth1"),
    ("R4", "eth2"),
    ("H4", None),
)


@pytest.mark.xdist_group("frr_lab")
def test_traffic_crosses_the_linux_firewall_on_the_cheaper_side_of_the_ring(frr_edge_lab: object) -> None:
    from ctbench.authoring.lab.capture import trace_path

    lab: Any = frr_edge_lab
    assert trace_path(lab, "H1", "192.168.4.10").hops == TO_H4  # R1-R2-R3, not R1's cost-100 link to R3
    hops = lab.run("H1", "traceroute -n -w 1 -q 1 -m 8 192.168.4.10").decode()
    assert " 4  10.0.30.2 " in hops  # the Linux box itself forwards (and answers for) the packets
    session = lab.run("R3", "show ip bgp summary").decode()
    assert "10.0.40.2" in session and "Connect" not in session and "Active" not in session


@pytest.mark.xdist_group("frr_lab")
def test_a_firewall_rule_breaks_bgp_and_records_a_mixed_task(frr_edge_lab: object, tmp_path: Path) -> None:
    from ctbench.authoring.lab.capture import Plan, network_of, record, write_task
    from ctbench.authoring.lab.faults import inject, parse_fault, revert
    from ctbench.authoring.oracle_check import check_task
    from ctbench.replay.engine import ReplayEngine
    from ctbench.replay.observation import Outcome
    from ctbench.store import TaskSet
    from ctbench.validation import Validator
    from tests.conftest import copy_starters

    lab: Any = frr_edge_lab
    network = network_of(lab.spec)
    kinds = {d.name: (d.vendor, d.os, d.type) for d in network.devices}
    assert kinds["FW1"] == ("Linux", "linux", "firewall") and kinds["R3"] == ("FRRouting", "frr", "router")
    before = lab.run("FW1", "nft list ruleset")
    fault, args = parse_fault(["acl-drop", "device=FW1", "source=10.0.0.0/16", "chain=forward", "port=179"])
    effect = inject(lab, fault, args)
    root = copy_starters(tmp_path / "tasks")
    try:
        assert b"Established" not in lab.run("R3", "show ip bgp neighbors 10.0.40.2")
        assert b"Destination Net Unreachable" in lab.run("H1", "ping -c 1 -w 2 192.168.4.10")
        # the path through FW1 still carries ICMP: only the BGP session's TCP is dropped
        icmp = subprocess.run(
            ["ip", "netns", "exec", lab.ns("R3"), "ping", "-c", "1", "-w", "2", "10.0.40.2"],
            capture_output=True,
            check=False,
        )
        assert icmp.returncode == 0, icmp.stdout
        plan = Plan(
            routers=["show ip route", "show ip bgp summary"],
            hosts=["ip route"],
            devices={"FW1": ["nft list ruleset"], "H1": ["ping -c 2 -w 3 192.168.4.10"]},
        )
        rec = record(lab, plan, [(d, c) for d, c, _ in effect.golden])
        write_task(
            root, lab.spec, "RCA-EDGE-001", rec, [effect], [fault.name], author="lab test", commit=False
        )
    finally:
        revert(lab, effect)
        lab.wait_converged()
    assert lab.run("FW1", "nft list ruleset") == before  # the firewall's own rules are left as they were
    assert b" 0% packet loss" in lab.run("H1", "ping -c 2 -w 3 192.168.4.10")
    ts = TaskSet.open(root)
    ref = ts.ref("RCA-EDGE-001")
    assert Validator(ts).run([ref]).errors == []
    assert check_task(ts, ref).ok
    hidden = ts.load_hidden(ref)
    assert [f"{t.node};{t.object};{t.label}" for t in hidden.answer.rca or []] == [
        "FW1;forward;ACL denies the traffic"
    ]
    assert hidden.metadata.chain_length == 3
    with ReplayEngine(ts).open_session("RCA-EDGE-001") as session:
        rules = session.run("FW1", "nft list ruleset")
        assert rules.outcome == Outcome.RECORDED
        assert b"ip saddr 10.0.0.0/16 tcp dport 179 drop" in rules.data
        assert session.run("R3", "sh ip bgp summ").data == rec.recordings[("R3", "show ip bgp summary")]
        assert session.run("FW1", "ip r").data == rec.recordings[("FW1", "ip route")]


@pytest.mark.xdist_group("frr_lab")
def test_a_missing_route_on_the_linux_router_cuts_the_return_path(frr_edge_lab: object) -> None:
    from ctbench.authoring.lab.faults import inject, parse_fault, revert

    lab: Any = frr_edge_lab
    effect = inject(lab, *parse_fault(["static-missing", "device=FW1", "to=192.168.1.0/24"]))
    try:
        assert effect.rca == ("FW1;192.168.1.0/24;static route missing",)
        assert b"192.168.1.0/24" not in lab.run("FW1", "ip route")
        assert b" 0 received" in lab.run("H1", "ping -c 1 -w 2 192.168.4.10")  # requests go, replies die
        summary = lab.run("R3", "show ip bgp summary")  # the session is up: one prefix received
        assert re.search(rb"^10\.0\.40\.2 .* 1 +\d+ N/A$", summary, re.M), summary
    finally:
        revert(lab, effect)
    assert b"192.168.1.0/24 via 10.0.30.1" in lab.run("FW1", "ip route")
    assert b" 0% packet loss" in lab.run("H1", "ping -c 2 -w 3 192.168.4.10")
