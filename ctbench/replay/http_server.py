"""The HTTP JSON API: many concurrent replay sessions for harnesses that run outside this process.

Routes (all JSON; errors are ``{"error": {"code", "message"}}`` with a 4xx status)::

    GET    /health                        {"status": "ok", "sessions": N}
    POST   /sessions                      {"task_id", "trajectory"?} -> {"session_id", "task_id", "devices"}
                                          (trajectory: a path relative to the server's --trajectories DIR)
    GET    /sessions/{id}                 summary: task, calls, submitted answer, trajectory name
    POST   /mcp/{token}/                  streamable-HTTP MCP of one granted session (runner mode)
    GET    /sessions/{id}/devices         {"devices": [...], "prompts": {name: prompt}}
    POST   /sessions/{id}/run             {"device", "command"} -> observation
    POST   /sessions/{id}/submit          {"answer"} -> submission
    POST   /sessions/{id}/complete        {"device", "line"} -> {"keywords": [...]} (Tab; not a call)
    GET    /sessions/{id}/trajectory      {"records": [...]}
    DELETE /sessions/{id}                 closes the session and its trajectory file

Every call goes through the one :class:`~ctbench.replay.engine.ReplayEngine`; this module only
parses requests, maps errors to status codes and keeps the table of open sessions.

Two modes. Standalone (``ctb-replay serve``): clients open their own sessions and a session id is
a random token - holding it is what entitles a client to the session. Runner mode
(``SessionRegistry(runner=True)``, what ``ctb-eval run`` serves agents from): agents under test are
the clients, so none may open, list or close a session; only the runner registers them
(:meth:`SessionRegistry.grant`), each with its own secret token, and every call must carry it as
``Authorization: Bearer TOKEN`` - a session id alone, or another session's token, grants nothing
and gets the same 404 as an id that never existed. Each granted session also has its own MCP
endpoint over streamable HTTP at ``/mcp/TOKEN/`` serving the tools of
:mod:`ctbench.replay.tools`. Nothing any route returns names a path of the host: a summary shows
the trajectory only as the relative name a standalone client gave it.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import Receive, Scope, Send

from ctbench.errors import CtbError
from ctbench.replay.engine import ReplayEngine
from ctbench.replay.http_body import BodyError, read_body
from ctbench.replay.http_body import SafeJSONResponse as JSONResponse
from ctbench.replay.listen import bind_socket, bind_unix_socket, socket_url, uvicorn_server
from ctbench.replay.loaded import InputError, printable
from ctbench.replay.session import Session, SessionClosed, SessionLimit
from ctbench.safetext import first_surrogate
from ctbench.store import TaskNotFound

if TYPE_CHECKING:
    import uvicorn

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
    trajectory: str | None = Field(
        default=None, max_length=4096, description="Path of the trajectory file to append (.jsonl)"
    )


class RunRequest(_Body):
    device: str
    command: str


class SubmitRequest(_Body):
    answer: str


class CompleteRequest(_Body):
    device: str
    line: str


# --------------------------------------------------------------------------- session table


@dataclass(frozen=True)
class Grant:
    """What the runner hands one agent: its session id and the token that alone grants it.

    ``mcp_path`` is the session's own streamable-HTTP MCP endpoint, relative to the server's URL;
    ``mcp_url`` the whole URL, when the grant came from a :class:`ServerHandle` that knows it.
    """

    session_id: str
    token: str
    mcp_url: str | None = None

    @property
    def mcp_path(self) -> str:
        return f"/mcp/{self.token}/"


def _unknown(session_id: str) -> ApiError:
    return ApiError(404, "unknown_session", f"no open session {printable(session_id, 40)!r}")


class SessionRegistry:
    """Open sessions by id, bounded in number and reaped after idling.

    ``runner=True``: clients cannot open, list or close sessions; the runner grants each one a token
    (:meth:`grant`) and :meth:`get` wants it. A session granted a token needs it in either mode.
    """

    def __init__(
        self,
        engine: ReplayEngine,
        *,
        max_sessions: int = 10_000,
        idle_timeout: float = 3600.0,
        trajectory_root: Path | None = None,
        runner: bool = False,
    ) -> None:
        self.engine = engine
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.runner = runner
        self.trajectory_root = None if trajectory_root is None else Path(trajectory_root).resolve()
        """Folder that client-named trajectory files must stay in; ``None``: clients cannot name one."""
        self._sessions: dict[str, Session] = {}
        self._tokens: dict[str, str] = {}
        """Session id -> token, for the sessions that need one."""
        self._by_token: dict[str, str] = {}
        self._names: dict[str, str] = {}
        """Session id -> the relative trajectory name its client gave (never a host path)."""
        self._lock = threading.Lock()
        self._last_sweep = time.monotonic()

    def __len__(self) -> int:
        return len(self._sessions)

    def open(self, task_id: str, trajectory: Path | None = None, *, name: str | None = None) -> Session:
        if self.runner:
            raise ApiError(
                403,
                "forbidden",
                "this server serves only the sessions its runner opened; a client cannot open one",
            )
        self._sweep()
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                raise ApiError(
                    429,
                    "too_many_sessions",
                    f"{len(self._sessions)} sessions are open (the limit is {self.max_sessions}); "
                    "close finished sessions with DELETE /sessions/{id}",
                )
        session = self.engine.open_session(task_id, trajectory_path=trajectory)
        with self._lock:
            self._sessions[session.id] = session
            if name is not None:
                self._names[session.id] = name
        return session

    def add(self, session: Session) -> str:
        """Serve a session opened elsewhere, reachable by its id alone (standalone servers only; a
        runner-mode server wants :meth:`grant`)."""
        if self.runner:
            raise CtbError("a runner-mode registry serves sessions only with a token: use grant()")
        with self._lock:
            self._sessions[session.id] = session
        return session.id

    def grant(self, session: Session) -> Grant:
        """Serve a session the runner opened, to the one client it gives the returned token to."""
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[session.id] = session
            self._tokens[session.id] = token
            self._by_token[token] = session.id
        return Grant(session.id, token)

    def get(self, session_id: str, token: str | None = None) -> Session:
        """The open session ``session_id``, if ``token`` is the one it was granted (when it has one).

        A wrong or missing token answers exactly like an unknown id, so probing ids teaches nothing.
        """
        session = self._sessions.get(session_id)
        if session is None or session.closed:
            raise _unknown(session_id)
        expected = self._tokens.get(session_id)
        if self.runner and expected is None:
            raise _unknown(session_id)
        if expected is not None and not (
            token is not None
            and secrets.compare_digest(token.encode("utf-8", "surrogatepass"), expected.encode())
        ):
            raise _unknown(session_id)
        return session

    def by_token(self, token: str) -> Session | None:
        """The open session granted ``token`` (the per-session MCP endpoint's lookup), or None."""
        sid = self._by_token.get(token)
        if sid is None:
            return None
        session = self._sessions.get(sid)
        return None if session is None or session.closed else session

    def name(self, session_id: str) -> str | None:
        return self._names.get(session_id)

    def _forget(self, session_id: str) -> Session | None:
        """Drop a session from every table (caller holds the lock)."""
        session = self._sessions.pop(session_id, None)
        token = self._tokens.pop(session_id, None)
        if token is not None:
            self._by_token.pop(token, None)
        self._names.pop(session_id, None)
        return session

    def close(self, session_id: str) -> Session:
        with self._lock:
            session = self._forget(session_id)
        if session is None:
            raise _unknown(session_id)
        session.close()
        return session

    def close_all(self) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
            self._tokens.clear()
            self._by_token.clear()
            self._names.clear()
        for s in sessions:
            s.close()

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._last_sweep < 1.0:
            return
        self._last_sweep = now
        with self._lock:
            stale = [
                sid for sid, s in self._sessions.items() if s.closed or now - s.last_used > self.idle_timeout
            ]
            gone = [self._forget(sid) for sid in stale]
        for s in gone:
            if s is not None:
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
        raise ApiError(
            403,
            "trajectories_disabled",
            "this server writes no trajectory a client names; start it "
            "with `ctb-replay serve --trajectories DIR` to allow paths relative to DIR",
        )
    rel = Path(text)
    if (
        "\x00" in text
        or first_surrogate(text) is not None
        or not text.endswith(".jsonl")
        or rel.is_absolute()
        or ".." in rel.parts
        or text.startswith("~")
    ):
        raise ApiError(
            400,
            "bad_trajectory",
            "trajectory must be a relative path ending in .jsonl, inside the "
            "server's trajectory folder (no '..')",
        )
    target = (root / rel).resolve()
    if not target.is_relative_to(root):
        raise ApiError(400, "bad_trajectory", "trajectory leads out of the server's trajectory folder")
    return target


def _devices(session: Session) -> list[dict[str, Any]]:
    return [d.model_dump() for d in session.devices()]


def _summary(session: Session, name: str | None) -> dict[str, Any]:
    """A session's state; ``trajectory`` is the relative name its client chose, never a host path."""
    answer = session.answer
    return {
        "session_id": session.id,
        "task_id": session.task_id,
        "calls": session.calls,
        "closed": session.closed,
        "answer": answer.model_dump() if answer else None,
        "trajectory": name,
    }


def _bearer(request: Request) -> str | None:
    value = request.headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def build_app(
    engine: ReplayEngine, registry: SessionRegistry | None = None, *, mcp: bool = True
) -> Starlette:
    """The Starlette application serving ``engine`` (a fresh session table unless one is given).

    ``mcp=False`` leaves out the per-session MCP endpoints (``/mcp/TOKEN/``): a run whose agent
    never takes an MCP URL does not import the MCP SDK, which builds some 550 pydantic models (1.3 s
    of CPU, 4 s at load 15 on 2 cores, before the first attempt could start).
    """
    reg = registry if registry is not None else SessionRegistry(engine)  # an empty registry is falsy

    def session_of(request: Request) -> Session:
        return reg.get(request.path_params["sid"], _bearer(request))

    async def health(request: Request) -> Response:
        if reg.runner:  # how many agents run is none of an agent's business
            return JSONResponse({"status": "ok"})
        return JSONResponse({"status": "ok", "sessions": len(reg)})

    async def open_session(request: Request) -> Response:
        if reg.runner:
            reg.open("")  # raises the 403 before any body is read
        body: OpenRequest = await _body(request, OpenRequest)
        session = reg.open(
            body.task_id, _trajectory_path(body.trajectory, reg.trajectory_root), name=body.trajectory
        )
        return JSONResponse(
            {"session_id": session.id, "task_id": session.task_id, "devices": _devices(session)},
            status_code=201,
        )

    async def summary(request: Request) -> Response:
        session = session_of(request)
        return JSONResponse(_summary(session, reg.name(session.id)))

    async def devices(request: Request) -> Response:
        session = session_of(request)
        # prompts: so a remote console can echo "<CORE_SW_01>dis int br" before the first answer
        prompts = {d.name: session.prompt(d.name) for d in session.devices()}
        return JSONResponse({"devices": _devices(session), "prompts": prompts})

    async def run_command(request: Request) -> Response:
        session = session_of(request)
        body: RunRequest = await _body(request, RunRequest)
        return JSONResponse(session.run(body.device, body.command).model_dump(mode="json"))

    async def submit(request: Request) -> Response:
        session = session_of(request)
        body: SubmitRequest = await _body(request, SubmitRequest)
        return JSONResponse(session.submit(body.answer).model_dump(mode="json"))

    async def complete(request: Request) -> Response:
        # Tab in a remote console (the isolated blind-review and Try-it replay): keywords of the
        # vendor grammar only, never which commands were recorded, and not logged as a call.
        session = session_of(request)
        body: CompleteRequest = await _body(request, CompleteRequest)
        return JSONResponse({"keywords": session.complete(body.device, body.line)})

    async def trajectory(request: Request) -> Response:
        session = session_of(request)
        return JSONResponse({"records": [r.model_dump(mode="json") for r in session.trajectory]})

    async def close(request: Request) -> Response:
        session = session_of(request)
        if reg.runner:
            raise ApiError(403, "forbidden", "the runner closes the sessions it opened; a client cannot")
        name = reg.name(session.id)
        reg.close(session.id)
        return JSONResponse({**_summary(session, name), "closed": True})

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

    routes: list[BaseRoute] = [
        Route("/health", health, methods=["GET"]),
        Route("/sessions", open_session, methods=["POST"]),
        Route("/sessions/{sid}", summary, methods=["GET"]),
        Route("/sessions/{sid}", close, methods=["DELETE"]),
        Route("/sessions/{sid}/devices", devices, methods=["GET"]),
        Route("/sessions/{sid}/run", run_command, methods=["POST"]),
        Route("/sessions/{sid}/submit", submit, methods=["POST"]),
        Route("/sessions/{sid}/complete", complete, methods=["POST"]),
        Route("/sessions/{sid}/trajectory", trajectory, methods=["GET"]),
    ]
    endpoints = _McpEndpoints(reg) if mcp else None
    if endpoints is not None:
        routes.append(Mount("/mcp", app=endpoints))
    handlers: dict[Any, Any] = {
        ApiError: api_error,
        CtbError: ctb_error,
        404: not_found,
        405: not_found,
        Exception: internal,
    }
    lifespan = endpoints.lifespan if endpoints is not None else None
    return Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)


