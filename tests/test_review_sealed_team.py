"""Sealed stays sealed (issue 26): on a sealed set no git object of any clone shows the gold, at any step.

The team of tests/team_support.py (two authors, two reviewers, a maintainer, with real ssh-keygen
and age keys, every review step signed) works on a set whose gold was sealed before its first
commit. alice writes RCA-102's gold with ``ctb-author`` (a golden action, a new answer), submits RCA-101; maint
assigns bob; bob solves blind from his own clone, alice unseals the gold for him, he reveals and
approves; maint merges. At each step every object of the clone concerned
(``git cat-file --batch-all-objects --batch``) is searched for the gold as strings: the answer lines
(and bob's correct blind answer, which is the gold in other words), the golden commands in every
form a tool would write them next to their device, and the golden actions' reasons. The reveal's
comparison and the blind answer are committed sealed to the authors and maintainers; the audit,
``status`` and the record reader work with the sealed form and decrypt it with a recipient's key.

``protection-off``: the round record is written as before (``ReviewDesk.seals_records`` says no):
the same scan finds the gold on main after the merge.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("pyrage")

from ctbench.approval.records import load_records  # noqa: E402
from ctbench.review.workflow import ReviewDesk  # noqa: E402
from ctbench.sealing import SealError  # noqa: E402
from tests.review_support import RCA_ANSWER, git, trailers  # noqa: E402
from tests.team_support import Keys, Team, all_objects, copy_team, make_keys, make_team  # noqa: E402

pytestmark = pytest.mark.xdist_group("review-team")

NEW_GOLDEN = ("FW_01", "display security-policy rule all", "No other rule lets the user's subnet through.")
RCA_102_GOLD = "GW_01;172.16.1.0/24;static route next hop incorrect"
GOLD_LINES = (
    "CORE_SW_01;GigabitEthernet0/0/24;shutdown",  # RCA-101's gold, as the comparison writes it
    RCA_ANSWER.strip(),  # bob's blind answer: correct, so the gold in other words
    RCA_102_GOLD,
    "FW_01;10.10.10.10;security policy rule does not permit the corresponding user",
)
GOLDEN = (  # (device, command) of every golden action of RCA-101 and RCA-102
    ("CORE_SW_01", "display interface brief"),
    ("CORE_SW_01", "display current-configuration interface GigabitEthernet0/0/24"),
    ("CORE_SW_01", "display ip routing-table"),
    ("FW_01", "display security-policy rule all"),
    ("FW_01", "display security-policy rule name policy-to-dc"),
    ("GW_01", "show ip route"),
    ("GW_01", "show running-config"),
)
REASONS = (
    "The interface carries an explicit shutdown",
    "The static default route via 10.0.24.2 is gone",
    "administratively down with shutdown in its",
    "The only trust-to-untrust permit rule matches",
    NEW_GOLDEN[2],
)


def _golden_pattern(device: str, command: str) -> re.Pattern[bytes]:
    """A golden command next to its device the way a tool writes the pair: ``D: cmd``, ``D 'cmd'``,
    ``[D, cmd]``, YAML ``- - D`` / ``  - cmd``, JSON ``["D", "cmd"]``. The recordings and the blind
    trajectory name the same commands as ``device: D`` + ``command: cmd`` fields, which say
    nothing about which are golden, and do not match."""
    return re.compile(re.escape(device.encode()) + rb"[\s:,'\"\[\]-]{1,12}" + re.escape(command.encode()))


def leaks(data: bytes) -> list[str]:
    """The gold strings found in ``data``."""
    found = [line for line in GOLD_LINES if line.encode() in data]
    found += [f"{d}: {c}" for d, c in GOLDEN if _golden_pattern(d, c).search(data)]
    found += [r for r in REASONS if r.encode() in data]
    return found


def clone_leaks(clone: Path) -> list[str]:
    """Gold in any object of the clone's git database, or in any file of its working tree."""
    objects = all_objects(clone)
    assert objects.count(b" commit ") >= 1, "no git objects read"
    files = b"".join(
        p.read_bytes() for p in clone.rglob("*") if p.is_file() and ".git" not in p.relative_to(clone).parts
    )
    return leaks(objects + files)


@pytest.fixture(scope="session")
def team_keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Keys]:
    return make_keys(tmp_path_factory.mktemp("team-keys"))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, team_keys: dict[str, Keys]) -> Team:
    """A sealed set on the remote; alice has added a golden action to RCA-102 and rewritten its answer."""
    team = make_team(tmp_path_factory.mktemp("team-sealed") / "t", team_keys, sealed=True)
    device, command, why = NEW_GOLDEN
    out = team.author("alice", "add-golden", "RCA-102", "--device", device, "--command", command,
                      "--why", why, identity=True)  # fmt: skip
    assert "committed" in out, out
    out = team.author("alice", "set-answer", "RCA-102", "--rca", RCA_102_GOLD, identity=True)
    assert "committed" in out, out
    git("push", "-q", "origin", "main", cwd=team.clone_dir("alice"))
    return team


