"""validate --realism: the ntc-templates TextFSM check as a reusable validation."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.authoring.realism import TemplateIndex, check_realism, parse_recording
from ctbench.model import Family, Recording, TaskSpec
from ctbench.store import TaskSet
from ctbench.validation import Report, Severity, validate_paths
from tests.conftest import VENDOR_CLI

REPO = Path(__file__).resolve().parents[1]
VENDOR = VENDOR_CLI

GOOD_BRIEF = (REPO / "tasks/rca/RCA-001/recordings/CORE_SW_01/display_interface_brief.txt").read_bytes()


@pytest.fixture(scope="module")
def index() -> TemplateIndex:
    return TemplateIndex()


def test_template_must_cover_the_whole_command(index: TemplateIndex) -> None:
    assert index.find("cisco_ios", "show ip route") is not None
    # clitable would match this by prefix and parse a "Routing entry for" block with the table template
    assert index.find("cisco_ios", "show ip route 10.1.1.1") is None
    assert (
        index.find("huawei_vrp", "display interface GigabitEthernet0/0/1") is not None
    )  # the regex allows it
    assert (
        index.find("huawei_vrp", "display interface brief").templates
        == "huawei_vrp_display_interface_brief.textfsm"
    )
    assert index.find("hp_comware", "display ip routing-table 10.0.0.1") is None
    assert index.find("huawei_vrp", "display lldp neighbor brief") is None
    assert index.find("paloalto_panos", "show system info") is None  # no dialect for that platform


@pytest.mark.skipif(not VENDOR.is_dir(), reason="vendor-cli captures not available")
def test_real_captures_parse(index: TemplateIndex) -> None:
    for platform, command in (
        ("huawei_vrp", "display interface brief"),
        ("hp_comware", "display ip routing-table"),
        ("cisco_ios", "show ip route"),
        ("cisco_nxos", "show ip route"),
        ("juniper_junos", "show lldp neighbors"),
    ):
        folder = VENDOR / platform / command.replace(" ", "_")
        data = next(folder.glob("*.raw")).read_bytes()
        outcome = parse_recording(index, platform, command, data)
        assert outcome is not None and outcome.ok, (platform, command, outcome and outcome.error)


def test_a_hand_typed_recording_is_caught_with_its_line(index: TemplateIndex) -> None:
    broken = GOOD_BRIEF.replace(b"(s): spoofing\n", b"(s): spoofing\n(x): something made up\n")
    outcome = parse_recording(index, "huawei_vrp", "display interface brief", broken)
    assert outcome is not None and outcome.error is not None and not outcome.ok
    assert outcome.line == broken.split(b"\n").index(b"(x): something made up") + 1
    # CRLF recordings parse like the same text with LF (netmiko normalises line ends the same way)
    crlf = parse_recording(index, "huawei_vrp", "display interface brief", GOOD_BRIEF.replace(b"\n", b"\r\n"))
    assert crlf is not None and crlf.ok
    # filtered commands are never template-checked: the filter changes the format
    assert parse_recording(index, "huawei_vrp", "display interface brief | include up", broken) is None


def _task_set(tmp_path: Path) -> TaskSet:
    root = tmp_path / "tasks"
    shutil.copytree(REPO / "tasks", root, ignore=shutil.ignore_patterns("rca", "path", "topology"))
    ts = TaskSet.open(root)
    folder = root / "rca" / "RCA-950"
    recs = []
    for device, command, data in (
        (
            "CORE_SW_01",
            "display interface brief",
            GOOD_BRIEF.replace(b"InUti/OutUti", b"(x): made up\nInUti/OutUti"),
        ),
        ("GW_01", "show ip interface brief", b"\n"),
        (
            "GW_01",
            "show vrrp brief",
            b"Interface          Grp Pri Time  Own Pre State   Master addr     Group addr\n",
        ),
        ("GW_01", "show running-config", b"hostname GW_01\n"),
        (
            "ACC_SW_01",
            "display ip routing-table",
            (REPO / "tasks/rca/RCA-001/recordings/ACC_SW_01/display_ip_routing-table.txt").read_bytes(),
        ),
    ):
        rel = ts.write_recording(folder, device, command, data)
        recs.append(Recording(device=device, command=command, file=rel))
    ts.save_task(
        TaskSpec(
            id="RCA-950",
            family=Family.RCA,
            statement="Broken things.\n",
            network="campus-lab",
            recordings=recs,
            canary=ts.config.canary,
        )
    )
    return ts


def test_check_realism_reports_file_and_line(tmp_path: Path) -> None:
    ts = _task_set(tmp_path)
    report = Report()
    parsed = check_realism([str(ts.root)], report)
    assert parsed == 4  # all but show running-config have a template; the blank ip-interface output is fine
    errors = [f for f in report.findings if f.severity == Severity.ERROR]
    warnings = [f for f in report.findings if f.severity == Severity.WARNING]
    assert len(errors) == 1 and errors[0].code == "realism-parse"
    assert errors[0].file.endswith("rca/RCA-950/recordings/CORE_SW_01/display_interface_brief.txt")
    assert errors[0].line == 10 and "huawei_vrp_display_interface_brief.textfsm" in errors[0].message
    assert [w.code for w in warnings] == ["realism-empty"]  # a header with no rows is a warning, not an error
    assert "show vrrp brief" in warnings[0].message
    assert (
        errors[0]
        .render()
        .startswith(
            "tasks/rca/RCA-950/recordings/CORE_SW_01/display_interface_brief.txt:10: error[realism-parse]"
        )
    )


def test_cli_validate_realism(tmp_path: Path) -> None:
    ts = _task_set(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "ctbench.authoring.cli", "validate", str(ts.root / "rca" / "RCA-950")]
    plain = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    realism = subprocess.run([*cmd, "--realism"], capture_output=True, text=True, env=env, timeout=120)
    assert "realism-parse" not in plain.stdout
    assert realism.returncode == 1
    assert "display_interface_brief.txt:10: error[realism-parse]" in realism.stdout
    js = subprocess.run([*cmd, "--realism", "--json"], capture_output=True, text=True, env=env, timeout=120)
    codes = [f["code"] for f in json.loads(js.stdout)["findings"]]
    assert "realism-parse" in codes and "realism-empty" in codes


def test_structural_validation_is_unchanged_by_realism(tmp_path: Path) -> None:
    ts = _task_set(tmp_path)
    report = validate_paths([str(ts.root)])
    before = len(report.findings)
    check_realism([str(ts.root)], report)
    assert len(report.findings) == before + 2


def test_realism_on_resolved_targets_matches_the_path_form(tmp_path: Path) -> None:
    """validate --realism resolves its paths once and hands the same set and tasks to both checks."""
    from ctbench.authoring.realism import check_realism_tasks

    ts = _task_set(tmp_path)
    by_path, by_targets = Report(), Report()
    assert check_realism([str(ts.root / "rca" / "RCA-950")], by_path) == 4
    assert check_realism_tasks(ts, [ts.ref("RCA-950")], by_targets) == 4
    assert by_targets.findings == by_path.findings
