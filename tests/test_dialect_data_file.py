"""A sixth vendor dialect is one data file: the task model, validation and the replay accept it.

The list of CLI families is the list of dialect data files (bundled, then ``$CTBENCH_DIALECT_PATH``),
so nothing in the code names the five bundled vendors. The new dialect here is a copy of the Cisco
IOS file under another name with its own error and denial texts, put in a temporary folder on the
dialect path; one router of a starter network is switched to it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from ctbench.dialects import DIALECT_PATH_ENV, OS_FAMILIES, get_dialect, os_families
from ctbench.dialects._profile import DATA_DIR
from ctbench.evaluate.agents.probe import checklist
from ctbench.model import Device
from ctbench.replay.engine import ReplayEngine
from ctbench.replay.observation import Outcome
from ctbench.store import TaskSet
from ctbench.validation import Validator

NEW_OS = "acme_os"
UNKNOWN = "% ACME: no such command."
DENIED = "ACME: {command} is not yours to run."


def _write_dialect(folder: Path) -> Path:
    """The Cisco IOS data file renamed acme_os, with its own texts: the only thing a new vendor adds."""
    text = (DATA_DIR / "cisco_ios.yaml").read_text(encoding="utf-8")
    lines = []
    for line in text.splitlines():
        if line.startswith("os: "):
            line = f"os: {NEW_OS}"
        elif line.startswith("display_name: "):
            line = "display_name: ACME OS"
        elif line.startswith("denied: "):
            line = f'denied: "{DENIED}"'
        elif line.startswith("  unrecognised: "):
            line = f'  unrecognised: "{UNKNOWN}"'
        lines.append(line)
    folder.mkdir(parents=True)
    path = folder / f"{NEW_OS}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _switch_gateway(task_set: Path) -> None:
    """GW_01 of the starter network (a Cisco IOS router in RCA-001) now runs the new dialect."""
    net = task_set / "networks" / "campus-lab.yaml"
    text = net.read_text(encoding="utf-8")
    old = "  - name: GW_01\n    vendor: Cisco\n    os: cisco_ios\n"
    assert old in text
    net.write_text(
        text.replace(old, f"  - name: GW_01\n    vendor: ACME\n    os: {NEW_OS}\n"), encoding="utf-8"
    )


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "more-dialects"
    _write_dialect(folder)
    monkeypatch.setenv(DIALECT_PATH_ENV, str(folder))
    return folder


def test_without_the_data_file_the_family_is_refused(task_set: Path) -> None:
    """The checks below can fail: with no data file, the task model and validation refuse acme_os."""
    assert NEW_OS not in os_families()
    with pytest.raises(ValidationError, match="unknown CLI family 'acme_os'"):
        Device(name="GW_01", vendor="ACME", os=NEW_OS, type="router")
    _switch_gateway(task_set)
    report = Validator(TaskSet.open(task_set)).run()
    assert any(f.code == "schema" and "acme_os" in f.message for f in report.errors), report.errors


def test_a_sixth_dialect_is_one_data_file(on_path: Path, task_set: Path) -> None:
    assert NEW_OS in os_families() and len(os_families()) == len(OS_FAMILIES) + 1
    dialect = get_dialect(NEW_OS)
    assert dialect.display_name == "ACME OS" and dialect.resolve("sh ip ro").canonical == "show ip route"
    assert checklist(NEW_OS) == get_dialect("cisco_ios").first_commands  # the probe reads the file too
    assert Device(name="GW_01", vendor="ACME", os=NEW_OS, type="router").os == NEW_OS

    _switch_gateway(task_set)
    ts = TaskSet.open(task_set)
    assert ts.network("campus-lab").device("GW_01").os == NEW_OS
    report = Validator(ts).run()
    assert report.errors == [], [f.render() for f in report.errors]

    session = ReplayEngine(ts).open_session("RCA-001")
    recorded = session.run("GW_01", "sh ip ro")
    assert recorded.outcome == Outcome.RECORDED
    expected = (task_set / "rca/RCA-001/recordings/GW_01/show_ip_route.txt").read_bytes()
    assert recorded.data == expected  # byte for byte
    invalid = session.run("GW_01", "show nothing-at-all")
    assert invalid.outcome == Outcome.INVALID and UNKNOWN in invalid.text
    denied = session.run("GW_01", "show version")
    assert denied.outcome == Outcome.DENIED and denied.text == "ACME: show version is not yours to run.\n"
