"""Listening sockets and the uvicorn server every replay HTTP transport runs on.

Shared by the HTTP JSON API (:mod:`ctbench.replay.http_server`) and the single-task MCP server's
streamable-HTTP mode (:mod:`ctbench.replay.mcp_server`), which must not import each other.
"""

from __future__ import annotations

import contextlib
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from ctbench.errors import CtbError

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp


LISTEN_BACKLOG = 4096
"""Connections the kernel queues before the server accepts them (uvicorn's backlog below)."""


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
    # Listening now, not when uvicorn starts: the URL is printed before the server's loop runs, and
    # a client that connects the moment it reads it must be queued, not refused.
    sock.listen(LISTEN_BACKLOG)
    sock.set_inheritable(True)
    return sock


def socket_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def uvicorn_server(app: ASGIApp, *, log_level: str = "warning") -> uvicorn.Server:
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="auto",
        backlog=LISTEN_BACKLOG,
        timeout_keep_alive=30,
    )
    return uvicorn.Server(config)


def bind_unix_socket(path: Path) -> socket.socket:
    """A listening-ready Unix socket at ``path`` (only its owner may connect: mode 0600).

    What a sandbox without a network reaches the runner through: the socket file is mounted into
    the sandbox and nothing else of the host's file system comes with it.
    """
    path = Path(path)
    if len(str(path).encode()) >= 108:
        raise CtbError(f"{path}: too long for a Unix socket path (the limit is 107 bytes)")
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
        path.chmod(0o600)
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        raise CtbError(f"cannot listen on {path}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


__all__ = ["bind_socket", "bind_unix_socket", "socket_url", "uvicorn_server"]
