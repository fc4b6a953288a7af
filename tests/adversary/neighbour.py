"""An agent that tries to reach what runs beside it (issue 25: attempts are alone).

Run by ``ctb-eval run --agent command``; what it found goes, as one JSON line, to its answer file
(the run's ``results.jsonl`` keeps it as the line's ``answer_text``). Modes:

``note PORT NAME SECONDS``
    Pass a note to another attempt over the two channels a network namespace holds: TCP on
    ``127.0.0.1:PORT`` and the abstract Unix socket ``@ctb-note-PORT``. On each channel it binds
    the address; where that fails (another attempt holds it) it connects and sends
    ``note from NAME``, where it succeeds it listens for up to SECONDS for a note. Its start and end
    times are reported, so a test can tell "nothing heard" from "never ran at the same time".
``scan HOST:PORT...``
    Reach each address (the Ray GCS, a raylet...): ``refused``/an error, ``open`` (a TCP connection
    was accepted) or ``answers-http2`` (a gRPC server answered the HTTP/2 preface with its SETTINGS).
    Also lists every TCP port in the LISTEN state it can see in ``/proc/net/tcp``.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _answer(found: dict) -> None:
    text = json.dumps(found, sort_keys=True)
    path = os.environ.get("CTBENCH_ANSWER_FILE")
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    print(text)


def _channels(port: int) -> list[tuple[str, int, object]]:
    return [("tcp", socket.AF_INET, ("127.0.0.1", port)), ("abstract", socket.AF_UNIX, f"\0ctb-note-{port}")]


def note(port: int, name: str, seconds: float) -> dict:
    started = time.time()
    heard: list[str] = []
    sent: list[str] = []
    listening: list[socket.socket] = []
    for channel, family, address in _channels(port):
        srv = socket.socket(family, socket.SOCK_STREAM)
        try:
            srv.bind(address)  # type: ignore[arg-type]
            srv.listen(4)
            srv.settimeout(0.1)
            listening.append(srv)
        except OSError:  # another attempt holds it: talk to it
            srv.close()
            try:
                with socket.socket(family, socket.SOCK_STREAM) as c:
                    c.settimeout(5)
                    c.connect(address)  # type: ignore[arg-type]
                    c.sendall(f"note from {name} over {channel}".encode())
                sent.append(channel)
            except OSError as exc:
                sent.append(f"{channel}: {type(exc).__name__}")
    deadline = time.monotonic() + seconds
    while listening and time.monotonic() < deadline:
        for srv in list(listening):
            try:
                conn, _ = srv.accept()
            except (TimeoutError, BlockingIOError):
                continue
            with conn:
                conn.settimeout(5)
                heard.append(conn.recv(200).decode(errors="replace"))
            listening.remove(srv)
            srv.close()
    for srv in listening:
        srv.close()
    return {"name": name, "heard": heard, "sent": sent, "start": started, "end": time.time()}


def _listen_ports() -> list[int]:
    ports: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = open(table, encoding="ascii").read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            parts = row.split()
            if len(parts) > 3 and parts[3] == "0A":  # LISTEN
                ports.add(int(parts[1].rsplit(":", 1)[1], 16))
    return sorted(ports)


def _reach(target: str) -> str:
    host, _, port = target.rpartition(":")
    try:
        conn = socket.create_connection((host, int(port)), timeout=3)
    except OSError as exc:
        return type(exc).__name__
    with conn:
        try:
            conn.settimeout(3)
            conn.sendall(H2_PREFACE)
            head = conn.recv(9)
        except OSError:
            return "open"
        return "answers-http2" if len(head) == 9 and head[3] == 0x04 else "open"


def scan(targets: list[str]) -> dict:
    return {"reach": {t: _reach(t) for t in targets}, "listening": _listen_ports()}


def main(argv: list[str]) -> int:
    if argv[:1] == ["note"]:
        _answer(note(int(argv[1]), argv[2], float(argv[3])))
    elif argv[:1] == ["scan"]:
        _answer(scan(argv[1:]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
