"""A disk-filling agent beside honest ones (issue 25, item 4).

The runner's temp folder (the attempts' folders, logs and the replay socket) is a 24 MiB tmpfs the
test mounts (we are root; skipped where mounting is not allowed). One agent fills what it can and
holds it full for a few seconds; the honest ones beside it, started at the same time, answer a
second later. Through the real ``ctb-eval run`` (default sandbox):

- with the folder cap (the default; ``--limit disk=16M`` here) each attempt's folder is a tmpfs of
  its own: the filler fills only that and ends as ``error (agent)`` ("ran out of room"), the honest
  ones answer at once;
- with the folder cap off (``--limit disk=off``, as where the runner may not mount) the filler fills
  the shared temp disk: the honest ones fail to write, and are retried as infrastructure errors;
- with both protections off (the full-disk check taken out, in-process, the same CLI) the same
  honest agents end as ``error (agent)``: the assertions can fail.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctbench.evaluate import attempt
from ctbench.evaluate.cli import main
from ctbench.evaluate.limits import can_mount_tmpfs
from tests.conftest import BUNDLED, REPO, needs_bwrap

pytestmark = [
    pytest.mark.xdist_group("disk-full"),
    needs_bwrap,
]

FILL = """\
    try:
        with open("filler.bin", "wb") as fh:
            while True:
                fh.write(b"x" * (1 << 20))
                fh.flush()
    except OSError:
        pass
"""
"""The filler's first step: write 1 MiB at a time until the disk refuses (indented for an if body)."""

AGENT = (
    """\
import os, sys, time
sys.stdin.read()
if os.environ["CTBENCH_TASK_ID"] == "RCA-001":   # the filler
"""
    + FILL
    + """\
    time.sleep(4)
    sys.exit(0)
time.sleep(1.5)                                    # honest: answers once the disk is full
with open(os.environ["CTBENCH_ANSWER_FILE"], "w") as fh:
    fh.write("CORE_SW_01;GigabitEthernet0/0/24;shutdown\\n" * 2000)
"""
)


@pytest.fixture
def task_set(task_set: Path) -> Path:
    """The three starter tasks and PATH-002: one filler beside three honest attempts."""
    shutil.copytree(BUNDLED / "path" / "PATH-002", task_set / "path" / "PATH-002")
    return task_set


