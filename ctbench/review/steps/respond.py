"""Respond: the author answers each disagreement (concede and revise, or rebut) and resubmits.

The revision is committed first, then one commit per answer, then the next round opens: an
agreement whose parts did not change carries over, every other criterion is open again (reopened by
its changed parts). Past ``review.max_rounds`` the task can only be discarded.
"""

from __future__ import annotations

from collections.abc import Mapping

from ctbench.approval.hashes import CRITERION_PARTS, PART_TITLES, ContentHashes
from ctbench.approval.records import Comment, Stance, new_record
from ctbench.approval.states import (
    CRITERIA,
    Action,
    Criterion,
    IllegalTransition,
    Role,
    check_move,
    require_status,
)
from ctbench.commits import Trailer
from ctbench.errors import CtbError
from ctbench.model import Status
from ctbench.review.gitflow import branch_name
from ctbench.review.steps.desk import Desk, StepResult, next_round_criteria


def respond(
    desk: Desk, task_id: str, actor: str, replies: Mapping[Criterion, tuple[Stance, str]], why: str = ""
) -> StepResult:
    """Commit the author's revision, answer each disagreement, and resubmit as the next round."""
    for crit, (_stance, text) in replies.items():
        if not text.strip():
            raise CtbError(f"the answer on {crit.label} needs a comment")
    with desk.repo.locked(f"respond {task_id}"):
        ref, task, records = desk.enter(task_id, author_changes=True)
        require_status(task_id, task.status, (Status.NEEDS_REVISION,), "respond to the review of")
        if task.authors and actor not in task.authors:
            raise CtbError(
                f"{actor} is not an author of {task_id} ({', '.join(task.authors)}); "
                "only an author answers the reviewer"
            )
        record = records[-1]
        disagreed = record.disagreements()
        stray = [c.label for c in replies if c not in disagreed]
        if stray:
            raise CtbError(
                f"the reviewer did not disagree on {', '.join(stray)} in round {record.round}; "
                f"disagreements to answer: {', '.join(c.label for c in disagreed)}"
            )
        missing = [c for c in disagreed if c not in replies and record.criteria[c].author_stance() is None]
        if missing:
            names = ", ".join(c.value for c in missing)
            raise CtbError(
                f"answer every disagreement of round {record.round}: {names} "
                "(--concede CRITERION TEXT when you revised, --rebut CRITERION TEXT when the task "
                "is right as it is)"
            )
        if desk.max_rounds_reached(records):
            limit = desk.ts.config.review.max_rounds
            raise IllegalTransition(
                f"{task_id} has had {limit} review round(s), the maximum (review.max_rounds in ctbench.yaml); "
                f"without consensus it is discarded: ctb-review discard {task_id} --reason TEXT"
            )
        desk.refuse_gold_quotes(
            ref,
            task,
            {"--why": why, **{f"--{stance} {c.value}": text for c, (stance, text) in replies.items()}},
        )
        now_hashes = desk.hashes(ref)
        for crit, (stance, _text) in replies.items():
            crit_basis = record.criteria[crit].basis
            if stance == "concede" and not any(
                not now_hashes.same(p, crit_basis.get(p)) for p in CRITERION_PARTS[crit]
            ):
                titles = " or ".join(PART_TITLES[p] for p in CRITERION_PARTS[crit])
                raise CtbError(
                    f"you concede {crit.label}, but its {titles} did not change: revise the task "
                    f"first (on branch {branch_name(task_id)}), or --rebut if it is right as it is"
                )
        result = StepResult(task_id, task.status, record.round)
        rel = desk.repo.rel(ref.path)
        changed_files = [p for p in desk.repo.dirty_paths() if p.startswith(rel + "/")]
        changed_files += desk.repo.untracked_paths(rel)
        basis = record.comparison.hashes if record.comparison else ContentHashes()
        parts = [
            p
            for p in CRITERION_PARTS[Criterion.SOLVABILITY] + ("golden_actions", "metadata")
            if basis.get(p) and not now_hashes.same(p, basis.get(p))
        ]
        parts = list(dict.fromkeys(parts))
        if changed_files:
            when = desk.clock()
            record.note(actor, Role.AUTHOR, Action.REVISE, why or "revised after review", when=when)
            sha = desk.commit_step(
                ref,
                record,
                f"revised {', '.join(PART_TITLES[p] for p in parts) or 'task'} (round {record.round})",
                Action.REVISE,
                actor,
                add=[rel],
                extra=[(Trailer.PARTS, ",".join(parts) or None)],
                body=why,
            )
            if sha:
                result.commits.append(sha)
                result.messages.append(
                    f"committed the revision ({', '.join(parts) or 'no reviewed part'} changed)"
                )
        for crit in CRITERIA:
            if crit not in replies:
                continue
            stance, text = replies[crit]
            now = desk.clock()
            record.criteria[crit].thread.append(
                Comment(who=actor, role=Role.AUTHOR, when=now, stance=stance, text=text.strip())
            )
            record.note(actor, Role.AUTHOR, Action.RESPOND, text.strip(), crit, when=now)
            sha = desk.commit_step(
                ref,
                record,
                f"{crit.label}: author {stance}s (round {record.round})",
                Action.RESPOND,
                actor,
                criterion=crit,
                extra=[(Trailer.STANCE, stance)],
                body=text,
            )
            if sha:
                result.commits.append(sha)
        # The next round: agreements whose parts are unchanged carry over, everything else is open.
        now = desk.clock()
        nxt = new_record(task_id, task.family, record.round + 1, task.authors, now, reviewer=record.reviewer)
        nxt.criteria.update(next_round_criteria(record, now_hashes))
        nxt.note(actor, Role.AUTHOR, Action.RESUBMIT, why or "answered the review", when=now)
        check_move(task_id, task.status, Status.SUBMITTED)
        sha = desk.commit_step(
            ref,
            nxt,
            f"resubmitted for round {nxt.round}",
            Action.RESUBMIT,
            actor,
            status=Status.SUBMITTED,
        )
        if sha:
            result.commits.append(sha)
        result.status = Status.SUBMITTED
        result.round = nxt.round
        open_names = ", ".join(c.label for c in nxt.open_criteria())
        result.messages.append(f"{task_id} resubmitted for round {nxt.round}; open: {open_names}")
        desk.push_branch(task_id, result)
        return result
