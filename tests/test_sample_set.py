"""The bundled sample set: valid, realistic, consistent with its networks, solvable, and covering the strata."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from ctbench.authoring.oracle_check import check_oracle, gold_answer_text
from ctbench.authoring.realism import TemplateIndex, check_realism, parse_recording
from ctbench.authoring.stats import dataset_stats, load_all
from ctbench.model import Family, Link, Network, Status
from ctbench.store import TaskSet
from ctbench.validation import validate_paths
from ctbench.vendor import Vendors

REPO = Path(__file__).resolve().parents[1]
TASKS = REPO / "tasks"


@cache
def task_set() -> TaskSet:
    return TaskSet.open(TASKS)


@cache
def index() -> TemplateIndex:
    return TemplateIndex()


def recordings(command_re: str):
    """(task id, network, device, command, text) for every recording whose command matches."""
    ts = task_set()
    for ref in ts.refs():
        task = ts.load_task(ref)
        net = ts.network(task.network)
        for rec in task.recordings:
            if re.fullmatch(command_re, rec.command):
                text = ts.read_recording(ref, rec).decode("utf-8").replace("\r\n", "\n")
                yield ref.id, net, rec.device, rec.command, text


def rows(task_id: str, device: str, command: str) -> list[dict[str, object]]:
    ts = task_set()
    ref = ts.ref(task_id)
    task = ts.load_task(ref)
    rec = task.recording_index()[(device, command)]
    dev = ts.network(task.network).device(device)
    assert dev is not None and dev.os is not None
    outcome = parse_recording(index(), dev.os, command, ts.read_recording(ref, rec))
    assert outcome is not None, f"no TextFSM template for {dev.os} {command!r}"
    assert outcome.error is None, outcome.error
    return outcome.rows


# --------------------------------------------------------------------------- validity and realism


def test_validate_with_realism_has_no_errors() -> None:
    report = validate_paths([str(TASKS)])
    parsed = check_realism([str(TASKS)], report)
    assert not report.errors, "\n".join(f.render() for f in report.errors)
    assert parsed >= 100  # the realism check really ran over a large part of the set
    assert report.tasks_checked >= 26


def test_cli_validate_realism_exit_zero() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run(
        [sys.executable, "-m", "ctbench.authoring.cli", "validate", str(TASKS), "--realism", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert json.loads(res.stdout)["errors"] == 0


# --------------------------------------------------------------------------- coverage (issue 6, point 2)


def test_coverage_from_derived_metadata() -> None:
    ts = task_set()
    loaded, skipped = load_all(ts)
    assert not skipped
    rca = [x for x in loaded if x.task.family == Family.RCA]
    path = [x for x in loaded if x.task.family == Family.PATH]
    assert len(rca) >= 16 and len(path) >= 10
    assert all(x.task.status == Status.APPROVED for x in loaded)
    assert {x.task.network for x in loaded if x.task.family != Family.TOPOLOGY} == {
        "campus-lab",
        "hq-dc",
        "mpls-wan",
    }
    topology = [x for x in loaded if x.task.family == Family.TOPOLOGY]
    assert len(topology) >= 4 and all(x.task.network.startswith("topo-") for x in topology)

    cats = {c for x in rca for c in x.derived.categories}
    labels = {lab for x in rca for lab in x.derived.labels}
    assert cats == {"C1", "C2", "C3", "C4", "C5"}
    assert len(labels) >= 12
    assert {x.derived.observability for x in rca} == {"O1", "O2"}
    assert Counter(x.derived.observability for x in rca)["O2"] >= 3
    counts = {x.derived.root_cause_count for x in rca}
    assert 1 in counts and max(counts) >= 2
    assert {1, 2, 3, 4} <= {x.derived.chain_length for x in rca}
    # entries vs task-level mentions differ when one label hits several objects (RCA-006)
    assert sum(x.derived.entries for x in rca) > sum(x.derived.mentions for x in rca)

    path_counts = {x.derived.path_count for x in path}
    assert 1 in path_counts and {2, 4} <= path_counts
    lengths = [n for x in path for n in x.derived.path_lengths]
    assert min(lengths) == 3 and max(lengths) == 12
    golden = [x.derived.golden_length for x in loaded if x.task.family != Family.TOPOLOGY]
    assert min(golden) == 2 and max(golden) == 30
    # a topology task here restores one device's cabling from its one LLDP table
    assert {x.derived.golden_length for x in topology} == {1}
    assert sorted(x.derived.entries for x in topology) == [2, 2, 3, 4]
    assert {x.derived.heterogeneity for x in rca} == {"low", "high"}
    assert {x.derived.heterogeneity for x in path} == {"low", "high"}

    vendors = {d.vendor for name in ts.network_names() for d in ts.network(name).devices if d.os}
    assert {"Huawei", "H3C", "Cisco", "Juniper"} <= vendors
    oses = {d.os for name in ts.network_names() for d in ts.network(name).devices if d.os}
    assert oses == {"huawei_vrp", "hp_comware", "cisco_ios", "cisco_nxos", "juniper_junos"}


def test_coverage_in_the_stats_tables() -> None:
    tables = {t.key: t.to_json() for t in dataset_stats(task_set()).tables}

    def col(key: str, name: str) -> dict[str, object]:
        t = tables[key]
        i = t["columns"].index(name)
        return {str(r[0]): r[i] for r in t["rows"]}

    assert all(v > 0 for v in col("categories", "entries").values())
    assert len(col("labels", "entries")) >= 12
    assert set(col("rca_observability", "tasks")) == {"O1", "O2"}
    assert {"1", "2", "3", "4"} <= set(col("rca_chain", "tasks"))
    assert {"RC1", "RC2"} <= set(col("rca_root_causes", "tasks"))
    assert {"P1", "P2", "P3+"} <= set(col("path_count", "tasks"))
    assert {"2-4", "9-12"} <= set(col("path_length", "tasks"))
    het = tables["heterogeneity"]
    by_level = {(r[0], r[1]): r[3] for r in het["rows"]}
    assert by_level[("rca", "low")] > 0 and by_level[("rca", "high")] > 0 and by_level[("path", "low")] > 0
    assert by_level[("path", "high")] > 0


# --------------------------------------------------------------------------- solvability (oracle)


def test_oracle_every_task_is_solvable_through_replay_and_parser() -> None:
    results = check_oracle([str(TASKS)])
    assert len(results) >= 26
    bad = {r.task: r.problems for r in results if not r.ok}
    assert not bad, bad
    assert all(set(r.outcomes) == {"recorded"} for r in results)
    ts = task_set()
    assert gold_answer_text(ts, ts.ref("RCA-015")).splitlines() == [
        "HQ_CORE_01;XGigabitEthernet0/0/23;shutdown",
        "DC_BL_02;xe-0/0/46;ACL denies the traffic",
    ]
    ref = ts.ref("RCA-015")
    assert ts.load_hidden(ref).gold_answer_lines(ref.family) == gold_answer_text(ts, ref).splitlines()


def test_every_hidden_file_has_a_rationale_and_the_canary() -> None:
    ts = task_set()
    canary = ts.config.canary
    for ref in ts.refs():
        hidden = ts.load_hidden(ref)
        assert hidden.canary == canary and canary in ref.task_file.read_text()
        assert len(hidden.rationale) > 40 and hidden.rationale.count(". ") <= 1, ref.id


# --------------------------------------------------------------------------- consistency with the networks


def _iface(vendors: Vendors, net: Network, node: str, name: str) -> str:
    name = re.sub(r"\.0$", "", name.strip())
    return vendors.iface(net.device(node), name)


def _cabled(
    net: Network, vendors: Vendors, links: Sequence[Link] = ()
) -> dict[tuple[str, str], tuple[str, str]]:
    out = {}
    for link in links or net.links:
        a = (link.a.node, _iface(vendors, net, link.a.node, link.a.interface))
        b = (link.b.node, _iface(vendors, net, link.b.node, link.b.interface))
        out[a], out[b] = b, a
    return out


def _lldp_rows(net: Network, device: str, command: str, text: str) -> list[tuple[str, str, str]]:
    """(local interface, neighbour name, neighbour port) from any vendor's LLDP neighbour table."""
    os_ = net.device(device).os
    if os_ == "huawei_vrp":
        body = text.splitlines()[1:]
        return [tuple(line.split()[:3]) for line in body if line.strip()]  # type: ignore[misc]
    if os_ == "juniper_junos":
        return [(p[0], p[-1], p[3]) for p in (line.split() for line in text.splitlines()[1:]) if p]
    parsed = parse_recording(index(), os_, command, text.encode())
    assert parsed is not None and parsed.error is None and parsed.rows
    return [
        (str(r["local_interface"]), str(r["neighbor_name"]).strip(), str(r["neighbor_interface"]))
        for r in parsed.rows
    ]


