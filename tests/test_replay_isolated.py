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

CALLS = [
    ("CORE_SW_01", "dis int br"),
    ("CORE_SW_01", "display current-configuration interface GE0/0/24"),
    ("GW_01", "sh ip ro"),
    ("CORE_SW_01", "display ospf peer"),
    ("CORE_SW_01", "display foo"),
    ("NOPE", "show version"),
]


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
    (rec / "leak.txt").symlink_to(
        task_set / "rca" / "RCA-001" / "hidden.yaml"
    )  # a recording pointing at the gold
    (task_set / "rca" / "RCA-001" / ".hidden.yaml.abc.tmp").write_text("gold copy of an interrupted save")
    root = visible_copy(ts, "RCA-001", tmp_path / "view")
    names = [p.name for p in root.rglob("*")]
    assert (
        "hidden.yaml" not in names and "leak.txt" not in names and not any(n.endswith(".tmp") for n in names)
    )
    assert (root / "rca" / "RCA-001" / "task.yaml").is_file() and (root / "networks").is_dir()
    assert not (root / "rca" / "RCA-002").exists()  # other tasks stay out too
    gold = (task_set / "rca" / "RCA-001" / "hidden.yaml").read_text()
    assert not any(p.is_file() and p.read_text(errors="replace") == gold for p in root.rglob("*"))


def test_the_blind_replay_and_a_ray_worker_are_shown_the_same_files(task_set: Path, tmp_path: Path) -> None:
    """One definition of a task's agent-visible files (ctbench.isolation): the isolated replay's
    copy and what the Ray executor ships to its workers hold the same paths and bytes, and no
    hidden.yaml; a recording linked to the gold is in neither."""
    from ctbench.evaluate.ray_executor import set_bundle, task_bundles

    rec = task_set / "rca" / "RCA-001" / "recordings" / "CORE_SW_01"
    (rec / "leak.txt").symlink_to(task_set / "rca" / "RCA-001" / "hidden.yaml")
    ts = TaskSet.open(task_set)
    root = visible_copy(ts, "RCA-001", tmp_path / "view")
    copied = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    shipped: dict[str, bytes] = {}
    for bundle in [set_bundle(ts), *task_bundles(ts, "RCA-001")]:
        shipped.update(bundle.files)
    assert copied == shipped
    assert "rca/RCA-001/task.yaml" in copied and any(k.startswith("networks/") for k in copied)
    assert any(k.startswith("rca/RCA-001/recordings/") for k in copied)
    assert not any(k.endswith(("hidden.yaml", "leak.txt")) for k in copied)


