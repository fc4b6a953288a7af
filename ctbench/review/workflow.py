"""The review steps behind one face, :class:`ReviewDesk`, shared by the command line and the Textual apps.

Each public method of :class:`ReviewDesk` is one step of the paper's pipeline (section 3.2, A.3):
submit, solve blind, reveal, rule on the four criteria, answer disagreements and resubmit,
discard, merge, and the maintainer's assignment and (un)sealing. Each step's rules live in a module
of its own under :mod:`ctbench.review.steps` (``submit``, ``blind``, ``reveal``, ``verdicts``,
``respond``, ``discard``, ``merge``, ``assignment``, ``seal``, ``checkout``), and what they share,
the review branch, the round record and its signed commit, in :mod:`ctbench.review.steps.desk`; the
methods here only delegate, so a caller imports one class and the step modules stay independent of
each other (an import-linter contract).

Blindness is structural: :meth:`ReviewDesk.begin_blind` and :meth:`ReviewDesk.record_blind` read the
visible task file, the recordings and the review records only. The first method that loads
``hidden.yaml`` is :meth:`ReviewDesk.reveal`, and it refuses unless the reviewer's blind answer is
already a commit in the branch history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ctbench.approval.records import Stance
from ctbench.approval.states import Criterion, Verdict
from ctbench.review.assign import Proposal
from ctbench.review.steps import assignment as assignment_step
from ctbench.review.steps import blind as blind_step
from ctbench.review.steps import checkout as checkout_step
from ctbench.review.steps import discard as discard_step
from ctbench.review.steps import merge as merge_step
from ctbench.review.steps import respond as respond_step
from ctbench.review.steps import reveal as reveal_step
from ctbench.review.steps import seal as seal_step
from ctbench.review.steps import submit as submit_step
from ctbench.review.steps import verdicts as verdicts_step
from ctbench.review.steps.blind import HONOUR_NOTE, BlindStart
from ctbench.review.steps.desk import Desk, StepResult
from ctbench.review.steps.reveal import Revealed

__all__ = ["HONOUR_NOTE", "BlindStart", "Revealed", "ReviewDesk", "StepResult"]


class ReviewDesk(Desk):
    """The review workflow over one task set in one git working tree."""

    # -------------------------------------------------------------- submit

    def submit(self, task_id: str, actor: str, why: str = "", *, reviewer: str | None = None) -> StepResult:
        """Open a review round on ``review/<ID>``; ``reviewer`` requests one (never an author of the task)."""
        return submit_step.submit(self, task_id, actor, why, reviewer=reviewer)

    # -------------------------------------------------------------- blind solve

    def begin_blind(self, task_id: str, actor: str) -> BlindStart:
        """Check the reviewer may solve this task blind now (on its branch); reads nothing hidden."""
        return blind_step.begin_blind(self, task_id, actor)

    def record_blind(
        self,
        start: BlindStart,
        answer: str,
        trajectory: bytes | None = None,
        *,
        commands: int | None = None,
        time_spent_s: float | None = None,
    ) -> StepResult:
        """Commit the blind answer and trajectory (and push them) before anything hidden is read."""
        return blind_step.record_blind(
            self, start, answer, trajectory, commands=commands, time_spent_s=time_spent_s
        )

    # -------------------------------------------------------------- reveal and verdicts

    def reveal(self, task_id: str, actor: str) -> tuple[Revealed, StepResult]:
        """Score the committed blind answer against the gold; the first step that reads ``hidden.yaml``."""
        return reveal_step.reveal(self, task_id, actor)

    def rule(
        self,
        task_id: str,
        actor: str,
        rulings: Mapping[Criterion, tuple[Verdict, str]],
        *,
        review_time_s: float | None = None,
    ) -> StepResult:
        """Record the reviewer's verdicts (one commit each) and move the task if consensus is decided."""
        return verdicts_step.rule(self, task_id, actor, rulings, review_time_s=review_time_s)

    # -------------------------------------------------------------- author's answer

    def respond(
        self, task_id: str, actor: str, replies: Mapping[Criterion, tuple[Stance, str]], why: str = ""
    ) -> StepResult:
        """Commit the author's revision, answer each disagreement, and resubmit as the next round."""
        return respond_step.respond(self, task_id, actor, replies, why)

    # -------------------------------------------------------------- discard and merge

    def discard(self, task_id: str, actor: str, reason: str) -> StepResult:
        """Discard the task; ``reason`` and the actor's role (author, reviewer, maintainer) go into the record."""
        return discard_step.discard(self, task_id, actor, reason)

    def merge(self, task_id: str, actor: str) -> StepResult:
        """Merge a decided review branch into the main branch (a merge commit keeps the review history)."""
        return merge_step.merge(self, task_id, actor)

    # -------------------------------------------------------------- assignment

    def apply_assignments(self, proposals: Iterable[Proposal], actor: str) -> list[StepResult]:
        """Record proposed reviewers in each task's current round (committed on its review branch)."""
        return assignment_step.apply_assignments(self, proposals, actor)

    # -------------------------------------------------------------- sealed gold

    def seal(self, task_ids: list[str], actor: str, *, commit: bool = True) -> StepResult:
        """Seal the plain hidden parts of ``task_ids`` (to their authors and the maintainers), one commit."""
        return seal_step.seal(self, task_ids, actor, commit=commit)

    def unseal(self, task_id: str, actor: str, reviewer: str) -> StepResult:
        """Add ``reviewer`` as a recipient of the sealed gold, once their blind commit is on the remote."""
        return seal_step.unseal(self, task_id, actor, reviewer)

    # -------------------------------------------------------------- navigation

    def checkout(self, task_id: str) -> StepResult:
        """Switch to a task's review branch (e.g. for the author to revise it); changes nothing else."""
        return checkout_step.checkout(self, task_id)
