"""Files an agent left in its attempt folder, read as data: never as a path the agent chose.

After an external agent has gone, the runner reads what it left behind - the ``command`` agent's
answer, stdout and usage files, a harness's last message, session database and logs, the stdio
proxy's log. The runner reads them outside the sandbox, with the runner's rights, so every one of
them is something the agent could have replaced: by a symbolic link to a review record, an earlier
run's log, ``hidden.yaml`` or ``/proc/self/environ`` (the runner would copy the gold or its API keys
into the run); by a FIFO (the runner would block forever); by a link to ``/dev/zero`` or a sparse
file of many GiB (the runner's memory would grow until the OOM killer).

So this module is the only way the runner opens such a file (issue 25, item 1):

- every component below the attempt folder is opened relative to a directory descriptor of that
  folder, with ``O_NOFOLLOW``: a symbolic link anywhere on the way is refused, not followed;
- the file is opened ``O_NONBLOCK`` (a FIFO cannot block the open) and must then be a regular file
  with a single link (``fstat``): FIFOs, sockets, devices, folders and hard links are refused;
- it is read up to a cap, in chunks, never whole: an answer beyond its cap is refused, a log or
  transcript keeps its head and tail with a marker saying how much was left out.

A refusal is the agent's error (:class:`RefusedFile`, an :class:`AgentError`), in one line:
``answer.txt is a symbolic link: refused``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from ctbench.plugin_api.agent import AgentError

KIB = 1024
MIB = 1024 * KIB
ANSWER_CAP = 1 * MIB
"""Most bytes an answer (answer file, stdout read as the answer, a last message) may hold."""
SMALL_CAP = 64 * KIB
"""Most bytes of a small record the runner parses (the usage file)."""
LOG_CAP = 8 * MIB
"""Most bytes of one copied log or transcript (its first and last halves; a marker between)."""
DB_CAP = 256 * MIB
"""Most bytes of a harness's session database copied out to be opened with sqlite."""
TAIL_CAP = 256 * KIB
"""Bytes at the end of a log read for its last lines."""
CHUNK = 256 * KIB

_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


class Writer(Protocol):
    """Where copied bytes go (a binary file, an ``AgentLog``)."""

    def write(self, data: bytes, /) -> object: ...


class RefusedFile(AgentError):
    """The agent left something other than a plain file where the runner reads one: its error."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def human(n: int) -> str:
    """``1.5 MiB``: a size for a message."""
    size = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"  # pragma: no cover - the loop always returns


@dataclass(frozen=True)
class Capped:
    """Bytes read from an agent's file: ``size`` is the file's, ``truncated`` whether some are left out."""

    data: bytes
    size: int
    truncated: bool


class AttemptFolder:
    """A directory descriptor of one attempt's folder, through which its files are opened.

    ``root`` is a folder the runner made (its name and its parent are the runner's); what lies
    inside is the agent's. Use it as a context manager, or :meth:`close` it.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._fd = os.open(self.root, _OPEN_DIR)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> AttemptFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- opening

    @staticmethod
    def _parts(rel: str | PurePosixPath) -> tuple[str, ...]:
        parts = PurePosixPath(rel).parts
        if not parts or PurePosixPath(rel).is_absolute() or any(p in ("..", ".") for p in parts):
            raise ValueError(f"{rel!r}: a path inside the attempt folder is expected")
        return parts

    def _refuse(self, dir_fd: int, name: str, shown: str) -> RefusedFile:
        try:
            mode = os.lstat(name, dir_fd=dir_fd).st_mode
        except OSError:
            mode = stat.S_IFLNK
        return RefusedFile(f"{shown} is {_kind(mode)}: refused")

    @contextlib.contextmanager
    def _dir(self, parts: tuple[str, ...], shown: str) -> Iterator[int | None]:
        """A descriptor of the folder ``parts`` (None: it does not exist), every step without links."""
        fds: list[int] = []
        dir_fd = self._fd
        try:
            for i, part in enumerate(parts):
                try:
                    dir_fd = os.open(part, _OPEN_DIR, dir_fd=dir_fd)
                except FileNotFoundError:
                    yield None
                    return
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise self._refuse(dir_fd, part, "/".join(parts[: i + 1])) from None
                    raise
                fds.append(dir_fd)
            yield dir_fd
        finally:
            for fd in fds:
                os.close(fd)

    @contextlib.contextmanager
    def open(self, rel: str | PurePosixPath) -> Iterator[tuple[int, int] | None]:
        """``(fd, size)`` of the regular file ``rel`` (None: it does not exist); refuses anything else."""
        parts = self._parts(rel)
        shown = "/".join(parts)
        with self._dir(parts[:-1], shown) as dir_fd:
            if dir_fd is None:
                yield None
                return
            try:
                fd = os.open(parts[-1], _OPEN_FILE, dir_fd=dir_fd)
            except FileNotFoundError:
                yield None
                return
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EOPNOTSUPP, errno.ENODEV):
                    raise self._refuse(dir_fd, parts[-1], shown) from None
                raise
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    raise RefusedFile(f"{shown} is {_kind(st.st_mode)}: refused")
                if st.st_nlink != 1:
                    raise RefusedFile(f"{shown} has {st.st_nlink} hard links: refused")
                yield fd, st.st_size
            finally:
                os.close(fd)

    def listdir(self, rel: str | PurePosixPath) -> list[str]:
        """Names in the folder ``rel`` (empty when it does not exist); refuses a link on the way."""
        parts = self._parts(rel)
        with self._dir(parts, "/".join(parts)) as dir_fd:
            return sorted(os.listdir(dir_fd)) if dir_fd is not None else []

    # ----------------------------------------------------------------- reading

    def read(self, rel: str | PurePosixPath, cap: int) -> Capped | None:
        """The first ``cap`` bytes of ``rel`` (None: no such file)."""
        with self.open(rel) as opened:
            if opened is None:
                return None
            fd, size = opened
            data = _read_at(fd, 0, cap)
            more = len(data) == cap and bool(os.pread(fd, 1, cap))
            return Capped(data, max(size, len(data)), more)

    def read_limited(self, rel: str | PurePosixPath, cap: int) -> bytes | None:
        """The whole of ``rel``, which must hold at most ``cap`` bytes (None: no such file).

        For data the runner parses as a whole (an answer, the usage record): a larger one is refused.
        """
        got = self.read(rel, cap)
        if got is None:
            return None
        if got.truncated:
            shown = "/".join(self._parts(rel))
            raise RefusedFile(f"{shown} holds {human(got.size)}, over the {human(cap)} cap: refused")
        return got.data

    def tail(self, rel: str | PurePosixPath, cap: int = TAIL_CAP) -> Capped | None:
        """The last ``cap`` bytes of ``rel`` (None: no such file)."""
        with self.open(rel) as opened:
            if opened is None:
                return None
            fd, size = opened
            start = max(0, size - cap)
            data = _read_at(fd, start, cap)
            return Capped(data, size, start > 0)

    def copy_to(self, rel: str | PurePosixPath, out: Writer, cap: int = LOG_CAP) -> Capped | None:
        """Copy ``rel`` into ``out`` in chunks: all of it up to ``cap`` bytes, else its first and last
        ``cap/2`` with a marker line between (``Capped.data`` is empty; None: no such file)."""
        with self.open(rel) as opened:
            if opened is None:
                return None
            fd, size = opened
            return copy_capped(fd, size, out, cap, "/".join(self._parts(rel)))

    def copy_whole(self, rel: str | PurePosixPath, dest: Path, cap: int = DB_CAP) -> bool:
        """Copy ``rel`` to the runner's own file ``dest`` (a database to open there); refused over
        ``cap``. False: no such file."""
        with self.open(rel) as opened:
            if opened is None:
                return False
            fd, size = opened
            if size > cap:
                shown = "/".join(self._parts(rel))
                raise RefusedFile(f"{shown} holds {human(size)}, over the {human(cap)} cap: refused")
            out_fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            with os.fdopen(out_fd, "wb") as out:
                offset = 0
                while offset < cap and (chunk := os.pread(fd, min(CHUNK, cap - offset), offset)):
                    out.write(chunk)
                    offset += len(chunk)
            return True