@pytest.fixture
def team(written: Team, tmp_path: Path) -> Team:
    return copy_team(written, tmp_path / "t")


def test_the_scan_finds_gold_where_it_is() -> None:
    """The search itself: each form a tool has written gold in is found; the visible forms are not."""
    assert leaks(b"gold_lines:\n- CORE_SW_01;GigabitEthernet0/0/24;shutdown\n")
    assert leaks(b"golden_missed:\n- - GW_01\n  - show running-config\n")
    assert leaks(b'{"golden_missed": [["GW_01", "show running-config"]]}')
    assert leaks(b"Golden actions the reviewer did not run: `GW_01: show running-config`")
    assert leaks(b"RCA-101: golden action CORE_SW_01 'display ip routing-table'")
    assert not leaks(b"- device: GW_01\n    command: show running-config\n    file: recordings/x.txt\n")
    assert not leaks(b'{"device": "GW_01", "canonical": "show running-config", "command": "sh run"}')


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_no_clone_holds_plain_gold_at_any_step(
    team: Team, protection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if protection == "protection-off":  # the round record as it was: reveal and blind answer in plain text
        monkeypatch.setattr(ReviewDesk, "seals_records", lambda _self, _ref: False)
    alice = team.clone_dir("alice")
    subjects = git("log", "--format=%s", "main", cwd=alice)
    assert "RCA-102: added a golden action (sealed)" in subjects
    assert "RCA-102: set the root causes (sealed)" in subjects
    assert clone_leaks(alice) == []  # the author's clone: plain gold only in her head

    team.review("alice", "submit", "RCA-101")
    team.review("maint", "assign", "RCA-101", "--reviewer", "bob", "--apply")
    team.review("bob", "checkout", "RCA-101")
    bob = team.clone_dir("bob")
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=bob) == "review/RCA-101"
    assert clone_leaks(bob) == [], "gold readable in the reviewer's clone before his blind answer"
    out = team.blind("bob")
    assert "blind answer for RCA-101 committed" in out
    after_blind = clone_leaks(bob)

    out = team.review("alice", "unseal", "RCA-101", "--for", "bob")
    assert "gold unsealed for bob" in out
    out = team.review("bob", "reveal", "RCA-101", "--all-agree")
    assert "exact match: yes" in out
    assert "CORE_SW_01;GigabitEthernet0/0/24;shutdown" in out  # the reviewer's own view, on screen
    pr = team.root / "pr.md"
    team.review("bob", "pr", "RCA-101", "--out", str(pr), "--no-push")
    pr_text = pr.read_bytes()
    assert b"The gold is sealed: 1 gold line(s), 1 blind line(s), 1 in both" in pr_text
    team.review("maint", "merge", "RCA-101")
    fresh = team.root / "fresh"
    git("clone", "-q", str(team.remote), str(fresh), cwd=team.root)
    on_main = clone_leaks(fresh)
    maint = clone_leaks(team.clone_dir("maint"))

    if protection == "protection-off":
        assert RCA_ANSWER.strip() in after_blind  # the blind answer, in plain text
        assert "CORE_SW_01;GigabitEthernet0/0/24;shutdown" in on_main  # the comparison's gold lines
        return
    assert after_blind == [], "bob's blind answer (the gold, when right) is in plain text"
    assert leaks(pr_text) == [], "gold in the pull-request description"
    assert on_main == [], "gold in a git object on main after the merge"
    assert maint == []

    # everything that reads comparisons works with the sealed form
    out = team.review("maint", "audit", "RCA-101")
    assert "RCA-101 (approved): ok [blind by seal; signatures verified]" in out
    assert "round 1: the sealed blind answer and comparison open with your key and match their sha256" in out
    out = team.review("bob", "audit", "RCA-101")  # his own answer's recipient, not the comparison's
    assert "round 1: the sealed blind answer opens with your key and matches its sha256" in out
    text = team.review("maint", "status", "--json")
    status = json.loads(text[text.index("{") : text.rindex("}") + 1])
    assert status["total"]["blind_by_seal"] == 1
    assert "blind accuracy" in team.review("maint", "status").lower()  # the tables, statistics included
    # the review yields from the sealed records (exit 1: alice's RCA-102 edits left it invalid)
    stats = team.author("maint", "stats", identity=True, expect=1)
    assert re.search(r"rca\s*│\s*1\s*│\s*1\s*│\s*0", stats), stats
    records = load_records(team.tasks("maint") / "rca" / "RCA-101")
    cmp_ = records[-1].comparison
    assert cmp_ is not None and cmp_.sealed is not None and cmp_.gold_lines == []
    assert cmp_.counts()["gold_lines"] == 1 and cmp_.counts()["both"] == 1 and cmp_.exact
    assert sorted(cmp_.sealed.recipients) == ["alice", "maint"]
    plain = cmp_.opened(team.keys["maint"].age_identity, "round-01")
    assert plain.gold_lines == ["CORE_SW_01;GigabitEthernet0/0/24;shutdown"]
    assert ["CORE_SW_01", "display ip routing-table"] in plain.golden_missed
    with pytest.raises(SealError, match="not one of its recipients"):
        cmp_.opened(team.keys["dave"].age_identity, "round-01")
    blind = records[0].blind
    assert blind is not None and blind.answer == "" and blind.answer_intact()
    assert blind.plain_answer(team.keys["alice"].age_identity, "round-01") == RCA_ANSWER
    assert blind.plain_answer(team.keys["bob"].age_identity, "round-01") == RCA_ANSWER


