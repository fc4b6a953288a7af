"""The compiled task the engine hands to its sessions, and what a session needs of the engine.

:mod:`ctbench.replay.engine` builds :class:`LoadedTask` objects and owns the caches; each
:class:`~ctbench.replay.session.Session` answers calls from one of them. Both need these types, so
they live here and neither of the two modules imports the other's (the engine opens sessions; a
session only sees the engine through :class:`SessionHost`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ctbench.errors import CtbError
from ctbench.model import Recording
from ctbench.replay.objects import Inventory, ObjectCatalog
from ctbench.replay.observation import DeviceInfo, Outcome
from ctbench.replay.session_setup import setup_answer, stray_setup_position
from ctbench.store import TaskRef

if TYPE_CHECKING:
    from ctbench.dialects import Dialect, OutputFilter

RESOLUTION_CACHE_SIZE = 4096
"""Resolved lines kept per device; agents repeat themselves, hostile clients must not grow memory."""


class InputError(CtbError):
    """A request the transport should refuse before it reaches a device (size, encoding)."""


# --------------------------------------------------------------------------- text helpers


def printable(text: str, limit: int = 64) -> str:
    """``text`` made safe to echo in a message: control characters escaped, length clipped."""
    clipped = text[:limit]
    out = "".join(
        ch if ch.isprintable() else f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}"
        for ch in clipped
    )
    return out + ("…" if len(text) > limit else "")


@dataclass(frozen=True, slots=True)
class Answer:
    """A resolved command line on one device, before the recording is read.

    For ``recorded``, ``recording`` names the file and ``filters`` the output filters still to apply;
    otherwise ``text`` is the device's complete answer (error or denial).
    """

    outcome: Outcome
    canonical: str | None
    text: str = ""
    recording: Recording | None = None
    filters: tuple[OutputFilter, ...] = ()


# --------------------------------------------------------------------------- loaded tasks


@dataclass
class DeviceReplay:
    """One accessible device: its dialect, prompt and recording index, plus resolved lines."""

    info: DeviceInfo
    dialect: Dialect
    prompt: str
    recorded: frozenset[str]
    index: dict[str, Recording]
    inventory: Inventory | None = None
    """The device's interfaces, when the task set says which it has (see :mod:`.objects`)."""
    objects: ObjectCatalog | None = None
    """Its VLANs, VPN instances and BGP peers, as far as its recorded listings say (:mod:`.objects`)."""
    _cache: OrderedDict[str, Answer] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def resolve(self, line: str) -> Answer:
        """What the device makes of ``line`` (cached; thread-safe)."""
        with self._lock:
            hit = self._cache.get(line)
        if hit is not None:
            return hit
        answer = self._resolve(line)
        with self._lock:
            self._cache[line] = answer
            if len(self._cache) > RESOLUTION_CACHE_SIZE:
                self._cache.popitem(last=False)
        return answer

    def _resolve(self, line: str) -> Answer:
        if self.dialect.is_help(line):
            # Context help comes from the vendor grammar alone, so it says nothing about recordings.
            return Answer(Outcome.HELP, None, self.dialect.help(line, self.prompt))
        stray = stray_setup_position(self.info.os, line)
        if stray is not None:  # scrapli's VRP screen-width line: the device's error, but setup
            from ctbench.dialects import CliError

            error = CliError("wrong_parameter", stray, line[stray:].split()[0], index=1)
            return Answer(Outcome.SESSION, None, self.dialect.render_error(error, line, self.prompt))
        res = self.dialect.resolve(line, recorded=self.recorded)
        if res.error is not None:
            text = self.dialect.render_error(res.error, line, self.prompt)
            return Answer(Outcome.INVALID, None, text)
        canonical, full = res.canonical, res.full
        assert canonical is not None and full is not None, (
            "a resolution without an error has a canonical form"
        )
        setup = setup_answer(self.info.os, canonical) if not res.filters else None
        if setup is not None:
            return Answer(Outcome.SESSION, canonical, setup)
        # A capture taken with a filter is indexed with it (``show log messages | match sshd``) and
        # is returned as captured; otherwise the filters run on the unfiltered recording.
        if res.filters:
            rec = self.index.get(full)
            if rec is not None:
                return Answer(Outcome.RECORDED, rec.command, recording=rec)
        rec = self.index.get(canonical)
        if rec is not None:
            return Answer(Outcome.RECORDED, rec.command, recording=rec, filters=tuple(res.filters))
        missing = self.inventory.missing(line) if self.inventory is not None else None
        if missing is not None:  # an interface the device does not have: its parameter error
            from ctbench.dialects import CliError

            pos, token = missing
            error = CliError("wrong_parameter", pos, token, index=len(line[:pos].split()), slot="interface")
            return Answer(Outcome.INVALID, None, self.dialect.render_error(error, line, self.prompt))
        wrong = self.objects.missing(canonical, line) if self.objects is not None else None
        if wrong is not None:  # a VLAN, VPN instance or peer it does not have: what the device says
            pos, token, kind = wrong
            said = self.objects.answer(kind, token) if self.objects is not None else None
            if said is None:
                from ctbench.dialects import CliError

                error = CliError("wrong_parameter", pos, token, index=len(line[:pos].split()), slot=kind)
                said = self.dialect.render_error(error, line, self.prompt)
            return Answer(Outcome.INVALID, None, said)
        return Answer(Outcome.DENIED, canonical, self.dialect.denied_text(canonical))


@dataclass
class LoadedTask:
    """The agent-visible part of a task, compiled for replay."""

    ref: TaskRef
    title: str
    devices: dict[str, DeviceReplay]
    hosts: dict[str, str] = field(default_factory=dict)
    """Network members without a CLI (a PC, a server), name -> type: a person at the shell who tries
    to log into one is told why it has no prompt; agents get the unknown-device answer."""
    _folded: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        folded: dict[str, list[str]] = {}
        for name in self.devices:
            folded.setdefault(name.casefold(), []).append(name)
        self._folded = {k: v[0] for k, v in folded.items() if len(v) == 1}

    @property
    def id(self) -> str:
        return self.ref.id

    def device_infos(self) -> list[DeviceInfo]:
        return [d.info for d in self.devices.values()]

    def device(self, name: str) -> DeviceReplay | None:
        """The device called ``name`` (exact, else case-insensitive when unambiguous)."""
        found = self.devices.get(name)
        if found is None and len(name) <= 256:
            real = self._folded.get(name.strip().casefold())
            found = self.devices.get(real) if real else None
        return found

    def host(self, name: str) -> tuple[str, str] | None:
        """(name, type) of the accessible host without a CLI called ``name`` (any case), if any."""
        folded = name.strip().casefold()
        return next(((n, kind) for n, kind in self.hosts.items() if n.casefold() == folded), None)

    def unknown_device_text(self, name: str) -> str:
        """The same words for a device that does not exist and one the task keeps out of reach."""
        names = ", ".join(self.devices) or "(none)"
        return f"% Unknown device '{printable(name)}'. Accessible devices: {names}.\n"


class SessionHost(Protocol):
    """What a session needs of the engine that opened it: its limits and the shared recording bytes."""

    max_input: int
    max_output: int
    max_answer: int
    max_calls: int

    def recording_bytes(self, task: LoadedTask, rec: Recording) -> bytes | None: ...
