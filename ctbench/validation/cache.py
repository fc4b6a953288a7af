"""Validation results reused across runs, keyed by a content hash of everything they depend on.

The run gate validates every candidate task before a run (``ctb-eval run``): over a set of 1,000
tasks that is seconds of YAML parsing, every time, for files that have not changed. A task's
validation errors depend only on its own files, the set's shared files (``ctbench.yaml``,
``taxonomy.yaml``, ``networks/``, ``dialects/``), whether another folder uses its id, and the
ctbench code that checks them. So each task's outcome (its first error, or none) is stored under a
SHA-256 over exactly those - the bytes of every file in the task folder and the set's shared files,
the targets of links, the folders sharing its id, and a fingerprint of the installed ctbench (every
module's path, size and modification time). A changed byte anywhere gives a new key: the task is
validated again.

Where: one file per task set (by its resolved path) under ``$CTBENCH_CACHE_DIR``, else
``$XDG_CACHE_HOME/ctbench``, else ``~/.cache/ctbench``, in a folder only the user may enter; written
whole (temp file, fsync, rename), so an interrupted run leaves the old file or the new one. A file
that is not this user's regular file, is too large or does not parse is ignored (and replaced).
Tasks with sealed gold (``hidden.yaml.age``) are never cached: their validation depends on the
user's identity, which is no file of the set.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from ctbench.store import TaskRef, TaskSet, set_relative

CACHE_VERSION = 2
MAX_CACHE_BYTES = 64 * 1024 * 1024
MAX_ENTRIES = 50_000
SHARED_FOLDERS = ("networks", "dialects")
SEALED_FILE = "hidden.yaml.age"


def cache_root() -> Path:
    """``$CTBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/ctbench``, else ``~/.cache/ctbench``."""
    if explicit := os.environ.get("CTBENCH_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ctbench"


@cache
def code_fingerprint() -> str:
    """What identifies the checking code: every file of the installed ``ctbench`` package (path,
    size, modification time), the Python version and the pydantic version."""
    import pydantic

    import ctbench

    h = hashlib.sha256(f"{CACHE_VERSION}|{sys.version}|{pydantic.VERSION}".encode())
    package = Path(ctbench.__file__).parent
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):
                st = os.stat(path)
                h.update(f"{os.path.relpath(path, package)}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _hash_tree(h: hashlib._Hash, folder: Path, label: str) -> None:
    """Every entry under ``folder``, in a fixed order (by name, depth first): files by content, links
    by target, anything else by its mode.

    One ``scandir`` per folder, a ``stat`` only for what may be a regular file (the entry's type
    comes with the listing) and each file opened once without following links: over 1,000 task
    folders this walk is the whole cost of a gate whose outcomes are all known.
    """

    def walk(dirpath: str, rel: str) -> None:
        try:
            with os.scandir(dirpath) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            h.update(f"{label}|E|{rel}|{exc.errno}\n".encode())
            return
        below: list[tuple[str, str]] = []
        for entry in entries:
            name = f"{rel}/{entry.name}"
            try:
                if entry.is_symlink():
                    h.update(f"{label}|L|{name}|{os.readlink(entry.path)}\n".encode())
                elif entry.is_dir(follow_symlinks=False):
                    h.update(f"{label}|D|{name}\n".encode())
                    below.append((entry.path, name))
                elif entry.is_file(follow_symlinks=False):
                    _hash_file(h, entry.path, f"{label}|F|{name}")
                else:  # a FIFO, a socket, a device: named by its mode, never opened
                    h.update(f"{label}|O|{name}|{entry.stat(follow_symlinks=False).st_mode}\n".encode())
            except OSError as exc:
                h.update(f"{label}|E|{name}|{exc.errno}\n".encode())
        for path, name in below:
            walk(path, name)

    walk(str(folder), ".")


def _hash_file(h: hashlib._Hash, path: str, head: str) -> None:
    """A regular file's size and bytes; anything else (a FIFO, a device, a link put there since the
    listing) by its mode, never read."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            h.update(f"{head}|mode {st.st_mode}\n".encode())
            return
        h.update(f"{head}|{st.st_size}\n".encode())
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
    finally:
        os.close(fd)


