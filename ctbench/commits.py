"""The words ctbench writes into git commits: trailer names and action names, for both commit writers.

The authoring layer (:func:`ctbench.authoring.editing.commit_message`) and review
(:func:`ctbench.review.gitflow.format_message`) both commit to the task repository, and review
statistics, the audit and crash recovery read the trailers back from ``git log``. With one
vocabulary a reader need not know which writer made a commit, and a renamed trailer cannot drift
between the two.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Literal

TRAILER_PREFIX = "Ctbench-"


class Trailer(StrEnum):
    """A trailer key without the prefix (``git log`` readers compare them case-insensitively)."""

    TASK = "Task"
    FAMILY = "Family"
    ROUND = "Round"
    ACTION = "Action"
    AUTHOR = "Author"
    REVIEWER = "Reviewer"
    CRITERION = "Criterion"
    STATUS = "Status"
    VERDICT = "Verdict"
    STANCE = "Stance"
    PARTS = "Parts"
    EXACT = "Exact"
    ANSWER_SHA256 = "Answer-Sha256"
    BLIND_ROUND = "Blind-Round"
    BLIND_COMMIT = "Blind-Commit"
    DISCARDED_BY = "Discarded-By"
    MERGED_BY = "Merged-By"
    SEALED_BY = "Sealed-By"
    UNSEALED_BY = "Unsealed-By"
    ACTOR = "Actor"
    """The person (id in reviewers.yaml) who took a review step: the signer the audit expects."""
    OP = "Op"
    """The journal id of a review commit, so a crashed step recognises a commit that had landed."""

    @property
    def full(self) -> str:
        """The key as written in the commit (``Ctbench-Task``)."""
        return f"{TRAILER_PREFIX}{self.value}"


TRAILER_TASK = Trailer.TASK.full
TRAILER_ACTION = Trailer.ACTION.full
TRAILER_AUTHOR = Trailer.AUTHOR.full


class ReviewAction(StrEnum):
    """What a review commit did; the value is the ``Ctbench-Action`` trailer."""

    SUBMIT = "submit"
    ASSIGN = "assign"
    BLIND = "blind"
    REVEAL = "reveal"
    VERDICT = "verdict"
    APPROVE = "approve"
    REQUEST_REVISION = "request-revision"
    REVISE = "revise"
    RESPOND = "respond"
    RESUBMIT = "resubmit"
    DISCARD = "discard"
    MERGE = "merge"
    SEAL = "seal"
    UNSEAL = "unseal"


AuthoringAction = Literal[
    "create",
    "edit",
    "duplicate",
    "delete",
    "add-recording",
    "replace-recording",
    "remove-recording",
    "add-golden",
    "remove-golden",
    "set-answer",
    "set-metadata",
]
"""What an authoring commit did, as written in its ``Ctbench-Action`` trailer."""


def trailer_lines(trailers: Iterable[tuple[str, str | int | None]]) -> list[str]:
    """``Ctbench-<key>: <value>`` lines; an empty or None value is left out, a value is kept on one line."""
    return [
        f"{TRAILER_PREFIX}{key}: {_one_line(str(value))}"
        for key, value in trailers
        if value is not None and str(value) != ""
    ]


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
