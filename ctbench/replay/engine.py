"""The replay engine: one per process, shared by every session and every transport.

The engine turns a task (its agent-visible part only) into a :class:`~ctbench.replay.loaded.LoadedTask`:
the accessible devices with their vendor dialects and recording indexes. Parsed tasks, resolved command lines and
recording bytes are cached here, behind locks, so that thousands of concurrent sessions on the same
task cost one parse and one read per recording. It never opens ``hidden.yaml``: tasks come from
:meth:`TaskSet.load_task`, bytes from :func:`ctbench.store.read_recording`, which refuses
traversal, absolute paths, symbolic links and anything that is not a plain file under
``recordings/``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ctbench.errors import CtbError, TaskDefinitionError
from ctbench.model import Device, Recording, TaskSpec
from ctbench.replay.loaded import DeviceReplay, LoadedTask, printable
from ctbench.replay.objects import Inventory, ObjectCatalog
from ctbench.replay.observation import DeviceInfo
from ctbench.replay.session import Session
from ctbench.store import RecordingAccessError, TaskRef, TaskSet, read_recording

if TYPE_CHECKING:
    from ctbench.dialects import Dialect

log = logging.getLogger(__name__)

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


class ReplayEngine:
    """Answers (device, command) calls from recorded output, for any number of sessions."""

    def __init__(
        self,
        task_set: TaskSet,
        *,
        max_input: int = 4096,
        max_output: int = 1_000_000,
        max_answer: int = 65_536,
        max_calls: int = 100_000,
        cache_bytes: int = 256 * 1024 * 1024,
    ) -> None:
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

    def open_session(
        self,
        task_id: str,
        *,
        trajectory_path: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        loaded: tuple[TaskRef, TaskSpec] | None = None,
    ) -> Session:
        """A fresh session on ``task_id``; calls are logged to ``trajectory_path`` when given.

        ``loaded`` is the task's ref and agent-visible spec when the caller has parsed task.yaml
        already (the runner did, to select the task), so it is not parsed a second time.
        """
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
        loaded_task = LoadedTask(ref=ref, title=spec.title, devices=devices, hosts=hosts)
        for replay in devices.values():
            if replay.inventory is not None:
                replay.inventory.texts = self._inventory_texts(loaded_task, replay)
            replay.objects = ObjectCatalog(replay.info.os, self._listing(loaded_task, replay))
        return loaded_task

    def _listing(self, task: LoadedTask, replay: DeviceReplay) -> Callable[[str], str | None]:
        """A device's recorded output of one command as text (what its object catalog reads)."""

        def listing(command: str) -> str | None:
            rec = replay.index.get(command)
            data = self.recording_bytes(task, rec) if rec is not None else None
            return None if data is None else data.decode("utf-8", "replace")

        return listing

    def _inventory_texts(self, task: LoadedTask, replay: DeviceReplay) -> Callable[[], list[bytes]]:
        """What a device's inventory learns its interfaces from: recorded commands and outputs."""

        def texts() -> list[bytes]:
            out = [c.encode() for c in replay.recorded]
            for rec in {id(r): r for r in replay.index.values()}.values():
                data = self.recording_bytes(task, rec)
                if data is not None:
                    out.append(data)
            return out

        return texts

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
        info = DeviceInfo(
            name=dev.name, vendor=dev.vendor, os=dev.os, type=dev.type, role=dev.role, site=dev.site
        )
        declared = frozenset(
            name.casefold() for i in dev.interfaces if (name := dialect.interface_name(i.strip())) is not None
        )
        return DeviceReplay(
            info=info,
            dialect=dialect,
            prompt=dialect.prompt(dev.name),
            recorded=recorded,
            index=index,
            inventory=Inventory(dialect, declared) if declared else None,
        )

    # -------------------------------------------------------------- recordings

    def recording_bytes(self, task: LoadedTask, rec: Recording) -> bytes | None:
        """The recorded bytes, or None when the index entry is refused (logged, never revealed)."""
        return self._bytes.get((task.ref.path, rec.file), lambda: self._read(task, rec))

    @staticmethod
    def _read(task: LoadedTask, rec: Recording) -> bytes | None:
        try:
            return read_recording(task.ref.path, rec.file)
        except RecordingAccessError as exc:
            log.warning("task %s: recording of %r on %s refused: %s", task.id, rec.command, rec.device, exc)
        except OSError as exc:
            log.warning("task %s: recording %s unreadable: %s", task.id, rec.file, exc.strerror or exc)
        return None
