"""Real git worlds for the review tests: a bare remote on disk, clones, and draft tasks to review.

The task set is ``tests/fixtures/review``: three drafts copied from the starter tasks (new ids, named
authors) and a reviewers file, kept apart from the bundled sample set so these tests do not move
when the sample set grows.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = (
    REPO / "tests" / "fixtures" / "review"
)  # drafts RCA-101, RCA-102 (alice), PATH-101 (carol), reviewers.yaml

RCA_ANSWER = "CORE_SW_01;GE0/0/24;shutdown\n"
RCA_COMMANDS = "CORE_SW_01 display interface brief\nCORE_SW_01 dis cur int GE0/0/24\nGW_01 show ip route\n"


def git(*args: str, cwd: Path, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


@dataclass
class World:
    root: Path
    remote: Path
    work: Path

    @property
    def tasks(self) -> Path:
        return self.work / "tasks"

    def task_dir(self, family: str, task_id: str, clone: Path | None = None) -> Path:
        return (clone or self.work) / "tasks" / family / task_id

    def clone(self, name: str) -> Path:
        dst = self.root / name
        git("clone", "-q", str(self.remote), str(dst), cwd=self.root)
        git("config", "user.name", name, cwd=dst)
        git("config", "user.email", f"{name}@example.net", cwd=dst)
        return dst


def make_world(root: Path) -> World:
    """A main-branch task set with drafts RCA-101, RCA-102 (alice) and PATH-101 (carol), pushed to a bare remote."""
    root.mkdir(parents=True, exist_ok=True)
    remote = root / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=root)
    work = root / "work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    git("config", "user.name", "maint", cwd=work)
    git("config", "user.email", "maint@example.net", cwd=work)
    shutil.copytree(FIXTURE, work / "tasks")
    shutil.copy(REPO / ".gitattributes", work / ".gitattributes")
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "task set with three drafts", cwd=work)
    git("remote", "add", "origin", str(remote), cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    return World(root, remote, work)


def copy_world(template: World, root: Path) -> World:
    """A private copy of a prepared world (much faster than building one); its remote is its own."""
    shutil.copytree(template.root, root, symlinks=True)
    world = World(root, root / "remote.git", root / "work")
    git("remote", "set-url", "origin", str(world.remote), cwd=world.work)
    return world


def review(*args: str, tasks: Path, impersonate: bool = True) -> tuple[int, str, str]:
    """Run ``ctb-review`` in this process (fast); (exit code, stdout, stderr).

    ctb-review takes the acting person from the git identity (``--as`` may only confirm it). These
    tests play several people from one clone, so by default the person named by ``--as`` (or
    ``$CTBENCH_USER``) becomes the git identity of the call, as in that person's own clone. The
    tests of identities themselves (tests/test_review_identity.py) use real per-person clones.
    """
    from ctbench.review.cli import main

    who = None
    if "--as" in args:
        who = args[args.index("--as") + 1]
    who = who or os.environ.get("CTBENCH_USER")
    env = {}
    if impersonate and who:
        env = {
            "GIT_AUTHOR_NAME": who,
            "GIT_COMMITTER_NAME": who,
            "GIT_AUTHOR_EMAIL": f"{who}@example.net",
            "GIT_COMMITTER_EMAIL": f"{who}@example.net",
        }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--tasks", str(tasks), *args])
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return code, out.getvalue(), err.getvalue()


def ok(*args: str, tasks: Path) -> str:
    code, out, err = review(*args, tasks=tasks)
    assert code == 0, f"ctb-review {' '.join(args)} -> {code}\n{out}\n{err}"
    return out


def refused(*args: str, tasks: Path) -> str:
    code, out, err = review(*args, tasks=tasks)
    assert code != 0, f"ctb-review {' '.join(args)} should have been refused\n{out}"
    assert "Traceback" not in err
    return err


def trailers(cwd: Path, rev: str = "HEAD") -> dict[str, str]:
    text = git("log", "-1", "--format=%(trailers:only=true,unfold=true)", rev, cwd=cwd)
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        out[k.strip()] = v.strip()
    return out
