"""A release's manifest (``RELEASE.yaml``): what was published, from which tasks, and how it was checked.

``ctb-author release`` writes it at the top of the public release folder; ``ctb-author import-release``
copies it to the root of the task set it rebuilds, where the run gate and ``run.yaml`` read it. It
lives in the core because both sides read it: the authoring component writes releases, the evaluate
component runs them, and neither may import the other's modules for it.

A release is cited by its version and the sha256 of this file (:func:`manifest_hash`): every per-task
content hash and every data file's hash is inside it, so one hash pins the whole release.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from ctbench.errors import CtbError, validation_message
from ctbench.model import Family, Strict
from ctbench.yamlio import atomic_write_text, dump_document, load_fast, to_commented

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


# --------------------------------------------------------------------------- dataset files
# A release (ctb-author release) and a results dataset of runs on it (ctb-eval export --format release)
# are written the same way, so both load with ``datasets`` alike.


def json_safe(value: Any) -> Any:
    """Rows as JSON: bytes become base64 text (JSON has no bytes); everything else unchanged."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value


def write_parquet(path: Path, rows: list[dict[str, Any]], schema: Any) -> None:
    """One parquet file of ``rows`` with an explicit schema (a column of nulls keeps its type),
    written beside its place and renamed into it, so a reader never sees half a file."""
    pa = pyarrow_module()
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(rows, schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    """The same rows as JSON lines (keys sorted, bytes as base64), written atomically."""
    text = "".join(json.dumps(json_safe(r), ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)


def yaml_header(data: dict[str, Any]) -> str:
    """A dataset card's YAML header (the Hub reads configs, licence and gating from it)."""
    return "---\n" + dump_document(to_commented(data)) + "---\n"
