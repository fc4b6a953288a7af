"""A replay session: one agent (or one blind reviewer) working on one task.

Sessions share the engine's caches but nothing else: each has its own clock, call counter,
trajectory and answer, behind its own lock, so concurrent calls on one session are numbered and
logged in the order they were answered and calls on different sessions never wait for each other.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ctbench.errors import CtbError
from ctbench.replay.loaded import Answer, DeviceReplay, InputError, LoadedTask, SessionHost
from ctbench.replay.observation import DeviceInfo, Observation, Outcome, Submission
from ctbench.replay.trajectory import RECORD_FIELDS, TrajectoryRecord, TrajectoryWriter
from ctbench.safetext import first_bad_char, scrub

log = logging.getLogger(__name__)

MAX_DEVICE_NAME = 256


def new_session_id() -> str:
    """A random session id that never begins with "-": people and programs pass it as a command-line
    value (``--session ID``), where a leading dash reads as an option (1 id in 64 did)."""
    while True:
        sid = secrets.token_urlsafe(12)
        if not sid.startswith("-"):
            return sid


class SessionClosed(CtbError):
    """A call on a session that was closed (by its owner, or by the server after idling)."""


class SessionLimit(CtbError):
    """The session made more calls than the engine allows (a runaway agent)."""


_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
"""Control characters (tab excepted: it becomes a space) and Unicode line separators."""


def _control_char(line: str) -> tuple[int, str] | None:
    """Position and character of the first control character, if any."""
    m = _CONTROL.search(line)
    return (m.start(), m.group()) if m else None


def _truncate(data: bytes, limit: int) -> bytes:
    """Cut ``data`` at a line end near ``limit`` and say so, in words an agent will notice."""
    cut = data.rfind(b"\n", 0, limit)
    cut = cut + 1 if cut >= limit // 2 else limit
    notice = (
        f"[ctbench: output truncated: {cut} of {len(data)} bytes shown; "
        "narrow the command or add an output filter]\n"
    ).encode()
    head = data[:cut]
    return head + (notice if head.endswith(b"\n") else b"\n" + notice)


class Session:
    """Answers (device, command) calls for one task and keeps the trajectory of them."""

    def __init__(
        self,
        engine: SessionHost,
        task: LoadedTask,
        *,
        trajectory_path: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.id = new_session_id()
        self.engine = engine
        self.task = task
        self._clock = clock
        self._t0 = clock()
        self._seq = 0
        self._records: list[tuple[object, ...]] = []  # RECORD_FIELDS values; models built on demand
        self._answer: Submission | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._writer = TrajectoryWriter(trajectory_path) if trajectory_path is not None else None
        self.last_used = time.monotonic()

    # -------------------------------------------------------------- what the agent sees

    @property
    def task_id(self) -> str:
        return self.task.id

    @property
    def trajectory_path(self) -> Path | None:
        return self._writer.path if self._writer else None

    def devices(self) -> list[DeviceInfo]:
        """The devices this task lets the agent query (hosts without a CLI are never listed)."""
        return self.task.device_infos()

    def device(self, name: str) -> DeviceInfo | None:
        found = self.task.device(name) if isinstance(name, str) else None
        return found.info if found else None

    def prompt(self, device: str) -> str:
        """The device's own prompt (``<CORE_SW_01>``, ``GW_01#``, ``admin@PE_01>``)."""
        found = self.task.device(device)
        if found is None:
            raise CtbError(self.task.unknown_device_text(device).strip())
        return found.prompt

    def complete(self, device: str, line: str) -> list[str]:
        """Keywords the last word of ``line`` (up to the cursor) completes to on ``device`` (Tab).

        From the vendor grammar only, like ``?`` help; not a call, so it is not in the trajectory.
        """
        found = self.task.device(device) if isinstance(device, str) and isinstance(line, str) else None
        if found is None or len(line) > self.engine.max_input or _control_char(line):
            return []
        return found.dialect.complete(line)

    # -------------------------------------------------------------- calls

    def run(self, device: str, command: str) -> Observation:
        """Answer one command on one device as the real device would, and log the call."""
        if not isinstance(device, str) or not isinstance(command, str):
            raise InputError("device and command must be text")
        with self._lock:
            if self._closed:
                raise SessionClosed(f"session {self.id} on task {self.task.id} is closed")
            if self._seq >= self.engine.max_calls:
                raise SessionLimit(f"session {self.id} reached its limit of {self.engine.max_calls} calls")
            self._seq += 1
            self.last_used = time.monotonic()
            obs = self._observe(self._seq, round(self._clock() - self._t0, 6), device, command)
            self._records.append(
                (obs.seq, obs.t, obs.device, obs.command, obs.canonical, obs.outcome, obs.output_bytes)
            )
            if self._writer is not None:
                self._writer.append(obs)
        return obs

    def record(
        self, device: str, command: str, canonical: str | None, outcome: Outcome, data: bytes
    ) -> Observation:
        """Log a call that a front end answered by its own rules, and return it as an observation.

        For facades of other benchmarks (TTAC Track B's strict whitelist refuses abbreviations the
        dialect accepts): the call is numbered, timed and written to the trajectory like any other,
        with the outcome the agent was actually given.
        """
        device, command = scrub(device)[:MAX_DEVICE_NAME], scrub(command)
        limit = self.engine.max_input
        shown = command if len(command) <= limit else command[:limit] + "…"
        with self._lock:
            if self._closed:
                raise SessionClosed(f"session {self.id} on task {self.task.id} is closed")
            if self._seq >= self.engine.max_calls:
                raise SessionLimit(f"session {self.id} reached its limit of {self.engine.max_calls} calls")
            self._seq += 1
            self.last_used = time.monotonic()
            t = round(self._clock() - self._t0, 6)
            obs = self._make(self._seq, t, device, shown, canonical, outcome, data)
            self._records.append(
                (obs.seq, obs.t, obs.device, obs.command, obs.canonical, obs.outcome, obs.output_bytes)
            )
            if self._writer is not None:
                self._writer.append(obs)
        return obs

    def _observe(self, seq: int, t: float, device: str, command: str) -> Observation:
        # Text that is not valid Unicode (a lone surrogate from a JSON escape) is recorded with U+FFFD
        # in its place: the call is logged and answered like any other, and nothing written later
        # (trajectory line, response, MCP reply) meets a string it cannot encode.
        broken = first_bad_char(command)
        device, command = scrub(device), scrub(command)
        limit = self.engine.max_input
        shown = command if len(command) <= limit else command[:limit] + "…"
        dev = self.task.device(device) if len(device) <= MAX_DEVICE_NAME else None
        if dev is None or _control_char(device):
            return self._make(
                seq,
                t,
                device[:MAX_DEVICE_NAME],
                shown,
                None,
                Outcome.UNKNOWN_DEVICE,
                self.task.unknown_device_text(device).encode(),
            )
        name = dev.info.name
        line = command.rstrip("\r\n")
        problem = self._line_problem(line, broken)
        if problem:
            return self._make(seq, t, name, shown, None, Outcome.INVALID, problem.encode(), prompt=dev.prompt)
        line = line.replace("\t", " ")
        try:
            answer = dev.resolve(line)
        except Exception:  # a dialect bug must cost one call, not the session or the server
            log.exception("dialect %s failed on %r", dev.info.os, line)
            return self._make(
                seq,
                t,
                name,
                shown,
                None,
                Outcome.INVALID,
                b"% The command could not be parsed.\n",
                prompt=dev.prompt,
            )
        if answer.outcome is not Outcome.RECORDED:
            return self._make(
                seq, t, name, shown, answer.canonical, answer.outcome, answer.text.encode(), prompt=dev.prompt
            )
        return self._recorded(seq, t, dev, shown, answer)

    def _recorded(self, seq: int, t: float, dev: DeviceReplay, shown: str, answer: Answer) -> Observation:
        assert answer.recording is not None and answer.canonical is not None
        data = self.engine.recording_bytes(self.task, answer.recording)
        if data is None:  # the index entry was refused: answer as if nothing was recorded
            denied = dev.dialect.denied_text(answer.canonical).encode()
            return self._make(
                seq, t, dev.info.name, shown, answer.canonical, Outcome.DENIED, denied, prompt=dev.prompt
            )
        if answer.filters:
            data = dev.dialect.apply_filters(data, answer.filters)
        truncated = len(data) > self.engine.max_output
        if truncated:
            data = _truncate(data, self.engine.max_output)
        return self._make(
            seq,
            t,
            dev.info.name,
            shown,
            answer.canonical,
            Outcome.RECORDED,
            data,
            truncated,
            prompt=dev.prompt,
        )

    def _line_problem(self, line: str, broken: tuple[int, str] | None = None) -> str | None:
        limit = self.engine.max_input
        if len(line) > limit:
            return f"% Command too long: {len(line)} characters; the limit is {limit}.\n"
        if broken is not None:
            pos, what = broken
            return f"% Invalid character in command: {what} at position {pos + 1} (the text is not valid Unicode).\n"
        bad = _control_char(line)
        if bad:
            pos, ch = bad
            if ch in "\r\n\u2028\u2029":
                return "% One command per call: the command contains a line break.\n"
            return (
                f"% Invalid character in command: control character 0x{ord(ch):02x} at position {pos + 1}.\n"
            )
        if not line.strip():
            return "% Empty command: type a command such as the vendor's show/display commands.\n"
        return None

    @staticmethod
    def _make(
        seq: int,
        t: float,
        device: str,
        command: str,
        canonical: str | None,
        outcome: Outcome,
        data: bytes,
        truncated: bool = False,
        prompt: str | None = None,
    ) -> Observation:
        return Observation(
            seq=seq,
            t=t,
            device=device,
            command=command,
            canonical=canonical,
            outcome=outcome,
            text=data.decode("utf-8", errors="replace"),
            output_bytes=len(data),
            truncated=truncated,
            prompt=prompt,
            data=data,
        )

    # -------------------------------------------------------------- the answer

    def submit(self, answer_text: str) -> Submission:
        """Record the agent's final answer; a later submission replaces it (the last one counts)."""
        if not isinstance(answer_text, str):
            raise InputError("the answer must be text")
        if len(answer_text) > self.engine.max_answer:
            raise InputError(
                f"answer too long: {len(answer_text)} characters; the limit is {self.engine.max_answer}"
            )
        broken = first_bad_char(answer_text)
        if broken is not None:
            pos, what = broken
            raise InputError(
                f"the answer is not valid Unicode text: {what} at character {pos + 1}; submit plain text"
            )
        with self._lock:
            if self._closed:
                raise SessionClosed(f"session {self.id} on task {self.task.id} is closed")
            count = (self._answer.count if self._answer else 0) + 1
            lines = sum(1 for ln in answer_text.splitlines() if ln.strip())
            self._answer = Submission(
                answer=answer_text, t=round(self._clock() - self._t0, 6), count=count, lines=lines
            )
            self.last_used = time.monotonic()
            return self._answer

    @property
    def answer(self) -> Submission | None:
        return self._answer

    @property
    def trajectory(self) -> list[TrajectoryRecord]:
        """Every call so far, in order (a copy)."""
        with self._lock:
            rows = list(self._records)
        return [TrajectoryRecord(**dict(zip(RECORD_FIELDS, row, strict=True))) for row in rows]

    @property
    def calls(self) -> int:
        return self._seq

    # -------------------------------------------------------------- lifetime

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop answering and close the trajectory file; safe to call twice."""
        with self._lock:
            self._closed = True
            if self._writer is not None:
                self._writer.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Session {self.id} task={self.task.id} calls={self._seq}{' closed' if self._closed else ''}>"
