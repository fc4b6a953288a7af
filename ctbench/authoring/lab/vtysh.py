"""Typing into a live vtysh on a pseudo-terminal, as a person does: ``?`` help, abbreviations, errors.

``vtysh -c`` runs one command but cannot show what ``?`` prints (readline answers it as the key is
pressed), so the FRR dialect's generator (help texts) and its tests (the replay against the live
router, line by line) drive an interactive vtysh here. The terminal is ``dumb`` and the pager off, so
the output is what vtysh writes, with the echo of what was typed.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import termios
import time
from collections.abc import Sequence

from ctbench.errors import CtbError

_PROMPT = re.compile(rb"\r?\n?[A-Za-z0-9_.-]+# ")


class VtyshSession:
    """One interactive vtysh; ``ask("show ?")`` returns what it printed before the next prompt."""

    def __init__(self, argv: Sequence[str], timeout: float = 10.0) -> None:
        self.timeout = timeout
        env = {
            "TERM": "dumb",
            "VTYSH_PAGER": "cat",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": "/root",
        }
        pid, fd = pty.fork()
        if pid == 0:  # the child: become vtysh
            try:
                os.execvpe(argv[0], list(argv), env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        # A wide terminal: readline scrolls a line longer than the width sideways (``<t community``).
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 4000, 0, 0))
        banner = self._until_prompt()
        match = re.search(rb"([A-Za-z0-9_.-]+)# $", banner)
        if match is None:
            self.close()
            raise CtbError(f"vtysh did not show a prompt: {banner[-200:]!r}")
        self.prompt = match.group(1).decode() + "# "

    def _read(self, wait: float) -> bytes:
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            return b""
        try:
            return os.read(self.fd, 65536)
        except OSError:
            return b""

    def _clear_line(self) -> None:
        """^U, and wait for readline's answer to it before anything else is typed.

        Readline answers ^U at once and in one write: the bell on an empty line; on a line left by
        a ``?`` backspaces over it, or a redrawn prompt (``\\rR1#    \\rR1# ``). Typing on before that
        answer came could make the next read end at the redrawn prompt and take it for the next
        command's (empty) answer, shifting every later answer by one: a race a loaded machine loses
        (typing the 22 fixture inputs that way differed in 4 of 8 runs at load 8, waiting as here in
        none), the cause of the live re-check's differences in a loaded CI run. So this
        waits for the answer: to its known last byte (bell, backspace, prompt), else to a short quiet
        spell after its first byte (the generator asks some 40 000 questions: no fixed sleep here).
        """
        os.write(self.fd, b"\x15")
        out = b""
        deadline = time.monotonic() + self.timeout
        while not out and time.monotonic() < deadline:
            out += self._read(0.2)
        if not out:
            raise CtbError(f"vtysh: no answer to ^U within {self.timeout:.0f} s")
        while not out.endswith((b"\x07", b"\x08", self.prompt.encode())):
            chunk = self._read(0.15)
            if not chunk:
                break
            out += chunk

    def _until_prompt(self, after: bytes = b"", *, answered: bool = False) -> bytes:
        """Read until the output ends with a prompt (and ``after``, what readline redraws).

        ``answered``: the prompt counts only after a line break, i.e. after vtysh answered the
        line typed (a prompt before it would be a redraw, not the end of the answer).
        """
        out = b""
        deadline = time.monotonic() + self.timeout
        end = self.prompt.encode() + after if hasattr(self, "prompt") else None
        while time.monotonic() < deadline:
            out += self._read(0.2)
            if end is not None and out.endswith(end) and (not answered or b"\n" in out[: -len(end)]):
                return out
            if end is None and re.search(rb"[A-Za-z0-9_.-]+# $", out):
                return out
        raise CtbError(f"vtysh: no prompt within {self.timeout:.0f} s; got {out[-200:]!r}")

    def ask(self, text: str) -> str:
        """Type ``text`` (a command with Enter, or a line ending in ``?``) and return the answer.

        The answer is what vtysh printed after echoing the line, up to (not including) the prompt it
        printed next, with CRLF turned into LF: the same text the replay prints for that input.
        """
        help_query = text.endswith("?")
        self._clear_line()
        os.write(self.fd, text.encode() if help_query else text.encode() + b"\r")
        line = text[:-1] if help_query else text
        raw = self._until_prompt(line.encode() if help_query else b"", answered=True)
        body = raw.replace(b"\r\n", b"\n").decode(errors="replace")
        if help_query:
            body = body[: len(body) - len(self.prompt) - len(line)]
        else:
            body = body[: len(body) - len(self.prompt)]
        echo = body.find(line + "\n") if line else -1
        if echo >= 0:
            body = body[echo + len(line) + 1 :]
        return body

    def close(self) -> None:
        try:
            os.write(self.fd, b"\x15exit\r")
        except OSError:
            pass
        time.sleep(0.1)
        try:
            os.close(self.fd)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass

    def __enter__(self) -> VtyshSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
