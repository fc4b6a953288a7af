"""The task store: task folders on disk, as docs/task-folder.md fixes them.

Layout of a task set::

    ctbench.yaml              task-set configuration (canary, thresholds, weights, review limits)
    taxonomy.yaml             root-cause taxonomy
    networks/<name>.yaml      shared networks
    dialects/<os>.yaml        optional command-tree extensions for the vendor dialects
    schema/*.schema.json      JSON Schemas exported from the models (editor validation)
    rca/<ID>/task.yaml        agent-visible part         path/<ID>/task.yaml
    rca/<ID>/hidden.yaml      gold, golden actions, metadata (never read by replay)
    rca/<ID>/recordings/<device>/<command>.txt   byte-exact recorded output
    rca/<ID>/reviews/round-NN.yaml               one review record per round

Recording text is never read when a task is loaded; :meth:`TaskSet.read_recording` reads one file on
demand and refuses anything that is not a plain file inside the task's ``recordings/`` folder.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ValidationError

from ctbench.errors import CtbError, TaskDefinitionError, validation_message
from ctbench.model import Family, HiddenSpec, Network, Recording, TaskSpec
from ctbench.taxonomy import TaskSetConfig, Taxonomy
from ctbench.vendor import Vendors
from ctbench.yamlio import (
    atomic_write_bytes,
    atomic_write_text,
    dump_document,
    load_document,
    load_fast,
    merge_into,
    plain,
    read_text,
    to_commented,
)

TASK_FILE = "task.yaml"
HIDDEN_FILE = "hidden.yaml"
SEALED_HIDDEN_FILE = "hidden.yaml.age"  # the hidden part encrypted with age (ctbench/sealing.py)
CONFIG_FILE = "ctbench.yaml"
TAXONOMY_FILE = "taxonomy.yaml"
RECORDINGS_DIR = "recordings"
REVIEWS_DIR = "reviews"
FAMILIES: tuple[Family, ...] = (Family.RCA, Family.PATH, Family.TOPOLOGY)
"""The built-in families; a set's folders also hold installed plug-in families' (:attr:`TaskSet.families`)."""

SCHEMA_FILES = {
    TASK_FILE: "task.schema.json",
    HIDDEN_FILE: "hidden.schema.json",
    "network": "network.schema.json",
    TAXONOMY_FILE: "taxonomy.schema.json",
    CONFIG_FILE: "config.schema.json",
}


class TaskNotFound(CtbError):
    pass


class DuplicateTaskId(TaskDefinitionError):
    """Two task folders (``rca/ID`` and ``path/ID``) share an id: which one a command means is unknown.

    A task definition error, not an infrastructure one: nothing is gained by retrying it.
    """


class RecordingAccessError(CtbError):
    """A recording index entry that points outside the task's recordings folder."""


class ModelFileError(CtbError):
    """A file that parsed as YAML but does not match its model; keeps the pydantic errors."""

    def __init__(self, path: Path, errors: ValidationError) -> None:
        super().__init__(f"{path}: {validation_message(errors, '')}")
        self.path = path
        self.errors = errors


@dataclass(frozen=True)
class TaskRef:
    """Where a task lives; cheap to list without reading any file."""

    id: str
    family: Family
    path: Path

    @property
    def task_file(self) -> Path:
        return self.path / TASK_FILE

    @property
    def hidden_file(self) -> Path:
        return self.path / HIDDEN_FILE


def schema_modeline(kind: str, depth: int) -> str:
    rel = "../" * depth + "schema/" + SCHEMA_FILES[kind]
    return f"# yaml-language-server: $schema={rel}\n"


