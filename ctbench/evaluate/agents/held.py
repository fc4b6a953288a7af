"""A sandbox started held: a root runner caps the attempt from outside before anything of it runs.

Every external agent's process tree is capped (:mod:`ctbench.evaluate.limits`): it joins the
attempt's pids cgroup and gets ``RLIMIT_FSIZE``, and dies with the runner. The plain way sets these
in the child between ``fork`` and ``exec`` (``preexec_fn``). That forces a real ``fork`` of the
runner - a Python process of some hundred megabytes whose page tables are copied and torn down again
at ``exec`` -, about a third of an attempt's CPU and what bounded the concurrency-32 speed-up
(issue 25). Without ``preexec_fn`` Python starts the child with ``vfork``, which copies nothing.

So a root runner starts bubblewrap without it, held: ``--info-fd`` tells the runner the pid of the
sandbox's first process as soon as bubblewrap has cloned it, and ``--block-fd`` keeps that process
waiting, before it sets up its session or runs anything of the agent. The runner then moves
bubblewrap and that process into the attempt's cgroup, gives both the file-size cap (``prlimit``),
and only then lets it go on; every process of the agent descends from it. Bubblewrap's own
``--die-with-parent`` is in place before it writes the pid, so the tree dies with the runner too.

It fails closed. The held process also holds the write end of its own blocking pipe, so it never
reads end-of-file: should the runner die before letting it go, it waits (inert, nothing of the agent
started) rather than running uncapped. Bubblewrap's ``--die-with-parent`` does not reach it while it
waits (bubblewrap dies, the held process is left to init), so the next run's sweep kills it
(:func:`~ctbench.evaluate.agents.process.kill_orphaned_holds`). A cap that cannot be applied kills the held
processes before they ran anything (an infrastructure error, retried). The agent inherits that
write end as one more descriptor: a pipe nobody reads any more (a write to it fails with ``EPIPE``).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass

HOLD_TIMEOUT_S = 60.0
"""How long bubblewrap may take to clone the sandbox's first process (a very busy machine)."""


class HoldError(OSError):
    """The held sandbox could not be capped or let go (the machine's trouble, not the agent's)."""


def usable(bwrap_at: int | None) -> bool:
    """Whether a launch may be started held: it is a bubblewrap command line, and this runner is root
    (it may move any process into a cgroup and set its limits)."""
    return bwrap_at is not None and os.geteuid() == 0


@dataclass
class Hold:
    """The two pipes of one held start: bubblewrap's information (the held process's pid) and its
    block (one byte lets it go)."""

    info_r: int
    info_w: int
    block_r: int
    block_w: int

    @classmethod
    def open(cls) -> Hold:
        info_r, info_w = os.pipe2(os.O_CLOEXEC)
        block_r, block_w = os.pipe2(os.O_CLOEXEC)
        return cls(info_r, info_w, block_r, block_w)

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """What the child keeps: both ends of the block (see the module text), the info write end."""
        return (self.info_w, self.block_r, self.block_w)

    def argv(self, argv: Sequence[str], bwrap_at: int) -> list[str]:
        """``argv`` with the hold's options right after the bubblewrap program."""
        at = bwrap_at + 1
        return [*argv[:at], "--info-fd", str(self.info_w), "--block-fd", str(self.block_r), *argv[at:]]

    def started(self) -> None:
        """The child has started: the runner's copies of the child's ends go."""
        for fd in (self.info_w, self.block_r):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.info_w = self.block_r = -1

    def held_pid(self, timeout: float = HOLD_TIMEOUT_S) -> int | None:
        """The pid bubblewrap reports for the sandbox's first process, or None when bubblewrap ended
        before making it (its own error is in the log)."""
        data = b""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise HoldError("bubblewrap did not start the sandbox in time")
            ready, _, _ = select.select([self.info_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.info_r, 4096)
            if not chunk:
                return None
            data += chunk
            with contextlib.suppress(ValueError):
                info = json.loads(data)
                pid = info.get("child-pid") if isinstance(info, dict) else None
                if not isinstance(pid, int) or pid <= 0:
                    raise HoldError(f"bubblewrap's information names no process: {data[:200]!r}")
                return pid

    def let_go(self) -> None:
        """The caps are on: the held process goes on to run the agent."""
        os.write(self.block_w, b"x")

    def close(self) -> None:
        for fd in (self.info_r, self.info_w, self.block_r, self.block_w):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.info_r = self.info_w = self.block_r = self.block_w = -1


def kill_held(*pids: int) -> None:
    """End a held start whose caps could not be applied (nothing of the agent ran yet)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


__all__ = ["HOLD_TIMEOUT_S", "Hold", "HoldError", "kill_held", "usable"]
