"""Live labs: real FRR routers and Linux hosts in network namespaces (root and FRR, else skipped).

One lab per session (tests/frr_lab_support.py, xdist group ``frr_lab``); every test here shares it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ctbench.dialects import get_dialect

pytest_plugins = ["tests.frr_lab_support"]  # the session-shared live lab (frr_lab)

ROOT = Path(__file__).resolve().parent.parent


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


# ---------------------------------------------------------------------------- faults, recording, tasks

FAULTS = [
    ["static-missing", "device=H1"],
    ["shutdown", "device=R2", "interface=eth2"],
    ["bgp-as", "device=R3", "local_as=65003", "neighbor=10.0.23.1", "remote_as=65099"],
    ["mtu", "device=R1", "interface=eth1", "mtu=1400"],
    ["ospf-area", "device=R1", "network=10.0.12.0/30", "area=1"],
    ["ospf-timers", "device=R1", "interface=eth1", "hello=3"],
    ["prefix-deny", "device=R3", "local_as=65003", "neighbor=10.0.23.1", "prefix=192.168.1.0/24"],
    ["static-wrong", "device=H1", "via=192.168.1.99"],
    ["bgp-neighbor", "device=R3", "local_as=65003", "neighbor=10.0.23.1", "wrong=10.0.23.5"],
    ["acl-drop", "device=H3", "source=192.168.1.0/24"],
]


@pytest.mark.xdist_group("frr_lab")
def test_each_fault_records_a_draft_that_validates_and_replays(frr_lab: object, tmp_path: Path) -> None:
    from ctbench.authoring.lab.capture import Plan, record, write_task
    from ctbench.authoring.lab.faults import inject, parse_fault, revert
    from ctbench.authoring.oracle_check import check_task
    from ctbench.replay.engine import ReplayEngine
    from ctbench.replay.observation import Outcome
    from ctbench.store import TaskSet
    from ctbench.validation import Validator
    from tests.conftest import copy_starters

    lab: Any = frr_lab
    root = copy_starters(tmp_path / "tasks")
    plan = Plan(routers=["show interface brief", "show ip route"], hosts=["ip route"])
    for n, words in enumerate(FAULTS, 1):
        fault, args = parse_fault(words)
        effect = inject(lab, fault, args)
        try:
            rec = record(lab, plan, [(d, c) for d, c, _ in effect.golden])
            task_id = f"RCA-LAB-{n:03d}"
            write_task(root, lab.spec, task_id, rec, [effect], [fault.name], author="lab test", commit=False)
        finally:
            revert(lab, effect)
            lab.wait_converged()
        ts = TaskSet.open(root)
        ref = ts.ref(task_id)
        report = Validator(ts).run([ref])
        assert report.errors == [], (fault.name, report.errors)
        oracle = check_task(ts, ref)
        assert oracle.ok, (fault.name, oracle.problems)
        hidden = ts.load_hidden(ref)
        assert [f"{t.node};{t.object};{t.label}" for t in hidden.answer.rca or []] == list(effect.rca)
        with ReplayEngine(ts).open_session(task_id) as session:
            # abbreviations as vtysh takes them, byte-exact recordings, errors as vtysh prints them
            short = session.run("R2", "sh int br")
            assert short.outcome == Outcome.RECORDED
            assert short.data == rec.recordings[("R2", "show interface brief")]
            assert session.run("R2", "sh i b").text.strip() == "% Ambiguous command: sh i b"
            assert session.run("H1", "ip r").data == rec.recordings[("H1", "ip route")]
    shown = TaskSet.open(root).load_task("RCA-LAB-002")
    assert ("R2", "show running-config") in {(r.device, r.command) for r in shown.recordings}


@pytest.mark.xdist_group("frr_lab")
def test_path_is_traced_through_the_live_routing_tables(frr_lab: object) -> None:
    from ctbench.authoring.lab.capture import trace_path

    path = trace_path(frr_lab, "H1", "192.168.3.10")  # type: ignore[arg-type]
    assert path.hops == (("H1", "eth0"), ("R1", "eth1"), ("R2", "eth2"), ("R3", "eth2"), ("H3", None))
    assert [d for d, _c, _w in path.golden] == ["H1", "R1", "R2", "R3"]


@pytest.mark.xdist_group("frr_lab")
def test_kill_during_lab_up_then_down_leaves_nothing(tmp_path: Path) -> None:
    from tests.frr_lab_support import require_lab_machine

    require_lab_machine()
    spec = (ROOT / "tasks/labs/triangle.yaml").read_text().replace("name: triangle", "name: pytest-kill")
    lab_file = tmp_path / "kill.yaml"
    lab_file.write_text(spec)
    proc = subprocess.Popen([sys.executable, "-m", "ctbench.authoring.cli", "lab", "up", str(lab_file)])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not _daemons_of("pytest-kill"):
        time.sleep(0.1)  # kill it once its daemons run: mid-way, before convergence
    assert _daemons_of("pytest-kill"), "lab up never started its daemons"
    proc.kill()
    proc.wait()
    assert _namespaces("pytest-kill")  # the killed process left its lab behind
    down = subprocess.run(
        [sys.executable, "-m", "ctbench.authoring.cli", "lab", "down", str(lab_file), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert down.returncode == 0, down.stderr
    assert json.loads(down.stdout)["processes"] > 0
    assert _namespaces("pytest-kill") == []
    assert _daemons_of("pytest-kill") == []
    assert not Path("/run/ctbench-labs/pytest-kill").exists()


def _namespaces(lab: str) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"ctb-{lab}-")]


def _daemons_of(lab: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if b"/usr/lib/frr/" in cmdline and f"/ctbench-labs/{lab}/".encode() in cmdline:
                found.append(int(proc.name))
    return found


# ---------------------------------------------------------------------------- the bundled live-lab tasks

RECORDED = ROOT / "tasks/labs/recorded"


def test_bundled_lab_tasks_validate_replay_and_score_as_the_oracle() -> None:
    from ctbench.authoring.oracle_check import check_task
    from ctbench.replay.engine import ReplayEngine
    from ctbench.replay.observation import Outcome
    from ctbench.store import TaskSet
    from ctbench.validation import Validator

    ts = TaskSet.open(RECORDED)
    refs = ts.refs()
    assert len(refs) >= 12
    assert Validator(ts).run(refs).errors == []
    labels = set()
    for ref in refs:
        result = check_task(ts, ref)
        assert result.ok, (ref.id, result.problems)
        labels.update(t.label for t in ts.load_hidden(ref).answer.rca or [])
    assert labels == {
        "shutdown",
        "OSPF neighbor parameter mismatch",
        "BGP peer configuration error",
        "static route missing",
        "route policy denies the route",
        "static route next hop incorrect",
        "ACL denies the traffic",
    }
    assert any(len(ts.load_hidden(r).answer.rca or []) > 1 for r in refs)  # a multi-root-cause task
    # a heterogeneous task: its evidence spans FRR routers and a Linux firewall (h_L >= 3 -> high)
    from ctbench.derived import derive

    mixed = []
    for ref in refs:
        task, hidden = ts.load_task(ref.id), ts.load_hidden(ref)
        derived = derive(task, hidden, ts.network(task.network), ts.taxonomy, ts.config)
        if ref.family.value == "rca" and derived.heterogeneity == "high":
            mixed.append(ref.id)
    assert mixed == ["RCA-LAB-014", "RCA-LAB-015"]
    network = ts.network("lab-edge")
    routers = [d for d in network.devices if d.type in ("router", "firewall")]
    assert len(routers) == 5 and {d.os for d in routers} == {"frr", "linux"}
    edge_paths = {}
    for task_id in ("PATH-LAB-005", "PATH-LAB-006"):  # before and after R1's link to R2 is shut
        paths = ts.load_hidden(ts.ref(task_id)).answer.paths or []
        edge_paths[task_id] = [(h.node, h.egress) for h in paths[0].hops]
    assert edge_paths["PATH-LAB-005"][1] == ("R1", "eth1") and edge_paths["PATH-LAB-006"][1] == ("R1", "eth3")
    assert all(("FW1", "eth1") in hops for hops in edge_paths.values())
    assert len([r for r in refs if r.family.value == "path"]) >= 4
    with ReplayEngine(ts).open_session("RCA-LAB-002") as session:
        neighbours = session.run("R1", "sh ip ospf nei")
        assert neighbours.outcome == Outcome.RECORDED and b"ExStart" in neighbours.data
        assert session.run("R1", "show ip ospf neighbor | include ExStart").data.count(b"\n") == 1
        assert session.run("H1", "ip r").outcome == Outcome.RECORDED
        assert session.run("R1", "show ip rou").text == "% Ambiguous command: show ip rou\n"
    with ReplayEngine(ts).open_session("RCA-LAB-013") as session:
        rules = session.run("H3", "nft list ruleset")  # the host's packet filter, as nft printed it
        assert rules.outcome == Outcome.RECORDED and b"ip saddr 192.168.1.0/24 drop" in rules.data


# ---------------------------------------------------------------------------- the command line


def _author(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctbench.authoring.cli", *args], capture_output=True, text=True, check=False
    )


def test_lab_faults_lists_the_catalogue_as_json() -> None:
    out = _author("lab", "faults", "--json")
    assert out.returncode == 0, out.stderr
    names = [row["name"] for row in json.loads(out.stdout)]
    assert names == [
        "shutdown", "mtu", "ospf-area", "bgp-as", "static-missing", "ospf-timers", "prefix-deny", "bgp-neighbor",
        "acl-drop", "static-wrong",
    ]  # fmt: skip


def test_a_bad_lab_file_is_an_error_naming_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: bad\nrouters: {R1: {}}\nlinks:\n  - {a: 'R1:eth1', a_address: 8.8.8.1/24, b: 'R9:eth1'}\n"
    )
    out = _author("lab", "down", str(bad))
    assert out.returncode == 2
    assert str(bad) in out.stderr and "links.0.a_address" in out.stderr and "private" in out.stderr
    assert "Traceback" not in out.stderr
    unknown = _author(
        "lab", "capture", str(ROOT / "tasks/labs/triangle.yaml"), "--task", "X", "--fault", "melt"
    )
    assert unknown.returncode == 2 and "unknown fault 'melt'" in unknown.stderr
