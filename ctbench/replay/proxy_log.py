"""The stdio proxy's own account of its life, kept for the task log of the CLI that started it.

An agent CLI that starts ``ctb-replay mcp --connect`` as its MCP server keeps the server's standard
error where it likes, or nowhere (Codex). When the CLI then says the server failed, the runner cannot
tell a proxy that never started from one that could not reach the runner, got no request, or was
killed. With ``--log FILE`` the proxy appends a timestamped line at each step of its life: started
(how long after its exec, which shows a starved machine), the session checked, each request method
it read, and how it ended. A proxy killed by a signal it cannot catch leaves no end line, which is
itself the answer. Lines hold method names and ids only: no arguments, no token.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from ctbench.errors import CtbError

LOGGER = "ctbench.replay.proxy"
"""The logger the proxy's steps go to; it has no handler unless ``--log`` gives it one."""
CAUGHT_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def proxy_logger() -> logging.Logger:
    return logging.getLogger(LOGGER)


def process_age_s() -> float | None:
    """Seconds since this process was created (fork), from the kernel's clock; None off Linux."""
    try:
        stat = Path("/proc/self/stat").read_text()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        started = int(stat.rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    return max(0.0, uptime - started)


@contextmanager
def logged_life(path: Path | None, what: str) -> Iterator[logging.Logger]:
    """Log the proxy's start, its end (normal, refused, or by signal) to ``path``; without a path,
    a logger that writes nothing."""
    log = proxy_logger()
    if path is None:
        yield log
        return
    try:
        handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    except OSError as exc:  # the log is for reading afterwards: without it the proxy still serves
        log.warning("--log %s: cannot open (%s); serving without a log", path, exc.strerror or exc)
        yield log
        return
    handler.setFormatter(logging.Formatter("%(asctime)s.%(msecs)03d %(message)s", "%H:%M:%S"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    previous = {sig: signal.getsignal(sig) for sig in CAUGHT_SIGNALS}

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        log.info("ended by signal %s", signal.Signals(signum).name)
        handler.flush()
        os._exit(128 + signum)

    for sig in CAUGHT_SIGNALS:
        signal.signal(sig, on_signal)
    age = process_age_s()
    log.info(
        "pid %d (parent %d) started%s: %s, Python %s",
        os.getpid(),
        os.getppid(),
        f" {age:.2f} s after its fork" if age is not None else "",
        what,
        sys.version.split()[0],
    )
    try:
        yield log
    except CtbError as exc:
        log.info("refused (exit %d): %s", exc.exit_code, exc)
        raise
    except BaseException as exc:
        log.info("failed: %s: %s", type(exc).__name__, exc)
        raise
    else:
        log.info("ended: its client closed standard input")
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        log.removeHandler(handler)
        handler.close()


__all__ = ["LOGGER", "logged_life", "process_age_s", "proxy_logger"]
