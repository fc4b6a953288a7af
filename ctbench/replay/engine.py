"""The replay engine: one per process, shared by every session and every transport.

The engine turns a task (its agent-visible part only) into a :class:`LoadedTask`: the accessible
devices with their vendor dialects and recording indexes. Parsed tasks, resolved command lines and
recording bytes are cached here, behind locks, so that thousands of concurrent sessions on the same
task cost one parse and one read per recording. It never opens ``hidden.yaml``: tasks come from
:meth:`TaskSet.load_task`, bytes from :func:`ctbench.store.safe_recording_path`, which refuses
traversal, absolute paths, symbolic links and anything that is not a plain file under
``recordings/``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ctbench.errors import CtbError, TaskDefinitionError
from ctbench.model import Device, Recording, TaskSpec
from ctbench.replay.observation import DeviceInfo, Outcome
from ctbench.store import RecordingAccessError, TaskRef, TaskSet, safe_recording_path

if TYPE_CHECKING:
    from ctbench.dialects import Dialect, OutputFilter
    from ctbench.replay.session import Session

log = logging.getLogger(__name__)

RESOLUTION_CACHE_SIZE = 4096
"""Resolved lines kept per device; agents repeat themselves, hostile clients must not grow memory."""


class InputError(CtbError):
    """A request the transport should refuse before it reaches a device (size, encoding)."""


# --------------------------------------------------------------------------- text helpers


def printable(text: str, limit: int = 64) -> str:
    """``text`` made safe to echo in a message: control characters escaped, length clipped."""
    clipped = text[:limit]
    out = "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}"
                  for ch in clipped)
    return out + ("…" if len(text) > limit else "")


# --------------------------------------------------------------------------- caches


class _ByteCache:
    """Recording bytes by (task folder, index path), dropped oldest-first past a byte budget.

    Hits take no lock (a dict read is atomic); only filling and eviction do. A refused or unreadable
    entry is remembered as ``None`` so that a hostile index costs one check and one log line.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._data: dict[tuple[Path, str], bytes | None] = {}
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[Path, str], load: Callable[[], bytes | None]) -> bytes | None:
        try:
            return self._data[key]
        except KeyError:
            pass
        data = load()  # outside the lock: a slow disk must not stall other sessions
        size = len(data) if data is not None else 0
        if size <= self.budget:
            with self._lock:
                if key not in self._data:
                    self._data[key] = data
                    self._size += size
                    while self._size > self.budget and self._data:
                        old = self._data.pop(next(iter(self._data)))
                        self._size -= len(old) if old is not None else 0
        return data


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
        res = self.dialect.resolve(line, recorded=self.recorded)
        if res.error is not None:
            text = self.dialect.render_error(res.error, line, self.prompt)
            return Answer(Outcome.INVALID, None, text)
        canonical, full = res.canonical, res.full
        assert canonical is not None and full is not None, "a resolution without an error has a canonical form"
        # A capture taken with a filter is indexed with it (``show log messages | match sshd``) and
        # is returned as captured; otherwise the filters run on the unfiltered recording.
        if res.filters:
            rec = self.index.get(full)
            if rec is not None:
                return Answer(Outcome.RECORDED, rec.command, recording=rec)
        rec = self.index.get(canonical)
        if rec is not None:
            return Answer(Outcome.RECORDED, rec.command, recording=rec, filters=tuple(res.filters))
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


