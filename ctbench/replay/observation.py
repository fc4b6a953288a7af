"""What a replay call gives back, and what an agent is told about the devices it may query.

These are the boundary types every transport serialises: the Python API hands out the models
themselves, the HTTP API and the MCP server dump them to JSON or text. ``Observation.data`` keeps the
exact bytes (recordings are byte-exact captures and a CRLF or a stray Latin-1 byte is evidence too);
``text`` is the same output decoded for transports that can only carry text.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Outcome(StrEnum):
    """How a call was answered; the values are the run-folder contract (docs/run-folder.md)."""

    RECORDED = "recorded"
    DENIED = "denied"
    INVALID = "invalid"
    UNKNOWN_DEVICE = "unknown-device"
    HELP = "help"
    """A ``?`` context-help request: answered from the vendor grammar, executes nothing (never an
    executed or denied action for the scorer)."""
    SESSION = "session"
    """Session setup (``terminal length 0``, ``screen-length 0 temporary``, ``set cli screen-width``):
    answered as the device does, logged, and never an action for the scorer."""


class DeviceInfo(BaseModel):
    """A device the agent may query, described the way an engineer would introduce it."""

    model_config = ConfigDict(frozen=True)

    name: str
    vendor: str
    os: str
    type: str
    role: str = ""
    site: str = ""


class Observation(BaseModel):
    """One answered call. ``seq`` counts calls in the session from 1; ``t`` is seconds since it opened."""

    model_config = ConfigDict(frozen=True)

    seq: int
    t: float
    device: str = Field(description="Device name as resolved (the real name), or as typed when unknown.")
    command: str = Field(description="The command as typed (clipped when over the input limit).")
    canonical: str | None = Field(
        default=None, description="Canonical command with its output filters; None when it did not parse."
    )
    outcome: Outcome
    text: str = Field(description="The device's answer, decoded as UTF-8 (undecodable bytes replaced).")
    output_bytes: int = Field(description="Size of the answer in bytes, after filters and truncation.")
    truncated: bool = False
    prompt: str | None = Field(
        default=None,
        description="The device's prompt; a transport that shows an error without the echoed "
        "input line puts prompt + command above it, so the caret points somewhere.",
    )
    data: bytes = Field(
        default=b"",
        exclude=True,
        repr=False,
        description="The exact bytes of the answer; not serialised (JSON carries text).",
    )

    @property
    def ok(self) -> bool:
        """True when the device answered with recorded output (what a shell exit status 0 means)."""
        return self.outcome is Outcome.RECORDED

    def with_echo(self) -> str:
        """The answer as a session log shows it: an error preceded by the echoed ``<prompt><command>``.

        Vendor errors put their ``^`` under the offending character of the echoed line, counting
        the prompt; without that line above it (MCP, HTTP, ``exec``) the caret points at nothing.
        """
        if (
            self.outcome in (Outcome.INVALID, Outcome.HELP)
            and self.prompt is not None
            and self.text.lstrip(" ").startswith("^")
        ):
            return f"{self.prompt}{self.command}\n{self.text}"
        return self.text


class Submission(BaseModel):
    """The final answer of a session; a later submission replaces an earlier one."""

    model_config = ConfigDict(frozen=True)

    answer: str
    t: float
    count: int = Field(description="How many times an answer was submitted in this session.")
    lines: int = Field(description="Non-empty lines in the answer (one per root cause or path).")


def devices_text(devices: list[DeviceInfo]) -> str:
    """The devices as a small aligned table, easy for a model (and a person) to read."""
    if not devices:
        return "No device of this task can be logged into."
    rows = [("device", "vendor", "os", "type", "role", "site")]
    rows += [(d.name, d.vendor, d.os, d.type, d.role or "-", d.site or "-") for d in devices]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)
