"""Session logs with a timestamp on every line (SecureCRT, Xshell, MobaXterm) import byte for byte.

Operations teams turn "timestamp each line" on for audit; the stamp is the terminal's, not the
device's, so it must go and nothing else: real outputs come back exactly, indentation included.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctbench.authoring.capture import import_capture, strip_line_timestamps
from ctbench.store import TaskSet
from tests.test_capture import VENDOR, full_log, task_set  # noqa: F401  (task_set is a fixture)

pytestmark = pytest.mark.skipif(not VENDOR.is_dir(), reason="vendor-cli captures not available")

STYLES = {
    "securecrt": "[2026-12-01 09:41:{s:02d}] ",
    "xshell": "[2026-12-01 09:41:{s:02d}.123] ",
    "mobaxterm": "[09:41:{s:02d}] ",
}


def stamp(log: bytes, style: str) -> bytes:
    """The log as the terminal writes it with per-line timestamps: each line, blank ones too."""
    lines = log.split(b"\n")
    return b"\n".join(STYLES[style].format(s=i % 60).encode() + line for i, line in enumerate(lines))


@pytest.mark.parametrize("style", sorted(STYLES))
def test_stamped_logs_recover_every_output_byte_exact(task_set: TaskSet, tmp_path: Path, style: str) -> None:  # noqa: F811
    log, expected = full_log()
    capture = tmp_path / f"{style}.log"
    capture.write_bytes(stamp(log, style))
    report = import_capture(task_set, "RCA-900", [capture])
    got = {(r.device, r.command) for r in report.recorded}
    assert got == set(expected), report
    ref = task_set.ref("RCA-900")
    index = task_set.load_task(ref).recording_index()
    for key, data in expected.items():
        assert task_set.read_recording(ref, index[key]) == data, key


def test_an_unstamped_log_is_left_alone() -> None:
    text = "<CORE_SW_01>display logbuffer\r\n[09:41:00] link down\r\n  Interface GE0/0/1\r\n<CORE_SW_01>"
    assert strip_line_timestamps(text) == text
    stamped = "\n".join(f"[2026-12-01 09:41:00] {ln}" for ln in text.split("\n"))
    assert strip_line_timestamps(stamped) == text  # the device's own [09:41:00] stays
