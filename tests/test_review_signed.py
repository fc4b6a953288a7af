"""Signed review steps (issue 26): every step is SSH-signed by its actor, and nothing else counts.

The team of tests/team_support.py, with their ssh-keygen keys listed in reviewers.yaml, reviews
RCA-101 from their own clones; every commit is signed by git itself (gpg.format=ssh). Then an
adversary forges the record four ways, as one would with plain git: a hand-edited record
(disagree -> agree, outcome and status approved), a step re-committed unsigned, a step re-signed
with a key nobody lists (mallory's), and a step re-signed by alice in bob's name. Each fails the
audit and the run gate, naming the commit; with the protection off (main's reviewers.yaml committed
without the ``ssh:`` lines, as a set without signing keys) the same forgery passes both. The keys
are read from main's committed reviewers.yaml: a key an adversary lists in a working tree or on a
review branch verifies nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctbench.approval.check import approval_state
from ctbench.approval.gate import apply_gate
from ctbench.store import TaskSet
from tests.review_support import git, trailers
from tests.team_support import Keys, Team, copy_team, make_keys, make_team

pytestmark = pytest.mark.xdist_group("review-team")


@pytest.fixture(scope="session")
def team_keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Keys]:
    return make_keys(tmp_path_factory.mktemp("team-keys"))


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory, team_keys: dict[str, Keys]) -> Team:
    """RCA-101 submitted by alice, assigned to bob by maint, solved blind by bob: all signed, all pushed."""
    team = make_team(tmp_path_factory.mktemp("team-signed") / "t", team_keys)
    team.review("alice", "submit", "RCA-101")
    team.review("maint", "assign", "RCA-101", "--reviewer", "bob", "--apply")
    out = team.blind("bob")
    assert "hidden.yaml is plain text in your clone, so this solve is blind by honour" in out
    return team


@pytest.fixture
def team(reviewed: Team, tmp_path: Path) -> Team:
    return copy_team(reviewed, tmp_path / "t")


def signers_file(team: Team) -> Path:
    path = team.root / "allowed_signers"
    path.write_text("".join(f"{pid} {k.ssh_public}\n" for pid, k in team.keys.items() if pid != "mallory"))
    return path


def gate(tasks: Path) -> tuple[list[str], dict[str, str]]:
    ts = TaskSet.open(tasks)
    refs = [ts.ref("RCA-101")]
    result = apply_gate(ts, [(r, ts.load_task(r)) for r in refs])
    return [r.id for r in result.admitted], {s.task_id: s.reason for s in result.skipped}


def test_every_step_is_signed_by_its_actor_and_verifies(team: Team) -> None:
    team.review("bob", "reveal", "RCA-101", "--all-agree")
    out = team.review("maint", "merge", "RCA-101")
    assert "merged review/RCA-101 into main" in out
    maint = team.clone_dir("maint")
    allowed = signers_file(team)
    log = git(
        "-c", f"gpg.ssh.allowedSignersFile={allowed}", "log", "--format=%G?|%GS|%(trailers:key=Ctbench-Actor,valueonly)",
        "--grep=^Ctbench-Task: RCA-101$", "main", cwd=maint,
    )  # fmt: skip
    steps = [line.split("|") for line in log.splitlines() if line.strip()]
    assert len(steps) >= 5  # merge, approve, verdicts..., reveal, blind, assign, submit
    assert all(status == "G" and signer == actor.strip() for status, signer, actor in steps), steps
    assert {s[1] for s in steps} == {"alice", "bob", "maint"}
    blind = git("log", "-1", "--format=%H", "--grep=^Ctbench-Action: blind$", "main", cwd=maint)
    verified = git(
        "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", blind, cwd=maint, check=False
    )
    assert verified == ""  # git prints the good signature on stderr; the exit status is what counts
    out = team.review("maint", "audit", "RCA-101")
    assert "RCA-101 (approved): ok [blind by honour; signatures verified]" in out
    assert "every review step's signature verified" in out and "proof: blind by honour" in out
    status = json.loads(_json_of(team))
    assert status["total"]["blind_by_honour"] == 1 and status["total"]["blind_by_seal"] == 0
    assert approval_state(TaskSet.open(team.tasks("maint")), "RCA-101").approved
    assert gate(team.tasks("maint"))[0] == ["RCA-101"]


def _json_of(team: Team) -> str:
    """``ctb-review status --json`` in maint's clone: the JSON document on stdout."""
    text = team.review("maint", "status", "--json")
    return text[text.index("{") : text.rindex("}") + 1]


