"""The gate on what a run may execute: approved, valid, and unchanged since approval.

A published number is only as good as the tasks behind it. By default ``ctb-eval run`` takes a task
only when (1) its ``status`` is ``approved``, (2) its last review round ended approved and every
criterion's verdict was given on the content the task has now (the review records carry one hash per
part, :mod:`ctbench.approval.hashes`), and (3) it validates without errors. Anything else is listed with
its reason and skipped; ``--allow-unreviewed`` lifts (1) and (2) and is recorded in run.yaml.
Validation errors are never run over silently: a task that fails validation is skipped unless
``--allow-invalid`` is given, and then an attempt that cannot be served ends as a task-definition
outcome, never retried and never blamed on the agent or the infrastructure.

Every result line carries the task's :func:`content_hash`, so two runs that scored "the same task id"
with different content can be told apart (``ctb-eval compare`` warns).

It lives in the core, not in evaluate, because ``ctb-author release`` retains tasks with the same
code: a release and a run can never disagree about which tasks count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctbench.model import Status, TaskSpec
from ctbench.store import TaskRef, TaskSet, set_relative
from ctbench.validation.family_gold import FamilyGoldCheck


@dataclass(frozen=True)
class Skipped:
    """A task the gate kept out of the run, and why (one line a user can act on)."""

    task_id: str
    reason: str

    def render(self) -> str:
        return f"{self.task_id}: {self.reason}"


def content_hash(task_dir: Path, task_set: TaskSet | None = None) -> str:
    """One ``sha256:`` over the per-part hashes the review records use: visible and hidden content.

    ``task_set`` reads a sealed hidden part (``hidden.yaml.age``) with the user's identity.
    """
    from ctbench.approval.hashes import task_content_hash

    return task_content_hash(task_dir, task_set)


def review_problem(task_dir: Path, spec: TaskSpec) -> str | None:
    """Why the task does not count as approved-and-unchanged, or None when it does."""
    from ctbench.approval.hashes import PART_TITLES, content_hashes, disk_reader, stale_criteria
    from ctbench.approval.records import load_records

    if spec.status != Status.APPROVED:
        return f"not approved (status {spec.status.value})"
    try:
        records = load_records(task_dir)
    except Exception as exc:  # a broken record file: named, never a traceback
        return f"review records unreadable: {exc}"
    if not records:
        return "never reviewed (approved in task.yaml, but no review record)"
    last = records[-1]
    if last.outcome != "approved":
        return f"its last review round ({last.round}) ended {last.outcome!r}, not approved"
    stale = stale_criteria(lambda c: last.criteria[c].basis, content_hashes(disk_reader(task_dir)))
    if stale:
        parts = sorted({p for changed in stale.values() for p in changed})
        return (
            "edited after approval: "
            + ", ".join(PART_TITLES.get(p, p) for p in parts)
            + " changed since the review approved it"
        )
    return None


def validation_problems(
    task_set: TaskSet,
    refs: Sequence[TaskRef],
    specs: Mapping[str, TaskSpec] | None = None,
    *,
    reuse: bool = True,
    gold_check: FamilyGoldCheck | None = None,
) -> dict[str, str]:
    """First validation error of each task that has one (id -> "file:line: message").

    An error in a network file (a link to an unknown device, a file that does not load) belongs to
    no task of its own: with ``specs`` (id -> task) it is each task's on that network - the whole
    task is what the replay serves. ``reuse``: outcomes of tasks whose files (and the set's shared
    files, and the code) have not changed since they were last validated are taken from the
    user's cache (:mod:`ctbench.validation.cache`); only the others are validated. ``gold_check``
    checks a plug-in family's gold against the network (:mod:`ctbench.validation.family_gold`).
    """
    if not reuse:
        return _validate(task_set, refs, specs, gold_check)
    from ctbench.validation.cache import ValidationCache

    variant = "with networks" if specs else "tasks alone"
    if gold_check is not None:  # its outcomes depend on the plug-ins' code too
        variant += f"|{gold_check.basis}"
    store = ValidationCache.open(task_set, variant)
    known, todo = store.lookup(refs)
    found = _validate(task_set, todo, specs, gold_check) if todo else {}
    store.store(dict(found), todo)
    out = {tid: problem for tid, problem in known.items() if problem is not None}
    out.update(found)
    return out


def _validate(
    task_set: TaskSet,
    refs: Sequence[TaskRef],
    specs: Mapping[str, TaskSpec] | None,
    gold_check: FamilyGoldCheck | None = None,
) -> dict[str, str]:
    from ctbench.validation import Validator

    # errors only: the warnings that compare tasks with each other (copied gold) never keep one out
    report = Validator(task_set, gold_check=gold_check).run(refs, cross_task=False)
    out: dict[str, str] = {}
    in_files: dict[str, str] = {}
    for finding in report.errors:
        if finding.task:
            out.setdefault(finding.task, finding.render())
        else:
            in_files.setdefault(finding.file, finding.render())
    checked = {ref.id for ref in refs}
    for task_id, spec in (specs or {}).items():
        if task_id not in checked:
            continue
        path = task_set.network_file(spec.network) if task_id not in out else None
        if path is not None and (problem := in_files.get(set_relative(task_set.root, path))):
            out[task_id] = f"its network {spec.network} {problem}"
    return out


def released_hashes(task_set: TaskSet) -> dict[str, str]:
    """Task id -> published content hash, for the reviewed tasks of a set rebuilt from a release.

    A release carries no review records (they quote the gold), so its tasks are retained on the
    release's word instead: the manifest's content hash, which the source's approval vouched for.
    Tasks the release itself marks unreviewed (``--allow-unreviewed``) get nothing from it.
    """
    from ctbench.releases import find_manifest

    try:
        manifest = find_manifest(task_set.root)
    except Exception:  # a broken manifest vouches for nothing; the tasks fall back to their records
        return {}
    if manifest is None:
        return {}
    unreviewed = set(manifest.review.get("unreviewed") or [])
    return {t.id: t.content_hash for t in manifest.tasks if t.id not in unreviewed}


def _release_problem(task_set: TaskSet, ref: TaskRef, published: str) -> str | None:
    now = content_hash(ref.path, task_set)
    if now == published:
        return None
    if not ref.hidden_file.exists() and not task_set.is_sealed(ref):
        return "released without its gold here (import the release with --gold)"
    return "changed since its release: its content hash differs from RELEASE.yaml"


@dataclass(frozen=True)
class GateResult:
    admitted: list[TaskRef]
    skipped: list[Skipped]
    unreviewed_admitted: list[str]
    invalid_admitted: list[str]

    def skipped_summary(self, limit: int = 6) -> list[str]:
        """The skipped tasks grouped by reason, one line per reason: "REASON: ID, ID ... (N)"."""
        groups: dict[str, list[str]] = {}
        for k in self.skipped:
            groups.setdefault(k.reason, []).append(k.task_id)
        out = []
        for reason, ids in groups.items():
            shown = ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
            out.append(f"{len(ids)} task(s) {reason}: {shown}")
        return out


def apply_gate(
    task_set: TaskSet,
    candidates: Iterable[tuple[TaskRef, TaskSpec]],
    *,
    allow_unreviewed: bool = False,
    allow_invalid: bool = False,
    gold_check: FamilyGoldCheck | None = None,
) -> GateResult:
    """Split the candidates into the tasks to run and the ones skipped, with reasons.

    ``gold_check``: how a plug-in family's gold is checked against the network (the core cannot ask
    the family itself); ``ctb-eval run`` and ``ctb-author release`` pass
    ``ctbench.scoring.gold_check.PluginGoldCheck``, so a task whose gold names what its network lacks
    is kept out and named, whatever its family.
    """
    from ctbench.approval.check import approval_state

    released = released_hashes(task_set)
    pairs = list(candidates)
    specs = {ref.id: spec for ref, spec in pairs}
    refs = [ref for ref, _ in pairs]
    invalid = validation_problems(task_set, refs, specs, gold_check=gold_check) if pairs else {}
    admitted: list[TaskRef] = []
    skipped: list[Skipped] = []
    unreviewed: list[str] = []
    invalid_run: list[str] = []
    for ref, spec in pairs:
        problem = invalid.get(ref.id)
        if problem is not None:
            if not allow_invalid:
                skipped.append(Skipped(ref.id, f"fails validation: {problem}"))
                continue
            invalid_run.append(ref.id)
        review = approval_state(task_set, ref, spec).reason  # the one answer to "approved?" (sealed gold too)
        if review is not None and ref.id in released:
            review = _release_problem(task_set, ref, released[ref.id])
        if review is not None:
            if not allow_unreviewed:
                skipped.append(Skipped(ref.id, review))
                continue
            unreviewed.append(ref.id)
        admitted.append(ref)
    return GateResult(admitted, skipped, unreviewed, invalid_run)


__all__ = ["GateResult", "Skipped", "apply_gate", "content_hash", "review_problem", "validation_problems"]
