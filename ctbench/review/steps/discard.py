"""Discard: the task leaves the review, with the reason kept in its round record.

A discarded review is still merged (so the yield statistics count it); the reason is free text,
refused when it quotes sealed gold, unless the actor cannot open the gold at all.
"""

from __future__ import annotations

from ctbench.approval.records import new_record
from ctbench.approval.states import Action, check_move
from ctbench.commits import Trailer
from ctbench.errors import CtbError
from ctbench.model import Status
from ctbench.review.steps.desk import Desk, StepResult, role_of


def discard(desk: Desk, task_id: str, actor: str, reason: str) -> StepResult:
    """Discard the task; ``reason`` and the actor's role (author, reviewer, maintainer) go into the record."""
    if not reason.strip():
        raise CtbError("say why the task is discarded: --reason TEXT (it is kept in the record)")
    with desk.repo.locked(f"discard {task_id}"):
        ref, task, records = desk.enter(task_id)
        check_move(task_id, task.status, Status.DISCARDED)
        desk.refuse_gold_quotes(ref, task, {"--reason": reason}, unreadable_ok=True)
        now = desk.clock()
        record = records[-1] if records else new_record(task_id, task.family, 1, task.authors, now)
        record.outcome = "discarded"
        record.discard_reason = reason.strip()
        record.finished = now
        record.note(actor, role_of(actor, task, record), Action.DISCARD, reason.strip(), when=now)
        sha = desk.commit_step(
            ref,
            record,
            f"discarded (round {record.round})",
            Action.DISCARD,
            actor,
            status=Status.DISCARDED,
            body=reason,
            extra=[(Trailer.DISCARDED_BY, actor)],
        )
        result = StepResult(
            task_id,
            Status.DISCARDED,
            record.round,
            [sha] if sha else [],
            [f"{task_id} discarded: {reason.strip()}"],
        )
        desk.push_branch(task_id, result)
        return result
