"""The run folder's writer process: finished attempts put on disk by group commit (issue 25).

A finished attempt is its files (trajectory, log, a harness's transcript) and then its result line,
the commit point: a (task, trial) is done exactly when its line is in ``results.jsonl``, and a line
never reaches the disk before the files it names. This process does that writing for the runner,
which sends it each attempt with every byte already made (:mod:`ctbench.evaluate.recorder`).

Why a process of its own: the writing is some fifteen system calls per attempt, each of which gives
up the interpreter's lock and must take it back. In a thread of the runner those hand-offs competed
with the event loop running the next attempt (~65 context switches per task against 19 for a bare
attempt, `tests/bench/bench_runner.py` part 1); here they compete with nothing.

Each round takes every job that has arrived, writes their files without ``fsync``, makes them durable
together (one ``syncfs``), appends their lines with one ``write`` and one ``fsync``, then answers
each job. Thirty-two attempts that end together cost two flushes, not 96. A failed line append is cut
off again, so the file keeps whole lines only.

The wire, both ways, is frames of a 4-byte big-endian length and a :mod:`marshal` body (the same
interpreter at both ends; plain tuples, so nothing is imported to read them). A job is ``(id, ops,
line)``: ``ops`` a tuple of ``("replace", relpath, data, mode, keep_empty)`` (a whole file: temp file
and rename; a non-empty file already there, or with ``keep_empty`` any file, is kept as
``<name>.prev<N>``; ``data`` None sets the old file aside only) or ``("append", relpath, data)``;
``line`` the result line's bytes, or None for files only. An answer is ``(id, stage, errno, strerror,
filename)``, ``stage`` None when all went well, else ``"files"``, ``"durable"`` or ``"append"``.

It ends at the end of its input: every whole job received is committed first, so a runner killed
mid-run loses at most the jobs it had not finished sending. It holds the folder's lock descriptor
(passed by the runner), so a resumed run waits until the last line is written. It imports only the
standard library: it starts while the runner's first attempt runs.
"""

from __future__ import annotations

import contextlib
import ctypes
import marshal
import os
import select
import signal
import struct
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from stat import S_ISREG
from typing import Any

HEADER = struct.Struct(">I")
RESULTS_FILE = "results.jsonl"

Job = tuple[int, tuple[tuple[Any, ...], ...], bytes | None]
Answer = tuple[int, str | None, int, str, str | None]


def frame(obj: Any) -> bytes:
    """One frame of the wire: length, then the marshalled body."""
    body = marshal.dumps(obj)
    return HEADER.pack(len(body)) + body


def free_backup_name(path: Path) -> Path:
    """``<name>.prev<N>`` with the first N not taken: where an earlier attempt's file is kept."""
    n = 1
    while True:
        cand = path.with_name(f"{path.name}.prev{n}")
        if not cand.exists():
            return cand
        n += 1