def recording_filename(device: str, command: str) -> str:
    """A stable, readable, portable file name for a recording of ``command`` on ``device``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", command.strip()).strip("_.") or "command"
    if len(slug) > 80:
        digest = hashlib.sha1(command.encode()).hexdigest()[:8]
        slug = f"{slug[:70]}_{digest}"
    dev = re.sub(r"[^A-Za-z0-9._-]+", "_", device).strip(".") or "device"
    return f"{RECORDINGS_DIR}/{dev}/{slug}.txt"


def check_recording_rel(rel: str) -> PurePosixPath:
    """Lexical checks on an index entry: relative, inside ``recordings/``, no traversal."""
    if not rel or "\x00" in rel:
        raise RecordingAccessError(f"recording path {rel!r} is empty or malformed")
    p = PurePosixPath(rel)
    if p.is_absolute() or rel.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", rel):
        raise RecordingAccessError(
            f"recording path {rel!r} is absolute; it must be relative to the task folder"
        )
    if any(part == ".." for part in p.parts) or "\\" in rel:
        raise RecordingAccessError(f"recording path {rel!r} leaves the task folder")
    if not p.parts or p.parts[0] != RECORDINGS_DIR or len(p.parts) < 2:
        raise RecordingAccessError(f"recording path {rel!r} is not under {RECORDINGS_DIR}/")
    return p


def scan_recordings(task_dir: Path) -> tuple[set[str], set[str]]:
    """(regular files, symbolic links) under ``recordings/``, as posix paths relative to the task.

    One directory walk per task, using the file types the directory listing already gives, so that
    validating thousands of index entries costs no system call per entry.
    """
    regular: set[str] = set()
    links: set[str] = set()
    stack = [(task_dir / RECORDINGS_DIR, RECORDINGS_DIR)]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            rel = f"{prefix}/{e.name}"
            if e.is_symlink():
                links.add(rel)
            elif e.is_dir(follow_symlinks=False):
                stack.append((Path(e.path), rel))
            elif e.is_file(follow_symlinks=False):
                regular.add(rel)
    return regular, links


def safe_recording_path(task_dir: Path, rel: str) -> Path:
    """Resolve a recording path, refusing traversal, absolute paths, symlinks and non-files."""
    p = check_recording_rel(rel)
    full = task_dir / p
    base = task_dir.resolve() / RECORDINGS_DIR
    current = task_dir
    for part in p.parts:
        current = current / part
        if current.is_symlink():
            raise RecordingAccessError(f"recording path {rel!r} goes through a symbolic link")
    try:
        resolved = full.resolve(strict=True)
    except FileNotFoundError:
        raise RecordingAccessError(f"recording file {rel} is missing") from None
    except OSError as exc:
        raise RecordingAccessError(f"recording file {rel} cannot be opened: {exc.strerror}") from None
    if not resolved.is_relative_to(base):
        raise RecordingAccessError(f"recording path {rel!r} leaves the task folder")
    if not resolved.is_file():
        raise RecordingAccessError(f"recording path {rel!r} is not a regular file")
    return resolved


def read_recording(task_dir: Path, rel: str) -> bytes:
    """The bytes of a recording, refusing what :func:`safe_recording_path` refuses (traversal,
    absolute paths, symbolic links, anything but a regular file), with the same messages.

    The replay reads every recording it answers with through here, so it is one walk of ``open``
    calls relative to the folder above, none following a link - a handful of system calls where
    resolving the path costs dozens, and no window between the check and the read. A FIFO is opened
    without blocking and refused for what it is."""
    p = check_recording_rel(rel)
    nofollow = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        fd = os.open(task_dir, os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY)
    except FileNotFoundError:
        raise RecordingAccessError(f"recording file {rel} is missing") from None
    except OSError as exc:
        raise RecordingAccessError(f"recording file {rel} cannot be opened: {exc.strerror}") from None
    try:
        *folders, name = p.parts
        for i, part in enumerate([*folders, name]):
            last = i == len(folders)
            try:
                nxt = os.open(part, nofollow | (os.O_NONBLOCK if last else os.O_DIRECTORY), dir_fd=fd)
            except OSError as exc:
                if _is_link_at(fd, part):
                    raise RecordingAccessError(
                        f"recording path {rel!r} goes through a symbolic link"
                    ) from None
                if isinstance(exc, FileNotFoundError):
                    raise RecordingAccessError(f"recording file {rel} is missing") from None
                raise RecordingAccessError(f"recording file {rel} cannot be opened: {exc.strerror}") from None
            os.close(fd)
            fd = nxt
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RecordingAccessError(f"recording path {rel!r} is not a regular file")
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        while data := os.read(fd, 1 << 20):  # an OSError here is the disk's, raised as it is
            chunks.append(data)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _is_link_at(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def set_relative(root: Path, path: Path) -> str:
    """``path`` as reports and messages show it: relative to the task set's parent folder.

    The set's own folder name leads (``tasks/rca/RCA-001/task.yaml``), which an author can paste
    into the next command from the repository root; a path outside the set is shown as given.
    """
    try:
        return str(path.relative_to(root.parent))
    except ValueError:
        return str(path)


def find_task_set_root(start: Path) -> Path | None:
    """Walk up from ``start`` to the folder holding ``ctbench.yaml`` (or ``taxonomy.yaml``)."""
    start = start.resolve()
    for cand in [start, *start.parents]:
        if (cand / CONFIG_FILE).is_file() or (cand / TAXONOMY_FILE).is_file():
            return cand
    return None


def _validate(model: type[BaseModel], data: Any, path: Path) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ModelFileError(path, exc) from None


@dataclass
class TaskSet:
    """A task set folder. Loads lazily and caches networks, taxonomy and configuration.

    ``identity`` is the user's age identity file for sealed gold (``hidden.yaml.age``, see
    :mod:`ctbench.sealing`); without one, ``$CTBENCH_AGE_IDENTITY`` is used when a sealed part is read.
    """

    root: Path
    _networks: dict[str, Network] = field(default_factory=dict, repr=False)
    identity: Path | None = None

    def fresh(self) -> TaskSet:
        """The same set with nothing cached (after a branch switch), keeping the user's identity."""
        return TaskSet(root=self.root, identity=self.identity)

    @classmethod
    def open(cls, path: Path | str | None = None, *, identity: Path | str | None = None) -> TaskSet:
        """Open the task set containing ``path`` (default: ``./tasks`` or the current folder)."""
        if path is None:
            env = os.environ.get("CTBENCH_TASKS")
            path = Path(env) if env else (Path("tasks") if Path("tasks").is_dir() else Path("."))
        path = Path(path)
        if not path.exists():
            raise CtbError(f"{path}: no such task set folder")
        root = find_task_set_root(path if path.is_dir() else path.parent)
        if root is None:
            raise CtbError(
                f"{path}: not inside a task set (no {CONFIG_FILE} or {TAXONOMY_FILE} found above it)"
            )
        return cls(root=root, identity=Path(identity).expanduser() if identity else None)

    # -------------------------------------------------------------- set-level files

    @cached_property
    def families(self) -> tuple[Family, ...]:
        """The families whose folders this set may hold: the built-ins and installed plug-ins (read once
        per set: listing entry points is too slow to repeat for every task looked up)."""
        return tuple(Family)

    @cached_property
    def config(self) -> TaskSetConfig:
        p = self.root / CONFIG_FILE
        if not p.exists():
            return TaskSetConfig()
        return _validate(TaskSetConfig, load_fast(p), p)

    @cached_property
    def taxonomy(self) -> Taxonomy:
        p = self.root / TAXONOMY_FILE
        return _validate(Taxonomy, load_fast(p), p)

    def network_path(self, name: str) -> Path:
        return self.root / "networks" / f"{name}.yaml"

    def network_file(self, name: str) -> Path | None:
        """The file of network ``name``, or None when the name is unsafe or no such file exists.

        The one lookup rule for loading (:meth:`network`) and validation, so a name the validator
        accepts is always a name the loader finds.
        """
        p = self.network_path(name)
        return p if re.fullmatch(r"[A-Za-z0-9_.-]+", name) and p.is_file() else None

    def network(self, name: str) -> Network:
        if name not in self._networks:
            p = self.network_file(name)
            if p is None:
                raise CtbError(f"network {name!r} not found (expected {self.network_path(name)})")
            self._networks[name] = _validate(Network, load_fast(p), p)
        return self._networks[name]

    def network_names(self) -> list[str]:
        folder = self.root / "networks"
        return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []

    def dialect_extensions(self) -> tuple[Path, ...]:
        folder = self.root / "dialects"
        return tuple(sorted(folder.glob("*.yaml"))) if folder.is_dir() else ()

    @cached_property
    def vendors(self) -> Vendors:
        """Dialect lookups with this set's command-tree extensions, built once per task set.

        Validation, editing, the oracle check and the review comparison all need it; building it
        once spares a ``dialects/`` listing per caller (per task, in the oracle check).
        """
        return Vendors(self.dialect_extensions())

    # -------------------------------------------------------------- tasks

    def refs(self) -> list[TaskRef]:
        """Every task folder, sorted by family then id. Reads no file."""
        out: list[TaskRef] = []
        for fam in self.families:
            folder = self.root / fam.value
            if not folder.is_dir():
                continue
            with os.scandir(folder) as it:
                for entry in it:
                    if entry.is_dir() and not entry.name.startswith("."):
                        out.append(TaskRef(entry.name, fam, Path(entry.path)))
        out.sort(key=lambda r: (r.family.value, _natural(r.id)))
        return out

    def __iter__(self) -> Iterator[TaskRef]:
        return iter(self.refs())

    def unknown_families(self) -> list[str]:
        """Top-level folders holding task folders (a ``task.yaml`` one level down) that are no installed
        family: a plug-in family's tasks whose plug-in is not installed. Their tasks are not listed."""
        known = {f.value for f in self.families}
        out = []
        for folder in sorted(p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if folder.name not in known and any(
                (t / TASK_FILE).is_file() for t in folder.iterdir() if t.is_dir()
            ):
                out.append(folder.name)
        return out

    def duplicate_ids(self, refs: Iterable[TaskRef] | None = None) -> dict[str, list[TaskRef]]:
        """Task ids used by more than one folder (of ``refs``, default all), with those folders."""
        by_id: dict[str, list[TaskRef]] = {}
        for r in self.refs() if refs is None else refs:
            by_id.setdefault(r.id, []).append(r)
        return {i: rs for i, rs in by_id.items() if len(rs) > 1}

    def unique_refs(self) -> list[TaskRef]:
        """:meth:`refs`, or :class:`DuplicateTaskId` naming every id two folders share.

        For commands that select tasks by id (runs, exports): a run keyed by task id cannot hold two
        tasks with one id, and guessing which one was meant would score the wrong task.
        """
        refs = self.refs()
        dups = self.duplicate_ids(refs)
        if dups:
            raise DuplicateTaskId(duplicate_message(self.root, dups))
        return refs

    def ref(self, task_id: str) -> TaskRef:
        found = [
            TaskRef(task_id, fam, self.root / fam.value / task_id)
            for fam in self.families
            if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", task_id)
            and (self.root / fam.value / task_id).is_dir()
        ]
        if len(found) > 1:
            raise DuplicateTaskId(duplicate_message(self.root, {task_id: found}))
        if found:
            return found[0]
        raise TaskNotFound(f"task {task_id!r} not found in {self.root}")

    def load_task(self, ref: TaskRef | str) -> TaskSpec:
        """The agent-visible part only. Never touches ``hidden.yaml``."""
        ref = self.ref(ref) if isinstance(ref, str) else ref
        return _validate(TaskSpec, load_fast(ref.task_file), ref.task_file)

    def is_sealed(self, ref: TaskRef | Path) -> bool:
        """The hidden part is kept sealed (``hidden.yaml.age``, no plain ``hidden.yaml``)."""
        folder = ref.path if isinstance(ref, TaskRef) else ref
        return (folder / SEALED_HIDDEN_FILE).is_file() and not (folder / HIDDEN_FILE).exists()

    def hidden_bytes(self, folder: Path) -> bytes | None:
        """The plain bytes of a task folder's hidden part, decrypting a sealed one; None when absent.

        The one place that opens the hidden part: the validator, the hashes, the reveal, the runner
        and the scorer all come through here, so a sealed task reads the same as a plain one given
        the user's identity.
        """
        plain = folder / HIDDEN_FILE
        if plain.exists() or not (folder / SEALED_HIDDEN_FILE).is_file():
            try:
                return plain.read_bytes()
            except FileNotFoundError:
                return None
        from ctbench.sealing import identity_path, unseal

        sealed = folder / SEALED_HIDDEN_FILE
        return unseal(sealed.read_bytes(), identity_path(self.identity), set_relative(self.root, sealed))

    def hidden_text(self, ref: TaskRef | str) -> str:
        ref = self.ref(ref) if isinstance(ref, str) else ref
        if not self.is_sealed(ref):
            return read_text(ref.hidden_file)
        data = self.hidden_bytes(ref.path) or b""
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CtbError(
                f"{ref.path / SEALED_HIDDEN_FILE}: the sealed gold is not UTF-8 text (byte {exc.start})"
            ) from None

    def load_hidden(self, ref: TaskRef | str) -> HiddenSpec:
        ref = self.ref(ref) if isinstance(ref, str) else ref
        if self.is_sealed(ref):
            where = ref.path / SEALED_HIDDEN_FILE
            return _validate(HiddenSpec, load_fast(where, self.hidden_text(ref)), where)
        return _validate(HiddenSpec, load_fast(ref.hidden_file), ref.hidden_file)

    def seal_folder(self, folder: Path, authors: list[str]) -> bool:
        """Replace a plain ``hidden.yaml`` by its sealed form for the authors and maintainers (False if sealed)."""
        from ctbench import sealing

        plain = folder / HIDDEN_FILE
        if not plain.is_file():
            if (folder / SEALED_HIDDEN_FILE).is_file():
                return False
            raise CtbError(f"{set_relative(self.root, folder)}: no {HIDDEN_FILE} to seal")
        recipients = sealing.initial_recipients(self.root / "reviewers.yaml", authors)
        data = sealing.with_hash_key(plain.read_bytes(), set_relative(self.root, plain))
        atomic_write_bytes(folder / SEALED_HIDDEN_FILE, sealing.seal(data, recipients.keys()))
        atomic_write_text(folder / sealing.RECIPIENTS_FILE, sealing.render_recipients(recipients))
        plain.unlink()
        return True

    def add_recipient(self, folder: Path, recipient: Any) -> None:
        """Re-seal a task's hidden part with one more recipient (decrypting needs the user's identity)."""
        from ctbench import sealing

        rec_file = folder / sealing.RECIPIENTS_FILE
        recipients = sealing.parse_recipients(read_text(rec_file), set_relative(self.root, rec_file))
        plain = self.hidden_bytes(folder)
        if plain is None:
            raise CtbError(f"{set_relative(self.root, folder)}: no sealed gold")
        recipients = recipients.with_recipient(recipient)
        plain = sealing.with_hash_key(plain, set_relative(self.root, folder / SEALED_HIDDEN_FILE))
        atomic_write_bytes(folder / SEALED_HIDDEN_FILE, sealing.seal(plain, recipients.keys()))
        atomic_write_text(rec_file, sealing.render_recipients(recipients))

    def seals_new_tasks(self) -> bool:
        """Whether a new task's gold is sealed from its first save: ``review.seal_gold``, or when unset,
        whether every person in reviewers.yaml has an age recipient (sealed by default when it can be)."""
        wanted = self.config.review.seal_gold
        if wanted is not None:
            return wanted
        from ctbench.people import people_of

        return people_of(self.root).all_have_age

    def save_hidden_model(
        self, folder: Path, hidden: HiddenSpec, *, authors: list[str] | None = None
    ) -> bool:
        """Write a hidden part: merged into the existing one, sealed again when it is sealed.

        A new task is sealed from its first save when the set seals new tasks (:meth:`seals_new_tasks`,
        to its authors and the maintainers): its plain gold never reaches the repository.
        """
        from ctbench import sealing

        sealed = folder / SEALED_HIDDEN_FILE
        if not self.is_sealed(folder) and not (
            self.seals_new_tasks() and not (folder / HIDDEN_FILE).exists()
        ):
            return self.save_model(folder / HIDDEN_FILE, hidden, kind=HIDDEN_FILE)
        rec_file = folder / sealing.RECIPIENTS_FILE
        if sealed.is_file() and rec_file.is_file():
            recipients = sealing.parse_recipients(read_text(rec_file), set_relative(self.root, rec_file))
            old = self.hidden_bytes(folder)
        else:
            recipients = sealing.initial_recipients(self.root / "reviewers.yaml", authors or [])
            old = None
        if not hidden.hash_key:  # sealed gold keys its hashes; an existing key is kept, never replaced
            kept = _hash_key_of(old)
            hidden = hidden.model_copy(update={"hash_key": kept or sealing.new_hash_key()})
        text = _merged_text(self, folder / HIDDEN_FILE, hidden, old.decode("utf-8") if old else None)
        if old is not None and old.decode("utf-8") == text:
            return False
        atomic_write_bytes(sealed, sealing.seal(text.encode("utf-8"), recipients.keys()))
        atomic_write_text(rec_file, sealing.render_recipients(recipients))
        return True

    def read_recording(self, ref: TaskRef | str, rec: Recording) -> bytes:
        ref = self.ref(ref) if isinstance(ref, str) else ref
        return safe_recording_path(ref.path, rec.file).read_bytes()

    # -------------------------------------------------------------- writing

    def task_dir(self, family: Family, task_id: str) -> Path:
        return self.root / family.value / task_id

    def save_model(self, path: Path, model: BaseModel, *, kind: str) -> bool:
        """Save with minimal diff: merge into the existing document, write only if bytes change."""
        data = model.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_defaults=True)
        full = model.model_dump(mode="json", by_alias=True, exclude_none=True)
        for key in ("status", "golden_actions", "recordings", "answer"):
            if key in full and key not in data:
                data[key] = full[key]  # always spelled out, even at their defaults
        data = _drop_empty(data)
        if path.exists():
            doc = load_document(path)
            try:
                if type(model).model_validate(plain(doc)) == model:
                    return False  # same content: leave the author's bytes alone
            except ValidationError:
                pass
            doc = merge_into(doc, data)
            text = dump_document(doc)
        else:
            depth = len(path.relative_to(self.root).parts) - 1
            header = schema_modeline(kind, depth) if kind in SCHEMA_FILES else ""
            text = header + dump_document(to_commented(data))
        return atomic_write_text(path, text)

    def save_task(self, spec: TaskSpec) -> Path:
        folder = self.task_dir(spec.family, spec.id)
        self.save_model(folder / TASK_FILE, spec, kind=TASK_FILE)
        return folder

    def save_hidden(self, family: Family, hidden: HiddenSpec) -> Path:
        folder = self.task_dir(family, hidden.id)
        self.save_model(folder / HIDDEN_FILE, hidden, kind=HIDDEN_FILE)
        return folder

    def save_network(self, network: Network) -> Path:
        p = self.network_path(network.name)
        self.save_model(p, network, kind="network")
        self._networks.pop(network.name, None)
        return p

    def write_recording(self, folder: Path, device: str, command: str, data: bytes) -> str:
        rel = recording_filename(device, command)
        atomic_write_bytes(folder / rel, data)
        return rel


