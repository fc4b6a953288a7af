"""All YAML quirks in one place: round-trip loading, minimal-diff saving, line numbers, atomic writes.

Task files are edited by people and by tools. Round-trip mode keeps comments, key order and quoting;
:func:`merge_into` updates a loaded document in place so that changing one field changes one line of
the diff, and :func:`save_document` does not touch a file whose bytes would not change. Validation of
large task sets first uses the fast C loader and only re-reads a file in round-trip mode when it needs
line numbers for a finding.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from ctbench.errors import CtbError


class YamlFileError(CtbError):
    """A YAML file that cannot be read; carries file and line for the finding."""

    def __init__(self, path: Path, line: int | None, message: str, column: int | None = None) -> None:
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.column = column
        self.detail = message


def _rt() -> YAML:
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    y.width = 4096
    return y


def _safe(pure: bool = False) -> YAML:
    return YAML(typ="safe", pure=pure)  # pure=False: libyaml via ruamel.yaml.clib when present


OPENED_CONTEXTS = (
    "quoted scalar",
    "flow sequence",
    "flow mapping",
    "block scalar",
    "simple key",
    "directive",
)
"""Parser contexts that name something opened and never closed: the problem starts where it opened."""


def _starts_at_context(exc: MarkedYAMLError) -> bool:
    """Whether the place to fix is the context mark (an unclosed quote) rather than the problem mark.

    An unclosed ``"`` on line 4 is only noticed at the end of the file, where the parser runs out:
    the problem mark then points past everything the author wrote, the context mark at the quote.
    """
    if exc.context_mark is None:
        return False
    context, problem = str(exc.context or ""), str(exc.problem or "")
    return any(c in context for c in OPENED_CONTEXTS) or "end of stream" in problem or "stream end" in problem


def _at(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _describe(exc: YAMLError) -> tuple[int | None, int | None, str]:
    """(line, column, message): where the problem starts (1-based), and what ruamel says happened there."""
    if isinstance(exc, MarkedYAMLError) and exc.problem_mark is not None:
        start = exc.context_mark if _starts_at_context(exc) else exc.problem_mark
        parts = []
        if exc.context:
            parts.append(str(exc.context) + (f" ({_at(exc.context_mark)})" if exc.context_mark else ""))
        if exc.problem:
            parts.append(f"{exc.problem} ({_at(exc.problem_mark)})")
        return (
            start.line + 1,
            start.column + 1,
            f"broken YAML at column {start.column + 1}: " + ": ".join(parts),
        )
    return None, None, f"broken YAML: {exc}"


def read_input(
    name: str | Path, what: str, *, stdin: bool = False, error: type[CtbError] = CtbError
) -> bytes:
    """The bytes of an input file a person named, or ``error`` saying what was wrong, in one wording.

    Command-line options (``--file``, ``--answer``, capture logs) and paths typed into the app all
    come through here, so a typo reads the same everywhere: ``NAME: no such file (WHAT)``,
    ``NAME: is a folder, expected WHAT`` or ``NAME: cannot read: REASON``. ``~`` is expanded because
    paths typed into the app never pass through a shell. ``stdin=True`` lets ``-`` mean standard
    input, for the commands that document it.
    """
    if stdin and str(name) == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(name).expanduser().read_bytes()
    except FileNotFoundError:
        raise error(f"{name}: no such file ({what})") from None
    except IsADirectoryError:
        raise error(f"{name}: is a folder, expected {what}") from None
    except OSError as exc:
        raise error(f"{name}: cannot read: {exc.strerror}") from None


def read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise YamlFileError(path, None, "file not found") from None
    except IsADirectoryError:
        raise YamlFileError(path, None, "is a folder, expected a YAML file") from None
    except OSError as exc:
        raise YamlFileError(path, None, f"cannot read: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlFileError(path, None, f"not UTF-8 text (byte {exc.start})") from None


def load_fast(path: Path, text: str | None = None) -> Any:
    """Plain Python data, via the C loader; no comments, no line numbers."""
    text = read_text(path) if text is None else text
    try:
        return _safe().load(text)
    except YAMLError:
        pass  # libyaml is YAML 1.1 and refuses some valid 1.2 (e.g. ``[a:b, c:d]``): ask the pure parser
    try:
        return _safe(pure=True).load(text)
    except YAMLError as exc:
        line, column, msg = _describe(exc)
        raise YamlFileError(path, line, msg, column) from None


def load_document(path: Path, text: str | None = None) -> Any:
    """Round-trip document (CommentedMap) that keeps comments, order and quoting."""
    text = read_text(path) if text is None else text
    try:
        return _rt().load(text)
    except YAMLError as exc:
        line, column, msg = _describe(exc)
        raise YamlFileError(path, line, msg, column) from None


def dump_document(doc: Any) -> str:
    buf = io.StringIO()
    _rt().dump(doc, buf)
    return buf.getvalue()


STALE_TEMP_S = 60.0
"""Age after which a ``.<name>.XXXXXXXX.tmp`` beside a file is an interrupted save's leftover, not a
save in progress (one takes milliseconds): the next save of that file removes it."""


def is_leftover_temp(name: str) -> bool:
    """Whether file ``name`` looks like an atomic save's temporary file (``.hidden.yaml.k3j9x2ab.tmp``)."""
    return name.startswith(".") and name.endswith(".tmp") and name.count(".") >= 3


