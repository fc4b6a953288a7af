"""Pure parts of the review workflow: state machine, criteria, content hashes, records, statistics, assignment."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ctbench.approval.hashes import (
    CRITERION_PARTS,
    changed_parts,
    content_hashes,
    criteria_reopened,
    disk_reader,
    visible_hashes,
)
from ctbench.approval.records import (
    BlindSolve,
    Comment,
    ReviewRecord,
    load_records,
    new_record,
    parse_record,
    render_record,
)
from ctbench.approval.states import (
    CRITERIA,
    Criterion,
    IllegalTransition,
    Role,
    Verdict,
    check_move,
    consensus,
    parse_criterion,
)
from ctbench.errors import CtbError
from ctbench.model import Family, Status
from ctbench.review.assign import Reviewer, propose, queue
from ctbench.review.history import cohen_kappa, compute, krippendorff_alpha
from ctbench.review.view import TaskState
from ctbench.store import TaskSet
from tests.review_support import FIXTURE

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


# --------------------------------------------------------------------------- states


def test_legal_moves_follow_the_paper_pipeline() -> None:
    path = [
        Status.DRAFT,
        Status.SUBMITTED,
        Status.IN_REVIEW,
        Status.NEEDS_REVISION,
        Status.SUBMITTED,
        Status.IN_REVIEW,
        Status.APPROVED,
    ]
    for a, b in zip(path, path[1:], strict=False):
        check_move("T", a, b)
    for s in (Status.SUBMITTED, Status.IN_REVIEW, Status.NEEDS_REVISION, Status.APPROVED):
        check_move("T", s, Status.DISCARDED)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (Status.DRAFT, Status.APPROVED),
        (Status.DRAFT, Status.IN_REVIEW),
        (Status.SUBMITTED, Status.APPROVED),
        (Status.DISCARDED, Status.SUBMITTED),
        (Status.NEEDS_REVISION, Status.APPROVED),
        (Status.DRAFT, Status.DISCARDED),
    ],
)
def test_illegal_moves_are_refused_with_what_is_allowed(source: Status, target: Status) -> None:
    with pytest.raises(IllegalTransition) as exc:
        check_move("RCA-7", source, target)
    text = str(exc.value)
    assert "RCA-7" in text and source.value in text and target.value in text and "may become" in text


def test_consensus_needs_all_four_agreements() -> None:
    agree = dict.fromkeys(CRITERIA, Verdict.AGREE)
    assert consensus(agree) == Status.APPROVED
    assert consensus({**agree, Criterion.METADATA_CORRECTNESS: Verdict.DISAGREE}) == Status.NEEDS_REVISION
    assert consensus({**agree, Criterion.SOLVABILITY: Verdict.OPEN}) is None
    assert consensus({Criterion.SOLVABILITY: Verdict.DISAGREE}) is None  # others still open


def test_criteria_accept_the_names_reviewers_type() -> None:
    assert parse_criterion("metadata") == Criterion.METADATA_CORRECTNESS
    assert parse_criterion("Golden-Actions") == Criterion.GOLDEN_ACTION_CONSISTENCY
    assert parse_criterion("completeness") == Criterion.ANSWER_COMPLETENESS
    assert parse_criterion("answer_completeness") == Criterion.ANSWER_COMPLETENESS
    with pytest.raises(CtbError, match="expected one of"):
        parse_criterion("beauty")


# --------------------------------------------------------------------------- hashes


@pytest.fixture
def task_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "tasks"
    shutil.copytree(FIXTURE, dst)
    return dst / "rca" / "RCA-101"


def test_each_part_change_reopens_exactly_its_criteria(task_copy: Path) -> None:
    base = content_hashes(disk_reader(task_copy))
    rec_file = next((task_copy / "recordings").rglob("*.txt"))
    rec_file.write_bytes(rec_file.read_bytes() + b"\n")
    after = content_hashes(disk_reader(task_copy))
    assert changed_parts(base, after) == ["recordings"]
    assert criteria_reopened(changed_parts(base, after)) == [
        Criterion.SOLVABILITY,
        Criterion.GOLDEN_ACTION_CONSISTENCY,
    ]
    expected = {
        "statement": [Criterion.SOLVABILITY],
        "gold": [Criterion.SOLVABILITY, Criterion.ANSWER_COMPLETENESS],
        "golden_actions": [Criterion.GOLDEN_ACTION_CONSISTENCY],
        "metadata": [Criterion.METADATA_CORRECTNESS],
    }
    for part, crits in expected.items():
        assert criteria_reopened([part]) == crits
    assert set(CRITERION_PARTS) == set(CRITERIA)


def test_hashes_ignore_layout_and_golden_order_but_see_content(task_copy: Path) -> None:
    hidden = task_copy / "hidden.yaml"
    base = content_hashes(disk_reader(task_copy))
    text = hidden.read_text()
    hidden.write_text("# a comment an author added\n" + text)
    assert changed_parts(base, content_hashes(disk_reader(task_copy))) == []
    # reorder the golden actions: the paper fixes no order for independent checks
    from ctbench.yamlio import load_document, save_document

    doc = load_document(hidden)
    doc["golden_actions"] = list(reversed(doc["golden_actions"]))
    save_document(hidden, doc)
    assert changed_parts(base, content_hashes(disk_reader(task_copy))) == []
    doc["metadata"]["chain_length"] = 5
    save_document(hidden, doc)
    assert changed_parts(base, content_hashes(disk_reader(task_copy))) == ["metadata"]


def test_visible_hashes_never_read_the_hidden_file(task_copy: Path) -> None:
    asked: list[str] = []
    read = disk_reader(task_copy)

    def spy(rel: str) -> bytes | None:
        asked.append(rel)
        return read(rel)

    h = visible_hashes(spy)
    assert h.statement and h.recordings and h.gold is None
    assert "hidden.yaml" not in asked and "task.yaml" in asked


# --------------------------------------------------------------------------- records


def test_record_round_trips_and_merge_keeps_unchanged_lines(tmp_path: Path) -> None:
    rec = new_record("RCA-9", Family.RCA, 1, ["alice"], T0)
    rec.blind = BlindSolve(
        reviewer="bob",
        started=T0,
        submitted=T0,
        time_spent_s=60,
        answer="a;b;c\n",
        answer_sha256="sha256:" + "0" * 64,
    )
    text = render_record(rec)
    back = parse_record(text, tmp_path / "round-01.yaml")
    assert back == rec
    rec.criteria[Criterion.SOLVABILITY].verdict = Verdict.AGREE
    rec.criteria[Criterion.SOLVABILITY].thread.append(
        Comment(who="bob", role=Role.REVIEWER, when=T0, verdict=Verdict.AGREE, text="solvable")
    )
    text2 = render_record(rec, text, "round-01.yaml")
    old_lines, new_lines = text.splitlines(), text2.splitlines()
    assert old_lines[0] == new_lines[0]  # the header comment survives the merge
    assert len(set(new_lines) - set(old_lines)) <= 8  # a verdict is a small, local diff
    assert parse_record(text2, "x").criteria[Criterion.SOLVABILITY].verdict == Verdict.AGREE
    folder = tmp_path / "T" / "reviews"
    folder.mkdir(parents=True)
    (folder / "round-01.yaml").write_text(text2)
    (folder / "round-02.yaml").write_text(render_record(new_record("RCA-9", Family.RCA, 2, [], T0)))
    assert [r.round for r in load_records(tmp_path / "T")] == [1, 2]


def test_a_broken_record_names_the_file_and_field(tmp_path: Path) -> None:
    with pytest.raises(CtbError, match=r"round-03\.yaml: round"):
        parse_record(
            "task: X\nfamily: rca\nround: 0\nopened: 2026-01-01T00:00:00Z\n", tmp_path / "round-03.yaml"
        )


# --------------------------------------------------------------------------- statistics


def test_cohen_kappa_known_values() -> None:
    assert cohen_kappa([]) is None
    assert cohen_kappa([("agree", "agree")] * 5) is None  # no variation: undefined, not 1
    pairs = (
        [("agree", "agree")] * 20
        + [("disagree", "disagree")] * 15
        + [("agree", "disagree")] * 5
        + [("disagree", "agree")] * 10
    )
    # p_o = 0.7, p_e = (25*30 + 25*20)/50^2 = 0.5  -> kappa 0.4
    assert cohen_kappa(pairs) == pytest.approx(0.4)


def test_krippendorff_alpha_nominal() -> None:
    pytest.importorskip("krippendorff")
    assert krippendorff_alpha(
        [["agree", "agree"], ["disagree", "disagree"], ["agree", "agree"]]
    ) == pytest.approx(1.0)
    assert krippendorff_alpha([["agree"], ["agree"]]) is None  # nobody saw a task twice
    value = krippendorff_alpha(
        [["agree", "disagree"], ["agree", "agree"], ["disagree", "disagree"], ["agree", "agree"]]
    )
    assert value is not None and -1.0 <= value < 1.0


def _state(
    task_id: str, fam: Family, status: Status, records: list[ReviewRecord], authors: list[str] = ()
) -> TaskState:
    return TaskState(
        id=task_id,
        family=fam,
        status=status,
        title="",
        authors=list(authors),
        tags=[],
        network="campus-lab",
        accessible=None,
        records=records,
    )


def _approved(task_id: str, rounds: int, exact: bool, reviewer: str = "bob") -> list[ReviewRecord]:
    from ctbench.approval.records import Comparison

    recs = []
    for n in range(1, rounds + 1):
        r = new_record(task_id, Family.RCA, n, ["alice"], T0, reviewer=reviewer)
        r.comparison = Comparison(revealed_at=T0, revealed_by=reviewer, parse_status="answered", exact=exact)
        verdict = Verdict.AGREE if n == rounds else Verdict.DISAGREE
        for c in CRITERIA:
            r.criteria[c].verdict = Verdict.AGREE
            r.criteria[c].thread.append(
                Comment(who=reviewer, role=Role.REVIEWER, when=T0, verdict=Verdict.AGREE)
            )
        r.criteria[Criterion.METADATA_CORRECTNESS].verdict = verdict
        r.criteria[Criterion.METADATA_CORRECTNESS].thread[-1].verdict = verdict
        if n < rounds:
            r.criteria[Criterion.METADATA_CORRECTNESS].thread.append(
                Comment(who="alice", role=Role.AUTHOR, when=T0, stance="concede", text="fixed")
            )
        r.outcome = "approved" if n == rounds else "needs_revision"
        recs.append(r)
    return recs


def test_yields_and_revision_counts_reproduce_the_paper_arithmetic() -> None:
    states = []
    # 205 RCA candidates -> 126 retained; 154 path -> 108 (paper section 3.2 / A.3)
    for i in range(205):
        if i < 126:
            states.append(
                _state(f"R{i}", Family.RCA, Status.APPROVED, _approved(f"R{i}", 2 if i < 80 else 1, True))
            )
        else:
            states.append(
                _state(f"R{i}", Family.RCA, Status.DISCARDED, [new_record(f"R{i}", Family.RCA, 1, [], T0)])
            )
    for i in range(154):
        status = Status.APPROVED if i < 108 else Status.DISCARDED
        recs = (
            _approved(f"P{i}", 2 if i < 74 else 1, i % 2 == 0)
            if i < 108
            else [new_record(f"P{i}", Family.PATH, 1, [], T0)]
        )
        for r in recs:
            r.family = Family.PATH
        states.append(_state(f"P{i}", Family.PATH, status, recs))
    data = compute(states).to_json()
    assert data["families"]["rca"]["yield_pct"] == 61.46
    assert data["families"]["path"]["yield_pct"] == 70.13
    assert data["total"]["yield_pct"] == 65.18
    assert data["total"]["revised_before_consensus"] == 154
    assert data["total"]["revised_pct"] == 65.81
    assert data["families"]["rca"]["blind_accuracy_pct"] == 100.0
    assert data["families"]["path"]["blind_accuracy_pct"] == 50.0
    meta = next(a for a in data["agreement"] if a["criterion"] == "metadata_correctness")
    assert meta["cohen_kappa"] == 1.0  # the author conceded exactly where the reviewer disagreed


def test_candidates_exclude_untouched_drafts_and_count_deleted_submissions() -> None:
    states = [
        _state("D1", Family.RCA, Status.DRAFT, []),
        _state("A1", Family.RCA, Status.APPROVED, _approved("A1", 1, True)),
    ]
    data = compute(states, history_candidates={"GONE-1": "rca", "A1": "rca"}).to_json()
    assert data["families"]["rca"]["candidates"] == 2
    assert data["families"]["rca"]["discarded"] == 1


# --------------------------------------------------------------------------- assignment


def _submitted(
    task_id: str, authors: list[str], reviewer: str | None = None, tags: list[str] = ()
) -> TaskState:
    s = _state(
        task_id,
        Family.RCA,
        Status.SUBMITTED,
        [new_record(task_id, Family.RCA, 1, authors, T0, reviewer)],
        authors,
    )
    s.tags = list(tags)
    return s


def test_assignment_never_picks_an_author_balances_load_and_is_deterministic(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE, tmp_path / "tasks")
    ts = TaskSet.open(tmp_path / "tasks")
    reviewers = [
        Reviewer(name="alice", vendors=["Huawei", "Cisco", "Juniper"], domains=["rca"], capacity=5),
        Reviewer(name="bob", vendors=["Huawei"], domains=["rca"], capacity=2),
        Reviewer(name="erin", vendors=["Cisco"], domains=[], capacity=2),
        Reviewer(name="zed", vendors=["Arista"], domains=["wifi"], capacity=9),
    ]
    states = [_submitted(f"T{i}", ["alice"]) for i in range(1, 6)]
    first = propose(ts, states, reviewers)
    again = propose(ts, list(reversed(states)), reviewers)
    assert sorted((p.task, p.reviewer) for p in first) == sorted((p.task, p.reviewer) for p in again)
    assert all(p.reviewer != "alice" for p in first)
    counts = {n: sum(1 for p in first if p.reviewer == n) for n in ("bob", "erin", "zed")}
    assert counts["bob"] == 2 and counts["erin"] == 2  # balanced up to capacity among the experts
    assert counts["zed"] == 1 and "no expertise match" in next(p.note for p in first if p.reviewer == "zed")
    # load already in progress counts: bob busy with two reviews gets nothing new
    busy = [_submitted("X1", ["carol"], "bob"), _submitted("X2", ["carol"], "bob")]
    for s in busy:
        s.status = Status.IN_REVIEW
    assert all(p.reviewer != "bob" for p in propose(ts, busy + states, reviewers))


def test_queue_tells_each_person_the_next_step() -> None:
    waiting = _submitted("T1", ["alice"], "bob")
    revise = _state("T2", Family.RCA, Status.NEEDS_REVISION, _approved("T2", 1, True), ["alice"])
    revise.records[-1].criteria[Criterion.SOLVABILITY].verdict = Verdict.DISAGREE
    items = queue([waiting, revise])
    assert [(i.task, i.who, i.role) for i in items] == [("T1", "bob", "reviewer"), ("T2", "alice", "author")]
    assert "ctb-review blind T1" in items[0].next and "ctb-review respond T2" in items[1].next
    assert queue([waiting, revise], "alice")[0].task == "T2"


def test_comparison_views_are_one_definition() -> None:
    """The reveal text, the app and the PR text share the score line, the rows and the carry note."""
    from ctbench.approval.records import Comparison, CriterionReview, cell_value

    c = Comparison(
        revealed_at=T0,
        revealed_by="r",
        parse_status="answered",
        exact=False,
        scores={"loc": 0.5, "ident": None, "evidence": {"covered": 0, "golden": 0}},
        gold_lines=["a", "b"],
        blind_lines=["b", "c"],
        invalid_lines=["??"],
    )
    assert c.score_parts() == ["Loc IoU 0.50", "evidence 0/0"]
    assert c.score_parts(evidence_always=False) == ["Loc IoU 0.50"]
    assert c.answer_rows()[-1] == ("?", "", "unparsable: ??")
    assert c.answer_rows(invalid=False) == [("=", "b", "b"), ("-", "a", ""), ("+", "", "c")]
    assert CriterionReview(carried=True).carry_note() == "carried from an earlier round"
    assert CriterionReview(reopened_by=["recordings"]).carry_note() == "reopened: recordings changed"
    assert CriterionReview().carry_note() == ""
    assert cell_value(["x", 1]) == "x, 1" and cell_value(None) is None and cell_value(3) == 3
    assert cell_value(None, text=True) == "" and cell_value(3, text=True) == "3"


def test_repeated_names_are_refused_with_their_noun() -> None:
    """One uniqueness rule for a network's devices and the reviewers file, each message in its own words."""
    from pydantic import ValidationError

    from ctbench.model import Network
    from ctbench.review.assign import ReviewersFile

    with pytest.raises(ValidationError, match="reviewer 'alice' is listed twice"):
        ReviewersFile.model_validate({"reviewers": [{"name": "alice"}, {"name": "alice"}]})
    with pytest.raises(ValidationError, match="device 'R1' is listed twice"):
        r1 = {"name": "R1", "vendor": "Huawei", "type": "router"}
        Network.model_validate({"name": "n", "devices": [r1, r1]})
