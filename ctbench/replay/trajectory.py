"""Session trajectories in the run-folder format: ``trajectories/<ID>.jsonl``, one call per line.

The scorer reads these files (evidence coverage compares canonical (device, command) pairs with the
golden actions), and ``ctb-replay gaps`` mines them for commands authors should record next. Each
line is written and flushed as the call is answered, so a run killed mid-task keeps every call made
so far and a reader never sees a half-written line except, at worst, the very last one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from ctbench.errors import CtbError, validation_message
from ctbench.replay.observation import Observation, Outcome
from ctbench.safetext import scrub_json

RECORD_FIELDS = ("seq", "t", "device", "command", "canonical", "outcome", "output_bytes")
"""The run-folder fields, in file order; :class:`Observation` has them all, in the same order."""


class TrajectoryRecord(BaseModel):
    """One replay call as the run folder stores it (docs/run-folder.md)."""

    seq: int
    t: float
    device: str
    command: str
    canonical: str | None = None
    outcome: Outcome
    output_bytes: int = 0

    @staticmethod
    def line(obs: Observation) -> str:
        """The JSONL line for ``obs``, serialised straight from the observation (the hot path).

        A string that is not valid Unicode (the session scrubs what it records, but an observation
        may be built elsewhere) is written with U+FFFD in its place rather than losing the call.
        """
        try:
            return obs.model_dump_json(include=set(RECORD_FIELDS)) + "\n"
        except PydanticSerializationError:
            data = scrub_json(obs.model_dump(mode="json", include=set(RECORD_FIELDS)))
            return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


def free_backup_name(path: Path) -> Path:
    n = 1
    while True:
        cand = path.with_name(f"{path.name}.prev{n}")
        if not cand.exists():
            return cand
        n += 1


class TrajectoryWriter:
    """Appends records to one JSONL file, a line per call, flushed at once.

    A non-empty file already at ``path`` belongs to an earlier, interrupted attempt at the same
    task: it is renamed to ``<name>.prev<N>`` rather than overwritten or mixed with the new attempt,
    so nothing recorded is lost and the scorer still reads one clean trajectory. ``previous`` names
    that backup (None when there was none), for a caller that wants to say where it went.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.previous: Path | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.is_file() and self.path.stat().st_size > 0:
                self.previous = free_backup_name(self.path)
                self.path.rename(self.previous)
            self._fh: IO[str] | None = self.path.open("a", encoding="utf-8", newline="\n")
        except OSError as exc:
            raise CtbError(f"{self.path}: cannot write the trajectory: {exc.strerror or exc}") from None
        self._lock = threading.Lock()

    def append(self, obs: Observation) -> None:
        """Write ``obs`` as one run-folder line and flush, so a killed run keeps every answered call."""
        line = TrajectoryRecord.line(obs)
        with self._lock:
            if self._fh is None:
                raise CtbError(f"{self.path}: trajectory already closed")
            self._fh.write(line)
            self._fh.flush()

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None


@dataclass(frozen=True)
class BadLine:
    """A line of a trajectory file that is not a valid record (kept to report file and line)."""

    path: Path
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


def iter_trajectory(path: Path) -> Iterator[TrajectoryRecord | BadLine]:
    """Records of one trajectory file in order; unreadable lines come back as :class:`BadLine`."""
    try:
        fh = Path(path).open("r", encoding="utf-8", errors="replace")
    except OSError as exc:
        raise CtbError(f"{path}: cannot read the trajectory: {exc.strerror or exc}") from None
    with fh:
        for n, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:  # pydantic's own JSON parser: a report reads every line of every run
                yield TrajectoryRecord.model_validate_json(raw)
                continue
            except ValidationError:
                pass  # the standard parser names what is wrong, in the words of the run-folder docs
            try:
                yield TrajectoryRecord.model_validate(json.loads(raw))
            except json.JSONDecodeError as exc:
                yield BadLine(Path(path), n, f"not JSON ({exc.msg} at column {exc.colno})")
            except ValidationError as exc:
                yield BadLine(Path(path), n, validation_message(exc, "record"))


def read_trajectory(path: Path) -> list[TrajectoryRecord]:
    """Every valid record of a trajectory file (bad lines skipped; use :func:`iter_trajectory` to see them)."""
    return [r for r in iter_trajectory(path) if isinstance(r, TrajectoryRecord)]
