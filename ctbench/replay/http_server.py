"""The HTTP JSON API: many concurrent replay sessions for harnesses that run outside this process.

Routes (all JSON; errors are ``{"error": {"code", "message"}}`` with a 4xx status)::

    GET    /health                        {"status": "ok", "sessions": N}
    POST   /sessions                      {"task_id", "trajectory"?} -> {"session_id", "task_id", "devices"}
                                          (trajectory: a path relative to the server's --trajectories DIR)
    GET    /sessions/{id}                 summary: task, calls, submitted answer, trajectory path
    GET    /sessions/{id}/devices         {"devices": [...]}
    POST   /sessions/{id}/run             {"device", "command"} -> observation
    POST   /sessions/{id}/submit          {"answer"} -> submission
    GET    /sessions/{id}/trajectory      {"records": [...]}
    DELETE /sessions/{id}                 closes the session and its trajectory file

Every call goes through the one :class:`~ctbench.replay.engine.ReplayEngine`; this module only
parses requests, maps errors to status codes and keeps the table of open sessions. A session id is
a random token: holding it is what entitles a client to the session.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ctbench.errors import CtbError
from ctbench.replay.engine import InputError, ReplayEngine, printable
from ctbench.replay.http_body import BodyError, read_body
from ctbench.replay.http_body import SafeJSONResponse as JSONResponse
from ctbench.replay.session import Session, SessionClosed, SessionLimit
from ctbench.safetext import first_surrogate
from ctbench.store import TaskNotFound

MAX_BODY = 1024 * 1024
"""Largest request body read; bigger ones get 413 before any parsing."""


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class OpenRequest(_Body):
    task_id: str = Field(min_length=1, max_length=64)
    trajectory: str | None = Field(default=None, max_length=4096,
                                   description="Path of the trajectory file to append (.jsonl)")


class RunRequest(_Body):
    device: str
    command: str


class SubmitRequest(_Body):
    answer: str


# --------------------------------------------------------------------------- session table


class SessionRegistry:
    """Open sessions by id, bounded in number and reaped after idling."""

    def __init__(self, engine: ReplayEngine, *, max_sessions: int = 10_000,
                 idle_timeout: float = 3600.0, trajectory_root: Path | None = None) -> None:
        self.engine = engine
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.trajectory_root = None if trajectory_root is None else Path(trajectory_root).resolve()
        """Folder that client-named trajectory files must stay in; ``None``: clients cannot name one."""
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        self._last_sweep = time.monotonic()

    def __len__(self) -> int:
        return len(self._sessions)

    def open(self, task_id: str, trajectory: Path | None = None) -> Session:
        self._sweep()
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                raise ApiError(429, "too_many_sessions",
                               f"{len(self._sessions)} sessions are open (the limit is {self.max_sessions}); "
                               "close finished sessions with DELETE /sessions/{id}")
        session = self.engine.open_session(task_id, trajectory_path=trajectory)
        with self._lock:
            self._sessions[session.id] = session
        return session

    def add(self, session: Session) -> str:
        """Serve a session opened elsewhere (the runner opens it, an external agent uses it)."""
        with self._lock:
            self._sessions[session.id] = session
        return session.id

    def get(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None or session.closed:
            raise ApiError(404, "unknown_session", f"no open session {printable(session_id, 40)!r}")
        return session

    def close(self, session_id: str) -> Session:
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            raise ApiError(404, "unknown_session", f"no open session {printable(session_id, 40)!r}")
        session.close()
        return session

    def close_all(self) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for s in sessions:
            s.close()

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._last_sweep < 1.0:
            return
        self._last_sweep = now
        with self._lock:
            stale = [sid for sid, s in self._sessions.items() if s.closed or now - s.last_used > self.idle_timeout]
            gone = [self._sessions.pop(sid) for sid in stale]
        for s in gone:
            s.close()


# --------------------------------------------------------------------------- request plumbing


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


async def _body(request: Request, model: type[BaseModel]) -> Any:
    try:
        return await read_body(request, model, MAX_BODY)
    except BodyError as exc:
        raise ApiError(exc.status, exc.code, exc.message) from None


def _trajectory_path(text: str | None, root: Path | None) -> Path | None:
    """Where a client's trajectory goes: a ``.jsonl`` path relative to the server's trajectory folder.

    A client (an agent under test, say) must not make the server append to, or move aside, files
    elsewhere - other runs' trajectories included - so absolute paths, ``..`` and symbolic links that
    lead out of the folder are refused, and a server started without one accepts no path at all.
    """
    if text is None:
        return None
    if root is None:
        raise ApiError(403, "trajectories_disabled", "this server writes no trajectory a client names; start it "
                       "with `ctb-replay serve --trajectories DIR` to allow paths relative to DIR")
    rel = Path(text)
    if "\x00" in text or first_surrogate(text) is not None or not text.endswith(".jsonl") or rel.is_absolute() or ".." in rel.parts or \
            text.startswith("~"):
        raise ApiError(400, "bad_trajectory", "trajectory must be a relative path ending in .jsonl, inside the "
                       "server's trajectory folder (no '..')")
    target = (root / rel).resolve()
    if not target.is_relative_to(root):
        raise ApiError(400, "bad_trajectory", "trajectory leads out of the server's trajectory folder")
    return target


def _devices(session: Session) -> list[dict[str, Any]]:
    return [d.model_dump() for d in session.devices()]


def _summary(session: Session) -> dict[str, Any]:
    answer = session.answer
    return {"session_id": session.id, "task_id": session.task_id, "calls": session.calls,
            "closed": session.closed, "answer": answer.model_dump() if answer else None,
            "trajectory": str(session.trajectory_path) if session.trajectory_path else None}


def build_app(engine: ReplayEngine, registry: SessionRegistry | None = None) -> Starlette:
    """The Starlette application serving ``engine`` (a fresh session table unless one is given)."""
    reg = registry if registry is not None else SessionRegistry(engine)  # an empty registry is falsy

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "sessions": len(reg)})

    async def open_session(request: Request) -> Response:
        body: OpenRequest = await _body(request, OpenRequest)
        session = reg.open(body.task_id, _trajectory_path(body.trajectory, reg.trajectory_root))
        return JSONResponse({"session_id": session.id, "task_id": session.task_id,
                             "devices": _devices(session)}, status_code=201)

    async def summary(request: Request) -> Response:
        return JSONResponse(_summary(reg.get(request.path_params["sid"])))

    async def devices(request: Request) -> Response:
        return JSONResponse({"devices": _devices(reg.get(request.path_params["sid"]))})

    async def run_command(request: Request) -> Response:
        session = reg.get(request.path_params["sid"])
        body: RunRequest = await _body(request, RunRequest)
        return JSONResponse(session.run(body.device, body.command).model_dump(mode="json"))

    async def submit(request: Request) -> Response:
        session = reg.get(request.path_params["sid"])
        body: SubmitRequest = await _body(request, SubmitRequest)
        return JSONResponse(session.submit(body.answer).model_dump(mode="json"))

    async def trajectory(request: Request) -> Response:
        session = reg.get(request.path_params["sid"])
        return JSONResponse({"records": [r.model_dump(mode="json") for r in session.trajectory]})

    async def close(request: Request) -> Response:
        session = reg.close(request.path_params["sid"])
        return JSONResponse({**_summary(session), "closed": True})

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return _error(exc.status, exc.code, exc.message)

    async def ctb_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, TaskNotFound):
            return _error(404, "unknown_task", str(exc))
        if isinstance(exc, SessionClosed):
            return _error(404, "unknown_session", str(exc))
        if isinstance(exc, SessionLimit):
            return _error(429, "call_limit", str(exc))
        if isinstance(exc, InputError):
            return _error(422, "bad_request", str(exc))
        return _error(400, "error", str(exc))

    async def internal(request: Request, exc: Exception) -> Response:
        return _error(500, "internal", f"{type(exc).__name__}: the server could not answer this request")

    async def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        code = "method_not_allowed" if status == 405 else "not_found"
        return _error(status, code, f"{request.method} {printable(request.url.path, 80)}: no such route")

    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/sessions", open_session, methods=["POST"]),
        Route("/sessions/{sid}", summary, methods=["GET"]),
        Route("/sessions/{sid}", close, methods=["DELETE"]),
        Route("/sessions/{sid}/devices", devices, methods=["GET"]),
        Route("/sessions/{sid}/run", run_command, methods=["POST"]),
        Route("/sessions/{sid}/submit", submit, methods=["POST"]),
        Route("/sessions/{sid}/trajectory", trajectory, methods=["GET"]),
    ]
    handlers: dict[Any, Any] = {ApiError: api_error, CtbError: ctb_error, 404: not_found, 405: not_found,
                                Exception: internal}
    app = Starlette(routes=routes, exception_handlers=handlers)
    return app


# --------------------------------------------------------------------------- serving


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening-ready TCP socket, so port 0 gives a free port whose number we can print."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise CtbError(f"cannot resolve host {host!r}: {exc.strerror}") from None
    family, _, _, _, addr = infos[0]
    # proto must say TCP: asyncio only sets TCP_NODELAY on accepted sockets whose proto is IPPROTO_TCP,
    # and without it every keep-alive response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
    except OSError as exc:
        sock.close()
        raise CtbError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def socket_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def uvicorn_server(app: Any, *, log_level: str = "warning") -> Any:
    import uvicorn

    config = uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="auto", backlog=4096,
                            timeout_keep_alive=30)
    return uvicorn.Server(config)


@dataclass
class ServerHandle:
    """A server running in a background thread; ``stop()`` shuts it down and closes its sessions."""

    url: str
    registry: SessionRegistry
    _server: Any
    _thread: threading.Thread

    def stop(self, timeout: float = 10.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout)
        self.registry.close_all()

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_in_thread(engine: ReplayEngine, host: str = "127.0.0.1", port: int = 0, *,
                    registry: SessionRegistry | None = None, ready_timeout: float = 10.0) -> ServerHandle:
    """Start the HTTP API on ``host:port`` (0: a free port) in a daemon thread and wait until it listens."""
    reg = registry if registry is not None else SessionRegistry(engine)  # an empty registry is falsy
    sock = bind_socket(host, port)
    server = uvicorn_server(build_app(engine, reg))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="ctb-replay-http",
                              daemon=True)
    thread.start()
    deadline = time.monotonic() + ready_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            raise CtbError(f"the replay HTTP server did not start on {host}:{port}")
        time.sleep(0.01)
    return ServerHandle(url=socket_url(sock), registry=reg, _server=server, _thread=thread)
