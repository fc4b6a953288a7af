"""Nothing from a task set executes (issue 25, item 5): a hostile ``.git/config`` and ``.git/hooks``.

The task set is a real git repository whose config plants programs the way a handed-over folder
can: ``core.fsmonitor`` (run by every ``git status``), a ``clean`` filter that ``.gitattributes``
applies to every file (run by every diff), ``core.sshCommand`` (run by every fetch over ssh) and a
``pre-commit`` hook. Each program only leaves a mark in a folder outside. Plain git and plain
GitPython run them (the protection-off half of each test: the marks appear); ``ctb-eval run`` and
ctbench's git helper run none.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import git

from ctbench.authoring.saving import commit_paths
from ctbench.gitsafe import git_env, harden, overrides
from tests.conftest import REPO, copy_starters


def hostile_task_set(root: Path) -> tuple[Path, Path]:
    """A committed task set whose repository config and hooks would run programs; and the marks folder."""
    marks = root / "marks"
    marks.mkdir(parents=True)
    tasks = copy_starters(root / "tasks")
    (tasks / ".gitattributes").write_text("* filter=evil\n")

    def g(*args: str) -> None:
        subprocess.run(["git", "-C", str(tasks), *args], check=True, capture_output=True)

    g("init", "-q", "-b", "main")
    g("-c", "user.name=t", "-c", "user.email=t@example.com", "add", "-A")
    g("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "tasks")
    g("config", "user.name", "maint")
    g("config", "user.email", "maint@example.com")
    g("config", "core.fsmonitor", f"touch {marks}/fsmonitor; false")
    g("config", "filter.evil.clean", f"touch {marks}/clean; cat")
    g("config", "filter.evil.smudge", f"touch {marks}/smudge; cat")
    g("config", "core.sshCommand", f"touch {marks}/ssh; false")
    hook = tasks / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {marks}/hook\n")
    hook.chmod(0o755)
    return tasks, marks


def marks_in(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def test_ctb_eval_run_on_a_hostile_task_set_runs_none_of_its_programs(tmp_path: Path) -> None:
    tasks, marks = hostile_task_set(tmp_path)
    (tasks / "rca" / "RCA-001" / "task.yaml").open("a").write("\n")  # dirty: git must look at the file
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "ctbench.evaluate.cli", "run", "--agent", "oracle", "--allow-unreviewed"]
        + [
            "--select",
            "RCA-001",
            "--tasks",
            str(tasks),
            "--out",
            str(tmp_path / "run"),
            "--progress",
            "none",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert marks_in(marks) == set()
    run_yaml = (tmp_path / "run" / "run.yaml").read_text()
    head = subprocess.run(
        ["git", "-C", str(tasks), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout
    assert head.strip() in run_yaml and "dirty: true" in run_yaml  # git still answered
    # protection off: what the runner did before - GitPython asks whether the set is dirty
    assert git.Repo(tasks).is_dirty(untracked_files=True)
    assert {"fsmonitor", "clean"} <= marks_in(marks)


def test_subprocess_git_with_git_env_runs_no_planted_program(tmp_path: Path) -> None:
    tasks, marks = hostile_task_set(tmp_path)
    (tasks / "ctbench.yaml").open("a").write("\n")
    env = git_env(tasks)
    for argv in (["status", "--short"], ["diff", "--stat"], ["ls-remote", "ssh://127.0.0.1:1/x"]):
        subprocess.run(["git", "-C", str(tasks), *argv], env=env, capture_output=True, timeout=30)
    subprocess.run(["git", "-C", str(tasks), "checkout", "--", "ctbench.yaml"], env=env, check=True)
    assert marks_in(marks) == set()
    keys = [k for k, _ in overrides(tasks)]
    assert {"core.fsmonitor", "core.hookspath", "core.sshcommand", "filter.evil.clean"} <= set(keys)
    # protection off: the same commands without it
    for argv in (["status", "--short"], ["ls-remote", "ssh://127.0.0.1:1/x"]):
        subprocess.run(["git", "-C", str(tasks), *argv], capture_output=True, timeout=30)
    assert {"fsmonitor", "clean", "ssh"} <= marks_in(marks)


def test_a_commit_through_ctbench_runs_no_hook_and_no_filter(tmp_path: Path) -> None:
    tasks, marks = hostile_task_set(tmp_path)
    target = tasks / "rca" / "RCA-001" / "task.yaml"
    target.open("a").write("# edited\n")
    sha, note = commit_paths(
        tasks, [target], task_id="RCA-001", action="edit", author="alice <alice@example.com>", subject="edit"
    )
    assert sha is not None, note
    assert marks_in(marks) == set()
    repo = harden(git.Repo(tasks))
    assert repo.head.commit.hexsha == sha and not repo.is_dirty()
    assert marks_in(marks) == set()
    # protection off: a plain commit of the same kind runs the hook and the filter
    target.open("a").write("# again\n")
    subprocess.run(["git", "-C", str(tasks), "commit", "-q", "-am", "plain"], capture_output=True, check=True)
    assert {"hook", "clean"} <= marks_in(marks)


def test_the_users_own_settings_still_count(tmp_path: Path) -> None:
    """A global ``core.sshCommand`` or hooks folder of the user's is theirs: kept, not turned off."""
    tasks, _ = hostile_task_set(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[core]\n\tsshCommand = ssh -i /keys/mine\n\thooksPath = /etc/my-hooks\n"
    )
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    got = dict(overrides(tasks, env))
    assert got["core.sshcommand"] == "ssh -i /keys/mine"
    assert got["core.hookspath"] == "/etc/my-hooks"
    assert got["core.fsmonitor"] == "false"
