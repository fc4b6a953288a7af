"""The device end of an SSH login: keystrokes in, what the device's terminal prints out.

:class:`DeviceTerminal` is a pure state machine (bytes in, bytes out, no sockets), so the SSH server
(:mod:`ctbench.replay.ssh_server`) stays a thin layer and the behaviour real clients depend on is
tested by feeding bytes. What the clients need, measured with netmiko, scrapli and OpenSSH:

* every typed character echoed (with a pty); the prompt as the end-of-output mark;
* a bare Enter answered with the prompt alone, and nothing logged;
* input buffered until Enter, whatever the chunks (scrapli sends the command and its Enter in two
  writes; netmiko sends ``\\n``, terminals ``\\r``, some clients ``\\r\\n``);
* ``?`` answered at once, without Enter, with the vendor's context help, and the line typed again;
  Tab completes a keyword (a second Tab lists the candidates); Backspace, Ctrl-U, Ctrl-W, Ctrl-C
  edit the line; arrow keys and other escape sequences are swallowed.

With a pty every LF goes out as CRLF, as a terminal's ONLCR makes it (a recorded CRLF becomes
CR CR LF, so a recorder can undo the terminal and get the recorded bytes back); without one (``ssh HOST CMD``, ``ssh -T``) output is the recorded bytes, unchanged, and nothing is
echoed.
"""

from __future__ import annotations

import codecs
import secrets
from dataclasses import dataclass, field
from datetime import datetime

from ctbench.replay.login_banner import login_banner
from ctbench.replay.observation import Outcome
from ctbench.replay.session import Session
from ctbench.replay.ssh_modes import (
    CTRL_Z,
    VIEWS,
    SubView,
    View,
    ios_level_word,
    ios_privileged_only,
    sub_view,
)

LEAVE = frozenset({"quit", "exit", "logout"})
"""Words that end the login on every vendor's user view (VRP ``quit``, IOS ``exit``/``logout``)."""

EXEC_WORDS = frozenset({"show", "ping", "traceroute", "clear", "debug", "terminal", "dir", "more"})
"""IOS EXEC commands: typed in configuration mode without ``do`` they are invalid input."""

ENABLE_TRIES = 3
"""Wrong ``enable`` passwords IOS takes before ``% Bad secrets``."""

MAX_LINE = 8192
"""Characters kept in the input line; a client that never sends Enter cannot grow memory."""


def crlf(data: bytes) -> bytes:
    """``data`` as a pty with ONLCR sends it: each LF preceded by a CR (even one after a CR)."""
    return data.replace(b"\n", b"\r\n")


