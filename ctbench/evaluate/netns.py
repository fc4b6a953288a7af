"""Attempt networks made by a root runner: a network namespace per attempt, served from the runner.

Under ``--sandbox-network loopback`` every attempt has a network of its own, in which only its replay
endpoint and its model endpoints answer (:mod:`ctbench.evaluate.sandbox`). A runner that is not root
gets that network from bubblewrap (``--unshare-net``) and starts a small forwarder inside it
(:mod:`ctbench.evaluate.netbridge`) - one more Python interpreter per attempt, most of what the
loopback sandbox cost at start-up (issue 25 keeps the sandbox under 50 ms per attempt).

A root runner needs neither. For each attempt it makes the namespace itself, from a worker thread
(``unshare(CLONE_NEWNET)`` moves only the calling thread, which returns to the runner's network right
after), brings its loopback up, and binds the attempt's listening sockets there, before the agent
exists; the agent is started inside that namespace with ``nsenter --net`` (a small C program that
execs bubblewrap, which then keeps the network: ``--share-net``). The listening sockets stay the
runner's: one :class:`Forwarder` per run accepts on every attempt's sockets and carries each
connection to its Unix socket (the replay server's own, or the runner's relay to a model endpoint).
The agent sees the same ``127.0.0.1:PORT`` endpoints as under the forwarder, and nothing else: the
namespace holds only ``lo``, and a socket in it reaches no other namespace.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import os
import selectors
import shutil
import socket
import struct
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS = 0x8913, 0x8914
_IFF_UP = 0x1


class NetnsError(OSError):
    """The runner cannot make an attempt's network namespace here (not root, no ``nsenter``...)."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise NetnsError(err, f"{what}: {os.strerror(err)}")


def _loopback_up(sock: socket.socket) -> None:
    """``ip link set lo up`` without the ``ip`` program: the interface flags, through ioctl."""
    req = struct.pack("16sH14x", b"lo", 0)
    flags = struct.unpack("16sH14x", fcntl.ioctl(sock.fileno(), _SIOCGIFFLAGS, req))[1]
    fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


@dataclass
class AttemptNet:
    """One attempt's network namespace: its handle (``ns_fd``, for ``nsenter``) and its listeners."""

    ns_fd: int
    listeners: list[tuple[socket.socket, Path]]
    released: bool = False

    @property
    def ns_path(self) -> str:
        """The namespace as ``nsenter --net`` opens it (the runner holds the descriptor)."""
        return f"/proc/{os.getpid()}/fd/{self.ns_fd}"


@dataclass
class Forwarder:
    """The run's forwarder for every root-made attempt network: one thread selects on all listening
    sockets; each accepted connection is carried to its Unix socket by two pump threads."""

    nsenter: str
    _libc: ctypes.CDLL = field(default_factory=_libc)
    _nets: set[int] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _open: list[AttemptNet] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._sel = selectors.DefaultSelector()
        self._pending: list[tuple[str, socket.socket, Path | None]] = []
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="ctb-netns-forwarder", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ namespaces

    def open(self, ports: Sequence[tuple[int, Path]]) -> AttemptNet:
        """A fresh network namespace listening on ``127.0.0.1:port`` for each (port, Unix socket)."""
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        ns_fd = -1
        listeners: list[tuple[socket.socket, Path]] = []
        try:
            _check(self._libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
            try:
                ns_fd = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as ctl:
                    _loopback_up(ctl)
                for port, path in ports:
                    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    listeners.append((srv, path))
                    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    srv.bind(("127.0.0.1", port))
                    srv.listen(512)
                    srv.setblocking(False)
            finally:  # back to the runner's network, whatever happened in the attempt's
                _check(self._libc.setns(home, CLONE_NEWNET), "setns back to the runner's network")
        except BaseException:
            for srv, _ in listeners:
                srv.close()
            if ns_fd >= 0:
                os.close(ns_fd)
            raise
        finally:
            os.close(home)
        net = AttemptNet(ns_fd, listeners)
        with self._lock:
            self._open.append(net)
            for srv, path in listeners:
                self._pending.append(("add", srv, path))
        self._wake()
        return net

    @contextlib.contextmanager
    def inside(self, net: AttemptNet) -> Iterator[None]:
        """The calling thread in the attempt's network for the block (a process it starts then is
        born there, as under ``nsenter --net``), back in the runner's network after it, whatever
        happened in it."""
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            _check(self._libc.setns(net.ns_fd, CLONE_NEWNET), "setns into the attempt's network")
            try:
                yield
            finally:
                _check(self._libc.setns(home, CLONE_NEWNET), "setns back to the runner's network")
        finally:
            os.close(home)

    def release(self, net: AttemptNet) -> None:
        """The attempt has ended: its listeners close (connections in flight run out on their own)."""
        with self._lock:
            if net.released:
                return
            net.released = True
            with contextlib.suppress(ValueError):
                self._open.remove(net)
            for srv, _ in net.listeners:
                self._pending.append(("remove", srv, None))
        os.close(net.ns_fd)
        self._wake()

    def close(self) -> None:
        for net in list(self._open):
            self.release(net)
        self._closed = True
        self._wake()
        self._thread.join(5)

    # ------------------------------------------------------------------ the loop

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")

    def _apply(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        for op, srv, path in pending:
            if op == "add":
                self._sel.register(srv, selectors.EVENT_READ, path)
            else:
                with contextlib.suppress(KeyError, ValueError):
                    self._sel.unregister(srv)
                srv.close()

    def _loop(self) -> None:
        while True:
            self._apply()
            if self._closed:
                break
            for key, _ in self._sel.select():
                if key.data is None:
                    with contextlib.suppress(OSError):
                        while self._wake_r.recv(4096):
                            pass
                    continue
                try:
                    conn, _ = key.fileobj.accept()  # type: ignore[union-attr]
                except OSError:
                    continue
                conn.setblocking(True)
                try:
                    threading.Thread(target=_serve, args=(conn, key.data), daemon=True).start()
                except RuntimeError:
                    conn.close()
        self._apply()
        self._sel.close()
        self._wake_r.close()
        self._wake_w.close()


def _serve(conn: socket.socket, path: Path) -> None:
    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        up.connect(str(path))
    except OSError:
        conn.close()
        up.close()
        return
    with contextlib.suppress(OSError):
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pump_both(conn, up)


def pump_both(a: socket.socket, b: socket.socket) -> None:
    """Carry bytes both ways between two connected sockets until both sides have ended, then close them
    (the runner's relays to model endpoints use it too)."""
    back = threading.Thread(target=_pump, args=(b, a), daemon=True)
    back.start()
    _pump(a, b)
    back.join()
    a.close()
    b.close()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def root_forwarder() -> Forwarder | None:
    """The run's forwarder when this runner may make attempt networks itself (root, ``nsenter``
    installed, and a namespace really made here), else None: the sandbox then keeps bubblewrap's
    network and the in-sandbox forwarder."""
    if os.geteuid() != 0:
        return None
    nsenter = shutil.which("nsenter")
    if nsenter is None:
        return None
    try:
        fwd = Forwarder(nsenter)
    except OSError:
        return None
    try:
        fwd.release(fwd.open([]))
    except (OSError, AttributeError):
        fwd.close()
        return None
    return fwd


__all__ = ["AttemptNet", "Forwarder", "NetnsError", "root_forwarder"]
