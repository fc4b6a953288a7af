"""The isolated replay of blind review and Try-it: a separate server whose view has no hidden.yaml."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ctbench.replay.engine import ReplayEngine
from ctbench.replay.isolated import IsolatedEngine, IsolatedSession, visible_copy
from ctbench.store import TaskSet

CALLS = [("CORE_SW_01", "dis int br"), ("CORE_SW_01", "display current-configuration interface GE0/0/24"),
         ("GW_01", "sh ip ro"), ("CORE_SW_01", "display ospf peer"), ("CORE_SW_01", "display foo"),
         ("NOPE", "show version")]


def server_root(copy_marker: str) -> Path | None:
    """The file-system root of the serving process (``/proc/PID/root``), found by its command line."""
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in cmd and any(copy_marker.encode() in c for c in cmd) and b"bwrap" not in cmd[0]:
            return entry / "root"
    return None


def test_visible_copy_holds_no_hidden_part(task_set: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(task_set)
    rec = task_set / "rca" / "RCA-001" / "recordings" / "CORE_SW_01"
    (rec / "leak.txt").symlink_to(task_set / "rca" / "RCA-001" / "hidden.yaml")  # a recording pointing at the gold
    (task_set / "rca" / "RCA-001" / ".hidden.yaml.abc.tmp").write_text("gold copy of an interrupted save")
    root = visible_copy(ts, "RCA-001", tmp_path / "view")
    names = [p.name for p in root.rglob("*")]
    assert "hidden.yaml" not in names and "leak.txt" not in names and not any(n.endswith(".tmp") for n in names)
    assert (root / "rca" / "RCA-001" / "task.yaml").is_file() and (root / "networks").is_dir()
    assert not (root / "rca" / "RCA-002").exists()  # other tasks stay out too
    gold = (task_set / "rca" / "RCA-001" / "hidden.yaml").read_text()
    assert not any(p.is_file() and p.read_text(errors="replace") == gold for p in root.rglob("*"))


@pytest.mark.parametrize("sandbox", [True, False])
def test_isolated_session_answers_like_the_engine(sandbox: bool, task_set: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(task_set)
    direct = ReplayEngine(ts).open_session("RCA-001")
    traj = tmp_path / "blind" / "RCA-001.jsonl"
    with IsolatedSession(ts, "RCA-001", trajectory_path=traj, sandbox=sandbox) as session:
        assert [d.name for d in session.devices()] == [d.name for d in direct.devices()]
        assert session.prompt("CORE_SW_01") == direct.prompt("CORE_SW_01")
        for device, command in CALLS:
            a, b = session.run(device, command), direct.run(device, command)
            assert (a.text, a.outcome, a.canonical, a.prompt) == (b.text, b.outcome, b.canonical, b.prompt)
        if sandbox and shutil.which("bwrap"):
            assert session.sandboxed
            root = server_root(str(session._tmp))
            assert root is not None
            # the server's own view of the file system: neither the task set nor the user's home
            assert not (root / str(task_set).lstrip("/")).exists()
            assert not (root / str(Path.home()).lstrip("/") / ".bashrc").exists()
            assert not any((root / str(session._tmp).lstrip("/")).rglob("hidden.yaml"))
        elif not sandbox:  # the same look into an unsandboxed server does see the task set: the check is real
            root = server_root(str(session._tmp))
            assert root is not None and (root / str(task_set).lstrip("/") / "rca" / "RCA-001" / "hidden.yaml").exists()
    rows = [json.loads(x) for x in traj.read_text().splitlines()]
    assert [r["outcome"] for r in rows] == ["recorded", "recorded", "recorded", "denied", "invalid", "unknown-device"]
    assert not list(Path(str(session._tmp)).parent.glob(Path(str(session._tmp)).name))  # the copy is gone


def test_isolated_engine_has_the_engine_shape(task_set: Path, tmp_path: Path) -> None:
    with IsolatedEngine(TaskSet.open(task_set)).open_session("RCA-001",
                                                               trajectory_path=tmp_path / "t.jsonl") as s:
        assert s.run("CORE_SW_01", "dis int br").ok
    assert os.path.getsize(tmp_path / "t.jsonl") > 0