def _forge(team: Team, how: str) -> str:
    """Forge RCA-101's review as an adversary would with plain git; the offending commit's sha."""
    if how == "hand-edited":
        team.review("bob", "reveal", "RCA-101", "--agree", "solvability", "completeness", "golden",
                    "--disagree", "metadata", "the chain is 3 long")  # fmt: skip
        alice = team.clone("alice")
        git("fetch", "-q", "origin", cwd=alice)
        git("checkout", "-q", "review/RCA-101", cwd=alice)
        git("merge", "-q", "--ff-only", "origin/review/RCA-101", cwd=alice)
        rec = team.tasks("alice") / "rca" / "RCA-101" / "reviews" / "round-01.yaml"
        text = rec.read_text().replace("verdict: disagree", "verdict: agree")
        text = text.replace("outcome: needs_revision", "outcome: approved")
        rec.write_text(text)
        task = team.tasks("alice") / "rca" / "RCA-101" / "task.yaml"
        task.write_text(task.read_text().replace("status: needs_revision", "status: approved"))
        git("commit", "-q", "-am", "review(RCA-101): metadata agreed after all", cwd=alice)
        git("push", "-q", "origin", "review/RCA-101", cwd=alice)
        return git("rev-parse", "HEAD", cwd=alice)
    team.review("bob", "reveal", "RCA-101", "--all-agree")
    who = "alice" if how == "other-person" else "bob"
    clone = team.clone(who)
    git("fetch", "-q", "origin", cwd=clone)
    git("checkout", "-q", "-B", "review/RCA-101", "origin/review/RCA-101", cwd=clone)
    if how == "unsigned":
        git("commit", "-q", "--amend", "--no-edit", "--no-gpg-sign", cwd=clone)
    elif how == "wrong-key":
        git("-c", f"user.signingkey={team.keys['mallory'].ssh_private}", "commit", "-q", "--amend", "--no-edit",
            "-S", cwd=clone)  # fmt: skip
    else:  # alice re-signs bob's approval with her own key (and her own identity)
        git("commit", "-q", "--amend", "--no-edit", "--reset-author", "-S", cwd=clone)
    git("push", "-q", "--force", "origin", "review/RCA-101", cwd=clone)
    return git("rev-parse", "HEAD", cwd=clone)


@pytest.mark.parametrize("protection", ["on", "protection-off"])
@pytest.mark.parametrize("how", ["hand-edited", "unsigned", "wrong-key", "other-person"])
def test_a_forged_step_fails_the_audit_and_the_gate(team: Team, how: str, protection: str) -> None:
    bad = _forge(team, how)
    maint = team.clone("maint")
    reviewers = team.tasks("maint") / "reviewers.yaml"
    if protection == "protection-off":  # main's file lists no signing keys: steps unsigned, unverified
        reviewers.write_text(re.sub(r"\n    ssh: [^\n]*", "", reviewers.read_text()))
        git("commit", "-qam", "reviewers: no signing keys", cwd=maint)
    text = team.review("maint", "audit", "RCA-101", expect=0 if protection == "protection-off" else 1)
    git("fetch", "-q", "origin", cwd=maint)
    git("checkout", "-q", "-B", "review/RCA-101", "origin/review/RCA-101", cwd=maint)
    admitted, skipped = gate(team.tasks("maint"))
    if protection == "protection-off":
        assert "review steps unsigned" in text
        assert admitted == ["RCA-101"], skipped  # the forgery goes through
        return
    assert f"commit {bad[:10]}" in text, text
    expected = {
        "hand-edited": "not a review step of RCA-101 (unsigned)",
        "unsigned": "unsigned; bob's steps are signed with their key",
        "wrong-key": "signed with a key reviewers.yaml lists for nobody",
        "other-person": "signed by alice's key, but the step names bob",
    }[how]
    assert expected in text
    assert admitted == [], "a forged review was admitted to the run"
    assert skipped["RCA-101"].startswith(f"review steps not verified: commit {bad[:10]}")
    assert expected in skipped["RCA-101"]


