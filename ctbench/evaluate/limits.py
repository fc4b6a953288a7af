"""What one attempt may use of the machine: processes, file size, and room in its folders.

An agent shares the machine with the runner and with the attempts beside it. Without caps one that
forks without end, writes a file without end or fills the temp disk takes the machine from the
others, and they fail through no fault of their own (issue 25, item 4). Per attempt:

``procs``
    Processes and threads of the attempt's tree. Enforced by a **pids cgroup** of its own when the
    runner may create one (cgroup v1 ``pids`` hierarchy, or a cgroup v2 subtree with the ``pids``
    controller delegated to the runner), else by ``RLIMIT_NPROC`` - which the kernel does not
    enforce for root, and which counts every process of the user, not only the attempt's.
``file_size``
    Largest file any process of the tree may write (``RLIMIT_FSIZE``): its own files and the
    runner's files it writes into (standard output, the log its standard error goes to). Beyond
    it, the write fails and the process gets ``SIGXFSZ``.
``disk``
    Room in the attempt's folder (its workspace, its I/O folder, a harness's home): the folder is a
    tmpfs of that size, mounted by the runner when it may mount (root, or ``CAP_SYS_ADMIN``), so an
    agent that fills it fills only its own. Inside the sandbox ``/tmp`` and ``/var/tmp`` are sized
    tmpfs as well (:mod:`ctbench.evaluate.sandbox`). Where the runner may not mount, the folders
    share the temp disk; a full temp disk is then the machine's trouble (retried), not the
    attempts' beside the one that filled it.

``ctb-eval run --limit KEY=VALUE`` changes a cap (``--limit disk=1G``) or turns it off
(``--limit procs=off``).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import resource
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ctbench.plugin_api.settings import AttemptLimits as AttemptLimits
from ctbench.plugin_api.settings import MiB as MiB
from ctbench.plugin_api.settings import human_size as human_size

SIZE_UNITS = {"": 1, "k": 1024, "m": MiB, "g": 1024 * MiB}
SIZE_RE = re.compile(r"^\s*(\d+)\s*([kmg]?)(?:i?b)?\s*$", re.IGNORECASE)
MNT_DETACH = 2
MS_NOSUID, MS_NODEV = 2, 4
CGROUP_PREFIX = "ctbench-"


class LimitError(ValueError):
    """A ``--limit`` value that is not ``KEY=N``, ``KEY=SIZE`` or ``KEY=off``."""


def parse_size(text: str) -> int:
    """``512M``, ``1G``, ``64k``, ``4096``: bytes (binary units)."""
    m = SIZE_RE.match(text)
    if m is None:
        raise LimitError(f"{text!r}: expected a size such as 64M, 1G or 4096")
    return int(m.group(1)) * SIZE_UNITS[m.group(2).lower()]


def apply_limit_args(base: AttemptLimits, given: list[str]) -> AttemptLimits:
    """``--limit procs=256 --limit disk=off``: ``base`` with those caps changed."""
    keys = {"procs": "procs", "file-size": "file_size", "file_size": "file_size", "disk": "disk"}
    update: dict[str, int | None] = {}
    for item in given:
        key, sep, value = item.partition("=")
        field = keys.get(key.strip().lower())
        if not sep or field is None:
            raise LimitError(f"--limit {item!r}: expected procs=N, file-size=SIZE or disk=SIZE (or =off)")
        value = value.strip()
        if value.lower() in ("off", "none", "unlimited"):
            update[field] = None
        elif field == "procs":
            if not value.isdigit():
                raise LimitError(f"--limit {item!r}: procs takes a whole number or off")
            update[field] = int(value)
        else:
            update[field] = parse_size(value)
    try:
        return AttemptLimits.model_validate({**base.model_dump(), **update})
    except ValueError as exc:
        raise LimitError(f"--limit: {exc}") from None


# --------------------------------------------------------------------------- processes: a pids cgroup


def _own_cgroups() -> dict[str, str]:
    """Controller (``pids``; ``""`` for cgroup v2) -> this process's cgroup path."""
    out: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                out[c] = path
    return out


