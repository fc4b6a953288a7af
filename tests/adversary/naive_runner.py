"""``ctb-eval`` with the runner's guard against agent leftovers taken out: the protection-off case.

The adversary tests run every attack twice through the real CLI: as shipped, and through this
script, which first puts back the reading the runner did before issue 25 - a path opened as it is
(links followed, a FIFO waited on), read whole, the log read whole - and then runs
``ctbench.evaluate.cli.main``. Each attack must succeed here, so the tests of the shipped runner can
fail.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from ctbench.evaluate import attempt
from ctbench.evaluate.agents import agent_files, command, harness_base


def _whole(path: Path) -> bytes:
    return path.read_bytes()


class NaiveFolder(agent_files.AttemptFolder):
    """Opens ``root / rel`` like any path: follows links, blocks on a FIFO, reads to the end."""

    @contextlib.contextmanager
    def open(self, rel: str | PurePosixPath) -> Iterator[tuple[int, int] | None]:
        try:
            fd = os.open(self.root / rel, os.O_RDONLY)
        except FileNotFoundError:
            yield None
            return
        try:
            yield fd, os.fstat(fd).st_size
        finally:
            os.close(fd)

    def read(self, rel: str | PurePosixPath, cap: int) -> agent_files.Capped | None:
        try:
            data = _whole(self.root / rel)
        except FileNotFoundError:
            return None
        return agent_files.Capped(data, len(data), False)

    def read_limited(self, rel: str | PurePosixPath, cap: int) -> bytes | None:
        got = self.read(rel, cap)
        return got.data if got is not None else None

    def tail(self, rel: str | PurePosixPath, cap: int = agent_files.TAIL_CAP) -> agent_files.Capped | None:
        return self.read(rel, cap)


def naive_copy(fd: int, size: int, out: agent_files.Writer, cap: int, name: str) -> agent_files.Capped:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    out.write(b"".join(chunks))
    return agent_files.Capped(b"", size, False)


def take_out_protection() -> None:
    """Put back the naive reading in this process; also a Ray ``worker_process_setup_hook``
    (``tests.adversary.naive_runner.take_out_protection``), for the attempts a Ray worker runs."""
    command.AttemptFolder = NaiveFolder  # type: ignore[misc]
    harness_base.AttemptFolder = NaiveFolder  # type: ignore[misc]
    command.copy_capped = naive_copy
    command.log_tail = lambda path, cap=0: _whole(path)
    attempt.read_log = lambda path, cap=0: _whole(path)


def main() -> int:
    take_out_protection()
    from ctbench.evaluate.cli import main as cli_main

    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