@dataclass
class DeviceTerminal:
    """One login on one device of a replay session, with or without a pseudo-terminal."""

    session: Session
    device: str
    pty: bool = True
    line: str = ""
    closed: bool = False
    _decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")("replace"), repr=False
    )
    _after_cr: bool = False
    _escape: str = ""
    _tabs: int = 0
    view: View | None = None
    """The configuration view the login is in (:mod:`.ssh_modes`), None in the login view."""
    sub: str | None = None
    """The view below it (``GigabitEthernet0/0/1``, ``if``, ``ospf-1`` ...), None in the view itself."""
    user_exec: bool = False
    """IOS: the login starts in user EXEC (``>``) rather than privileged EXEC (``#``)."""
    enable_secret: str | None = None
    """IOS: the password ``enable`` asks for (the login's own); None: ``enable`` asks for none."""
    privileged: bool = True
    _asking: bool = False
    _tries: int = 0

    def __post_init__(self) -> None:
        if self.user_exec and self._family == "cisco_ios":
            self.privileged = False

    @property
    def prompt(self) -> str:
        login = self.session.prompt(self.device)
        if self.view is not None:
            return self.view.prompt(login, self.sub)
        if not self.privileged and login.endswith("#"):
            return login[:-1] + ">"
        return login

    def greeting(self, now: datetime | None = None) -> bytes:
        """What the device prints when the shell starts: its login banner (:mod:`.login_banner`),
        then its prompt; nothing without a pty, where a script reads only the answers."""
        if not self.pty:
            return b""
        return self._out("\n" + login_banner(self.session, self.device, now=now) + self.prompt)

    def _out(self, text: str | bytes) -> bytes:
        data = text.encode("utf-8", "replace") if isinstance(text, str) else text
        return crlf(data) if self.pty else data

    # ------------------------------------------------------------------ input

    def feed(self, data: bytes) -> bytes:
        """Take bytes the client sent and return what the device prints in answer."""
        out = bytearray()
        for ch in self._decoder.decode(data):
            if self.closed:
                break
            out += self._char(ch)
        return bytes(out)

    def _char(self, ch: str) -> bytes:
        if self._escape:
            # ESC [ ... final byte (letters, '~'): arrows, Home/End, function keys. Swallowed.
            self._escape += ch
            if len(self._escape) > 2 and (ch.isalpha() or ch == "~") or len(self._escape) > 16:
                self._escape = ""
            elif len(self._escape) == 2 and ch not in "[O":
                self._escape = ""
            return b""
        if self._asking and ch not in "\r\n\x03":  # a password: kept, never echoed
            if ch >= " " and len(self.line) < MAX_LINE:
                self.line += ch
            return b""
        after_cr, self._after_cr = self._after_cr, False
        tab = ch == "\t"
        tabs, self._tabs = self._tabs, (self._tabs + 1 if tab else 0)
        if ch == "\r":
            self._after_cr = True
            return self._enter()
        if ch == "\n":
            return b"" if after_cr else self._enter()
        if tab:
            return self._complete(second=tabs >= 1) if self.pty else self._type(" ")
        if ch == "?" and self.pty:
            return self._help()
        if ch in "\x7f\x08":
            if not self.line:
                return b""
            self.line = self.line[:-1]
            return b"\x08 \x08" if self.pty else b""
        if ch == "\x15":  # Ctrl-U: erase the line
            n, self.line = len(self.line), ""
            return b"\x08 \x08" * n if self.pty else b""
        if ch == "\x17":  # Ctrl-W: erase the word before the cursor
            kept = self.line.rstrip(" ")
            kept = kept[: len(kept) - len(kept.split(" ")[-1])] if kept else ""
            n, self.line = len(self.line) - len(kept), kept
            return b"\x08 \x08" * n if self.pty else b""
        if ch == "\x03":  # Ctrl-C: drop the line (or the password being typed), new prompt
            self.line, self._asking = "", False
            return self._out("^C\n" + self.prompt) if self.pty else b""
        if ch == "\x1b":
            self._escape = ch
            return b""
        if ch == CTRL_Z and self.view is not None and self.pty:  # back to the login view
            self.line = ""
            return self._out("\n") + self._leave("^Z")
        if ch < " " or ch == "\x7f":
            return b""
        return self._type(ch)

    def _type(self, ch: str) -> bytes:
        if len(self.line) >= MAX_LINE:
            return b"\x07" if self.pty else b""
        self.line += ch
        return ch.encode("utf-8", "replace") if self.pty else b""

    # ------------------------------------------------------------------ actions

    def _enter(self) -> bytes:
        line, self.line = self.line, ""
        echo = self._out("\n") if self.pty else b""
        if self._asking:
            return echo + self._secret(line)
        text = line.strip()
        if not text:
            return echo + (self._out(self.prompt) if self.pty else b"")
        words = text.split()
        if self.view is not None:
            kind = self.view.leave_kind(words)
            if kind == "one" and self.sub is not None:
                return echo + self._up(text)
            if kind is not None:
                return echo + self._leave(text)
            below = sub_view(self.view.family, line)
            if below is not None:
                return echo + self._enter_sub(below, line)
            return echo + self._inside(line)
        if text.lower() in LEAVE:
            self.closed = True
            return echo
        if self._family == "cisco_ios" and self.pty:
            level = ios_level_word(text)
            if level is not None:
                return echo + self._level(level, text)
            caret = ios_privileged_only(line) if not self.privileged else None
            if caret is not None:  # hidden at this level: the device's invalid input
                return echo + self._invalid(line, caret)
        view = VIEWS.get(self._family)
        if view is not None and self.pty and view.enters(words):
            self.session.record(self.device, text, None, Outcome.SESSION, view.entered.encode())
            self.view = view
            return echo + self._out(view.entered + self.prompt)
        return echo + self.run(line)

    @property
    def _family(self) -> str:
        found = self.session.task.device(self.device)
        return found.info.os if found is not None else ""

    def _leave(self, typed: str) -> bytes:
        assert self.view is not None
        left = self.view.left
        self.session.record(self.device, typed, None, Outcome.SESSION, left.encode())
        self.view, self.sub = None, None
        return self._out(left + self.prompt)

    def _up(self, typed: str) -> bytes:
        """From a view below the configuration view back up to it (VRP ``quit``, IOS ``exit``)."""
        self.session.record(self.device, typed, None, Outcome.SESSION, b"")
        self.sub = None
        return self._out(self.prompt)

    def _inside(self, line: str) -> bytes:
        assert self.view is not None
        command = self.view.passthrough(line)
        return self.run(command) if command is not None else self._refuse(line)

    def _enter_sub(self, below: SubView, line: str) -> bytes:
        """Enter the view ``line`` asks for; an interface the device does not have gets its
        parameter error (the device has no such view to enter), a line that names no interface
        goes on as any line of the view does."""
        found = self.session.task.device(self.device)
        assert found is not None and self.view is not None
        suffix = below.suffix
        if below.kind == "interface":
            name = found.dialect.interface_name(below.token)
            if name is None:
                return self._inside(line)
            if found.inventory is not None and found.inventory.missing(f"x {below.token}") is not None:
                from ctbench.dialects import CliError

                typed = line[below.position :].split()[0]
                error = CliError("wrong_parameter", below.position, typed, index=1, slot="interface")
                said = found.dialect.render_error(error, line, self.prompt)
                self.session.record(self.device, line.strip(), None, Outcome.INVALID, said.encode())
                return self._out(said + self.prompt)
            suffix = suffix or name
        self.session.record(self.device, line.strip(), None, Outcome.SESSION, b"")
        self.sub = suffix
        return self._out(self.prompt)

    # ------------------------------------------------------------------ IOS privilege levels

    def _level(self, word: str, typed: str) -> bytes:
        """``enable`` (asking the login's password when there is one) or ``disable``; logged as
        session setup, never with the password."""
        self.session.record(self.device, typed, None, Outcome.SESSION, b"")
        if word == "disable":
            self.privileged = False
        elif not self.privileged and self.enable_secret is not None:
            self._asking, self._tries = True, 0
            return self._out("Password: ")
        else:
            self.privileged = True
        return self._out(self.prompt)

    def _secret(self, typed: str) -> bytes:
        assert self.enable_secret is not None
        if secrets.compare_digest(typed.encode(), self.enable_secret.encode()):
            self._asking, self.privileged = False, True
            return self._out(self.prompt)
        self._tries += 1
        if self._tries < ENABLE_TRIES:
            return self._out("Password: ")
        self._asking = False
        return self._out("% Bad secrets\n\n" + self.prompt)

    def _invalid(self, line: str, position: int) -> bytes:
        """IOS's invalid input, caret under ``position`` of the echoed line (logged as invalid)."""
        said = " " * (len(self.prompt) + position) + "^\n% Invalid input detected at '^' marker.\n"
        self.session.record(self.device, line.strip(), None, Outcome.INVALID, said.encode())
        return self._out(said + self.prompt)

    def _refuse(self, line: str) -> bytes:
        """A line inside a configuration view that runs nothing the replay can answer: IOS's invalid
        input for an EXEC command typed without ``do``, else the device's refusal (nothing changes)."""
        found = self.session.task.device(self.device)
        assert found is not None and self.view is not None
        text = line.strip()
        first = text.split()[0].lower()
        if self.view.family == "cisco_ios" and first in EXEC_WORDS:
            return self._invalid(line, len(line) - len(line.lstrip()))
        said = found.dialect.denied_text(text)
        self.session.record(self.device, text, None, Outcome.DENIED, said.encode())
        return self._out(said + self.prompt)

    def run(self, line: str) -> bytes:
        """Answer one command line: the device's output followed by its prompt (with a pty)."""
        obs = self.session.run(self.device, line)
        data = obs.data
        if data and not data.endswith(b"\n"):
            data += b"\n"
        if not self.pty:
            return data
        return self._out(data) + self._out(self.prompt)

    def _help(self) -> bytes:
        typed = self.line
        obs = self.session.run(self.device, typed + "?")
        data = obs.data
        if data and not data.endswith(b"\n"):
            data += b"\n"
        # The device echoes '?', prints the list, then the prompt and the line as typed so far.
        return self._out(b"?\n" + data) + self._out(self.prompt + typed)

    def _complete(self, *, second: bool) -> bytes:
        found = self.session.complete(self.device, self.line)
        word = self.line.split(" ")[-1] if self.line else ""
        if len(found) == 1:
            rest = found[0][len(word) :] if found[0].lower().startswith(word.lower()) else ""
            # The device retypes the keyword in full when the case differs; we complete the tail.
            self.line += rest + " "
            self._tabs = 0
            return (rest + " ").encode("utf-8", "replace")
        if not found:
            return b"\x07"
        if not second:
            return b"\x07"
        listing = "\n" + "  ".join(found) + "\n"
        return self._out(listing + self.prompt + self.line)


__all__ = ["DeviceTerminal", "crlf"]
