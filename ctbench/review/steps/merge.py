"""Merge: a maintainer merges a decided review branch into main, after the audit passes on it.

Only approved or discarded reviews are merged, by a maintainer listed on main who is not one of
the task's authors, with a signed merge commit that keeps the review history. A branch that
changes the files the audit trusts on main (``TRUST_FILES``: whose keys count, which branch is
main) is refused: merged, it would make every later forgery verify.
"""

from __future__ import annotations

from ctbench.approval.states import Action, IllegalTransition
from ctbench.commits import Trailer
from ctbench.errors import CtbError
from ctbench.model import Status
from ctbench.review.gitflow import branch_name, format_message
from ctbench.review.steps.desk import Desk, StepResult

TRUST_FILES = ("reviewers.yaml", "ctbench.yaml")
"""Files of a task set the audit trusts as committed on main; a review branch never changes them."""


def merge(desk: Desk, task_id: str, actor: str) -> StepResult:
    """Merge a decided review branch into the main branch (a merge commit keeps the review history)."""
    from ctbench.review.audit import audit_task
    from ctbench.review.view import read_at

    repo = desk.repo
    with repo.locked(f"merge {task_id}"):
        if (repo.git_dir / "MERGE_HEAD").exists():
            raise CtbError("a git merge is in progress in this working tree; finish it or git merge --abort")
        branch = branch_name(task_id)
        remote_tip = repo.fetch_branch(branch)
        local_tip = repo.rev(f"refs/heads/{branch}")
        tip = local_tip or remote_tip
        if local_tip and remote_tip and local_tip != remote_tip and repo.is_ancestor(local_tip, remote_tip):
            tip = remote_tip
        if not tip:
            raise CtbError(f"{task_id} has no review branch ({branch}) to merge")
        state = read_at(repo, tip, task_id)
        if state is None:
            raise CtbError(f"{branch} does not contain {task_id}")
        if state.status not in (Status.APPROVED, Status.DISCARDED):
            raise IllegalTransition(
                f"{task_id} is {state.status.value}: only approved or discarded reviews are "
                "merged (a discarded one is merged so the yield keeps counting it)"
            )
        _check_merger(desk, actor, task_id, state.authors)
        sign = repo.signing_options(actor)  # refused here, before any branch is switched
        item = audit_task(desk.ts, repo, state)
        if not item.ok:
            raise CtbError(f"{task_id} fails the audit, not merged: " + "; ".join(item.problems))
        _check_trust_files(desk, branch, tip)
        main = repo.main_branch
        dirty = repo.dirty_paths()
        if repo.current_branch() != main:
            if dirty:
                raise CtbError(
                    f"uncommitted changes in {', '.join(dirty[:5])}: commit or stash them before "
                    f"switching to {main} to merge"
                )
            repo.git("checkout", "--quiet", main)
            desk.notify(f"switched to branch {main}")
        main_remote = repo.fetch_branch(main)
        if main_remote:
            repo.catch_up(main, main_remote)
        result = StepResult(task_id, state.status, state.current.round if state.current else 0)
        head = repo.rev("HEAD")
        if head and repo.is_ancestor(tip, head):
            result.messages.append(f"{branch} is already merged into {main}")
            return result
        message = format_message(
            f"review({task_id}): merge {state.status.value} review",
            [
                (Trailer.TASK, task_id),
                (Trailer.FAMILY, state.family.value),
                (Trailer.ROUND, state.current.round if state.current else None),
                (Trailer.ACTION, Action.MERGE.value),
                (Trailer.REVIEWER, state.current.reviewer if state.current else None),
                (Trailer.STATUS, state.status.value),
                (Trailer.MERGED_BY, actor),
                (Trailer.ACTOR, actor),
            ],
        )
        msg_file = repo.state_dir / "merge-message.txt"
        repo.state_dir.mkdir(parents=True, exist_ok=True)
        msg_file.write_text(message, encoding="utf-8")
        try:
            repo.git(
                *(sign + ["merge", "-S"] if sign else ["merge"]),
                "--quiet",
                "--no-ff",
                "--file",
                str(msg_file),
                tip,
                env=repo.identity_env(actor),
            )
        except CtbError as exc:
            try:
                repo.git("merge", "--abort")
            except CtbError:
                pass
            raise CtbError(f"merging {branch} into {main} failed and was undone: {exc}") from None
        finally:
            msg_file.unlink(missing_ok=True)
        sha = repo.rev("HEAD")
        result.commits.append(sha or "")
        result.messages.append(f"merged {branch} into {main} ({(sha or '')[:10]})")
        if desk.push_enabled and repo.push(main):
            result.messages.append(f"pushed {main} to {repo.remote_name}")
        desk.ts = desk.ts.fresh()
        return result


def _check_trust_files(desk: Desk, branch: str, tip: str) -> None:
    """A review branch may not change the files the audit trusts on main (whose keys count, which
    branch is main): merged, they would make every later forgery verify."""
    repo = desk.repo
    main = repo.main_branch
    local, remote = repo.rev(f"refs/heads/{main}"), repo.rev(repo.remote_ref(main))
    base_of = remote if remote and (not local or repo.is_ancestor(local, remote)) else local
    if not base_of or not TRUST_FILES:
        return
    prefix = f"{repo.prefix}/" if repo.prefix not in ("", ".") else ""
    watched = [prefix + name for name in TRUST_FILES]
    base = repo.git("merge-base", base_of, tip).strip()
    changed = [p for p in repo.git("diff", "--name-only", base, tip, "--", *watched).split() if p]
    if changed:
        raise CtbError(
            f"{branch} changes {', '.join(changed)}: a review merges its task only; who is who, "
            f"their keys and the main branch change on {main} itself, by a maintainer"
        )


def _check_merger(desk: Desk, actor: str, task_id: str, authors: list[str]) -> None:
    """Roles come from the reviewers file on the main branch (the remote's when it is newer)."""
    from ctbench.review.assign import REVIEWERS_FILE, check_merger, parse_reviewers_file

    repo = desk.repo
    main = repo.main_branch
    local, remote = repo.rev(f"refs/heads/{main}"), repo.rev(repo.remote_ref(main))
    tip = remote if remote and (not local or repo.is_ancestor(local, remote)) else local
    rel = f"{repo.prefix}/{REVIEWERS_FILE}" if repo.prefix not in ("", ".") else REVIEWERS_FILE
    where = f"{rel} on {main}"
    data = repo.read_blob(tip, rel) if tip else None
    if data is None:
        raise CtbError(
            f"no {rel} on {main}: a merge needs the maintainers listed there "
            "(`maintainers: [{name: NAME}]`)"
        )
    check_merger(parse_reviewers_file(data.decode("utf-8"), where), where, actor, task_id, authors)
