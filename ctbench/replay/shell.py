"""``ctb-replay shell``: poke at a task as at real routers, from a jump-host style prompt.

The core is :class:`DeviceShell`, a line-in, text-out state machine with no terminal in it, so it
is tested by feeding lines. :func:`run_shell` puts a terminal around it: readline editing, history
and device-name completion when stdin is a TTY; a transcript (prompt, echoed line, answer) when
lines are piped in, which reads like a captured session.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from ctbench.replay.observation import devices_text
from ctbench.replay.session import Session

LEAVE_DEVICE = {"quit", "exit", "logout"}
CONNECT = {"connect", "ssh", "telnet", "login"}
HISTORY_LEN = 2000


class DeviceShell:
    """Jump-host prompt: ``connect DEVICE``, ``devices``, ``exit``; on a device, lines go to it."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.current: str | None = None
        self.done = False

    @property
    def home_prompt(self) -> str:
        return f"ctbench {self.session.task_id}> "

    @property
    def prompt(self) -> str:
        return self.session.prompt(self.current) if self.current else self.home_prompt

    def banner(self) -> str:
        names = ", ".join(d.name for d in self.session.devices()) or "(none)"
        return (f"Replay of task {self.session.task_id}: devices answer from recorded output.\n"
                f"Devices: {names}\n"
                "Type 'connect DEVICE' to log in, 'quit' on a device to come back, 'exit' here to leave.\n")

    def help_text(self) -> str:
        return ("connect DEVICE   log into a device (also: ssh, telnet)\n"
                "devices          list the devices of this task\n"
                "exit             leave the shell\n"
                "On a device, type its commands as on the real one; 'quit' returns here.\n")

    def feed(self, line: str) -> str:
        """Handle one input line and return what the terminal shows before the next prompt."""
        if self.done:
            return ""
        if self.current is not None:
            return self._on_device(line)
        return self._at_home(line.strip())

    def _on_device(self, line: str) -> str:
        if not line.strip():
            return ""
        if line.strip().lower() in LEAVE_DEVICE:
            name, self.current = self.current, None
            return f"Connection to {name} closed.\n"
        assert self.current is not None
        text = self.session.run(self.current, line).text
        return text if not text or text.endswith("\n") else text + "\n"

    def _at_home(self, line: str) -> str:
        if not line:
            return ""
        word, _, rest = line.partition(" ")
        word = word.lower()
        if word in ("exit", "quit", "logout"):
            self.done = True
            return ""
        if word in ("help", "?"):
            return self.help_text()
        if word == "devices":
            return devices_text(self.session.devices()) + "\n"
        if word in CONNECT:
            target = rest.strip()
            if not target:
                return f"usage: {word} DEVICE\n"
            info = self.session.device(target)
            if info is None:
                return self.session.task.unknown_device_text(target)
            self.current = info.name
            role = f", {info.role}" if info.role else ""
            site = f", site {info.site}" if info.site else ""
            return f"Connected to {info.name} ({info.vendor} {info.type}{role}{site}).\n"
        return (f"Not connected to a device: '{line[:40]}' needs one. "
                "Type 'connect DEVICE', 'devices' or 'help'.\n")

    def complete(self, text: str, line: str) -> list[str]:
        """Completion candidates for readline: device names after ``connect``, words at home."""
        if self.current is not None:
            return []
        words = line.split()
        if len(words) >= 2 or (words and line.endswith(" ")):
            if words and words[0].lower() in CONNECT:
                return [d.name for d in self.session.devices() if d.name.lower().startswith(text.lower())]
            return []
        return [w for w in ("connect", "devices", "exit", "help") if w.startswith(text.lower())]


def history_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "ctbench" / "replay_history"


def run_shell(shell: DeviceShell, *, stdin: TextIO | None = None, stdout: TextIO | None = None,
              interactive: bool | None = None) -> int:
    """Drive ``shell`` from a terminal (readline) or from piped lines (transcript)."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if interactive is None:
        interactive = stdin.isatty() and stdout.isatty()
    stdout.write(shell.banner())
    stdout.flush()
    if interactive:
        return _interactive(shell, stdout)
    return _transcript(shell, stdin, stdout)


def _transcript(shell: DeviceShell, lines: Iterable[str], stdout: TextIO) -> int:
    for raw in lines:
        line = raw.rstrip("\r\n")
        stdout.write(f"{shell.prompt}{line}\n")
        stdout.write(shell.feed(line))
        stdout.flush()
        if shell.done:
            break
    return 0


def _interactive(shell: DeviceShell, stdout: TextIO) -> int:  # pragma: no cover - needs a TTY
    hist = _setup_readline(shell)
    try:
        while not shell.done:
            try:
                line = input(shell.prompt)
            except EOFError:
                stdout.write("\n")
                break
            except KeyboardInterrupt:
                stdout.write("^C\n")
                continue
            stdout.write(shell.feed(line))
            stdout.flush()
    finally:
        _save_history(hist)
    return 0


def _setup_readline(shell: DeviceShell) -> Path | None:  # pragma: no cover - needs a TTY
    try:
        import readline
    except ImportError:
        return None
    hist = history_file()
    try:
        readline.read_history_file(hist)
    except OSError:
        pass
    readline.set_history_length(HISTORY_LEN)

    def completer(text: str, state: int) -> str | None:
        options = shell.complete(text, readline.get_line_buffer())
        return options[state] if state < len(options) else None

    readline.set_completer(completer)
    readline.parse_and_bind("tab: complete")
    return hist


def _save_history(hist: Path | None) -> None:  # pragma: no cover - needs a TTY
    if hist is None:
        return
    try:
        import readline

        hist.parent.mkdir(parents=True, exist_ok=True)
        readline.write_history_file(hist)
    except (ImportError, OSError):
        pass  # history is a convenience; losing it must not turn a clean exit into an error
