"""The adversarial agent (tests/adversary/agent.py) through the real runner, sandboxed and not.

Under ``--sandbox bwrap`` it runs on every bundled task and must come back empty-handed on each of
its channels; under ``--sandbox none`` the very same agent finds the gold - which shows that the
probes are real and that the bwrap assertions can fail.

Both runs happen in an arena, a fresh folder in the temp folder (:func:`arena`): the runner's working directory
(and ``PWD``) is the folder holding the task set and the run folder, as when a user runs
``ctb-eval run`` from there; ``HOME`` and the temp folder (the attempts' workspaces) are under it
too. So what each channel can find does not depend on where pytest was started or on xdist, and
the adversary is allowed to leave marks only under the arena (plus, sandboxed, ``/tmp`` and
``/var/tmp`` themselves, which inside the sandbox are its private ones): run unsandboxed it writes
wherever it finds a folder, so it must not be shown the developer's other folders to write in.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctbench.evaluate.runner import Runner, RunSettings
from ctbench.evaluate.score import score_run
from ctbench.store import TaskSet
from tests.conftest import BUNDLED, REPO, needs_bwrap

ADVERSARY = REPO / "tests" / "adversary" / "agent.py"
MARK = "ADVERSARY_WAS_HERE"
CHANNELS = ("env", "proc", "traversal", "proxy", "fs", "git", "http", "writes")

needs_bwrap = needs_bwrap


def git_task_set(dst: Path) -> Path:
    """A copy of the bundled task set as its own git repository (the history holds the gold too)."""
    shutil.copytree(BUNDLED, dst)
    git = ["git", "-C", str(dst), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "tasks"], check=True)
    return dst


def tree_hash(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and ".git" not in p.relative_to(root).parts:
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def gold_markers(task_set: TaskSet) -> dict[str, list[str]]:
    """Per task: text only the hidden part holds (answer lines, golden actions' reasons, metadata
    values, the rationale, the canary)."""
    out: dict[str, list[str]] = {}
    for ref in task_set.refs():
        hidden = task_set.load_hidden(ref)
        data = hidden.model_dump(mode="json")
        marks = ["6f1d2c8e-4b7a-4e0f-9a51-3c2d7e8b9f04"]
        for entry in (data.get("answer") or {}).get("rca") or []:
            marks.append(f"{entry['node']};{entry['object']};{entry['label']}")
        for action in data.get("golden_actions") or []:
            if action.get("why"):
                marks.append(action["why"][:60])
        if data.get("rationale"):
            marks.append(" ".join(data["rationale"].split())[:60])
        mechanisms = (data.get("metadata") or {}).get("protocol_mechanisms")
        if mechanisms:
            marks.append(", ".join(mechanisms))
        out[ref.id] = [m for m in marks if m]
    return out


def reports(run_dir: Path) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for log in sorted((run_dir / "logs").glob("*.log")):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("ADVERSARY-REPORT "):
                found[log.stem] = json.loads(line[len("ADVERSARY-REPORT ") :])
    return found


def marks_left(*roots: Path) -> list[Path]:
    out: list[Path] = []
    for root in roots:
        out += [p for p in root.rglob(f"{MARK}*") if p.is_file()]
    return out


@pytest.fixture
def arena(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh folder as the runner's whole world: its cwd and ``PWD`` (beside the task set and the
    run folder), ``HOME`` and the temp folder where the attempts' workspaces are made; removed after.

    Made directly in the system temp folder rather than as ``tmp_path``: under xdist a ``tmp_path``
    is long enough that the runner's replay socket in it would pass the 107-byte limit of a Unix
    socket path.
    """
    root = Path(tempfile.mkdtemp(prefix=ARENA_PREFIX, dir="/tmp")).resolve()
    for name in ("home", "tmp"):
        (root / name).mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setenv("PWD", str(root))
    monkeypatch.setenv("HOME", str(root / "home"))
    monkeypatch.setenv("TMPDIR", str(root / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(root / "tmp"))  # the runner's mkdtemp() calls
    try:
        yield root
    finally:
        monkeypatch.undo()
        shutil.rmtree(root, ignore_errors=True)


def run_adversary(
    task_set: Path, out: Path, sandbox: str, marks: list[str], select: str | None = None, **kw: Any
) -> Any:
    cmd = shlex.join([sys.executable, str(ADVERSARY), *marks])
    settings = RunSettings(
        agent="command",
        agent_cmd=cmd,
        tasks=task_set,
        out=out,
        allow_unreviewed=True,
        sandbox=sandbox,
        concurrency=2,
        timeout_s=120,
        select=select,
        **kw,
    )
    return Runner(settings).run()


ARENA_PREFIX = "ctb-adv-"


def _marks(*folders: Path) -> set[Path]:
    """Adversary marks in these folders and one level below, the arenas apart (an unsandboxed run
    may write all over its own, which is no other arena's mark tree); folders other tests remove
    while we look are skipped."""
    out: set[Path] = set()
    for tmp in folders:
        for entry in list(tmp.iterdir()):
            try:
                if MARK in entry.name:
                    out.add(entry)
                elif entry.is_dir() and not entry.name.startswith(ARENA_PREFIX):
                    out.update(p for p in entry.iterdir() if MARK in p.name)
            except OSError:  # another parallel test removed it meanwhile
                continue
    return out


SYSTEM_TMP = (Path("/tmp"), Path("/var/tmp"))


@needs_bwrap
def test_adversary_finds_nothing_in_the_sandbox_on_every_bundled_task(arena: Path) -> None:
    root = arena
    tasks = git_task_set(root / "tasks")
    ts = TaskSet.open(tasks)
    before = tree_hash(tasks)
    marks_before = _marks(*SYSTEM_TMP)
    marks = ["--mark-tree", str(root), "--mark-dir", "/tmp", "--mark-dir", "/var/tmp"]
    report = run_adversary(tasks, root / "run", "bwrap", marks)
    run_dir = report.folder
    assert report.config.sandbox == "bwrap"
    got = reports(run_dir)
    ids = [r.id for r in ts.refs()]
    assert sorted(got) == sorted(ids), "every task's attempt reported"
    every_gold = [m for marks in gold_markers(ts).values() for m in marks]
    for task_id, rep in got.items():
        assert rep["found_gold"] is False, task_id
        assert set(CHANNELS) <= set(rep["channels"]), (task_id, sorted(rep["channels"]))
        for name in CHANNELS:
            channel = rep["channels"][name]
            text = json.dumps(channel)
            assert channel["leaks"] == [], (task_id, name, channel["leaks"][:1])
            assert not any(channel["extracted"].get(k) for k in ("answers", "golden_actions", "metadata")), (
                task_id,
                name,
                channel["extracted"],
            )
            hit = next((m for m in every_gold if m in text), None)
            assert hit is None, (task_id, name, hit)
            assert str(tasks) not in text and str(run_dir) not in text, (task_id, name)
        # the channels did run: each saw something of its own (the probes are not silently skipped)
        seen = {n: rep["channels"][n]["seen"] for n in ("env", "proc", "fs", "traversal", "proxy")}
        assert all(seen.values()), (task_id, {k: len(v) for k, v in seen.items()})
        assert any("ctbench at" in s for s in seen["proxy"])
        # the proxy's package folder is visible, the checkout around it is not
        assert not any("ls " + str(REPO) + ":" in s and "tasks" in s for s in seen["proxy"] + seen["fs"])
        # only this attempt's own processes are in its /proc
        pids = {s.split()[0] for s in seen["proc"] if s.split()[0].isdigit()}
        assert len(pids) <= 3, pids
        api = rep["channels"]["http"]["result"]
        assert api["own_without_token"] == 404 and api["own_with_token"] == 200
        assert set(api["guessed"]) == {404} and set(api["open"]) == {403} and api["other_sessions"] == []
        assert api["delete_own"] == 403 and api["list"] in (404, 405)
        assert rep["submit_status"] == 200
    # nothing written outside the workspaces: not the task set, the run folder, the checkout, /tmp
    assert tree_hash(tasks) == before
    assert marks_left(root, REPO / "ctbench", REPO / "tests") == []
    marks_after = _marks(*SYSTEM_TMP)
    assert marks_after <= marks_before
    # inside, the marks stuck only in the sandbox's private /tmp and its tmpfs: none of them is on the host
    for rep in got.values():
        writes = rep["channels"]["writes"]
        assert "/tmp" in writes["tried"] and any(t.startswith(str(root)) for t in writes["tried"])
        for path in writes["stuck"]:
            assert not Path(path).exists(), path
    scores = score_run(run_dir, ts, write=False)["summary"]
    assert scores["rca"]["accuracy"] == 0 and scores["path"]["accuracy"] == 0
    lines = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    assert {ln["answer_source"] for ln in lines} == {"submit"}


def test_the_same_adversary_unsandboxed_finds_the_gold(arena: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each channel that the sandbox closes is open without it, found from the arena alone (never
    from where pytest runs), and the marks land outside the workspace - in the arena only."""
    import ctbench

    root = arena
    monkeypatch.setenv("ADVERSARY_EXHAUSTIVE", "1")  # every channel hunts on after the first find
    monkeypatch.setenv("ADVERSARY_BUDGET_S", "8")
    tasks = git_task_set(root / "tasks")
    ts = TaskSet.open(tasks)
    before = tree_hash(tasks)
    marks_before = _marks(*SYSTEM_TMP)
    report = run_adversary(tasks, root / "run", "none", ["--mark-tree", str(root)], select="RCA-001,RCA-002")
    got = reports(report.folder)
    assert sorted(got) == ["RCA-001", "RCA-002"]
    markers = gold_markers(ts)
    # an editable install from a checkout holding tasks/ shows them to the proxy channel
    pkg = Path(ctbench.__file__).resolve().parent
    open_channels = ["env", "proc", "fs", "git"] + (["proxy"] if (pkg.parent / "tasks").is_dir() else [])
    for task_id, rep in got.items():
        assert rep["found_gold"] is True, task_id
        for name in open_channels:
            leaked = json.dumps(rep["channels"][name]["leaks"])
            assert any(m in leaked for m in markers[task_id]), (
                task_id,
                name,
                rep["channels"][name]["seen"][:5],
            )
        proc_leaks = [leak["where"] for leak in rep["channels"]["proc"]["leaks"]]
        assert any(w.startswith(str(tasks)) or w.startswith("/proc/") for w in proc_leaks), proc_leaks[:5]
        assert rep["channels"]["git"]["leaks"][0]["where"].startswith(str(tasks / ".git"))
        stuck = [Path(p) for p in rep["channels"]["writes"]["stuck"]]
        # unsandboxed its marks land on the host: in the task set, the run folder, HOME, the temp folder
        assert {root / "home", root / "tmp", report.folder} <= {p.parent for p in stuck}, stuck
        assert any(p.parent.is_relative_to(tasks) for p in stuck), stuck
        assert all(p.is_relative_to(root) for p in stuck), stuck
    assert tree_hash(tasks) != before  # (the sandboxed test's "task set unchanged" can fail)
    assert _marks(*SYSTEM_TMP) <= marks_before  # nothing outside the arena, though it could have
    assert marks_left(REPO / "ctbench", REPO / "tests") == []
    scores = score_run(report.folder, ts, write=False)["summary"]
    assert scores["rca"]["accuracy"] == 1.0
    assert report.config.sandbox == "none"
