"""The review state machine: which status a task may move to, who moves it, and the four criteria.

The paper retains a task only when author and reviewer reach consensus on four criteria
(section 3.2): solvability, answer completeness, golden-action consistency and metadata correctness.
The status itself lives in ``task.yaml`` (:class:`ctbench.model.Status`) so every tool can read it
without knowing about reviews; this module is the single place that says which moves are legal, so
the CLI, the app and a hand-edited file are all judged by the same table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from ctbench.commits import ReviewAction as Action
from ctbench.errors import CtbError
from ctbench.model import Status


class Criterion(StrEnum):
    """The four consensus criteria of section 3.2, in the paper's order."""

    SOLVABILITY = "solvability"
    ANSWER_COMPLETENESS = "answer_completeness"
    GOLDEN_ACTION_CONSISTENCY = "golden_action_consistency"
    METADATA_CORRECTNESS = "metadata_correctness"

    @property
    def label(self) -> str:
        return self.value.replace("_", " ").replace("golden action", "golden-action")


CRITERIA: tuple[Criterion, ...] = tuple(Criterion)

_CRITERION_ALIASES = {
    "solvability": Criterion.SOLVABILITY,
    "solvable": Criterion.SOLVABILITY,
    "solve": Criterion.SOLVABILITY,
    "answer completeness": Criterion.ANSWER_COMPLETENESS,
    "completeness": Criterion.ANSWER_COMPLETENESS,
    "answer": Criterion.ANSWER_COMPLETENESS,
    "gold": Criterion.ANSWER_COMPLETENESS,
    "golden action consistency": Criterion.GOLDEN_ACTION_CONSISTENCY,
    "golden actions": Criterion.GOLDEN_ACTION_CONSISTENCY,
    "golden": Criterion.GOLDEN_ACTION_CONSISTENCY,
    "actions": Criterion.GOLDEN_ACTION_CONSISTENCY,
    "evidence": Criterion.GOLDEN_ACTION_CONSISTENCY,
    "consistency": Criterion.GOLDEN_ACTION_CONSISTENCY,
    "metadata correctness": Criterion.METADATA_CORRECTNESS,
    "metadata": Criterion.METADATA_CORRECTNESS,
    "meta": Criterion.METADATA_CORRECTNESS,
}


def parse_criterion(text: str) -> Criterion:
    """Accept the names reviewers actually type (``metadata``, ``golden-actions``, ``Completeness``)."""
    key = re.sub(r"[^a-z]+", " ", text.lower()).strip()
    try:
        return _CRITERION_ALIASES[key]
    except KeyError:
        names = ", ".join(c.value for c in CRITERIA)
        raise CtbError(
            f"unknown criterion {text!r}; expected one of: {names} "
            "(short forms: solvability, completeness, golden, metadata)"
        ) from None


class Verdict(StrEnum):
    """A reviewer's ruling on one criterion; ``open`` until ruled, and again when content changes."""

    OPEN = "open"
    AGREE = "agree"
    DISAGREE = "disagree"


class Role(StrEnum):
    AUTHOR = "author"
    REVIEWER = "reviewer"
    MAINTAINER = "maintainer"


@dataclass(frozen=True)
class Move:
    source: Status
    target: Status
    action: Action
    by: Role


# Every legal move. ``approved -> submitted`` is the re-review a later content change calls for
# (the reopened criteria are exactly those the change touches; see hashes.py).
MOVES: tuple[Move, ...] = (
    Move(Status.DRAFT, Status.SUBMITTED, Action.SUBMIT, Role.AUTHOR),
    Move(Status.APPROVED, Status.SUBMITTED, Action.SUBMIT, Role.AUTHOR),
    Move(Status.SUBMITTED, Status.IN_REVIEW, Action.BLIND, Role.REVIEWER),
    Move(Status.SUBMITTED, Status.IN_REVIEW, Action.REVEAL, Role.REVIEWER),
    Move(Status.IN_REVIEW, Status.NEEDS_REVISION, Action.REQUEST_REVISION, Role.REVIEWER),
    Move(Status.IN_REVIEW, Status.APPROVED, Action.APPROVE, Role.REVIEWER),
    Move(Status.NEEDS_REVISION, Status.SUBMITTED, Action.RESUBMIT, Role.AUTHOR),
    Move(Status.SUBMITTED, Status.DISCARDED, Action.DISCARD, Role.MAINTAINER),
    Move(Status.IN_REVIEW, Status.DISCARDED, Action.DISCARD, Role.MAINTAINER),
    Move(Status.NEEDS_REVISION, Status.DISCARDED, Action.DISCARD, Role.MAINTAINER),
    Move(Status.APPROVED, Status.DISCARDED, Action.DISCARD, Role.MAINTAINER),
)

_HINTS = {
    Status.DRAFT: "submit it first: ctb-review submit {id}",
    Status.SUBMITTED: "it waits for its reviewer (a blind solve: ctb-review blind {id}; a re-review: "
    "ctb-review reveal {id})",
    Status.IN_REVIEW: "the reviewer rules on the criteria next: ctb-review reveal {id}",
    Status.NEEDS_REVISION: "the author revises and answers next: ctb-review respond {id}",
    Status.APPROVED: "it is approved; after a content change resubmit it: ctb-review submit {id}",
    Status.DISCARDED: "it was discarded; discarded tasks stay discarded",
}


class IllegalTransition(CtbError):
    """A move the state machine forbids; the message says what the task's state allows instead."""


def targets(source: Status) -> list[Status]:
    return [m.target for m in MOVES if m.source == source]


def find_move(source: Status, target: Status) -> Move | None:
    for m in MOVES:
        if m.source == source and m.target == target:
            return m
    return None


def check_move(task_id: str, source: Status, target: Status) -> Move:
    """Return the move or refuse with what the current state allows (never a bare 'invalid')."""
    move = find_move(source, target)
    if move is None:
        allowed = ", ".join(t.value for t in targets(source)) or "nothing"
        raise IllegalTransition(
            f"{task_id} is {source.value}: it cannot become {target.value} (from {source.value} it may "
            f"become: {allowed}); {_HINTS[source].format(id=task_id)}"
        )
    return move


def require_status(task_id: str, status: Status, allowed: tuple[Status, ...], doing: str) -> None:
    """Refuse a command in a state where it makes no sense, naming the next sensible step."""
    if status not in allowed:
        want = " or ".join(s.value for s in allowed)
        raise IllegalTransition(
            f"cannot {doing} {task_id}: it is {status.value}, not {want}; {_HINTS[status].format(id=task_id)}"
        )


def consensus(verdicts: dict[Criterion, Verdict]) -> Status | None:
    """Where the verdicts of a round lead: approved, needs revision, or still in review (None)."""
    values = [verdicts.get(c, Verdict.OPEN) for c in CRITERIA]
    if all(v == Verdict.AGREE for v in values):
        return Status.APPROVED
    if Verdict.OPEN in values:
        return None
    return Status.NEEDS_REVISION
