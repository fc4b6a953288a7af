"""Review records: one YAML file per review round, kept in the task folder (``reviews/round-NN.yaml``).

A record is the durable memory of a round: who reviewed, when, the blind answer and its hash, the
blind trajectory, the comparison with the gold, and for each criterion the verdict with its comment
thread. Every change appends a provenance entry (who, role, when, what, why), in the file and in the
commit trailers, so a record read on its own tells its story without git.

Files are written through :mod:`ctbench.yamlio`: merged into the existing document so that a new
verdict changes a few lines of the diff, and replaced atomically so a crash never leaves half a file.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from ctbench.approval.hashes import HIDDEN_PARTS, KEYED, ContentHashes, sha256_bytes, sha256_text
from ctbench.approval.states import CRITERIA, Action, Criterion, Role, Verdict
from ctbench.errors import CtbError, validation_message
from ctbench.model import Family, Strict
from ctbench.store import REVIEWS_DIR
from ctbench.yamlio import dump_document, load_document, load_fast, merge_into, to_commented

RECORD_VERSION = 1
_ROUND_FILE = re.compile(r"^round-(\d{2,})\.yaml$")

Outcome = Literal["open", "approved", "needs_revision", "discarded"]
Stance = Literal["concede", "rebut"]


def utcnow() -> datetime:
    """Whole seconds in UTC: records are read by people, and sub-second noise only bloats diffs."""
    return datetime.now(UTC).replace(microsecond=0)


class Provenance(Strict):
    """Who changed the record, in which role, when, doing what and why (inspect_ai-style provenance)."""

    who: str
    role: Role
    when: datetime
    action: Action
    why: str = ""
    criterion: Criterion | None = None


class Comment(Strict):
    """One entry of a criterion's thread: a reviewer ruling or an author's answer to it."""

    who: str
    role: Role
    when: datetime
    verdict: Verdict | None = Field(default=None, description="The reviewer's ruling this comment gives.")
    stance: Stance | None = Field(
        default=None, description="Author only: concede (the reviewer is right, revised) or rebut."
    )
    text: str = ""


class CriterionReview(Strict):
    verdict: Verdict = Verdict.OPEN
    carried: bool = Field(default=False, description="Agreed in an earlier round; its parts are unchanged.")
    reopened_by: list[str] = Field(
        default_factory=list, description="Parts whose change since the last agreement reopened it."
    )
    basis: dict[str, str] = Field(
        default_factory=dict, description="Hashes of the parts the verdict was given on."
    )
    thread: list[Comment] = Field(default_factory=list)

    def carry_note(self) -> str:
        """Why the criterion starts where it does: carried over, or reopened by changed parts.

        One wording for the reveal (text and app) and the pull-request description, so a reader
        who meets the note in two places sees the same words.
        """
        if self.carried:
            return "carried from an earlier round"
        if self.reopened_by:
            return f"reopened: {', '.join(self.reopened_by)} changed"
        return ""

    def last_reviewer_comment(self) -> Comment | None:
        for c in reversed(self.thread):
            if c.role == Role.REVIEWER:
                return c
        return None

    def author_stance(self) -> Stance | None:
        """The author's latest answer, if it came after the reviewer's latest ruling."""
        for c in reversed(self.thread):
            if c.role == Role.REVIEWER:
                return None
            if c.role == Role.AUTHOR and c.stance:
                return c.stance
        return None


SEALED_FIELDS = (
    "gold_lines",
    "blind_lines",
    "invalid_lines",
    "golden_covered",
    "golden_missed",
    "extra_commands",
    "metadata",
)
"""The parts of a comparison that show the gold: sealed on a sealed set, never committed in plain text.

