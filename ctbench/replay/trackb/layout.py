"""Track B's on-disk layout and the facts its reference server keeps in code.

Everything here is measured against Track B's reference server (docs/trackb.md): the file name a
command is stored under (:func:`safe_name`), the folder rule (a question's own folder, else
``others/``, for the whole request), the vendors it knows and the prompt it echoes. The models read
its files with a clear error (file and what was expected) instead of a traceback, and
:class:`TrackbTask` is the small agent-visible sidecar (``trackb.yaml``) an imported task keeps: its
provenance and the commands the question refuses (403), which the replay facade needs.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctbench.errors import CtbError, validation_message
from ctbench.yamlio import load_fast

Vendor = Literal["huawei", "h3c", "cisco"]
Kind = Literal["fault", "path", "l2-path", "topology"]

VENDOR_OS: dict[str, str] = {"huawei": "huawei_vrp", "h3c": "hp_comware", "cisco": "cisco_ios"}
"""Track B vendor -> ctbench CLI family (the dialect that reads the device's commands)."""

VENDOR_NAMES: dict[str, str] = {"huawei": "Huawei", "h3c": "H3C", "cisco": "Cisco"}

OS_VENDOR: dict[str, str] = {os_name: vendor for vendor, os_name in VENDOR_OS.items()}

OTHERS = "others"
"""The folder the server reads when a question has no folder of its own."""

SIDECAR = "trackb.yaml"
"""Name of the Track B facts file, in an imported task's folder and at the root of the set."""

TEST_FILE = "test.json"
LIMITS_FILE = "question_limits_config.json"


def safe_name(command: str) -> str:
    """The file stem Track B stores ``command``'s output under (slashes and blanks become ``_``).

    The server strips the command first, then replaces ``/`` and ``\\`` by ``_``, deletes ``..``
    and replaces each blank by ``_``; the output is ``<stem>.txt``.
    """
    return command.replace("/", "_").replace("\\", "_").replace("..", "").replace(" ", "_")


def prompt(vendor: str, device: str) -> str:
    """The prompt the server echoes before a command: ``<dev>`` (Huawei, H3C) or ``dev#`` (Cisco)."""
    return f"{device}#" if vendor == "cisco" else f"<{device}>"


def task_id(phase: int, question: int) -> str:
    """The ctbench id of Track B question ``question`` of phase ``phase``: ``TTACB-P1-007``."""
    return f"TTACB-P{phase}-{question:03d}"


_ID = re.compile(r"^TTACB-P(\d+)-(\d+)$")


def question_of(task: str) -> tuple[int, int] | None:
    """(phase, question) of an imported task id, or None for any other id."""
    m = _ID.match(task)
    return (int(m.group(1)), int(m.group(2))) if m else None


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Question(BaseModel):
    """``task`` of a test.json item: the prompt as Track B agents see it, and its number."""

    model_config = ConfigDict(extra="allow")

    question: str = Field(min_length=1)
    id: int = Field(ge=0)


class TestItem(BaseModel):
    """One item of a phase's ``test.json``."""

    model_config = ConfigDict(extra="allow")

    scenario_id: str = Field(min_length=1)
    task: Question


class NoPermission(_Model):
    """A command the device refuses in this question (the server answers 403)."""

    device: str
    command: str


class Unresolved(_Model):
    """A recording whose file name no command of the vendor's grammar is stored under."""

    device: str
    file: str
    command: str = Field(description="What the task records it as (the name read back as a command).")
    reason: str


class TrackbTask(_Model):
    """``trackb.yaml`` in an imported task's folder: agent-visible Track B facts of one question."""

    phase: int
    question: int
    scenario_id: str
    kind: Kind
    folder: str = Field(description="The outputs folder the server reads for this question: N or others.")
    paths_any: bool = Field(
        default=False, description="The gold's lines are alternatives (Phase 1 ECMP paths): any one is right."
    )
    no_permission: list[NoPermission] = Field(default_factory=list)
    unresolved: list[Unresolved] = Field(default_factory=list)

    def refused(self, device: str, command: str) -> bool:
        """True when the question refuses exactly ``command`` (stripped) on ``device``."""
        return any(p.device == device and p.command == command for p in self.no_permission)


def _load_json(path: Path, what: str) -> object:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CtbError(f"{path}: no such file ({what})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CtbError(f"{path}: cannot be read as UTF-8 text ({exc})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CtbError(f"{path}:{exc.lineno}: not JSON: {exc.msg}; expected {what}") from None


def read_test(path: Path) -> list[TestItem]:
    """The items of a ``test.json``, checked: a list of ``{scenario_id, task: {question, id}}``."""
    data = _load_json(path, "a list of {scenario_id, task: {question, id}}")
    if not isinstance(data, list):
        raise CtbError(f"{path}: expected a JSON list of {{scenario_id, task: {{question, id}}}}")
    items: list[TestItem] = []
    seen: set[int] = set()
    for i, raw in enumerate(data):
        try:
            item = TestItem.model_validate(raw)
        except ValidationError as exc:
            raise CtbError(f"{path}: item {i + 1}: {validation_message(exc, 'item')}") from None
        if item.task.id in seen:
            raise CtbError(f"{path}: item {i + 1}: question id {item.task.id} is used twice")
        seen.add(item.task.id)
        items.append(item)
    return items


def read_limits(path: Path) -> dict[int, list[NoPermission]]:
    """``question_limits_config.json``: question number -> the (device, command) pairs it refuses."""
    data = _load_json(path, '{"question_N": {"no_permission": {command: [device, ...]}}}')
    if not isinstance(data, dict):
        raise CtbError(f"{path}: expected an object keyed by question_N")
    out: dict[int, list[NoPermission]] = {}
    for key, conf in data.items():
        m = re.fullmatch(r"question_(\d+)", str(key))
        if m is None or not isinstance(conf, dict):
            raise CtbError(f"{path}: key {key!r}: expected question_N with an object value")
        refused = conf.get("no_permission", {})
        if not isinstance(refused, dict):
            raise CtbError(f"{path}: {key}.no_permission: expected {{command: [device, ...]}}")
        pairs: list[NoPermission] = []
        for command, devices in refused.items():
            if not isinstance(devices, list) or not all(isinstance(d, str) for d in devices):
                raise CtbError(f"{path}: {key}.no_permission[{command!r}]: expected a list of device names")
            pairs += [NoPermission(device=d, command=str(command).strip()) for d in devices]
        out[int(m.group(1))] = pairs
    return out


def read_vendors(path: Path) -> dict[str, str]:
    """The ``--vendors`` file: a YAML map device -> huawei | h3c | cisco (what the server keeps in code)."""
    try:
        data = load_fast(path)
    except FileNotFoundError:
        raise CtbError(f"{path}: no such file (a YAML map device -> huawei | h3c | cisco)") from None
    if not isinstance(data, dict) or not data:
        raise CtbError(f"{path}: expected a YAML map device -> huawei | h3c | cisco")
    out: dict[str, str] = {}
    for device, vendor in data.items():
        v = str(vendor).strip().lower()
        if v not in VENDOR_OS:
            raise CtbError(f"{path}: device {device!r}: vendor {vendor!r}; expected huawei, h3c or cisco")
        if not re.fullmatch(r"[^\s;:]+", str(device)):
            raise CtbError(f"{path}: device name {device!r} holds a blank, ';' or ':'")
        out[str(device)] = v
    return out


def read_csv(path: Path, what: str) -> list[list[str]]:
    """The rows of one of Track B's CSV files (a BOM and CRLF row ends accepted, newlines inside
    quoted cells kept); ``what`` names the file in the error when it is missing."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise CtbError(f"{path}: no such file ({what})") from None
    except UnicodeDecodeError as exc:
        raise CtbError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return list(csv.reader(io.StringIO(text, newline="")))


def read_ground_truth(path: Path) -> dict[str, str]:
    """A ground-truth CSV ``ID,Track B`` keyed by scenario id; answers with real newlines.

    Track B joins a multi-line answer with the two characters ``\\n``; real newlines inside quoted
    cells are read too. The BOM and CRLF row ends are accepted.
    """
    rows = read_csv(path, "a CSV with columns ID,Track B")
    if not rows or len(rows[0]) < 2:
        raise CtbError(f"{path}:1: expected a header ID,Track B")
    out: dict[str, str] = {}
    for n, row in enumerate(rows[1:], start=2):
        if not row or not any(cell.strip() for cell in row):
            continue
        if len(row) < 2:
            raise CtbError(f"{path}:{n}: expected two columns: scenario id, answer")
        answer = row[1].replace("\r\n", "\n").replace("\\n", "\n")
        out[row[0].strip()] = "\n".join(line.strip() for line in answer.split("\n") if line.strip())
    return out


def gt_cell(answer: str) -> str:
    """An answer as a submission or ground-truth cell spells it: lines joined by a literal ``\\n``."""
    return "\\n".join(line for line in answer.splitlines() if line.strip())


def read_sidecar(folder: Path) -> TrackbTask | None:
    """The task's Track B facts, or None for a task that was not imported from Track B."""
    path = folder / SIDECAR
    if not path.is_file():
        return None
    try:
        return TrackbTask.model_validate(load_fast(path))
    except ValidationError as exc:
        raise CtbError(f"{path}: {validation_message(exc, 'file')}") from None
