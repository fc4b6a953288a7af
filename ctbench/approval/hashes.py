"""Content hashes per part of a task, so a later change reopens exactly the criteria it touches.

A verdict is given on a version of the task. Rather than reopen everything on any edit (and teach
authors to avoid fixing typos), each part is hashed on its own and each criterion depends on the
parts it judges:

=============================  ==========================================
part changed                   criteria reopened
=============================  ==========================================
statement                      solvability
recordings                     golden-action consistency, solvability
gold answer                    answer completeness, solvability
golden actions                 golden-action consistency
metadata                       metadata correctness
=============================  ==========================================

Hashes are computed from bytes through a :class:`PartReader`, so the same code hashes the working
tree and any commit in git (the audit and the pull-request diff read old versions). The visible
parts are hashed without ever asking for ``hidden.yaml``: the blind solve records them too.

Sealed gold carries a secret ``hash_key`` inside its ciphertext, and its three hidden parts (gold,
golden actions, metadata) are then hashed as ``hmac-sha256:`` keyed with it. A plain ``sha256:`` of
a short answer (one device, one interface, one label) is found by hashing every guess; a keyed one
is not, without the key, and everyone who can read the gold can recompute it (a reviewer after
the unseal, the authors, the maintainers, the run gate). A hidden part without a key keeps its
plain ``sha256:``; a plain hash recorded before a key was added still matches the same content
(:meth:`ContentHashes.same`), so adding a key reopens nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from pydantic import PrivateAttr

from ctbench.approval.states import Criterion
from ctbench.errors import CtbError
from ctbench.model import Strict
from ctbench.store import HIDDEN_FILE, TASK_FILE, TaskSet, safe_recording_path
from ctbench.yamlio import load_fast

PARTS: tuple[str, ...] = ("statement", "recordings", "gold", "golden_actions", "metadata")

CRITERION_PARTS: dict[Criterion, tuple[str, ...]] = {
    Criterion.SOLVABILITY: ("statement", "recordings", "gold"),
    Criterion.ANSWER_COMPLETENESS: ("gold",),
    Criterion.GOLDEN_ACTION_CONSISTENCY: ("recordings", "golden_actions"),
    Criterion.METADATA_CORRECTNESS: ("metadata",),
}
PART_TITLES = {
    "statement": "statement",
    "recordings": "recordings",
    "gold": "gold answer",
    "golden_actions": "golden actions",
    "metadata": "metadata",
}


HIDDEN_PARTS: tuple[str, ...] = ("gold", "golden_actions", "metadata")
KEYED = "hmac-sha256:"


class ContentHashes(Strict):
    """``sha256:<hex>`` per part (``hmac-sha256:<hex>`` for the hidden parts of sealed gold);
    ``None`` where a part was not hashed (hidden parts at blind time)."""

    statement: str | None = None
    recordings: str | None = None
    gold: str | None = None
    golden_actions: str | None = None
    metadata: str | None = None
    _plain: dict[str, str] = PrivateAttr(default_factory=dict)
    """Keyed hidden parts' plain ``sha256:`` too, only in memory: what a record written before the
    key matches. Never stored (it is exactly what the key protects)."""

    def get(self, part: str) -> str | None:
        return getattr(self, part)

    def same(self, part: str, recorded: str | None) -> bool:
        """Whether ``recorded`` (a hash from a record) is this part's hash, keyed or, before a key, plain.

        An unknown on either side counts as the same: nothing can be said to have changed.
        """
        now = self.get(part)
        if recorded is None or now is None:
            return True
        if recorded == now:
            return True
        return not recorded.startswith(KEYED) and self._plain.get(part) == recorded

    def subset(self, parts: Iterable[str]) -> dict[str, str]:
        return {p: v for p in parts if (v := self.get(p)) is not None}


class PartReader(Protocol):
    """Reads a file of one task version by its path relative to the task folder; None if absent."""

    def __call__(self, rel: str) -> bytes | None: ...


def disk_reader(task_dir: Path, ts: TaskSet | None = None) -> PartReader:
    """Reads the working tree; recordings go through the store's traversal-safe resolver.

    With ``ts``, a sealed hidden part is read through the store (decrypted with the user's identity;
    a :class:`~ctbench.sealing.SealError` tells a caller it cannot be checked); without it, only a
    plain ``hidden.yaml`` is read.
    """

    def read(rel: str) -> bytes | None:
        if rel == HIDDEN_FILE and ts is not None:
            return ts.hidden_bytes(task_dir)
        try:
            if rel in (TASK_FILE, HIDDEN_FILE):
                return (task_dir / rel).read_bytes()
            return safe_recording_path(task_dir, rel).read_bytes()
        except (OSError, CtbError):  # missing or refused recording: the part hashes as "missing"
            return None

    return read


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def digest(value: Any) -> str:
    """Hash of a JSON value in canonical form (sorted keys, no spacing), so key order never matters."""
    return "sha256:" + hashlib.sha256(_canonical(value)).hexdigest()


def keyed_digest(value: Any, key: str) -> str:
    """:func:`digest` keyed with a task's secret ``hash_key`` (HMAC-SHA256): unguessable without it."""
    return KEYED + hmac.new(key.encode("utf-8"), _canonical(value), hashlib.sha256).hexdigest()