The blind lines are among them: next to ``exact: yes`` a correct blind answer *is* the gold."""


class SealedGold(Strict):
    """Something that shows the gold, sealed with age to the task's authors and maintainers.

    On a set whose gold is sealed, the round record is read by everyone who clones the review
    branch: a later reviewer, the public once the set is published. The reveal's gold lines, golden
    actions (run or missed), the commands that were not golden, the authored metadata and the blind
    answer itself are therefore committed only as this ciphertext; the counts stay in plain text for
    the statistics and the pull-request description. ``sha256`` is taken over the sealed plaintext,
    which carries a random nonce, so nobody can confirm a guessed gold line against it.
    """

    recipients: list[str] = Field(description="Person ids that can decrypt (authors, maintainers, ...).")
    age: str = Field(description="ASCII-armoured age ciphertext of the sealed fields (JSON).")
    sha256: str = Field(description="sha256 of the plaintext (with its nonce): what a decryption must give.")
    counts: dict[str, int] = Field(default_factory=dict, description="Sizes of the sealed fields.")


def seal_fields(fields: dict[str, Any], keys: dict[str, str], counts: dict[str, int]) -> SealedGold:
    """``fields`` (JSON values) sealed to ``keys`` (person id -> age1...), with a random nonce."""
    import json
    import secrets

    from ctbench.sealing import seal

    text = json.dumps({"nonce": secrets.token_hex(16), **fields}, sort_keys=True).encode("utf-8")
    ids = sorted(keys)
    armoured = bytes(seal(text, [keys[i] for i in ids], armoured=True)).decode("ascii")
    return SealedGold(recipients=ids, age=armoured, sha256=sha256_bytes(text), counts=counts)


def open_fields(sealed: SealedGold, identity: Path | None, where: str) -> dict[str, Any]:
    """The fields :func:`seal_fields` sealed; :class:`~ctbench.sealing.SealError` if ``identity`` cannot."""
    import json

    from ctbench.sealing import SealError, unseal

    text = unseal(sealed.age.encode("ascii"), identity, where)
    if sha256_bytes(text) != sealed.sha256:
        raise SealError(f"{where}: the sealed text does not match its recorded sha256")
    data = json.loads(text)
    if not isinstance(data, dict):
        raise SealError(f"{where}: the sealed text is not a JSON object")
    return data


class BlindSolve(Strict):
    """What the reviewer produced before seeing anything hidden."""

    reviewer: str
    started: datetime
    submitted: datetime
    time_spent_s: float = Field(ge=0)
    answer: str
    answer_sha256: str = Field(description="sha256 of the answer text, taken before the reveal.")
    trajectory: str | None = Field(default=None, description="Trajectory file in reviews/ (JSON lines).")
    trajectory_sha256: str | None = None
    commands: int = 0
    visible: ContentHashes = Field(
        default_factory=ContentHashes, description="Hashes of the statement and recordings that were solved."
    )

    sealed_answer: SealedGold | None = Field(
        default=None,
        description="On a sealed set: the answer sealed to the reviewer, the authors and the maintainers "
        "(``answer`` is then empty and ``answer_sha256`` is the sealed plaintext's).",
    )

    def answer_intact(self) -> bool:
        if self.sealed_answer is not None:
            return not self.answer and self.sealed_answer.sha256 == self.answer_sha256
        return sha256_text(self.answer) == self.answer_sha256

    def plain_answer(self, identity: Path | None, where: str) -> str:
        """The answer text (decrypted with ``identity`` when sealed)."""
        if self.sealed_answer is None:
            return self.answer
        return str(open_fields(self.sealed_answer, identity, where).get("answer", ""))


class MetadataRow(Strict):
    field: str
    authored: Any = None
    derived: Any = None
    agrees: bool | None = None


_SCORE_LABELS = (
    ("loc", "Loc IoU"),
    ("ident", "ID IoU"),
    ("triplet", "triplet IoU"),
    ("rest", "Rest IoU"),
    ("sequence", "sequence IoU"),
)


def cell_value(value: object, *, text: bool = False) -> str | int | float | None:
    """A metadata value as a table cell: lists joined with commas, other objects as strings.

    Plain tables keep numbers and ``None`` (they right-align numbers and print a dash for nothing);
    ``text=True`` gives a string for widgets that want one, with nothing shown for ``None``.
    """
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if text:
        return "" if value is None else str(value)
    if value is None or isinstance(value, str | int | float):
        return value
    return str(value)


def comparison_counts(c: Comparison) -> dict[str, int]:
    """The plain-text counts of a comparison's gold-derived fields (what a sealed record keeps)."""
    both = sum(1 for g in c.gold_lines if g in c.blind_lines)
    return {
        "gold_lines": len(c.gold_lines),
        "blind_lines": len(c.blind_lines),
        "both": both,
        "golden_covered": len(c.golden_covered),
        "golden_missed": len(c.golden_missed),
        "extra_commands": len(c.extra_commands),
        "metadata": len(c.metadata),
        "metadata_disagree": sum(1 for m in c.metadata if m.agrees is False),
    }


