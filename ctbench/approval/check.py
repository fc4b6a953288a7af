"""Is this task approved, and is it still the task that was approved? One answer for every gate.

The run gate (``ctb-eval run``), ``ctb-author`` and ``ctb-review status`` all ask the same question,
so it is answered here once, from the working tree alone (no git, no Textual): the task's status,
its last review round, and the content hashes of the five reviewed parts (statement, recordings,
gold, golden actions, metadata) against the hashes each criterion's agreement was given on. A
change to any part since the approval means the task is not approved any more, whatever its
``status`` line says, and the reason names the parts and the criteria they reopen.

A task set whose ``ctbench.yaml`` says ``review: {unreviewed_seed: true}`` holds seed tasks that were
never reviewed; each gets the reason ``unreviewed seed task`` instead of a broken-approval reason,
so a gate can report the set honestly and a user can run it with ``--allow-unreviewed``.

When the reviewers file lists SSH signing keys, an approval counts only if every commit that wrote
the task's review record is a review step signed by the person it names
(:mod:`ctbench.approval.signatures`): a record edited by hand is not an approval.
"""

from __future__ import annotations

from typing import NamedTuple

from ctbench.approval.hashes import PART_TITLES, PartReader, content_hashes, disk_reader, stale_criteria
from ctbench.approval.records import ReviewRecord, load_records
from ctbench.approval.states import CRITERIA, Criterion, Verdict
from ctbench.errors import CtbError
from ctbench.model import Status, TaskSpec
from ctbench.store import TaskRef, TaskSet

SEED_REASON = (
    "never reviewed (an unreviewed seed task: ctbench.yaml review.unreviewed_seed; run it with "
    "--allow-unreviewed)"
)


class ApprovalState(NamedTuple):
    """``approved`` only when every check passed; otherwise ``reason`` says, in one line, why not."""

    approved: bool
    reason: str | None


def approval_state(ts: TaskSet, ref: TaskRef | str, task: TaskSpec | None = None) -> ApprovalState:
    """Whether ``ref`` is approved and unchanged since its approval; never raises for a bad task.

    ``task``: its ``task.yaml`` as the caller already loaded it (the run gate has every candidate's),
    so it is not parsed twice."""
    try:
        ref = ts.ref(ref) if isinstance(ref, str) else ref
        task = task if task is not None else ts.load_task(ref)
        records = load_records(ref.path)
    except CtbError as exc:
        return ApprovalState(False, f"unreadable: {exc}")
    if not records and ts.config.review.unreviewed_seed:
        return ApprovalState(False, SEED_REASON)
    if task.status != Status.APPROVED:
        return ApprovalState(False, f"not approved (status {task.status.value})")
    if not records:
        return ApprovalState(False, "never reviewed (approved in task.yaml, but no review record)")
    last = records[-1]
    if last.outcome != "approved":
        return ApprovalState(
            False, f"its last review round ({last.round}) ended {last.outcome!r}, not approved"
        )
    if any(last.criteria[c].verdict != Verdict.AGREE for c in CRITERIA):
        return ApprovalState(
            False, f"its last review round ({last.round}) does not record consensus on all four criteria"
        )
    try:
        now = content_hashes(disk_reader(ref.path, ts))
    except CtbError as exc:
        return ApprovalState(False, f"cannot check the content against the approval: {exc}")
    stale = stale_criteria(lambda c: last.criteria[c].basis, now)
    if stale:  # the wording the run gate records in run.yaml; ctb-review submit says what it reopens
        parts = sorted({p for ps in stale.values() for p in ps})
        return ApprovalState(
            False,
            "edited after approval: "
            + ", ".join(PART_TITLES.get(p, p) for p in parts)
            + " changed since the review approved it",
        )
    from ctbench.approval.signatures import verify_worktree_task

    review = ts.config.review
    steps = verify_worktree_task(ts.root, ref.path, ref.id, review.main_branch, review.remote)
    if not steps.ok:
        return ApprovalState(False, f"review steps not verified: {steps.problems[0]}")
    return ApprovalState(True, None)


def approval_states(ts: TaskSet) -> dict[str, ApprovalState]:
    """Every task of the set, by id (for listings: ``ctb-author``, ``ctb-review status``)."""
    return {ref.id: approval_state(ts, ref) for ref in ts.refs()}


def approved_basis(records: list[ReviewRecord]) -> ReviewRecord | None:
    """The last round when it ended in an approval (the version a later edit is measured against)."""
    if records and records[-1].outcome == "approved":
        return records[-1]
    return None


def reopened_since_approval(ts: TaskSet, ref: TaskRef, changed: PartReader) -> dict[Criterion, list[str]]:
    """Criteria that ``changed`` reopens on an approved task, each with its ``reopened_by`` parts; {} otherwise.

    ``changed`` reads the new version (e.g. the authoring app's unsaved draft laid out in a shadow
    folder), so the app can say what a save will reopen before it saves.
    """
    try:
        last = approved_basis(load_records(ref.path))
    except CtbError:
        return {}
    if last is None:
        return {}
    return stale_criteria(lambda c: last.criteria[c].basis, content_hashes(changed))


def rereview_reason(ts: TaskSet, ref: TaskRef) -> str | None:
    """Why a task that was approved now needs re-review (moved to draft by an edit, or changed), or None."""
    try:
        task = ts.load_task(ref)
        last = approved_basis(load_records(ref.path))
    except CtbError:
        return None
    if last is None or task.status not in (Status.DRAFT, Status.APPROVED):
        return None
    try:
        now = content_hashes(disk_reader(ref.path, ts))
    except CtbError as exc:
        return f"cannot check it against its approval: {exc}"
    stale = stale_criteria(lambda c: last.criteria[c].basis, now)
    if not stale and task.status == Status.APPROVED:
        return None
    if not stale:
        return f"approved in round {last.round}, then set back to draft; resubmit: ctb-review submit {ref.id}"
    return (
        f"changed after its approval in round {last.round}: reopens "
        f"{', '.join(c.label for c in stale)}; resubmit: ctb-review submit {ref.id}"
    )
