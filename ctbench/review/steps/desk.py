"""What every review step shares: the task set, its review branch, the round record and its signed commit.

A step (one module of :mod:`ctbench.review.steps`) checks the state machine, changes the task folder
(``status`` in ``task.yaml``, the round's record in ``reviews/``) and commits both on the task's
review branch with trailers, signed with the actor's key, in one commit (see
:mod:`ctbench.review.gitflow`). That plumbing lives here, once, so each step module holds only the
rules of its own step, and no step imports another (an import-linter contract in pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from ctbench.approval.hashes import CRITERION_PARTS, ContentHashes, content_hashes, disk_reader
from ctbench.approval.records import (
    CriterionReview,
    ReviewRecord,
    load_records,
    record_rel,
    render_record,
    utcnow,
)
from ctbench.approval.states import CRITERIA, Action, Criterion, Role, Verdict
from ctbench.commits import Trailer
from ctbench.errors import CtbError
from ctbench.model import Family, Status, TaskSpec
from ctbench.review.gitflow import Notify, ReviewRepo, branch_name, format_message
from ctbench.store import TASK_FILE, TaskNotFound, TaskRef, TaskSet
from ctbench.yamlio import dump_document, load_document

Clock = Callable[[], datetime]


@dataclass
class StepResult:
    """What a step did, for the CLI to print and the app to show."""

    task: str
    status: Status
    round: int
    commits: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


def step_message(
    task_id: str,
    family: Family,
    record: ReviewRecord,
    subject: str,
    action: Action,
    actor: str,
    *,
    status: Status | None = None,
    criterion: Criterion | None = None,
    extra: Iterable[tuple[str, str | int | None]] = (),
    body: str = "",
) -> str:
    """The commit message of a step on a round record: the subject and the trailers the audit reads."""
    trailers: list[tuple[str, str | int | None]] = [
        (Trailer.TASK, task_id),
        (Trailer.FAMILY, family.value),
        (Trailer.ROUND, record.round),
        (Trailer.ACTION, action.value),
        (Trailer.CRITERION, criterion.value if criterion else None),
        (Trailer.REVIEWER, record.reviewer),
        (Trailer.AUTHOR, actor if actor in record.authors else None),
        (Trailer.STATUS, status.value if status else None),
        (Trailer.ACTOR, actor),
        *extra,
    ]
    return format_message(f"review({task_id}): {subject}", trailers, body)


def role_of(actor: str, task: TaskSpec, record: ReviewRecord | None) -> Role:
    """The role ``actor`` acts in on ``task``: an author, the round's reviewer, else a maintainer."""
    if actor in task.authors:
        return Role.AUTHOR
    if record is not None and record.reviewer == actor:
        return Role.REVIEWER
    return Role.MAINTAINER


def saw_a_reveal(records: list[ReviewRecord], person: str) -> str | None:
    """Why ``person`` cannot solve blind any more: an earlier round's reveal to someone else is in the records.

    A revealed round's record is in every clone of the review branch: whoever reviews next could
    read it. On an unsealed set it holds the gold lines and golden actions; on a sealed set, only
    what :meth:`ReviewRecord.gold_readable_by` finds readable counts (a reveal sealed on every
    count leaves scores and counts, and a new reviewer of round 2 is still blind). The refusal
    comes before the blind answer (the first step of a reviewer, and of an assignment), not at the
    audit after the fact.
    """
    for r in records:
        shows = r.gold_readable_by(person)
        if shows is not None:
            return (
                f"round {r.round}'s reveal to {r.reviewer} is in the review records of {r.task} ({shows}): "
                f"{person} could read it, so their answer would not be blind; {r.reviewer} reviews the "
                "next rounds, or a maintainer discards the task"
            )
    return None