def _cgroup_mounts() -> list[tuple[str, str, str, list[str]]]:
    """(fstype, mount point, root inside the hierarchy, super options) of every cgroup mount."""
    out = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, sep, right = line.partition(" - ")
            if not sep:
                continue
            fields, rest = left.split(), right.split()
            if len(fields) >= 5 and len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2"):
                out.append((rest[0], fields[4].replace("\\040", " "), fields[3], rest[2].split(",")))
    return out


def _under(mount: str, root: str, own: str) -> Path:
    rel = own[len(root) :] if root != "/" and own.startswith(root) else own
    return Path(mount) / rel.lstrip("/")


def _candidate_pids_roots() -> list[Path]:
    own = _own_cgroups()
    out = []
    for fstype, mount, root, opts in _cgroup_mounts():
        if fstype == "cgroup" and "pids" in opts and "pids" in own:
            out.append(_under(mount, root, own["pids"]))
        elif fstype == "cgroup2" and "" in own:
            folder = _under(mount, root, own[""])
            with contextlib.suppress(OSError):
                if "pids" in (folder / "cgroup.subtree_control").read_text().split():
                    out.append(folder)
    return out


def stale_cgroup_roots() -> list[Path]:
    """Where attempt cgroups of this runner's kind may be (for the sweep of dead runners' groups)."""
    return [p for p in _candidate_pids_roots() if p.is_dir()]


def find_pids_root() -> Path | None:
    """A cgroup folder in which this runner may create pids-limited groups (tried once), or None."""
    for folder in _candidate_pids_roots():
        probe = folder / f"{CGROUP_PREFIX}probe-{os.getpid()}-{os.urandom(3).hex()}"
        try:
            probe.mkdir()
        except OSError:
            continue
        try:
            (probe / "pids.max").write_text("8")
            return folder
        except OSError:
            continue
        finally:
            with contextlib.suppress(OSError):
                probe.rmdir()
    return None


@dataclass
class AttemptCgroup:
    """One attempt's pids cgroup: its processes join it before ``exec`` and can start no more than
    ``pids.max`` between them."""

    path: Path
    limit: int

    @classmethod
    def create(cls, root: Path, name: str, limit: int) -> AttemptCgroup:
        path = root / f"{CGROUP_PREFIX}{name}-{os.urandom(4).hex()}"
        path.mkdir()
        try:
            (path / "pids.max").write_text(str(limit))
        except OSError:
            path.rmdir()
            raise
        return cls(path, limit)

    @property
    def procs_file(self) -> str:
        return str(self.path / "cgroup.procs")

    def refused(self) -> int:
        """How many times a fork was refused because the group was at its cap."""
        with contextlib.suppress(OSError, ValueError):
            for line in _read_small(self.path / "pids.events").splitlines():
                key, _, value = line.partition(" ")
                if key == "max":
                    return int(value)
        return 0

    def remove(self) -> None:
        """Kill whatever is left in the group (the attempt is over) and remove it."""
        remove_cgroup(self.path)


