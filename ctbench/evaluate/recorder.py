"""The runner's side of the run folder's writer process (issue 25).

The event loop makes every byte of a finished attempt (trajectory, log, transcript, result line) and
hands them to the writer process (:mod:`ctbench.evaluate.writer`) in one frame on its standard input;
the process writes the files, makes them durable, appends the line, and answers on its standard
output, which the loop reads as it reads any stream. The line counts as recorded only once that
answer says it is on disk: a (task, trial) is finished exactly when its line is in ``results.jsonl``.

The writing used to run on a thread of the runner; its system calls then fought the event loop for
the interpreter's lock, which cost more than the writing itself (``tests/bench/bench_runner.py``,
part 1). The process is started at the run's first record and ended by :meth:`Recorder.aclose`; it
holds the folder's lock while it lives, so a run resumed after a crash never appends beside it.
"""

from __future__ import annotations

import asyncio
import itertools
import marshal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ctbench.errors import CtbError
from ctbench.evaluate import writer as wire
from ctbench.evaluate.runfolder import ResultLine, RunFolder, result_json

WRITER_ARGV: tuple[str, ...] = (sys.executable, "-I", wire.__file__)
"""How the writer process starts: isolated mode (no environment, no script folder on the path), as
it imports only the standard library. A benchmark may start a variant (its flushes off)."""

STDERR_TAIL = 2000
"""How much of a dead writer's error output its error quotes."""


@dataclass
class _Pending:
    future: asyncio.Future[ResultLine | None]
    line: ResultLine | None
    what: str


class Recorder:
    """Records finished attempts through the run folder's writer process.

    ``fail`` turns a failed write, flush or append into the error the caller expects (a full disk
    into the runner's ``RunFolderFull``). A writer process that dies is the runner's error: every
    attempt waiting on it, and every later one, gets a :class:`~ctbench.errors.CtbError` that says so.
    """

    def __init__(self, folder: RunFolder, fail: Callable[[OSError, str], Exception]) -> None:
        self.folder = folder
        self._fail = fail
        self._proc: asyncio.subprocess.Process | None = None
        self._reading: asyncio.Task[None] | None = None
        self._starting: asyncio.Lock | None = None
        self._pending: dict[int, _Pending] = {}
        self._ids = itertools.count(1)
        self._dead: CtbError | None = None

    async def record(
        self, ops: Sequence[tuple[Any, ...]], line: ResultLine | None, what: str
    ) -> ResultLine | None:
        """Have the writer put ``ops`` (see :mod:`ctbench.evaluate.writer`) on disk, make them durable,
        then append ``line``; returns ``line`` once it is on disk. ``line`` None: the files only."""
        proc = await self._started()
        if self._dead is not None:
            raise self._dead
        job_id = next(self._ids)
        data = None if line is None else (result_json(line) + "\n").encode("utf-8")
        future: asyncio.Future[ResultLine | None] = asyncio.get_running_loop().create_future()
        self._pending[job_id] = _Pending(future, line, what)
        assert proc.stdin is not None
        proc.stdin.write(wire.frame((job_id, tuple(ops), data)))
        return await asyncio.shield(future)  # a cancelled caller never leaves a line half-known

    async def aclose(self) -> None:
        """End the writer once it has answered every job (the caller awaited every record)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        assert proc.stdin is not None
        proc.stdin.close()
        if self._reading is not None:
            await asyncio.shield(self._reading)
        await proc.wait()

    async def _started(self) -> asyncio.subprocess.Process:
        if self._proc is not None:
            return self._proc
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._proc is None:
                lock = self.folder.lock_fd
                self._proc = await asyncio.create_subprocess_exec(
                    *WRITER_ARGV,
                    str(self.folder.path),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,  # Ctrl-C is the runner's: the writer ends with its input
                    pass_fds=() if lock is None else (lock,),  # the lock lives as long as the writer
                )
                self._reading = asyncio.create_task(self._answers(self._proc))
        return self._proc

    async def _answers(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        try:
            while True:
                head = await proc.stdout.readexactly(wire.HEADER.size)
                (n,) = wire.HEADER.unpack(head)
                self._settle(marshal.loads(await proc.stdout.readexactly(n)))
        except asyncio.IncompleteReadError:  # the writer's output ended: it is done, or it died
            pass
        code = await proc.wait()
        if self._pending or code != 0:
            assert proc.stderr is not None
            said = (await proc.stderr.read())[-STDERR_TAIL:].decode("utf-8", "replace").strip()
            self._dead = CtbError(
                f"runner: the run folder's writer process (pid {proc.pid}) ended with exit code "
                f"{code}{': ' + said if said else ''}; results written so far are saved in "
                f"{self.folder.path}, and a run with the same --out continues from them"
            )
            for pending in self._pending.values():
                if not pending.future.done():
                    pending.future.set_exception(self._dead)
            self._pending.clear()

    def _settle(self, answer: tuple[int, str | None, int, str, str | None]) -> None:
        job_id, stage, err, text, filename = answer
        pending = self._pending.pop(job_id, None)
        if pending is None or pending.future.done():
            return
        if stage is None:
            pending.future.set_result(pending.line)
            return
        exc = OSError(err, text, filename) if filename else OSError(err, text)
        where = {
            "files": f"{self.folder.path}: cannot save the trajectory or log of {pending.what}",
            "durable": f"{self.folder.path}: cannot save the files of {pending.what}",
            "append": f"{self.folder.results_file}: cannot append the result of {pending.what}",
        }[stage]
        pending.future.set_exception(self._fail(exc, where))


__all__ = ["WRITER_ARGV", "Recorder"]