# --------------------------------------------------------------------------- MCP per session


MCP_HOST = "ctbench-replay"
"""Host name clients use over the Unix socket (see :mod:`ctbench.replay.client`)."""


class _McpEndpoints:
    """Streamable-HTTP MCP for every granted session, at ``/mcp/TOKEN/``.

    One MCP server and one SDK session manager serve all of them; the token in the path picks the
    replay session on every request (an MCP session opened under one token cannot reach another's
    replay session by reusing its ``mcp-session-id``: each call is looked up by its own URL).
    """

    def __init__(self, registry: SessionRegistry) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        from ctbench.replay.mcp_server import build_dispatch_server

        self.registry = registry
        server = build_dispatch_server(self._tools)
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", MCP_HOST],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
        self.manager = StreamableHTTPSessionManager(
            app=server, json_response=True, security_settings=security
        )

    def _tools(self, request: Any) -> Any:
        from ctbench.replay.tools import ReplayTools

        token = request.scope.get("ctbench.token") if request is not None else None
        session = self.registry.by_token(token) if token else None
        return None if session is None else ReplayTools(session)

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any) -> AsyncIterator[None]:
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        rest = (
            path[len(scope.get("root_path", "")) :] if path.startswith(scope.get("root_path", "")) else path
        )
        token = rest.strip("/").split("/", 1)[0]
        if scope["type"] != "http" or not token or self.registry.by_token(token) is None:
            response = _error(
                404, "unknown_session", "no MCP endpoint here: the runner gives each agent its own URL"
            )
            await response(scope, receive, send)
            return
        await self.manager.handle_request({**scope, "ctbench.token": token}, receive, send)


