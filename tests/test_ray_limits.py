"""The per-attempt caps of issue 25 (item 4) under ``--executor ray``, on a Ray node of this module's own.

A Ray worker runs each attempt through the same attempt host as a local run, so the caps the run
settles (``--limit``) must hold there too: a process cap, a file-size cap and a sized folder. Each case
runs the real ``ctb-eval run --executor ray --ray-address ... --concurrency 2`` with the default
sandbox: RCA-001's agent attacks while RCA-002's, at the same time on the same Ray host, answers
honestly a moment later (``ATTACKER``). With the cap in place the attacker ends as the cap makes it
end and the neighbour answers, neither retried. Each again with that cap off (``--limit KEY=off``),
where the attack must get through - so the assertions are shown able to fail:

- fork-happy (``procs=40``): far fewer than 40 children, the log says how many forks the cap refused;
  cap off: all 120;
- a huge file, a sparse 2 GiB one and 24 MiB on stdout (``file-size=4M``): each stops at 4 MiB
  (``EFBIG``); cap off: all written;
- a disk filler in a Ray worker whose temp folder is a 24 MiB tmpfs (``disk=16M``): it fills only
  its own folder and ends as ``error (agent)``, "ran out of room"; cap off: it fills the worker's temp
  disk and the honest neighbour loses its answer (retried as infrastructure, never blamed).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctbench.evaluate.limits import can_mount_tmpfs, find_pids_root
from tests.conftest import copy_starters, needs_bwrap, run_cli
from tests.test_ray_adversary import _ray_args, ray_head

pytestmark = [
    pytest.mark.xdist_group("ray-cluster"),
    needs_bwrap,
]

__all__ = ["ray_head"]  # the fixture, imported: a Ray head of this module's own on 127.0.0.1

ATTACKER = """\
import os, subprocess, sys, time
sys.stdin.read()
MiB = 1 << 20
answer = os.environ["CTBENCH_ANSWER_FILE"]
if os.environ["CTBENCH_TASK_ID"] != "RCA-001":      # the honest neighbour
    time.sleep(2.0)                                 # answers while the attacker is at its worst
    with open(answer, "w") as fh:
        fh.write("CORE_SW_01;GigabitEthernet0/0/24;shutdown\\n" * 2000)
    sys.exit(0)
mode, out = sys.argv[1], []
if mode == "fork":
    kids, refused = [], ""
    for _ in range(120):
        try:
            kids.append(subprocess.Popen(["sleep", "30"]))
        except OSError as exc:
            refused = str(exc.errno)
            break
    out += [f"started={len(kids)}", f"refused={refused}"]
    time.sleep(3)
    for k in kids:
        k.kill()
        k.wait()
elif mode == "write":
    try:
        with open("big.bin", "wb") as fh:
            for _ in range(24):
                fh.write(b"x" * MiB)
                fh.flush()
        out.append("big=all")
    except OSError as exc:
        out.append(f"big={os.path.getsize('big.bin') // MiB}MiB:{exc.errno}")
    try:
        with open("sparse.bin", "wb") as fh:
            fh.truncate(2 << 30)
        out.append("sparse=2GiB")
    except OSError as exc:
        out.append(f"sparse=refused:{exc.errno}")
    try:
        for _ in range(24):
            sys.stdout.buffer.write(b"y" * MiB)
            sys.stdout.flush()
        out.append("stdout=all")
    except OSError as exc:
        out.append(f"stdout=stopped:{exc.errno}")
elif mode == "fill":
    n = 0
    try:
        while True:                                 # small files: the file-size cap is not what stops it
            with open(f"fill-{n}.bin", "wb") as fh:
                for _ in range(2):
                    fh.write(b"x" * MiB)
                    fh.flush()
            n += 1
    except OSError:
        pass
    time.sleep(4)                                   # holds the disk full while the neighbour answers
    sys.exit(0)
with open(answer, "w") as fh:
    fh.write(" ".join(out) + "\\n")