class Comparison(Strict):
    """The reveal: the blind answer scored against the gold with the evaluator's own metrics.

    On a sealed set the committed form has the gold-derived fields empty and ``sealed`` set
    (:meth:`sealed_to`); :meth:`counts` reads either form, :meth:`opened` decrypts with a recipient's
    age identity.
    """

    revealed_at: datetime
    revealed_by: str
    parse_status: str
    exact: bool
    scores: dict[str, Any] = Field(default_factory=dict)
    invalid_lines: list[str] = Field(default_factory=list)
    gold_lines: list[str] = Field(default_factory=list)
    blind_lines: list[str] = Field(default_factory=list)
    golden_covered: list[list[str]] = Field(default_factory=list)
    golden_missed: list[list[str]] = Field(default_factory=list)
    extra_commands: list[list[str]] = Field(default_factory=list)
    metadata: list[MetadataRow] = Field(default_factory=list)
    hashes: ContentHashes = Field(default_factory=ContentHashes)
    sealed: SealedGold | None = Field(
        default=None, description="The gold-derived fields, sealed (the plain ones are then empty)."
    )

    def counts(self) -> dict[str, int]:
        """Sizes of the gold-derived fields, from the sealed counts or the plain fields alike."""
        if self.sealed is not None:
            return dict(self.sealed.counts)
        return comparison_counts(self)

    def sealed_to(self, keys: dict[str, str]) -> Comparison:
        """This comparison as committed on a sealed set: its gold-showing fields sealed to ``keys``."""
        dumped = self.model_dump(mode="json")
        sealed = seal_fields({n: dumped[n] for n in SEALED_FIELDS}, keys, comparison_counts(self))
        return self.model_copy(update={**{n: [] for n in SEALED_FIELDS}, "sealed": sealed})

    def opened(self, identity: Path | None, where: str) -> Comparison:
        """The plain comparison (decrypted with ``identity`` when sealed); :class:`SealError` if it cannot be."""
        if self.sealed is None:
            return self
        data = open_fields(self.sealed, identity, where)
        plain = {
            **self.model_dump(mode="json"),
            **{n: data.get(n, []) for n in SEALED_FIELDS},
            "sealed": None,
        }
        return Comparison.model_validate(plain)

    def score_parts(self, *, evidence_always: bool = True) -> list[str]:
        """The metric half of the score summary line (``Loc IoU 0.50``, ..., ``evidence 1/2``).

        One definition for the reveal in text, in the app and in the pull-request description;
        callers add their own exact/parse wording around it. ``evidence_always=False`` leaves out
        the evidence count when the gold has no golden actions (the PR text has no use for ``0/0``).
        """
        s = self.scores
        parts = [f"{label} {float(s[key]):.2f}" for key, label in _SCORE_LABELS if s.get(key) is not None]
        ev = s.get("evidence") or {}
        if evidence_always or ev.get("golden"):
            parts.append(f"evidence {ev.get('covered', 0)}/{ev.get('golden', 0)}")
        return parts

    def answer_rows(self, *, invalid: bool = True) -> list[tuple[str, str, str]]:
        """(mark, gold line, blind line): ``=`` both, ``-`` gold only, ``+`` blind only, ``?`` unparsable.

        One definition of the side-by-side view, shared by ``ctb-review reveal`` in text, the app and
        the pull-request description; ``invalid=False`` leaves the unparsable lines to a caller that
        marks them up differently.
        """
        both = [g for g in self.gold_lines if g in self.blind_lines]
        rows = [("=", g, g) for g in both]
        rows += [("-", g, "") for g in self.gold_lines if g not in both]
        rows += [("+", "", b) for b in self.blind_lines if b not in both]
        if invalid:
            rows += [("?", "", f"unparsable: {bad}") for bad in self.invalid_lines]
        return rows

    def action_rows(self) -> list[tuple[str, str, str]]:
        """(mark, device, command): golden actions the reviewer ran or missed, and extra commands."""
        return (
            [("ran", d, cmd) for d, cmd in self.golden_covered]
            + [("missed", d, cmd) for d, cmd in self.golden_missed]
            + [("extra", d, cmd) for d, cmd in self.extra_commands]
        )


