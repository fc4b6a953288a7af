"""A review team on disk: five people, each with real keys and their own clone of one bare remote.

alice and carol author, bob and dave review, maint maintains. Each person has an SSH signing key made
by ``ssh-keygen -t ed25519 -N ''`` and an age identity, listed under one id in the task set's
``reviewers.yaml`` with the git identity (name, email) their clone commits with. Nobody borrows
anybody's clone: a step is taken from the acting person's own clone, as in real life, and
``--as`` is used only to show that naming someone else is refused.

Keys are made once per test session (:func:`make_keys`); a team's git world is built once per test
module and copied for each test (:func:`copy_team`), which is much faster than building one.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tests.review_support import FIXTURE, RCA_ANSWER, RCA_COMMANDS, REPO, git

PEOPLE = {
    "alice": ("Alice Liddell", "author"),
    "carol": ("Carol Danvers", "author"),
    "bob": ("Bob Dylan", "reviewer"),
    "dave": ("Dave Brubeck", "reviewer"),
    "maint": ("Maria Maintainer", "maintainer"),
}
GIT_ENV = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")


@dataclass(frozen=True)
class Keys:
    ssh_private: Path
    ssh_public: str  # "ssh-ed25519 AAAA... comment"
    age_identity: Path
    age_public: str


def email(pid: str) -> str:
    return f"{pid}@example.net"


def make_keys(root: Path, names: tuple[str, ...] = (*PEOPLE, "mallory")) -> dict[str, Keys]:
    """Real keys: an ed25519 SSH key (ssh-keygen, no passphrase) and an age identity per person."""
    import pyrage

    root.mkdir(parents=True, exist_ok=True)
    out = {}
    for pid in names:
        key = root / f"{pid}_ed25519"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", email(pid), "-f", str(key)],
            check=True,
            capture_output=True,
        )
        ident = pyrage.x25519.Identity.generate()
        age = root / f"{pid}.age"
        age.write_text(f"# {pid}\n{ident}\n")
        out[pid] = Keys(key, (root / f"{pid}_ed25519.pub").read_text().strip(), age, str(ident.to_public()))
    return out


def reviewers_yaml(keys: dict[str, Keys], *, ssh: bool = True) -> str:
    lines = ["# The review team: every person under one id, with their git identities and keys.", "people:"]
    for pid, (name, _role) in PEOPLE.items():
        k = keys[pid]
        lines.append(f"  - id: {pid}")
        lines.append(f"    names: [{name}]")
        lines.append(f"    emails: [{email(pid)}]")
        lines.append(f"    age: {k.age_public}")
        if ssh:
            lines.append(f"    ssh: {k.ssh_public}")
    lines += [
        "reviewers:",
        "  - {name: bob, vendors: [Huawei], domains: [rca], capacity: 3}",
        "  - {name: dave, vendors: [Cisco, Huawei], domains: [rca, path], capacity: 3}",
        "maintainers: [maint]",
        "authors: [alice, carol]",
    ]
    return "\n".join(lines) + "\n"


@dataclass
class Team:
    root: Path
    keys: dict[str, Keys]
    remote: Path = field(init=False)
    answer: Path = field(init=False)
    commands: Path = field(init=False)

    def __post_init__(self) -> None:
        self.remote = self.root / "remote.git"
        self.answer = self.root / "answer.txt"
        self.commands = self.root / "commands.txt"

    def clone_dir(self, pid: str) -> Path:
        return self.root / pid

    def tasks(self, pid: str) -> Path:
        return self.clone_dir(pid) / "tasks"

    def clone(
        self, pid: str, *, name: str | None = None, mail: str | None = None, signing: bool = True
    ) -> Path:
        """``pid``'s own clone, configured with their git identity (and signing key when ``signing``)."""
        dst = self.clone_dir(pid)
        if not dst.exists():
            git("clone", "-q", str(self.remote), str(dst), cwd=self.root)
            git("config", "user.name", name or PEOPLE.get(pid, (pid,))[0], cwd=dst)
            git("config", "user.email", mail or email(pid), cwd=dst)
            if signing and pid in self.keys:
                git("config", "gpg.format", "ssh", cwd=dst)
                git("config", "user.signingkey", str(self.keys[pid].ssh_private), cwd=dst)
        return dst

    def review(self, pid: str, *args: str, expect: int = 0) -> str:
        """``ctb-review`` run by ``pid`` in their clone (in this process); stdout + stderr."""
        from ctbench.review.cli import main

        self.clone(pid)
        out, err = io.StringIO(), io.StringIO()
        ident = ("--identity", str(self.keys[pid].age_identity)) if pid in self.keys else ()
        saved = {k: os.environ.pop(k, None) for k in (*GIT_ENV, "CTBENCH_USER")}
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["--tasks", str(self.tasks(pid)), *ident, *args])
        finally:
            for k, v in saved.items():
                if v is not None:
                    os.environ[k] = v
        text = out.getvalue() + err.getvalue()
        assert "Traceback" not in text and "internal error" not in text, text
        if expect == 0:
            assert code == 0, f"ctb-review {' '.join(args)} by {pid} -> {code}\n{text}"
        else:
            assert code != 0, f"ctb-review {' '.join(args)} by {pid} should have been refused\n{text}"
        return text

    def author(self, pid: str, *args: str, expect: int = 0, identity: bool = False) -> str:
        """``ctb-author`` run by ``pid`` in their clone, as a real subprocess (``identity``: with their age key)."""
        from tests.conftest import run_cli

        self.clone(pid)
        env = {"CTBENCH_AGE_IDENTITY": str(self.keys[pid].age_identity)} if identity else None
        proc = run_cli("authoring", "--tasks", str(self.tasks(pid)), *args, cwd=self.clone_dir(pid), env=env)
        text = proc.stdout + proc.stderr
        assert "Traceback" not in text, text
        assert (proc.returncode == 0) == (expect == 0), f"ctb-author {' '.join(args)} by {pid}: {text}"
        return text

    def blind(self, pid: str, task_id: str = "RCA-101", *extra: str, expect: int = 0) -> str:
        return self.review(
            pid,
            "blind",
            task_id,
            "--answer",
            str(self.answer),
            "--commands",
            str(self.commands),
            *extra,
            expect=expect,
        )


