"""Assign: a maintainer records the proposed reviewer in each task's current round.

The proposals come from :mod:`ctbench.review.assign` (who fits which task); this step commits them
on each review branch, whether or not it is checked out. A proposal is refused when the task moved
on since, when the round already has a blind answer, or when the proposed reviewer could read an
earlier round's reveal (the refusal comes here, before their blind answer, not at merge).
"""

from __future__ import annotations

from collections.abc import Iterable

from ctbench.approval.records import ReviewRecord, record_rel, render_record
from ctbench.approval.states import Action, Role
from ctbench.errors import CtbError
from ctbench.model import Status
from ctbench.review.assign import Proposal
from ctbench.review.gitflow import branch_name
from ctbench.review.steps.desk import Desk, StepResult, saw_a_reveal, step_message


def apply_assignments(desk: Desk, proposals: Iterable[Proposal], actor: str) -> list[StepResult]:
    """Record proposed reviewers in each task's current round (committed on its review branch)."""
    from ctbench.review.view import read_at

    results = []
    with desk.repo.locked("assign"):
        for p in proposals:
            if p.reviewer is None:
                continue
            branch = branch_name(p.task)
            why = f"assigned to {p.reviewer}" + (f" ({', '.join(p.match)})" if p.match else "")
            if desk.repo.current_branch() == branch:
                ref, task, records = desk.enter(p.task)
                record = records[-1]
                _check_assignable(p, task.status, record, records)
                record.reviewer = p.reviewer
                record.note(actor, Role.MAINTAINER, Action.ASSIGN, why, when=desk.clock())
                sha = desk.commit_step(
                    ref, record, f"assigned to {p.reviewer} (round {record.round})", Action.ASSIGN, actor
                )
            else:
                tip = desk.repo.review_branches().get(p.task)
                state = read_at(desk.repo, tip, p.task) if tip else None
                if state is None or state.current is None:
                    raise CtbError(f"{p.task}: no review branch with a review round to assign")
                record = state.current
                _check_assignable(p, state.status, record, state.records)
                record.reviewer = p.reviewer
                record.note(actor, Role.MAINTAINER, Action.ASSIGN, why, when=desk.clock())
                rel = f"{state.rel}/{record_rel(record.round)}"
                old = desk.repo.read_blob(tip or "", rel)
                text = render_record(record, old.decode("utf-8") if old else None, rel)
                message = step_message(
                    p.task,
                    state.family,
                    record,
                    f"assigned to {p.reviewer} (round {record.round})",
                    Action.ASSIGN,
                    actor,
                )
                sha = desk.repo.commit_to_branch(branch, message, {rel: text.encode("utf-8")}, actor=actor)
            result = StepResult(
                p.task,
                Status.SUBMITTED,
                record.round,
                [sha] if sha else [],
                [f"{p.task} round {record.round} assigned to {p.reviewer}"],
            )
            desk.push_branch(p.task, result)
            results.append(result)
    return results


def _check_assignable(p: Proposal, status: Status, record: ReviewRecord, records: list[ReviewRecord]) -> None:
    """Refuse a proposal the task outgrew, a round already answered, or a reviewer who saw a reveal."""
    if status != Status.SUBMITTED or record.round != p.round:
        raise CtbError(
            f"{p.task} changed since the proposal (now {status.value}, round {record.round}); "
            "run ctb-review assign again"
        )
    if record.blind is not None:
        raise CtbError(f"{p.task} round {record.round} already has a blind answer by {record.blind.reviewer}")
    if p.reviewer and not any(r.blind is not None and r.blind.reviewer == p.reviewer for r in records):
        seen = saw_a_reveal(records, p.reviewer)
        if seen is not None:
            raise CtbError(seen)