class ReviewRecord(Strict):
    version: int = RECORD_VERSION
    task: str
    family: Family
    round: int = Field(ge=1)
    authors: list[str] = Field(default_factory=list)
    reviewer: str | None = None
    opened: datetime
    started: datetime | None = None
    finished: datetime | None = None
    outcome: Outcome = "open"
    discard_reason: str = ""
    blind: BlindSolve | None = None
    blind_round: int | None = Field(
        default=None, description="Round of this reviewer's blind solve when it was an earlier one."
    )
    comparison: Comparison | None = None
    criteria: dict[Criterion, CriterionReview] = Field(default_factory=dict, validate_default=True)
    review_time_s: float = Field(default=0, ge=0, description="Time spent on reveal and verdicts.")
    provenance: list[Provenance] = Field(default_factory=list)

    @field_validator("criteria")
    @classmethod
    def _all_criteria(cls, value: dict[Criterion, CriterionReview]) -> dict[Criterion, CriterionReview]:
        return {c: value.get(c, CriterionReview()) for c in CRITERIA}

    # -------------------------------------------------------------- views

    def verdicts(self) -> dict[Criterion, Verdict]:
        return {c: self.criteria[c].verdict for c in CRITERIA}

    def disagreements(self) -> list[Criterion]:
        return [c for c in CRITERIA if self.criteria[c].verdict == Verdict.DISAGREE]

    def open_criteria(self) -> list[Criterion]:
        return [c for c in CRITERIA if self.criteria[c].verdict == Verdict.OPEN]

    @property
    def time_spent_s(self) -> float:
        blind = self.blind.time_spent_s if self.blind is not None else 0.0
        return blind + self.review_time_s

    def gold_readable_by(self, person: str) -> str | None:
        """What of this round's reveal to someone else ``person`` could read the gold from, or None.

        A later reviewer clones the review branch, records included. A plain comparison shows the
        gold lines; a plain blind answer is the gold when it was right; a plain trajectory shows where
        its reviewer looked; plain (unkeyed) hashes of the hidden parts can be matched against guesses;
        a seal with ``person`` among its recipients opens for them. A round whose reveal is sealed on
        every count leaves them its scores and counts only, and their blind solve is still blind.
        Comments need no check here: on a sealed set they are refused when they quote the gold
        (:mod:`ctbench.review.goldquote`), which came with the keyed hashes.
        """
        if self.comparison is None or self.reviewer in (None, person):
            return None
        cmp_ = self.comparison
        if cmp_.sealed is None:
            return "its gold lines and golden actions, in plain text"
        if person in cmp_.sealed.recipients:
            return f"its comparison, sealed to {person} among others"
        blind = self.blind
        if blind is not None:
            if blind.sealed_answer is None and blind.answer:
                return "its blind answer, in plain text (right, it is the gold)"
            if blind.sealed_answer is not None and person in blind.sealed_answer.recipients:
                return f"its blind answer, sealed to {person} among others"
            if blind.trajectory and not blind.trajectory.endswith(".age"):
                return "its blind trajectory, in plain text (where its reviewer looked)"
        hashes = [cmp_.hashes.get(p) for p in HIDDEN_PARTS]
        hashes += [h for c in self.criteria.values() for k, h in c.basis.items() if k in HIDDEN_PARTS]
        if any(h and not h.startswith(KEYED) for h in hashes):
            return "plain sha256 hashes of its gold, which a guess can be checked against"
        return None

    def note(
        self,
        who: str,
        role: Role,
        action: Action,
        why: str = "",
        criterion: Criterion | None = None,
        when: datetime | None = None,
    ) -> None:
        self.provenance.append(
            Provenance(who=who, role=role, when=when or utcnow(), action=action, why=why, criterion=criterion)
        )


