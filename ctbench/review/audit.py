"""The blindness audit: proof from the commit graph that every reviewer answered before seeing the gold.

For every decided task (approved or discarded) and every round in which the gold was revealed, the
audit checks that

1. the reviewer's blind answer is in the record, and its sha256 (taken before the reveal) matches it;
2. a ``blind`` commit by that reviewer exists in the task's history, and the round file *as committed
   there* holds the same answer and hash (the answer was not rewritten afterwards);
3. that commit is a strict ancestor of the round's ``reveal`` commit (the answer existed first);

and, for approved tasks, that the last round reached consensus on all four criteria and that nothing
the verdicts were given on has changed since (content hashes), which would reopen criteria.
A squashed or rebased history that lost the blind commit fails the audit, as it should.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ctbench.approval.hashes import (
    HIDDEN_PARTS,
    KEYED,
    PART_TITLES,
    PartReader,
    content_hashes,
    disk_reader,
    stale_criteria,
)
from ctbench.approval.records import BlindSolve, ReviewRecord, parse_record, record_rel
from ctbench.approval.states import CRITERIA, Action, Verdict
from ctbench.errors import CtbError
from ctbench.model import Status
from ctbench.people import People
from ctbench.review.gitflow import LogEntry, ReviewRepo
from ctbench.review.view import TaskState
from ctbench.sealing import (
    RECIPIENTS_FILE,
    SealError,
    identity_path,
    parse_recipients,
    stanza_count,
    unseal,
)
from ctbench.store import HIDDEN_FILE, SEALED_HIDDEN_FILE, TaskSet


@dataclass
class AuditItem:
    task: str
    status: Status
    ok: bool = True
    proofs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    signed: bool = False
    """Whether the set signs its review steps (every step then verified, or the task failed)."""
    blindness: str = ""
    """How its blind solves were kept blind: "seal" (sealed gold), "honour" (plain gold), "" (none yet)."""
    notes: list[str] = field(default_factory=list)
    """What the audit cannot fail but a reader should know (plain hashes of sealed gold)."""

    def fail(self, message: str) -> None:
        self.ok = False
        self.problems.append(message)

    def to_json(self) -> dict[str, object]:
        return {
            "task": self.task,
            "status": self.status.value,
            "ok": self.ok,
            "proofs": self.proofs,
            "problems": self.problems,
            "signed_steps": self.signed,
            "blindness": self.blindness or None,
            "notes": self.notes,
        }


def git_reader(repo: ReviewRepo, rev: str, task_rel: str, ts: TaskSet | None = None) -> PartReader:
    """Reads one committed version of a task; a sealed hidden part is decrypted with ``ts``'s identity."""

    def read(rel: str) -> bytes | None:
        if rel.startswith("/") or ".." in rel.split("/"):
            return None
        data = repo.read_blob(rev, f"{task_rel}/{rel}")
        if data is None and rel == HIDDEN_FILE and ts is not None:
            sealed = repo.read_blob(rev, f"{task_rel}/{SEALED_HIDDEN_FILE}")
            if sealed is not None:
                return unseal(
                    sealed, identity_path(ts.identity), f"{task_rel}/{SEALED_HIDDEN_FILE}@{rev[:10]}"
                )
        return data

    return read


def _first(entries: list[LogEntry], **want: object) -> list[LogEntry]:
    out = []
    for e in entries:
        if all((e.round if k == "round" else e.get(k)) == v for k, v in want.items()):
            out.append(e)
    return out


def _readable_at(repo: ReviewRepo, rev: str, rel: str, round_no: int | None, person: str) -> str | None:
    """What round ``round_no``'s record, as committed at ``rev``, let ``person`` read of the gold.

    Unreadable or missing records count as showing the gold: the audit proves blindness, never
    assumes it.
    """
    if round_no is None:
        return "the gold (its round is not named)"
    data = repo.read_blob(rev, f"{rel}/{record_rel(round_no)}")
    if data is None:
        return "the gold (its record is missing there)"
    try:
        record = parse_record(data.decode("utf-8"), f"{record_rel(round_no)}@{rev[:10]}")
    except (CtbError, UnicodeDecodeError):
        return "the gold (its record is unreadable there)"
    return record.gold_readable_by(person)


