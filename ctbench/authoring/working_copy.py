"""The working copy of a task: what an author edits, held in memory until a save writes it.

A :class:`TaskDraft` is both YAML files, the network the task uses and the recording bytes not on
disk yet. The editing session (:mod:`.editing`) changes it, the transactional save (:mod:`.saving`)
writes it, the shadow validation (:mod:`.shadow`) checks it; they share the types and small helpers
here, so none of the three needs another's internals.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctbench.commits import AuthoringAction
from ctbench.errors import CtbError, validation_message
from ctbench.model import Family, HiddenSpec, Network, TaskSpec
from ctbench.store import FAMILIES, HIDDEN_FILE, RECORDINGS_DIR, SEALED_HIDDEN_FILE, TASK_FILE, TaskSet

Action = AuthoringAction
"""What a commit did, as written in its ``Ctbench-Action:`` trailer (:mod:`ctbench.commits`)."""

TASK_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

STATEMENT_TEMPLATES: dict[Family, str] = {
    Family.RCA: (
        "Describe what is observed, where and by whom (the symptom, not its cause).\n"
        "You may run display/show commands on the network devices. Find the minimal set of root causes.\n"
        "\n"
        "Answer with one line per root cause: node;object;root-cause label\n"
    ),
    Family.PATH: (
        "Restore the forwarding path taken by traffic from SOURCE to DESTINATION.\n"
        "You may run display/show commands on the network devices.\n"
        "\n"
        "Answer with one line per path, hops joined by ->, each non-terminal hop written\n"
        "node_egress-interface and the final hop the node name only.\n"
    ),
    Family.TOPOLOGY: (
        "Restore the physical links (cables) of DEVICE: every cable between it and another node.\n"
        "You may run display/show commands on the network devices.\n"
        "\n"
        "Answer with one line per physical link, written NODE-A(port)->NODE-B(port).\n"
    ),
}
"""A new task starts from its family's answer-format sentence, which every statement must carry."""


class EditError(CtbError):
    """An edit that cannot be made as asked; the message says what was expected instead."""


class ConflictError(CtbError):
    """The task's files changed on disk since the draft was taken from them."""


# --------------------------------------------------------------------------- the working copy


class TaskDraft(BaseModel):
    """A task being edited, complete enough to be autosaved and recovered after a crash.

    ``statement`` is kept apart from ``task.statement`` because an author may empty the text box while
    typing, which the task model rejects; the model keeps the last non-empty text so that the draft
    always loads back. ``pending`` holds recording bytes that are not on disk yet (base64 in JSON), so a
    pasted capture survives a killed terminal too.
    """

    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")

    format: Literal["ctbench-draft"] = "ctbench-draft"
    version: int = 1
    task: TaskSpec
    statement: str
    hidden: HiddenSpec
    network: Network | None = Field(
        default=None,
        description="Working copy of the network when edited or new; None = the shared file as is.",
    )
    network_is_new: bool = False
    pending: dict[str, bytes] = Field(default_factory=dict, description="recording file -> bytes to write")
    removed_files: list[str] = Field(default_factory=list, description="recording files to delete on save")
    is_new: bool = False
    origin: str | None = Field(default=None, description="Task this one was duplicated from.")
    base_digest: str = Field(default="", description="Digest of the task files when editing began.")
    changes: list[str] = Field(default_factory=list, description="What was done since the last save.")
    saved_at: str = ""

    @property
    def id(self) -> str:
        return self.task.id

    @property
    def family(self) -> Family:
        return self.task.family

    def spec(self) -> TaskSpec:
        """The task part as it will be written (statement possibly empty: not validated)."""
        return self.task.model_copy(update={"statement": self.statement})


@dataclass(frozen=True)
class HopChoice:
    """One way a path can continue from a node: out of ``egress`` to ``neighbour`` (from the links)."""

    egress: str
    neighbour: str
    neighbour_interface: str


@dataclass(frozen=True)
class MetaRow:
    """One metadata field as the editor shows it: what the author declared beside what ctbench derives."""

    name: str
    declared: object
    derived: object
    mismatch: bool


@dataclass
class SaveResult:
    task_id: str
    folder: Path
    written: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    commit: str | None = None
    note: str = ""
    reopened: dict[str, list[str]] = field(default_factory=dict)
    """Criterion -> changed parts, when the save moved an approved task back to draft for re-review."""
    status_note: str = ""
    """Why the saved status is not the one the task had (approved -> draft), for the author to read."""


# --------------------------------------------------------------------------- small helpers


