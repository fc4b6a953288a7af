"""Each attempt is capped: processes, file size, room in its folder (issue 25, item 4).

Every case runs the real ``ctb-eval run`` (default sandbox, bubblewrap) with a ``command`` agent that
attacks the way a careless or hostile one would, and the same attack with that cap turned off
(``--limit KEY=off``): the assertions fail where the protection is missing.

- A fork-happy agent starts as many sleeping children as it can (120 at most, so the protection-off
  case does not take the machine): capped at ``--limit procs=40`` it gets far fewer, and the log says
  how many forks the cap refused.
- A huge-file agent writes 24 MiB into its workspace, makes a sparse 2 GiB file and prints 24 MiB on
  standard output (a file the runner owns): with ``--limit file-size=4M`` every one stops at 4 MiB.
- A disk-filling agent: see ``tests/test_disk_full.py`` (the folder cap and the full temp disk).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from ctbench.evaluate.limits import can_mount_tmpfs, find_pids_root
from tests.conftest import needs_bwrap, run_cli

pytestmark = [
    pytest.mark.xdist_group("attempt-limits"),
    needs_bwrap,
]

FORKER = """\
import os, subprocess, sys, time
sys.stdin.read()
kids, refused = [], ""
for _ in range(120):
    try:
        kids.append(subprocess.Popen(["sleep", "30"]))
    except OSError as exc:
        refused = str(exc.errno)
        break
with open(os.environ["CTBENCH_ANSWER_FILE"], "w") as fh:
    fh.write(f"started={len(kids)} refused={refused}\\n")
for k in kids:
    k.kill()
    k.wait()
"""

WRITER = """\
import os, sys
sys.stdin.read()
MiB = 1 << 20
out = []
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
with open(os.environ["CTBENCH_ANSWER_FILE"], "w") as fh:
    fh.write(" ".join(out) + "\\n")
"""


def _run(
    task_set: Path, tmp_path: Path, script: str, *limits: str, env: dict[str, str] | None = None
) -> dict[str, dict]:
    agent = tmp_path / "agent.py"
    agent.write_text(script)
    out = tmp_path / "run"
    done = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "command",
        "--agent-cmd",
        shlex.join([sys.executable, str(agent)]),
        "--tasks",
        str(task_set),
        "--select",
        "RCA-001",
        "--out",
        str(out),
        "--progress",
        "none",
        "--no-score",
        "--retries",
        "0",
        *[a for lim in limits for a in ("--limit", lim)],
        timeout=240,
        env=env,
    )
    assert (out / "results.jsonl").is_file(), done.stderr
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return {ln["task_id"]: ln | {"log_text": (out / ln["log"]).read_text(errors="replace")} for ln in lines}


def _fields(answer: str | None) -> dict[str, str]:
    assert answer, "the agent wrote no answer"
    return dict(part.split("=", 1) for part in answer.split())


@pytest.mark.skipif(find_pids_root() is None and __import__("os").getuid() == 0, reason="no pids cgroup")
@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_a_fork_happy_agent_is_capped(task_set: Path, tmp_path: Path, protection: str) -> None:
    cap = "procs=40" if protection == "on" else "procs=off"
    line = _run(task_set, tmp_path, FORKER, cap)["RCA-001"]
    got = _fields(line["answer_text"])
    if protection == "on":
        assert int(got["started"]) < 40, got
        assert got["refused"], got  # the fork failed (EAGAIN): the cap, not the loop, stopped it
        assert "process cap (40) reached" in line["log_text"]
    else:
        assert int(got["started"]) == 120, got


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_a_huge_file_agent_is_capped(task_set: Path, tmp_path: Path, protection: str) -> None:
    caps = ("file-size=4M",) if protection == "on" else ("file-size=off", "disk=64M")
    line = _run(task_set, tmp_path, WRITER, *caps)["RCA-001"]
    got = _fields(line["answer_text"])
    if protection == "on":
        assert got["big"] == "4MiB:27", got  # EFBIG at the cap
        assert got["sparse"] == "refused:27", got
        assert got["stdout"] == "stopped:27", got  # the runner's stdout file stops growing too
    else:
        assert got == {"big": "all", "sparse": "2GiB", "stdout": "all"}, got


@pytest.mark.skipif(not can_mount_tmpfs(), reason="the runner may not mount a tmpfs here")
def test_the_caps_are_said_in_the_log_and_the_tmpfs_goes(task_set: Path, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    line = _run(task_set, tmp_path, FORKER, "procs=40", "disk=32M", env={"TMPDIR": str(tmp)})["RCA-001"]
    assert "[ctbench] caps: procs 40" in line["log_text"], line["log_text"][:2000]
    assert "disk 32 MiB" in line["log_text"]
    mounts = Path("/proc/self/mountinfo").read_text()
    assert str(tmp) not in mounts  # the attempt's tmpfs was unmounted with its folder
    assert not list(tmp.glob("ctbench-ws-*"))


@pytest.mark.skipif(find_pids_root() is None, reason="no pids cgroup this runner may create")
def test_the_sweep_removes_the_cgroups_of_dead_runners_only() -> None:
    from ctbench.evaluate.agents.process import owner_alive, owner_tag
    from ctbench.evaluate.limits import AttemptCgroup, remove_stale_cgroups

    root = find_pids_root()
    assert root is not None
    dead = AttemptCgroup.create(root, "o999999999.1-RCA-001", 8)  # a pid no runner has
    live = AttemptCgroup.create(root, f"{owner_tag()}RCA-001", 8)
    try:
        remove_stale_cgroups(root, lambda name: owner_alive(name) is False)
        assert not dead.path.exists() and live.path.is_dir()
    finally:
        live.remove()
        dead.remove()