def main_people(repo: ReviewRepo) -> People:
    """The people whose keys the audit trusts: ``reviewers.yaml`` as committed on the main branch."""
    from ctbench.approval.signatures import trusted_people

    remote = repo.remote_name if repo.has_remote() else None
    return trusted_people(repo.workdir, repo.prefix, repo.main_branch, remote)


def audit_seal(
    ts: TaskSet, repo: ReviewRepo, state: TaskState, history: list[LogEntry], item: AuditItem
) -> None:
    """No reviewer could decrypt the sealed gold before their blind commit, in any version of it.

    Every commit that touched the ciphertext or its recipients list is checked: the ciphertext's
    recipient count (from its header) equals the list's length, and each reviewer in the list, or
    any recipient whose key is a reviewer's key, is listed only in commits that come strictly after
    that reviewer's blind commit.
    """
    rev = state.rev or "HEAD"
    sealed_rel, rec_rel = f"{state.rel}/{SEALED_HIDDEN_FILE}", f"{state.rel}/{RECIPIENTS_FILE}"
    try:
        commits = repo.git("log", "--format=%H", rev, "--", sealed_rel, rec_rel).split()
    except CtbError:
        return
    if not commits:
        return
    try:  # the age keys as main lists them: a branch's reviewers.yaml is its author's to edit
        keys = main_people(repo).age_keys()
    except CtbError:
        keys = {}
    by_key: dict[str, set[str]] = {}
    for name, key in keys.items():
        by_key.setdefault(key, set()).add(name)
    blinds: dict[str, list[str]] = {}
    for e in history:
        if e.action == Action.BLIND.value and e.get("reviewer"):
            blinds.setdefault(str(e.get("reviewer")), []).append(e.sha)
    authors = set(state.authors)
    bad = 0
    for sha in reversed(commits):  # oldest first
        data = repo.read_blob(sha, sealed_rel)
        if data is None:
            continue
        text = repo.read_blob(sha, rec_rel)
        if text is None:
            item.fail(f"{sha[:10]}: sealed gold without its recipients list ({RECIPIENTS_FILE})")
            bad += 1
            continue
        try:
            listed = parse_recipients(text.decode("utf-8"), f"{rec_rel}@{sha[:10]}")
        except CtbError as exc:
            item.fail(str(exc))
            bad += 1
            continue
        count = stanza_count(data)
        if count != len(listed.recipients):
            item.fail(
                f"{sha[:10]}: the sealed gold has {count} recipient(s) but {RECIPIENTS_FILE} lists "
                f"{len(listed.recipients)}: someone could decrypt who is not listed"
            )
            bad += 1
        for r in listed.recipients:
            if keys and r.key not in by_key:
                item.fail(
                    f"{sha[:10]}: {r.name} ({r.role}) can decrypt the sealed gold with a key reviewers.yaml "
                    "lists for nobody"
                )
                bad += 1
                continue
            who = set(by_key.get(r.key, set()))
            if r.role == "reviewer":
                who.add(r.name)
            for name in sorted(who - authors):
                if r.role == "maintainer" and name == r.name:
                    continue
                if not any(b != sha and repo.is_ancestor(b, sha) for b in blinds.get(name, [])):
                    item.fail(
                        f"{sha[:10]}: {name} became a recipient of the sealed gold before their blind "
                        "commit (an early unseal)"
                    )
                    bad += 1
    if not bad:
        item.proofs.append(
            f"sealed gold: {len(commits)} version(s) checked; no reviewer could decrypt before "
            "their blind commit"
        )


def audit_steps(repo: ReviewRepo, state: TaskState, item: AuditItem) -> None:
    """Every commit that wrote the task's review record is a step signed by the person it names."""
    from ctbench.approval.signatures import verify_steps

    verdict = verify_steps(repo.workdir, state.rev, state.rel, state.id, main_people(repo))
    item.signed = verdict.signed
    for problem in verdict.problems:
        item.fail(problem)
    if verdict.ok:
        item.proofs.append(verdict.summary())


def blindness_of(ts: TaskSet, repo: ReviewRepo | None, state: TaskState) -> str:
    """ "seal" when the task's gold is sealed where it is read (every clone holds ciphertext), else "honour"."""
    if state.rev is not None and repo is not None:
        sealed = repo.read_blob(state.rev, f"{state.rel}/{SEALED_HIDDEN_FILE}") is not None
    else:
        try:
            sealed = ts.is_sealed(ts.ref(state.id))
        except CtbError:
            sealed = False
    return "seal" if sealed else "honour"