def sha256_text(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _yaml(read: PartReader, name: str) -> dict[str, Any] | None:
    data = read(name)
    if data is None:
        return None
    try:
        doc = load_fast(Path(name), data.decode("utf-8"))
    except Exception:
        return {"unreadable": sha256_bytes(data)}
    return doc if isinstance(doc, dict) else {"unreadable": sha256_bytes(data)}


def _visible(task: dict[str, Any] | None, read: PartReader) -> dict[str, str]:
    if task is None:
        return {"statement": digest(None), "recordings": digest(None)}
    statement = {k: task.get(k) for k in ("title", "statement", "network", "accessible")}
    recs = []
    for rec in task.get("recordings") or []:
        if not isinstance(rec, dict):
            continue
        data = read(str(rec.get("file", "")))
        recs.append(
            [
                str(rec.get("device")),
                str(rec.get("command")),
                sha256_bytes(data) if data is not None else "missing",
            ]
        )
    recs.sort()
    return {"statement": digest(statement), "recordings": digest(recs)}


def visible_hashes(read: PartReader) -> ContentHashes:
    """Statement and recordings only: what a blind reviewer saw. Never asks for ``hidden.yaml``."""
    return ContentHashes(**_visible(_yaml(read, TASK_FILE), read))


def content_hashes(read: PartReader) -> ContentHashes:
    """All five parts of one version of a task."""
    out = _visible(_yaml(read, TASK_FILE), read)
    hidden = _yaml(read, HIDDEN_FILE) or {}
    actions = []
    for a in hidden.get("golden_actions") or []:
        if isinstance(a, dict):
            actions.append([str(a.get("device")), str(a.get("command")), str(a.get("why", ""))])
    actions.sort()  # the paper fixes no order for independent checks: reordering is no change
    values = {"gold": hidden.get("answer"), "golden_actions": actions, "metadata": hidden.get("metadata")}
    key = hidden.get("hash_key")
    if isinstance(key, str) and key:
        hashes = ContentHashes(**out, **{p: keyed_digest(v, key) for p, v in values.items()})
        hashes._plain = {p: digest(v) for p, v in values.items()}
        return hashes
    return ContentHashes(**out, **{p: digest(v) for p, v in values.items()})


def task_content_hash(task_dir: Path, ts: TaskSet | None = None) -> str:
    """One ``sha256:`` over the five part hashes: what a result line, a gate and a release record.

    ``ts`` reads a sealed hidden part (``hidden.yaml.age``) with the user's identity.
    """
    parts = content_hashes(disk_reader(task_dir, ts)).model_dump()
    text = ";".join(f"{k}={parts[k]}" for k in sorted(parts))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def changed_parts(before: ContentHashes | dict[str, str], after: ContentHashes) -> list[str]:
    """Parts whose hash differs; a part unknown on either side does not count as changed."""
    old = before.model_dump() if isinstance(before, ContentHashes) else dict(before)
    return [part for part in PARTS if not after.same(part, old.get(part))]


def criteria_reopened(parts: Iterable[str]) -> list[Criterion]:
    """The criteria a change to ``parts`` reopens, in the paper's order.

    The inverse view of a criterion's ``reopened_by`` (:class:`~ctbench.approval.records.CriterionReview`),
    which names the parts whose change reopened it.
    """
    touched = set(parts)
    return [c for c, deps in CRITERION_PARTS.items() if touched & set(deps)]


def stale_criteria(
    agreed_on: Callable[[Criterion], dict[str, str]], now: ContentHashes
) -> dict[Criterion, list[str]]:
    """For each criterion, the parts changed since the verdict was given (only non-empty entries)."""
    out: dict[Criterion, list[str]] = {}
    for crit, deps in CRITERION_PARTS.items():
        seen = agreed_on(crit)
        changed = [p for p in deps if p in seen and not now.same(p, seen[p])]
        if changed:
            out[crit] = changed
    return out
