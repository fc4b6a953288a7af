"""What a process that must not see the gold is shown: the one definition, below replay and evaluate.

Two kinds of process run beside a task set without being allowed to read its answers: an agent
(``ctb-eval run``: :mod:`ctbench.evaluate.sandbox`, and a Ray worker's copy of the task files,
:mod:`ctbench.evaluate.ray_executor`) and the replay server a blind reviewer or an author's Try-it
console talks to (:mod:`ctbench.replay.isolated`). Both are given the same two things, defined here
once so that the two can never drift apart:

- :func:`visible_files`: a task's agent-visible files - the set's ``ctbench.yaml``,
  ``taxonomy.yaml`` and dialect extensions, the task's network file, its ``task.yaml`` and the
  recordings it lists (each through :func:`~ctbench.store.safe_recording_path`: no link, nothing
  outside the task folder). A whitelist, never a copy of a folder: ``hidden.yaml`` and anything an
  author leaves beside the task stay behind.
- :class:`BwrapCommand`: the bubblewrap command line around such a process - an empty root with
  read-only system folders and a subset of ``/etc``, fresh ``/proc``, ``/dev`` and ``/tmp``, the
  folders named (read-only or writable, each alone) and nothing else; new namespaces for
  everything but (when asked) the network; the process tree dies with its parent.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ctbench.errors import CtbError
from ctbench.store import CONFIG_FILE, TAXONOMY_FILE, TaskSet, safe_recording_path

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Read-only system folders (or the links to ``/usr`` that stand for them)."""

ETC_FILES = (
    "passwd",
    "group",
    "hosts",
    "resolv.conf",
    "nsswitch.conf",
    "host.conf",
    "gai.conf",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "pki",
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "os-release",
    "protocols",
    "services",
    "mime.types",
)
"""What of /etc is shown: users, name resolution, certificates, the dynamic linker, the time."""


# --------------------------------------------------------------------------- the agent-visible files


@dataclass(frozen=True)
class VisibleFiles:
    """A task's agent-visible files as {path relative to the task set: file}, in three parts that
    are shipped apart (a Ray run puts each part in the object store once: the set's part once per
    run, a network once for all its tasks)."""

    set_files: dict[str, Path]
    network: dict[str, Path]
    task: dict[str, Path]

    def all(self) -> dict[str, Path]:
        return {**self.set_files, **self.network, **self.task}


def visible_set_files(ts: TaskSet) -> dict[str, Path]:
    """The set's part: ``ctbench.yaml``, ``taxonomy.yaml`` and the dialect extensions."""
    out = {name: ts.root / name for name in (CONFIG_FILE, TAXONOMY_FILE) if (ts.root / name).is_file()}
    for p in ts.dialect_extensions():
        out[f"dialects/{p.name}"] = p
    return out


def visible_task_files(ts: TaskSet, task_id: str) -> tuple[dict[str, Path], dict[str, Path]]:
    """The task's part: (its network file, its ``task.yaml`` and the recordings it lists).

    A task that does not parse is its ``task.yaml`` alone (whoever loads it then refuses it as the
    task set would); a recording refused by :func:`~ctbench.store.safe_recording_path` (a link, a
    path out of the task folder, a missing file) is left out and answers as unrecorded.
    """
    ref = ts.ref(task_id)
    rel_dir = f"{ref.family.value}/{ref.id}"
    task = {f"{rel_dir}/task.yaml": ref.task_file}
    try:
        spec = ts.load_task(ref)
    except CtbError:
        return {}, task
    network: dict[str, Path] = {}
    net = ts.network_file(spec.network)
    if net is not None:
        network[f"networks/{net.name}"] = net
    for rec in spec.recordings:
        with contextlib.suppress(CtbError, OSError):
            task[f"{rel_dir}/{PurePosixPath(rec.file)}"] = safe_recording_path(ref.path, rec.file)
    return network, task


def visible_files(ts: TaskSet, task_id: str) -> VisibleFiles:
    """Everything of ``ts`` that an agent (or a blind reviewer's replay server) may see for one task."""
    network, task = visible_task_files(ts, task_id)
    return VisibleFiles(visible_set_files(ts), network, task)


