"""One person, one id (issue 26): the acting person comes from their git identity, never from a claim.

A team of five (tests/team_support.py) works from their own clones of one bare remote. The checks an
adversary would try: alice naming herself bob with ``--as``, a clone whose identity nobody listed,
and an author recorded the old way (``Alice Liddell <alice@example.net>``) trying to review her own
task. Each refusal is shown to be the identity mapping's doing: with the mapping bypassed (the
``protection-off`` cases feed the claimed name straight in, as ctb-review did before), the same
attack goes through.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctbench import people as people_mod
from ctbench.people import IdentityError, acting_person, load_people, people_of
from ctbench.store import TaskSet
from ctbench.yamlio import load_document
from tests.review_support import git, trailers
from tests.team_support import Keys, Team, all_objects, copy_team, make_keys, make_team

pytestmark = pytest.mark.xdist_group("review-team")


@pytest.fixture(scope="session")
def team_keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Keys]:
    return make_keys(tmp_path_factory.mktemp("team-keys"))


@pytest.fixture(scope="module")
def team_template(tmp_path_factory: pytest.TempPathFactory, team_keys: dict[str, Keys]) -> Team:
    return make_team(tmp_path_factory.mktemp("team-identity") / "t", team_keys, ssh=False)


@pytest.fixture
def team(team_template: Team, tmp_path: Path) -> Team:
    return copy_team(team_template, tmp_path / "t")


def test_each_clone_acts_as_its_person_and_records_ids(team: Team) -> None:
    out = team.review("alice", "submit", "RCA-101")
    assert "submitted for review" in out
    alice = team.clone_dir("alice")
    assert git("log", "-1", "--format=%an <%ae>", cwd=alice) == "Alice Liddell <alice@example.net>"
    assert trailers(alice)["Ctbench-Author"] == "alice"
    rec = load_document(team.tasks("alice") / "rca" / "RCA-101" / "reviews" / "round-01.yaml")
    assert list(rec["authors"]) == ["alice"]
    team.blind("bob")
    bob = team.clone_dir("bob")
    assert trailers(bob)["Ctbench-Reviewer"] == "bob"
    assert git("log", "-1", "--format=%ae", cwd=bob) == "bob@example.net"


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_as_may_only_name_yourself(team: Team, protection: str, monkeypatch: pytest.MonkeyPatch) -> None:
    alice = team.clone("alice")
    if protection == "protection-off":  # the rule before identities: the claimed name decides
        monkeypatch.setattr(
            people_mod, "acting_person", lambda _people, _cwd, claimed=None: claimed or "alice"
        )
    team.review("alice", "submit", "RCA-101")
    args = ("blind", "RCA-101", "--as", "bob", "--answer", str(team.answer))
    if protection == "protection-off":
        team.review("alice", *args)
        assert trailers(alice)["Ctbench-Reviewer"] == "bob"  # alice's commit, in bob's name
        return
    with pytest.raises(IdentityError, match="you are alice .* not bob"):
        acting_person(people_of(team.tasks("alice")), alice, "bob")
    err = team.review("alice", *args, expect=1)
    assert "you are alice (git identity Alice Liddell <alice@example.net>), not bob" in err
    assert "may only name yourself" in err
    err = team.review("alice", "merge", "RCA-101", "--as", "maint", expect=1)
    assert "not maint" in err
    assert trailers(alice, "origin/review/RCA-101")["Ctbench-Action"] == "submit"


def test_an_unlisted_identity_is_refused_with_the_line_to_add(team: Team) -> None:
    team.clone("zed", name="Zed Stranger", mail="zed@elsewhere.org", signing=False)
    err = team.review("zed", "submit", "RCA-101", expect=1)
    assert "your git identity Zed Stranger <zed@elsewhere.org> is not a person in" in err
    assert "add it to your entry under `people:`" in err
    assert "`- {id: zed, names: [Zed Stranger], emails: [zed@elsewhere.org]}`" in err
    # a listed name with somebody else's email is not that person either
    team.clone("fake", name="Bob Dylan", mail="mallory@elsewhere.org", signing=False)
    err = team.review("fake", "submit", "RCA-101", expect=1)
    assert "is not a person in" in err


@pytest.mark.parametrize("task_id", ["RCA-101", "RCA-102"])  # author recorded by id / as "Name <email>"
def test_an_author_can_never_review_their_own_task(team: Team, task_id: str) -> None:
    team.clone("alice")
    raw = load_document(team.tasks("alice") / "rca" / task_id / "task.yaml")["authors"]
    assert raw[0] == ("alice" if task_id == "RCA-101" else "Alice Liddell <alice@example.net>")
    team.review("alice", "submit", task_id)
    team.review("maint", "assign", "--as", "maint")
    err = team.review("maint", "assign", task_id, "--reviewer", "alice", "--apply", expect=1)
    assert f"alice is an author of {task_id}" in err
    err = team.blind("alice", task_id, expect=1)
    assert f"alice is an author of {task_id}" in err
    err = team.review("alice", "reveal", task_id, "--all-agree", expect=1)
    assert "author" in err


def test_legacy_authors_map_to_ids_for_queue_and_respond(team: Team) -> None:
    team.clone("maint")
    people = load_people(team.tasks("maint") / "reviewers.yaml")
    assert people.author_ids(["Alice Liddell <alice@example.net>", "alice", "unknown <u@x>"]) == [
        "alice",
        "unknown <u@x>",
    ]
    team.review("alice", "submit", "RCA-102")
    team.blind("bob", "RCA-102")
    team.review(
        "bob",
        "reveal",
        "RCA-102",
        "--agree",
        "solvability",
        "completeness",
        "golden",
        "--disagree",
        "metadata",
        "the chain is 3 long",
    )
    assert "RCA-102" in team.review("alice", "queue", "alice")
    out = team.review("alice", "respond", "RCA-102", "--rebut", "metadata", "it is 2 long")
    assert "resubmitted" in out


def test_ctb_author_records_the_author_by_id(team: Team) -> None:
    stmt = team.root / "stmt.txt"
    stmt.write_text("Users in VLAN 24 lost the internet. Answer node;object;root-cause.\n")
    team.author(
        "carol",
        "new",
        "--family",
        "rca",
        "--id",
        "RCA-150",
        "--network",
        "campus-lab",
        "--statement-file",
        str(stmt),
    )
    task = load_document(team.tasks("carol") / "rca" / "RCA-150" / "task.yaml")
    assert list(task["authors"]) == ["carol"]
    # everyone in reviewers.yaml has an age recipient: a new task is sealed by default
    folder = team.tasks("carol") / "rca" / "RCA-150"
    assert (folder / "hidden.yaml.age").is_file() and not (folder / "hidden.yaml").exists()
    reviewers = team.tasks("carol") / "reviewers.yaml"
    assert TaskSet.open(team.tasks("carol")).seals_new_tasks()
    text = reviewers.read_text()
    reviewers.write_text(re.sub(r"\n    age: [^\n]*", "", text, count=1))  # one person without a recipient
    assert not TaskSet.open(team.tasks("carol")).seals_new_tasks()
    reviewers.write_text(text)
    assert (
        git(
            "log", "-1", "--format=%an|%(trailers:key=Ctbench-Author,valueonly)", cwd=team.clone_dir("carol")
        ).strip()
        == "Carol Danvers|carol"
    )
    team.clone("zed", name="Zed Stranger", mail="zed@elsewhere.org", signing=False)
    err = team.author(
        "zed",
        "new",
        "--family",
        "rca",
        "--id",
        "RCA-151",
        "--network",
        "campus-lab",
        "--statement-file",
        str(stmt),
        expect=1,
    )
    assert "not a person in" in err and "people:" in err
    err = team.author(
        "carol",
        "new",
        "--family",
        "rca",
        "--id",
        "RCA-152",
        "--network",
        "campus-lab",
        "--statement-file",
        str(stmt),
        "--author",
        "alice",
        expect=1,
    )
    assert "you are carol" in err


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_a_sealed_tasks_commit_messages_never_hold_its_gold(
    team: Team, protection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """carol writes a sealed task's gold with ctb-author; bob's clone of main holds it in no git object."""
    import contextlib
    import io

    from ctbench.authoring import saving
    from ctbench.authoring.cli import main as author_main

    if protection == "protection-off":  # commit notes as they were: the gold quoted in the message
        monkeypatch.setattr(saving, "sealed_note", lambda text: text)
    carol = team.clone("carol")
    monkeypatch.setenv("CTBENCH_AGE_IDENTITY", str(team.keys["carol"].age_identity))
    stmt = team.root / "stmt.txt"
    stmt.write_text("Users in VLAN 24 lost the internet. Answer node;object;root-cause.\n")
    gold = "CORE_SW_01;GigabitEthernet0/0/24;shutdown"
    for args in (
        [
            "new",
            "--family",
            "rca",
            "--id",
            "RCA-160",
            "--network",
            "campus-lab",
            "--statement-file",
            str(stmt),
        ],
        ["set-answer", "RCA-160", "--rca", gold],
    ):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            assert author_main(["--tasks", str(team.tasks("carol")), *args]) == 0, out.getvalue()
    assert (team.tasks("carol") / "rca" / "RCA-160" / "hidden.yaml.age").is_file()
    git("push", "-q", "origin", "main", cwd=carol)
    bob = team.clone("bob")
    objects = all_objects(bob)
    assert b"RCA-160" in objects  # the task is there, sealed
    if protection == "protection-off":
        assert gold.encode() in objects
        return
    assert gold.encode() not in objects, "the gold answer line is readable in bob's clone"
    assert "RCA-160: set the root causes (sealed)" in git("log", "--format=%s", "main", cwd=bob)


@pytest.mark.parametrize("protection", ["on", "protection-off"])
@pytest.mark.parametrize("task_id", ["RCA-101", "RCA-102"])  # author recorded by id / as "Name <email>"
def test_self_review_is_refused_at_submit(
    team: Team, task_id: str, protection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """alice submits her own task asking for herself (by id, by git name) as its reviewer: refused, nothing written."""
    from ctbench.review.steps import submit

    if protection == "protection-off":  # any requested name is taken as it is
        monkeypatch.setattr(submit, "_requested_reviewer", lambda _desk, _id, _task, name: name)
    alice = team.clone("alice")
    before = git("ls-remote", str(team.remote), cwd=alice)
    for name in ("alice", "Alice Liddell"):
        args = ("submit", task_id, "--reviewer", name)
        if protection == "protection-off":
            team.review("alice", *args)
            rec = load_document(team.tasks("alice") / "rca" / task_id / "reviews" / "round-01.yaml")
            assert rec["reviewer"] == name  # the author is her own reviewer
            return
        err = team.review("alice", *args, expect=1)
        assert f"alice is an author of {task_id} and cannot review it" in err
    assert git("ls-remote", str(team.remote), cwd=alice) == before  # no branch, no commit pushed
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=alice) == "main"
    assert not git("branch", "--list", f"review/{task_id}", cwd=alice)
    err = team.review("alice", "submit", task_id, "--reviewer", "zed", expect=1)
    assert "zed is not a reviewer" in err
    team.review("alice", "submit", task_id, "--reviewer", "Bob Dylan")
    rec = load_document(team.tasks("alice") / "rca" / task_id / "reviews" / "round-01.yaml")
    assert rec["reviewer"] == "bob" and trailers(alice)["Ctbench-Reviewer"] == "bob"
    team.blind("bob", task_id)
    assert trailers(team.clone_dir("bob"))["Ctbench-Action"] == "blind"