def files_digest(folder: Path) -> str:
    """Digest of a task's two YAML files, to notice edits made behind the author's back."""
    h = hashlib.sha256()
    for name in (TASK_FILE, HIDDEN_FILE, SEALED_HIDDEN_FILE):
        try:
            h.update((folder / name).read_bytes())
        except OSError:
            h.update(b"\0missing\0")
    return h.hexdigest()[:16]


def normalise_command(command: str) -> str:
    return " ".join(command.split())


def split_csv(text: str) -> list[str]:
    """Comma- or newline-separated list as typed in a form field; blanks dropped, order kept."""
    return [part.strip() for part in re.split(r"[,\n]", text) if part.strip()]


def default_author(root: Path | None = None, claimed: str | None = None) -> str:
    """Who is editing, as the task set's reviewers file knows them (:func:`ctbench.people.acting_person`).

    With people listed there, the author is the person id that this clone's git identity maps to, and a
    claimed name (``--author``, ``$CTBENCH_AUTHOR``) may only be that person; an identity the file does
    not list is refused with the line to add. Without a reviewers file: the claimed name, else git's
    ``user.name <user.email>``, else the login name.
    """
    env = (claimed or os.environ.get("CTBENCH_AUTHOR", "")).strip()
    from ctbench.people import acting_person, people_of

    base = root or Path.cwd()
    people = people_of(base)
    if people.persons:
        return acting_person(people, base, env or None)
    if env:
        return env
    try:
        import git

        repo = git.Repo(base, search_parent_directories=True)
        reader = repo.config_reader()
        name = str(reader.get_value("user", "name", "")).strip()
        email = str(reader.get_value("user", "email", "")).strip()
        if name:
            return f"{name} <{email}>" if email else name
    except Exception:  # no repository, no git, unreadable config: fall back to the login name
        pass
    try:
        return getpass.getuser()
    except Exception:
        return "unknown"


def next_free_id(ts: TaskSet, family: Family) -> str:
    """The next ``RCA-NNN`` / ``PATH-NNN`` not used in the task set (suggested by the new-task dialog)."""
    builtin = {Family.RCA: "RCA", Family.PATH: "PATH", Family.TOPOLOGY: "TOPO"}
    prefix = builtin.get(family) or family.value.upper()  # a plug-in family "toy": TOY-001
    used = {r.id for r in ts.refs()}
    highest = 0
    for tid in used:
        m = re.fullmatch(rf"{prefix}-(\d+)", tid)
        if m:
            highest = max(highest, int(m.group(1)))
    n = highest + 1
    while f"{prefix}-{n:03d}" in used:
        n += 1
    return f"{prefix}-{n:03d}"


def check_new_id(ts: TaskSet, task_id: str) -> None:
    if not TASK_ID_RE.match(task_id) or len(task_id) > 64:
        raise EditError(
            f"task id {task_id!r} is not valid (expected letters, digits, '-', '_' or '.', "
            "starting with a letter or digit, e.g. RCA-007)"
        )
    for fam in FAMILIES:
        if (ts.root / fam.value / task_id).exists():
            raise EditError(f"task {task_id} already exists ({fam.value}/{task_id})")


def format_validation(exc: ValidationError, what: str) -> str:
    return f"{what}: {validation_message(exc, '')}"


def checked_rel(rel: str) -> str:
    """A recording path from a draft, refused unless it stays under ``recordings/`` (drafts are files too)."""
    parts = Path(rel).parts
    if (
        Path(rel).is_absolute()
        or "\\" in rel
        or ".." in parts
        or len(parts) < 2
        or parts[0] != RECORDINGS_DIR
    ):
        raise EditError(f"recording path {rel!r} is not a file under {RECORDINGS_DIR}/; the draft is damaged")
    return rel


GOLD_NOTES = (
    ("added root cause ", "added a root cause"),
    ("removed root cause ", "removed a root cause"),
    ("set the root causes", "set the root causes"),
    ("added path ", "added a path"),
    ("removed path ", "removed a path"),
    ("set the paths", "set the paths"),
    ("added golden action ", "added a golden action"),
    ("explained golden action ", "explained a golden action"),
    ("removed golden action ", "removed a golden action"),
)
"""Change notes that quote the gold (answer lines, golden commands), and what they say on a sealed task."""


def sealed_note(text: str) -> str:
    """A change note fit for a sealed task's commit message: what changed, never the gold itself.

    On a sealed set every commit message is readable in every clone, so "set the root causes:
    PE_01;10.10.10.0/24;static route missing" would hand the gold to a reviewer before their blind
    answer; it becomes "set the root causes (sealed)".
    """
    for prefix, plain in GOLD_NOTES:
        if text.startswith(prefix):
            return f"{plain} (sealed)"
    return text