def test_lldp_tables_agree_with_the_cabling() -> None:
    ts = task_set()
    vendors = ts.vendors
    checked = 0
    for task_id, net, device, command, text in recordings(
        r"(display lldp neighbor(-information list| brief)|"
        r"show lldp neighbors)"
    ):
        # a topology task's network leaves the cabling out: restoring it is the task, its gold the cables
        ts_ref = ts.ref(task_id)
        gold_links = ts.load_hidden(ts_ref).answer.links or [] if ts_ref.family == Family.TOPOLOGY else []
        cabled = _cabled(net, vendors, gold_links)
        for local, name, port in _lldp_rows(net, device, command, text):
            here = (device, _iface(vendors, net, device, local))
            assert here in cabled, f"{task_id} {device}: LLDP on {local}, which is not cabled"
            peer_node, peer_if = cabled[here]
            assert name == peer_node, (
                f"{task_id} {device} {local}: LLDP says {name}, cable goes to {peer_node}"
            )
            assert _iface(vendors, net, peer_node, port) == peer_if, (task_id, device, local, port, peer_if)
            checked += 1
    assert checked >= 60


_ROUTE_LINE = {
    "huawei_vrp": [
        re.compile(
            r"^\s*(?:\S+/\d+)?\s+(?:O_ASE|OSPF|Static|ISIS-L\d|EBGP|IBGP)\s+\d+\s+\d+\s+\S*D\s+"
            r"(?P<nh>\d+\.\d+\.\d+\.\d+)\s+(?P<if>\S+)\s*$"
        )
    ],
    "hp_comware": [
        re.compile(
            r"^(?:\S+/\d+\s+(?:Static|O_INTRA|O_ASE2|BGP)\s+\d+\s+\d+)?\s+"
            r"(?P<nh>\d+\.\d+\.\d+\.\d+)\s+(?P<if>\S+)\s*$"
        )
    ],
    "cisco_ios": [
        re.compile(r"via (?P<nh>\d+\.\d+\.\d+\.\d+), (?:\S+, )?(?P<if>[A-Z][\w/.]+)\s*$"),
        re.compile(r"^\s+nexthop (?P<nh>\d+\.\d+\.\d+\.\d+) (?P<if>\S+)"),
        re.compile(r"^\s+\* (?P<nh>\d+\.\d+\.\d+\.\d+), from \S+, \S+ ago, via (?P<if>\S+)"),
    ],
    "cisco_nxos": [re.compile(r"\*via (?P<nh>\d+\.\d+\.\d+\.\d+), (?P<if>Eth[\d/]+), \[\d+/\d+\]")],
    "juniper_junos": [re.compile(r"to (?P<nh>\d+\.\d+\.\d+\.\d+) via (?P<if>[\w/.-]+)")],
}


