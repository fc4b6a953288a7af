"""The run gate reuses validation outcomes keyed by content; a changed byte validates again (issue 25).

Real task sets on disk, the real validator and gate, the cache in a folder of the test's own
(``CTBENCH_CACHE_DIR``). Which tasks the validator really checked is observed by counting calls of
``Validator.check_task`` (the method still runs). A second gate over unchanged files checks none; an
edit to one task's file, to a shared network file or a new folder sharing an id makes exactly the
affected tasks checked again, and their new errors keep them out; a cache file that is a link, or
garbage, is ignored and replaced. Through ``ctb-eval run`` twice, a task broken between the runs is
kept out of the second.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.approval.gate import apply_gate
from ctbench.store import TaskSet
from ctbench.validation.validator import Validator
from tests.conftest import REPO


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("CTBENCH_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Ids the validator checks, in order (the real method runs)."""
    seen: list[str] = []
    real = Validator.check_task

    def counting(self: Validator, ref, **kw):  # type: ignore[no-untyped-def]
        seen.append(ref.id)
        return real(self, ref, **kw)

    monkeypatch.setattr(Validator, "check_task", counting)
    return seen


def gate(root: Path) -> tuple[list[str], dict[str, str]]:
    ts = TaskSet.open(root)
    result = apply_gate(ts, [(r, ts.load_task(r)) for r in ts.refs()], allow_unreviewed=True)
    return sorted(r.id for r in result.admitted), {s.task_id: s.reason for s in result.skipped}


ALL = ["PATH-001", "RCA-001", "RCA-002"]


def test_unchanged_tasks_are_not_validated_again(task_set: Path, cache: Path, checked: list[str]) -> None:
    assert gate(task_set) == (ALL, {})
    assert sorted(checked) == ALL
    files = list((cache / "validation").glob("*.json"))
    assert len(files) == 1
    assert stat.S_IMODE((cache / "validation").stat().st_mode) == 0o700
    assert not list((cache / "validation").glob(".*.tmp"))  # written whole, through a temp file
    checked.clear()
    assert gate(task_set) == (ALL, {})
    assert checked == []


def test_a_changed_task_file_is_validated_again(task_set: Path, cache: Path, checked: list[str]) -> None:
    gate(task_set)
    checked.clear()
    hidden = task_set / "rca" / "RCA-002" / "hidden.yaml"
    hidden.write_text(hidden.read_text() + "answer: [\n")  # a YAML error, mtime or not
    admitted, skipped = gate(task_set)
    assert checked == ["RCA-002"]
    assert admitted == ["PATH-001", "RCA-001"] and "fails validation" in skipped["RCA-002"]
    checked.clear()
    assert gate(task_set)[1].keys() == {"RCA-002"} and checked == []  # the error is reused too


def test_a_changed_recording_is_validated_again(task_set: Path, cache: Path, checked: list[str]) -> None:
    gate(task_set)
    checked.clear()
    rec = next((task_set / "rca" / "RCA-001" / "recordings").rglob("*.txt"))
    before = rec.stat()
    rec.write_bytes(rec.read_bytes()[:-1] + b"X")  # the same size
    os.utime(rec, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same modification time
    gate(task_set)
    assert checked == ["RCA-001"]


def test_a_changed_network_file_validates_every_task_again(
    task_set: Path, cache: Path, checked: list[str]
) -> None:
    gate(task_set)
    checked.clear()
    net = task_set / "networks" / "campus-lab.yaml"
    net.write_text(net.read_text() + "  - [GHOST_99:eth0, SRV_01:eth1]\n")
    admitted, skipped = gate(task_set)
    assert sorted(checked) == ALL
    on_it = [t for t in ALL if "network: campus-lab" in next(task_set.rglob(f"{t}/task.yaml")).read_text()]
    assert on_it and all("GHOST_99" in skipped[t] for t in on_it), skipped


def test_a_new_folder_with_the_same_id_is_seen(task_set: Path, cache: Path, checked: list[str]) -> None:
    gate(task_set)
    checked.clear()
    shutil.copytree(task_set / "rca" / "RCA-002", task_set / "path" / "RCA-002")
    _, skipped = gate(task_set)
    assert "RCA-002" in skipped and "also used by" in skipped["RCA-002"], skipped


@pytest.mark.parametrize("planted", ["link", "garbage"])
def test_a_planted_cache_file_is_ignored_and_replaced(
    task_set: Path, cache: Path, checked: list[str], tmp_path: Path, planted: str
) -> None:
    gate(task_set)
    (file,) = (cache / "validation").glob("*.json")
    secret = tmp_path / "elsewhere.json"
    secret.write_text(file.read_text())
    file.unlink()
    if planted == "link":
        file.symlink_to(secret)
    else:
        file.write_text("{not json")
    checked.clear()
    assert gate(task_set) == (ALL, {})
    assert sorted(checked) == ALL  # nothing taken from the planted file
    assert file.is_file() and not file.is_symlink() and json.loads(file.read_text())["version"] == 2


def test_protection_off_a_key_without_the_content_reuses_a_stale_outcome(
    task_set: Path, cache: Path, checked: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key is what makes the reuse safe: keyed by the task's id alone, the broken task passes."""
    from ctbench.validation import cache as cache_mod

    monkeypatch.setattr(cache_mod, "task_key", lambda shared, ts, ref, same: f"{shared}|{ref.id}")
    gate(task_set)
    hidden = task_set / "rca" / "RCA-002" / "hidden.yaml"
    hidden.write_text(hidden.read_text() + "answer: [\n")
    assert gate(task_set) == (ALL, {})


def test_a_task_broken_between_two_runs_is_kept_out_of_the_second(
    task_set: Path, cache: Path, tmp_path: Path
) -> None:
    def run(out: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ctbench.evaluate.cli", "run", "--agent", "oracle", "--allow-unreviewed"]
            + ["--tasks", str(task_set), "--out", str(tmp_path / out), "--progress", "none", "--no-score"],
            env={**os.environ, "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=120,
        )

    first = run("one")
    assert first.returncode == 0 and first.stderr == "", first.stderr
    hidden = task_set / "path" / "PATH-001" / "hidden.yaml"
    hidden.write_text(hidden.read_text() + "answer: [\n")
    second = run("two")
    ran = sorted(
        json.loads(x)["task_id"] for x in (tmp_path / "two" / "results.jsonl").read_text().splitlines()
    )
    assert ran == ["RCA-001", "RCA-002"]
    assert "PATH-001" in second.stderr and "fails validation" in second.stderr