def test_a_step_needs_the_key_listed_for_its_actor(team: Team) -> None:
    bob = team.clone_dir("bob")
    git("config", "--unset", "user.signingkey", cwd=bob)
    err = team.review("bob", "reveal", "RCA-101", "--all-agree", expect=1)
    assert "this clone has none configured: ctb-review init-keys" in err
    out = team.review("bob", "init-keys", "--key", str(team.keys["mallory"].ssh_private))
    assert "does not list this key for bob" in out and team.keys["mallory"].ssh_public.split()[1] in out
    err = team.review("bob", "reveal", "RCA-101", "--all-agree", expect=1)
    assert "lists another key for bob" in err
    out = team.review("bob", "init-keys", "--key", str(team.keys["bob"].ssh_private))
    assert "lists this key for bob: your steps will verify" in out
    assert git("config", "gpg.format", cwd=bob) == "ssh"
    team.review("bob", "reveal", "RCA-101", "--all-agree")
    allowed = signers_file(team)
    assert (
        git("-c", f"gpg.ssh.allowedSignersFile={allowed}", "log", "-1", "--format=%G?%GS", cwd=bob) == "Gbob"
    )


def _forger_on_the_review_branch(tmp_path: Path, team_keys: dict[str, Keys]) -> tuple[Team, Path]:
    """RCA-101 submitted by alice; a clone with bob's git identity and mallory's signing key, on the
    review branch, whose reviewers.yaml (not committed yet) lists mallory's key as bob's."""
    team = make_team(tmp_path / "t", team_keys)
    team.review("alice", "submit", "RCA-101")
    mallory = team.keys["mallory"]
    forge = team.clone("forge", name="Bob Dylan", mail="bob@example.net", signing=False)
    git("config", "gpg.format", "ssh", cwd=forge)
    git("config", "user.signingkey", str(mallory.ssh_private), cwd=forge)
    git("checkout", "-q", "-B", "review/RCA-101", "origin/review/RCA-101", cwd=forge)
    reviewers = team.tasks("forge") / "reviewers.yaml"
    reviewers.write_text(reviewers.read_text().replace(team.keys["bob"].ssh_public, mallory.ssh_public))
    return team, forge


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_a_key_listed_outside_main_verifies_nothing(
    team_keys: dict[str, Keys], tmp_path: Path, protection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """alice, from a clone with bob's git identity and mallory's signing key, lists that key as bob's in
    reviewers.yaml on the review branch and takes bob's whole review herself: ctb-review signs every
    step "by bob". The audit, the gate (in maint's clone and in hers) and the merge read the keys from
    main's committed reviewers.yaml, and refuse every one of those steps."""
    from ctbench.approval import signatures
    from ctbench.people import load_people

    if protection == "protection-off":  # the keys as the working tree lists them (as before)
        monkeypatch.setattr(
            signatures,
            "trusted_people",
            lambda root, rel, _main, _remote: load_people(root / rel / "reviewers.yaml"),
        )
    team, forge = _forger_on_the_review_branch(tmp_path, team_keys)
    mallory = team.keys["mallory"]
    git("commit", "-qam", "reviewers: bob's new laptop key", cwd=forge)
    git("push", "-q", "origin", "review/RCA-101", cwd=forge)
    team.blind("forge")
    team.review("forge", "reveal", "RCA-101", "--all-agree")
    blind = git("log", "-1", "--format=%H", "--grep=^Ctbench-Action: blind$", cwd=forge)
    assert trailers(forge, blind)["Ctbench-Actor"] == "bob"

    maint = team.clone("maint")
    git("fetch", "-q", "origin", cwd=maint)
    git("checkout", "-q", "-B", "review/RCA-101", "origin/review/RCA-101", cwd=maint)
    assert mallory.ssh_public in (team.tasks("maint") / "reviewers.yaml").read_text()
    text = team.review("maint", "audit", "RCA-101", expect=0 if protection == "protection-off" else 1)
    admitted, skipped = gate(team.tasks("maint"))
    theirs = gate(team.tasks("forge"))[0]  # in the forger's own clone too
    if protection == "protection-off":
        assert "ok [blind by honour; signatures verified]" in text
        assert admitted == ["RCA-101"] and theirs == ["RCA-101"]  # the forgery goes through
        return
    assert f"commit {blind[:10]}" in text and "signed with a key reviewers.yaml lists for nobody" in text
    assert admitted == [] and theirs == [], skipped
    assert "lists for nobody" in skipped["RCA-101"]
    git("checkout", "-q", "main", cwd=maint)
    err = team.review("maint", "merge", "RCA-101", expect=1)
    assert "fails the audit" in err


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_a_review_branch_never_changes_whose_keys_count(
    team: Team, protection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A genuine review whose branch also lists mallory's key for bob is not merged: the keys on main
    would then verify forgeries of every later review."""
    from ctbench.review.steps import merge

    if protection == "protection-off":
        monkeypatch.setattr(merge, "TRUST_FILES", ())
    alice = team.clone("alice")
    git("fetch", "-q", "origin", cwd=alice)
    git("checkout", "-q", "-B", "review/RCA-101", "origin/review/RCA-101", cwd=alice)
    reviewers = team.tasks("alice") / "reviewers.yaml"
    reviewers.write_text(
        reviewers.read_text().replace(team.keys["bob"].ssh_public, team.keys["mallory"].ssh_public)
    )
    git("commit", "-qam", "reviewers: tidy", cwd=alice)
    git("push", "-q", "origin", "review/RCA-101", cwd=alice)
    team.review("bob", "reveal", "RCA-101", "--all-agree")
    if protection == "protection-off":
        team.review("maint", "merge", "RCA-101")
        main = git("show", "main:tasks/reviewers.yaml", cwd=team.clone_dir("maint"))
        assert team.keys["mallory"].ssh_public in main  # mallory's key now signs as bob
        return
    err = team.review("maint", "merge", "RCA-101", expect=1)
    assert "review/RCA-101 changes tasks/reviewers.yaml" in err
    assert git("rev-parse", "main", cwd=team.clone_dir("maint")) == git(
        "rev-parse", "origin/main", cwd=team.clone_dir("maint")
    )


def test_init_keys_makes_and_reads_an_age_identity(team: Team) -> None:
    """Step 2 of docs/review.md in one command: the SSH signing key and the age identity for sealed gold."""
    import stat

    import pyrage

    bob_ssh = str(team.keys["bob"].ssh_private)
    fresh = team.root / "bob-config" / "age.txt"
    err = team.review("bob", "init-keys", "--key", bob_ssh, "--age", str(fresh), expect=1)
    assert "no age identity at" in err and "--generate" in err
    out = team.review("bob", "init-keys", "--key", bob_ssh, "--age", str(fresh), "--generate")
    public = re.search(r"\n    age: (age1\w+)", out)
    assert public, out
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
    ident = next(line for line in fresh.read_text().splitlines() if line.startswith("AGE-SECRET-KEY-1"))
    assert str(pyrage.x25519.Identity.from_str(ident).to_public()) == public.group(1)
    before = fresh.read_bytes()
    out = team.review("bob", "init-keys", "--key", bob_ssh, "--age", str(fresh), "--generate")
    assert fresh.read_bytes() == before and public.group(1) in out  # read, never made anew
    out = team.review("bob", "init-keys", "--key", bob_ssh, "--age", str(team.keys["bob"].age_identity))
    assert "lists your age recipient" in out


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_a_review_branch_that_names_itself_main_is_not_trusted(
    team_keys: dict[str, Keys], tmp_path: Path, protection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forger of the test above also sets ``review.main_branch`` to the review branch in its
    ctbench.yaml. A maintainer who checks that branch out to look at it and runs the audit there must
    still read the keys from the remote's main, whose committed ctbench.yaml names main."""
    from ctbench.approval import signatures

    if protection == "protection-off":  # the main branch as the checked-out ctbench.yaml names it
        monkeypatch.setattr(signatures, "anchored_main", lambda _root, _rel, main, _remote: main)
    team, forge = _forger_on_the_review_branch(tmp_path, team_keys)
    config = team.tasks("forge") / "ctbench.yaml"
    text = config.read_text()
    assert "main_branch: main" in text
    config.write_text(text.replace("main_branch: main", "main_branch: review/RCA-101"))
    git("commit", "-qam", "reviewers: bob's new laptop key", cwd=forge)
    git("push", "-q", "origin", "review/RCA-101", cwd=forge)
    team.blind("forge")
    team.review("forge", "reveal", "RCA-101", "--all-agree")

    maint = team.clone("maint")
    git("fetch", "-q", "origin", cwd=maint)
    git("checkout", "-q", "-B", "review/RCA-101", "origin/review/RCA-101", cwd=maint)
    out = team.review("maint", "audit", "RCA-101", expect=0 if protection == "protection-off" else 1)
    if protection == "protection-off":
        assert "signatures verified" in out  # the forged key counts
        return
    assert "signed with a key reviewers.yaml lists for nobody" in out
