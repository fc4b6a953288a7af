"""Reviewer assignment and queues: who reviews what next.

Reviewers are described in a file beside the tasks (``tasks/reviewers.yaml``): their vendor and
domain expertise and how many reviews they take at once. Assignment is a proposal a maintainer can
apply, and it is deterministic: the same task set and file always give the same proposal.

The rules, in order: never an author of the task; never over capacity; among reviewers whose
expertise matches the task (a vendor of its devices, its family, or one of its tags) the least
loaded, then the best match, then by name; when nobody matches, the least loaded eligible reviewer,
flagged as such. Only the visible task is used (devices, family, tags): an assignment never hints
at the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field, ValidationError, field_validator

from ctbench.approval.states import Role, Verdict
from ctbench.errors import CtbError, validation_message
from ctbench.model import Status, Strict, unique_names
from ctbench.people import People, parse_people
from ctbench.people import Person as Identity
from ctbench.review.view import TaskState
from ctbench.store import TaskSet
from ctbench.yamlio import load_fast

REVIEWERS_FILE = "reviewers.yaml"
OPEN_STATES = (Status.SUBMITTED, Status.IN_REVIEW, Status.NEEDS_REVISION)


class Reviewer(Strict):
    name: str = Field(min_length=1)
    vendors: list[str] = Field(
        default_factory=list, description="Vendors the reviewer knows (Huawei, Cisco, ...)."
    )
    domains: list[str] = Field(
        default_factory=list,
        description="Task families (rca, path) and topics matching task tags (ospf, vrrp, ...).",
    )
    capacity: int = Field(default=3, ge=0, description="Reviews in progress at once.")
    age: str | None = Field(default=None, description="age public key (age1...), for sealed gold.")

    @field_validator("vendors", "domains")
    @classmethod
    def _fold(cls, values: list[str]) -> list[str]:
        return [v.strip() for v in values if v.strip()]


class Person(Strict):
    """A maintainer or an author: a name and, for sealed gold, an age public key."""

    name: str = Field(min_length=1)
    age: str | None = Field(default=None, description="age public key (age1...), for sealed gold.")


class ReviewersFile(Strict):
    """``reviewers.yaml``: who reviews (and knows what), who maintains, and everybody's age keys."""

    people: list[Identity] = Field(
        default_factory=list,
        description="Everybody, under one id: git names and emails, age recipient, SSH signing key.",
    )
    reviewers: list[Reviewer]
    maintainers: list[Person] = Field(
        default_factory=list,
        description="Who may merge a decided review (never their own task, unless solo).",
    )
    authors: list[Person] = Field(
        default_factory=list, description="Authors who do not review, listed for their age keys."
    )
    solo: bool = Field(
        default=False, description="A one-person repository: its maintainer merges their own tasks."
    )

    @field_validator("reviewers")
    @classmethod
    def _unique(cls, reviewers: list[Reviewer]) -> list[Reviewer]:
        return unique_names(reviewers, "reviewer")

    @field_validator("maintainers", "authors", mode="before")
    @classmethod
    def _names_alone(cls, people: object) -> object:
        """``maintainers: [maria]`` is short for ``maintainers: [{name: maria}]``."""
        if isinstance(people, list):
            return [{"name": p} if isinstance(p, str) else p for p in people]
        return people

    @field_validator("maintainers", "authors")
    @classmethod
    def _unique_people(cls, people: list[Person]) -> list[Person]:
        return unique_names(people, "person")

    def maintainer_names(self) -> list[str]:
        return [m.name for m in self.maintainers]

    def key_of(self, name: str) -> str | None:
        """The age public key listed for ``name`` (under ``people:`` or, older files, in a role entry)."""
        return self.directory().age_key(name)

    def directory(self) -> People:
        """The people of this file by id (:mod:`ctbench.people`), for identity and author checks."""
        return parse_people(self.model_dump(mode="json", exclude_none=True), REVIEWERS_FILE)


