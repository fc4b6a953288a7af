"""``ctb-author import-release``: task folders back from a release, with the hashes it published.

The public rows carry ``task.yaml`` and each network file verbatim and every recording's bytes; the
gold folder (``--gold``) carries each ``hidden.yaml`` verbatim. The result is an ordinary task set
(``ctbench.yaml``, ``taxonomy.yaml``, ``networks/``, ``rca/<ID>/``, ``path/<ID>/``) with the release's
``RELEASE.yaml`` at its root, which the run gate reads: a task whose content hash equals the one the
release published counts as released (its review records stay with the source repository).

Every byte is checked on the way in: a recording whose sha256 differs from its row, a data file
whose hash differs from the manifest, or a task whose content hash differs from the published one
stops the import with the file and task named, and nothing is left half-written.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ctbench.approval.hashes import content_hashes, disk_reader, task_content_hash
from ctbench.errors import CtbError
from ctbench.model import family_names
from ctbench.releases import RELEASE_FILE, SHARD, ReleaseManifest, load_manifest, pyarrow_module, sha256_file
from ctbench.store import FAMILIES, HIDDEN_FILE, TASK_FILE, check_recording_rel
from ctbench.yamlio import atomic_write_bytes, atomic_write_text


@dataclass
class ImportResult:
    manifest: ReleaseManifest
    out: Path
    tasks: list[str] = field(default_factory=list)
    with_gold: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.manifest.version,
            "out": str(self.out),
            "tasks": self.tasks,
            "gold": self.with_gold,
        }


def _rows(path: Path) -> list[dict[str, Any]]:
    pyarrow_module()
    import pyarrow.parquet as pq

    try:
        rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    except (OSError, ValueError) as exc:
        raise CtbError(f"{path}: not a readable parquet file ({exc})") from None
    return rows


def _check_files(folder: Path, manifest: ReleaseManifest) -> None:
    for rel, want in sorted(manifest.files.items()):
        p = folder / rel
        if not p.is_file():
            raise CtbError(f"{p}: listed in {RELEASE_FILE} but missing")
        if sha256_file(p) != want:
            raise CtbError(f"{p}: its sha256 differs from {RELEASE_FILE} (changed after the release)")


def _safe_rel(rel: str, where: str) -> PurePosixPath:
    try:
        return check_recording_rel(rel)
    except CtbError as exc:
        raise CtbError(f"{where}: {exc}") from None


def _safe_name(name: str, what: str) -> str:
    """A task id or network name used as a file name: no separators, no dot-names."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise CtbError(f"{what} {name!r} is not a safe file name")
    return name


def sealed_gold(release: Path, identity: Path | None) -> dict[str, bytes] | None:
    """Task id -> hidden.yaml, opened from the release's ``sealed`` config with the age identity
    (``--identity`` or ``$CTBENCH_AGE_IDENTITY``); None when the release has no sealed config or no
    identity is at hand."""
    from ctbench.sealing import identity_path, unseal

    shard = release / "sealed" / SHARD
    key = identity_path(identity)
    if not shard.is_file() or key is None:
        return None
    return {
        str(r["id"]): unseal(r["hidden_yaml_age"], key, f"{shard.name} row {r['id']}") for r in _rows(shard)
    }


def import_release(
    release: Path, out: Path, gold: Path | None = None, *, identity: Path | None = None
) -> ImportResult:
    """Rebuild the task set of ``release`` in ``out`` (new or empty), with the gold when given: the
    gold folder, or else the release's sealed config opened with the age identity."""
    manifest = load_manifest(release)
    _check_files(release, manifest)
    sealed = sealed_gold(release, identity) if gold is None else None
    if gold is not None:
        gold_manifest = load_manifest(gold)
        if gold_manifest.version != manifest.version or sha256_file(gold / RELEASE_FILE) != sha256_file(
            release / RELEASE_FILE
        ):
            raise CtbError(
                f"{gold}: this gold belongs to release {gold_manifest.version} "
                f"({RELEASE_FILE} differs from {release / RELEASE_FILE})"
            )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CtbError(f"--out {out} exists and is not an empty folder", exit_code=2)
    rows = _rows(release / "tasks" / SHARD)
    net_rows = _rows(release / "networks" / SHARD)
    result = ImportResult(manifest, out, with_gold=gold is not None or sealed is not None)
    out.resolve().parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".ctb-import-", dir=out.resolve().parent) as tmp:
        stage = Path(tmp) / "tasks"
        stage.mkdir()
        for p in sorted((release / "taskset").rglob("*")):
            if p.is_file():
                dst = stage / p.relative_to(release / "taskset")
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(p, dst)
        shutil.copyfile(release / RELEASE_FILE, stage / RELEASE_FILE)
        for net in net_rows:
            name = _safe_name(str(net["name"]), "network")
            atomic_write_text(stage / "networks" / f"{name}.yaml", net["network_yaml"])
        for row in rows:
            _write_task(stage, row, gold, sealed)
            result.tasks.append(row["id"])
        _check_hashes(stage, manifest, rows, with_gold=result.with_gold)
        if out.exists():
            out.rmdir()
        os.replace(stage, out)
    return result


