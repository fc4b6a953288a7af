"""``ctb-replay shell``: poke at a task as at real routers, from a jump-host style prompt.

The core is :class:`DeviceShell`, a line-in, text-out state machine with no terminal in it, so it
is tested by feeding lines. :func:`run_shell` puts a terminal around it: readline editing, history
and completion when stdin is a TTY; a transcript (prompt, echoed line, answer) when lines are piped
in, which reads like a captured session.

On a device the terminal behaves like the device's own: ``?`` answers at once, without Enter, with
the vendor's context help, and the line comes back for more typing; Tab completes a keyword from
the vendor grammar (a unique prefix at once, the candidates on a second Tab). Both know the vendor
grammar only, never which commands the task recorded.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from ctbench.replay.observation import Outcome, devices_text
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
        self._told_empty: set[str] = set()

    @property
    def home_prompt(self) -> str:
        return f"ctbench {self.session.task_id}> "

    @property
    def prompt(self) -> str:
        return self.session.prompt(self.current) if self.current else self.home_prompt

    def banner(self) -> str:
        names = ", ".join(d.name for d in self.session.devices()) or "(none)"
        return (
            f"Replay of task {self.session.task_id}: devices answer from recorded output.\n"
            f"Devices: {names}\n"
            "Type 'connect DEVICE' to log in, 'quit' on a device to come back, 'exit' here to leave.\n"
        )

    def help_text(self) -> str:
        return (
            "connect DEVICE   log into a device (also: ssh, telnet)\n"
            "devices          list the devices of this task\n"
            "exit             leave the shell\n"
            "On a device, type its commands as on the real one ('?' lists what may follow, Tab\n"
            "completes a keyword); 'quit' returns here.\n"
        )

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
        obs = self.session.run(self.current, line)
        text = obs.text if not obs.text or obs.text.endswith("\n") else obs.text + "\n"
        if (
            obs.outcome is Outcome.DENIED
            and self._nothing_recorded(self.current)
            and self.current not in self._told_empty
        ):
            # The device's own answer stays what an agent gets; the person is told why, once.
            self._told_empty.add(self.current)
            text += (
                f"[ctbench: nothing was recorded on {self.current} in this task, so every valid command "
                "is refused with the device's permission text]\n"
            )
        return text

    def _nothing_recorded(self, name: str) -> bool:
        found = self.session.task.device(name)
        return found is not None and not found.recorded

    def _at_home(self, line: str) -> str:
        if not line:
            return ""
        word, _, rest = line.partition(" ")
        word = word.lower()
        if word in ("exit", "quit", "logout"):
            self.done = True
            return ""
        if word in CONNECT and line.endswith("?"):  # "connect ?", "connect CO?": the devices that fit
            typed = rest.strip()[:-1].strip().lower()
            names = [d.name for d in self.session.devices() if d.name.lower().startswith(typed)]
            return "".join(f"  {n}\n" for n in names) or "No device of this task starts with that.\n"
        if word in ("help", "?") or line.endswith("?"):
            return self.help_text()
        if word == "devices":
            return devices_text(self.session.devices()) + "\n"
        if word in CONNECT:
            target = rest.strip()
            if not target:
                return f"usage: {word} DEVICE\n"
            info = self.session.device(target)
            if info is None:
                host = self.session.task.host(target)
                if host is not None:
                    cli_names = ", ".join(d.name for d in self.session.devices()) or "(none)"
                    return (
                        f"{host[0]} is a {host[1] or 'host'} without a command line: there is nothing to "
                        f"log into. Devices with a CLI: {cli_names}.\n"
                    )
                return self.session.task.unknown_device_text(target)
            self.current = info.name
            role = f", {info.role}" if info.role else ""
            site = f", site {info.site}" if info.site else ""
            text = f"Connected to {info.name} ({info.vendor} {info.type}{role}{site}).\n"
            if self._nothing_recorded(info.name):
                text += (
                    f"Note: nothing was recorded on {info.name} in this task; every valid command will be "
                    "refused with the device's permission text.\n"
                )
            return text
        return (
            f"Not connected to a device: '{line[:40]}' needs one. "
            "Type 'connect DEVICE', 'devices' or 'help'.\n"
        )

    def complete(self, text: str, line: str) -> list[str]:
        """Completion candidates for the word ``text`` ending ``line`` (the line up to the cursor).

        On a device: the vendor's keywords (one completes, several are listed on a second Tab). At
        home: device names after ``connect``, else the shell's own words.
        """
        if self.current is not None:
            found = self.session.complete(self.current, line)
            # A unique keyword is completed with the blank after it, as the devices do (Python's
            # readline appends nothing itself); several are listed for a second Tab.
            return [found[0] + " "] if len(found) == 1 else found
        words = line.split()
        if len(words) >= 2 or (words and line.endswith(" ")):
            if words and words[0].lower() in CONNECT:
                return [d.name for d in self.session.devices() if d.name.lower().startswith(text.lower())]
            return []
        return [w for w in ("connect", "devices", "exit", "help") if w.startswith(text.lower())]


def history_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "ctbench" / "replay_history"


def run_shell(
    shell: DeviceShell,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    interactive: bool | None = None,
) -> int:
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


def help_rest(line: str) -> str | None:
    """The line to give back after a ``?`` answer (the device keeps what was typed), or None."""
    stripped = line.rstrip(" \t")
    return stripped[:-1] if stripped.endswith("?") else None


def _interactive(shell: DeviceShell, stdout: TextIO) -> int:  # pragma: no cover - run through a pty in tests
    hist = _setup_readline(shell)
    again: str | None = None
    try:
        while not shell.done:
            _prefill(again)
            try:
                line = input(shell.prompt)
            except EOFError:
                stdout.write("\n")
                break
            except KeyboardInterrupt:
                stdout.write("^C\n")
                again = None
                continue
            on_device = shell.current is not None
            stdout.write(shell.feed(line))
            stdout.flush()
            # after a '?' answer the line comes back, unless the answer moved the shell elsewhere
            again = help_rest(line) if (shell.current is not None) == on_device else None
    finally:
        _save_history(hist)
    return 0


def _prefill(text: str | None) -> None:  # pragma: no cover - needs a TTY
    """Put ``text`` on the next input line, as a device re-types the line after its help list."""
    try:
        import readline
    except ImportError:
        return
    if not text:
        readline.set_pre_input_hook(None)
        return

    def hook() -> None:
        readline.insert_text(text)
        readline.redisplay()

    readline.set_pre_input_hook(hook)


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

    options: list[str] = []

    def completer(text: str, state: int) -> str | None:
        if state == 0:
            options[:] = shell.complete(text, readline.get_line_buffer()[: readline.get_endidx()])
        return options[state] if state < len(options) else None

    readline.set_completer(completer)
    readline.set_completer_delims(" \t")  # keywords and interface names hold '-', '/', '.'
    readline.parse_and_bind("tab: complete")
    # '?' answers at once, as on the devices: insert it literally and accept the line; the line
    # comes back on the next prompt (help_rest). Ctrl-V ? still types a literal '?'.
    readline.parse_and_bind('"?": "\\C-v?\\n"')
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
