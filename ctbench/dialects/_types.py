"""Value types that a dialect hands to its callers (replay engine, authoring tools, scorer).

They are frozen and hashable so that a resolution can be cached and shared between threads of the
replay server without copying, and so that two equal commands compare equal wherever they are used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ErrorKind = Literal["unrecognised", "incomplete", "ambiguous", "too_many", "wrong_parameter"]
"""The parse failures a device distinguishes; each vendor prints its own text for each."""

FilterKind = Literal["include", "exclude", "begin", "count", "section", "last", "trim", "passthrough"]
"""What an output filter does to the recorded text, whatever the vendor calls it."""


@dataclass(frozen=True, slots=True)
class CliError:
    """Why a command line does not parse, and where the device would put its ``^`` marker.

    ``position`` is a character offset in the line as typed (not in the canonical form), because the
    device aligns its caret under the echoed input. ``index`` is the token number, which some vendors
    use to choose their message (Junos says ``unknown command.`` only for the first word).
    ``candidates`` lists the keywords an ambiguous token could mean (Junos prints them), and
    ``context`` the canonical words understood before the error (IOS names the first one in
    ``% Type "show ?" for a list of subcommands``). ``slot`` names the parameter type expected where
    a wrong parameter was typed when the vendor words that case apart (``interface``: Junos looks
    the name up and says ``error: device X not found``).
    """

    kind: ErrorKind
    position: int
    token: str
    index: int = 0
    candidates: tuple[str, ...] = ()
    context: tuple[str, ...] = ()
    slot: str = ""


@dataclass(frozen=True, slots=True)
class OutputFilter:
    """One ``| keyword argument`` stage, applied to recorded bytes instead of being part of the key.

    ``keyword`` is the vendor's full spelling (``include``, ``match``, ``except``) so that ``str()``
    gives back the canonical text of the stage; ``kind`` is the vendor-neutral operation.
    ``pattern`` is the regular expression as typed (surrounding quotes removed where the vendor
    removes them, ``quoted`` remembering that they were there); ``number`` is the argument of
    ``last``/``trim``. ``ignore_case`` and ``underscore`` carry the vendor's regex dialect (Junos
    matches case-insensitively; IOS and VRP read ``_`` as a delimiter) so that applying a filter
    needs nothing but the filter.
    """

    kind: FilterKind
    keyword: str
    pattern: str = ""
    number: int | None = None
    ignore_case: bool = False
    underscore: bool = False
    quoted: bool = False

    def __str__(self) -> str:
        arg = self.pattern if self.number is None else str(self.number)
        if self.quoted:
            # The vendor strips quotes (Junos, NX-OS): put them back so the text re-parses the same.
            arg = f'"{arg}"'
        return f"| {self.keyword} {arg}" if arg else f"| {self.keyword}"


@dataclass(frozen=True, slots=True)
class Resolution:
    """The outcome of resolving one command line on one vendor's CLI.

    ``canonical`` is the recording key: full lower-case keywords, single spaces, parameters in
    their normal form, output filters stripped. ``filters`` are the stripped filters, in order.
    ``recorded`` tells that the command matched only through the task's recorded commands (not the
    vendor tree), which the replay engine may want to log.
    """

    line: str
    canonical: str | None
    filters: tuple[OutputFilter, ...] = ()
    error: CliError | None = None
    recorded: bool = False

    @property
    def ok(self) -> bool:
        """True when the line is a valid command (recorded or not: denial is the engine's call)."""
        return self.error is None

    @property
    def full(self) -> str | None:
        """The canonical command followed by its filters in canonical spelling.

        This is what a capture's command string looks like when it was taken with a filter
        (MANIFEST has ``show log messages | match sshd | except Received``).
        """
        if self.canonical is None:
            return None
        if not self.filters:
            return self.canonical
        return " ".join([self.canonical, *(str(f) for f in self.filters)])