def set_key(task_set: TaskSet) -> str:
    """The hash of what every task's validation shares: the set's own files and the code."""
    root = task_set.root
    h = hashlib.sha256(code_fingerprint().encode())
    with contextlib.suppress(OSError), os.scandir(root) as it:
        for entry in sorted(it, key=lambda e: e.name):
            if entry.is_file(follow_symlinks=False):
                with open(entry.path, "rb") as fh:
                    h.update(f"top|{entry.name}|".encode() + fh.read() + b"\n")
            elif entry.is_symlink():
                h.update(f"top-link|{entry.name}|{os.readlink(entry.path)}\n".encode())
    for name in SHARED_FOLDERS:
        if (root / name).is_dir():
            _hash_tree(h, root / name, name)
    return h.hexdigest()


def task_key(shared: str, task_set: TaskSet, ref: TaskRef, same_id: Sequence[TaskRef]) -> str:
    h = hashlib.sha256(shared.encode())
    h.update(f"{ref.family.value}|{ref.id}|{set_relative(task_set.root, ref.path)}\n".encode())
    for other in sorted(set_relative(task_set.root, r.path) for r in same_id if r.path != ref.path):
        h.update(f"same-id|{other}\n".encode())
    _hash_tree(h, ref.path, "task")
    return h.hexdigest()


class ValidationCache:
    """The stored outcomes of one task set: ``lookup`` what is known, ``store`` what was found."""

    def __init__(self, task_set: TaskSet, path: Path, variant: str = "") -> None:
        self.task_set = task_set
        self.path = path
        self.entries: dict[str, str | None] = self._load()
        self.shared = hashlib.sha256(f"{variant}|{set_key(task_set)}".encode()).hexdigest()
        self.dups = task_set.duplicate_ids()
        self.keys: dict[str, str] = {}

    @classmethod
    def open(cls, task_set: TaskSet, variant: str = "") -> ValidationCache:
        """The cache of ``task_set``; ``variant`` names what else shaped the stored outcomes (the
        gate's outcomes with each task's network errors are not the bare validator's)."""
        name = hashlib.sha256(str(task_set.root.resolve()).encode()).hexdigest()[:32]
        return cls(task_set, cache_root() / "validation" / f"{name}.json", variant)

    def _load(self) -> dict[str, str | None]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return {}
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_size > MAX_CACHE_BYTES:
                return {}
            with os.fdopen(os.dup(fd), "rb") as fh:
                data = json.loads(fh.read(MAX_CACHE_BYTES))
        except (OSError, ValueError):
            return {}
        finally:
            os.close(fd)
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return {}
        tasks = data.get("tasks")
        if not isinstance(tasks, dict):
            return {}
        return {k: v for k, v in tasks.items() if isinstance(k, str) and (v is None or isinstance(v, str))}

    def _key(self, ref: TaskRef) -> str | None:
        if (ref.path / SEALED_FILE).exists():
            return None
        key = self.keys.get(ref.id)
        if key is None:
            key = self.keys[ref.id] = task_key(self.shared, self.task_set, ref, self.dups.get(ref.id, []))
        return key

    def lookup(self, refs: Iterable[TaskRef]) -> tuple[dict[str, str | None], list[TaskRef]]:
        """(task id -> stored outcome, the tasks still to validate)."""
        known: dict[str, str | None] = {}
        todo: list[TaskRef] = []
        for ref in refs:
            key = self._key(ref)
            if key is not None and key in self.entries:
                known[ref.id] = self.entries[key]
            else:
                todo.append(ref)
        return known, todo

    def store(self, outcomes: dict[str, str | None], refs: Iterable[TaskRef]) -> None:
        """Remember the outcomes of ``refs`` and write the file (at most :data:`MAX_ENTRIES`, outdated
        ones dropped first). Never raises: a cache that cannot be written only costs the next run
        its time."""
        fresh = dict(self.entries)
        for ref in refs:
            if (key := self._key(ref)) is not None:
                fresh[key] = outcomes.get(ref.id)
        if fresh == self.entries:
            return
        if len(fresh) > MAX_ENTRIES:  # old versions of tasks go first; the ones just looked up stay
            current = set(self.keys.values())
            old = [k for k in fresh if k not in current]
            for k in old[: len(fresh) - MAX_ENTRIES]:
                del fresh[k]
        kept = fresh
        self.entries = kept
        with contextlib.suppress(OSError):
            self._write({"version": CACHE_VERSION, "tasks": kept})

    def _write(self, data: dict[str, object]) -> None:
        folder = self.path.parent
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, separators=(",", ":"))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


__all__ = ["ValidationCache", "cache_root", "code_fingerprint", "set_key", "task_key"]