@pytest.fixture
def small_tmp(tmp_path: Path) -> Iterator[Path]:
    mnt = Path(tempfile.mkdtemp(prefix="ctb-full-", dir="/tmp"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        mnt.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
        mnt.rmdir()


def _args(task_set: Path, out: Path, script: Path, disk: str = "off") -> list[str]:
    cmd = shlex.join([sys.executable, str(script)])
    return [
        "run",
        "--allow-unreviewed",
        "--agent",
        "command",
        "--agent-cmd",
        cmd,
        "--tasks",
        str(task_set),
    ] + [
        "--out",
        str(out),
        "--concurrency",
        "4",
        "--retries",
        "3",
        "--progress",
        "none",
        "--no-score",
        "--limit",
        f"disk={disk}",
    ]


def _ctb_eval(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    """``ctb-eval ARGS`` in a process of its own whose temp folder is ``tmp`` (the small tmpfs)."""
    return subprocess.run(
        [sys.executable, "-m", "ctbench.evaluate.cli", *args],
        env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp)},
        capture_output=True,
        text=True,
        timeout=180,
    )


def _lines(out: Path) -> dict[str, dict]:
    return {(d := json.loads(x))["task_id"]: d for x in (out / "results.jsonl").read_text().splitlines()}


@pytest.mark.skipif(not can_mount_tmpfs(), reason="the runner may not mount a tmpfs here")
def test_the_filler_fills_only_its_own_folder_and_is_blamed(
    task_set: Path, tmp_path: Path, small_tmp: Path
) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    proc = _ctb_eval(_args(task_set, tmp_path / "run", script, "16M"), small_tmp)
    lines = _lines(tmp_path / "run")
    filler = lines["RCA-001"]
    assert (filler["status"], filler["error_kind"]) == ("error", "agent"), (filler, proc.stderr)
    assert "ran out of room" in filler["error"] and "16 MiB disk cap" in filler["error"], filler["error"]
    assert not filler.get("retries")
    honest = [lines["RCA-002"], lines["PATH-001"], lines["PATH-002"]]
    assert all(ln["status"] in ("answered", "unparsable") and not ln.get("retries") for ln in honest), honest


def test_honest_attempts_beside_a_disk_filler_are_retried_not_blamed(
    task_set: Path, tmp_path: Path, small_tmp: Path
) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    proc = _ctb_eval(_args(task_set, tmp_path / "run", script), small_tmp)
    lines = _lines(tmp_path / "run")
    honest = [lines["RCA-002"], lines["PATH-001"], lines["PATH-002"]]
    assert all(ln["error_kind"] != "agent" for ln in honest), [(ln["status"], ln["error"]) for ln in honest]
    assert all(ln["status"] in ("answered", "unparsable") for ln in honest), proc.stderr
    retried = [r for ln in honest for r in ln.get("retries") or []]
    assert retried and all("temp disk full" in r["error"] or "runner" in r["error"] for r in retried), retried


def test_protection_off_the_honest_attempts_are_blamed(
    task_set: Path, tmp_path: Path, small_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    monkeypatch.setenv("TMPDIR", str(small_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(small_tmp))
    monkeypatch.setattr(attempt, "disk_full", lambda folder: None)
    main(_args(task_set, tmp_path / "run", script))
    lines = _lines(tmp_path / "run")
    assert any(lines[t]["error_kind"] == "agent" for t in ("RCA-002", "PATH-001", "PATH-002")), lines


RACER = (
    """\
import os, sys, time
from pathlib import Path
sys.stdin.read()
marks = Path({marks!r})
task = os.environ["CTBENCH_TASK_ID"]
if task == "RCA-001":   # the filler: holds the disk full until every honest one failed, then frees it
"""
    + FILL.replace("{", "{{").replace("}", "}}")
    + """\
    end = time.monotonic() + 30
    while len(list(marks.iterdir())) < 3 and time.monotonic() < end:
        time.sleep(0.02)
    os.unlink("filler.bin")
    sys.exit(0)
time.sleep(1.5)
try:
    with open(os.environ["CTBENCH_ANSWER_FILE"], "w") as fh:
        fh.write("CORE_SW_01;GigabitEthernet0/0/24;shutdown\\n" * 2000)
        fh.flush()
except OSError:
    (marks / task).touch()
    time.sleep(0.5)      # by the time it exits and is judged, the filler has freed the disk
    raise
"""
)
"""An honest agent fails to write while the disk is full; the filler frees the disk just after, so a
look at the disk only once the honest agent has exited finds room and would blame it."""


def _race(tmp_path: Path) -> list[str]:
    marks = tmp_path / "marks"
    marks.mkdir()
    script = tmp_path / "racer.py"
    script.write_text(RACER.format(marks=str(marks)))
    return [*_args(tmp_path / "tasks", tmp_path / "run", script), "--sandbox", "none"]


def test_a_disk_freed_before_the_honest_attempt_is_judged_still_counts(
    task_set: Path, tmp_path: Path, small_tmp: Path
) -> None:
    proc = _ctb_eval(_race(tmp_path), small_tmp)
    lines = _lines(tmp_path / "run")
    honest = [lines["RCA-002"], lines["PATH-001"], lines["PATH-002"]]
    assert all(ln["status"] in ("answered", "unparsable") for ln in honest), (
        [(ln["status"], ln["error"]) for ln in honest],
        proc.stderr,
    )
    retried = [r for ln in honest for r in ln.get("retries") or []]
    # Each honest one is retried once after its write failed; one whose own set-up ran while the disk
    # was full (the runner's temp files: staged starts let the filler run beside set-ups) is retried
    # for that too, first. Every retry is the full disk's, never the agent's.
    assert len(retried) >= 3, retried
    assert all(
        "temp disk full" in r["error"] or "runner: No space left on device" in r["error"] for r in retried
    ), retried


def test_without_the_watch_the_freed_disk_blames_the_honest_attempt(
    task_set: Path, tmp_path: Path, small_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(small_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(small_tmp))
    monkeypatch.setattr(attempt._DiskWatch, "EVERY", 3600.0)  # protection off: only the look at the end
    main(_race(tmp_path))
    lines = _lines(tmp_path / "run")
    assert any(lines[t]["error_kind"] == "agent" for t in ("RCA-002", "PATH-001", "PATH-002")), lines
