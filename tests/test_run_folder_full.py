"""The run folder's disk fills up under the runner: retried, never the agents' fault (issue 25, item 4).

The run folder lies on a 4 MiB tmpfs the test mounts (we are root; skipped where mounting is not
allowed). Once ``ctb-eval run`` has started its first attempt, the test fills that file system to the
last byte and frees it four seconds later. Three honest ``command`` agents (default sandbox) answer after a
second, printing 200 KiB: the runner cannot save their trajectories, logs or result lines while the
disk is full. Each such attempt is run again as an infrastructure retry ("the run folder's disk is
full") and, once there is room, recorded as answered, with ``results.jsonl`` whole lines only.

With the protection off (the runner's write errors as they were: one ``CtbError`` for every
failure, in-process through the same CLI) the run stops at the first full write, with tasks
unrecorded: the assertions can fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctbench.errors import CtbError
from ctbench.evaluate import runner
from ctbench.evaluate.cli import main
from tests.conftest import needs_bwrap

pytestmark = [
    pytest.mark.xdist_group("disk-full"),
    needs_bwrap,
]

AGENT = """\
import os, sys, time
sys.stdin.read()
time.sleep(1.0)
sys.stdout.write("log line of an honest agent\\n" * 7000)
with open(os.environ["CTBENCH_ANSWER_FILE"], "w") as fh:
    fh.write("CORE_SW_01;GigabitEthernet0/0/24;shutdown\\n")
"""


@pytest.fixture
def small_disk() -> Iterator[Path]:
    mnt = Path(tempfile.mkdtemp(prefix="ctb-runfull-", dir="/tmp"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        mnt.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
        mnt.rmdir()


class Ballast:
    """Fills the file system of ``out`` once the runner has an attempt folder in ``tmp``; frees it
    ``hold_s`` later (the agents answer a second after they start)."""

    def __init__(self, out: Path, tmp: Path, hold_s: float = 4.0) -> None:
        self.out, self.tmp, self.hold_s = out, tmp, hold_s
        self.filled = threading.Event()
        self.file = out.parent / "ballast.bin"
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        deadline = time.monotonic() + 120
        while not any(self.tmp.glob("ctbench-ws-*")) and time.monotonic() < deadline:
            time.sleep(0.02)
        with contextlib.suppress(OSError), self.file.open("wb") as fh:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        with contextlib.suppress(OSError), self.file.open("ab") as fh:  # the last bytes too
            while True:
                fh.write(b"\0")
                fh.flush()
        self.filled.set()
        time.sleep(self.hold_s)
        self.file.unlink()


def _args(task_set: Path, out: Path, script: Path) -> list[str]:
    return [
        "run",
        "--allow-unreviewed",
        "--agent",
        "command",
        "--agent-cmd",
        shlex.join([sys.executable, str(script)]),
        "--tasks",
        str(task_set),
        "--out",
        str(out),
        "--concurrency",
        "3",
        "--retries",
        "6",
        "--progress",
        "none",
        "--no-score",
    ]


def test_a_full_run_folder_is_retried_as_infrastructure(
    task_set: Path, tmp_path: Path, small_disk: Path
) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    out, tmp = small_disk / "run", tmp_path / "tmp"
    tmp.mkdir()
    ballast = Ballast(out, tmp)
    proc = subprocess.run(
        [sys.executable, "-m", "ctbench.evaluate.cli", *_args(task_set, out, script)],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent), "TMPDIR": str(tmp)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert ballast.filled.is_set()
    ballast.thread.join()
    raw = (out / "results.jsonl").read_text()
    assert raw.endswith("\n")
    lines = {(d := json.loads(x))["task_id"]: d for x in raw.splitlines()}  # whole lines only
    assert sorted(lines) == ["PATH-001", "RCA-001", "RCA-002"], proc.stderr
    assert all(ln["status"] in ("answered", "unparsable") for ln in lines.values()), (lines, proc.stderr)
    retried = [r["error"] for ln in lines.values() for r in ln.get("retries") or []]
    assert retried, "the disk was full when the attempts ended: some must have been retried"
    assert all("the run folder's disk is full" in e for e in retried), retried
    assert proc.returncode == 0, proc.stderr


def test_protection_off_a_full_run_folder_stops_the_run(
    task_set: Path, tmp_path: Path, small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    out, tmp = small_disk / "run", tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setattr(runner, "_write_error", lambda exc, what: CtbError(f"{what}: {exc.strerror}"))
    ballast = Ballast(out, tmp)
    code = main(_args(task_set, out, script))
    ballast.thread.join()
    results = out / "results.jsonl"
    done = results.read_text().splitlines() if results.exists() else []
    assert code != 0 and len(done) < 3, done