def _read_at(fd: int, offset: int, cap: int) -> bytes:
    parts: list[bytes] = []
    got = 0
    while got < cap:
        chunk = os.pread(fd, min(CHUNK, cap - got), offset + got)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def truncation_marker(name: str, size: int, left_out: int, cap: int) -> bytes:
    return (
        f"\n[ctbench] ... {human(left_out)} of {name} left out here ({human(size)} in all; "
        f"logs keep the first and last {human(cap // 2)}) ...\n"
    ).encode()


def copy_capped(fd: int, size: int, out: Writer, cap: int, name: str) -> Capped:
    """Copy the file ``fd`` (``size`` bytes by fstat) to ``out``: whole up to ``cap``, else head and tail
    with :func:`truncation_marker` between. A file that grows while it is read is cut at ``cap``."""
    if size <= cap:
        copied = 0
        while copied < cap and (chunk := os.pread(fd, min(CHUNK, cap - copied), copied)):
            out.write(chunk)
            copied += len(chunk)
        return Capped(b"", size, False)
    half = cap // 2
    for offset, length in ((0, half), (size - half, half)):
        done = 0
        while done < length and (chunk := os.pread(fd, min(CHUNK, length - done), offset + done)):
            out.write(chunk)
            done += len(chunk)
        if offset == 0:
            out.write(truncation_marker(name, size, size - 2 * half, cap))
    return Capped(b"", size, True)


def read_log(path: Path, cap: int = LOG_CAP) -> bytes:
    """The runner's own attempt log (the agent wrote to it through its standard error), capped like
    :meth:`AttemptFolder.copy_to`: a 1 GiB stderr never enters the runner's memory whole."""
    import io

    try:
        fd = os.open(path, _OPEN_FILE)
    except OSError:
        return b""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b""
        buf = io.BytesIO()
        copy_capped(fd, st.st_size, buf, cap, "this log")
        return buf.getvalue()
    finally:
        os.close(fd)


def log_tail(path: Path, cap: int = TAIL_CAP) -> bytes:
    """The last ``cap`` bytes of the runner's own attempt log."""
    try:
        fd = os.open(path, _OPEN_FILE)
    except OSError:
        return b""
    try:
        size = os.fstat(fd).st_size
        return _read_at(fd, max(0, size - cap), cap)
    finally:
        os.close(fd)


__all__ = [
    "ANSWER_CAP",
    "DB_CAP",
    "LOG_CAP",
    "SMALL_CAP",
    "TAIL_CAP",
    "AttemptFolder",
    "Capped",
    "RefusedFile",
    "copy_capped",
    "human",
    "log_tail",
    "read_log",
]