def round_summary(record: ReviewRecord) -> str:
    """The round as an author reads it before revising: each criterion's verdict and its thread.

    Plain text, for ``ctb-review checkout`` and for tools that show the review beside the task
    (the authoring editor).
    """
    lines = [
        f"{record.task} round {record.round}: reviewer {record.reviewer or '(not assigned)'}, "
        f"outcome {record.outcome}"
    ]
    if record.discard_reason:
        lines.append(f"  discarded: {record.discard_reason}")
    for crit in CRITERIA:
        cr = record.criteria[crit]
        extra = (
            " (carried)"
            if cr.carried
            else (f" (reopened: {', '.join(cr.reopened_by)})" if cr.reopened_by else "")
        )
        lines.append(f"  {crit.label}: {cr.verdict.value}{extra}")
        for c in cr.thread:
            tag = c.verdict.value if c.verdict else (c.stance or "")
            lines.append(f"    {c.who} ({c.role.value}{', ' + tag if tag else ''}): {c.text}".rstrip())
    return "\n".join(lines)


# --------------------------------------------------------------------------- files


def record_name(round_no: int) -> str:
    return f"round-{round_no:02d}.yaml"


def trajectory_name(round_no: int) -> str:
    return f"round-{round_no:02d}.blind.jsonl"


def record_rel(round_no: int) -> str:
    """Path of a round file relative to the task folder."""
    return f"{REVIEWS_DIR}/{record_name(round_no)}"


def parse_record(text: str, where: Path | str) -> ReviewRecord:
    path = Path(where)
    data = load_fast(path, text)
    try:
        return ReviewRecord.model_validate(data)
    except ValidationError as exc:
        raise CtbError(
            f"{path}: {validation_message(exc, '')} (a review record, see ctbench/approval/records.py)"
        ) from None


def render_record(record: ReviewRecord, existing: str | None = None, where: Path | str = "record") -> str:
    """YAML text for a record; merged into ``existing`` so unchanged lines stay byte-identical."""
    data = record.model_dump(mode="json", exclude_none=True)
    if existing:
        doc = merge_into(load_document(Path(where), existing), data)
        return dump_document(doc)
    header = "# Review record written by ctb-review; edit through ctb-review so provenance stays true.\n"
    return header + dump_document(to_commented(data))


def round_numbers(task_dir: Path) -> list[int]:
    folder = task_dir / REVIEWS_DIR
    if not folder.is_dir():
        return []
    out = []
    for p in folder.iterdir():
        m = _ROUND_FILE.match(p.name)
        if m:
            out.append(int(m.group(1)))
    return sorted(out)


def round_numbers_from_names(names: list[str]) -> list[int]:
    return sorted(int(m.group(1)) for n in names if (m := _ROUND_FILE.match(n)))


def load_records(task_dir: Path) -> list[ReviewRecord]:
    """Every round of a task in the working tree, oldest first."""
    out = []
    for n in round_numbers(task_dir):
        p = task_dir / REVIEWS_DIR / record_name(n)
        out.append(parse_record(p.read_text(encoding="utf-8"), p))
    return out


def new_record(
    task: str, family: Family, round_no: int, authors: list[str], when: datetime, reviewer: str | None = None
) -> ReviewRecord:
    return ReviewRecord(
        task=task, family=family, round=round_no, authors=list(authors), opened=when, reviewer=reviewer
    )