class ReplayEngine:
    """Answers (device, command) calls from recorded output, for any number of sessions."""

    def __init__(self, task_set: TaskSet, *, max_input: int = 4096, max_output: int = 1_000_000,
                 max_answer: int = 65_536, max_calls: int = 100_000,
                 cache_bytes: int = 256 * 1024 * 1024) -> None:
        if max_input < 16 or max_output < 256:
            raise ValueError("max_input must be >= 16 and max_output >= 256")
        self.task_set = task_set
        self.max_input = max_input
        self.max_output = max_output
        self.max_answer = max_answer
        self.max_calls = max_calls
        self._tasks: dict[str, LoadedTask] = {}
        self._dialects: dict[str, Dialect] = {}
        self._lock = threading.RLock()
        self._bytes = _ByteCache(cache_bytes)

    # -------------------------------------------------------------- sessions

    def open_session(self, task_id: str, *, trajectory_path: Path | None = None,
                     clock: Callable[[], float] = time.monotonic,
                     loaded: tuple[TaskRef, TaskSpec] | None = None) -> Session:
        """A fresh session on ``task_id``; calls are logged to ``trajectory_path`` when given.

        ``loaded`` is the task's ref and agent-visible spec when the caller has parsed task.yaml
        already (the runner did, to select the task), so it is not parsed a second time.
        """
        from ctbench.replay.session import Session

        return Session(self, self.task(task_id, loaded=loaded), trajectory_path=trajectory_path, clock=clock)

    # -------------------------------------------------------------- tasks

    def task(self, task_id: str, *, loaded: tuple[TaskRef, TaskSpec] | None = None) -> LoadedTask:
        """The compiled task (loaded once, then shared by every session).

        ``loaded`` - a (ref, spec) the caller already read with :meth:`TaskSet.load_task` - saves
        reading task.yaml again. It is typed as the agent-visible :class:`TaskSpec`: the engine's
        rule that it never sees ``hidden.yaml`` holds whoever parsed the file.
        """
        if loaded is not None and loaded[0].id != task_id:
            raise ValueError(f"loaded task {loaded[0].id!r} given for task {task_id!r}")
        task = self._tasks.get(task_id)
        if task is not None:
            return task
        with self._lock:
            task = self._tasks.get(task_id)
            if task is None:
                task = self._load(task_id, loaded)
                self._tasks[task_id] = task
        return task

    def dialect(self, os_name: str) -> Dialect:
        with self._lock:
            d = self._dialects.get(os_name)
            if d is None:
                from ctbench.dialects import get_dialect

                d = get_dialect(os_name, extra_trees=self.task_set.dialect_extensions())
                self._dialects[os_name] = d
        return d

    def _load(self, task_id: str, loaded: tuple[TaskRef, TaskSpec] | None = None) -> LoadedTask:
        if loaded is not None:
            ref, spec = loaded
        else:
            if not isinstance(task_id, str) or not task_id or len(task_id) > 64:
                raise CtbError(f"task {printable(str(task_id))!r} not found")
            ref = self.task_set.ref(task_id)
            try:
                spec = self.task_set.load_task(ref)  # agent-visible part only, never hidden.yaml
            except TaskDefinitionError:
                raise
            except CtbError as exc:
                raise TaskDefinitionError(f"task {task_id}: {exc}", task_id=task_id) from None
        try:
            network = self.task_set.network(spec.network)
        except CtbError as exc:  # unknown or broken network: the task's fault, retrying cannot help
            raise TaskDefinitionError(f"task {ref.id}: {exc}", task_id=ref.id) from None
        by_name = network.device_map()
        wanted = spec.accessible if spec.accessible is not None else [d.name for d in network.devices]
        by_device: dict[str, list[Recording]] = {}
        for rec in spec.recordings:
            by_device.setdefault(rec.device, []).append(rec)
        devices: dict[str, DeviceReplay] = {}
        hosts: dict[str, str] = {}
        for name in wanted:
            dev = by_name.get(name)
            if dev is None:
                log.warning("task %s: accessible device %s is not in network %s", task_id, name, network.name)
                continue
            if dev.os is None:  # a host without a CLI cannot be logged into
                continue
            devices[name] = self._device(dev, by_device.get(name, []))
        # Hosts without a CLI are never accessible (nothing to log into), whatever the task lists;
        # the shell tells a person so. Agents are never told (they get the unknown-device text).
        hosts.update({d.name: d.type for d in network.devices if d.os is None})
        return LoadedTask(ref=ref, title=spec.title, devices=devices, hosts=hosts)

    def _device(self, dev: Device, recordings: list[Recording]) -> DeviceReplay:
        assert dev.os is not None
        dialect = self.dialect(dev.os)
        recorded = frozenset(r.command for r in recordings)
        index: dict[str, Recording] = {}
        for rec in recordings:
            # Index under the key as authored and under the dialect's own canonical spelling of it,
            # so an author's harmless variation (spacing, an abbreviation) still replays.
            index.setdefault(rec.command, rec)
            try:
                res = dialect.resolve(rec.command, recorded=recorded)
            except Exception:  # a dialect bug must not make the task unplayable
                log.exception("dialect %s failed on recorded command %r", dev.os, rec.command)
                continue
            if res.ok and (full := res.full) is not None:
                index.setdefault(full, rec)
        info = DeviceInfo(name=dev.name, vendor=dev.vendor, os=dev.os, type=dev.type, role=dev.role,
                          site=dev.site)
        return DeviceReplay(info=info, dialect=dialect, prompt=dialect.prompt(dev.name), recorded=recorded,
                            index=index)

    # -------------------------------------------------------------- recordings

    def recording_bytes(self, task: LoadedTask, rec: Recording) -> bytes | None:
        """The recorded bytes, or None when the index entry is refused (logged, never revealed)."""
        return self._bytes.get((task.ref.path, rec.file), lambda: self._read(task, rec))

    @staticmethod
    def _read(task: LoadedTask, rec: Recording) -> bytes | None:
        try:
            return safe_recording_path(task.ref.path, rec.file).read_bytes()
        except RecordingAccessError as exc:
            log.warning("task %s: recording of %r on %s refused: %s", task.id, rec.command, rec.device, exc)
        except OSError as exc:
            log.warning("task %s: recording %s unreadable: %s", task.id, rec.file, exc.strerror or exc)
        return None