def load_reviewers_file(ts: TaskSet, path: Path | None = None) -> ReviewersFile:
    p = path or ts.root / REVIEWERS_FILE
    if not p.is_file():
        raise CtbError(
            f"{p}: no reviewers file; create it with one entry per reviewer and the maintainers, e.g.\n"
            "reviewers:\n  - {name: alice, vendors: [Huawei, Cisco], domains: [rca, ospf], capacity: 3}\n"
            "maintainers:\n  - {name: maria}"
        )
    try:
        return ReviewersFile.model_validate(load_fast(p))
    except ValidationError as exc:
        raise CtbError(f"{p}: {validation_message(exc, '')}") from None


def load_reviewers(ts: TaskSet, path: Path | None = None) -> list[Reviewer]:
    return load_reviewers_file(ts, path).reviewers


def parse_reviewers_file(text: str, where: str) -> ReviewersFile:
    try:
        return ReviewersFile.model_validate(load_fast(Path(where), text))
    except ValidationError as exc:
        raise CtbError(f"{where}: {validation_message(exc, '')}") from None


def check_merger(people: ReviewersFile, where: str, actor: str, task_id: str, authors: list[str]) -> None:
    """A merge needs a maintainer (reviewers file) who is not the task's author, unless the file says solo.

    The caller reads the file from the main branch: a review branch is the author's to edit, and
    roles granted there would let an author merge their own task.
    """
    names = people.maintainer_names()
    if not names:
        raise CtbError(
            f"{where} names no maintainers, and a merge needs one: add "
            "`maintainers: [{name: NAME}]` (a one-person repository adds `solo: true` too)"
        )
    if actor not in names:
        raise CtbError(
            f"{actor} is not a maintainer ({', '.join(names)} in {REVIEWERS_FILE}); "
            f"a maintainer merges {task_id}"
        )
    if actor in authors and not people.solo:
        raise CtbError(
            f"{actor} is an author of {task_id}: another maintainer merges it (or, in a one-person "
            f"repository, say so with `solo: true` in {REVIEWERS_FILE})"
        )


@dataclass
class Proposal:
    task: str
    round: int
    reviewer: str | None
    match: list[str] = field(default_factory=list)
    note: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "task": self.task,
            "round": self.round,
            "reviewer": self.reviewer,
            "match": self.match,
            "note": self.note,
        }


def task_vendors(ts: TaskSet, state: TaskState) -> list[str]:
    try:
        net = ts.network(state.network)
    except CtbError:
        return []
    allowed = set(state.accessible) if state.accessible is not None else None
    return sorted({d.vendor for d in net.devices if allowed is None or d.name in allowed})


def current_load(states: list[TaskState]) -> dict[str, int]:
    """Open reviews per reviewer: rounds in progress whose reviewer is set."""
    load: dict[str, int] = {}
    for s in states:
        if s.status in OPEN_STATES and s.current and s.current.reviewer:
            load[s.current.reviewer] = load.get(s.current.reviewer, 0) + 1
    return load


