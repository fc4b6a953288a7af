"""Which task set a run or a release came from: its git commit, whether it was dirty, and its release.

``run.yaml`` records it (:class:`~ctbench.evaluate.runfolder.RunConfig`) and ``RELEASE.yaml`` records
it for the tasks a release was cut from (``ctb-author release``). Both sides read the same answer from
here, in the core, so neither the authoring component nor the evaluate component imports the other.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ctbench.errors import CtbError
from ctbench.gitsafe import harden
from ctbench.releases import RELEASE_FILE, load_manifest, manifest_hash


class TaskSetRef(BaseModel):
    """Which task set, at which commit. ``commit`` is ``none`` outside git; ``dirty`` covers the set only."""

    model_config = ConfigDict(extra="forbid")

    path: str
    commit: str = "none"
    dirty: bool = False
    release: str | None = Field(default=None, description="Version of the release the set was imported from.")
    release_hash: str | None = Field(default=None, description="sha256 of that release's RELEASE.yaml.")


def task_set_commit(root: Path) -> TaskSetRef:
    """``git rev-parse HEAD`` of the repository holding the task set, whether the set is dirty, and the
    release it was imported from (``RELEASE.yaml`` at its root: version and manifest hash).

    Only changes under the task-set folder count as dirty: a run folder created inside the same
    repository must not make the next resume look like it ran on different tasks.
    """
    ref = _git_ref(Path(root).resolve())
    if (ref_root := Path(ref.path)).joinpath(RELEASE_FILE).is_file():
        try:
            ref.release = load_manifest(ref_root).version
            ref.release_hash = manifest_hash(ref_root)
        except (CtbError, OSError):  # the gate names a broken manifest; the run still says it had one
            ref.release = "unreadable RELEASE.yaml"
    return ref


def _in_git(root: Path) -> bool:
    """Whether git could find a repository at or above ``root`` (a ``.git`` there or above, or ``root``
    a git folder itself): importing GitPython costs more than scoring a small run, so a task set
    outside any repository does without it."""
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            return True
    return (root / "HEAD").is_file() and (root / "objects").is_dir()


def _git_ref(root: Path) -> TaskSetRef:
    if not _in_git(root):
        return TaskSetRef(path=str(root))
    try:
        import git
    except ImportError:  # GitPython is a dependency, but a broken install must not stop a run
        return TaskSetRef(path=str(root))
    try:
        repo = harden(git.Repo(root, search_parent_directories=True))  # its .git/config runs nothing
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return TaskSetRef(path=str(root))
    try:
        commit = repo.head.commit.hexsha
    except ValueError:  # a repository without commits
        return TaskSetRef(path=str(root), dirty=True)
    workdir = Path(repo.working_tree_dir or root).resolve()
    rel = os.path.relpath(root, workdir)
    dirty = repo.is_dirty(untracked_files=True, path=None if rel == "." else rel)
    return TaskSetRef(path=str(root), commit=commit, dirty=dirty)


__all__ = ["TaskSetRef", "task_set_commit"]
