"""import-capture: real device outputs wrapped into session logs come back byte for byte."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.authoring.capture import import_capture, split_session, strip_pagination
from ctbench.errors import CtbError
from ctbench.model import Family, TaskSpec
from ctbench.store import TaskSet
from tests.conftest import VENDOR_CLI

REPO = Path(__file__).resolve().parents[1]
VENDOR = VENDOR_CLI

pytestmark = pytest.mark.skipif(not VENDOR.is_dir(), reason="vendor-cli captures not available")

NETWORK = """\
name: lab
devices:
  - {name: HQ_CORE_01, vendor: Huawei, os: huawei_vrp, type: switch}
  - {name: HQ_FW_01, vendor: Huawei, os: huawei_vrp, type: firewall}
  - {name: ACC_SW_01, vendor: H3C, os: hp_comware, type: switch}
  - {name: GW_01, vendor: Cisco, os: cisco_ios, type: router}
  - {name: SPINE_01, vendor: Cisco, os: cisco_nxos, type: switch}
  - {name: PE_01, vendor: Juniper, os: juniper_junos, type: router}
  - {name: PC_01, vendor: Generic, type: pc}
"""

# The erase sequences each vendor sends after the pagination prompt once a key is pressed.
VRP_MORE = "  ---- More ----\x1b[42D                                          \x1b[42D"
COMWARE_MORE = "---- More ----\x1b[16D                \x1b[16D"
IOS_MORE = (
    " --More-- \x08\x08\x08\x08\x08\x08\x08\x08\x08\x08          \x08\x08\x08\x08\x08\x08\x08\x08\x08\x08"
)
NXOS_MORE = "\x1b[7m--More--\x1b[27m\r        \r"
JUNOS_MORE = "---(more 42%)---\r                                        \r"


def real(platform: str, command: str, n: int = 1) -> bytes:
    return (VENDOR / platform / command.replace(" ", "_") / f"{n}.raw").read_bytes()


def crlf(data: bytes) -> bytes:
    """What the device sends: CRLF line ends, the last line terminated."""
    text = data.replace(b"\r\n", b"\n")
    if not text.endswith(b"\n"):
        text += b"\n"
    return text.replace(b"\n", b"\r\n")


def paginate(output: bytes, more: str, every: int = 7) -> bytes:
    """Insert a pagination prompt after every ``every`` lines, as a 'screen-length' of that size would."""
    lines = output.split(b"\r\n")
    out = bytearray()
    for i, line in enumerate(lines[:-1], start=1):
        out += line + b"\r\n"
        if i % every == 0 and i < len(lines) - 1:
            out += more.encode("latin-1")
    return bytes(out)


@pytest.fixture()
def task_set(tmp_path: Path) -> TaskSet:
    root = tmp_path / "tasks"
    (root / "networks").mkdir(parents=True)
    shutil.copy(REPO / "tasks" / "ctbench.yaml", root / "ctbench.yaml")
    shutil.copy(REPO / "tasks" / "taxonomy.yaml", root / "taxonomy.yaml")
    (root / "networks" / "lab.yaml").write_text(NETWORK)
    ts = TaskSet.open(root)
    ts.save_task(TaskSpec(id="RCA-900", family=Family.RCA, statement="Something is broken.\n", network="lab"))
    task_yaml = root / "rca" / "RCA-900" / "task.yaml"
    task_yaml.write_text("# hand-written comment that must survive\n" + task_yaml.read_text())
    return ts


def session(*parts: tuple[str, str, bytes]) -> bytes:
    """A log: each part is (prompt, typed command, raw output bytes after the echo line)."""
    out = bytearray(b"=~=~=~=~=~=~=~=~=~=~=~= PuTTY log 2026.11.30 09:12:44 =~=~=~=~=~=~=~=~=~=~=~=\r\n")
    out += b"\r\nInfo: The max number of VTY users is 10, and the number\r\n"
    for prompt, typed, output in parts:
        out += prompt.encode() + typed.encode("latin-1") + b"\r\n" + output
    return bytes(out)


def full_log() -> tuple[bytes, dict[tuple[str, str], bytes]]:
    vrp = crlf(real("huawei_vrp", "display interface brief"))
    comware = crlf(real("hp_comware", "display ip routing-table"))
    ios = crlf(real("cisco_ios", "show ip route", 3))
    nxos = crlf(real("cisco_nxos", "show ip route"))
    junos = crlf(real("juniper_junos", "show route"))
    vrp_lldp = crlf(real("huawei_vrp", "display lldp neighbor"))
    log = session(
        ("<HQ-CORE-01>", "dis int br", paginate(vrp, VRP_MORE)),
        ("[HQ-CORE-01-GigabitEthernet0/0/1]", "display lldp neighbor", paginate(vrp_lldp, VRP_MORE, 11)),
        ("<ACC_SW_01>", "dis ip rou", paginate(comware, COMWARE_MORE, 9)),
        ("GW_01#", "sh ip ro", paginate(ios, IOS_MORE, 20) + b"\r\n"),
        ("spine_01#", "show ip route", paginate(nxos, NXOS_MORE, 24)),
        ("admin@PE_01> ", "show route", paginate(junos, JUNOS_MORE, 10) + b"\r\n{master:0}\r\n"),
        ("admin@PE_01> ", "exit", b"\r\n"),
    )
    expected = {
        ("HQ_CORE_01", "display interface brief"): vrp,
        ("HQ_CORE_01", "display lldp neighbor"): vrp_lldp,
        ("ACC_SW_01", "display ip routing-table"): comware,
        ("GW_01", "show ip route"): ios + b"\r\n",
        ("SPINE_01", "show ip route"): nxos,
        ("PE_01", "show route"): junos + b"\r\n",
    }
    return log, expected


def test_every_vendor_recovers_byte_exact(task_set: TaskSet, tmp_path: Path) -> None:
    log, expected = full_log()
    capture = tmp_path / "session.log"
    capture.write_bytes(log)
    report = import_capture(task_set, "RCA-900", [capture])
    got = {(r.device, r.command): r for r in report.recorded}
    assert set(got) == set(expected), report
    ref = task_set.ref("RCA-900")
    task = task_set.load_task(ref)
    index = task.recording_index()
    for key, data in expected.items():
        assert got[key].action == "added"
        stored = task_set.read_recording(ref, index[key])
        assert stored == data, key
        assert b"More" not in stored and b"more" not in stored.lower().replace(b"more-specific", b"")
        assert b"\x1b" not in stored and b"\x08" not in stored
        assert b"\r\n" in stored  # CRLF kept as the device sent it
    assert b"{master:0}" not in task_set.read_recording(ref, index[("PE_01", "show route")])
    assert got[("HQ_CORE_01", "display interface brief")].typed == "dis int br"
    # The exit command and the PuTTY banner are not recordings; nothing was left unexplained.
    assert [u.typed for u in report.unattributed] == ["exit"]
    assert report.index_updated


def test_index_update_is_a_minimal_round_trip_diff(task_set: TaskSet, tmp_path: Path) -> None:
    task_yaml = task_set.ref("RCA-900").task_file
    before = task_yaml.read_text()
    capture = tmp_path / "s.log"
    capture.write_bytes(
        session(
            ("<HQ_CORE_01>", "display interface brief", crlf(real("huawei_vrp", "display interface brief"))),
            ("<HQ_CORE_01>", "quit", b""),
        )
    )
    import_capture(task_set, "RCA-900", [capture])
    after = task_yaml.read_text()
    assert after.startswith(before.rstrip("\n").replace("recordings: []", "recordings:")) or after.startswith(
        before
    )
    assert "# hand-written comment that must survive" in after
    added = [ln for ln in after.splitlines() if ln not in before.splitlines()]
    assert added == [
        "recordings:",
        "  - device: HQ_CORE_01",
        "    command: display interface brief",
        "    file: recordings/HQ_CORE_01/display_interface_brief.txt",
    ] or added == [
        "  - device: HQ_CORE_01",
        "    command: display interface brief",
        "    file: recordings/HQ_CORE_01/display_interface_brief.txt",
    ]


def test_never_overwrites_without_replace(task_set: TaskSet, tmp_path: Path) -> None:
    first = crlf(real("cisco_ios", "show ip route", 1))
    second = crlf(real("cisco_ios", "show ip route", 2))
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_bytes(session(("GW_01#", "show ip route", first), ("GW_01#", "exit", b"")))
    b.write_bytes(session(("GW_01#", "sh ip rou", second), ("GW_01#", "exit", b"")))
    import_capture(task_set, "RCA-900", [a])
    ref = task_set.ref("RCA-900")
    rec = task_set.load_task(ref).recording_index()[("GW_01", "show ip route")]

    report = import_capture(task_set, "RCA-900", [b])
    assert report.recorded == []
    assert len(report.skipped) == 1 and "--replace" in report.skipped[0].reason
    assert report.skipped[0].file == rec.file
    assert task_set.read_recording(ref, rec) == first

    again = import_capture(task_set, "RCA-900", [a])  # same bytes: nothing to do, nothing skipped
    assert [r.action for r in again.recorded] == ["unchanged"] and not again.skipped

    dry = import_capture(task_set, "RCA-900", [b], replace=True, dry_run=True)
    assert [r.action for r in dry.recorded] == ["would replace"]
    assert task_set.read_recording(ref, rec) == first

    done = import_capture(task_set, "RCA-900", [b], replace=True)
    assert [r.action for r in done.recorded] == ["replaced"]
    assert task_set.read_recording(ref, rec) == second
    assert len(task_set.load_task(ref).recordings) == 1  # replaced in place, not indexed twice


def test_reports_what_it_cannot_attribute(task_set: TaskSet, tmp_path: Path) -> None:
    ios = crlf(real("cisco_ios", "show ip route", 2))
    log = session(
        ("<BRANCH-SW-09>", "display interface brief", crlf(real("huawei_vrp", "display interface brief", 2))),
        ("GW_01#", "show ip rout | include 10.", b"C        10.0.0.0/24 is directly connected, Gi1\r\n"),
        ("GW_01#", "show ip bogus", b"                 ^\r\n% Invalid input detected at '^' marker.\r\n\r\n"),
        (
            "<HQ_CORE_01>",
            "dis foo bar",
            b"                  ^\r\nError: Unrecognized command found at '^' position.\r\n",
        ),
        (
            "<HQ_CORE_01>",
            "screen-length 0 temporary",
            b"Info: The configuration takes effect on the current user terminal interface only.\r\n",
        ),
        ("GW_01#", "show ip route", ios),
    )
    capture = tmp_path / "mixed.log"
    capture.write_bytes(log)  # the log ends right after the last output: that output may be cut
    report = import_capture(task_set, "RCA-900", [capture])
    assert report.recorded == []
    reasons = {u.typed: u.reason for u in report.unattributed}
    assert "unknown host 'BRANCH-SW-09'" in reasons["display interface brief"]
    assert "filter" in reasons["show ip rout | include 10."]
    assert "show ip route" in reasons["show ip rout | include 10."]  # tells what to record instead
    assert "Invalid input" in reasons["show ip bogus"] or "not a valid" in reasons["show ip bogus"]
    assert "Unrecognized" in reasons["dis foo bar"]
    assert "session or configuration command" in reasons["screen-length 0 temporary"]
    assert "may be cut" in reasons["show ip route"]
    # every report line points back into the log
    assert all(u.source.startswith(str(capture) + ":") for u in report.unattributed)
    line = int(next(u for u in report.unattributed if u.typed == "dis foo bar").source.rsplit(":", 1)[1])
    assert log.split(b"\n")[line - 1].startswith(b"<HQ_CORE_01>dis foo bar")


def test_device_option_attributes_a_single_device_log(task_set: TaskSet, tmp_path: Path) -> None:
    out = crlf(real("huawei_vrp", "display arp all"))
    capture = tmp_path / "fw.log"
    # A USG in hot standby prefixes its prompt with HRP_M; the real hostname differs from the task's name.
    capture.write_bytes(
        session(
            ("HRP_M<USG6555-A>", "dis arp all", paginate(out, VRP_MORE, 5)), ("HRP_M<USG6555-A>", "quit", b"")
        )
    )
    without = import_capture(task_set, "RCA-900", [capture], dry_run=True)
    assert without.recorded == [] and "unknown host" in without.unattributed[0].reason
    report = import_capture(task_set, "RCA-900", [capture], device="HQ_FW_01")
    assert [(r.device, r.command) for r in report.recorded] == [("HQ_FW_01", "display arp all")]
    ref = task_set.ref("RCA-900")
    rec = task_set.load_task(ref).recording_index()[("HQ_FW_01", "display arp all")]
    assert task_set.read_recording(ref, rec) == out
    with pytest.raises(CtbError, match="no such device"):
        import_capture(task_set, "RCA-900", [capture], device="NOPE")
    with pytest.raises(CtbError, match="no CLI"):
        import_capture(task_set, "RCA-900", [capture], device="PC_01")


def test_typed_line_editing_and_script_logs(task_set: TaskSet, tmp_path: Path) -> None:
    out = crlf(real("hp_comware", "display interface brief"))
    log = (
        b'Script started on 2026-11-30 09:00:00+00:00 [TERM="xterm" TTY="/dev/pts/1"]\n'
        b"<ACC_SW_01>dis ip int\x08\x08\x08int br"
        + b"\x08" * 10
        + b" interface brief\r\n"
        + out
        + b"<ACC_SW_01>quit\r\n\nScript done on 2026-11-30 09:01:00+00:00 "
        b'[COMMAND_EXIT_CODE="0"]\n'
    )
    capture = tmp_path / "typescript"
    capture.write_bytes(log)
    report = import_capture(task_set, "RCA-900", [capture])
    assert [(r.device, r.command, r.typed) for r in report.recorded] == [
        ("ACC_SW_01", "display interface brief", "dis interface brief")
    ]
    ref = task_set.ref("RCA-900")
    rec = task_set.load_task(ref).recording_index()[("ACC_SW_01", "display interface brief")]
    assert task_set.read_recording(ref, rec) == out


def test_pagination_helpers_keep_indentation() -> None:
    text = "line 1\r\n" + VRP_MORE + "     10.0.12.0/30   Direct\r\n"
    assert strip_pagination(text) == "line 1\r\n     10.0.12.0/30   Direct\r\n"
    text = "a\r\n" + IOS_MORE + "  b\r\n"
    assert strip_pagination(text) == "a\r\n  b\r\n"
    # a BGP table line is not a Cisco prompt; a Junos [edit] line is not a VRP one
    blocks = split_session(
        b"GW_01#show ip bgp\r\nr>i10.0.0.0/8 10.1.1.1\r\n[edit]\r\nGW_01#exit\r\n", ["GW_01"]
    )
    assert [(b.prompt.command, b.output) for b in blocks] == [
        ("show ip bgp", b"r>i10.0.0.0/8 10.1.1.1\r\n[edit]\r\n"),
        ("exit", b""),
    ]


def test_cli_summary_and_json(task_set: TaskSet, tmp_path: Path) -> None:
    log, expected = full_log()
    capture = tmp_path / "session.log"
    capture.write_bytes(log)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [
        sys.executable,
        "-m",
        "ctbench.authoring.cli",
        "import-capture",
        str(capture),
        "--task",
        "RCA-900",
        "--tasks",
        str(task_set.root),
    ]
    res = subprocess.run([*cmd, "--json"], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert {(r["device"], r["command"]) for r in data["recorded"]} == set(expected)
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "6 unchanged, 1 not imported" in res.stdout  # the same log again changes nothing
    capture.write_bytes(
        session(
            ("GW_01#", "show ip route", crlf(real("cisco_ios", "show ip route", 2))), ("GW_01#", "exit", b"")
        )
    )
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "1 skipped (existing)" in res.stdout and "use --replace" in res.stdout
    res = subprocess.run(
        [*cmd[:-2], "--tasks", str(task_set.root), "--task", "NOPE-1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert res.returncode == 1 and "not found" in res.stderr and "Traceback" not in res.stderr


def test_a_log_without_any_prompt_is_an_error_not_an_empty_success(task_set: TaskSet, tmp_path: Path) -> None:
    from tests.conftest import run_cli

    capture = tmp_path / "notes.txt"
    capture.write_bytes(b"interface GigabitEthernet0/0/1 flapped twice\r\nsee ticket 4711\r\n")
    res = run_cli(
        "authoring", "import-capture", str(capture), "--task", "RCA-900", "--tasks", str(task_set.root)
    )
    assert res.returncode == 1, res.stdout
    assert "no device prompt found" in res.stdout and "notes.txt" in res.stdout
    assert "no command found in" in res.stderr and "Traceback" not in res.stderr
