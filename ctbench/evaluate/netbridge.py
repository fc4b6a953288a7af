"""Inside a ``--sandbox-network loopback`` sandbox: TCP on 127.0.0.1 carried to mounted Unix sockets.

Used where bubblewrap makes the attempt's network (a runner that is not root); a root runner makes
it itself and forwards from the runner (:mod:`ctbench.evaluate.netns`).

Run as ``python -I -S netbridge.py PORT=SOCKET... -- AGENT ARGV...``: it listens on
``127.0.0.1:PORT`` for each pair, starts the agent, carries every connection to its socket (the
runner's replay server, or the runner's relay to a model endpoint), and exits with the agent's exit
status. It is the sandbox's PID 1 child, so when it ends the whole sandbox ends.

Every attempt pays for it at start-up (issue 25 keeps the sandbox under 50 ms per attempt), so it is
started without ``site`` and imports only built-in and C modules (``_socket``, ``_thread``,
``_signal``, ``posix``): the ``socket``, ``threading``, ``subprocess`` and ``signal`` wrappers would
pull in ``enum``, ``selectors`` and friends and cost more than the interpreter itself, and even
``os`` costs as much as the rest together. Standard library only, so it imports nothing from the
machine's task set or virtual environment.
"""

import _signal  # type: ignore[import-not-found]  # no stub; the `signal` wrapper costs 20 ms
import _socket
import _thread
import posix
import sys

_AF_INET, _AF_UNIX, _STREAM = _socket.AF_INET, _socket.AF_UNIX, _socket.SOCK_STREAM


def _pump(src: _socket.socket, dst: _socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(_socket.SHUT_WR)
        except OSError:
            pass


def _both(conn: _socket.socket, up: _socket.socket) -> None:
    done = _thread.allocate_lock()
    done.acquire()

    def back() -> None:
        try:
            _pump(up, conn)
        finally:
            done.release()

    _thread.start_new_thread(back, ())
    _pump(conn, up)
    done.acquire()
    conn.close()
    up.close()


def _serve(fd: int, path: str) -> None:
    conn = _socket.socket(_AF_INET, _STREAM, 0, fd)
    up = _socket.socket(_AF_UNIX, _STREAM)
    try:
        up.connect(path)
    except OSError:
        conn.close()
        up.close()
        return
    conn.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
    _both(conn, up)


def _accept(srv: _socket.socket, path: str) -> None:
    while True:
        try:
            fd, _ = srv._accept()  # type: ignore[attr-defined]  # the raw descriptor
        except OSError:
            continue
        try:
            _thread.start_new_thread(_serve, (fd, path))
        except RuntimeError:  # no thread to be had (the attempt at its process cap): drop this one
            posix.close(fd)


def _listen(port: int) -> _socket.socket:
    srv = _socket.socket(_AF_INET, _STREAM)
    srv.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(512)
    return srv


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        sys.stderr.write("netbridge: usage: netbridge.py PORT=SOCKET... -- ARGV...\n")
        return 2
    cut = argv.index("--")
    listeners: list[tuple[_socket.socket, str]] = []
    for pair in argv[:cut]:
        port, _, path = pair.partition("=")
        try:
            listeners.append((_listen(int(port)), path))
        except OSError as exc:
            sys.stderr.write(f"netbridge: cannot listen on 127.0.0.1:{port} in the sandbox: {exc}\n")
            return 125
    # listening before the agent starts: its first connection never races the bridge
    for srv, path in listeners:
        _thread.start_new_thread(_accept, (srv, path))
    child_argv = argv[cut + 1 :]
    try:
        pid = posix.posix_spawnp(child_argv[0], child_argv, posix.environ)
    except OSError as exc:
        sys.stderr.write(f"netbridge: cannot start {child_argv[0]}: {exc}\n")
        return 127

    def forward(sig: int, _frame: object) -> None:
        try:
            posix.kill(pid, sig)
        except OSError:
            pass

    for sig in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP):
        _signal.signal(sig, forward)
    _, status = posix.waitpid(pid, 0)
    return posix.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stderr.flush()
    posix._exit(code if code >= 0 else 128 - code)
