"""Solve blind: the reviewer answers the task from what an agent sees, and the answer is committed first.

Blindness is structural: this step reads the visible task file, the recordings and the review
records only, never ``hidden.yaml``; the reveal (:mod:`ctbench.review.steps.reveal`) refuses until
the answer is a commit. On a sealed set the blind answer and trajectory are sealed like the gold (a
correct answer is the gold); on an unsealed one the solve is blind by honour (``HONOUR_NOTE``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ctbench.approval.hashes import disk_reader, sha256_bytes, sha256_text, visible_hashes
from ctbench.approval.records import BlindSolve, load_records, seal_fields, trajectory_name
from ctbench.approval.states import Action, Role, check_move, require_status
from ctbench.commits import Trailer
from ctbench.errors import CtbError
from ctbench.model import Status, TaskSpec
from ctbench.review.steps.desk import Desk, StepResult, saw_a_reveal
from ctbench.store import REVIEWS_DIR, TaskRef


@dataclass
class BlindStart:
    """A blind solve in progress: enough to build the replay session and to commit the answer."""

    task_id: str
    reviewer: str
    round: int
    started: datetime
    task: TaskSpec
    ref: TaskRef
    sealed: bool = False
    """Whether the gold is sealed in this clone (blind by seal) or plain text in it (blind by honour)."""


HONOUR_NOTE = (
    "{id}'s gold is not sealed: hidden.yaml is plain text in your clone, so this solve is blind by "
    "honour (nothing but your word keeps it unread); ctb-review seal --all seals a set"
)


def begin_blind(desk: Desk, task_id: str, actor: str) -> BlindStart:
    """Check the reviewer may solve this task blind now (on its branch); reads nothing hidden."""
    with desk.repo.locked(f"blind {task_id}"):
        return _begin_blind(desk, task_id, actor)


def record_blind(
    desk: Desk,
    start: BlindStart,
    answer: str,
    trajectory: bytes | None = None,
    *,
    commands: int | None = None,
    time_spent_s: float | None = None,
) -> StepResult:
    """Commit the blind answer and trajectory (and push them) before anything hidden is read."""
    with desk.repo.locked(f"blind {start.task_id}"):
        return _record_blind(desk, start, answer, trajectory, commands=commands, time_spent_s=time_spent_s)


def _begin_blind(desk: Desk, task_id: str, actor: str) -> BlindStart:
    ref, task, records = desk.enter(task_id)
    require_status(task_id, task.status, (Status.SUBMITTED, Status.IN_REVIEW), "solve blind")
    if actor in task.authors:
        raise CtbError(f"{actor} is an author of {task_id}; the blind solve must be done by another expert")
    if not records:
        raise CtbError(f"{task_id} has no review round; submit it first: ctb-review submit {task_id}")
    record = records[-1]
    if record.reviewer and record.reviewer != actor:
        raise CtbError(
            f"round {record.round} of {task_id} is assigned to {record.reviewer}, not {actor} "
            f"(reassign: ctb-review assign {task_id} --reviewer {actor} --apply)"
        )
    for r in records:
        if r.blind is not None and r.blind.reviewer == actor:
            raise CtbError(
                f"{actor} already solved {task_id} blind in round {r.round}; that answer stands "
                f"(a reviewer is blind only once): go on with ctb-review reveal {task_id}"
            )
    seen = saw_a_reveal(records, actor)
    if seen is not None:
        raise CtbError(seen)
    if record.blind is not None:
        raise CtbError(
            f"round {record.round} of {task_id} already has a blind answer by {record.blind.reviewer}"
        )
    return BlindStart(task_id, actor, record.round, desk.clock(), task, ref, desk.ts.is_sealed(ref))


def _record_blind(
    desk: Desk,
    start: BlindStart,
    answer: str,
    trajectory: bytes | None,
    *,
    commands: int | None,
    time_spent_s: float | None,
) -> StepResult:
    if not answer.strip():
        raise CtbError("the blind answer is empty; write one line per root cause or path")
    ref = start.ref
    records = load_records(ref.path)
    task = desk.load(ref)
    require_status(
        start.task_id, task.status, (Status.SUBMITTED, Status.IN_REVIEW), "record a blind answer for"
    )
    record = records[-1]
    if record.round != start.round or record.blind is not None:
        raise CtbError(
            f"round {start.round} of {start.task_id} changed while you solved it; nothing committed"
        )
    now = desk.clock()
    spent = time_spent_s if time_spent_s is not None else max(0.0, (now - start.started).total_seconds())
    files: dict[str, bytes] = {}
    traj_name: str | None = None
    if commands is None:
        commands = sum(1 for line in (trajectory or b"").splitlines() if line.strip())
    record.reviewer = start.reviewer
    record.started = record.started or start.started
    sealed_answer = None
    if desk.seals_records(ref):  # a correct blind answer is the gold: sealed like it
        keys = desk.comparison_keys(task)
        own = desk.repo.people.age_key(start.reviewer)
        if not own:
            raise CtbError(
                f"{start.task_id}'s gold is sealed, and so is the blind answer: add `age: age1...` "
                f"to {start.reviewer}'s entry under `people:` in {desk.repo.people.source} first"
            )
        lines = len([x for x in answer.splitlines() if x.strip()])
        sealed_answer = seal_fields({"answer": answer}, {**keys, start.reviewer: own}, {"lines": lines})
        if trajectory is not None:  # where the reviewer looked is a hint for a later reviewer
            from ctbench.sealing import seal

            traj_name = trajectory_name(record.round) + ".age"
            recipients = [k for _, k in sorted({**keys, start.reviewer: own}.items())]
            files[desk.file_rel(ref, f"{REVIEWS_DIR}/{traj_name}")] = bytes(
                seal(trajectory, recipients, armoured=True)
            )
    if trajectory is not None and traj_name is None:
        traj_name = trajectory_name(record.round)
        files[desk.file_rel(ref, f"{REVIEWS_DIR}/{traj_name}")] = trajectory
    record.blind = BlindSolve(
        reviewer=start.reviewer,
        started=start.started,
        submitted=now,
        time_spent_s=round(spent, 1),
        answer="" if sealed_answer else answer,
        answer_sha256=sealed_answer.sha256 if sealed_answer else sha256_text(answer),
        sealed_answer=sealed_answer,
        trajectory=traj_name,
        trajectory_sha256=sha256_bytes(trajectory) if trajectory is not None else None,
        commands=commands,
        visible=visible_hashes(disk_reader(ref.path)),
    )
    record.note(
        start.reviewer, Role.REVIEWER, Action.BLIND, "blind answer committed before the reveal", when=now
    )
    status = Status.IN_REVIEW if task.status == Status.SUBMITTED else None
    if status:
        check_move(start.task_id, task.status, status)
    sha = desk.commit_step(
        ref,
        record,
        f"blind answer by {start.reviewer} (round {record.round})",
        Action.BLIND,
        start.reviewer,
        status=status,
        files=files,
        extra=[(Trailer.ANSWER_SHA256, record.blind.answer_sha256)],
    )
    result = StepResult(start.task_id, Status.IN_REVIEW, record.round, [sha] if sha else [])
    result.messages.append(
        f"blind answer for {start.task_id} committed ({(sha or '')[:10]}); "
        f"sha256 {record.blind.answer_sha256[7:19]}..."
    )
    desk.push_branch(start.task_id, result)
    return result