@pytest.mark.parametrize("sandbox", [True, False])
def test_isolated_session_answers_like_the_engine(sandbox: bool, task_set: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(task_set)
    direct = ReplayEngine(ts).open_session("RCA-001")
    traj = tmp_path / "blind" / "RCA-001.jsonl"
    with IsolatedSession(ts, "RCA-001", trajectory_path=traj, sandbox=sandbox) as session:
        assert [d.name for d in session.devices()] == [d.name for d in direct.devices()]
        assert session.prompt("CORE_SW_01") == direct.prompt("CORE_SW_01")
        for line in ("dis cu", "display c", "sh ip ro", "nonsense"):  # Tab, answered by the isolated server
            assert session.complete("CORE_SW_01" if line[0] != "s" else "GW_01", line) == direct.complete(
                "CORE_SW_01" if line[0] != "s" else "GW_01", line
            )
        assert session.complete("CORE_SW_01", "dis cu") == ["current-configuration"]
        for device, command in CALLS:
            a, b = session.run(device, command), direct.run(device, command)
            assert (a.text, a.outcome, a.canonical, a.prompt) == (b.text, b.outcome, b.canonical, b.prompt)
        assert [(r.seq, r.command, r.outcome) for r in session.trajectory] == [
            (r.seq, r.command, r.outcome) for r in direct.trajectory
        ]  # completion is not a call
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
            assert (
                root is not None
                and (root / str(task_set).lstrip("/") / "rca" / "RCA-001" / "hidden.yaml").exists()
            )
    rows = [json.loads(x) for x in traj.read_text().splitlines()]
    assert [r["outcome"] for r in rows] == [
        "recorded",
        "recorded",
        "recorded",
        "denied",
        "invalid",
        "unknown-device",
    ]
    assert not list(Path(str(session._tmp)).parent.glob(Path(str(session._tmp)).name))  # the copy is gone


def test_isolated_engine_has_the_engine_shape(task_set: Path, tmp_path: Path) -> None:
    with IsolatedEngine(TaskSet.open(task_set)).open_session(
        "RCA-001", trajectory_path=tmp_path / "t.jsonl"
    ) as s:
        assert s.run("CORE_SW_01", "dis int br").ok
    assert os.path.getsize(tmp_path / "t.jsonl") > 0


@pytest.mark.parametrize("protection", ["bwrap", "off"])
def test_try_it_console_is_served_by_a_process_without_the_gold(
    protection: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The authoring app's Try-it console, driven by keys: the process answering it cannot open the
    task's hidden.yaml - neither the saved one in the task set nor the working copy's shadow.

    ``off`` turns the bubblewrap view off (the server still gets a copy without hidden.yaml, but
    runs in the author's file system): the same look into the server's root then finds the saved
    gold, which shows that the ``bwrap`` case's assertions can fail.
    """
    import asyncio

    from ctbench.authoring.app.widgets.sections.tryit import TryItSection
    from ctbench.replay import isolated
    from ctbench.tui.replay_console import ReplayConsole
    from tests.test_app_flows import SIZE, author_app, settle, until, validated
    from tests.test_editing import make_repo

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    if protection == "off":
        monkeypatch.setattr(isolated, "_bwrap_argv", lambda copy, traj: None)
    tasks = make_repo(tmp_path)
    gold = TaskSet.open(tasks).ref("RCA-001").path.resolve() / "hidden.yaml"
    assert gold.is_file()
    seen: dict[str, object] = {}

    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="RCA-001")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            await pilot.press("f8")
            console = editor.query_one(ReplayConsole)
            await until(pilot, lambda: console.session is not None, "the replay session")
            session = console.session
            assert isinstance(session, IsolatedSession)
            shadow = editor.query_one(TryItSection)._tmp
            assert shadow is not None and any(shadow.rglob("hidden.yaml"))  # the working copy has its gold
            root = server_root(str(session._tmp))
            assert root is not None
            view = root / str(session._tmp).lstrip("/")
            seen["sandboxed"] = session.sandboxed
            seen["serves"] = any(view.rglob("task.yaml"))  # the look into the server's view is real
            seen["saved gold"] = (root / str(gold).lstrip("/")).exists()
            seen["shadow gold"] = [
                p for p in shadow.rglob("hidden.yaml") if (root / str(p).lstrip("/")).exists()
            ]
            seen["gold in its task set"] = list(view.rglob("hidden.yaml"))
            seen["task set"] = (root / str(tasks).lstrip("/")).exists()
            seen["git"] = (root / str(tasks.parent / ".git").lstrip("/")).exists()
            seen["home"] = sorted(str(p) for p in _visible_home(root))
            console.run_command("display clock")  # and it answers the author as it answers an agent
            await until(pilot, lambda: len(session.trajectory) == 1, "the replayed command")
            await settle(pilot)

    asyncio.run(scenario())
    assert seen["serves"] and seen["gold in its task set"] == []
    if protection == "bwrap":
        assert seen == {
            "sandboxed": True,
            "serves": True,
            "saved gold": False,
            "shadow gold": [],
            "gold in its task set": [],
            "task set": False,
            "git": False,
            "home": [],
        }
    else:
        assert seen["sandboxed"] is False and seen["saved gold"] and seen["shadow gold"] and seen["task set"]


def _visible_home(root: Path) -> list[Path]:
    """What of the user's home a process whose file-system root is ``root`` sees, apart from the
    folders that lead to the Python runtime it was given (a pyenv or venv under the home)."""
    import sys

    import ctbench

    home = Path.home().resolve()
    runtime = [Path(p).resolve() for p in (sys.base_prefix, sys.prefix, Path(ctbench.__file__).parent)]
    inside = root / str(home).lstrip("/")
    if home == Path("/") or not inside.is_dir():
        return []
    found = []
    for entry in inside.iterdir():
        host = home / entry.name
        if not any(r == host or r.is_relative_to(host) for r in runtime):
            found.append(host)
    return found
