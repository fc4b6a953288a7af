"""A comment that quotes sealed gold is refused before it is committed (issue 26, sealed stays sealed).

On a sealed set a reviewer's verdict comment, a disagreement note, an author's reply and a discard
reason are committed in plain text (the round record, the commit body, the provenance). The
adversary writes the gold into one the way a person would slip it past a string match: other case,
other spacing and punctuation, the interface abbreviated as the scorer accepts it (``GE``, ``Gi``,
``GigabitEthernet 0/0/24``), the label by a taxonomy alias, the fields reordered in prose.

The first tests read comments with the real :class:`~ctbench.review.goldquote.GoldQuotes` over the
review fixture's gold (RCA-101's root cause, PATH-101's path). The last one is the whole thing on
the team's sealed set of tests/team_support.py (real ssh-keygen keys, signed steps, a bare
remote): bob's disagreement quoting the gold is refused with one line naming the field, and no git
object of the remote holds it; ``protection-off`` (the check does nothing, as before) lets the
same comment reach the remote.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctbench.model import Family
from ctbench.review.goldquote import GoldQuotes, iface_key
from ctbench.store import TaskSet
from tests.review_support import FIXTURE, git

QUOTES_OF_RCA_101 = [
    "CORE_SW_01;GigabitEthernet0/0/24;shutdown",
    "core_sw_01 ; gigabitethernet0/0/24 ; SHUTDOWN",
    "The answer should be CORE SW 01, port GE0/0/24, which is shut down.",
    "Gi 0/0/24 on core-sw-01: admin down",
    "CORE_SW_01\tGE0/0/24\n\n  Shut-Down",
    "Interface administratively down: GigabitEthernet 0/0/24 of CORESW01 (see the config)",
]
INNOCENT_FOR_RCA_101 = [
    "",
    "CORE_SW_01's recording of display interface brief is truncated; record it again.",
    "The statement should say that PC_01 is in VLAN 10.",
    "A shutdown on FW_01 GE1/0/1 would fit the symptoms too; the recordings do not rule it out.",
    "GE0/0/24 is mentioned in the statement's recordings but the metadata says chain length 3.",
]
QUOTES_OF_PATH_101 = [
    "PC_01_eth0 -> ACC_SW_01_GE1/0/48 -> CORE_SW_01_GE0/0/24 -> FW_01_GE1/0/2 -> GW_01_Gi2 -> PE_01_ge-0/0/2 -> SRV_01",
    "pc 01 eth 0, then acc-sw-01 gigabitethernet1/0/48, core_sw_01 gi0/0/24, fw_01 g1/0/2, gw_01 "
    "GigabitEthernet2, pe_01 ge-0/0/2 and finally SRV_01",
]


@pytest.fixture(scope="module")
def fixture_set() -> TaskSet:
    return TaskSet.open(FIXTURE)


def _quotes(ts: TaskSet, task_id: str) -> GoldQuotes:
    ref = ts.ref(task_id)
    task = ts.load_task(ref)
    nodes = [d.name for d in ts.network(task.network).devices]
    return GoldQuotes(task.family, ts.load_hidden(ref), ts.taxonomy, nodes)


def test_interface_abbreviations_read_as_one_port() -> None:
    keys = {
        iface_key(n) for n in ("GigabitEthernet0/0/24", "GE0/0/24", "Gi 0/0/24", "gigabitethernet 0/0/24")
    }
    assert keys == {"g0/0/24"}
    assert iface_key("GigabitEthernet0/0/2") != iface_key("GigabitEthernet0/0/24")


@pytest.mark.parametrize("text", QUOTES_OF_RCA_101)
def test_a_root_cause_is_found_however_it_is_spelt(fixture_set: TaskSet, text: str) -> None:
    assert _quotes(fixture_set, "RCA-101").quoted(text) == "root cause 1"


@pytest.mark.parametrize("text", INNOCENT_FOR_RCA_101)
def test_a_comment_that_names_a_node_or_a_port_alone_passes(fixture_set: TaskSet, text: str) -> None:
    assert _quotes(fixture_set, "RCA-101").quoted(text) is None


@pytest.mark.parametrize("text", QUOTES_OF_PATH_101)
def test_a_path_is_found_in_prose_and_in_the_answer_format(fixture_set: TaskSet, text: str) -> None:
    q = _quotes(fixture_set, "PATH-101")
    assert q.family == Family.PATH
    assert q.quoted(text) == "path 1"
    assert q.quoted("PC_01 reaches SRV_01 through the firewall FW_01; the PE_01 recording is old.") is None


pyrage = pytest.importorskip("pyrage")


@pytest.mark.xdist_group("review-team")
@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_a_disagreement_quoting_sealed_gold_is_refused_before_commit(
    tmp_path: Path, protection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctbench.review.workflow import ReviewDesk
    from tests.team_support import all_objects, make_keys, make_team

    if protection == "protection-off":  # comments committed as written (before this change)
        monkeypatch.setattr(ReviewDesk, "refuse_gold_quotes", lambda *_a, **_k: None)
    team = make_team(tmp_path / "t", make_keys(tmp_path / "keys", ("alice", "carol", "bob", "dave", "maint")),
                     sealed=True)  # fmt: skip
    if protection == "on":  # the author's note at submit is committed too
        out = team.review("alice", "submit", "RCA-101", "--why", "Root cause: core sw 01 GE0/0/24 admin down",
                          expect=1)  # fmt: skip
        assert "--why: the text quotes the sealed gold (root cause 1 of RCA-101)" in out
        assert "review/RCA-101" not in git("branch", cwd=team.remote)
    team.review("alice", "submit", "RCA-101")
    team.review("maint", "assign", "RCA-101", "--reviewer", "bob", "--apply")
    team.blind("bob")
    team.review("alice", "unseal", "RCA-101", "--for", "bob")
    sneaky = "Completeness: it is really Gi 0/0/24 on core-sw-01 (admin down), not just a shutdown elsewhere."
    args = (
        "reveal",
        "RCA-101",
        "--agree",
        "solvability",
        "golden",
        "metadata",
        "--disagree",
        "completeness",
        sneaky,
    )
    if protection == "protection-off":
        team.review("bob", *args)
        assert sneaky.encode() in all_objects(team.remote)
        return
    out = team.review("bob", *args, expect=1)
    line = next(x for x in out.splitlines() if "quotes the sealed gold" in x)
    assert line.startswith(
        "ctb-review: --disagree answer_completeness: the text quotes the sealed gold (root cause 1"
    )
    assert "CORE_SW_01" not in out.split("quotes the sealed gold", 1)[1]  # the refusal repeats no gold
    assert sneaky.encode() not in all_objects(team.remote)
    assert sneaky.encode() not in all_objects(team.clone_dir("bob"))
    # said without the answer, the same disagreement goes through, and the author cannot quote it back
    team.review("bob", *args[:-1], "The answer needs the port's full name, as the recordings spell it.")
    out = team.review("alice", "respond", "RCA-101", "--rebut", "completeness",
                      "It is CORE_SW_01;GigabitEthernet0/0/24;shutdown as written.", expect=1)  # fmt: skip
    assert "--rebut answer_completeness: the text quotes the sealed gold (root cause 1" in out
    team.review("alice", "respond", "RCA-101", "--rebut", "completeness", "The full name is already there.")
    assert b"GigabitEthernet0/0/24;shutdown as written" not in all_objects(team.remote)
    assert "round 2" in git("log", "-1", "--format=%s", "review/RCA-101", cwd=team.remote)


@pytest.mark.xdist_group("review-team")
def test_the_reveal_app_refuses_a_comment_quoting_sealed_gold_and_lets_it_be_fixed(tmp_path: Path) -> None:
    """In the app (``App.run_test``), bob's disagreement quoting the gold is not recorded: the screen
    says why and stays; rewritten without the answer, it is recorded."""
    import asyncio

    from ctbench.approval.records import load_records
    from ctbench.approval.states import Criterion, Verdict
    from ctbench.review.blind_app import BlindApp
    from ctbench.review.reveal_screen import RevealScreen
    from ctbench.review.workflow import ReviewDesk
    from tests.team_support import all_objects, make_keys, make_team

    team = make_team(tmp_path / "t", make_keys(tmp_path / "keys", ("alice", "carol", "bob", "dave", "maint")),
                     sealed=True)  # fmt: skip
    team.review("alice", "submit", "RCA-101")
    team.review("maint", "assign", "RCA-101", "--reviewer", "bob", "--apply")
    team.blind("bob")
    team.review("alice", "unseal", "RCA-101", "--for", "bob")
    tasks = team.tasks("bob")
    desk = ReviewDesk(TaskSet.open(tasks, identity=team.keys["bob"].age_identity), push=False)
    app = BlindApp(desk, "RCA-101", "bob", blink=False, reveal_only=True)

    async def until(pilot: object, cond: object) -> None:
        for _ in range(1500):
            if cond():  # type: ignore[operator]
                return
            await pilot.pause(0.02)  # type: ignore[attr-defined]
        raise AssertionError("timed out waiting for the app")

    def outcome() -> str:
        return " ".join(str(w.render()) for w in app.screen.query("#outcome"))

    async def run() -> None:
        async with app.run_test(size=(130, 40)) as pilot:
            await until(
                pilot, lambda: isinstance(app.screen, RevealScreen) and app.screen.revealed is not None
            )
            for _ in range(3):
                await pilot.press("a", "tab", "tab")
            await pilot.press("d", "ctrl+s")  # a disagreement without a comment: the cursor goes to it
            await pilot.pause(0.05)
            assert app.focused is not None and app.focused.id == "comment-metadata_correctness"
            await pilot.press(*"really Gi 0/0/24 on core-sw-01, admin down", "ctrl+s")
            await until(pilot, lambda: "Not recorded" in outcome())
            assert "quotes the sealed gold (root cause 1 of RCA-101)" in outcome()
            verdicts = load_records(tasks / "rca" / "RCA-101")[-1].criteria
            assert verdicts[Criterion.METADATA_CORRECTNESS].verdict == Verdict.OPEN
            await pilot.press(*["backspace"] * 60, *"the chain length is 3 hops", "ctrl+s")
            await until(pilot, lambda: "needs_revision" in outcome())
            await pilot.pause(0.1)
            await app.action_quit()

    asyncio.run(run())
    rec = load_records(tasks / "rca" / "RCA-101")[-1]
    assert rec.criteria[Criterion.METADATA_CORRECTNESS].thread[-1].text == "the chain length is 3 hops"
    assert b"on core-sw-01" not in all_objects(team.clone_dir("bob"))
