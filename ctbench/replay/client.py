"""A small client of the HTTP JSON API, for shell-only agents (``ctb-replay exec``) and harnesses.

An agent that only has a shell gets two environment variables from its harness,
``CTBENCH_REPLAY_URL`` (the server) and ``CTBENCH_REPLAY_SESSION`` (its session), and runs
``ctb-replay exec DEVICE COMMAND...`` like it would run ``ssh DEVICE COMMAND``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import httpx

from ctbench.errors import CtbError
from ctbench.replay.observation import DeviceInfo, Observation, Submission

URL_ENV = "CTBENCH_REPLAY_URL"
SESSION_ENV = "CTBENCH_REPLAY_SESSION"


class ClientError(CtbError):
    """The server could not be reached or refused the request (not a device answer)."""

    exit_code = 2


class ReplayClient:
    """One session of a replay server, over HTTP."""

    def __init__(self, url: str, session_id: str, *, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.session_id = session_id
        self._http = httpx.Client(base_url=self.url, timeout=timeout, trust_env=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ReplayClient:
        env = os.environ if env is None else env
        url, sid = env.get(URL_ENV, "").strip(), env.get(SESSION_ENV, "").strip()
        if not url or not sid:
            missing = " and ".join(n for n, v in ((URL_ENV, url), (SESSION_ENV, sid)) if not v)
            raise ClientError(f"{missing} not set: the harness that started this agent gives the replay server "
                              f"URL and the session id in {URL_ENV} and {SESSION_ENV}")
        return cls(url, sid)

    @classmethod
    def open(cls, url: str, task_id: str, *, trajectory: str | None = None) -> ReplayClient:
        """Open a new session on ``task_id``; ``trajectory`` is a path relative to the server's
        ``--trajectories`` folder (a server started without one refuses it)."""
        body: dict[str, Any] = {"task_id": task_id}
        if trajectory:
            body["trajectory"] = trajectory
        data = _request(httpx.Client(base_url=url.rstrip("/"), timeout=30.0, trust_env=False), "POST",
                        "/sessions", body, owned=True)
        return cls(url, data["session_id"])

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return _request(self._http, method, f"/sessions/{self.session_id}{path}", body)

    def devices(self) -> list[DeviceInfo]:
        return [DeviceInfo.model_validate(d) for d in self._call("GET", "/devices")["devices"]]

    def run(self, device: str, command: str) -> Observation:
        return Observation.model_validate(self._call("POST", "/run", {"device": device, "command": command}))

    def submit(self, answer: str) -> Submission:
        return Submission.model_validate(self._call("POST", "/submit", {"answer": answer}))

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


def _request(http: httpx.Client, method: str, path: str, body: dict[str, Any] | None, *,
             owned: bool = False) -> Any:
    try:
        resp = http.request(method, path, json=body)
    except httpx.HTTPError as exc:
        raise ClientError(f"cannot reach the replay server at {http.base_url}: {exc}") from None
    finally:
        if owned:
            http.close()
    try:
        data = resp.json()
    except ValueError:
        raise ClientError(f"the replay server answered {resp.status_code} without JSON") from None
    if resp.status_code >= 400:
        err = data.get("error", {}) if isinstance(data, dict) else {}
        raise ClientError(f"replay server: {err.get('message') or resp.reason_phrase} ({resp.status_code})")
    return data