def _hash_key_of(hidden: bytes | None) -> str:
    """The ``hash_key`` of a hidden part's plain bytes ("" when none or unreadable)."""
    if not hidden:
        return ""
    try:
        doc = load_fast(Path(HIDDEN_FILE), hidden.decode("utf-8"))
    except (UnicodeDecodeError, CtbError):
        return ""
    key = doc.get("hash_key") if isinstance(doc, dict) else None
    return key if isinstance(key, str) else ""


def _merged_text(ts: TaskSet, path: Path, model: BaseModel, existing: str | None) -> str:
    """The YAML :meth:`TaskSet.save_model` would write for ``model`` over ``existing`` (sealed files)."""
    data = model.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_defaults=True)
    full = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    for key in ("golden_actions", "answer"):
        if key in full and key not in data:
            data[key] = full[key]
    data = _drop_empty(data)
    if existing is not None:
        return dump_document(merge_into(load_document(path, existing), data))
    depth = len(path.relative_to(ts.root).parts) - 1
    return schema_modeline(HIDDEN_FILE, depth) + dump_document(to_commented(data))


def duplicate_message(root: Path, dups: dict[str, list[TaskRef]]) -> str:
    """One line naming the ids two task folders share and the folders, for an error message."""
    parts = [
        f"{i} ({' and '.join(set_relative(root, r.path) for r in rs)})" for i, rs in sorted(dups.items())
    ]
    return (
        f"duplicate task id{'s' if len(dups) > 1 else ''}: {'; '.join(parts)}; "
        "task ids must be unique across rca/ and path/ (rename one folder and its id)"
    )


def _natural(text: str) -> list[Any]:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", text)]


def _drop_empty(data: Any) -> Any:
    """Drop empty optional containers so new files stay short; keeps required empty lists."""
    if isinstance(data, dict):
        out = {}
        for k, v in data.items():
            v = _drop_empty(v)
            if v in ({}, None) and k not in ("answer",):
                continue
            out[k] = v
        return out
    if isinstance(data, list):
        return [_drop_empty(v) for v in data]
    return data
