"""A small client of the HTTP JSON API, for shell-only agents (``ctb-replay exec``) and harnesses.

An agent that only has a shell gets environment variables from its harness,
``CTBENCH_REPLAY_URL`` (the server), ``CTBENCH_REPLAY_SESSION`` (its session) and, when the runner
serves it, ``CTBENCH_REPLAY_TOKEN`` (the secret that grants that one session), and runs
``ctb-replay exec DEVICE COMMAND...`` like it would run ``ssh DEVICE COMMAND``.

A URL ``unix:/PATH`` reaches a server listening on a Unix socket (how a sandboxed agent without a
network reaches the runner: the socket file is mounted into its sandbox).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ctbench.errors import CtbError
from ctbench.replay.observation import DeviceInfo, Observation, Submission
from ctbench.replay.trajectory import TrajectoryRecord

URL_ENV = "CTBENCH_REPLAY_URL"
SESSION_ENV = "CTBENCH_REPLAY_SESSION"
TOKEN_ENV = "CTBENCH_REPLAY_TOKEN"
UNIX_PREFIX = "unix:"
UNIX_BASE = "http://ctbench-replay"
"""Host name sent in requests over a Unix socket (the server ignores it; HTTP/1.1 needs one)."""


class ClientError(CtbError):
    """The server could not be reached or refused the request (not a device answer).

    ``code`` and ``server_message`` are the server's own error code and text when it answered one,
    so a proxy can hand the model exactly what an in-process session would have said.
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        server_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.server_message = server_message