def test_routed_next_hops_belong_to_the_cabled_neighbour() -> None:
    """A route's next hop on a cabled port must be an address of the device at the other end of the cable."""
    ts = task_set()
    vendors = ts.vendors
    checked = 0
    for task_id, net, device, _command, text in recordings(
        r"(display ip routing-table.*|show ip route.*|show route.*|show ip cef .*)"
    ):
        os_ = net.device(device).os
        cabled = _cabled(net, vendors)
        owners: dict[str, set[str]] = {}
        for d in net.devices:
            for a in d.addresses:
                owners.setdefault(a.split("/")[0], set()).add(d.name)
        for line in text.splitlines():
            m = next((m for rx in _ROUTE_LINE[os_] if (m := rx.search(line))), None)
            if not m or m.group("nh") in ("127.0.0.1", "0.0.0.0"):
                continue
            here = (device, _iface(vendors, net, device, m.group("if")))
            if here not in cabled:
                continue  # a VLAN interface or a label-switched route: not checkable from the cabling
            peer, _peer_if = cabled[here]
            own = owners.get(m.group("nh"), set())
            if device in own:
                continue  # a connected route names the device's own address
            # through a switch that only bridges the segment, the owner must hang off that switch
            bridged = net.device(peer).type == "switch" and any(
                peer in (link.a.node, link.b.node) and (link.a.node in own or link.b.node in own)
                for link in net.links
            )
            assert peer in own or bridged, (
                f"{task_id} {device}: next hop {m.group('nh')} on {m.group('if')} belongs to {sorted(own)}, "
                f"but that port is cabled to {peer}"
            )
            checked += 1
    assert checked >= 100


