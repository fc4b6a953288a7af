"""A release's manifest (``RELEASE.yaml``): what was published, from which tasks, and how it was checked.

``ctb-author release`` writes it at the top of the public release folder; ``ctb-author import-release``
copies it to the root of the task set it rebuilds, where the run gate and ``run.yaml`` read it. It
lives in the core because both sides read it: the authoring component writes releases, the evaluate
component runs them, and neither may import the other's modules for it.

A release is cited by its version and the sha256 of this file (:func:`manifest_hash`): every per-task
content hash and every data file's hash is inside it, so one hash pins the whole release.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from ctbench.errors import CtbError, validation_message
from ctbench.model import Family, Strict
from ctbench.yamlio import load_fast

RELEASE_FILE = "RELEASE.yaml"
RELEASE_FORMAT = 1
SPLIT = "test"
SHARD = f"{SPLIT}-00000-of-00001.parquet"
"""The one parquet file of each config's split (the Hub's shard naming)."""


def pyarrow_module() -> Any:
    """pyarrow, or the message that says which extra brings it."""
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise CtbError(
            "releases are parquet files: reading or writing one needs pyarrow: pip install 'ctbench[release]'",
            exit_code=2,
        ) from None
    return pyarrow


class ReleasedTask(Strict):
    """One retained task: its hashes, its review in brief, and how its blindness was guaranteed."""

    id: str
    family: Family
    content_hash: str = Field(description="The run gate's hash of all five parts (ctbench.approval.gate).")
    visible: dict[str, str] = Field(
        default_factory=dict,
        description="Hashes of the public parts (statement, recordings): checkable without the gold.",
    )
    recordings: int = 0
    review: dict[str, Any] = Field(default_factory=dict)
    blindness: str = ""


class ExcludedTask(Strict):
    id: str
    reason: str


class ReleaseManifest(Strict):
    format: int = RELEASE_FORMAT
    name: str
    version: str
    date: str
    ctbench_version: str
    task_set: dict[str, Any] = Field(default_factory=dict, description="commit and dirty flag of the source")
    license: str
    canary: str
    gold: str = Field(description="Where the gold went: never the public folder.")
    counts: dict[str, Any] = Field(default_factory=dict)
    review: dict[str, Any] = Field(default_factory=dict)
    tasks: list[ReleasedTask] = Field(default_factory=list)
    excluded: list[ExcludedTask] = Field(default_factory=list)
    files: dict[str, str] = Field(default_factory=dict, description="sha256 of every data file, by path")

    def task(self, task_id: str) -> ReleasedTask | None:
        for t in self.tasks:
            if t.id == task_id:
                return t
        return None


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def manifest_hash(folder: Path) -> str:
    """The hash a run records and a paper cites: sha256 of ``RELEASE.yaml`` as published."""
    return sha256_file(folder / RELEASE_FILE)


def load_manifest(folder: Path) -> ReleaseManifest:
    """``folder/RELEASE.yaml``, validated; a clear error (file and what is wrong) otherwise."""
    path = folder / RELEASE_FILE
    if not path.is_file():
        raise CtbError(f"{folder}: no {RELEASE_FILE} (not a ctbench release folder)")
    data = load_fast(path)
    try:
        return ReleaseManifest.model_validate(data)
    except ValidationError as exc:
        raise CtbError(f"{path}: {validation_message(exc, '')} (a release manifest)") from None


def find_manifest(task_set_root: Path) -> ReleaseManifest | None:
    """The manifest of a task set rebuilt from a release, or None for an ordinary task set."""
    if not (task_set_root / RELEASE_FILE).is_file():
        return None
    return load_manifest(task_set_root)
