"""A device console over a replay session: what an agent sees, shown to a person.

Authors use it to try their task from the agent's side; blind reviewers use it to solve a task. The
widget knows nothing of tasks or files: it talks to any *session* object with

- ``devices() -> Sequence[...]``: the devices that may be queried (objects with a ``name`` attribute,
  such as :class:`ctbench.replay.observation.DeviceInfo`, or plain strings);
- ``run(device, command) -> observation``: the answer, an object with ``text`` (or ``data`` bytes)
  and optionally ``outcome`` (``recorded``/``denied``/``invalid``/``unknown-device``);
- optionally ``prompt(device) -> str``: the device's own prompt (``<CORE_SW_01>``, ``GW_01#``);
- optionally ``complete(device, line) -> list[str]``: the keywords the last word of ``line`` may be
  completed to (Tab), from the vendor grammar.

As on the devices, ``?`` answers at once (the line is sent with the ``?``, shown with the answer, and
stays in the input for more typing), and Tab completes a keyword: a unique one with its blank, the
common part of several, and on a second Tab the candidates are listed.

:class:`ctbench.replay.session.Session` (``ReplayEngine(task_set).open_session(task_id)``) is one.
Usage::

    console = ReplayConsole(session)          # or ReplayConsole() and later console.set_session(s)
    ...
    def on_replay_console_command_ran(self, event: ReplayConsole.CommandRan) -> None:
        log(event.device, event.command, event.observation)

Commands run in a thread worker, so a remote session (HTTP) never freezes the screen; the output is
printed verbatim (no markup, control characters made visible) under an echo of the prompt and the
command, exactly as the agent reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Label, RichLog, Select


@runtime_checkable
class ReplaySession(Protocol):
    """The two calls the console needs from a replay session."""

    def devices(self) -> Sequence[Any]: ...

    def run(self, device: str, command: str) -> Any: ...


def device_name(device: Any) -> str:
    """A device entry from ``session.devices()`` as its name (objects with ``.name``, or strings)."""
    return str(getattr(device, "name", device))


def observation_text(observation: Any) -> str:
    """The text of an observation: ``.text``, else ``.data`` decoded, else ``str()``."""
    text = getattr(observation, "text", None)
    if isinstance(text, str):
        return text
    data = getattr(observation, "data", None)
    if isinstance(data, bytes | bytearray):
        return bytes(data).decode("utf-8", "replace")
    return str(observation)


def visible(text: str) -> str:
    """Device output made safe for the screen: CR dropped before LF, other control characters shown."""
    text = text.replace("\r\n", "\n")
    out = []
    for ch in text:
        if ch in "\n\t" or ch.isprintable():
            out.append(ch)
        elif ch == "\r":
            out.append("␍")
        else:
            out.append(f"\\x{ord(ch):02x}")
    return "".join(out)


class CommandInput(Input):
    """The command line: Tab completes and ``?`` asks for help instead of moving focus or typing."""

    @dataclass
    class Complete(Message):
        """Tab was pressed."""

    @dataclass
    class Help(Message):
        """``?`` was typed (the line so far is in the input)."""

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "tab":
            event.stop()
            event.prevent_default()
            self.post_message(self.Complete())
            return
        if event.character == "?":
            event.stop()
            event.prevent_default()
            self.post_message(self.Help())
            return
        await super()._on_key(event)


def completion_columns(names: Sequence[str], width: int = 78) -> str:
    """Candidates side by side in equal columns, as a terminal lists them on a second Tab."""
    col = max(len(n) for n in names) + 2
    per_row = max(1, width // col)
    rows = [names[i : i + per_row] for i in range(0, len(names), per_row)]
    return "\n".join("".join(n.ljust(col) for n in row).rstrip() for row in rows)


@dataclass(frozen=True)
class _Answer:
    device: str
    command: str
    prompt: str
    observation: Any
    error: str | None = None


class ReplayConsole(Vertical):
    """Pick a device, type commands at its prompt, read the replayed answers."""

    DEFAULT_CSS = """
    ReplayConsole {
        height: 1fr;
        border: round $primary-background;
        padding: 0 1;
    }
    ReplayConsole #rc-bar { height: auto; }
    ReplayConsole #rc-bar Label { padding: 1 1 0 0; }
    ReplayConsole #rc-device { width: 40; }
    ReplayConsole #rc-status { padding: 1 0 0 2; color: $text-muted; }
    ReplayConsole #rc-output { height: 1fr; background: $surface; }
    ReplayConsole #rc-line { height: 3; }
    ReplayConsole #rc-prompt { padding: 1 0 0 0; color: $accent; }
    ReplayConsole #rc-input { width: 1fr; }
    """

    BINDINGS = [
        Binding("up", "history(-1)", "Previous command", show=False, id="replay.history_back"),
        Binding("down", "history(1)", "Next command", show=False, id="replay.history_forward"),
        Binding(
            "ctrl+o",
            "next_device",
            "Next device",
            id="replay.next_device",
            tooltip="Switch the console to the next device of the task",
        ),
        Binding("ctrl+l", "clear", "Clear", id="replay.clear", tooltip="Clear the console output"),
    ]

    device: reactive[str | None] = reactive(None)
    """The device commands go to; changing it updates the prompt."""

    @dataclass
    class CommandRan(Message):
        """A command was answered (or failed before reaching a device: ``error`` is set)."""

        console: ReplayConsole
        device: str
        command: str
        observation: Any
        error: str | None = None

        @property
        def control(self) -> ReplayConsole:
            return self.console

    def __init__(
        self,
        session: ReplaySession | None = None,
        *,
        note: str = "",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._session: ReplaySession | None = session
        self._note = note
        self._history: list[str] = []
        self._history_pos = 0
        self._names: list[str] = []
        self._last_tab: tuple[str, int] | None = None

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Horizontal(id="rc-bar"):
            yield Label("Device")
            yield Select[str]([], id="rc-device", prompt="no session", allow_blank=True)
            yield Label("", id="rc-status")
        yield RichLog(id="rc-output", markup=False, highlight=False, wrap=False, auto_scroll=True)
        with Horizontal(id="rc-line"):
            yield Label("", id="rc-prompt")
            yield CommandInput(id="rc-input", placeholder="type a command as on the device, Enter to run")

    def on_mount(self) -> None:
        self.set_session(self._session, note=self._note)

    # ------------------------------------------------------------------ public API

    @property
    def session(self) -> ReplaySession | None:
        return self._session

    def set_session(self, session: ReplaySession | None, *, note: str = "") -> None:
        """Attach a session (or detach with None); ``note`` is shown in the output, e.g. why there is none."""
        self._session = session
        names: list[str] = []
        if session is not None:
            try:
                names = [device_name(d) for d in session.devices()]
            except Exception as exc:  # a broken session must not take the screen down
                note = note or f"cannot list devices: {exc}"
                self._session = None
        self._names = names
        select = self.query_one("#rc-device", Select)
        select.set_options([(n, n) for n in names])
        if names:
            keep = self.device if self.device in names else names[0]
            select.value = keep
            self.device = keep
        else:
            self.device = None
        self.query_one("#rc-status", Label).update(
            f"{len(names)} device(s)" if self._session is not None else "no replay session"
        )
        if note:
            self.query_one("#rc-output", RichLog).write(Text(note, style="italic"))

    def run_command(self, command: str) -> None:
        """Send ``command`` to the current device, as if typed and Enter pressed."""
        command = command.strip("\r\n")
        if self._session is None or self.device is None:
            self.query_one("#rc-output", RichLog).write(
                Text("no replay session: nothing to run on", style="italic")
            )
            return
        if command.strip():
            self._history.append(command)
        self._history_pos = len(self._history)
        self._run(self._session, self.device, command, self.prompt_for(self.device))

    def prompt_for(self, device: str) -> str:
        """The device's prompt as the session knows it, else ``DEVICE>``."""
        prompt = getattr(self._session, "prompt", None)
        if callable(prompt):
            try:
                return str(prompt(device))
            except Exception:
                pass
        return f"{device}>"

    # ------------------------------------------------------------------ behaviour

    def watch_device(self, device: str | None) -> None:
        self.query_one("#rc-prompt", Label).update(self.prompt_for(device) if device else "")

    @on(Select.Changed, "#rc-device")
    def _device_chosen(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str):
            self.device = event.value
            self.query_one("#rc-input", Input).focus()

    @on(Input.Submitted, "#rc-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.input.value = ""
        self.run_command(event.value)

    @on(CommandInput.Help)
    def _help_asked(self, event: CommandInput.Help) -> None:
        """Send the line with its ``?`` (the session logs it as help) and keep the line for more typing."""
        event.stop()
        field = self.query_one("#rc-input", CommandInput)
        line = field.value[: field.cursor_position]
        if self._session is None or self.device is None:
            field.insert_text_at_cursor("?")
            return
        field.value = line
        field.cursor_position = len(line)
        self._run(self._session, self.device, line + "?", self.prompt_for(self.device))

    @on(CommandInput.Complete)
    def _complete(self, event: CommandInput.Complete) -> None:
        event.stop()
        field = self.query_one("#rc-input", CommandInput)
        text, tail = field.value[: field.cursor_position], field.value[field.cursor_position :]
        complete = getattr(self._session, "complete", None)
        if self.device is None or not callable(complete):
            return
        try:
            found = [str(c) for c in complete(self.device, text)]
        except Exception:  # completion is a convenience; a session that cannot do it just does nothing
            return
        state = (field.value, field.cursor_position)
        second = self._last_tab == state
        self._last_tab = state
        if not found:
            return
        start = max(text.rfind(" "), text.rfind("\t")) + 1
        typed = text[start:]
        if len(found) == 1:
            done = text[:start] + found[0] + " "
        else:
            common = found[0]
            for name in found[1:]:
                while not name.lower().startswith(common.lower()):
                    common = common[:-1]
            if len(common) > len(typed):
                done = text[:start] + common
            else:
                if second:
                    log = self.query_one("#rc-output", RichLog)
                    log.write(Text.assemble((self.prompt_for(self.device), "bold"), field.value))
                    log.write(Text(completion_columns(found)))
                return
        field.value = done + tail
        field.cursor_position = len(done)
        self._last_tab = None  # progress made: the next Tab starts afresh

    @work(thread=True, group="replay-console", exit_on_error=False)
    def _run(self, session: ReplaySession, device: str, command: str, prompt: str) -> None:
        try:
            obs = session.run(device, command)
            answer = _Answer(device, command, prompt, obs)
        except Exception as exc:  # transport or session errors are shown, not raised into the app
            answer = _Answer(device, command, prompt, None, error=str(exc) or type(exc).__name__)
        self.app.call_from_thread(self._show, answer)

    def _show(self, answer: _Answer) -> None:
        log = self.query_one("#rc-output", RichLog)
        log.write(Text.assemble((answer.prompt, "bold"), answer.command))
        if answer.error is not None:
            log.write(Text(f"(replay error: {answer.error})", style="italic"))
        else:
            text = visible(observation_text(answer.observation)).rstrip("\n")
            if text:
                log.write(Text(text))
            outcome = getattr(answer.observation, "outcome", None)
            if outcome is not None and str(getattr(outcome, "value", outcome)) not in ("recorded", "help"):
                log.write(Text(f"[{getattr(outcome, 'value', outcome)}]", style="dim italic"))
        self.post_message(
            self.CommandRan(self, answer.device, answer.command, answer.observation, answer.error)
        )

    def action_history(self, step: int) -> None:
        if not self._history:
            return
        self._history_pos = max(0, min(len(self._history), self._history_pos + step))
        field = self.query_one("#rc-input", Input)
        field.value = self._history[self._history_pos] if self._history_pos < len(self._history) else ""
        field.cursor_position = len(field.value)

    def action_next_device(self) -> None:
        names = self._names
        if not names:
            return
        idx = names.index(self.device) + 1 if self.device in names else 0
        self.query_one("#rc-device", Select).value = names[idx % len(names)]

    def action_clear(self) -> None:
        self.query_one("#rc-output", RichLog).clear()