def propose(
    ts: TaskSet,
    states: list[TaskState],
    reviewers: list[Reviewer],
    *,
    only: list[str] | None = None,
    force: dict[str, str] | None = None,
) -> list[Proposal]:
    """A reviewer for every submitted task whose current round has none (or the ``only`` tasks)."""
    load = current_load(states)
    names = {r.name for r in reviewers}
    out: list[Proposal] = []
    for s in sorted(states, key=lambda x: _natural(x.id)):  # the same proposal whatever the input order
        if only is not None and s.id not in only:
            continue
        if s.status != Status.SUBMITTED or s.current is None:
            continue
        if s.current.reviewer and not (force and s.id in force):
            continue
        if force and s.id in force:
            name = force[s.id]
            if name in s.authors:
                raise CtbError(f"{name} is an author of {s.id} and cannot review it")
            if name not in names:
                raise CtbError(f"{name} is not in the reviewers file")
            out.append(Proposal(s.id, s.current.round, name, note="assigned by hand"))
            load[name] = load.get(name, 0) + 1
            continue
        vendors = {v.lower() for v in task_vendors(ts, s)}
        topics = {s.family.value, *(t.lower() for t in s.tags)}
        ranked: list[tuple[tuple[int, int, float, str], Reviewer, list[str]]] = []
        for r in reviewers:
            if r.name in s.authors or load.get(r.name, 0) >= r.capacity:
                continue
            v_hit = sorted(v for v in r.vendors if v.lower() in vendors)
            d_hit = sorted(d for d in r.domains if d.lower() in topics)
            coverage = len(v_hit) / len(vendors) if vendors else 0.0
            qualified = 0 if (v_hit or d_hit) else 1
            match = round(coverage + 0.5 * len(d_hit), 6)  # a family or topic weighs half the vendor set
            ranked.append(((qualified, load.get(r.name, 0), -match, r.name), r, v_hit + d_hit))
        if not ranked:
            out.append(
                Proposal(
                    s.id,
                    s.current.round,
                    None,
                    note="nobody eligible (every reviewer is an author or at capacity)",
                )
            )
            continue
        ranked.sort(key=lambda x: x[0])
        key, best, hits = ranked[0]
        load[best.name] = load.get(best.name, 0) + 1
        out.append(
            Proposal(
                s.id,
                s.current.round,
                best.name,
                hits,
                note="" if key[0] == 0 else "no expertise match; least loaded eligible reviewer",
            )
        )
    return out


def _natural(text: str) -> list[object]:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", text)]


@dataclass
class QueueItem:
    task: str
    family: str
    status: str
    round: int
    who: str
    role: str
    next: str

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


def queue(
    states: list[TaskState], person: str | None = None, rereview: dict[str, str] | None = None
) -> list[QueueItem]:
    """What waits for each reviewer and author (or for one person).

    ``rereview`` (task id -> reason) names approved tasks changed since their approval: they wait
    for their authors to resubmit them.
    """
    out: list[QueueItem] = []
    for s in states:
        why = (rereview or {}).get(s.id)
        if why and s.status in (Status.DRAFT, Status.APPROVED):
            for author in s.authors or ["(no author)"]:
                if person in (None, author):
                    out.append(
                        QueueItem(
                            s.id,
                            s.family.value,
                            f"{s.status.value} (needs re-review)",
                            s.current.round if s.current else 0,
                            author,
                            Role.AUTHOR.value,
                            why,
                        )
                    )
            continue
        rec = s.current
        if rec is None or s.status not in OPEN_STATES:
            continue
        if s.status == Status.NEEDS_REVISION:
            for author in s.authors or ["(no author)"]:
                if person in (None, author):
                    names = ", ".join(c.value for c in rec.disagreements())
                    out.append(
                        QueueItem(
                            s.id,
                            s.family.value,
                            s.status.value,
                            rec.round,
                            author,
                            Role.AUTHOR.value,
                            f"revise and answer ({names}): ctb-review respond {s.id}",
                        )
                    )
            continue
        reviewer = rec.reviewer
        if reviewer is None:
            if person is None or person not in s.authors:
                out.append(
                    QueueItem(
                        s.id,
                        s.family.value,
                        s.status.value,
                        rec.round,
                        person or "(unassigned)",
                        Role.REVIEWER.value,
                        f"unassigned: ctb-review assign, or take it: ctb-review blind {s.id}",
                    )
                )
            continue
        if person not in (None, reviewer):
            continue
        solved = any(r.blind is not None and r.blind.reviewer == reviewer for r in s.records)
        if not solved:
            step = f"solve blind: ctb-review blind {s.id}"
        elif rec.comparison is None:
            step = f"reveal and rule: ctb-review reveal {s.id}"
        else:
            left = [c.value for c, cr in rec.criteria.items() if cr.verdict == Verdict.OPEN]
            step = f"rule on {', '.join(left)}: ctb-review reveal {s.id}"
        out.append(
            QueueItem(s.id, s.family.value, s.status.value, rec.round, reviewer, Role.REVIEWER.value, step)
        )
    return out