def test_every_answer_address_and_prefix_is_in_its_network() -> None:
    ts = task_set()
    for ref in ts.refs():
        if ref.family != Family.RCA:
            continue
        hidden = ts.load_hidden(ref)
        net = ts.network(ts.load_task(ref).network)
        addrs = [ipaddress.ip_interface(a) for d in net.devices for a in d.addresses]
        for t in hidden.answer.rca or []:
            if re.fullmatch(r"[\d.]+(/\d+)?", t.object):
                obj = ipaddress.ip_network(t.object, strict=False)
                assert any(a.ip in obj or obj.subnet_of(a.network) for a in addrs) or ref.id in (
                    "RCA-016",
                    "RCA-018",
                ), (ref.id, t.object)


# --------------------------------------------------------------------------- TextFSM rows the scenarios imply


def test_parsed_rows_show_what_each_scenario_implies() -> None:
    brief = {r["interface"]: r for r in rows("RCA-001", "CORE_SW_01", "display interface brief")}
    assert brief["GigabitEthernet0/0/24"]["phy"] == "*down"

    pv = {r["interface"]: r for r in rows("RCA-003", "HQ_ACC_02", "display port vlan")}
    assert "130" not in pv["XGigabitEthernet0/0/1"]["trunk_vlan_list"]
    assert "130" in pv["XGigabitEthernet0/0/2"]["trunk_vlan_list"]

    vrrp = rows("RCA-010", "HQ_GW_01", "show vrrp brief")
    assert [(r["state"], r["master_ip_address"]) for r in vrrp] == [("Backup", "10.1.201.2")]

    acl = rows("RCA-007", "HQ_GW_02", "display acl all")
    sources = {r["source"] for r in acl if r["acl_number"] == "3000" and r["action"]}
    assert sources == {"10.1.140.0 0.0.0.255"}

    spine = rows("RCA-006", "DC_SPINE_01", "show ip route")
    nets = {r["network"] for r in spine}
    assert "10.1.110.0" in nets and "10.1.150.0" not in nets

    peers = {r["peer"]: r["state"] for r in rows("RCA-014", "SH_CE", "display bgp peer ipv4")}
    assert peers["10.2.254.5"] == "Established" and peers["10.2.254.1"] != "Established"

    isis = {r["interface"] for r in rows("RCA-012", "P_02", "show isis adjacency")}
    assert "xe-1/0/3.0" not in isis and "xe-1/0/0.0" in isis

    ext = {(r["mac_address"], r["interface"]) for r in rows("PATH-003", "HQ_EXT_SW", "display mac-address")}
    assert ("0000-5e00-010a", "GE1/0/3") in ext

    rm = rows("RCA-016", "BJ_CE", "show route-map")
    assert ("FROM-WAN", "deny", "5") in {(r["name"], r["action"], r["seq"]) for r in rm}
