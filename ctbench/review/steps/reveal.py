"""Reveal: the reviewer's committed blind answer is compared with the gold, the first read of ``hidden.yaml``.

The step refuses until the reviewer's blind answer is a commit in the branch history (and pushes
it first, so the remote holds the answer before the gold is shown). The comparison is judged by
:mod:`ctbench.review.blind_judge` (the one judge of :mod:`ctbench.scoring`); on a sealed set it goes into
the round record sealed to the task's authors and the maintainers, and the reviewer's view is
recomputed on screen, never committed in plain text.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctbench.approval.records import BlindSolve, Comparison, ReviewRecord
from ctbench.approval.states import Action, Role, check_move, require_status
from ctbench.commits import Trailer
from ctbench.errors import CtbError
from ctbench.model import HiddenSpec, Status, TaskSpec
from ctbench.review.steps.desk import Desk, StepResult
from ctbench.sealing import identity_path
from ctbench.store import REVIEWS_DIR


@dataclass
class Revealed:
    """Everything the reveal screen shows; the first object in a review that holds hidden data."""

    task: TaskSpec
    hidden: HiddenSpec
    record: ReviewRecord
    comparison: Comparison
    blind: BlindSolve


def reveal(desk: Desk, task_id: str, actor: str) -> tuple[Revealed, StepResult]:
    """Score the committed blind answer against the gold; the first step that reads ``hidden.yaml``."""
    from ctbench.review.blind_judge import judge_blind, trajectory_lines

    with desk.repo.locked(f"reveal {task_id}"):
        ref, task, records = desk.enter(task_id)
        require_status(task_id, task.status, (Status.IN_REVIEW, Status.SUBMITTED), "reveal the gold of")
        if actor in task.authors:
            raise CtbError(f"{actor} is an author of {task_id}; the reveal belongs to its reviewer")
        record = records[-1]
        if record.reviewer and record.reviewer != actor:
            raise CtbError(f"round {record.round} of {task_id} is reviewed by {record.reviewer}, not {actor}")
        found = _blind_of(records, actor)
        if found is None:
            raise CtbError(
                f"no blind answer by {actor} is committed for {task_id}: the gold stays hidden "
                f"until you solve it blind (ctb-review blind {task_id})"
            )
        blind_round, blind = found
        commits = [
            e
            for e in desk.repo.log("HEAD", task=task_id)
            if e.action == Action.BLIND.value and e.round == blind_round and e.get("reviewer") == actor
        ]
        if not commits:
            raise CtbError(
                f"the blind answer of round {blind_round} for {task_id} is not committed; the gold "
                f"stays hidden until it is (rerun ctb-review blind {task_id})"
            )
        result = StepResult(task_id, task.status, record.round)
        if desk.push_enabled and desk.repo.has_remote():
            desk.push_branch(task_id, result)  # the remote holds the blind answer before the gold is shown
        hidden = desk.ts.load_hidden(ref)
        sealed = desk.seals_records(ref)
        shown = record.comparison
        if record.comparison is None or record.comparison.sealed is not None:
            now = desk.clock()
            traj = None
            if blind.trajectory:
                path = ref.path / REVIEWS_DIR / blind.trajectory
                traj = path.read_bytes() if path.is_file() else None
                if traj is not None and blind.trajectory.endswith(".age"):
                    from ctbench.sealing import unseal

                    traj = unseal(traj, identity_path(desk.ts.identity), f"{task_id}'s blind trajectory")
            side = judge_blind(
                desk.ts,
                task,
                hidden,
                blind.plain_answer(identity_path(desk.ts.identity), f"{task_id}'s blind answer"),
                trajectory_lines(traj),
                time_spent_s=blind.time_spent_s,
            )
            shown = Comparison(
                revealed_at=now,
                revealed_by=actor,
                parse_status=side.parsed.status,
                exact=side.exact,
                scores=side.scores,
                invalid_lines=list(side.parsed.invalid_lines),
                gold_lines=side.gold_lines,
                blind_lines=side.blind_lines,
                golden_covered=side.golden_covered,
                golden_missed=side.golden_missed,
                extra_commands=side.extra_commands,
                metadata=side.metadata,
                hashes=desk.hashes(ref),
            )
            if record.comparison is not None:  # sealed in the record: the reviewer sees it recomputed
                shown = shown.model_copy(
                    update={
                        "revealed_at": record.comparison.revealed_at,
                        "hashes": record.comparison.hashes,
                    }
                )
        if record.comparison is None:
            assert shown is not None
            # on a sealed set the gold-derived half is committed sealed to the authors and the
            # maintainers: the reviewer's view is on screen only (issue 26, sealed stays sealed)
            record.comparison = shown.sealed_to(desk.comparison_keys(task)) if sealed else shown
            record.reviewer = actor
            record.started = record.started or now
            if blind_round != record.round:
                record.blind_round = blind_round
            status = None
            if task.status == Status.SUBMITTED:
                check_move(task_id, task.status, Status.IN_REVIEW)
                status = Status.IN_REVIEW
            record.note(
                actor,
                Role.REVIEWER,
                Action.REVEAL,
                f"gold revealed after the blind answer of round {blind_round}",
                when=now,
            )
            sha = desk.commit_step(
                ref,
                record,
                f"reveal to {actor} (round {record.round})",
                Action.REVEAL,
                actor,
                status=status,
                extra=[
                    (Trailer.BLIND_ROUND, blind_round),
                    (Trailer.EXACT, "yes" if shown.exact else "no"),
                ],
            )
            if sha:
                result.commits.append(sha)
            result.status = Status.IN_REVIEW
            desk.push_branch(task_id, result)
        assert shown is not None
        return Revealed(task, hidden, record, shown, blind), result


def _blind_of(records: list[ReviewRecord], actor: str) -> tuple[int, BlindSolve] | None:
    """The round and answer of ``actor``'s blind solve: a reviewer solves a task blind once, in any round."""
    for r in records:
        if r.blind is not None and r.blind.reviewer == actor:
            return r.round, r.blind
    return None
