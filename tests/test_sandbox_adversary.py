"""The adversarial agent (tests/adversary/agent.py) through the real runner, sandboxed and not.

Under ``--sandbox bwrap`` it runs on every bundled task and must come back empty-handed on each of
its channels; under ``--sandbox none`` the very same agent finds the gold - which shows that the
probes are real and that the bwrap assertions can fail.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from ctbench.evaluate.runner import Runner, RunSettings
from ctbench.evaluate.sandbox import find_bwrap
from ctbench.evaluate.score import score_run
from ctbench.store import TaskSet
from tests.conftest import BUNDLED, REPO

ADVERSARY = REPO / "tests" / "adversary" / "agent.py"
MARK = "ADVERSARY_WAS_HERE"
CHANNELS = ("env", "proc", "traversal", "proxy", "fs", "git", "http", "writes")

needs_bwrap = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed")


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
                found[log.stem] = json.loads(line[len("ADVERSARY-REPORT "):])
    return found


def marks_left(*roots: Path) -> list[Path]:
    out: list[Path] = []
    for root in roots:
        out += [p for p in root.rglob(f"{MARK}*") if p.is_file()]
    return out


def run_adversary(task_set: Path, out: Path, sandbox: str, select: str | None = None, **kw: Any) -> Any:
    settings = RunSettings(agent="command", agent_cmd=f"{sys.executable} {ADVERSARY}", tasks=task_set, out=out,
                           allow_unreviewed=True, sandbox=sandbox, concurrency=2, timeout_s=120, select=select,
                           **kw)
    return Runner(settings).run()


def _marks() -> set[Path]:
    """Adversary marks in the temp folder; folders other tests remove while we look are skipped."""
    out: set[Path] = set()
    tmp = Path(tempfile.gettempdir())
    for entry in list(tmp.iterdir()):
        try:
            if MARK in entry.name:
                out.add(entry)
            elif entry.is_dir():
                out.update(p for p in entry.iterdir() if MARK in p.name)
        except OSError:  # another parallel test removed it meanwhile
            continue
    return out


@needs_bwrap
def test_adversary_finds_nothing_in_the_sandbox_on_every_bundled_task(tmp_path: Path) -> None:
    tasks = git_task_set(tmp_path / "tasks")
    ts = TaskSet.open(tasks)
    before = tree_hash(tasks)
    marks_before = _marks()
    report = run_adversary(tasks, tmp_path / "run", "bwrap")
    run_dir = report.folder
    assert report.config.options.sandbox == "bwrap"
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
            assert not any(channel["extracted"].get(k) for k in ("answers", "golden_actions", "metadata")), \
                (task_id, name, channel["extracted"])
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
    assert marks_left(tmp_path, REPO / "ctbench", REPO / "tests") == []
    marks_after = _marks()
    assert marks_after <= marks_before
    # inside, the marks stuck only in the sandbox's private /tmp and its tmpfs: none of them is on the host
    for rep in got.values():
        for path in rep["channels"]["writes"]["stuck"]:
            assert not Path(path).exists(), path
    scores = score_run(run_dir, ts, write=False)["summary"]
    assert scores["rca"]["accuracy"] == 0 and scores["path"]["accuracy"] == 0
    lines = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    assert {ln["answer_source"] for ln in lines} == {"submit"}


def test_the_same_adversary_unsandboxed_finds_the_gold(tmp_path: Path) -> None:
    tasks = git_task_set(tmp_path / "tasks")
    ts = TaskSet.open(tasks)
    report = run_adversary(tasks, tmp_path / "run", "none", select="RCA-001,RCA-002")
    got = reports(report.folder)
    assert sorted(got) == ["RCA-001", "RCA-002"]
    markers = gold_markers(ts)
    for task_id, rep in got.items():
        assert rep["found_gold"] is True, task_id
        leaked = json.dumps({n: rep["channels"][n]["leaks"] for n in rep["channels"]})
        assert any(m in leaked for m in markers[task_id])
        assert rep["channels"]["proc"]["leaks"], "the runner's /proc entries lead to the task set"
    stuck = [Path(p) for rep in got.values() for p in rep["channels"]["writes"]["stuck"]]
    try:
        # (those in the attempt's folder went with it; the temp folder's stay)
        assert any(p.exists() for p in stuck if str(p.parent) in ("/tmp", "/var/tmp")), \
            "unsandboxed, its marks land on the host"
    finally:
        for p in stuck:
            p.unlink(missing_ok=True)
    scores = score_run(report.folder, ts, write=False)["summary"]
    assert scores["rca"]["accuracy"] == 1.0
    assert report.config.options.sandbox == "none"
