"""Inside a ``--sandbox-network loopback`` sandbox: TCP on 127.0.0.1 carried to mounted Unix sockets.

Run as ``python -I -S netbridge.py PORT=SOCKET... -- AGENT ARGV...``: it listens on
``127.0.0.1:PORT`` for each pair, starts the agent, carries every connection to its socket (the
runner's replay server, or the runner's relay to a model endpoint), and exits with the agent's exit
status. Standard library only and started without ``site``, so it costs a few milliseconds and
imports nothing from the task set's machine; it is the sandbox's PID 1 child, so when it ends the
whole sandbox ends.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading


def _pump(src: socket.socket, dst: socket.socket) -> None:
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
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _serve(conn: socket.socket, path: str) -> None:
    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        up.connect(path)
    except OSError:
        conn.close()
        up.close()
        return
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t = threading.Thread(target=_pump, args=(up, conn), daemon=True)
    t.start()
    _pump(conn, up)
    t.join()
    conn.close()
    up.close()


def _listen(port: int, path: str) -> None:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(512)

    def accept() -> None:
        while True:
            conn, _ = srv.accept()
            threading.Thread(target=_serve, args=(conn, path), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print("netbridge: usage: netbridge.py PORT=SOCKET... -- ARGV...", file=sys.stderr)
        return 2
    cut = argv.index("--")
    for pair in argv[:cut]:
        port, _, path = pair.partition("=")
        _listen(int(port), path)
    child = subprocess.Popen(argv[cut + 1 :])
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, f: child.send_signal(s))
    return child.wait()


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.exit(code if code >= 0 else 128 - code)