class _Http:
    """One keep-alive HTTP/1.1 connection to a replay server (``http://HOST:PORT`` or ``unix:/PATH``).

    The standard library's client rather than httpx: an MCP proxy pays the client's overhead on
    every tool call, and ``http.client`` costs a fraction of it. Proxy settings in the environment
    are never read (a replay server is local; an agent's HTTP_PROXY must not see its calls). A
    dropped keep-alive connection is reopened once per request.
    """

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 30.0) -> None:
        self.base_url = url.rstrip("/")
        self.timeout = timeout
        self.headers = {"content-type": "application/json", "accept": "application/json"}
        if token:
            self.headers["authorization"] = f"Bearer {token}"
        self._conn: http.client.HTTPConnection | None = None
        if self.base_url.startswith(UNIX_PREFIX):
            self._unix: str | None = self.base_url[len(UNIX_PREFIX) :]
            self._host, self._port = UNIX_BASE[len("http://") :], None
        else:
            parts = urlsplit(self.base_url)
            if parts.scheme != "http" or not parts.hostname:
                raise ClientError(f"replay server URL {url!r}: expected http://HOST:PORT or unix:/PATH")
            self._unix = None
            self._host, self._port = parts.hostname, parts.port or 80

    def _connect(self) -> http.client.HTTPConnection:
        if self._unix is not None:
            return _UnixConnection(self._unix, self.timeout)
        return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)

    def request(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, str, bytes]:
        data = None if body is None else json.dumps(body).encode("utf-8", "surrogatepass")
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = self._connect()
            try:
                self._conn.request(method, path, body=data, headers=self.headers)
                resp = self._conn.getresponse()
                return resp.status, resp.reason, resp.read()
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                if attempt == 2 or not isinstance(
                    exc, (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)
                ):
                    raise ClientError(
                        f"cannot reach the replay server at {self.base_url}: "
                        f"{getattr(exc, 'strerror', None) or exc}"
                    ) from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__(UNIX_BASE[len("http://") :], timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class ReplayClient:
    """One session of a replay server, over HTTP."""

    def __init__(self, url: str, session_id: str, *, token: str | None = None, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.session_id = session_id
        self._http = _Http(self.url, token=token, timeout=timeout)
        self.prompts: dict[str, str] = {}

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ReplayClient:
        env = os.environ if env is None else env
        url, sid = env.get(URL_ENV, "").strip(), env.get(SESSION_ENV, "").strip()
        if not url or not sid:
            missing = " and ".join(n for n, v in ((URL_ENV, url), (SESSION_ENV, sid)) if not v)
            raise ClientError(
                f"{missing} not set: the harness that started this agent gives the replay server "
                f"URL and the session id in {URL_ENV} and {SESSION_ENV}"
            )
        return cls(url, sid, token=env.get(TOKEN_ENV, "").strip() or None)

    @classmethod
    def open(cls, url: str, task_id: str, *, trajectory: str | None = None) -> ReplayClient:
        """Open a new session on ``task_id``; ``trajectory`` is a path relative to the server's
        ``--trajectories`` folder (a server started without one refuses it)."""
        body: dict[str, Any] = {"task_id": task_id}
        if trajectory:
            body["trajectory"] = trajectory
        data = _request(_Http(url), "POST", "/sessions", body, owned=True)
        return cls(url, data["session_id"])

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return _request(self._http, method, f"/sessions/{self.session_id}{path}", body)

    def devices(self) -> list[DeviceInfo]:
        data = self._call("GET", "/devices")
        prompts = data.get("prompts")
        if isinstance(prompts, dict):
            self.prompts.update({k: v for k, v in prompts.items() if isinstance(v, str)})
        return [DeviceInfo.model_validate(d) for d in data["devices"]]

    def prompt(self, device: str) -> str:
        """The device's own prompt (``<CORE_SW_01>``), as the server listed it; else ``DEVICE>``."""
        if device not in self.prompts:
            self.devices()
        return self.prompts.get(device, f"{device}>")

    def run(self, device: str, command: str) -> Observation:
        return Observation.model_validate(self._call("POST", "/run", {"device": device, "command": command}))

    def submit(self, answer: str) -> Submission:
        return Submission.model_validate(self._call("POST", "/submit", {"answer": answer}))

    def complete(self, device: str, line: str) -> list[str]:
        """The keywords the last word of ``line`` completes to on ``device`` (Tab; not a call)."""
        data = self._call("POST", "/complete", {"device": device, "line": line})
        return [k for k in data.get("keywords", []) if isinstance(k, str)]

    def trajectory(self) -> list[TrajectoryRecord]:
        """The session's calls so far, in order."""
        return [TrajectoryRecord.model_validate(r) for r in self._call("GET", "/trajectory")["records"]]

    def summary(self) -> dict[str, Any]:
        return self._call("GET", "")

    def close(self, *, end_session: bool = False) -> None:
        try:
            if end_session:
                self._call("DELETE", "")
        finally:
            self._http.close()

    def __enter__(self) -> ReplayClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _request(http: _Http, method: str, path: str, body: dict[str, Any] | None, *, owned: bool = False) -> Any:
    try:
        status, reason, raw = http.request(method, path, body)
    finally:
        if owned:
            http.close()
    try:
        data = json.loads(raw)
    except ValueError:
        raise ClientError(f"the replay server answered {status} without JSON") from None
    if status >= 400:
        err = data.get("error", {}) if isinstance(data, dict) else {}
        err = err if isinstance(err, dict) else {}
        message = err.get("message") if isinstance(err.get("message"), str) else None
        code = err.get("code") if isinstance(err.get("code"), str) else None
        raise ClientError(
            f"replay server: {message or reason} ({status})", status=status, code=code, server_message=message
        )
    return data


class RemoteSession:
    """A session of a runner's HTTP server, with the calls and errors of a local
    :class:`~ctbench.replay.session.Session`, so :class:`~ctbench.replay.tools.ReplayTools` over it
    answers byte for byte what it answers in-process.

    A refusal the server states (an input the model can fix, the session closed, its call limit) is
    raised as the error the local session raises, with the server's text; only a failure to reach
    the server at all keeps the client's own wording.
    """

    def __init__(self, client: ReplayClient) -> None:
        self.client = client

    @property
    def id(self) -> str:
        return self.client.session_id

    def _mapped(self, exc: ClientError) -> CtbError:
        from ctbench.replay.loaded import InputError

        if exc.server_message is None:
            return exc
        if exc.code == "bad_request":
            return InputError(exc.server_message)
        return CtbError(exc.server_message)

    def devices(self) -> list[DeviceInfo]:
        try:
            return self.client.devices()
        except ClientError as exc:
            raise self._mapped(exc) from None

    def run(self, device: str, command: str) -> Observation:
        try:
            return self.client.run(device, command)
        except ClientError as exc:
            raise self._mapped(exc) from None

    def submit(self, answer_text: str) -> Submission:
        try:
            return self.client.submit(answer_text)
        except ClientError as exc:
            raise self._mapped(exc) from None

    def complete(self, device: str, line: str) -> list[str]:
        try:
            return self.client.complete(device, line)
        except ClientError as exc:
            raise self._mapped(exc) from None
