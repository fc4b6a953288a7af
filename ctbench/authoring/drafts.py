"""Draft autosave: unsaved work in the authoring app survives a crash, a killed terminal or a lost SSH link.

While an author edits, the app writes the whole working copy (:class:`~ctbench.authoring.editing.TaskDraft`,
recording bytes included) to ``<task set>/.drafts/<ID>.json`` a moment after each change, by temp file and
rename, so the file on disk is always a complete draft. The next start offers every draft found there
back; saving the task or discarding the draft removes the file.

The folder sits at the root of the task set, beside ``rca/`` and ``path/``, where neither validation,
statistics nor export look, and it carries its own ``.gitignore`` so drafts never reach a commit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from ctbench.authoring.working_copy import TASK_ID_RE, TaskDraft
from ctbench.errors import CtbError
from ctbench.model import Family
from ctbench.store import TaskSet
from ctbench.yamlio import atomic_write_text

DRAFTS_DIR = ".drafts"


@dataclass(frozen=True)
class DraftInfo:
    """What the recovery dialog shows about a draft without loading its recordings."""

    task_id: str
    family: Family
    saved_at: str
    is_new: bool
    changes: int
    path: Path

    def describe(self) -> str:
        what = "new task" if self.is_new else "unsaved changes"
        when = self.saved_at.replace("T", " ").replace("Z", " UTC") if self.saved_at else "unknown time"
        return f"{self.task_id} ({self.family.value}, {what}, {self.changes} change(s), autosaved {when})"


class DraftStore:
    """The drafts folder of one task set."""

    def __init__(self, root: Path) -> None:
        self.folder = root / DRAFTS_DIR

    def path_for(self, task_id: str) -> Path:
        if not TASK_ID_RE.match(task_id):
            raise CtbError(f"task id {task_id!r} cannot name a draft")
        return self.folder / f"{task_id}.json"

    def save(self, draft: TaskDraft) -> Path:
        """Write ``draft`` atomically; returns its path. Safe to call from a worker thread."""
        self.folder.mkdir(parents=True, exist_ok=True)
        ignore = self.folder / ".gitignore"
        if not ignore.exists():
            atomic_write_text(ignore, "# ctb-author autosaves: never committed\n*\n")
        stamped = draft.model_copy(update={"saved_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")})
        path = self.path_for(draft.id)
        atomic_write_text(path, stamped.model_dump_json(indent=1))
        return path

    def load(self, task_id: str) -> TaskDraft | None:
        path = self.path_for(task_id)
        if not path.is_file():
            return None
        try:
            return TaskDraft.model_validate_json(path.read_bytes())
        except (ValidationError, ValueError) as exc:
            raise CtbError(
                f"{path}: draft cannot be read ({str(exc).splitlines()[0]}); move it away to start afresh"
            ) from None

    def set_aside(self, task_id: str) -> Path | None:
        """Move a draft out of the way (kept, no longer offered back); returns where it went.

        Used when the author opens the saved task instead of the draft: the new session's autosaves
        must not overwrite the older unsaved work.
        """
        path = self.path_for(task_id)
        if not path.is_file():
            return None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = self.folder / f"{task_id}.{stamp}.json.set-aside"
        path.rename(target)
        return target

    def discard(self, task_id: str) -> None:
        try:
            self.path_for(task_id).unlink()
        except FileNotFoundError:
            pass

    def list(self) -> list[DraftInfo]:
        """Every readable draft, newest first. Unreadable files are skipped, never deleted."""
        out: list[DraftInfo] = []
        if not self.folder.is_dir():
            return out
        for path in self.folder.glob("*.json"):
            try:
                data = json.loads(path.read_bytes())
                task = data["task"]
                out.append(
                    DraftInfo(
                        task_id=str(task["id"]),
                        family=Family(task["family"]),
                        saved_at=str(data.get("saved_at", "")),
                        is_new=bool(data.get("is_new")),
                        changes=len(data.get("changes") or []),
                        path=path,
                    )
                )
            except (OSError, ValueError, KeyError, TypeError):
                continue
        out.sort(key=lambda d: d.saved_at, reverse=True)
        return out


def holds_no_work(ts: TaskSet, draft: TaskDraft) -> bool:
    """Whether ``draft`` equals its task as saved: kept on quit or found at start, it is dropped.

    Compared on content (both YAML parts, pending recordings, removals, network edits), not on the
    change list, so an edit typed and undone again counts as no work too.
    """
    if draft.is_new or draft.pending or draft.removed_files or draft.network is not None:
        return False
    try:
        ref = ts.ref(draft.id)
        task, hidden = ts.load_task(ref), ts.load_hidden(ref)
    except CtbError:
        return False  # deleted or unreadable on disk: the draft may be all that is left
    return draft.spec() == task and draft.hidden == hidden


def empty_drafts(ts: TaskSet, store: DraftStore) -> list[str]:
    """Ids of the drafts in ``store`` that hold no work (see :func:`holds_no_work`)."""
    out = []
    for info in store.list():
        try:
            draft = store.load(info.task_id)
        except CtbError:
            continue  # unreadable drafts are offered (and explained) as before, never deleted here
        if draft is not None and holds_no_work(ts, draft):
            out.append(info.task_id)
    return out
