"""Track B's API over ctbench's replay engine: agents built for Track B run unchanged.

``POST /api/agent/execute`` takes ``{device_name, command, question_number}`` and answers with Track
B's own status codes and bodies (docs/trackb.md), checked in the reference server's order: a missing
field 400; a device outside the phase's vendor map 404; a command the question refuses 403; with
``strict``, a line outside Track B's whitelist 422 with the server's generated error; then the output
(200, ``result`` = ``<dev> cmd`` echo and the recording), or the miss (404 "No permission", or 422
"Wrong parameter" for the four parameterised commands). ``GET /health`` says it is up. Before all of
that, past a request rate per address (Track B's nginx: 50 per second), a 429 (:mod:`.ratelimit`);
then past the requests in flight per client (counted from the request's arrival, its body still to
be read), a 429; and past the client's calls of the day (Phase 1: 1,000, :mod:`.quota`), a 429.

Every call goes through a replay session of the engine - one per client and question, opened on the
client's first call - and is logged in its trajectory as the agent saw it. Without ``strict`` the
device's dialect answers (abbreviations, filters, ``?`` help: ctbench's more faithful CLI) and only
the envelope is Track B's. The client is its bearer token when it sends one, else its address.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ctbench.errors import CtbError
from ctbench.replay.engine import ReplayEngine
from ctbench.replay.http_body import SafeJSONResponse as JSONResponse
from ctbench.replay.observation import Observation, Outcome
from ctbench.replay.session import Session, SessionLimit
from ctbench.replay.trackb.layout import SIDECAR, TrackbTask, prompt, read_sidecar, safe_name
from ctbench.replay.trackb.quota import DOCUMENTED_DAILY, DailyQuota, quota_message
from ctbench.replay.trackb.ratelimit import DOCUMENTED_RATE, RateLimiter
from ctbench.replay.trackb.whitelist import refusal, whitelist, wrong_parameter
from ctbench.store import TaskSet
from ctbench.yamlio import load_fast

MISSING = "Missing required parameter 'device_name', 'command', or 'question_number'"
NO_PERMISSION = "Error: No permission to perform the operation"
MAX_BODY = 64 * 1024


@dataclass(frozen=True)
class Limits:
    """The limits a phase's online server applies (docs/trackb.md, "Limits by phase")."""

    requests_per_second: float | None = None
    concurrent_per_token: int | None = None
    calls_per_question: int | None = None
    calls_per_day: int | None = None


PHASE_LIMITS: dict[int, Limits] = {
    1: Limits(requests_per_second=DOCUMENTED_RATE, concurrent_per_token=2, calls_per_day=DOCUMENTED_DAILY),
    2: Limits(concurrent_per_token=1, calls_per_question=500),
}
"""Phase 1: 50 requests/s per address, 2 problems at once, 1,000 calls per participant and day;
Phase 2: 1 request in flight per token and 500 calls per question. Phase 3 runs on the organisers'
machines; no limit is documented."""


