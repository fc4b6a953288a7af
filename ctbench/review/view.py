"""Where each task's review stands, wherever it lives: the working tree or a review branch.

A task under review lives on its branch ``review/<ID>`` until it is merged; a brand-new task may not
exist on the main branch at all. The queue, the assignment, the statistics and the audit therefore
read each task from the newest place that holds it: the working tree when the task's branch is
checked out or already merged into HEAD, otherwise the tip of its review branch (local, or fetched
from the remote). Only the visible ``task.yaml`` and the review records are read here; ``hidden.yaml``
never is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ctbench.approval.records import (
    ReviewRecord,
    load_records,
    parse_record,
    record_name,
    round_numbers_from_names,
)
from ctbench.errors import CtbError
from ctbench.model import Family, Status, TaskSpec
from ctbench.people import People, people_of
from ctbench.review.gitflow import BRANCH_PREFIX, ReviewRepo
from ctbench.store import REVIEWS_DIR, TASK_FILE, TaskSet
from ctbench.yamlio import load_fast


@dataclass
class TaskState:
    """One task's visible identity, status and review rounds, plus where they were read from."""

    id: str
    family: Family
    status: Status
    title: str
    authors: list[str]
    tags: list[str]
    network: str
    accessible: list[str] | None
    records: list[ReviewRecord] = field(default_factory=list)
    rev: str | None = None  # commit the state was read from; None = working tree
    rel: str = ""  # repository-relative task folder (or the task-set-relative one without git)

    @property
    def current(self) -> ReviewRecord | None:
        return self.records[-1] if self.records else None

    @property
    def source(self) -> str:
        return f"{BRANCH_PREFIX}{self.id}@{self.rev[:10]}" if self.rev else "working tree"

    def reviewers(self) -> list[str]:
        seen: list[str] = []
        for r in self.records:
            if r.reviewer and r.reviewer not in seen:
                seen.append(r.reviewer)
        return seen


def _state(
    task: TaskSpec, records: list[ReviewRecord], rev: str | None, rel: str, people: People
) -> TaskState:
    return TaskState(
        id=task.id,
        family=task.family,
        status=task.status,
        title=task.title,
        authors=people.author_ids(task.authors),  # by id, whatever form the task file records
        tags=list(task.tags),
        network=task.network,
        accessible=list(task.accessible) if task.accessible is not None else None,
        records=records,
        rev=rev,
        rel=rel,
    )


def read_worktree(ts: TaskSet, task_id: str, rel: str = "", people: People | None = None) -> TaskState:
    ref = ts.ref(task_id)
    task = ts.load_task(ref)
    who = people if people is not None else people_of(ts.root)
    return _state(task, load_records(ref.path), None, rel or f"{ref.family.value}/{ref.id}", who)


def read_at(repo: ReviewRepo, rev: str, task_id: str) -> TaskState | None:
    """A task as committed at ``rev`` (visible file and review records only), of any installed family."""
    for fam in Family:
        rel = repo.task_rel(fam.value, task_id)
        data = repo.read_blob(rev, f"{rel}/{TASK_FILE}")
        if data is None:
            continue
        where = Path(f"{rel}/{TASK_FILE}@{rev[:10]}")
        try:
            task = TaskSpec.model_validate(load_fast(where, data.decode("utf-8")))
        except ValidationError as exc:
            raise CtbError(f"{where}: {exc.errors()[0]['msg']}") from None
        records = []
        for n in round_numbers_from_names(repo.list_dir(rev, f"{rel}/{REVIEWS_DIR}")):
            text = repo.read_blob(rev, f"{rel}/{REVIEWS_DIR}/{record_name(n)}")
            if text is not None:
                records.append(
                    parse_record(text.decode("utf-8"), f"{rel}/{REVIEWS_DIR}/{record_name(n)}@{rev[:10]}")
                )
        return _state(task, records, rev, rel, repo.people)
    return None


def collect(
    ts: TaskSet, repo: ReviewRepo | None, *, skipped: Callable[[str], None] | None = None
) -> list[TaskState]:
    """Every task of the set with its newest review state, sorted by family and id."""
    report = skipped or (lambda _msg: None)
    out: dict[str, TaskState] = {}
    branches: dict[str, str] = {}
    merged: set[str] = set()
    current: str | None = None
    if repo is not None:
        branches = repo.review_branches()
        merged = repo.merged_tips("HEAD")
        current = repo.current_branch()
    head = repo.rev("HEAD") if repo is not None else None
    people = repo.people if repo is not None else people_of(ts.root)
    for ref in ts.refs():
        tip = branches.get(ref.id)
        if tip and current != f"{BRANCH_PREFIX}{ref.id}" and tip not in merged:
            continue  # the branch is newer than the working tree: read below
        if (
            repo is not None
            and tip
            and head
            and current == f"{BRANCH_PREFIX}{ref.id}"
            and tip != head
            and repo.is_ancestor(head, tip)
        ):
            continue  # checked out here but behind the remote: the remote's tip is the truth, read below
        try:
            rel = repo.task_rel(ref.family.value, ref.id) if repo else f"{ref.family.value}/{ref.id}"
            out[ref.id] = read_worktree(ts, ref.id, rel, people)
        except CtbError as exc:
            report(f"{ref.id}: {exc}")
    if repo is not None:
        for task_id, tip in branches.items():
            if task_id in out or not tip:
                continue
            try:
                state = read_at(repo, tip, task_id)
            except CtbError as exc:
                report(f"{task_id}: {exc}")
                continue
            if state is not None:
                out[task_id] = state
    order = {f: i for i, f in enumerate(Family)}  # the built-ins, then installed plug-ins by name
    return sorted(out.values(), key=lambda s: (order.get(s.family, len(order)), s.family, _natural(s.id)))


def _natural(text: str) -> list[object]:
    import re

    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", text)]