# --------------------------------------------------------------------------- serving


@dataclass
class ServerHandle:
    """A server running in a background thread; ``stop()`` shuts it down and closes its sessions.

    ``unix_url`` (``unix:/PATH``) is set when it also listens on a Unix socket.
    """

    url: str
    registry: SessionRegistry
    _server: uvicorn.Server
    _thread: threading.Thread
    unix_path: Path | None = None
    mcp: bool = True
    """Whether it serves the per-session MCP endpoints (``serve_in_thread(mcp=...)``)."""

    @property
    def unix_url(self) -> str | None:
        return None if self.unix_path is None else f"unix:{self.unix_path}"

    def mcp_url(self, grant: Grant) -> str:
        """The streamable-HTTP MCP endpoint of one granted session, over TCP."""
        return self.url + grant.mcp_path

    def grant(self, session: Session) -> Grant:
        """Serve ``session`` to the one client given the returned token (and its MCP URL)."""
        g = self.registry.grant(session)
        return Grant(g.session_id, g.token, self.url + g.mcp_path if self.mcp else None)

    def revoke(self, session_id: str) -> None:
        """Stop serving a granted session and close it (its token grants nothing any more)."""
        self.registry.close(session_id)

    def stop(self, timeout: float = 10.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout)
        self.registry.close_all()
        if self.unix_path is not None:
            with contextlib.suppress(OSError):
                self.unix_path.unlink()

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_in_thread(
    engine: ReplayEngine,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    registry: SessionRegistry | None = None,
    ready_timeout: float = 10.0,
    runner: bool = False,
    unix_socket: Path | None = None,
    mcp: bool = True,
) -> ServerHandle:
    """Start the HTTP API on ``host:port`` (0: a free port) in a daemon thread and wait until it listens.

    ``runner=True`` (ignored when ``registry`` is given: that registry's mode counts) serves only the
    sessions granted through ``handle.registry.grant(session)``; ``unix_socket`` also listens there.
    ``mcp=False``: no per-session MCP endpoints (see :func:`build_app`); grants carry no MCP URL.
    """
    reg = registry if registry is not None else SessionRegistry(engine, runner=runner)  # empty is falsy
    socks = [bind_socket(host, port)]
    if unix_socket is not None:
        try:
            socks.append(bind_unix_socket(unix_socket))
        except CtbError:
            socks[0].close()
            raise
    server = uvicorn_server(build_app(engine, reg, mcp=mcp))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": socks}, name="ctb-replay-http", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + ready_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            for sock in socks:
                sock.close()
            raise CtbError(f"the replay HTTP server did not start on {host}:{port}")
        time.sleep(0.01)
    return ServerHandle(
        url=socket_url(socks[0]),
        registry=reg,
        _server=server,
        _thread=thread,
        unix_path=None if unix_socket is None else Path(unix_socket),
        mcp=mcp,
    )
