"""Round 2 of a sealed task, with a new reviewer (issue 26): blind by seal, and nobody else gets in.

The team of tests/team_support.py (real ssh-keygen and age keys, every step signed, a bare remote)
works on a sealed set. Round 1: bob solves RCA-101 blind, alice unseals the gold for him, he
reveals and disagrees on completeness; alice rebuts and the task comes back as round 2. maint
hands round 2 to dave. Round 1's record is in dave's clone, but sealed on every count: the
comparison and bob's answer to the authors and maintainers (and bob), bob's trajectory likewise,
the part hashes keyed, the comments checked. So dave may solve blind: he answers, alice unseals
for him, he reveals and approves, maint merges, and the audit proves both rounds blind by seal
with every signature verified. Before his blind commit no git object or file of dave's clone
holds the gold.

Other identities are still refused: bob (blind once, and round 2 is dave's), alice (an author),
mallory (an identity nobody listed), ``--as dave`` from bob's clone, and an unseal for dave before
his blind answer.

``protection-off``: round 1 was sealed as before keyed hashes (no ``hash_key``), so its record
holds plain sha256 hashes of the gold that a guess can be checked against: dave is refused at
assignment, naming them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyrage")

from ctbench import sealing  # noqa: E402
from ctbench.approval.records import load_records  # noqa: E402
from tests.review_support import git  # noqa: E402
from tests.team_support import Keys, make_keys, make_team  # noqa: E402
from tests.test_review_sealed_team import clone_leaks  # noqa: E402

pytestmark = pytest.mark.xdist_group("review-team")


@pytest.fixture(scope="module")
def team_keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Keys]:
    return make_keys(tmp_path_factory.mktemp("round2-keys"))


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_a_new_reviewer_completes_round_two_of_a_sealed_task(
    tmp_path: Path, team_keys: dict[str, Keys], protection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if protection == "protection-off":  # sealed as before keyed hashes: round 1's hashes are plain
        monkeypatch.setattr(sealing, "with_hash_key", lambda plain, _where: plain)
    team = make_team(tmp_path / "t", team_keys, sealed=True)
    team.review("alice", "submit", "RCA-101")
    team.review("maint", "assign", "RCA-101", "--reviewer", "bob", "--apply")
    team.blind("bob")
    team.review("alice", "unseal", "RCA-101", "--for", "bob")
    team.review("bob", "reveal", "RCA-101", "--agree", "solvability", "golden", "metadata",
                "--disagree", "completeness", "The statement should ask for the port's full name.")  # fmt: skip
    team.review("alice", "respond", "RCA-101", "--rebut", "completeness", "The parser takes short names.")
    bob_tasks = team.tasks("bob")
    git("pull", "-q", "origin", "review/RCA-101", cwd=team.clone_dir("bob"))
    reviews = bob_tasks / "rca" / "RCA-101" / "reviews"
    if protection == "on":  # bob's trajectory is sealed like his answer
        assert (reviews / "round-01.blind.jsonl.age").is_file()
        assert not (reviews / "round-01.blind.jsonl").exists()

    if protection == "protection-off":
        out = team.review("maint", "assign", "RCA-101", "--reviewer", "dave", "--apply", expect=1)
        assert "plain sha256 hashes of its gold" in out and "dave could read it" in out
        return
    out = team.review("maint", "assign", "RCA-101", "--reviewer", "dave", "--apply")
    team.review("dave", "checkout", "RCA-101")
    dave = team.clone_dir("dave")
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=dave) == "review/RCA-101"
    assert clone_leaks(dave) == [], "gold readable in dave's clone before his blind answer"

    # other identities are refused before anything is committed
    tip = git("rev-parse", "review/RCA-101", cwd=team.remote)
    assert "round 2 of RCA-101 is assigned to dave, not bob" in team.blind("bob", expect=1)
    assert "round 2 of RCA-101 is assigned to dave, not carol" in team.blind("carol", expect=1)
    assert "reviewed by dave, not bob" in team.review("bob", "reveal", "RCA-101", "--all-agree", expect=1)
    assert "alice is an author of RCA-101" in team.blind("alice", expect=1)
    team.clone("mallory")
    assert "mallory <mallory@example.net> is not a person in" in team.blind("mallory", expect=1)
    out = team.blind("bob", "RCA-101", "--as", "dave", expect=1)
    assert "you are bob (git identity Bob Dylan <bob@example.net>), not dave" in out
    out = team.review("alice", "unseal", "RCA-101", "--for", "dave", expect=1)
    assert "no blind commit by dave" in out
    assert git("rev-parse", "review/RCA-101", cwd=team.remote) == tip

    # dave, the reviewer of round 2, completes it
    assert "blind answer for RCA-101 committed" in team.blind("dave")
    team.review("alice", "unseal", "RCA-101", "--for", "dave")
    out = team.review("dave", "reveal", "RCA-101", "--all-agree")
    assert "exact match: yes" in out
    team.review("maint", "merge", "RCA-101")
    out = team.review("maint", "audit", "RCA-101")
    assert "RCA-101 (approved): ok [blind by seal; signatures verified]" in out
    assert "round 2: blind answer by dave committed" in out
    records = load_records(team.tasks("maint") / "rca" / "RCA-101")
    assert [r.reviewer for r in records] == ["bob", "dave"] and records[-1].outcome == "approved"
