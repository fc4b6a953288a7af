"""Sealed gold end to end (issue #17 item 1): three identities, a bare remote, real git and real age files.

The author (alice), the reviewer (bob) and the maintainer (maint) each have an age identity and a
clone. The task set is sealed before its first commit, so the reviewer's clone never holds the gold
in plain text (checked on every file of the clone and every object in its git database) until the
author unseals it after bob's blind commit is on the remote. A forged early unseal (bob made a
recipient before his blind commit, listed or not) fails the audit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pyrage = pytest.importorskip("pyrage")

from ctbench.sealing import RECIPIENTS_FILE, Recipient, stanza_count  # noqa: E402
from ctbench.store import TaskSet  # noqa: E402
from ctbench.yamlio import load_document, save_document  # noqa: E402
from tests.review_support import FIXTURE, RCA_ANSWER, RCA_COMMANDS, REPO, git, review  # noqa: E402

GOLD_MARKERS = (
    b"The interface carries an explicit shutdown",
    b"administratively down with shutdown in its",
    b"The static default route via 10.0.24.2 is gone",
)  # RCA-101's golden reasons and rationale
PEOPLE = ("alice", "bob", "maint", "carol")


class Sealed:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.keys: dict[str, Path] = {}
        self.public: dict[str, str] = {}
        for name in PEOPLE:
            ident = pyrage.x25519.Identity.generate()
            path = root / f"{name}.key"
            path.write_text(f"# {name}\n{ident}\n")
            self.keys[name] = path
            self.public[name] = str(ident.to_public())
        self.remote = root / "remote.git"
        git("init", "-q", "--bare", "-b", "main", str(self.remote), cwd=root)
        self.work = root / "work"
        self.work.mkdir()
        git("init", "-q", "-b", "main", cwd=self.work)
        git("config", "user.name", "maint", cwd=self.work)
        git("config", "user.email", "maint@example.net", cwd=self.work)
        shutil.copytree(FIXTURE, self.work / "tasks")
        shutil.copy(REPO / ".gitattributes", self.work / ".gitattributes")
        cfg = self.work / "tasks" / "ctbench.yaml"
        doc = load_document(cfg)
        doc["review"]["seal_gold"] = True
        save_document(cfg, doc)
        (self.work / "tasks" / "reviewers.yaml").write_text(
            "reviewers:\n"
            f"  - {{name: bob, vendors: [Huawei], domains: [rca], capacity: 2, age: {self.public['bob']}}}\n"
            "maintainers:\n"
            f"  - {{name: maint, age: {self.public['maint']}}}\n"
            "authors:\n"
            f"  - {{name: alice, age: {self.public['alice']}}}\n"
            f"  - {{name: carol, age: {self.public['carol']}}}\n"
        )
        # sealed before the first commit: the plain gold never enters the repository
        self.run("maint", "seal", "--all", "--no-commit", tasks=self.work / "tasks")
        assert not list((self.work / "tasks").rglob("hidden.yaml"))
        git("add", "-A", cwd=self.work)
        git("commit", "-q", "-m", "a sealed task set", cwd=self.work)
        git("remote", "add", "origin", str(self.remote), cwd=self.work)
        git("push", "-q", "origin", "main", cwd=self.work)
        (root / "a.txt").write_text(RCA_ANSWER)
        (root / "c.txt").write_text(RCA_COMMANDS)

    def clone(self, name: str) -> Path:
        dst = self.root / name
        git("clone", "-q", str(self.remote), str(dst), cwd=self.root)
        git("config", "user.name", name, cwd=dst)
        git("config", "user.email", f"{name}@example.net", cwd=dst)
        return dst

    def run(self, who: str, *args: str, tasks: Path, expect: int = 0, key: bool = True) -> str:
        ident = ("--identity", str(self.keys[who])) if key else ()
        before = os.environ.get("CTBENCH_USER")
        os.environ["CTBENCH_USER"] = who  # who acts, for every command (some take no --as)
        try:
            code, out, err = review(*ident, *args, tasks=tasks)
        finally:
            if before is None:
                os.environ.pop("CTBENCH_USER", None)
            else:
                os.environ["CTBENCH_USER"] = before
        assert code == expect, f"ctb-review {' '.join(args)} as {who} -> {code}\n{out}\n{err}"
        assert "Traceback" not in err
        return out + err


def assert_no_plain_gold(clone: Path) -> None:
    for path in clone.rglob("*"):
        if path.is_file() and ".git" not in path.relative_to(clone).parts:
            data = path.read_bytes()
            assert not any(m in data for m in GOLD_MARKERS), f"plain gold in {path}"
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=clone, capture_output=True, check=True
    ).stdout
    assert objects, "no git objects read"
    for marker in GOLD_MARKERS:
        assert marker not in objects, f"plain gold ({marker!r}) in the git objects of {clone}"


@pytest.fixture
def sealed(tmp_path: Path) -> Sealed:
    return Sealed(tmp_path)


def test_sealed_review_end_to_end(sealed: Sealed) -> None:
    s = sealed
    alice, bob = s.clone("alice"), s.clone("bob")
    at, bt, mt = alice / "tasks", bob / "tasks", s.work / "tasks"
    folder = bt / "rca" / "RCA-101"
    assert (folder / "hidden.yaml.age").read_bytes().startswith(b"age-encryption.org/v1\n")
    assert stanza_count((folder / "hidden.yaml.age").read_bytes()) == 2  # alice and maint

    s.run("alice", "submit", "RCA-101", tasks=at)
    # no blind commit yet: unseal is refused
    out = s.run("alice", "unseal", "RCA-101", "--for", "bob", tasks=at, expect=1)
    assert "no blind commit by bob" in out
    # bob solves blind with no key at all
    s.run("bob", "checkout", "RCA-101", tasks=bt, key=False)
    s.run(
        "bob",
        "blind",
        "RCA-101",
        "--answer",
        str(s.root / "a.txt"),
        "--commands",
        str(s.root / "c.txt"),
        tasks=bt,
        key=False,
    )
    # the gold is still sealed to him
    out = s.run("bob", "reveal", "RCA-101", "--all-agree", tasks=bt, expect=1)
    assert "not one of its recipients" in out and "ctb-review unseal" in out
    assert_no_plain_gold(bob)

    out = s.run("alice", "unseal", "RCA-101", "--for", "bob", tasks=at)
    assert "gold unsealed for bob" in out
    recipients = load_document(at / "rca" / "RCA-101" / RECIPIENTS_FILE)
    assert [r["name"] for r in recipients["recipients"]] == ["alice", "maint", "bob"]
    assert stanza_count((at / "rca" / "RCA-101" / "hidden.yaml.age").read_bytes()) == 3

    out = s.run("bob", "reveal", "RCA-101", "--all-agree", tasks=bt)
    assert "exact match: yes" in out and "approved" in out
    pr = s.root / "pr.md"
    s.run("bob", "pr", "RCA-101", "--out", str(pr), "--no-push", tasks=bt)  # validation with bob's identity
    text = pr.read_text()
    assert "are sealed (hidden.yaml.age) and are not shown" in text and "✅ passes" in text
    assert not any(m.decode() in text for m in GOLD_MARKERS)
    assert "GigabitEthernet0/0/24;shutdown" not in text  # the gold answer line (the comparison's)
    assert "The gold is sealed: 1 gold line(s), 1 blind line(s), 1 in both" in text
    assert "display" not in text.split("### Blind result vs gold")[1].split("###")[0]  # no golden command
    s.run("maint", "merge", "RCA-101", tasks=mt)
    out = s.run("maint", "audit", tasks=mt)
    assert "RCA-101 (approved): ok [blind by seal; steps unsigned (honour)]" in out
    assert "no reviewer could decrypt before their blind commit" in out and "proof: blind by seal" in out

    # the evaluator's store call opens it with the maintainer's identity, and the age CLI format is real
    ts = TaskSet.open(mt, identity=s.keys["maint"])
    assert ts.is_sealed(ts.ref("RCA-101"))
    assert ts.load_hidden("RCA-101").gold_answer_lines(ts.ref("RCA-101").family) == [
        "CORE_SW_01;GigabitEthernet0/0/24;shutdown"
    ]
    ident = pyrage.x25519.Identity.from_str(s.keys["bob"].read_text().splitlines()[1])
    plain = pyrage.decrypt((mt / "rca" / "RCA-101" / "hidden.yaml.age").read_bytes(), [ident])
    assert b"golden_actions" in plain

    # a recipient added by hand without being listed: the ciphertext's count betrays it
    stranger = pyrage.x25519.Identity.generate()
    sealed_file = mt / "rca" / "RCA-101" / "hidden.yaml.age"
    keys = [
        *(r["key"] for r in load_document(mt / "rca" / "RCA-101" / RECIPIENTS_FILE)["recipients"]),
        str(stranger.to_public()),
    ]
    sealed_file.write_bytes(pyrage.encrypt(plain, [pyrage.x25519.Recipient.from_str(k) for k in keys]))
    git("commit", "-qam", "re-encrypt", cwd=s.work)
    out = s.run("maint", "audit", "RCA-101", tasks=mt, expect=1)
    assert "has 4 recipient(s) but hidden.recipients.yaml lists 3" in out


def test_a_forged_early_unseal_is_caught_by_the_audit(sealed: Sealed) -> None:
    s = sealed
    alice, bob = s.clone("alice"), s.clone("bob")
    at, bt, mt = alice / "tasks", bob / "tasks", s.work / "tasks"
    s.run("alice", "submit", "RCA-101", tasks=at)
    # the author slips bob in before his blind answer, bypassing ctb-review unseal
    ts = TaskSet.open(at, identity=s.keys["alice"])
    ts.add_recipient(ts.ref("RCA-101").path, Recipient(name="bob", role="reviewer", key=s.public["bob"]))
    git("commit", "-qam", "help bob", cwd=alice)
    git("push", "-q", "origin", "review/RCA-101", cwd=alice)
    s.run("bob", "checkout", "RCA-101", tasks=bt, key=False)
    s.run(
        "bob",
        "blind",
        "RCA-101",
        "--answer",
        str(s.root / "a.txt"),
        "--commands",
        str(s.root / "c.txt"),
        tasks=bt,
        key=False,
    )
    s.run("bob", "reveal", "RCA-101", "--all-agree", tasks=bt)
    out = s.run("maint", "audit", "RCA-101", tasks=mt, expect=1)
    assert "bob became a recipient of the sealed gold before their blind commit" in out
    out = s.run("maint", "merge", "RCA-101", tasks=mt, expect=1)
    assert "fails the audit" in out


def author_cli(*args: str) -> tuple[int, str, str]:
    import contextlib
    import io

    from ctbench.authoring.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_authoring_reads_and_writes_sealed_gold_with_the_users_identity(
    sealed: Sealed, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = sealed
    alice = s.clone("alice")
    at = alice / "tasks"
    # without an identity, validation says the gold is sealed and unchecked (not a YAML error about bytes)
    monkeypatch.delenv("CTBENCH_AGE_IDENTITY", raising=False)
    code, out, _ = author_cli("validate", str(at / "rca" / "RCA-102"))
    assert code == 0 and "warning[sealed]: the gold is not checked" in out and "CTBENCH_AGE_IDENTITY" in out
    # ... and the run gate does not count it as approved-and-unchanged
    from ctbench.approval.check import approval_state

    assert not approval_state(TaskSet.open(at), "RCA-102").approved
    monkeypatch.setenv("CTBENCH_AGE_IDENTITY", str(s.keys["alice"]))
    code, out, _ = author_cli("validate", str(at / "rca" / "RCA-102"))
    assert code == 0, out
    # an edit re-seals the gold to the same recipients; no plain file is ever written
    code, _, err = author_cli(
        "set-answer",
        "RCA-102",
        "--tasks",
        str(at),
        "--rca",
        "CORE_SW_01;GigabitEthernet0/0/24;shutdown",
        "--author",
        "alice",
    )
    assert code == 0, err
    folder = at / "rca" / "RCA-102"
    assert not (folder / "hidden.yaml").exists()
    assert stanza_count((folder / "hidden.yaml.age").read_bytes()) == 2
    maint = TaskSet.open(at, identity=s.keys["maint"])
    assert maint.load_hidden("RCA-102").gold_answer_lines(maint.ref("RCA-102").family) == [
        "CORE_SW_01;GigabitEthernet0/0/24;shutdown"
    ]
    # a new task in a seal_gold set is sealed from its first save
    code, _, err = author_cli(
        "new",
        "--tasks",
        str(at),
        "--family",
        "rca",
        "--id",
        "RCA-120",
        "--network",
        "campus-lab",
        "--author",
        "alice",
        "--no-commit",
    )
    assert code == 0, err
    new = at / "rca" / "RCA-120"
    assert (new / "hidden.yaml.age").is_file() and not (new / "hidden.yaml").exists()
    assert (new / RECIPIENTS_FILE).is_file()