"""


@pytest.fixture
def small_tmp() -> Iterator[Path]:
    """A 24 MiB tmpfs: the temp folder of the Ray workers of the disk case (``runtime_env``)."""
    mnt = Path(tempfile.mkdtemp(prefix="ctb-rayfull-", dir="/tmp"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        mnt.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
        mnt.rmdir()


def _run(
    address: str, tmp_path: Path, mode: str, *limits: str, worker_tmp: Path | None = None
) -> dict[str, dict[str, Any]]:
    """The attacker (RCA-001) beside the honest neighbour (RCA-002) on the Ray host: each line with its
    log text."""
    tasks = copy_starters(tmp_path / "tasks")
    agent = tmp_path / "agent.py"
    agent.write_text(ATTACKER)
    out = tmp_path / "run"
    args = [
        "run",
        "--allow-unreviewed",
        "--agent",
        "command",
        "--agent-cmd",
        shlex.join([sys.executable, str(agent), mode]),
        "--tasks",
        str(tasks),
        "--select",
        "RCA-001,RCA-002",
        "--out",
        str(out),
        "--progress",
        "none",
        "--no-score",
        "--retries",
        "2",
        *_ray_args(address, 2),
        *[a for lim in limits for a in ("--limit", lim)],
    ]
    if worker_tmp is not None:
        args += ["--executor-option", "runtime_env=" + json.dumps({"env_vars": {"TMPDIR": str(worker_tmp)}})]
    done = run_cli("evaluate", *args, env={"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}, timeout=300)
    assert (out / "results.jsonl").is_file(), done.stderr
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert {ln["task_id"] for ln in lines} == {"RCA-001", "RCA-002"}, done.stderr
    assert all(ln["worker"].startswith("ray:127.0.0.1/") for ln in lines), lines
    return {ln["task_id"]: ln | {"log_text": (out / ln["log"]).read_text(errors="replace")} for ln in lines}


def _fields(answer: str | None) -> dict[str, str]:
    assert answer, "the agent wrote no answer"
    return dict(part.split("=", 1) for part in answer.split())


def _unharmed(neighbour: dict[str, Any]) -> None:
    """The honest attempt answered at its first try, and nothing was put down to it."""
    assert neighbour["status"] in ("answered", "unparsable"), neighbour
    assert neighbour["error_kind"] is None and not neighbour.get("retries"), neighbour
    assert "CORE_SW_01;GigabitEthernet0/0/24;shutdown" in (neighbour["answer_text"] or "")


@pytest.mark.skipif(find_pids_root() is None, reason="no pids cgroup this runner may create")
@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_under_ray_a_fork_happy_agent_is_capped(
    ray_head: tuple[str, list[str]], tmp_path: Path, protection: str
) -> None:
    gcs, _ = ray_head
    lines = _run(gcs, tmp_path, "fork", "procs=40" if protection == "on" else "procs=off")
    got = _fields(lines["RCA-001"]["answer_text"])
    _unharmed(lines["RCA-002"])
    if protection == "on":
        assert int(got["started"]) < 40 and got["refused"], got  # EAGAIN: the cap stopped the loop
        assert "process cap (40) reached" in lines["RCA-001"]["log_text"]
        assert "[ctbench] caps: procs 40 (pids cgroup)" in lines["RCA-001"]["log_text"]
    else:
        assert int(got["started"]) == 120, got


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_under_ray_a_huge_file_agent_is_capped(
    ray_head: tuple[str, list[str]], tmp_path: Path, protection: str
) -> None:
    gcs, _ = ray_head
    caps = ("file-size=4M",) if protection == "on" else ("file-size=off", "disk=64M")
    lines = _run(gcs, tmp_path, "write", *caps)
    got = _fields(lines["RCA-001"]["answer_text"])
    _unharmed(lines["RCA-002"])
    if protection == "on":
        assert got == {"big": "4MiB:27", "sparse": "refused:27", "stdout": "stopped:27"}, got  # EFBIG
    else:
        assert got == {"big": "all", "sparse": "2GiB", "stdout": "all"}, got


@pytest.mark.skipif(not can_mount_tmpfs(), reason="the runner may not mount a tmpfs here")
@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_under_ray_a_disk_filler_fills_only_its_own_folder(
    ray_head: tuple[str, list[str]], tmp_path: Path, small_tmp: Path, protection: str
) -> None:
    gcs, _ = ray_head
    lines = _run(
        gcs, tmp_path, "fill", "disk=16M" if protection == "on" else "disk=off", worker_tmp=small_tmp
    )
    filler, neighbour = lines["RCA-001"], lines["RCA-002"]
    if protection == "on":
        assert (filler["status"], filler["error_kind"]) == ("error", "agent"), filler
        assert "ran out of room" in filler["error"] and "16 MiB disk cap" in filler["error"], filler["error"]
        assert not filler.get("retries")
        _unharmed(neighbour)
    else:  # the worker's temp disk full: the neighbour's first try lost its answer (the machine's fault)
        retried = neighbour.get("retries") or []
        assert retried, neighbour
        assert all("temp disk full" in r["error"] or "runner" in r["error"] for r in retried), retried
        assert neighbour["error_kind"] != "agent", neighbour