def next_round_criteria(
    prev: ReviewRecord, now: ContentHashes, *, after_approval: bool = False
) -> dict[Criterion, CriterionReview]:
    """How each criterion opens the round after ``prev``: carried over, or reopened by changed parts.

    An agreement whose parts are unchanged since its verdict carries over; every other criterion is
    open, its ``reopened_by`` naming the parts that changed. One rule for the author's resubmission
    (:mod:`ctbench.review.steps.respond`) and a re-review after approval
    (:mod:`ctbench.review.steps.submit`, ``after_approval``: every criterion of an approved round
    carries over unless its parts changed).
    """
    out: dict[Criterion, CriterionReview] = {}
    for crit in CRITERIA:
        was = prev.criteria[crit]
        changed = [p for p in CRITERION_PARTS[crit] if p in was.basis and not now.same(p, was.basis[p])]
        if not changed and (after_approval or was.verdict == Verdict.AGREE):
            out[crit] = CriterionReview(verdict=Verdict.AGREE, carried=True, basis=was.basis)
        else:
            out[crit] = CriterionReview(reopened_by=changed)
    return out


class Desk:
    """One task set in one git working tree, and the plumbing every review step goes through."""

    def __init__(
        self, ts: TaskSet, *, notify: Notify | None = None, clock: Clock = utcnow, push: bool = True
    ) -> None:
        self.notify: Notify = notify or (lambda _m: None)
        self.ts = ts
        self.repo = ReviewRepo(ts, notify=self.notify)
        self.clock = clock
        self.push_enabled = push

    def locate(self, task_id: str) -> Family:
        """The family of a task, from the working tree or else from its review branch."""
        try:
            return self.ts.ref(task_id).family
        except TaskNotFound:
            pass
        from ctbench.review.view import read_at

        tip = self.repo.review_branches().get(task_id) or self.repo.fetch_branch(branch_name(task_id))
        if tip:
            state = read_at(self.repo, tip, task_id)
            if state is not None:
                return state.family
        raise TaskNotFound(f"task {task_id!r} not found in {self.ts.root} nor on a review branch")

    def enter(
        self, task_id: str, *, create: bool = False, author_changes: bool = False
    ) -> tuple[TaskRef, TaskSpec, list[ReviewRecord]]:
        """Switch to the task's review branch and read the task and its round records there.

        ``create`` starts the branch from main; without ``author_changes``, uncommitted changes to
        the task folder are refused (a reviewer never changes the task).
        """
        family = self.locate(task_id)
        rel = self.repo.task_rel(family.value, task_id)
        self.repo.ensure_branch(
            task_id,
            rel,
            create_from=self.repo.main_branch if create else None,
            allow_task_changes=author_changes,
        )
        if not author_changes:
            dirty = [p for p in self.repo.dirty_paths() if p.startswith(rel + "/")]
            if dirty:
                raise CtbError(
                    f"uncommitted changes in {', '.join(dirty[:3])}: a reviewer never changes the task; "
                    f"revert them (git checkout -- {rel}) or let the author commit them"
                )
        self.ts = self.ts.fresh()  # the branch may carry other networks or configuration
        ref = self.ts.ref(task_id)
        return ref, self.load(ref), load_records(ref.path)

    def load(self, ref: TaskRef) -> TaskSpec:
        """The task with its authors as person ids (a legacy ``Name <email>`` author is mapped)."""
        task = self.ts.load_task(ref)
        task.authors = self.repo.people.author_ids(task.authors)
        return task

    def file_rel(self, ref: TaskRef, name: str) -> str:
        """``name`` inside the task folder, relative to the repository's working tree."""
        return self.repo.rel(ref.path) + "/" + name

    def _status_bytes(self, ref: TaskRef, status: Status) -> bytes:
        """task.yaml with only its ``status`` line changed (comments and layout kept)."""
        doc = load_document(ref.task_file)
        doc["status"] = status.value
        return dump_document(doc).encode("utf-8")

    def _record_bytes(self, ref: TaskRef, record: ReviewRecord) -> tuple[str, bytes]:
        path = ref.path / record_rel(record.round)
        existing = path.read_text(encoding="utf-8") if path.exists() else None
        return self.file_rel(ref, record_rel(record.round)), render_record(record, existing, path).encode(
            "utf-8"
        )

    def commit_step(
        self,
        ref: TaskRef,
        record: ReviewRecord,
        subject: str,
        action: Action,
        actor: str,
        *,
        status: Status | None = None,
        criterion: Criterion | None = None,
        files: Mapping[str, bytes] | None = None,
        add: Iterable[str] = (),
        extra: Iterable[tuple[str, str | int | None]] = (),
        body: str = "",
    ) -> str | None:
        """Commit the round record (and ``status``, ``files``, ``add``) as one signed step of ``actor``."""
        rel, data = self._record_bytes(ref, record)
        all_files = {rel: data, **(files or {})}
        if status is not None:
            all_files[self.file_rel(ref, TASK_FILE)] = self._status_bytes(ref, status)
        message = step_message(
            ref.id,
            ref.family,
            record,
            subject,
            action,
            actor,
            status=status,
            criterion=criterion,
            extra=extra,
            body=body,
        )
        return self.repo.commit(branch_name(ref.id), message, files=all_files, add=list(add), actor=actor)

    def push_branch(self, task_id: str, result: StepResult) -> None:
        """Push the task's review branch (unless pushing is off) and say so in ``result``."""
        if self.push_enabled and self.repo.push(branch_name(task_id)):
            result.messages.append(f"pushed {branch_name(task_id)} to {self.repo.remote_name}")

    def max_rounds_reached(self, records: list[ReviewRecord]) -> bool:
        """Rounds count from the start of the current review cycle (a re-review after approval starts anew)."""
        start = 0
        for r in records:
            if r.outcome == "approved":
                start = r.round
        used = (records[-1].round - start) if records else 0
        return used >= self.ts.config.review.max_rounds

    def hashes(self, ref: TaskRef) -> ContentHashes:
        """The content hashes of the task's reviewed parts as they are now on disk."""
        return content_hashes(disk_reader(ref.path, self.ts))

    def check_valid(self, ref: TaskRef) -> None:
        """Refuse a task that does not pass validation, with its first findings (a plug-in family's gold
        checked against the network by the family itself, as ``ctb-author validate`` and the run gate do)."""
        from ctbench.scoring.gold_check import PluginGoldCheck
        from ctbench.validation import Validator

        report = Validator(self.ts, gold_check=PluginGoldCheck(self.ts)).run([ref])
        errors = [f for f in report.errors if f.task in (ref.id, None)]
        if errors:
            shown = "\n  ".join(f.render() for f in errors[:8])
            more = f"\n  ... and {len(errors) - 8} more" if len(errors) > 8 else ""
            raise CtbError(f"{ref.id} does not pass validation; fix it before review:\n  {shown}{more}")

    # -------------------------------------------------------------- sealed gold in the records

    def seals_records(self, ref: TaskRef) -> bool:
        """Whether what the round record holds of the gold (the reveal, the blind answer) is sealed.

        It is whenever the task's gold is: a record in plain text would hand the gold to every clone.
        """
        return self.ts.is_sealed(ref)

    def comparison_keys(self, task: TaskSpec) -> dict[str, str]:
        """Who a sealed comparison is sealed to: the task's authors and the maintainers (id -> age key)."""
        from ctbench.people import PEOPLE_FILE
        from ctbench.sealing import initial_recipients

        listed = initial_recipients(self.ts.root / PEOPLE_FILE, list(task.authors))
        return {r.name: r.key for r in listed.recipients}

    def refuse_gold_quotes(
        self, ref: TaskRef, task: TaskSpec, texts: Mapping[str, str], *, unreadable_ok: bool = False
    ) -> None:
        """Refuse free text that quotes the sealed gold, before anything is committed or pushed.

        ``texts``: field (as the user typed it, e.g. ``--disagree answer_completeness``) -> text. On a
        sealed set the text goes into the record, the commit body and the trailers in plain text.
        ``unreadable_ok``: an actor who cannot open the gold (a maintainer discarding without their
        key) is not held up by this check; everyone else needs the gold for the step anyway.
        """
        if not self.seals_records(ref) or not any(t.strip() for t in texts.values()):
            return
        from ctbench.review.goldquote import GoldQuotes
        from ctbench.sealing import SealError

        try:
            nodes = [d.name for d in self.ts.network(task.network).devices]
        except CtbError:
            nodes = []
        try:
            hidden = self.ts.load_hidden(ref)
        except SealError:
            if unreadable_ok:
                return
            raise
        quotes = GoldQuotes(task.family, hidden, self.ts.taxonomy, nodes)
        for name, text in texts.items():
            which = quotes.quoted(text)
            if which is not None:
                raise CtbError(
                    f"{name}: the text quotes the sealed gold ({which} of {ref.id}) and was not "
                    "committed; say what is wrong without writing the answer (its recipients can read it)"
                )
