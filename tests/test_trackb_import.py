"""ctb-author import-trackb: a small Track B phase on disk becomes a ctbench task set that validates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctbench.authoring.trackb_import import command_candidates, prompt_reasons, question_kind, recover_command
from ctbench.dialects import get_dialect
from ctbench.replay.trackb.layout import read_ground_truth, read_sidecar, safe_name
from ctbench.store import TaskSet
from ctbench.validation import Validator
from tests.conftest import run_cli
from tests.trackb_support import (
    FAULT_PROMPT,
    GOLD,
    L2_GOLD,
    L2_PROMPT,
    L2_SID,
    QUESTIONS,
    VENDORS,
    add_questions,
    write_tree,
)


@pytest.fixture
def imported(tmp_path: Path) -> tuple[Path, dict[str, object], Path]:
    tree = write_tree(tmp_path / "trackb")
    out = tmp_path / "tasks"
    proc = run_cli(
        "authoring",
        "import-trackb",
        str(tree.phase_dir),
        "--outputs",
        str(tree.outputs),
        "--vendors",
        str(tree.vendors),
        "--phase",
        "1",
        "--gt",
        str(tree.gt),
        "--tasks",
        str(out),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(proc.stdout), tree.outputs


def test_import_writes_one_task_per_question(imported) -> None:
    out, report, _ = imported
    assert report["tasks"] == ["TTACB-P1-001", "TTACB-P1-002", "TTACB-P1-003", "TTACB-P1-004"]
    assert report["skipped"] == []
    assert report["ignored_devices"] == ["Ghost-9"]
    ts = TaskSet.open(out)
    assert sorted((r.family.value, r.id) for r in ts.refs()) == [
        ("path", "TTACB-P1-003"),
        ("rca", "TTACB-P1-001"),
        ("rca", "TTACB-P1-002"),
        ("topology", "TTACB-P1-004"),
    ]
    spec = ts.load_task("TTACB-P1-001")
    # the prompt as Track B agents saw it, nothing added (YAML block text ends with a newline)
    assert spec.statement.rstrip("\n") == QUESTIONS[1][1]
    assert "trackb:scenario=" + QUESTIONS[1][0] in spec.tags
    side = read_sidecar(ts.ref("TTACB-P1-001").path)
    assert side is not None and (side.phase, side.question, side.scenario_id) == (1, 1, QUESTIONS[1][0])


def test_recordings_are_byte_exact_and_named_as_track_b_names_them(imported) -> None:
    out, report, outputs = imported
    ts = TaskSet.open(out)
    checked = 0
    for ref in ts.refs():
        spec = ts.load_task(ref)
        side = read_sidecar(ref.path)
        assert side is not None
        literal = {(u.device, u.file) for u in side.unresolved}
        for rec in spec.recordings:
            name = Path(rec.file).name
            source = outputs / side.folder / rec.device / name
            assert ts.read_recording(ref, rec) == source.read_bytes()  # bytes unchanged (CRLF too)
            if (rec.device, name) not in literal:
                assert safe_name(rec.command) + ".txt" == name
            checked += 1
    assert checked >= 10
    crlf = ts.load_task("TTACB-P1-002").recording_index()[("Edge-SW1", "display interface brief")]
    assert b"\r\n" in ts.read_recording("TTACB-P1-002", crlf)
    # question 1 reads only its own folder: others/ is not a per-file fallback
    q1 = ts.load_task("TTACB-P1-001").recording_index()
    assert ("Core-R1", "display interface GigabitEthernet1/0/1") in q1
    assert ("Edge-SW1", "display interface brief") not in q1
    # the refused pair is not recorded (the replay denies it) but kept for the facade's 403
    assert ("Core-R1", "display current-configuration") not in q1
    side1 = read_sidecar(ts.ref("TTACB-P1-001").path)
    assert side1 is not None and side1.refused("Core-R1", "display current-configuration")
    assert ("Core-R1", "display current-configuration") in ts.load_task("TTACB-P1-002").recording_index()
    # a name the grammar does not know: a literal recorded command, listed; H3C's neighbor-list (Track
    # B's spelling, a minor keyword of the Comware grammar) resolves
    listed = [
        (u["device"], u["file"], u["command"]) for u in report["unresolved"] if u["task"] == "TTACB-P1-002"
    ]
    assert listed == [("Core-R2", "display_frobnicate_widgets.txt", "display frobnicate widgets")]
    assert ("Edge-SW1", "display lldp neighbor-list") in ts.load_task("TTACB-P1-002").recording_index()


def test_network_gold_and_taxonomy(imported) -> None:
    out, report, _ = imported
    ts = TaskSet.open(out)
    net = ts.network("trackb-p1")
    vendors = {d.name: (d.vendor, d.os) for d in net.devices}
    assert vendors["PSS"] == ("Cisco", "cisco_ios") and vendors["Edge-SW1"] == ("H3C", "hp_comware")
    pairs = {frozenset(e.split(":")[0] for e in link.as_pair()) for link in net.links}
    assert pairs == {
        frozenset({"Core-R1", "Core-R2"}),
        frozenset({"Core-R1", "Edge-SW1"}),
        frozenset({"Core-R2", "PSS"}),
        frozenset({"Edge-SW1", "PSS"}),
    }
    assert report["links"] == 4
    h1 = ts.load_hidden("TTACB-P1-001")
    assert [t.entry().line() for t in h1.answer.rca or []] == [GOLD[1]]
    assert h1.reference_answer == GOLD[1]
    tax = ts.taxonomy
    assert tax.resolve("missingstaticroute") == "missing static route"
    assert tax.resolve("BGPconfigurationerror") == "BGP configuration error"
    assert tax.resolve("missing  static   route") == "missing static route"
    assert tax.resolve("missingstatic route") == "missing static route"  # blind to blanks anywhere
    assert tax.resolve("SRV6-Policy tunnel planning error") is not None
    assert tax.resolve("static route missing") == "missing static route"  # ctbench's own label, a synonym
    assert tax.resolve("interface shutdown") == "shutdown"
    assert tax.resolve("MTU mismatch") == "MTU value configuration error"
    h3 = ts.load_hidden("TTACB-P1-003")
    assert [[h.node for h in p.hops] for p in h3.answer.paths or []] == [
        ["Core-R1", "Core-R2", "PSS"],
        ["Core-R1", "Edge-SW1", "PSS"],
    ]
    side = read_sidecar(ts.ref("TTACB-P1-003").path)
    assert side is not None and side.paths_any


def test_a_topology_question_is_a_topology_task_on_a_network_without_its_cabling(imported) -> None:
    out, _, _ = imported
    ts = TaskSet.open(out)
    spec, hidden = ts.load_task("TTACB-P1-004"), ts.load_hidden("TTACB-P1-004")
    assert spec.statement.rstrip("\n") == QUESTIONS[4][1]
    assert hidden.reference_answer.rstrip("\n") == GOLD[4]
    assert [(str(x.a), str(x.b)) for x in hidden.answer.links or []] == [
        ("Core-R2:GE1/0/1", "Core-R1:GE1/0/1"),
        ("Core-R2:GE1/0/2", "PSS:Gi0/2"),
    ]
    # the phase's network holds the cables (from LLDP); the question's copy leaves out those it asks for
    phase, own = ts.network("trackb-p1"), ts.network(spec.network)
    assert spec.network == "trackb-p1-q004"
    pairs = {frozenset((x.a.node, x.b.node)) for x in phase.links}
    assert {frozenset(("Core-R1", "Core-R2")), frozenset(("Core-R2", "PSS"))} <= pairs
    assert {frozenset((x.a.node, x.b.node)) for x in own.links} == pairs - {
        frozenset(("Core-R1", "Core-R2")),
        frozenset(("Core-R2", "PSS")),
    }
    assert "GigabitEthernet1/0/1" in (own.device("Core-R2").interfaces or [])  # type: ignore[union-attr]


def test_imported_set_validates(imported) -> None:
    out, _, _ = imported
    report = Validator(TaskSet.open(out)).run()
    assert not report.errors, [f.render() for f in report.errors]


def test_without_ground_truth_tasks_are_unscored(tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "trackb")
    proc = run_cli(
        "authoring",
        "import-trackb",
        str(tree.phase_dir),
        "--outputs",
        str(tree.outputs),
        "--vendors",
        str(tree.vendors),
        "--phase",
        "2",
        "--tasks",
        str(tmp_path / "p2"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "not scored" in proc.stdout
    ts = TaskSet.open(tmp_path / "p2")
    assert ts.load_hidden("TTACB-P2-001").reference_answer == ""
    assert {r.id for r in ts.refs()} >= {"TTACB-P2-001", "TTACB-P2-002"}
    # ... they run (here: a participant's result.csv) and export predictions, unscored
    result = tmp_path / "result.csv"
    result.write_bytes("\ufeffid,prediction\r\n1,Core-R1;10.9.9.9;missing static route\r\n".encode())
    run = tmp_path / "run"
    proc = run_cli("evaluate", "import-results", str(result), "--format", "trackb", "--tasks", str(tmp_path / "p2"),
                   "--out", str(run))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    proc = run_cli(
        "evaluate", "score", str(run), "--tasks", str(tmp_path / "p2"), "--metrics", "ttac", "--json"
    )
    block = json.loads(proc.stdout)["ttac"]
    assert (block["accuracy"], block["unscored"]) == (None, 1)
    proc = run_cli("evaluate", "export", str(run), "--tasks", str(tmp_path / "p2"), "--format", "trackb", "--out",
                   str(tmp_path / "out"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "result.csv").read_bytes().decode("utf-8-sig").splitlines()[1] == (
        "1,Core-R1;10.9.9.9;missing static route"
    )


def test_import_refuses_a_non_empty_folder_and_bad_files(tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "trackb")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    base = ["import-trackb", str(tree.phase_dir), "--outputs", str(tree.outputs), "--phase", "1"]
    proc = run_cli("authoring", *base, "--vendors", str(tree.vendors), "--tasks", str(tmp_path / "busy"))
    assert proc.returncode == 1 and "not empty" in proc.stderr and "Traceback" not in proc.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("Core-R1: juniper\n")
    proc = run_cli("authoring", *base, "--vendors", str(bad), "--tasks", str(tmp_path / "new"))
    assert proc.returncode == 1 and "expected huawei, h3c or cisco" in proc.stderr
    (tree.phase_dir / "test.json").write_text('[{"scenario_id": "x", "task": {"id": 1}}]')
    proc = run_cli("authoring", *base, "--vendors", str(tree.vendors), "--tasks", str(tmp_path / "new2"))
    assert proc.returncode == 1 and "test.json: item 1: task.question" in proc.stderr


def test_file_names_back_to_commands() -> None:
    vrp = get_dialect("huawei_vrp")
    assert recover_command(vrp, "display_ip_routing-table").command == "display ip routing-table"
    got = recover_command(vrp, "display_interface_GigabitEthernet1_0_1")
    assert (got.command, got.status) == ("display interface GigabitEthernet1/0/1", "ok")
    assert recover_command(vrp, "display_frobnicate").status == "unresolved"
    assert next(iter(command_candidates("a_1_2_b"))) == "a 1/2 b"


def test_shapes_and_reasons() -> None:
    nodes = ["A", "B", "C"]
    assert question_kind("x", "A;1.1.1.1;blackholeroute", nodes) == "fault"
    assert question_kind("x", "A->B->C", nodes) == "path"
    assert question_kind("x", "A(GE1/0/1)->B(GE1/0/2)", nodes) == "topology"
    assert question_kind(FAULT_PROMPT, None, nodes) == "fault"
    assert question_kind(QUESTIONS[4][1], None, nodes) == "topology"
    reasons = prompt_reasons(FAULT_PROMPT)
    assert ("missing static route", "routing") in reasons and ("shutdown", "port") in reasons
    assert ("MTU value configuration error", "port") in reasons
    assert len(reasons) == 7


def test_ground_truth_reader(tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "t")
    gt = read_ground_truth(tree.gt)
    assert gt[QUESTIONS[2][0]] == GOLD[2]


def test_export_in_track_b_layout_imports_back_the_same(imported, tmp_path: Path) -> None:
    out, _, _ = imported
    layout = tmp_path / "layout"
    proc = run_cli(
        "authoring", "export", "--tasks", str(out), "--format", "trackb", "--out", str(layout), "--json"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["questions"] == {
        "1": "TTACB-P1-001",
        "2": "TTACB-P1-002",
        "3": "TTACB-P1-003",
        "4": "TTACB-P1-004",
    }
    again = tmp_path / "again"
    proc = run_cli(
        "authoring", "import-trackb", str(layout / "Phase_1"), "--outputs", str(layout / "devices_outputs"),
        "--vendors", str(layout / "vendors.yaml"), "--phase", "1", "--gt", str(layout / "gt.csv"),
        "--tasks", str(again),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    first, second = TaskSet.open(out), TaskSet.open(again)
    for ref in first.refs():
        a, b = first.load_task(ref), second.load_task(ref.id)
        assert a.statement == b.statement
        assert {(r.device, r.command): first.read_recording(ref, r) for r in a.recordings} == {
            (r.device, r.command): second.read_recording(ref.id, r) for r in b.recordings
        }
        assert first.load_hidden(ref).answer == second.load_hidden(ref.id).answer
        assert read_sidecar(ref.path).no_permission == read_sidecar(second.ref(ref.id).path).no_permission  # type: ignore[union-attr]


def test_export_of_a_native_set_leaves_out_what_track_b_cannot_serve(task_set: Path, tmp_path: Path) -> None:
    layout = tmp_path / "layout"
    proc = run_cli(
        "authoring", "export", "--tasks", str(task_set), "--format", "trackb", "--out", str(layout), "--json"
    )
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)
    items = json.loads((layout / "Phase_1" / "test.json").read_text())
    assert [i["task"]["id"] for i in items] == [1, 2, 3] and sorted(done["questions"].values()) == [
        "PATH-001", "RCA-001", "RCA-002"
    ]  # fmt: skip
    ts = TaskSet.open(task_set)
    q = {t: int(n) for n, t in done["questions"].items()}["RCA-001"]
    spec = ts.load_task("RCA-001")
    devices = ts.network(spec.network).device_map()
    served = 0
    for rec in spec.recordings:
        path = layout / "devices_outputs" / str(q) / rec.device / f"{safe_name(rec.command)}.txt"
        if devices[rec.device].os in ("huawei_vrp", "hp_comware", "cisco_ios"):
            assert path.read_bytes() == ts.read_recording("RCA-001", rec)
            served += 1
        else:
            assert not path.exists() and any(note.startswith(rec.device) for note in done["left_out"])
    assert served >= 2
    assert (layout / "gt.csv").read_bytes().startswith("\ufeffID,Track B".encode())


def test_l2_path_gold_keeps_in_and_out_ports(tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "trackb")
    # question 6 enters Core-R2 by the port cabled to PSS: validation must say so
    bad = L2_GOLD.replace("R2(GigabitEthernet1/0/1)", "R2(GE1/0/2)")
    add_questions(
        tree, {5: (L2_SID, L2_PROMPT, L2_GOLD), 6: ("66666666-6666-4666-8666-666666666666", L2_PROMPT, bad)}
    )
    out = tmp_path / "p2"
    proc = run_cli(
        "authoring", "import-trackb", str(tree.phase_dir), "--outputs", str(tree.outputs), "--vendors",
        str(tree.vendors), "--phase", "2", "--gt", str(tree.gt), "--tasks", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    ts = TaskSet.open(out)
    assert read_sidecar(ts.ref("TTACB-P2-005").path).kind == "l2-path"  # type: ignore[union-attr]
    hidden = ts.load_hidden("TTACB-P2-005")
    assert hidden.reference_answer == L2_GOLD
    hops = [(h.node, h.ingress, h.egress) for h in (hidden.answer.paths or [])[0].hops]
    assert hops == [
        ("Core-R1", None, "GigabitEthernet1/0/1"),
        ("Core-R2", "GigabitEthernet1/0/1", "GigabitEthernet1/0/2"),
        ("PSS", "GigabitEthernet0/2", None),
    ]
    report = Validator(ts).run()
    assert not [f.render() for f in report.errors if "TTACB-P2-005" in f.render()]
    assert [f.message for f in report.errors if "TTACB-P2-006" in f.render()] == [
        "path 1: Core-R2 GE1/0/2 is cabled to PSS, not to the hop before, Core-R1"
    ]
    # Track B's rules compare the whole line: the right path through the wrong ingress port is wrong,
    # and ctbench's path metrics, which score the ingress ports the gold names, agree
    result = tmp_path / "result.csv"
    wrong = L2_GOLD.replace("PSS(GigabitEthernet0/2)", "PSS(GigabitEthernet0/3)")
    for answer, verdict in ((L2_GOLD, True), (wrong, False)):
        result.write_bytes(f"\ufeffid,prediction\r\n5,{answer}\r\n".encode())
        run = tmp_path / f"run-{verdict}"
        proc = run_cli("evaluate", "import-results", str(result), "--format", "trackb", "--tasks", str(out),
                       "--out", str(run))  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        proc = run_cli("evaluate", "score", str(run), "--tasks", str(out), "--metrics", "ttac", "--json")
        scores = json.loads(proc.stdout)
        rows = {t["task_id"]: t for t in scores["ttac"]["tasks"]}
        assert rows["TTACB-P2-005"]["verdict"] is verdict
        (own,) = [t for t in scores["tasks"] if t["task_id"] == "TTACB-P2-005"]
        assert own["exact"] == (1.0 if verdict else 0.0)
        # of the edges, Core-R2 -> PSS enters PSS by the wrong port: 1 shared of 3
        assert own["rest"] == pytest.approx(1.0 if verdict else 1 / 3)


def test_l2_gold_refuses_what_it_cannot_read() -> None:
    from ctbench.authoring.trackb_import import gold_answer

    nodes = ["A", "B", "C"]
    with pytest.raises(ValueError, match="one port"):
        gold_answer("l2-path", "A(GE1)->B(GE2)->C(GE3)", nodes)  # B: in or out?
    with pytest.raises(ValueError, match="no device"):
        gold_answer("l2-path", "A(GE1)->X(GE2)", nodes)
    with pytest.raises(ValueError, match="ingress"):
        from ctbench.model import GoldPath, PathHop

        GoldPath(
            hops=[
                PathHop(node="A", egress="GE1"),
                PathHop(node="B", egress="GE2"),
                PathHop(node="C", ingress="GE3"),
            ]
        )


def test_topology_gold_reads_as_cables() -> None:
    from ctbench.authoring.trackb_import import topology_links

    links = topology_links(GOLD[4].replace("\n", "\r\n") + "\nCore-R1(GE1/0/1)->Core-R2(GE1/0/1)\n", VENDORS)
    assert [(str(x.a), str(x.b)) for x in links] == [
        ("Core-R2:GE1/0/1", "Core-R1:GE1/0/1"),
        ("Core-R2:GE1/0/2", "PSS:Gi0/2"),
    ]  # Track B's spelling kept; the cable written from its other end is the same link
    for bad, why in (
        ("Core-R2(GE1/0/1)->Core-R1(GE1/0/1)->PSS(Gi0/2)", "one link"),
        ("X(GE1)->PSS(Gi0/2)", "no device"),
        ("", "no link"),
    ):
        with pytest.raises(ValueError, match=why):
            topology_links(bad, VENDORS)