def make_team(root: Path, keys: dict[str, Keys], *, ssh: bool = True, sealed: bool = False) -> Team:
    """The team's bare remote with the review fixture's three drafts on main, committed by maint.

    RCA-102 records its author the old way, ``Alice Liddell <alice@example.net>``: it must be read and
    mapped to alice like RCA-101's ``alice``. ``sealed``: the set's gold is sealed (``ctb-review seal
    --all``, by maint) before its first commit, so no plain gold ever enters the repository.
    """
    root.mkdir(parents=True, exist_ok=True)
    team = Team(root, keys)
    git("init", "-q", "--bare", "-b", "main", str(team.remote), cwd=root)
    seed = root / "seed"
    git("init", "-q", "-b", "main", str(seed), cwd=root)
    git("config", "user.name", PEOPLE["maint"][0], cwd=seed)
    git("config", "user.email", email("maint"), cwd=seed)
    shutil.copytree(FIXTURE, seed / "tasks")
    shutil.copy(REPO / ".gitattributes", seed / ".gitattributes")
    (seed / "tasks" / "reviewers.yaml").write_text(reviewers_yaml(keys, ssh=ssh))
    legacy = seed / "tasks" / "rca" / "RCA-102" / "task.yaml"
    legacy.write_text(legacy.read_text().replace("  - alice\n", "  - Alice Liddell <alice@example.net>\n", 1))
    if sealed:
        from ctbench.review.cli import main as review_main

        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = review_main(["--tasks", str(seed / "tasks"), "seal", "--all", "--no-commit"])
        assert code == 0, out.getvalue()
        assert not list((seed / "tasks").rglob("hidden.yaml"))
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "the team's task set", cwd=seed)
    git("remote", "add", "origin", str(team.remote), cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    shutil.rmtree(seed)
    team.answer.write_text(RCA_ANSWER)
    team.commands.write_text(RCA_COMMANDS)
    return team


def copy_team(template: Team, root: Path) -> Team:
    """A private copy of a prepared team (its remote is its own; clones are made on first use)."""
    shutil.copytree(template.root, root, symlinks=True)
    team = Team(root, template.keys)
    for pid in list(PEOPLE):
        clone = team.clone_dir(pid)
        if clone.exists():
            git("remote", "set-url", "origin", str(team.remote), cwd=clone)
    return team


def all_objects(clone: Path) -> bytes:
    """Every object of a clone's git database, as ``git cat-file --batch-all-objects --batch`` prints them."""
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=clone, capture_output=True, check=True
    ).stdout
