"""Checkout: switch to a task's review branch (e.g. for its author to revise it); records nothing."""

from __future__ import annotations

from ctbench.approval.records import round_summary
from ctbench.review.gitflow import BRANCH_PREFIX
from ctbench.review.steps.desk import Desk, StepResult


def checkout(desk: Desk, task_id: str) -> StepResult:
    """Switch to a task's review branch (e.g. for the author to revise it); changes nothing else."""
    with desk.repo.locked(f"checkout {task_id}"):
        ref, task, records = desk.enter(task_id, author_changes=True)
        result = StepResult(task_id, task.status, records[-1].round if records else 0)
        result.messages.append(
            f"on {BRANCH_PREFIX}{task_id}: {task_id} is {task.status.value}, "
            f"task folder {desk.repo.rel(ref.path)}"
        )
        if records:
            result.messages.append(round_summary(records[-1]))
        return result