BLINDNESS_PROOF = {
    "seal": "blind by seal: the gold is sealed (hidden.yaml.age); a reviewer can decrypt it only once unsealed "
    "after their blind commit",
    "honour": "blind by honour: the gold (hidden.yaml) is plain text in every clone of this set; only the "
    "reviewer's word says it was unread before the blind answer",
}


def note_plain_hashes(record: ReviewRecord, where: str, item: AuditItem) -> None:
    """A sealed round whose hidden-part hashes are plain sha256 (written before keyed hashes).

    Not a failure: the approval stands on them as before. But a guessed answer can be checked
    against them, so a reader should treat a short sealed answer of that round as exposed.
    """
    cmp_ = record.comparison
    if cmp_ is None or cmp_.sealed is None:
        return
    hashes = [(p, cmp_.hashes.get(p)) for p in HIDDEN_PARTS]
    hashes += [(p, h) for c in record.criteria.values() for p, h in c.basis.items() if p in HIDDEN_PARTS]
    plain = [
        PART_TITLES[p]
        for p in HIDDEN_PARTS
        if any(q == p and h and not h.startswith(KEYED) for q, h in hashes)
    ]
    if plain:
        item.notes.append(
            f"{where}: the record's hashes of the sealed {', '.join(plain)} are plain sha256 (written "
            "before keyed hashes): a guessed answer can be checked against them"
        )


def audit_sealed_parts(
    ts: TaskSet, record: ReviewRecord, blind: BlindSolve, where: str, item: AuditItem
) -> None:
    """With a recipient's key at hand, the sealed blind answer and comparison open and match their hashes.

    Without one (the usual case for a reviewer) there is nothing to check here: the counts in plain
    text are what the statistics read, and the signatures already say who wrote the ciphertext.
    """
    identity = identity_path(ts.identity)
    if identity is None:
        return
    checks: list[tuple[str, Callable[[], object]]] = []
    if blind.sealed_answer is not None:
        checks.append(("blind answer", lambda: blind.plain_answer(identity, where)))
    cmp_ = record.comparison
    if cmp_ is not None and cmp_.sealed is not None:
        checks.append(("comparison", lambda: cmp_.opened(identity, where)))
    opened = []
    for what, opener in checks:
        try:
            opener()
        except SealError as exc:
            if "does not match" in str(exc):
                item.fail(f"{where}: the sealed {what} does not match its recorded sha256")
            continue
        opened.append(what)
    if opened:
        verbs = (
            "open with your key and match their" if len(opened) > 1 else "opens with your key and matches its"
        )
        item.proofs.append(f"{where}: the sealed {' and '.join(opened)} {verbs} sha256")


