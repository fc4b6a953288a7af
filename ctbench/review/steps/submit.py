"""Submit: the author opens a review round on the task's review branch (``review/<ID>``).

The task must pass validation where the author stands and on the branch. A task approved before
is re-reviewed only on what changed since: criteria whose parts are unchanged carry their agreement
over, the others are reopened by the changed parts. A requested reviewer is never an author.
"""

from __future__ import annotations

from ctbench.approval.hashes import PART_TITLES
from ctbench.approval.records import new_record
from ctbench.approval.states import CRITERIA, Action, IllegalTransition, check_move
from ctbench.commits import Trailer
from ctbench.errors import CtbError
from ctbench.model import Status, TaskSpec
from ctbench.review.gitflow import branch_name
from ctbench.review.steps.desk import Desk, StepResult, next_round_criteria, role_of
from ctbench.store import TaskNotFound


def submit(desk: Desk, task_id: str, actor: str, why: str = "", *, reviewer: str | None = None) -> StepResult:
    """Open a review round on ``review/<ID>``; ``reviewer`` requests one (never an author of the task)."""
    with desk.repo.locked(f"submit {task_id}"):
        try:  # validate where the user is, before any branch is created or switched to
            here = desk.ts.ref(task_id)
        except TaskNotFound:
            here = None
        if here is not None:
            if reviewer:  # self-review is refused before anything is written
                _requested_reviewer(desk, task_id, desk.load(here), reviewer)
            desk.check_valid(here)
            desk.refuse_gold_quotes(here, desk.load(here), {"--why": why}, unreadable_ok=True)
        before = desk.repo.current_branch()
        existed = desk.repo.rev(f"refs/heads/{branch_name(task_id)}") is not None
        ref, task, records = desk.enter(task_id, create=True, author_changes=True)
        _catch_up_with_main(desk, task_id)
        try:  # the branch's version of the task (it may differ from the one validated above)
            desk.check_valid(ref)
            task = desk.load(ref)
            requested = _requested_reviewer(desk, task_id, task, reviewer) if reviewer else None
        except CtbError:
            _go_back(desk, before, task_id, delete=not existed)
            raise
        if task.status == Status.NEEDS_REVISION:
            raise IllegalTransition(
                f"{task_id} needs revision: answer the reviewer with "
                f"ctb-review respond {task_id} (it resubmits the task)"
            )
        check_move(task_id, task.status, Status.SUBMITTED)
        if task.authors and actor not in task.authors:
            desk.notify(
                f"note: {actor} is not an author of {task_id} ({', '.join(task.authors)}); "
                "submitting as maintainer"
            )
        now = desk.clock()
        last = records[-1] if records else None
        number = (last.round + 1) if last else 1
        record = new_record(task_id, task.family, number, task.authors, now)
        parts: list[str] = []
        rereview = (
            last is not None and last.outcome == "approved" and task.status in (Status.APPROVED, Status.DRAFT)
        )
        if rereview and last is not None:
            now_hashes = desk.hashes(ref)
            for crit, opens in next_round_criteria(last, now_hashes, after_approval=True).items():
                parts += [p for p in opens.reopened_by if p not in parts]
                record.criteria[crit] = opens
            if not parts:
                raise CtbError(
                    f"{task_id} was approved in round {last.round} and nothing it was approved on "
                    "has changed "
                    "(statement, recordings, gold, golden actions, metadata): nothing to review"
                )
        if requested:
            record.reviewer = requested
        record.note(
            actor,
            role_of(actor, task, None),
            Action.SUBMIT,
            (why or "submitted for review") + (f"; review requested from {requested}" if requested else ""),
            when=now,
        )
        reopened = [c.label for c in CRITERIA if record.criteria[c].reopened_by]
        body = (
            f"Reopened: {', '.join(reopened)} ({', '.join(PART_TITLES[p] for p in parts)} changed)"
            if parts
            else ""
        )
        sha = desk.commit_step(
            ref,
            record,
            f"submitted for review (round {number})",
            Action.SUBMIT,
            actor,
            status=Status.SUBMITTED,
            add=[desk.repo.rel(ref.path)],
            body=body,
            extra=[(Trailer.PARTS, ",".join(parts) or None)],
        )
        result = StepResult(task_id, Status.SUBMITTED, number, [sha] if sha else [])
        result.messages.append(
            f"{task_id} submitted for review, round {number}"
            + (f"; reopened: {', '.join(reopened)}" if reopened else "")
        )
        desk.push_branch(task_id, result)
        return result


def _requested_reviewer(desk: Desk, task_id: str, task: TaskSpec, name: str) -> str:
    """The person id of a reviewer requested at submit; never one of the task's authors."""
    people = desk.repo.people
    pid = people.author_id(name.strip())
    if pid in task.authors:
        raise CtbError(
            f"{pid} is an author of {task_id} and cannot review it: request another reviewer "
            f"(ctb-review submit {task_id} --reviewer NAME) or let a maintainer assign one"
        )
    if people.reviewers and pid not in people.reviewers:
        raise CtbError(
            f"{name} is not a reviewer in {people.source} (reviewers: {', '.join(people.reviewers)})"
        )
    return pid


def _go_back(desk: Desk, branch: str | None, task_id: str, *, delete: bool) -> None:
    """Undo a submit's branch switch (uncommitted changes travel back with the checkout)."""
    if branch is None or desk.repo.current_branch() == branch:
        return
    desk.repo.git("checkout", "--quiet", branch)
    if delete:
        desk.repo.git("branch", "--quiet", "-D", branch_name(task_id))
    desk.ts = desk.ts.fresh()
    desk.notify(f"back on branch {branch}; nothing was submitted")


def _catch_up_with_main(desk: Desk, task_id: str) -> None:
    """A re-review after a merge starts from main, not from the branch's old tip."""
    main = desk.repo.rev(f"refs/heads/{desk.repo.main_branch}")
    head = desk.repo.rev("HEAD")
    if main and head and main != head and desk.repo.is_ancestor(head, main):
        desk.repo.git("merge", "--quiet", "--ff-only", main)
        desk.ts = desk.ts.fresh()
