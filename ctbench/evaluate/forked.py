"""Pure-Python work spread over the machine's cores by forking, for the report's per-task drill-down.

Reading and rendering one task's detail is Python from end to end (trajectory, judge, replayed
device output, HTML), so threads do not help, and a spawned process would have to load the task set
again - the very cost being split. A forked child starts with everything the parent has loaded and
sends back only its results (pickled, through a pipe). :func:`forked_map` forks only when that is
safe: a platform with ``fork`` and no other thread in the process (a thread holding a lock at the
moment of the fork would leave the child waiting on it for ever). Otherwise, or with one worker, the
items are mapped here, one after the other, with the same results.

A child that fails in any way (an exception, a signal, the OOM killer) costs no result: the parent
maps that item itself, so an error of ``fn`` is raised from the parent with its own traceback. A
parent interrupted while children work kills and reaps them before it lets go.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import signal
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import TypeVar

from ctbench.cores import available_cores

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


def can_fork() -> bool:
    """Whether forking now is safe: the platform has ``fork`` and this process runs no other thread."""
    return hasattr(os, "fork") and threading.active_count() == 1


def forked_map(fn: Callable[[T], R], items: Sequence[T], *, workers: int | None = None) -> list[R]:
    """``[fn(x) for x in items]``, with ``items[1:]`` computed in forked children when :func:`can_fork`
    and ``workers`` (default: :func:`available_cores`) is above one; ``items[0]`` is the parent's.

    Give it as many items as workers, each a share of the work: every item past the first is a process.
    """
    workers = available_cores() if workers is None else workers
    if workers <= 1 or len(items) <= 1 or not can_fork():
        return [fn(x) for x in items]
    results: list[R | None] = [None] * len(items)
    children: dict[int, tuple[int, int]] = {}  # item -> (pid, read end)
    try:
        for i in range(1, len(items)):
            started = _fork(fn, items[i])
            if started is not None:
                children[i] = started
        results[0] = fn(items[0])
        for i in range(1, len(items)):
            if i not in children:
                results[i] = fn(items[i])
                continue
            pid, fd = children[i]
            children[i] = (pid, -1)  # _collect closes it, whatever happens
            got: tuple[R] | None = _collect(pid, fd)
            del children[i]
            results[i] = got[0] if got is not None else fn(items[i])
    finally:
        for pid, fd in children.values():  # interrupted: no child outlives the call
            if fd >= 0:
                os.close(fd)
            _end(pid)
    return results  # type: ignore[return-value]  # every slot was filled above


def _fork(fn: Callable[[T], R], item: T) -> tuple[int, int] | None:
    """(pid, read end of its pipe) of a child computing ``fn(item)``; None when no child could start."""
    r, w = os.pipe()
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns of forking beside threads it cannot see (BLAS's); can_fork() checked ours,
            # and the child runs only fn, no library call that could wait on a lock of theirs.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError as exc:
        os.close(r)
        os.close(w)
        log.info("no child process (%s): this share is computed in the parent", exc.strerror or exc)
        return None
    if pid == 0:  # the child: compute, send, leave without running the parent's exit handlers
        code = 1
        try:
            os.close(r)
            for sig in (signal.SIGINT, signal.SIGTERM):  # the parent's handlers are the parent's business
                signal.signal(sig, signal.SIG_DFL)
            data = pickle.dumps(fn(item), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(w, "wb") as out:
                out.write(data)
            code = 0
        except BaseException:  # noqa: BLE001 - the parent computes this share again and raises
            pass
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def _end(pid: int) -> None:
    """Kill and reap child ``pid`` unless it was reaped already (its pid may then be another's)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return
    if done == 0:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _collect(pid: int, fd: int) -> tuple[R] | None:
    """The child's result (in a 1-tuple: a result may be None), or None when it did not finish well."""
    with os.fdopen(fd, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or not data:
        log.info("child %d ended with %s: its share is computed in the parent", pid, code)
        return None
    return (pickle.loads(data),)