@pytest.mark.parametrize("protection", ["on", "protection-off"])
@pytest.mark.parametrize("how", ["unsigned", "other-person"])
def test_a_forged_unseal_step_fails_the_audit(
    team: Team, how: str, protection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """alice's unseal for bob re-committed unsigned, or re-signed by maint in her name: the audit
    verifies seal and unseal steps like every other step, and names the commit."""
    from ctbench.approval import signatures

    if protection == "protection-off":  # only the commits that wrote reviews/ are verified (as before)
        monkeypatch.setattr(signatures, "_SEAL_ACTIONS", set())
    team.review("alice", "submit", "RCA-101")
    team.review("maint", "assign", "RCA-101", "--reviewer", "bob", "--apply")
    team.blind("bob")
    team.review("alice", "unseal", "RCA-101", "--for", "bob")
    alice = team.clone_dir("alice")
    assert trailers(alice)["Ctbench-Action"] == "unseal"
    if how == "unsigned":
        git("commit", "-q", "--amend", "--no-edit", "--no-gpg-sign", cwd=alice)
    else:
        key = str(team.keys["maint"].ssh_private)
        git("-c", f"user.signingkey={key}", "commit", "-q", "--amend", "--no-edit", "-S", cwd=alice)
    git("push", "-q", "--force", "origin", "review/RCA-101", cwd=alice)
    bad = git("rev-parse", "HEAD", cwd=alice)
    text = team.review("maint", "audit", "RCA-101", expect=0 if protection == "protection-off" else 1)
    if protection == "protection-off":
        assert bad[:10] not in text
        return
    expected = {
        "unsigned": "unsigned; alice's steps are signed with their key",
        "other-person": "signed by maint's key, but the step names alice",
    }[how]
    assert f"commit {bad[:10]} (review(RCA-101): unseal the gold for bob): {expected}" in text


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_the_pull_request_quotes_no_validation_message_of_a_sealed_task(
    team: Team, protection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A validation error about the sealed gold names the golden command it checked; the pull-request
    description lists it by file and code only."""
    from ctbench.model import GoldenAction
    from ctbench.review import prdesc
    from ctbench.store import TaskSet

    if protection == "protection-off":  # every finding rendered in full, as for a plain task
        monkeypatch.setattr(prdesc, "finding_line", lambda f, sealed: f"- `{f.render()}`")
    team.review("alice", "submit", "RCA-101")
    ts = TaskSet.open(team.tasks("alice"), identity=team.keys["alice"].age_identity)
    ref = ts.ref("RCA-101")
    hidden = ts.load_hidden(ref)
    hidden.golden_actions.append(
        GoldenAction(device="CORE_SW_01", command="display vlan", why="VLAN 24 is up.")
    )
    ts.save_hidden_model(ref.path, hidden)
    git("commit", "-qam", "RCA-101: more evidence (sealed)", cwd=team.clone_dir("alice"))
    pr = team.root / "pr.md"
    team.review("alice", "pr", "RCA-101", "--out", str(pr), "--no-push")
    text = pr.read_text()
    assert "❌ fails" in text and "error[golden-recording]" in text, text
    quoted = _golden_pattern("CORE_SW_01", "display vlan").search(text.encode())
    if protection == "protection-off":
        assert quoted, text
        return
    assert not quoted and "display vlan" not in text and leaks(text.encode()) == []
    assert "messages not shown: the gold is sealed" in text