def audit_task(ts: TaskSet, repo: ReviewRepo, state: TaskState) -> AuditItem:
    item = AuditItem(state.id, state.status)
    rev = state.rev or "HEAD"
    history = list(reversed(repo.log(rev, task=state.id)))  # oldest first
    audit_steps(repo, state, item)
    if any(r.blind is not None for r in state.records):
        item.blindness = blindness_of(ts, repo, state)
        item.proofs.append(BLINDNESS_PROOF[item.blindness])
    audit_seal(ts, repo, state, history, item)
    revealed = [r for r in state.records if r.comparison is not None]
    if not state.records:
        item.fail("decided without any review record (not reviewed through ctb-review)")
        return item
    by_round = {r.round: r for r in state.records}
    for record in revealed:
        reviewer = record.reviewer or "?"
        k = record.blind_round or record.round
        blind_record = by_round.get(k)
        blind = blind_record.blind if blind_record else None
        where = f"round {record.round}"
        if blind is None or blind.reviewer != reviewer:
            item.fail(
                f"{where}: the gold was revealed to {reviewer} but no blind answer of theirs is recorded"
            )
            continue
        if not blind.answer_intact():
            item.fail(f"{where}: the blind answer does not match its recorded sha256 (it was edited)")
            continue
        blinds = _first(history, action=Action.BLIND.value, round=k, reviewer=reviewer)
        reveals = _first(history, action=Action.REVEAL.value, round=record.round, reviewer=reviewer)
        if not blinds:
            item.fail(
                f"{where}: no blind commit by {reviewer} for round {k} in the history of {state.source}"
            )
            continue
        if not reveals:
            item.fail(f"{where}: no reveal commit in the history of {state.source}")
            continue
        b, r = blinds[0], reveals[0]
        earlier = [
            (e, shows)
            for e in history
            if e.action == Action.REVEAL.value
            and e.get("reviewer") not in (None, reviewer)
            and e.sha != b.sha
            and repo.is_ancestor(e.sha, b.sha)
            and (shows := _readable_at(repo, b.sha, state.rel, e.round, reviewer)) is not None
        ]
        if earlier:  # the review records in the clone already held the gold revealed to someone else
            first, shows = earlier[0]
            item.fail(
                f"{where}: {reviewer}'s blind answer ({b.sha[:10]}) came after the gold was revealed to "
                f"{first.get('reviewer')} in round {first.round} ({first.sha[:10]}), whose record shows "
                f"{shows}: not a blind solve"
            )
            continue
        committed = repo.read_blob(b.sha, f"{state.rel}/{record_rel(k)}")
        if committed is None:
            item.fail(f"{where}: the blind commit {b.sha[:10]} does not hold the round file")
            continue
        then = parse_record(committed.decode("utf-8"), f"{record_rel(k)}@{b.sha[:10]}").blind
        if (
            then is None
            or then.answer != blind.answer
            or then.answer_sha256 != blind.answer_sha256
            or then.sealed_answer != blind.sealed_answer
        ):
            item.fail(f"{where}: the blind answer differs from the one committed in {b.sha[:10]}")
            continue
        trailer = b.get("answer-sha256")
        if trailer and trailer != blind.answer_sha256:
            item.fail(f"{where}: the blind commit's Ctbench-Answer-Sha256 trailer does not match the record")
            continue
        if b.sha == r.sha or not repo.is_ancestor(b.sha, r.sha):
            item.fail(
                f"{where}: the blind commit {b.sha[:10]} does not precede the reveal commit {r.sha[:10]}"
            )
            continue
        item.proofs.append(
            f"{where}: blind answer by {reviewer} committed {b.sha[:10]} ({b.when}) before the "
            f"reveal {r.sha[:10]} ({r.when}); sha256 {blind.answer_sha256[7:19]}... matches"
        )
        audit_sealed_parts(ts, record, blind, where, item)
        note_plain_hashes(record, where, item)
    if state.status == Status.APPROVED:
        last = state.records[-1]
        if not revealed:
            item.fail("approved without any blind solve and reveal")
        if last.outcome != "approved" or any(last.criteria[c].verdict != Verdict.AGREE for c in CRITERIA):
            item.fail(f"approved, but round {last.round} does not record consensus on all four criteria")
        else:
            reader = (
                disk_reader(ts.ref(state.id).path, ts)
                if state.rev is None
                else git_reader(repo, rev, state.rel, ts)
            )
            try:
                now = content_hashes(reader)
            except CtbError as exc:
                item.fail(f"cannot check the content against the approval: {exc}")
                return item
            stale = stale_criteria(lambda c: last.criteria[c].basis, now)
            for crit, parts in stale.items():
                item.fail(
                    f"{crit.label} reopened: {', '.join(PART_TITLES[p] for p in parts)} changed after the "
                    f"approval (resubmit: ctb-review submit {state.id})"
                )
            if not stale:
                item.proofs.append(f"content unchanged since the approval in round {last.round}")
    elif state.status == Status.DISCARDED and not revealed:
        reason = state.records[-1].discard_reason
        item.proofs.append(f"discarded before any reveal ({reason}); nothing hidden was shown")
    return item


def audit(
    ts: TaskSet, repo: ReviewRepo, states: list[TaskState], ids: list[str] | None = None
) -> list[AuditItem]:
    wanted = set(ids or [])
    out = []
    for state in states:
        if wanted and state.id not in wanted:
            continue
        if not wanted and state.status not in (Status.APPROVED, Status.DISCARDED):
            continue
        out.append(audit_task(ts, repo, state))
    missing = wanted - {s.id for s in states}
    for task_id in sorted(missing):
        item = AuditItem(task_id, Status.DRAFT)
        item.fail("no such task")
        out.append(item)
    return out
