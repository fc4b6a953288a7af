"""Verdicts: the reviewer rules on the four criteria, and consensus approves or asks for a revision.

One commit per verdict (a repeated ruling changes nothing). After the verdicts the round is
decided: an agreement whose parts changed during the round is void (reopened by those parts);
agreement on all four criteria approves the task, any disagreement sends it back to its author.
"""

from __future__ import annotations

from collections.abc import Mapping

from ctbench.approval.hashes import CRITERION_PARTS, PART_TITLES, ContentHashes
from ctbench.approval.records import Comment, CriterionReview, ReviewRecord, load_records
from ctbench.approval.states import (
    CRITERIA,
    Action,
    Criterion,
    Role,
    Verdict,
    check_move,
    consensus,
    require_status,
)
from ctbench.commits import Trailer
from ctbench.errors import CtbError
from ctbench.model import Status, TaskSpec
from ctbench.review.steps.desk import Desk, StepResult
from ctbench.store import TaskRef


def rule(
    desk: Desk,
    task_id: str,
    actor: str,
    rulings: Mapping[Criterion, tuple[Verdict, str]],
    *,
    review_time_s: float | None = None,
) -> StepResult:
    """Record the reviewer's verdicts (one commit each) and move the task if consensus is decided."""
    for crit, (verdict, text) in rulings.items():
        if verdict == Verdict.DISAGREE and not text.strip():
            raise CtbError(f"a disagreement on {crit.label} needs a comment saying what is wrong")
        if verdict == Verdict.OPEN:
            raise CtbError(f"{crit.label}: a verdict is agree or disagree")
    with desk.repo.locked(f"verdicts {task_id}"):
        ref, task, records = desk.enter(task_id)
        require_status(task_id, task.status, (Status.IN_REVIEW,), "rule on")
        record = records[-1]
        if record.comparison is None:
            raise CtbError(f"reveal {task_id} before ruling on it: ctb-review reveal {task_id}")
        desk.refuse_gold_quotes(
            ref,
            task,
            {
                f"--{'disagree' if v == Verdict.DISAGREE else 'comment'} {c.value}": text
                for c, (v, text) in rulings.items()
            },
        )
        if record.reviewer != actor:
            raise CtbError(f"round {record.round} of {task_id} is reviewed by {record.reviewer}, not {actor}")
        result = StepResult(task_id, task.status, record.round)
        now_hashes = desk.hashes(ref)
        pending = [c for c in CRITERIA if c in rulings]
        if review_time_s:
            record.review_time_s = round(record.review_time_s + review_time_s, 1)
        for crit in pending:
            verdict, text = rulings[crit]
            cr = record.criteria[crit]
            last = cr.last_reviewer_comment()
            if cr.verdict == verdict and not cr.carried and last is not None and last.text == text.strip():
                continue  # the same ruling again: a repeated command changes nothing
            now = desk.clock()
            cr.verdict = verdict
            cr.carried = False
            cr.reopened_by = []
            cr.basis = now_hashes.subset(CRITERION_PARTS[crit])
            cr.thread.append(
                Comment(who=actor, role=Role.REVIEWER, when=now, verdict=verdict, text=text.strip())
            )
            record.note(actor, Role.REVIEWER, Action.VERDICT, text.strip() or verdict.value, crit, when=now)
            sha = desk.commit_step(
                ref,
                record,
                f"{crit.label}: {verdict.value} (round {record.round})",
                Action.VERDICT,
                actor,
                criterion=crit,
                extra=[(Trailer.VERDICT, verdict.value)],
                body=text.strip(),
            )
            if sha:
                result.commits.append(sha)
            result.messages.append(f"{crit.label}: {verdict.value}")
        _decide(desk, ref, task, record, actor, now_hashes, result)
        desk.push_branch(task_id, result)
        return result


def _decide(
    desk: Desk,
    ref: TaskRef,
    task: TaskSpec,
    record: ReviewRecord,
    actor: str,
    now_hashes: ContentHashes,
    result: StepResult,
) -> None:
    for crit in CRITERIA:  # content changed during the round: an agreement on the old version is void
        cr = record.criteria[crit]
        stale = [p for p, h in cr.basis.items() if not now_hashes.same(p, h)]
        if cr.verdict == Verdict.AGREE and stale:
            record.criteria[crit] = CriterionReview(reopened_by=stale, thread=cr.thread)
            result.messages.append(
                f"{crit.label} reopened: {', '.join(PART_TITLES[p] for p in stale)} changed"
            )
    target = consensus(record.verdicts())
    if target is None:
        left = ", ".join(c.label for c in record.open_criteria())
        result.messages.append(f"{task.id} stays in review; still open: {left}")
        return
    now = desk.clock()
    check_move(task.id, task.status, target)
    record.finished = now
    if target == Status.APPROVED:
        record.outcome = "approved"
        record.note(actor, Role.REVIEWER, Action.APPROVE, "consensus on all four criteria", when=now)
        sha = desk.commit_step(
            ref, record, f"approved (round {record.round})", Action.APPROVE, actor, status=target
        )
        result.messages.append(f"{task.id} approved: consensus on all four criteria")
    else:
        record.outcome = "needs_revision"
        names = ", ".join(c.label for c in record.disagreements())
        record.note(actor, Role.REVIEWER, Action.REQUEST_REVISION, f"disagreement on {names}", when=now)
        sha = desk.commit_step(
            ref,
            record,
            f"revision requested: {names} (round {record.round})",
            Action.REQUEST_REVISION,
            actor,
            status=target,
        )
        last = desk.max_rounds_reached(load_records(ref.path))
        result.messages.append(
            f"{task.id} needs revision: {names}"
            + (" (that was the last round allowed: without consensus now, discard it)" if last else "")
        )
    if sha:
        result.commits.append(sha)
    result.status = target
