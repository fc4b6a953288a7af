"""Saving a working copy: written in an order that never leaves an index pointing at a missing file.

Recordings first, then ``task.yaml``, then ``hidden.yaml``, then removal of dropped recordings; a new
task is assembled in a hidden folder and renamed into place. Then the touched paths, and only those,
are committed with machine-readable trailers (:mod:`ctbench.commits`). An approved task whose reviewed
content changes goes back to draft, with the criteria the change reopens.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ctbench.authoring.shadow import validate_draft, write_shadow
from ctbench.authoring.working_copy import (
    Action,
    ConflictError,
    EditError,
    SaveResult,
    TaskDraft,
    check_new_id,
    checked_rel,
    default_author,
    files_digest,
    format_validation,
    sealed_note,
)
from ctbench.commits import Trailer, trailer_lines
from ctbench.errors import CtbError
from ctbench.gitsafe import harden
from ctbench.model import HiddenSpec, Status, TaskSpec
from ctbench.store import (
    HIDDEN_FILE,
    RECORDINGS_DIR,
    REVIEWS_DIR,
    SEALED_HIDDEN_FILE,
    TASK_FILE,
    TaskRef,
    TaskSet,
    safe_recording_path,
)
from ctbench.yamlio import atomic_write_bytes, is_leftover_temp

if TYPE_CHECKING:
    from ctbench.approval.states import Criterion

# --------------------------------------------------------------------------- writing


def build_models(draft: TaskDraft) -> tuple[TaskSpec, HiddenSpec]:
    """Validated models for writing; a draft that does not meet the schema cannot be saved."""
    if not draft.statement.strip():
        raise EditError(f"{draft.id}: the statement is empty; describe the symptom and the answer format")
    try:
        spec = draft.spec()
        task = TaskSpec.model_validate(
            spec.model_copy(update={"title": spec.title.strip()}).model_dump(by_alias=True)
        )
        hidden = HiddenSpec.model_validate(draft.hidden.model_dump(by_alias=True))
    except ValidationError as exc:
        raise EditError(format_validation(exc, draft.id)) from None
    return task, hidden


def _write_task_files(
    ts: TaskSet, folder: Path, draft: TaskDraft, task: TaskSpec, hidden: HiddenSpec, source: Path | None
) -> list[Path]:
    """Recordings, then task.yaml, then hidden.yaml into ``folder`` (the order that is safe to interrupt)."""
    written: list[Path] = []
    for rel, data in draft.pending.items():
        if not any(r.file == rel for r in task.recordings):
            continue  # pending bytes of a recording removed again before saving
        target = folder / checked_rel(rel)
        if atomic_write_bytes(target, data):
            written.append(target)
    if source is not None and source != folder:
        # Carry over recordings (and anything else, such as review records) not rewritten from memory.
        for path in sorted(source.rglob("*")):
            rel = path.relative_to(source).as_posix()
            if (
                path.is_file()
                and not path.is_symlink()
                and rel not in draft.pending
                and rel not in (TASK_FILE, HIDDEN_FILE, SEALED_HIDDEN_FILE)
                and rel not in draft.removed_files
            ):
                target = folder / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
    if ts.save_model(folder / TASK_FILE, task, kind=TASK_FILE):
        written.append(folder / TASK_FILE)
    if ts.save_hidden_model(folder, hidden, authors=list(task.authors)):
        written.append(folder / (SEALED_HIDDEN_FILE if ts.is_sealed(folder) else HIDDEN_FILE))
    return written


def approval_change(ts: TaskSet, draft: TaskDraft) -> dict[Criterion, list[str]]:
    """The review criteria saving ``draft`` would reopen on an approved task (with the changed parts).

    Measured on the draft laid out in a shadow folder, so the app can say it before it saves; empty
    for a task that is not approved or whose reviewed content the draft does not change.
    """
    if draft.is_new or draft.task.status != Status.APPROVED:
        return {}
    folder = ts.task_dir(draft.family, draft.id)
    if not (folder / REVIEWS_DIR).is_dir():
        return {}
    from ctbench.approval.check import reopened_since_approval
    from ctbench.approval.hashes import disk_reader

    with tempfile.TemporaryDirectory(prefix="ctb-reopen-") as tmp:
        shadow = write_shadow(ts, draft, Path(tmp))
        return reopened_since_approval(
            ts, TaskRef(draft.id, draft.family, folder), disk_reader(shadow.task_dir(draft.family, draft.id))
        )


def reopen_text(reopens: dict[Criterion, list[str]]) -> str:
    """``solvability (gold answer), answer completeness (gold answer)``: one wording for the app and CLI."""
    from ctbench.approval.hashes import PART_TITLES

    return ", ".join(
        f"{c.label} ({', '.join(PART_TITLES.get(p, p) for p in parts)})" for c, parts in reopens.items()
    )


def _status_for_save(
    ts: TaskSet, draft: TaskDraft, task: TaskSpec, result: SaveResult, commit: bool
) -> TaskSpec:
    """No silent edits after approval, and nothing committed as reviewable that fails validation.

    An approved task whose reviewed content changes goes back to draft (``ctb-review submit`` then
    reopens exactly the criteria the change touched); so does an approved task that no longer
    validates. A task under review that fails validation is saved without a commit: its revision is
    committed by ``ctb-review respond`` once it validates.
    """
    if task.status == Status.DRAFT:
        return task
    if task.status == Status.APPROVED:
        reopens = approval_change(ts, draft)
        if reopens:
            result.reopened = {c.value: parts for c, parts in reopens.items()}
            result.status_note = (
                f"approved -> draft: the change reopens {reopen_text(reopens)}; "
                f"it needs re-review (ctb-review submit {task.id})"
            )
            return task.model_copy(update={"status": Status.DRAFT})
    if not commit or task.status == Status.DISCARDED:
        return task
    errors = [f for f in validate_draft(ts, draft) if f.severity == "error"]
    if not errors:
        return task
    first = errors[0].render()
    if task.status == Status.APPROVED:
        result.status_note = (
            f"approved -> draft: the task fails validation ({len(errors)} error(s), first: {first})"
        )
        return task.model_copy(update={"status": Status.DRAFT})
    result.status_note = (
        f"saved without a commit: {task.id} is {task.status.value} and fails validation "
        f"({len(errors)} error(s), first: {first}); fix it, then commit the revision with "
        "ctb-review respond"
    )
    return task


def save_draft(
    ts: TaskSet,
    draft: TaskDraft,
    *,
    commit: bool = True,
    author: str = "",
    action: Action | None = None,
    message: str | None = None,
    force: bool = False,
) -> SaveResult:
    """Write a draft to its task folder (and network file), then commit the touched paths."""
    task, hidden = build_models(draft)
    folder = ts.task_dir(task.family, task.id)
    result = SaveResult(task_id=task.id, folder=folder)
    if not draft.is_new:
        task = _status_for_save(ts, draft, task, result, commit)
        if task.status != draft.task.status:
            draft.task = draft.task.model_copy(update={"status": task.status})
        elif result.status_note.startswith("saved without a commit"):
            commit = False
            result.note = result.status_note
    if draft.is_new:
        check_new_id(ts, task.id)
    elif not force and draft.base_digest and folder.is_dir() and files_digest(folder) != draft.base_digest:
        raise ConflictError(
            f"{task.id}: task.yaml or hidden.yaml changed on disk since you started editing; "
            "save again to overwrite them, or reopen the task"
        )
    touched: list[Path] = [folder]
    if draft.network is not None:
        if draft.network_is_new and ts.network_path(draft.network.name).exists():
            raise EditError(
                f"network {draft.network.name} was created meanwhile; pick it instead of creating it"
            )
        result.written.append(ts.save_network(draft.network))
        touched.append(ts.network_path(draft.network.name))
    if draft.is_new:
        staging = folder.parent / f".{task.id}.saving-{uuid.uuid4().hex[:8]}"
        try:
            staging.mkdir(parents=True)
            _write_task_files(ts, staging, draft, task, hidden, None)
            os.rename(staging, folder)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        result.written.extend(p for p in sorted(folder.rglob("*")) if p.is_file())
    else:
        result.written.extend(_write_task_files(ts, folder, draft, task, hidden, folder))
        indexed = {r.file for r in task.recordings}
        for rel in draft.removed_files:
            if rel in indexed:
                continue
            try:
                path = safe_recording_path(folder, rel)
            except CtbError:
                continue
            path.unlink()
            result.removed.append(path)
            _prune_empty(path.parent, folder / RECORDINGS_DIR)
    if commit:
        act: Action = action or ("duplicate" if draft.origin else "create" if draft.is_new else "edit")
        # a sealed task's commit says what changed, never the gold: every clone can read messages
        notes = [sealed_note(c) for c in draft.changes] if ts.is_sealed(folder) else list(draft.changes)
        subject = message or _subject(act, task.id, draft, notes)
        result.commit, result.note = commit_paths(
            ts.root,
            touched,
            task_id=task.id,
            action=act,
            author=author or default_author(ts.root),
            subject=subject,
            details=[*notes, *([result.status_note] if result.status_note else [])],
        )
    return result


def _subject(action: Action, task_id: str, draft: TaskDraft, notes: list[str]) -> str:
    if action == "duplicate":
        return f"{task_id}: duplicate of {draft.origin}"
    if action == "create":
        return f"{task_id}: new {draft.family.value} task"
    if len(notes) == 1:
        return f"{task_id}: {notes[0]}"
    return f"{task_id}: edit ({len(notes)} changes)" if notes else f"{task_id}: edit"


def _prune_empty(folder: Path, stop: Path) -> None:
    while folder != stop and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def delete_task(ts: TaskSet, task_id: str, *, commit: bool = True, author: str = "") -> SaveResult:
    """Remove a task folder (all of it: files, recordings, review records) and commit the removal."""
    ref = ts.ref(task_id)
    shutil.rmtree(ref.path)
    result = SaveResult(task_id=task_id, folder=ref.path, removed=[ref.path])
    if commit:
        result.commit, result.note = commit_paths(
            ts.root,
            [ref.path],
            task_id=task_id,
            action="delete",
            author=author or default_author(ts.root),
            subject=f"{task_id}: delete task",
            details=[],
        )
    return result


# --------------------------------------------------------------------------- git


def _split_author(author: str) -> tuple[str, str]:
    m = re.fullmatch(r"\s*(.*?)\s*<([^>]*)>\s*", author)
    if m:
        return m.group(1) or m.group(2), m.group(2)
    name = author.strip() or "ctbench author"
    return name, f"{re.sub(r'[^A-Za-z0-9._-]+', '.', name).strip('.') or 'author'}@localhost"


def commit_message(
    subject: str, *, task_id: str, action: Action, author: str, details: Iterable[str] = ()
) -> str:
    """Subject, a bullet list of what changed, and the trailers review statistics read back."""
    lines = [subject, ""]
    body = [f"- {d}" for d in dict.fromkeys(details)]
    if body:
        lines += [*body, ""]
    lines += trailer_lines([(Trailer.TASK, task_id), (Trailer.ACTION, action), (Trailer.AUTHOR, author)])
    return "\n".join(lines) + "\n"


def commit_paths(
    root: Path,
    paths: Sequence[Path],
    *,
    task_id: str,
    action: Action,
    author: str,
    subject: str,
    details: Iterable[str] = (),
) -> tuple[str | None, str]:
    """Commit exactly ``paths`` (additions, changes, removals) with trailers; (sha or None, note).

    Other staged or unstaged work in the repository is left alone: the commit is limited to the
    task's own paths. A task set outside a git repository is saved without a commit and says so.
    """
    import git

    try:
        repo = harden(git.Repo(root, search_parent_directories=True))  # no repo-set programs
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None, f"{root} is not in a git repository; saved without a commit"
    top = Path(repo.working_tree_dir or root).resolve()
    rels = []
    for p in paths:
        try:
            rels.append(Path(os.path.abspath(p)).resolve().relative_to(top).as_posix())
        except ValueError:
            continue
    if not rels:
        return None, "nothing to commit"
    msg = commit_message(subject, task_id=task_id, action=action, author=author, details=details)
    name, email = _split_author(author)
    env: dict[str, str] = {}
    reader = repo.config_reader()
    configured = reader.has_option("user", "name") and reader.has_option("user", "email")
    if not configured:
        env.update(GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email)
    # A person id (people listed in reviewers.yaml) is this clone's own git identity: git writes it.
    # A legacy "Name <email>" (or a bare name) is written as the commit's author.
    by_id = "<" not in author and configured
    author_opt = [] if by_id else [f"--author={name} <{email}>"]
    try:
        repo.git.add("-A", "--", *rels)
        # never commit an interrupted save's temporary copy (.hidden.yaml.XXXXXXXX.tmp holds the gold)
        temps = [
            f
            for f in repo.git.diff("--cached", "--name-only", "--", *rels).splitlines()
            if is_leftover_temp(PurePosixPath(f).name)
        ]
        if temps:
            repo.git.rm("--cached", "-q", "--ignore-unmatch", "--", *temps)
        if repo.head.is_valid() and not repo.git.diff("--cached", "--name-only", "--", *rels).strip():
            return None, "nothing changed; no commit made"
        repo.git.commit("-m", msg, *author_opt, "--", *rels, env=env)
    except git.GitCommandError as exc:
        text = (exc.stderr or exc.stdout or str(exc)).strip().splitlines()
        if any("nothing to commit" in t or "no changes added" in t for t in text):
            return None, "nothing changed; no commit made"
        raise CtbError(f"the files are saved but git commit failed: {text[-1] if text else exc}") from None
    return repo.head.commit.hexsha, ""