def write_file(path: Path, data: bytes, flags: int, *, sync: bool, mode: int = 0o666) -> None:
    """One ``open``, the whole ``write``, an ``fsync`` if asked, ``close``: no buffered file object
    and no folder check per file (a missing folder is made when the ``open`` says so)."""
    try:
        fd = os.open(path, flags, mode)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(path: Path, data: bytes | None, *, mode: int, keep_empty: bool, sync: bool) -> Path | None:
    """Write ``path`` whole (temp file, rename), an earlier attempt's file there kept as ``.prev<N>``.

    ``keep_empty``: an empty file there is kept too (a transcript's rule; a trajectory's keeps only a
    non-empty one). ``data`` None: only the old file is set aside; returns None."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        pass
    else:
        if S_ISREG(st.st_mode) and (keep_empty or st.st_size > 0):
            path.rename(free_backup_name(path))
    if data is None:
        return None
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write_file(tmp, data, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, sync=sync, mode=mode)
        os.replace(tmp, path)
    except OSError:  # a full disk: no half-written file left behind
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return path


def append_whole(fd: int, data: bytes) -> None:
    """Append ``data`` (whole lines) to the ``O_APPEND`` descriptor ``fd`` and ``fsync`` it; on a
    failure (a full disk) cut off what was written, so the file keeps whole lines only."""
    before = os.fstat(fd).st_size
    try:
        written = os.write(fd, data)
        while written < len(data):  # only on exotic file systems; keeps the lines whole
            written += os.write(fd, data[written:])
        os.fsync(fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, before)
        raise


def _syncfs() -> Callable[[int], int] | None:
    """libc's ``syncfs`` (Linux), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def make_durable(folder: Path, paths: Iterable[Path], syncfs: Callable[[int], int] | None) -> None:
    """Put files written without ``fsync`` on disk, with the folder entries that name them.

    One ``syncfs`` of the folder's file system where Linux has it: it flushes every file and rename at
    once, where an ``fsync`` per file cost one journal commit each. Elsewhere an ``fsync`` of each
    file and of each folder that holds one. Raises the first error (a full disk: ``ENOSPC``)."""
    paths = list(paths)
    if not paths:
        return
    if syncfs is not None:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if syncfs(fd) != 0:
                err = ctypes.get_errno()
                raise OSError(err, os.strerror(err), str(folder))
        finally:
            os.close(fd)
        return
    for p in [*paths, *dict.fromkeys(p.parent for p in paths)]:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class Writer:
    """The disk side: one run folder, its results file opened once for appending."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.syncfs = _syncfs()
        self._results_fd: int | None = None

    def commit(self, jobs: list[Job]) -> list[Answer]:
        """Files of every job, one flush, then every line in one append: an answer per job."""
        answers: dict[int, Answer] = {}
        written: list[tuple[Job, list[Path]]] = []
        for job in jobs:
            try:
                written.append((job, self._files(job)))
            except OSError as exc:  # this attempt's files only: the others go on
                answers[job[0]] = _answer(job[0], "files", exc)
        if written:
            try:
                make_durable(self.folder, (p for _, paths in written for p in paths), self.syncfs)
            except OSError as exc:
                for job, _ in written:
                    answers[job[0]] = _answer(job[0], "durable", exc)
                written = []
        lined = [job for job, _ in written if job[2] is not None]
        if lined:
            try:
                self._append(b"".join(job[2] for job in lined if job[2] is not None))
            except OSError as exc:
                for job in lined:
                    answers[job[0]] = _answer(job[0], "append", exc)
        return [answers.get(job[0], (job[0], None, 0, "", None)) for job in jobs]

    def _files(self, job: Job) -> list[Path]:
        paths: list[Path] = []
        for op in job[1]:
            if op[0] == "replace":
                _, rel, data, mode, keep_empty = op
                got = replace_file(self.folder / rel, data, mode=mode, keep_empty=keep_empty, sync=False)
                if got is not None:
                    paths.append(got)
            else:
                _, rel, data = op
                path = self.folder / rel
                write_file(path, data, os.O_WRONLY | os.O_APPEND | os.O_CREAT, sync=False)
                paths.append(path)
        return paths

    def _append(self, data: bytes) -> None:
        if self._results_fd is None:
            path = self.folder / RESULTS_FILE
            created = not path.exists()
            self._results_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            if created:
                make_durable(self.folder, [path], None)
        append_whole(self._results_fd, data)


def _answer(job_id: int, stage: str, exc: OSError) -> Answer:
    return (job_id, stage, exc.errno or 0, exc.strerror or str(exc), exc.filename and str(exc.filename))


def _jobs(buf: bytearray) -> list[Job]:
    """Every whole frame at the head of ``buf``, taken out of it."""
    jobs: list[Job] = []
    at = 0
    while len(buf) - at >= HEADER.size:
        (n,) = HEADER.unpack_from(buf, at)
        if len(buf) - at - HEADER.size < n:
            break
        jobs.append(marshal.loads(bytes(buf[at + HEADER.size : at + HEADER.size + n])))
        at += HEADER.size + n
    del buf[:at]
    return jobs


def serve(writer: Writer, infd: int, outfd: int) -> None:
    """Commit jobs as they come, a round for whatever has arrived, until the input ends."""
    buf = bytearray()
    ended = False
    while not ended:
        jobs: list[Job] = []
        while not jobs and not ended:  # wait for one whole job
            chunk = os.read(infd, 1 << 20)
            ended = not chunk
            buf += chunk
            jobs = _jobs(buf)
        while not ended and select.select([infd], [], [], 0)[0]:  # and take what else is there
            chunk = os.read(infd, 1 << 20)
            ended = not chunk
            buf += chunk
            jobs += _jobs(buf)
        if jobs:  # a partial job left at the end never was sent whole: it is not committed
            out = b"".join(frame(a) for a in writer.commit(jobs))
            view = memoryview(out)
            try:
                while view:
                    view = view[os.write(outfd, view) :]
            except BrokenPipeError:  # the runner is gone: commit what it sent, answer nobody
                pass


def main(argv: list[str] | None = None) -> int:
    """``python -m ctbench.evaluate.writer FOLDER``: jobs on stdin, answers on stdout."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m ctbench.evaluate.writer RUN_FOLDER (started by ctb-eval run)\n")
        return 2
    # the runner's terminal signals are for the runner: this process ends when its input does
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(Writer(Path(args[0])), sys.stdin.fileno(), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
