"""A headless Chromium driven through the Chrome DevTools protocol over a pipe (this module holds no test).

``--remote-debugging-pipe`` makes Chromium read protocol messages from file descriptor 3 and write its
answers to descriptor 4, NUL-terminated JSON: no debugging port, no WebSocket client, no dependency
beyond the browser itself (Debian's ``chromium`` package). The browser gets a fresh profile and every
switch that stops it from calling home; :attr:`Browser.requests` records each URL a page asked for, so
a test can show the page needed nothing from outside.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--remote-debugging-pipe",
)


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    """One Chromium process and one page; use as a context manager."""

    def __init__(self, executable: str, profile: Path, *, timeout: float = 30.0) -> None:
        self.timeout = timeout
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        # move the child's ends above the descriptors they will be copied onto, so dup2 cannot clobber them
        child_in = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(res_w, fcntl.F_DUPFD, 10)
        os.close(cmd_r)
        os.close(res_w)

        def wire() -> None:
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        self.proc = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=wire,
            pass_fds=(3, 4),
        )
        os.close(child_in)
        os.close(child_out)
        self._out = os.fdopen(cmd_w, "wb", buffering=0)
        self._in = os.fdopen(res_r, "rb", buffering=0)
        self._messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self._next = 0
        self.events: list[dict[str, Any]] = []
        self.requests: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.session = self._attach()

    # ------------------------------------------------------------------ protocol

    def _read(self) -> None:
        buf = b""
        while True:
            chunk = self._in.read(65536)
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                self._messages.put(json.loads(raw))

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None) -> Any:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self._out.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                reply = self._messages.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise BrowserError(f"no answer to {method} within {self.timeout}s") from None
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)
            if reply.get("method") == "Network.requestWillBeSent":
                self.requests.append(reply["params"]["request"]["url"])

    def _attach(self) -> str:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session: str = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Network.enable"):
            self.send(domain, session=session)
        return session

    # ------------------------------------------------------------------ page

    def open(self, url: str) -> None:
        self.send("Page.navigate", {"url": url}, session=self.session)
        self.wait_for("document.readyState === 'complete'", "the page to load")

    def eval(self, expression: str) -> Any:
        res = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=self.session,
        )
        if "exceptionDetails" in res:
            raise BrowserError(f"{expression[:80]}: {res['exceptionDetails'].get('text')}")
        return res["result"].get("value")

    def wait_for(self, condition: str, what: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not self.eval(f"!!({condition})"):
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {what}")
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) in the middle of the element."""
        box = self.eval(
            f"(function () {{ var e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
            " e.scrollIntoView({block: 'center'}); var r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2, r.width * r.height]; })()"
        )
        if not box or not box[2]:
            raise BrowserError(f"nothing visible to click at {selector}")
        x, y = box[0], box[1]
        self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y}, session=self.session)
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
                session=self.session,
            )

    def type(self, selector: str, text: str) -> None:
        self.click(selector)
        self.send("Input.insertText", {"text": text}, session=self.session)

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fh in (self._out, self._in):
            try:
                fh.close()
            except OSError:
                pass
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
