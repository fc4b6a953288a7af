"""Seal and unseal: gold sealed to its authors and maintainers, opened to a reviewer after their blind answer.

Sealing commits ``hidden.yaml.age`` and its recipients in place of a plain ``hidden.yaml``;
unsealing adds the reviewer as a recipient, naming the blind commit it comes after (the audit
checks that order).
"""

from __future__ import annotations

from ctbench.approval.states import Action
from ctbench.commits import Trailer
from ctbench.errors import CtbError
from ctbench.model import Status
from ctbench.review.gitflow import branch_name, format_message
from ctbench.review.steps.desk import Desk, StepResult


def seal(desk: Desk, task_ids: list[str], actor: str, *, commit: bool = True) -> StepResult:
    """Seal the plain hidden parts of ``task_ids`` (to their authors and the maintainers), one commit."""
    from ctbench.sealing import RECIPIENTS_FILE

    with desk.repo.locked("seal"):
        result = StepResult(",".join(task_ids), Status.DRAFT, 0)
        add: list[str] = []
        for task_id in task_ids:
            ref = desk.ts.ref(task_id)
            task = desk.load(ref)
            if desk.ts.seal_folder(ref.path, list(task.authors)):
                rel = desk.repo.rel(ref.path)
                add += [f"{rel}/{name}" for name in ("hidden.yaml", "hidden.yaml.age", RECIPIENTS_FILE)]
                result.messages.append(
                    f"{task_id}: gold sealed for {', '.join(task.authors) or 'nobody'} and the maintainers"
                )
            else:
                result.messages.append(f"{task_id}: already sealed")
        if add and commit:
            branch = desk.repo.current_branch()
            if branch is None:
                raise CtbError("HEAD is detached: check out a branch to commit the sealed gold on")
            message = format_message(
                f"review: seal the gold of {len(task_ids)} task(s)",
                [
                    (Trailer.TASK, task_ids[0] if len(task_ids) == 1 else None),
                    (Trailer.ACTION, Action.SEAL.value),
                    (Trailer.SEALED_BY, actor),
                    (Trailer.ACTOR, actor),
                ],
            )
            sha = desk.repo.commit(branch, message, add=add, actor=actor)
            if sha:
                result.commits.append(sha)
                result.messages.append(
                    f"committed {sha[:10]}; a plain hidden.yaml committed earlier stays in "
                    "the history (seal before the first commit: review.seal_gold)"
                )
        return result


def unseal(desk: Desk, task_id: str, actor: str, reviewer: str) -> StepResult:
    """Add ``reviewer`` as a recipient of the sealed gold, once their blind commit is on the remote."""
    from ctbench.review.assign import load_reviewers_file
    from ctbench.sealing import RECIPIENTS_FILE, Recipient

    with desk.repo.locked(f"unseal {task_id}"):
        ref, task, records = desk.enter(task_id)
        if not desk.ts.is_sealed(ref):
            raise CtbError(f"{task_id}'s gold is not sealed (plain hidden.yaml): there is nothing to unseal")
        people = load_reviewers_file(desk.ts)
        if actor not in task.authors and actor not in people.maintainer_names():
            raise CtbError(
                f"{actor} is neither an author of {task_id} nor a maintainer: the author or a "
                "maintainer unseals the gold for a reviewer"
            )
        if reviewer in task.authors:
            raise CtbError(f"{reviewer} is an author of {task_id}, already a recipient")
        blinds = [
            e
            for e in desk.repo.log("HEAD", task=task_id)
            if e.action == Action.BLIND.value and e.get("reviewer") == reviewer
        ]
        if not blinds:
            raise CtbError(
                f"no blind commit by {reviewer} for {task_id}: the gold is unsealed for a reviewer "
                f"only after their blind answer is committed and pushed (ctb-review blind {task_id})"
            )
        blind = blinds[-1]  # the oldest: their first (and only) blind solve
        if desk.repo.has_remote():
            remote_tip = desk.repo.fetch_branch(branch_name(task_id))
            if not remote_tip or not desk.repo.is_ancestor(blind.sha, remote_tip):
                raise CtbError(
                    f"{reviewer}'s blind commit {blind.sha[:10]} is not on {desk.repo.remote_name} "
                    f"yet: the gold is unsealed only after it is (the reviewer pushes it)"
                )
        key = people.key_of(reviewer)
        if not key:
            raise CtbError(f"no age public key for {reviewer} in the reviewers file (add `age: age1...`)")
        desk.ts.add_recipient(
            ref.path, Recipient(name=reviewer, role="reviewer", key=key, after_blind=blind.sha)
        )
        rel = desk.repo.rel(ref.path)
        message = format_message(
            f"review({task_id}): unseal the gold for {reviewer}",
            [
                (Trailer.TASK, task_id),
                (Trailer.FAMILY, task.family.value),
                (Trailer.ROUND, records[-1].round if records else None),
                (Trailer.ACTION, Action.UNSEAL.value),
                (Trailer.REVIEWER, reviewer),
                (Trailer.BLIND_COMMIT, blind.sha),
                (Trailer.UNSEALED_BY, actor),
                (Trailer.ACTOR, actor),
            ],
        )
        sha = desk.repo.commit(
            branch_name(task_id),
            message,
            add=[f"{rel}/hidden.yaml.age", f"{rel}/{RECIPIENTS_FILE}"],
            actor=actor,
        )
        result = StepResult(
            task_id,
            task.status,
            records[-1].round if records else 0,
            [sha] if sha else [],
            [f"{task_id}: gold unsealed for {reviewer} (after blind commit {blind.sha[:10]})"],
        )
        desk.push_branch(task_id, result)
        return result
