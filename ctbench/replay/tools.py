"""The three replay tools an agent calls - ``list_devices``, ``run_command``, ``submit_answer`` - once.

Every tool-calling transport (the MCP server, the OpenAI agent's own loop) exposes the same three
tools over one session. Their behaviour lives here, free of any transport library, so the answers
cannot drift apart: an invalid command comes back with the echoed ``<prompt><command>`` line its
caret points into, an unknown device or a malformed call is an error worded for the model to fix,
and a valid command that was not recorded is an ordinary result with the vendor's permission text.
A transport only turns a :class:`ToolResult` into its own message type.

Nothing here imports ``mcp``: the OpenAI agent must not pay for (or depend on) the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ctbench.errors import CtbError
from ctbench.replay.loaded import InputError
from ctbench.replay.observation import DeviceInfo, Observation, Outcome, Submission, devices_text
from ctbench.yamlio import atomic_write_text

TOOL_NAMES = ("list_devices", "run_command", "submit_answer")


def _schema(**props: str) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(props),
        "properties": {name: {"type": "string", "description": desc} for name, desc in props.items()},
    }


INPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "list_devices": _schema(),
    "run_command": _schema(
        device="Device name, as list_devices gives it.",
        command="One CLI command as typed on the device, e.g. 'display interface brief' "
        "or 'show ip route | include 10.1.'.",
    ),
    "submit_answer": _schema(answer="The final answer, in the format the task statement asks for."),
}
"""JSON Schema of each tool's arguments (all text); :meth:`ReplayTools.call` enforces them."""


class ToolSession(Protocol):
    """What the tools need of a session: a local :class:`~ctbench.replay.session.Session`, or
    :class:`~ctbench.replay.client.RemoteSession` forwarding to a runner's HTTP server. One protocol,
    so the ``--connect`` proxy answers with the very code that answers in-process."""

    def devices(self) -> list[DeviceInfo]: ...

    def run(self, device: str, command: str) -> Observation: ...

    def submit(self, answer_text: str) -> Submission: ...


@dataclass(frozen=True)
class ToolResult:
    """What a tool call gives back, before a transport wraps it.

    ``is_error`` marks a mistake the model can correct (bad arguments, unknown device, a command the
    device does not accept); ``meta`` carries structured facts for clients that read them (the
    outcome, canonical command and call number of ``run_command``); ``data`` is the whole result as
    JSON-able data when it has that form (the device list), for a transport that hands the model
    JSON rather than the text table.
    """

    text: str
    is_error: bool = False
    meta: dict[str, Any] | None = None
    data: Any = None


class ReplayTools:
    """The three tools, bound to one session; transport-free so the logic is plain to test.

    Input problems (:class:`~ctbench.replay.loaded.InputError`) come back as error results. Other
    replay errors - the session closed, its call limit reached, the answer file unwritable - are
    raised: a transport that can only talk to the model turns them into error text (MCP), while an
    agent loop that owns the attempt can end it instead.
    """

    def __init__(
        self,
        session: ToolSession,
        *,
        answer_file: Path | None = None,
        on_submit: Callable[[str], None] | None = None,
    ) -> None:
        self.session = session
        self.answer_file = answer_file
        self.on_submit = on_submit
        self._handlers: dict[str, Callable[[Mapping[str, Any]], ToolResult]] = {
            "list_devices": self.list_devices,
            "run_command": self.run_command,
            "submit_answer": self.submit_answer,
        }

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolResult:
        """Run tool ``name``; unknown tools and argument problems are error results, never exceptions."""
        handler = self._handlers.get(name)
        if handler is None:
            return ToolResult(
                f"Unknown tool {name[:64]!r}; the tools are {', '.join(self._handlers)}.", is_error=True
            )
        args = arguments or {}
        problem = check_arguments(name, args)
        if problem:
            return ToolResult(problem, is_error=True)
        try:
            return handler(args)
        except InputError as exc:
            return ToolResult(str(exc), is_error=True)

    def list_devices(self, args: Mapping[str, Any]) -> ToolResult:
        devices = self.session.devices()
        return ToolResult(devices_text(devices), data=[d.model_dump() for d in devices])

    def run_command(self, args: Mapping[str, Any]) -> ToolResult:
        obs = self.session.run(args["device"], args["command"])
        meta = {
            "outcome": obs.outcome.value,
            "canonical": obs.canonical,
            "seq": obs.seq,
            "truncated": obs.truncated,
        }
        fixable = obs.outcome in (Outcome.INVALID, Outcome.UNKNOWN_DEVICE)
        return ToolResult(obs.with_echo() or "(the command printed nothing)", is_error=fixable, meta=meta)

    def submit_answer(self, args: Mapping[str, Any]) -> ToolResult:
        answer: str = args["answer"]
        sub = self.session.submit(answer)
        if self.answer_file is not None:
            try:
                atomic_write_text(
                    self.answer_file, answer if not answer or answer.endswith("\n") else answer + "\n"
                )
            except OSError as exc:
                raise CtbError(
                    f"the answer was recorded but could not be saved to {self.answer_file}: "
                    f"{exc.strerror or exc}"
                ) from None
        if self.on_submit is not None:
            self.on_submit(answer)
        again = " (replacing the previous one)" if sub.count > 1 else ""
        return ToolResult(f"Answer recorded{again}: {sub.lines} line(s).")


def check_arguments(name: str, args: Mapping[str, Any]) -> str | None:
    """The argument problem of a call to tool ``name``, worded for a model to fix, or None."""
    schema = INPUT_SCHEMAS[name]
    props: dict[str, Any] = schema["properties"]
    missing = [p for p in schema["required"] if p not in args]
    extra = [a for a in args if a not in props]
    wrong = [p for p in props if p in args and not isinstance(args[p], str)]
    if not (missing or extra or wrong):
        return None
    parts = []
    if missing:
        parts.append(f"missing {', '.join(missing)}")
    if extra:
        parts.append(f"unexpected {', '.join(a[:40] for a in extra[:5])}")
    if wrong:
        parts.append(f"{', '.join(wrong)} must be text")
    usage = ", ".join(props) or "no arguments"
    return f"{name}: {'; '.join(parts)} (takes {usage})."


__all__ = ["INPUT_SCHEMAS", "TOOL_NAMES", "ReplayTools", "ToolResult", "ToolSession", "check_arguments"]