def remove_cgroup(path: Path) -> bool:
    """Kill what is left in the group and remove it; False when it would not go within about a second.

    Right after the attempt's last process is reaped the group is often still busy for a moment
    (the kernel releases the task a little later): the retries start at 0.5 ms and double, so the
    usual case costs the attempt a millisecond, not a fixed 20 ms sleep.
    """
    import signal
    import time

    pause = 0.0005
    deadline = time.monotonic() + 1.0
    while True:
        try:  # first: the usual group is empty by now, and then nothing need be read
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return False
        try:
            pids = [int(x) for x in _read_small(path / "cgroup.procs").split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _read_small(path: Path) -> str:
    """A small kernel file (cgroup, ``/proc``) in one read, without a Python file object around it."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 65536).decode()
    finally:
        os.close(fd)


def remove_stale_cgroups(root: Path, owner_gone: Callable[[str], bool]) -> int:
    """Remove the attempt groups of runners that died (``owner_gone(name)``); returns how many."""
    removed = 0
    with contextlib.suppress(OSError):
        for path in root.iterdir():
            if path.is_dir() and path.name.startswith(CGROUP_PREFIX) and owner_gone(path.name):
                removed += remove_cgroup(path)
    return removed


def _user_tasks() -> int:
    """Processes and threads this user runs now (``RLIMIT_NPROC`` counts them all)."""
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
    return count


def child_hook(limits: AttemptLimits, cgroup: AttemptCgroup | None) -> Callable[[], None] | None:
    """What the child does between ``fork`` and ``exec``: join the attempt's cgroup, set its limits.

    Everything is computed here, in the parent; the hook only makes system calls. Without a cgroup
    the process cap falls back to ``RLIMIT_NPROC`` above what the user already runs (it counts the
    user's every process); root is exempt from it.
    """
    procs_file = cgroup.procs_file.encode() if cgroup is not None else None
    nproc = None
    if cgroup is None and limits.procs is not None and os.getuid() != 0:
        nproc = _user_tasks() + limits.procs
    fsize = limits.file_size
    if procs_file is None and nproc is None and fsize is None:
        return None

    def hook() -> None:
        if procs_file is not None:
            fd = os.open(procs_file, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)
        if nproc is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return hook


# --------------------------------------------------------------------------- room: a sized tmpfs


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def mount_tmpfs(folder: Path, size: int) -> None:
    """Mount a tmpfs of ``size`` bytes on ``folder`` (empty, this user's); raises OSError."""
    opts = f"size={size},mode=0700".encode()
    if _libc().mount(b"tmpfs", os.fsencode(folder), b"tmpfs", MS_NOSUID | MS_NODEV, opts) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), str(folder))


def unmount(folder: Path) -> None:
    """Detach the tmpfs on ``folder`` if there is one (its files go with it)."""
    with contextlib.suppress(OSError):
        if os.path.ismount(folder):
            _libc().umount2(os.fsencode(folder), MNT_DETACH)


def can_mount_tmpfs() -> bool:
    """Whether this process may mount a tmpfs (root or ``CAP_SYS_ADMIN``): tried once, on a temp folder."""
    folder = Path(tempfile.mkdtemp(prefix="ctbench-mount-probe-"))
    try:
        mount_tmpfs(folder, MiB)
    except OSError:
        return False
    else:
        unmount(folder)
        return True
    finally:
        with contextlib.suppress(OSError):
            folder.rmdir()


def folder_full(folder: Path | None, slack: int = 64 * 1024) -> str | None:
    """``its folder is full (the 512 MiB disk cap)`` when ``folder`` is its own sized tmpfs with less
    than ``slack`` bytes free: the attempt's own doing, never the machine's."""
    if folder is None:
        return None
    try:
        if not os.path.ismount(folder):
            return None
        st = os.statvfs(folder)
    except OSError:
        return None
    if st.f_bavail * st.f_frsize >= slack:
        return None
    return f"its folder is full (the {human_size(st.f_blocks * st.f_frsize)} disk cap)"


@dataclass
class HostLimits:
    """The caps and what this host can enforce them with (found once per run by :func:`host_limits`)."""

    limits: AttemptLimits
    pids_root: Path | None = None
    can_mount: bool = False

    def describe(self) -> str:
        """One line for the log: the caps and how each is enforced here."""
        procs = (
            "off"
            if self.limits.procs is None
            else f"{self.limits.procs} (pids cgroup)"
            if self.pids_root is not None
            else f"{self.limits.procs} (RLIMIT_NPROC{', not enforced for root' if os.getuid() == 0 else ''})"
        )
        disk = human_size(self.limits.disk)
        if self.limits.disk is not None and not self.can_mount:
            disk += " (not enforced: the runner may not mount a tmpfs)"
        return f"procs {procs}, file size {human_size(self.limits.file_size)}, disk {disk}"


def host_limits(limits: AttemptLimits) -> HostLimits:
    return HostLimits(
        limits,
        pids_root=find_pids_root() if limits.procs is not None else None,
        can_mount=can_mount_tmpfs() if limits.disk is not None else False,
    )


__all__ = [
    "AttemptCgroup",
    "AttemptLimits",
    "HostLimits",
    "LimitError",
    "apply_limit_args",
    "can_mount_tmpfs",
    "child_hook",
    "find_pids_root",
    "folder_full",
    "host_limits",
    "human_size",
    "mount_tmpfs",
    "parse_size",
    "remove_stale_cgroups",
    "stale_cgroup_roots",
    "unmount",
]