# --------------------------------------------------------------------------- the bubblewrap command


def resolved(paths: Iterable[Path | str]) -> list[Path]:
    """Each path with its links resolved; one that cannot be resolved is left out."""
    out: list[Path] = []
    for p in paths:
        with contextlib.suppress(OSError, RuntimeError):
            out.append(Path(p).resolve())
    return out


def runtime_paths() -> list[Path]:
    """What ``python -m ctbench...`` needs to run inside, read-only: the Python installation, the
    virtual environment, and the ``ctbench`` package folder alone (never the checkout around it: an
    editable install from a checkout with ``tasks/`` shows no task)."""
    import ctbench

    paths = {Path(sys.base_prefix), Path(sys.prefix), Path(ctbench.__file__).parent}
    return sorted(set(resolved(paths)))


@dataclass
class BwrapCommand:
    """One bubblewrap command line (:meth:`argv`); every sandbox of ctbench is built with it.

    ``etc_dir``: a prepared copy of :data:`ETC_FILES` bound as ``/etc`` in one mount, else each
    name is bound on its own (``hosts_file`` standing in for ``/etc/hosts``). ``tmpfs``: (folder,
    size in bytes or None) for each private memory folder. ``read_only``/``read_write``: folders and
    files shown at their own path, a parent before what is mounted inside it. ``binds``: further
    writable paths (Unix sockets) bound after them. ``extra``: arguments placed before the mounts
    (an identity, a capability).
    """

    bwrap: str
    share_net: bool = True
    hostname: str | None = None
    extra: Sequence[str] = ()
    etc_dir: Path | None = None
    hosts_file: Path | None = None
    tmpfs: Sequence[tuple[str, int | None]] = (("/tmp", None),)
    dirs: Sequence[str] = ()
    read_only: Sequence[Path] = ()
    read_write: Sequence[Path] = ()
    binds: Sequence[Path] = ()
    chdir: Path | None = None
    remount_ro: bool = True

    def namespace_args(self) -> list[str]:
        args = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session"]
        if self.hostname is not None:
            args += ["--hostname", self.hostname]
        args += ["--cap-drop", "ALL"]
        if self.share_net:
            args.append("--share-net")
        return args

    def system_args(self) -> list[str]:
        args: list[str] = []
        for d in SYSTEM_DIRS:
            p = Path(d)
            if p.is_symlink():
                args += ["--symlink", os.readlink(p), d]
            elif p.is_dir():
                args += ["--ro-bind", d, d]
        if self.etc_dir is not None:  # the run's copy: one mount instead of one per name
            return [*args, "--ro-bind", str(self.etc_dir), "/etc"]
        for name in ETC_FILES:
            if name == "hosts" and self.hosts_file is not None:
                args += ["--ro-bind", str(self.hosts_file), "/etc/hosts"]
            else:
                args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        return args

    def argv(self) -> list[str]:
        """The command up to (not including) the ``--`` before the program."""
        args = [*self.namespace_args(), *self.extra, *self.system_args(), "--proc", "/proc", "--dev", "/dev"]
        for folder, size in self.tmpfs:
            args += [*(["--size", str(size)] if size is not None else []), "--tmpfs", folder]
        for d in self.dirs:
            args += ["--dir", d]
        mounts = {p: "--ro-bind" for p in self.read_only} | {p: "--bind" for p in self.read_write}
        for p in sorted(mounts, key=lambda p: len(p.parts)):  # a parent before what is mounted inside it
            args += [mounts[p], str(p), str(p)]
        for s in self.binds:
            args += ["--bind", str(s), str(s)]
        if self.remount_ro:
            args += ["--remount-ro", "/"]
        if self.chdir is not None:
            args += ["--chdir", str(self.chdir)]
        return args


__all__ = [
    "ETC_FILES",
    "SYSTEM_DIRS",
    "BwrapCommand",
    "VisibleFiles",
    "resolved",
    "runtime_paths",
    "visible_files",
    "visible_set_files",
    "visible_task_files",
]
