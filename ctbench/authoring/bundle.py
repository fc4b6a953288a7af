"""Self-contained task bundles: export a task to JSON and import it back, losslessly.

A bundle carries the parsed task (for tools that only read JSON) *and* every file of the task folder
verbatim (for lossless import): YAML text keeps its comments, recordings keep every byte (UTF-8 text
as a JSON string, anything else as base64). The shared network file travels with the task so a bundle
is usable on its own. ``--public-only`` drops everything an agent must not see (hidden.yaml, reviews).
Export -> import -> export is byte-identical: keys are sorted and files listed in path order.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path, PurePosixPath
from typing import Any

from ctbench.errors import CtbError
from ctbench.model import Family
from ctbench.store import HIDDEN_FILE, REVIEWS_DIR, SEALED_HIDDEN_FILE, TASK_FILE, TaskRef, TaskSet
from ctbench.yamlio import atomic_write_bytes, load_fast

FORMAT = "ctbench-task-bundle"
VERSION = 1
PRIVATE = (HIDDEN_FILE, REVIEWS_DIR)
"""Top-level entries of a task folder a public bundle leaves out: the gold and the review records."""


def _encode(data: bytes) -> dict[str, str]:
    try:
        text = data.decode("utf-8")
        if text.encode("utf-8") == data:
            return {"text": text}
    except UnicodeDecodeError:
        pass
    return {"base64": base64.b64encode(data).decode("ascii")}


def _decode(entry: dict[str, str], where: str) -> bytes:
    if "text" in entry:
        return entry["text"].encode("utf-8")
    if "base64" in entry:
        try:
            return base64.b64decode(entry["base64"], validate=True)
        except ValueError:
            raise CtbError(f"{where}: invalid base64 content") from None
    raise CtbError(f"{where}: file entry has neither 'text' nor 'base64'")


def export_task(ts: TaskSet, ref: TaskRef, *, public_only: bool = False) -> dict[str, Any]:
    files: dict[str, dict[str, str]] = {}
    for p in sorted(ref.path.rglob("*")):
        if not p.is_file() or p.is_symlink():
            continue
        rel = p.relative_to(ref.path).as_posix()
        if public_only and PurePosixPath(rel).parts[0] in PRIVATE:
            continue
        if any(part.startswith(".") for part in PurePosixPath(rel).parts):
            continue  # editor droppings, draft autosaves
        files[rel] = _encode(p.read_bytes())
    task = load_fast(ref.task_file)
    net_name = task.get("network") if isinstance(task, dict) else None
    set_files: dict[str, dict[str, str]] = {}
    if isinstance(net_name, str) and ts.network_path(net_name).is_file():
        set_files[f"networks/{net_name}.yaml"] = _encode(ts.network_path(net_name).read_bytes())
    bundle: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "id": ref.id,
        "family": ref.family.value,
        "public_only": public_only,
        "task": task,
        "files": files,
        "set_files": set_files,
    }
    if not public_only and ref.hidden_file.is_file():
        bundle["hidden"] = load_fast(ref.hidden_file)
    elif not public_only and ts.is_sealed(ref):  # sealed gold: opened with the user's identity
        bundle["hidden"] = load_fast(ref.path / SEALED_HIDDEN_FILE, ts.hidden_text(ref))
    return bundle


def dumps(bundle: dict[str, Any], *, compact: bool = False) -> str:
    if compact:
        return json.dumps(bundle, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(bundle, sort_keys=True, ensure_ascii=False, indent=2) + "\n"


def read_bundles(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CtbError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise CtbError(f"{path}: not UTF-8 JSON") from None
    out: list[dict[str, Any]] = []
    stripped = text.lstrip()
    try:
        if stripped.startswith("{") and not _is_jsonl(text):
            out.append(json.loads(text))
        else:
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise CtbError(f"{path}:{n}: invalid JSON: {exc.msg}") from None
    except json.JSONDecodeError as exc:
        raise CtbError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    for i, b in enumerate(out, 1):
        if not isinstance(b, dict) or b.get("format") != FORMAT:
            raise CtbError(f"{path}: entry {i} is not a ctbench task bundle (format {FORMAT!r} expected)")
    return out


def _is_jsonl(text: str) -> bool:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 2:
        return False
    try:
        json.loads(lines[0])
        return True
    except json.JSONDecodeError:
        return False


def _safe_rel(rel: str, where: str) -> PurePosixPath:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts or "\\" in rel:
        raise CtbError(f"{where}: refusing unsafe path {rel!r} in bundle")
    return p


def import_bundle(ts: TaskSet, bundle: dict[str, Any], *, replace: bool = False) -> list[Path]:
    """Write a bundle into the task set. Refuses to change existing files unless ``replace``."""
    task_id = str(bundle.get("id", ""))
    try:
        family = Family(str(bundle.get("family")))
    except ValueError:
        raise CtbError(f"bundle {task_id!r}: unknown family {bundle.get('family')!r}") from None
    if not task_id or "/" in task_id or task_id.startswith("."):
        raise CtbError(f"bundle has an invalid task id {task_id!r}")
    if bundle.get("version") != VERSION:
        raise CtbError(
            f"bundle {task_id}: version {bundle.get('version')} is not supported (expected {VERSION})"
        )
    folder = ts.task_dir(family, task_id)
    plan: list[tuple[Path, bytes]] = []
    for rel, entry in sorted(bundle.get("files", {}).items()):
        plan.append((folder / _safe_rel(rel, f"bundle {task_id}"), _decode(entry, f"{task_id}/{rel}")))
    for rel, entry in sorted(bundle.get("set_files", {}).items()):
        set_rel = _safe_rel(rel, f"bundle {task_id}")
        if set_rel.parts[0] != "networks":
            raise CtbError(f"bundle {task_id}: set file {rel!r} is not a network")
        plan.append((ts.root / set_rel, _decode(entry, f"{task_id}/{rel}")))
    if TASK_FILE not in bundle.get("files", {}):
        raise CtbError(f"bundle {task_id}: has no {TASK_FILE}")
    conflicts = [p for p, data in plan if p.exists() and p.read_bytes() != data]
    if conflicts and not replace:
        names = ", ".join(str(p.relative_to(ts.root)) for p in conflicts[:5])
        raise CtbError(
            f"bundle {task_id}: would overwrite {len(conflicts)} changed file(s) ({names}); "
            "use --replace to overwrite"
        )
    written: list[Path] = []
    for p, data in plan:
        if atomic_write_bytes(p, data):
            written.append(p)
    return written
