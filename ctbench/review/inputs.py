"""The files a blind reviewer hands to ``ctb-review blind``: their own work, never the task's hidden part.

A scripted blind solve takes an answer file, and a commands file or a trajectory. Each is read
through :func:`read_blind_input`, which refuses any file that is, or lives beside, the hidden part
of a task: ``hidden.yaml`` (plain or sealed), a leftover temporary copy of it, and anything else in a
task folder except the visible ``task.yaml`` and ``recordings/`` (the review records of an earlier
round hold the revealed gold lines). The check follows symbolic links and hard links (same file on
disk), so a link in ``/tmp`` does not smuggle the gold through. A refusal names the file and the
reason, never its content: echoing one line of a refused file would show the reviewer a line of the
gold.

A trajectory is checked to be one (JSON lines of replay calls, the run-folder format), so a YAML
file is not copied into the review record and certified by the audit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import ValidationError

from ctbench.errors import CtbError, validation_message
from ctbench.store import (
    HIDDEN_FILE,
    RECORDINGS_DIR,
    SEALED_HIDDEN_FILE,
    TASK_FILE,
    TaskSet,
)
from ctbench.yamlio import read_input

_AGE_HEADER = b"age-encryption.org/"


class RefusedInput(CtbError):
    """A blind input that would show the reviewer something hidden; the message never quotes it."""


def _is_hidden_name(name: str) -> bool:
    """``hidden.yaml``, its sealed form and the temporary files an interrupted save leaves of either."""
    return name in (HIDDEN_FILE, SEALED_HIDDEN_FILE) or name.startswith(f".{HIDDEN_FILE}")


def hidden_reason(ts: TaskSet, path: Path) -> str | None:
    """Why ``path`` is (part of) a task's hidden side, or None when it is not."""
    try:
        real = path.expanduser().resolve(strict=True)
        st = real.stat()
    except OSError:
        return None  # read_input reports the missing file in its own words
    if _is_hidden_name(real.name) or _is_hidden_name(path.name):
        return "it is a task's hidden part (the gold)"
    root = ts.root.resolve()
    if real.is_relative_to(root):
        parts = real.relative_to(root).parts
        if len(parts) >= 3 and parts[0] in ("rca", "path"):
            inner = parts[2:]
            if inner != (TASK_FILE,) and inner[0] != RECORDINGS_DIR:
                return (
                    f"it is inside task folder {parts[0]}/{parts[1]} beside the gold (only task.yaml and "
                    f"recordings/ there are visible)"
                )
    for ref in ts.refs():  # a hard link or a bind mount of a hidden file is the same file
        for name in (HIDDEN_FILE, SEALED_HIDDEN_FILE):
            try:
                other = os.stat(ref.path / name)
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                return f"it is the hidden part of {ref.id} (the same file on disk)"
    return None


def _looks_hidden(data: bytes) -> bool:
    """Content that is a hidden part whatever its name: an age file, or YAML with the gold's keys."""
    if data.lstrip().startswith(_AGE_HEADER):
        return True
    head = data[:65536].decode("utf-8", "replace")
    keys = {line.split(":", 1)[0].strip() for line in head.splitlines() if line[:1].isalpha() and ":" in line}
    return "golden_actions" in keys and ("answer" in keys or "metadata" in keys)


def read_blind_input(ts: TaskSet, name: str, what: str) -> bytes:
    """The bytes of a blind input file, or :class:`RefusedInput` saying why not (without its content)."""
    if name != "-":
        why = hidden_reason(ts, Path(name))
        if why:
            raise RefusedInput(f"{name}: refused as {what}: {why}; a blind input must be your own file")
    data = read_input(name, what, stdin=True)
    if _looks_hidden(data):
        shown = "standard input" if name == "-" else name
        raise RefusedInput(
            f"{shown}: refused as {what}: its content is a task's hidden part (gold answer and "
            "golden actions); a blind input must be your own file"
        )
    return data


def check_trajectory(data: bytes, name: str) -> bytes:
    """``data`` if it is a replay trajectory (JSON lines of calls), else one line naming the first bad line.

    Imported lazily from the replay package's record model so the check and the writer agree.
    """
    from ctbench.replay.trajectory import TrajectoryRecord

    shown = "standard input" if name == "-" else name
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RefusedInput(f"{shown}: not a replay trajectory (not UTF-8 text, byte {exc.start})") from None
    seen = 0
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except ValueError as exc:
            msg = getattr(exc, "msg", "not JSON")
            col = getattr(exc, "colno", None)
            where = f" at column {col}" if col else ""
            raise RefusedInput(
                f"{shown} line {n}: not a replay trajectory line ({msg}{where}); expected one JSON "
                "object per call (seq, t, device, command, canonical, outcome)"
            ) from None
        if not isinstance(item, dict):
            raise RefusedInput(f"{shown} line {n}: not a replay trajectory line (expected a JSON object)")
        try:
            TrajectoryRecord.model_validate(item)
        except ValidationError as exc:
            raise RefusedInput(
                f"{shown} line {n}: not a replay trajectory line ({validation_message(exc, 'record')})"
            ) from None
        seen += 1
    if seen == 0:
        raise RefusedInput(
            f"{shown}: an empty trajectory; give the commands you ran (--commands FILE) or none"
        )
    return data