@dataclass(frozen=True)
class Phase:
    """What the facade serves: the phase's vendor map and its questions' tasks (root ``trackb.yaml``)."""

    number: int
    vendors: dict[str, str]
    questions: dict[int, str]

    @classmethod
    def of(cls, task_set: TaskSet) -> Phase:
        path = task_set.root / SIDECAR
        if not path.is_file():
            raise CtbError(
                f"{task_set.root}: not a Track B import (no {SIDECAR}); make one with ctb-author import-trackb"
            )
        data = load_fast(path)
        try:
            return cls(
                number=int(data["phase"]),
                vendors={str(k): str(v) for k, v in data["vendors"].items()},
                questions={int(k): str(v) for k, v in (data.get("questions") or {}).items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CtbError(f"{path}: expected phase, vendors and questions ({exc})") from None


@dataclass
class _Client:
    sessions: dict[int, Session] = field(default_factory=dict)
    in_flight: int = 0


@dataclass
class TrackbFacade:
    """The per-client, per-question sessions and the rules; the Starlette app is :func:`build_app`."""

    engine: ReplayEngine
    phase: Phase
    strict: bool = False
    max_concurrent_per_token: int | None = None
    max_calls_per_question: int | None = None
    trajectories: Path | None = None
    rate_limit: RateLimiter | None = None
    """Requests per second per address; past it, 429 before the request is read (nginx's place)."""
    daily: DailyQuota | None = None
    """Calls per client and UTC day; past it, 429 until 00:00 UTC."""
    _clients: dict[str, _Client] = field(default_factory=dict)
    _sides: dict[str, TrackbTask | None] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # ------------------------------------------------------------------ sessions

    def session(self, client: str, question: int) -> Session:
        with self._lock:
            c = self._clients.setdefault(client, _Client())
            found = c.sessions.get(question)
            if found is None:
                task = self.phase.questions[question]
                path = self.trajectories / client / f"{task}.jsonl" if self.trajectories else None
                found = self.engine.open_session(task, trajectory_path=path)
                c.sessions[question] = found
        return found

    def sessions(self) -> dict[str, dict[int, Session]]:
        """Every open session, by client and question (for tests and the server's own summary)."""
        with self._lock:
            return {k: dict(c.sessions) for k, c in self._clients.items()}

    def close(self) -> None:
        with self._lock:
            for c in self._clients.values():
                for s in c.sessions.values():
                    s.close()

    def sidecar(self, task: str) -> TrackbTask | None:
        if task not in self._sides:
            self._sides[task] = read_sidecar(self.engine.task_set.ref(task).path)
        return self._sides[task]

    def enter(self, client: str) -> bool:
        """Count a request in flight for ``client``; False when it has its limit already (429)."""
        with self._lock:
            c = self._clients.setdefault(client, _Client())
            if self.max_concurrent_per_token is not None and c.in_flight >= self.max_concurrent_per_token:
                return False
            c.in_flight += 1
            return True

    def leave(self, client: str) -> None:
        with self._lock:
            self._clients[client].in_flight -= 1

    # ------------------------------------------------------------------ one call

    def execute(self, client: str, device: str, command: str, question: int) -> tuple[int, dict[str, Any]]:
        """(status, body) for one request whose fields are present and typed."""
        vendor = self.phase.vendors.get(device)
        if vendor is None:
            return 404, {"error": f"Device '{device}' not found"}
        if question not in self.phase.questions:
            return 404, {"error": f"Question {question} not found in phase {self.phase.number}"}
        task = self.phase.questions[question]
        session = self.session(client, question)
        if self.max_calls_per_question is not None and session.calls >= self.max_calls_per_question:
            return 429, {
                "error": f"Call limit of {self.max_calls_per_question} reached for question {question}"
            }
        failed = {
            "status": "execution_failed",
            "device_name": device,
            "vendor": vendor,
            "command_executed": command,
        }
        side = self.sidecar(task)
        if side is not None and side.refused(device, command):
            session.record(device, command, None, Outcome.DENIED, NO_PERMISSION.encode())
            return 403, {**failed, "result": NO_PERMISSION}
        echo = f"{prompt(vendor, device)} {command}\n"
        if self.strict:
            return self._strict(session, vendor, device, command, failed, echo)
        obs = session.run(device, command)
        if obs.outcome in (Outcome.RECORDED, Outcome.HELP):
            return 200, self._success(device, vendor, command, echo + obs.text)
        if obs.outcome is Outcome.INVALID:
            return 422, {**failed, "result": echo + _shift_caret(obs.text)}
        return 404, {"error": NO_PERMISSION, "filename": f"{safe_name(command)}.txt"}

    def _strict(
        self, session: Session, vendor: str, device: str, command: str, failed: dict[str, Any], echo: str
    ) -> tuple[int, dict[str, Any]]:
        if not whitelist(vendor).accepts(command):
            text = refusal(vendor, device, command)
            session.record(device, command, None, Outcome.INVALID, text.encode())
            return 422, {**failed, "result": text}
        name = f"{safe_name(command)}.txt"
        dev = session.task.devices.get(device)
        rec = None
        if dev is not None:
            rec = next((r for r in dev.index.values() if Path(r.file).name == name), None)
        data = self.engine.recording_bytes(session.task, rec) if rec is not None else None
        if rec is None or data is None:
            wrong = wrong_parameter(vendor, device, command)
            session.record(
                device, command, None, Outcome.DENIED, (wrong[0] if wrong else NO_PERMISSION).encode()
            )
            if wrong is not None:
                return 422, {
                    **failed,
                    "result": wrong[0],
                    "reason": f"Simulated resource '{wrong[1]}' not found",
                }
            return 404, {"error": NO_PERMISSION, "filename": name}
        obs: Observation = session.record(device, command, rec.command, Outcome.RECORDED, data)
        # the reference server reads its files as text: universal newlines, so CRLF arrives as LF
        text = obs.text.replace("\r\n", "\n").replace("\r", "\n")
        return 200, self._success(device, vendor, command, echo + text)

    @staticmethod
    def _success(device: str, vendor: str, command: str, result: str) -> dict[str, Any]:
        return {
            "status": "success",
            "device_name": device,
            "vendor": vendor,
            "command_executed": command,
            "result": result,
        }


def _shift_caret(text: str) -> str:
    """ctbench's error, its caret moved one column: Track B echoes ``<dev> cmd`` with a blank."""
    lines = text.split("\n")
    if lines and lines[0].strip() == "^":
        lines[0] = " " + lines[0]
    return "\n".join(lines)


def client_of(request: Request) -> str:
    """A file-safe name for the caller: a digest of its bearer token, else its address."""
    value = request.headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return "token-" + hashlib.sha256(token.strip().encode()).hexdigest()[:16]
    host = request.client.host if request.client else "local"
    return "addr-" + "".join(ch if ch.isalnum() else "-" for ch in host)


def build_app(facade: TrackbFacade) -> Starlette:
    """The Starlette application serving ``facade`` with Track B's routes."""

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def execute(request: Request) -> Response:
        # nginx's rate first; then, from its arrival, the request is one of its client's in flight
        if facade.rate_limit is not None:
            address = request.client.host if request.client else "local"
            if not facade.rate_limit.allow(address):
                wait = facade.rate_limit.retry_after(address)
                return JSONResponse(
                    {
                        "error": f"Too Many Requests: more than {facade.rate_limit.rate:g} requests "
                        f"per second from {address}"
                    },
                    status_code=429,
                    headers={"Retry-After": str(max(1, math.ceil(wait)))},
                )
        client = client_of(request)
        if not facade.enter(client):
            return JSONResponse(
                {
                    "error": f"Too many concurrent requests: at most {facade.max_concurrent_per_token} per token"
                },
                status_code=429,
                headers={"Retry-After": "1"},
            )
        try:
            return await _served(request, client)
        finally:
            facade.leave(client)

    async def _served(request: Request, client: str) -> Response:
        body = await request.body()
        data: Any = None
        if len(body) <= MAX_BODY:
            try:
                data = json.loads(body)
            except (ValueError, UnicodeDecodeError):
                data = None
        if not isinstance(data, dict) or any(
            k not in data for k in ("device_name", "command", "question_number")
        ):
            return JSONResponse({"error": MISSING}, status_code=400)
        device, command, question = data["device_name"], data["command"], data["question_number"]
        try:
            number = int(question)
        except (TypeError, ValueError):
            number = -1
        if not isinstance(device, str) or not isinstance(command, str) or number < 0:
            return JSONResponse({"error": MISSING}, status_code=400)
        if facade.daily is not None:
            wait = facade.daily.take(client)
            if wait is not None:
                return JSONResponse(
                    {"error": quota_message(facade.daily.limit)},
                    status_code=429,
                    headers={"Retry-After": str(max(1, math.ceil(wait)))},
                )
        try:
            status, out = await run_in_threadpool(facade.execute, client, device, command.strip(), number)
        except SessionLimit as exc:
            status, out = 429, {"error": str(exc)}
        except CtbError as exc:
            status, out = 404, {"error": str(exc)}
        return JSONResponse(out, status_code=status)

    async def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        return JSONResponse(
            {"error": "Not Found" if status == 404 else "Method Not Allowed"}, status_code=status
        )

    return Starlette(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/api/agent/execute", execute, methods=["POST"]),
        ],
        exception_handlers={404: not_found, 405: not_found},
    )