def _write_task(stage: Path, row: dict[str, Any], gold: Path | None, sealed: dict[str, bytes] | None) -> None:
    task_id, family = str(row["id"]), str(row["family"])
    if family not in {f.value for f in FAMILIES} and family not in family_names():
        raise CtbError(
            f"task {task_id}: unknown family {family!r} (no task family of that name is installed; a "
            "plug-in family's package must be installed to import its tasks)"
        )
    folder = stage / family / _safe_name(task_id, "task id")
    atomic_write_text(folder / TASK_FILE, row["task_yaml"])
    for rec in row["recordings"]:
        where = f"task {task_id}, recording {rec['device']} {rec['command']!r}"
        data = rec["output"].encode("utf-8") if rec["output"] is not None else rec["output_bytes"]
        if data is None:
            raise CtbError(f"{where}: neither output nor output_bytes")
        if hashlib.sha256(data).hexdigest() != rec["sha256"]:
            raise CtbError(f"{where}: bytes differ from their sha256")
        atomic_write_bytes(folder / _safe_rel(rec["file"], where), data)
    if sealed is not None:
        if task_id not in sealed:
            raise CtbError(f"the sealed config has no gold for {task_id}")
        atomic_write_bytes(folder / HIDDEN_FILE, sealed[task_id])
    elif gold is not None:
        src = gold / family / task_id / HIDDEN_FILE
        if not src.is_file():
            raise CtbError(f"{src}: the gold of {task_id} is missing")
        shutil.copyfile(src, folder / HIDDEN_FILE)


def _check_hashes(
    stage: Path, manifest: ReleaseManifest, rows: list[dict[str, Any]], *, with_gold: bool
) -> None:
    from ctbench.store import TaskSet

    ts = TaskSet(root=stage)
    ids = {str(r["id"]) for r in rows}
    missing = [t.id for t in manifest.tasks if t.id not in ids]
    if missing or len(ids) != len(manifest.tasks):
        raise CtbError(f"the rows do not match {RELEASE_FILE}: missing {', '.join(missing) or 'none'}")
    for t in manifest.tasks:
        folder = stage / t.family.value / t.id
        if with_gold:
            got = task_content_hash(folder, ts)
            if got != t.content_hash:
                raise CtbError(f"{t.id}: content hash {got} differs from the released {t.content_hash}")
        else:
            parts = content_hashes(disk_reader(folder)).subset(("statement", "recordings"))
            if parts != t.visible:
                raise CtbError(f"{t.id}: statement or recordings differ from the release's hashes")


def is_release_folder(path: Path) -> bool:
    """A published release (manifest and parquet rows), as opposed to a task set rebuilt from one."""
    return (path / RELEASE_FILE).is_file() and (path / "tasks" / SHARD).is_file()


def cache_root(env: dict[str, str] | None = None) -> Path:
    """Where rebuilt releases are kept: ``$CTBENCH_RELEASE_DIR``, else ``$XDG_CACHE_HOME/ctbench/releases``."""
    env = dict(os.environ) if env is None else env
    if env.get("CTBENCH_RELEASE_DIR"):
        return Path(env["CTBENCH_RELEASE_DIR"]).expanduser()
    base = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "ctbench" / "releases"


def task_set_of(
    release: Path, gold: Path | None, root: Path | None = None, *, identity: Path | None = None
) -> Path:
    """The task set of a release folder, rebuilt once into the cache and checked again on every use.

    ``ctb-eval run --tasks RELEASE --gold GOLD`` runs a release without an explicit import: the
    folder is keyed by the manifest's hash (and whether the gold came with it), so a changed release
    or gold gets a folder of its own, and a cached one whose content hashes no longer match the
    manifest is refused rather than run.
    """
    manifest = load_manifest(release)
    from ctbench.sealing import identity_path

    with_gold = gold is not None or (
        (release / "sealed" / SHARD).is_file() and identity_path(identity) is not None
    )
    key = hashlib.sha256((release / RELEASE_FILE).read_bytes()).hexdigest()[:16]
    name = f"{_safe_name(manifest.name, 'release name')}-{_safe_name(manifest.version, 'version')}-{key}"
    target = (root or cache_root()) / (name + ("-gold" if with_gold else "-public"))
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            import_release(release, target, gold, identity=identity)
        except CtbError:
            if not target.is_dir():  # another run rebuilt it meanwhile: check it below
                raise
    rows = [{"id": t.id} for t in manifest.tasks]
    if sha256_file(target / RELEASE_FILE) != sha256_file(release / RELEASE_FILE):
        raise CtbError(f"{target}: holds another release than {release}; remove it and run again")
    _check_hashes(target, manifest, rows, with_gold=with_gold)
    return target
