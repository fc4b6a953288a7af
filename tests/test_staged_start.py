"""Staged starts (``Admission``, ``ctbench/plugin_api/executor.py``): the next attempts make their
sandbox while the running ones run, and still never more than ``concurrency`` agents run at once.

The ``local`` executor lets up to ``concurrency`` more units set up ahead; a ``command`` agent's
sandbox is started held (root) and waits, capped, for a running place. What must hold, through the
real runner and real sandboxed processes:

- At no moment do more agent programs run than the concurrency, measured by the programs
  themselves (each writes when it began and ended). With the protection off (a place given
  without waiting) the staged ones run at once and the bound is broken.
- The wait for a place is not the agent's time: an attempt that waited longer than its time limit
  and then ran within it is not timed out, and its latency is its own run. With the protection off
  (the time limit left running through the wait) it is timed out.
- An interrupted run leaves no sandbox behind, held or running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctbench.evaluate.runner import Runner, RunSettings
from ctbench.plugin_api import executor as executor_api
from tests.conftest import needs_bwrap
from tests.test_runner import clone_tasks, results

pytestmark = [
    pytest.mark.xdist_group("attempt-limits"),
    needs_bwrap,
]

TIMED_AGENT = """\
#!/bin/sh
cat > /dev/null
echo "began $(date +%s.%N)" >&2
sleep {sleep}
echo "ended $(date +%s.%N)" >&2
"""


def _script(tmp_path: Path, sleep: float) -> str:
    path = tmp_path / "timed_agent.sh"
    path.write_text(TIMED_AGENT.format(sleep=sleep), encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def _place_without_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The protection off: a place is given at once, whatever runs already."""

    async def at_once(self: executor_api.Admission) -> None:
        if self.entered_at is None:
            self.entered_at = time.monotonic()
            self._on_enter()

    monkeypatch.setattr(executor_api.Admission, "__call__", at_once)
    monkeypatch.setattr(executor_api.Admission, "leave", lambda self: None)


def _run(tasks: Path, out: Path, script: str, select: str, concurrency: int, timeout_s: float) -> Path:
    report = Runner(
        RunSettings(
            allow_unreviewed=True,
            agent="command",
            agent_cmd=script,
            tasks=tasks,
            out=out,
            select=select,
            concurrency=concurrency,
            timeout_s=timeout_s,
            retries=0,
        )
    ).run()
    return report.folder


def _intervals(folder: Path) -> list[tuple[float, float]]:
    spans = []
    for line in results(folder):
        log = (folder / line["log"]).read_text(encoding="utf-8")
        began = [float(w.split()[1]) for w in log.splitlines() if w.startswith("began ")]
        ended = [float(w.split()[1]) for w in log.splitlines() if w.startswith("ended ")]
        assert len(began) == len(ended) == 1, log
        spans.append((began[0], ended[0]))
    return spans


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    events = sorted([(b, 1) for b, _ in spans] + [(e, -1) for _, e in spans])
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_never_more_agents_run_than_the_concurrency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, protection: str
) -> None:
    tasks = tmp_path / "tasks"
    ids = clone_tasks(tasks, 6)
    if protection != "on":
        _place_without_waiting(monkeypatch)
    # 1.5 s each: long enough that the staged ones, let go without waiting, overlap even on a busy machine
    folder = _run(tasks, tmp_path / "run", _script(tmp_path, 1.5), ",".join(ids), 2, 60)
    spans = _intervals(folder)
    assert len(spans) == 6
    if protection == "on":
        assert _most_at_once(spans) <= 2, spans
    else:
        assert _most_at_once(spans) > 2, spans


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_the_wait_for_a_place_is_not_the_agents_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, protection: str
) -> None:
    """Concurrency 1: the second attempt sets up beside the first and waits ~2 s for its place, then
    runs 2 s of its 3 s limit (counted from its set-up, it would be 4 s and more)."""
    tasks = tmp_path / "tasks"
    ids = clone_tasks(tasks, 2)
    if protection != "on":  # the time limit is not held while the attempt waits
        from ctbench.evaluate import attempt

        async def no_hold(self: attempt._Gate) -> None:
            if self.admission is not None and not self.admission.entered:
                await self.admission()

        monkeypatch.setattr(attempt._Gate, "__call__", no_hold)
    folder = _run(tasks, tmp_path / "run", _script(tmp_path, 2.0), ",".join(ids), 1, 3.0)
    lines = {line["task_id"]: line for line in results(folder)}
    statuses = [lines[i]["status"] for i in ids]  # it prints no answer: "unparsable" when not timed out
    if protection == "on":
        assert "timeout" not in statuses, lines
        assert all(lines[i]["latency_s"] < 3.8 for i in ids), lines  # its own run, not the wait (>= 4 s)
    else:
        assert "timeout" in statuses, lines


def _sandboxes_of(marker: str, runner: int) -> list[int]:
    """Processes but the runner whose command line names ``marker`` (bubblewrap, what it holds or runs)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in (os.getpid(), runner):
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def _default_sigint() -> None:
    """Ctrl-C as a terminal sends it: a suite started in the background (CI scripts often are) has
    SIGINT ignored, and an ignored signal stays ignored across exec unless reset."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_an_interrupted_run_leaves_no_sandbox_held_or_running(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    ids = clone_tasks(tasks, 4)
    script = _script(tmp_path, 60)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ctbench.evaluate.cli",
            "run",
            "--allow-unreviewed",
            "--agent",
            "command",
            "--agent-cmd",
            script,
            "--tasks",
            str(tasks),
            "--out",
            str(tmp_path / "run"),
            "--select",
            ",".join(ids),
            "--concurrency",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + 60
        # two running and two set up ahead (bubblewrap and its first process each)
        while len(_sandboxes_of(script, proc.pid)) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_sandboxes_of(script, proc.pid)) >= 4, _sandboxes_of(script, proc.pid)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in err, err
    deadline = time.monotonic() + 5
    while _sandboxes_of(script, proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _sandboxes_of(script, proc.pid) == []