def remove_stale_temps(path: Path, *, older_than: float = STALE_TEMP_S) -> list[Path]:
    """Delete the temporary files interrupted atomic saves of ``path`` left beside it; returns them.

    A killed save leaves a full copy of the file it was writing (a ``hidden.yaml`` copy holds the
    gold, and ``git add -A`` would stage it). Only files older than ``older_than`` seconds go, so a
    concurrent save's temporary file is never pulled from under it.
    """
    removed: list[Path] = []
    prefix = f".{path.name}."
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    now = time.time()
    for e in entries:
        if not (e.name.startswith(prefix) and e.name.endswith(".tmp")) or len(e.name) <= len(prefix) + 4:
            continue
        try:
            if e.is_file(follow_symlinks=False) and now - e.stat(follow_symlinks=False).st_mtime > older_than:
                os.unlink(e.path)
                removed.append(Path(e.path))
        except OSError:
            continue
    return removed


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` can only set it, racing threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _file_mode(path: Path) -> int:
    """The permission bits a rewrite keeps: the file's own, else what ``open()`` would give a new file.

    ``mkstemp`` makes its file 0600, which made every run folder's run.yaml and scores.json unreadable
    to the group the rest of the folder is shared with."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def atomic_write_bytes(path: Path, data: bytes) -> bool:
    """Write via a temporary file in the same folder and rename; returns False if nothing changed.

    Leftovers of earlier interrupted saves of the same file are removed (:func:`remove_stale_temps`).
    """
    try:
        if path.read_bytes() == data:
            remove_stale_temps(path)
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _file_mode(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    remove_stale_temps(path)
    return True


def atomic_write_text(path: Path, text: str) -> bool:
    return atomic_write_bytes(path, text.encode("utf-8"))


def save_document(path: Path, doc: Any) -> bool:
    return atomic_write_text(path, dump_document(doc))


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def to_commented(value: Any) -> Any:
    """Convert plain data to ruamel containers so new subtrees dump in block style."""
    if isinstance(value, Mapping):
        cm = CommentedMap()
        for k, v in value.items():
            cm[k] = to_commented(v)
        return cm
    if isinstance(value, list | tuple):
        seq = CommentedSeq()
        for v in value:
            seq.append(to_commented(v))
        return seq
    if isinstance(value, str) and "\n" in value:
        from ruamel.yaml.scalarstring import LiteralScalarString

        return LiteralScalarString(value if value.endswith("\n") else value + "\n")
    return value


def _same_scalar(old: Any, new: Any) -> bool:
    if isinstance(old, str) and isinstance(new, str):
        return (
            str(old).rstrip("\n") == new.rstrip("\n") if "\n" in new or "\n" in str(old) else str(old) == new
        )
    return (
        type(old) is type(new)
        and old == new
        or (
            isinstance(old, bool) is isinstance(new, bool)
            and not isinstance(old, str | list | dict)
            and old == new
        )
    )


def merge_into(doc: Any, new: Any) -> Any:
    """Update ``doc`` in place to equal ``new``, touching only what differs.

    Mappings keep their key order and comments; new keys are appended; removed keys are deleted.
    Sequences are merged element by element so an edit in the middle of a list stays local.
    Returns the (possibly replaced) value to store at the parent.
    """
    if isinstance(doc, CommentedMap) and isinstance(new, Mapping):
        for key in [k for k in doc if k not in new]:
            del doc[key]
        for key, value in new.items():
            if key in doc:
                doc[key] = merge_into(doc[key], value)
            else:
                doc[key] = to_commented(value)
        return doc
    if isinstance(doc, CommentedSeq) and isinstance(new, Sequence) and not isinstance(new, str):
        new_list = list(new)
        while len(doc) > len(new_list):
            del doc[len(doc) - 1]
        for i, value in enumerate(new_list):
            if i < len(doc):
                doc[i] = merge_into(doc[i], value)
            else:
                doc.append(to_commented(value))
        return doc
    if _same_scalar(doc, new):
        return doc
    if isinstance(doc, str) and isinstance(new, str) and type(doc) is not str and "\n" not in new:
        return type(doc)(new)  # keep the author's quoting style
    return to_commented(new)


def line_of(doc: Any, loc: Iterable[str | int]) -> int | None:
    """1-based line of the deepest node of ``loc`` that exists in a round-trip document."""
    line: int | None = None
    node = doc
    for part in loc:
        try:
            if isinstance(node, CommentedMap) and part in node:
                pos = node.lc.key(part)
                line = pos[0] + 1
                node = node[part]
            elif isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
                pos = node.lc.item(part)
                line = pos[0] + 1
                node = node[part]
            else:
                break
        except (KeyError, IndexError, TypeError, AttributeError):
            break
    if line is None and isinstance(doc, CommentedMap | CommentedSeq):
        line = doc.lc.line + 1 if doc.lc.line is not None else None
    return line


def plain(value: Any) -> Any:
    """Deep-convert ruamel containers to dicts/lists (for pydantic)."""
    return _plain(value)
