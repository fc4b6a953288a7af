"""A review step killed with SIGKILL in the middle of its git commit leaves the repository consistent."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctbench.approval.records import load_records
from ctbench.store import TaskSet
from tests.review_support import RCA_ANSWER, REPO, World, copy_world, git, make_world, ok, review


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("review-template") / "w")


@pytest.fixture
def world(template: World, tmp_path: Path) -> World:
    return copy_world(template, tmp_path / "w")


@pytest.mark.parametrize("hook", ["pre-commit", "post-commit"])
def test_sigkill_during_commit_then_next_command_finishes_the_step_once(
    world: World, tmp_path: Path, hook: str
) -> None:
    t = world.tasks
    ok("submit", "RCA-101", "--as", "alice", tasks=t)
    answer = tmp_path / "answer.txt"
    answer.write_text(RCA_ANSWER)
    marker = tmp_path / "hook-started"
    # The stall is the user's own hook (their global core.hooksPath): ctbench never runs a repository's
    # .git/hooks (ctbench/gitsafe.py), but a hooks folder the user configured is theirs to trust.
    hooks = tmp_path / "my-hooks"
    hooks.mkdir()
    hook_file = hooks / hook
    hook_file.write_text(f"#!/bin/sh\ntouch '{marker}'\nsleep 60\n")
    hook_file.chmod(hook_file.stat().st_mode | stat.S_IXUSR)
    user_config = tmp_path / "gitconfig"
    user_config.write_text(f"[core]\n\thooksPath = {hooks}\n")
    before = git("rev-parse", "review/RCA-101", cwd=world.work)

    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "GIT_AUTHOR_NAME": "bob",
        "GIT_AUTHOR_EMAIL": "bob@example.net",
        "GIT_CONFIG_GLOBAL": str(user_config),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ctbench.review.cli",
            "--tasks",
            str(t),
            "blind",
            "RCA-101",
            "--as",
            "bob",
            "--answer",
            str(answer),
            "--no-push",
        ],
        env=env,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the commit hook never ran"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI, git and the hook: a machine crash, as far as git knows
    proc.wait()
    hook_file.unlink()

    git_dir = world.work / ".git"
    journal = git_dir / "ctbench" / "journal.json"
    # straight after the kill: every file is whole, git is sound, the branch is before or after, never between
    assert journal.exists()
    assert (
        subprocess.run(["git", "fsck", "--no-progress"], cwd=world.work, capture_output=True).returncode == 0
    )
    records = load_records(t / "rca" / "RCA-101")
    assert records[-1].blind is not None and records[-1].blind.answer == RCA_ANSWER  # written atomically
    TaskSet.open(t).load_task("RCA-101")
    tip = git("rev-parse", "review/RCA-101", cwd=world.work)
    if hook == "pre-commit":
        assert tip == before and (git_dir / "index.lock").exists()  # killed inside `git commit`
    else:
        assert tip != before  # the commit itself had landed; only the clean-up was cut short

    # read-only commands say so instead of guessing
    code, _, err = review("status", tasks=t)
    assert code == 0 and "interrupted ctb-review step is pending" in err

    # the next write command finishes the interrupted step exactly once, then does its own work
    code, out, err = review("reveal", "RCA-101", "--as", "bob", "--all-agree", tasks=t)
    assert code == 0, err
    assert ("finished an interrupted step" if hook == "pre-commit" else "had been committed") in err
    assert not journal.exists() and not (git_dir / "index.lock").exists()
    blinds = git("log", "--format=%H", "--grep=^Ctbench-Action: blind$", "review/RCA-101", cwd=world.work)
    assert len(blinds.split()) == 1
    assert git("status", "--porcelain", cwd=world.work) == ""
    assert "approved" in out
    assert "RCA-101 (approved): ok" in ok("audit", "RCA-101", tasks=t)


def test_recover_command_reports_a_clean_state(world: World) -> None:
    assert "consistent" in ok("recover", tasks=world.tasks)


def test_a_git_refusal_rolls_the_step_back(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = world.tasks
    ok("submit", "RCA-101", "--as", "alice", tasks=t)
    hooks = tmp_path / "my-hooks"  # the user's own hooks (global core.hooksPath), which ctbench honours
    hooks.mkdir()
    hook_file = hooks / "pre-commit"
    hook_file.write_text("#!/bin/sh\necho 'policy: no commits today' >&2\nexit 1\n")
    hook_file.chmod(0o755)
    user_config = tmp_path / "gitconfig"
    user_config.write_text(f"[core]\n\thooksPath = {hooks}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user_config))
    answer = tmp_path / "answer.txt"
    answer.write_text(RCA_ANSWER)
    code, _, err = review("blind", "RCA-101", "--as", "bob", "--answer", str(answer), tasks=t)
    assert code == 1 and "no commits today" in err
    assert load_records(t / "rca" / "RCA-101")[-1].blind is None  # files restored, nothing half done
    assert git("status", "--porcelain", cwd=world.work) == ""
    assert not (world.work / ".git" / "ctbench" / "journal.json").exists()
