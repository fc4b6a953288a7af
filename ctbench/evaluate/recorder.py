"""The run folder's writer: finished attempts put on disk by group commit, on one thread (issue 25).

A finished attempt is its files (trajectory, log, a harness's transcript) and then its result line,
the commit point: a (task, trial) is done exactly when its line is in ``results.jsonl``, and a line
never reaches the disk before the files it names. Written one attempt at a time that is three
``fsync``s each (three journal commits on ext4), and a thread hand-off per attempt.

:class:`Recorder` keeps that order for many attempts at once. Its one thread takes every attempt
that finished since its last round, writes all their files without ``fsync``, makes them durable
together (:meth:`~ctbench.evaluate.runfolder.RunFolder.make_durable`: one ``syncfs``), builds their
result lines, appends them with one ``write`` and one ``fsync``, and hands them back to the event
loop in one call. Thirty-two attempts that end together cost two flushes, not 96; at concurrency 1
a round takes the attempts that ended while the previous round was flushing. A crash at any point
leaves files without a line (the attempt runs again on resume, its files set aside as ``.prev``)
or, at worst, a torn last line, which the resume cuts off.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ctbench.evaluate.runfolder import ResultLine, RunFolder


@dataclass
class _Job:
    write: Callable[[], list[Path]]
    line: Callable[[list[Path]], ResultLine] | None
    what: str
    future: asyncio.Future[ResultLine | None]
    paths: list[Path] = field(default_factory=list)
    result: ResultLine | None = None
    error: BaseException | None = None


class Recorder:
    """One writer thread for a run folder; :meth:`record` from the event loop, :meth:`close` at the end.

    ``fail`` turns a failed flush or append into the error the caller expects (a full disk into the
    runner's ``RunFolderFull``); errors of ``write`` and ``line`` reach their caller as raised.
    """

    def __init__(self, folder: RunFolder, fail: Callable[[OSError, str], Exception]) -> None:
        self.folder = folder
        self._fail = fail
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    async def record(
        self,
        write: Callable[[], list[Path]],
        line: Callable[[list[Path]], ResultLine] | None,
        what: str,
    ) -> ResultLine | None:
        """Write an attempt's files (``write`` returns them, not yet synced), make them durable, then
        append ``line(paths)`` and return it once it is on disk. ``line`` None: the files only."""
        loop = asyncio.get_running_loop()
        if self._thread is None:
            self._loop = loop
            self._thread = threading.Thread(target=self._run, name="ctb-record", daemon=True)
            self._thread.start()
        job = _Job(write, line, what, loop.create_future())
        self._queue.put(job)
        return await asyncio.shield(job.future)  # a cancelled caller never leaves a line half-known

    def close(self) -> None:
        """Let the thread finish what it took, then end it (the caller awaited every record)."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            stop = False
            while True:
                try:
                    job = self._queue.get_nowait()
                except queue.Empty:
                    break
                if job is None:
                    stop = True
                    break
                batch.append(job)
            self._commit(batch)
            if stop:
                return

    def _commit(self, batch: list[_Job]) -> None:
        written: list[_Job] = []
        for job in batch:
            try:
                job.paths = job.write()
            except BaseException as exc:  # this attempt's files only: the others go on
                job.error = exc
            else:
                written.append(job)
        if written:
            try:
                self.folder.make_durable(p for job in written for p in job.paths)
            except OSError as exc:
                for job in written:
                    job.error = self._fail(exc, f"{self.folder.path}: cannot save the files of {job.what}")
                written = []
        lined: list[_Job] = []
        for job in written:
            if job.line is None:
                continue
            try:
                job.result = job.line(job.paths)
            except BaseException as exc:
                job.error = exc
            else:
                lined.append(job)
        if lined:
            try:
                self.folder.append_results([job.result for job in lined if job.result is not None])
            except OSError as exc:
                for job in lined:
                    job.error = self._fail(
                        exc, f"{self.folder.results_file}: cannot append the result of {job.what}"
                    )
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(_settle, batch)
        except RuntimeError:  # the loop is gone (an interpreter shutting down): nobody waits
            pass


def _settle(batch: list[_Job]) -> None:
    for job in batch:
        if job.future.done():
            continue
        if job.error is not None:
            job.future.set_exception(job.error)
        else:
            job.future.set_result(job.result)
