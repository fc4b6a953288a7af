"""The run folder: the on-disk contract between the runner and the scorer (docs/run-folder.md).

::

    runs/<run-name>/
      run.yaml                  RunConfig: harness and version, the run's settings (agent, model,
                                options), task-set commit, task selection, started/finished, host,
                                resume history
      results.jsonl             one ResultLine per finished task, appended as it finishes
      trajectories/<ID>.jsonl   one replay call per line (written by the replay session)
      logs/<ID>.log             the agent's own raw log (stdout/stderr, model exchanges)
      scores.json               written by ``ctb-eval score``

Durability is the point of this module and of the run's writer process (:mod:`.writer`), which
appends each round of result lines with a single ``write`` on an ``O_APPEND`` descriptor followed by
``fsync``, after the files they name are on disk, so a run killed with SIGKILL (or a machine that loses
power) leaves, at worst, one torn last line; :meth:`RunFolder.read_results` detects it and
:meth:`RunFolder.repair` cuts it off before the resumed run appends again. A task counts as finished
exactly when its line is in ``results.jsonl``: anything else is rerun on resume, and its stale
trajectory is set aside by the replay session rather than mixed into the new attempt. An exclusive
``flock`` on the folder keeps two runners from appending to the same file.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import re
import socket
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticSerializationError

from ctbench.errors import CtbError, validation_message
from ctbench.evaluate.settings import RunSettings
from ctbench.evaluate.writer import append_whole
from ctbench.provenance import TaskSetRef as TaskSetRef  # run.yaml records one; re-exported
from ctbench.provenance import task_set_commit as task_set_commit  # re-exported for the runner
from ctbench.safetext import scrub_json
from ctbench.yamlio import atomic_write_text, dump_document, load_fast, to_commented

RUN_FILE = "run.yaml"
RESULTS_FILE = "results.jsonl"
TRAJECTORIES_DIR = "trajectories"
LOGS_DIR = "logs"
LOCK_FILE = ".lock"
RUN_FORMAT = 2
"""run.yaml's shape: 2 records the :class:`~ctbench.evaluate.settings.RunSettings` (``settings:``);
1, every run.yaml before issue 27, had a flat ``options:`` mapping and is read into the same model."""

ResultStatus = Literal["answered", "unparsable", "timeout", "error"]
ErrorKind = Literal["agent", "infrastructure", "task"]
"""Who failed: the agent, the harness (backend or endpoint: retried), or the task's own definition
(:class:`~ctbench.errors.TaskDefinitionError`: an unknown network, a broken file; never retried)."""


def utc_now() -> datetime:
    return datetime.now(UTC)


def timestamp_slug(when: datetime) -> str:
    """``20260725T101500Z``: sortable, portable in file names."""
    return when.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def default_run_name(agent: str, model: str | None, when: datetime) -> str:
    """``<agent>-<model>-<UTC timestamp>``, with characters unsafe in folder names replaced."""
    parts = [agent, model or "", timestamp_slug(when)]
    return "-".join(re.sub(r"[^A-Za-z0-9._]+", "_", p).strip("_") for p in parts if p)


# --------------------------------------------------------------------------- run.yaml


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HostInfo(_Model):
    hostname: str
    platform: str
    python: str

    @classmethod
    def current(cls) -> HostInfo:
        return cls(hostname=socket.gethostname(), platform=platform.platform(), python=sys.version.split()[0])


class CtbenchInfo(_Model):
    """Which ctbench made the run: its version, and its commit when it runs from a git checkout."""

    version: str
    commit: str | None = None

    @classmethod
    def current(cls) -> CtbenchInfo:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("ctbench")
        except PackageNotFoundError:
            found = "unknown"
        return cls(version=found, commit=_source_commit(Path(__file__).resolve().parents[2]))


def _source_commit(root: Path) -> str | None:
    """HEAD of the checkout ctbench runs from, read from its files (no git process, no repository
    configuration honoured); None for an installed wheel."""
    dot = root / ".git"
    try:
        if dot.is_file():  # a worktree: "gitdir: PATH"
            dot = Path(dot.read_text(encoding="utf-8").split(":", 1)[1].strip())
        head = (dot / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            return head or None
        ref = head[5:]
        common = dot / "commondir"
        base = (dot / common.read_text(encoding="utf-8").strip()).resolve() if common.is_file() else dot
        for where in (dot, base):
            if (where / ref).is_file():
                return (where / ref).read_text(encoding="utf-8").strip() or None
        for line in (base / "packed-refs").read_text(encoding="utf-8").splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except (OSError, IndexError):
        return None
    return None


class RunTotals(_Model):
    """What a run spent and how its attempts ended, over the latest line of every task and trial."""

    attempts: dict[str, int] = Field(default_factory=dict, description="Latest lines by status.")
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = Field(default=None, description="Sum of the costs the harnesses reported.")
    agent_time_s: float | None = Field(default=None, description="Sum of the attempts' latencies.")
    wall_s: float = Field(
        default=0.0, description="Time the runner ran, summed over the run and its resumes."
    )
    models_reported: list[str] = Field(
        default_factory=list,
        description="Model ids the endpoint's responses named where they were not the requested model.",
    )
    models_reported_by: dict[str, list[str]] = Field(
        default_factory=dict,
        description="models_reported by who reported them (a harness's record, the model tap).",
    )

    @classmethod
    def of(cls, lines: Iterable[ResultLine], wall_s: float) -> RunTotals:
        latest = latest_by_key(lines)
        out = cls(wall_s=round(wall_s, 3))
        for line in latest.values():
            out.attempts[line.status] = out.attempts.get(line.status, 0) + 1

        def total(name: str) -> Any:
            """The latest lines' figure plus what their retried attempts spent (they cost too)."""
            values = [getattr(x, name) for x in latest.values() if getattr(x, name) is not None]
            if name != "latency_s":
                values += [
                    getattr(r, name)
                    for x in latest.values()
                    for r in x.retries
                    if getattr(r, name) is not None
                ]
            return sum(values) if values else None

        out.input_tokens, out.output_tokens = total("input_tokens"), total("output_tokens")
        out.cached_tokens, out.cost_usd = total("cached_tokens"), total("cost_usd")
        agent_time = total("latency_s")
        out.agent_time_s = None if agent_time is None else round(agent_time, 3)
        out.models_reported = sorted(
            {m.strip() for x in latest.values() if x.model_reported for m in x.model_reported.split(",")}
        )
        by: dict[str, set[str]] = {}
        for x in latest.values():
            if x.model_reported:
                got = by.setdefault(x.model_reported_source or "unknown", set())
                got.update(m.strip() for m in x.model_reported.split(","))
        out.models_reported_by = {k: sorted(v) for k, v in sorted(by.items())}
        return out


class SkippedTask(_Model):
    """A task the run gate kept out, and why."""

    task_id: str
    reason: str


class ResumeRecord(_Model):
    """Provenance of each resume: when, which differences ``--force`` accepted, which tasks ran again."""

    at: datetime
    already_done: int
    forced: bool = False
    differences: list[str] = Field(default_factory=list)
    retried_errors: list[str] = Field(
        default_factory=list,
        description="Tasks run again by --retry-errors because their last line was an infrastructure error.",
    )


class RunConfig(_Model):
    """``run.yaml``: what ran (harness, prompt version, the run's settings), on which tasks, when, where.

    The settings are the :class:`~ctbench.evaluate.settings.RunSettings` the run was started with, as
    :meth:`~ctbench.evaluate.settings.RunSettings.recorded` keeps them; ``agent``, ``model``,
    ``concurrency``, ``executor`` and ``executor_options`` read them. A run.yaml of format 1 (flat
    ``options:``) is read into the same shape by :func:`settings_of_format_1`.
    """

    format: int = RUN_FORMAT
    name: str
    harness: str
    harness_version: str
    prompt_version: str = Field(
        default="", description="The prompt's version (ctbench.scoring.prompt); a resume must match it."
    )
    settings: RunSettings
    task_set: TaskSetRef
    tasks: list[str] = Field(description="The selected task ids, in run order.")
    started: datetime
    finished: datetime | None = None
    host: HostInfo
    resumes: list[ResumeRecord] = Field(default_factory=list)
    skipped: list[SkippedTask] = Field(default_factory=list, description="Tasks the gate kept out.")
    unreviewed: list[str] = Field(
        default_factory=list,
        description="Tasks run although not approved and unchanged since approval (--allow-unreviewed).",
    )
    unrecorded: list[str] = Field(
        default_factory=list,
        description="Settings this run did not record (a run made before they existed, or imported): "
        "shown as unknown, named as in RunSettings.compared (sandbox.mode, sandbox.limits).",
    )
    ctbench: CtbenchInfo | None = Field(default=None, description="The ctbench that made the run.")
    reasoning_effort: str | None = Field(
        default=None, description="The agent's reasoning effort (its --agent-arg), for tables and labels."
    )
    totals: RunTotals | None = Field(default=None, description="Updated at the end of every invocation.")

    @model_validator(mode="before")
    @classmethod
    def _format_1(cls, data: Any) -> Any:
        return settings_of_format_1(data) if isinstance(data, dict) and "options" in data else data

    @field_validator("settings")
    @classmethod
    def _recorded(cls, value: RunSettings) -> RunSettings:
        """Only what a run records (no invocation fields, no secrets), within the runner's bounds."""
        problems = [
            text
            for bad, text in (
                (value.agent.timeout_s <= 0, "agent.timeout_s must be more than 0"),
                (value.retries < 0, "retries must be 0 or more"),
                (value.trials < 1, "trials must be at least 1"),
                (value.concurrency < 1, "concurrency must be at least 1"),
            )
            if bad
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return value.recorded()

    @field_serializer("settings")
    def _record(self, value: RunSettings) -> dict[str, Any]:
        return value.record()

    @property
    def agent(self) -> str:
        """The agent's name (``settings.agent.agent``)."""
        return self.settings.agent.agent

    @property
    def model(self) -> str | None:
        return self.settings.agent.model

    @property
    def concurrency(self) -> int:
        return self.settings.concurrency

    @property
    def executor(self) -> str:
        """Where attempts ran; not compared on resume."""
        return self.settings.executor

    @property
    def executor_options(self) -> dict[str, Any]:
        """The executor's options with every secret redacted; a resume runs with them again."""
        return self.settings.executor_options

    @property
    def sandbox(self) -> str | None:
        """What isolated the agent (``bwrap``, ``none``, ``in-process``); None when the run did not
        record it (made before the sandbox existed, or imported)."""
        return None if "sandbox.mode" in self.unrecorded else self.settings.agent.sandbox.mode

    def differences(self, other: RunConfig) -> list[str]:
        """What differs between two configurations in ways that make their results incomparable."""
        out: list[str] = []
        for name in ("harness", "harness_version"):
            a, b = getattr(self, name), getattr(other, name)
            if a != b:
                out.append(f"{name}: {a!r} -> {b!r}")
        old, new = self.settings.compared(), other.settings.compared()
        for key in self.unrecorded:
            old[key] = None
        for key, value in old.items():
            if key in self.unrecorded and _unrecorded_matches(key, new.get(key)):
                continue
            if value != new.get(key):
                out.append(
                    f"{'' if key in ('agent', 'model') else 'option '}{key}: {value!r} -> {new.get(key)!r}"
                )
        if self.prompt_version != other.prompt_version:
            out.append(f"option prompt_version: {self.prompt_version!r} -> {other.prompt_version!r}")
        if self.task_set.commit != other.task_set.commit:
            out.append(f"task-set commit: {self.task_set.commit[:12]} -> {other.task_set.commit[:12]}")
        if self.task_set.release_hash != other.task_set.release_hash:
            out.append(f"release: {self.task_set.release} -> {other.task_set.release}")
        if self.task_set.dirty != other.task_set.dirty:
            out.append(f"task set uncommitted changes: {self.task_set.dirty} -> {other.task_set.dirty}")
        if self.tasks != other.tasks:
            out.append(f"task selection: {len(self.tasks)} -> {len(other.tasks)} tasks")
        return out


def _unrecorded_matches(key: str, new: Any) -> bool:
    """A setting the old run did not record matches the new value when it cannot have differed: any
    attempt caps (the old run had none; results do not depend on them), and ``in-process`` (an agent
    with no process to isolate). An external agent that ran before the sandbox existed ran
    unsandboxed: resuming it sandboxed is a difference."""
    return key == "sandbox.limits" or (key == "sandbox.mode" and new == "in-process")


_FORMAT_1_AGENT = {
    "base_url": "base_url",
    "agent_cmd": "agent_cmd",
    "max_rounds": "max_rounds",
    "timeout_s": "timeout_s",
    "agent_args": "args",
    "ssh": "ssh",
}
_FORMAT_1_RUN = ("select", "allow_unreviewed", "allow_invalid", "retries", "trials")


def settings_of_format_1(data: dict[str, Any]) -> dict[str, Any]:
    """A run.yaml of format 1 (every ctbench before issue 27) in format 2's shape.

    Format 1 kept ``agent``, ``model``, ``concurrency``, ``executor`` and ``executor_options`` at the
    top and the rest in a flat ``options:`` mapping, which grew over time: runs from before the gate
    say ``all_statuses`` (it meant ``allow_unreviewed``), runs from before the sandbox have no
    ``sandbox`` (then ``sandbox_network`` meant ``host``) and runs from before the attempt caps no
    ``limits``; those two are listed in ``unrecorded``. Keys the mapping should not hold are kept, so
    the model names them."""
    out = {**data, "format": RUN_FORMAT}
    options = dict(out.pop("options") or {})
    out["prompt_version"] = options.pop("prompt_version", "")
    unrecorded = [] if options.get("sandbox") is not None else ["sandbox.mode"]
    if options.get("limits") is None:
        unrecorded.append("sandbox.limits")
    sandbox = {
        "mode": options.pop("sandbox", None) or "none",
        "network": options.pop("sandbox_network", "host"),
        "limits": options.pop("limits", None) or {},
    }
    agent: dict[str, Any] = {"agent": out.pop("agent", ""), "model": out.pop("model", None)}
    agent |= {new: options.pop(old) for old, new in _FORMAT_1_AGENT.items() if old in options}
    settings: dict[str, Any] = {"agent": {**agent, "sandbox": sandbox}}
    settings |= {key: options.pop(key) for key in _FORMAT_1_RUN if key in options}
    if options.pop("all_statuses", False):
        settings["allow_unreviewed"] = True
    settings |= {key: out.pop(key) for key in ("concurrency", "executor", "executor_options") if key in out}
    out["settings"] = {**settings, **options}
    out["unrecorded"] = [*out.get("unrecorded", ()), *unrecorded]
    return out


# --------------------------------------------------------------------------- results.jsonl


class RetryRecord(_Model):
    """One attempt that ended in an infrastructure error and was retried."""

    attempt: int
    error: str
    at: datetime
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = Field(default=None, description="What the failed attempt spent, where reported.")


class ResultLine(BaseModel):
    """One line of ``results.jsonl``. Extra keys written by other tools are kept, not rejected.

    How the runner's outcomes map onto the run folder's ``status``:

    ==========================  ============  ==============  ===========================================
    outcome                     status        error_kind      answer
    ==========================  ============  ==============  ===========================================
    parsed answer               answered      -               ParsedAnswer JSON, status "answered"
    answer with no valid line   unparsable    -               ParsedAnswer JSON, status "unparsable"
    no answer at all            unparsable    -               ParsedAnswer JSON, status "empty" (F5)
    ran out of time             timeout       -               None
    agent crashed / refused     error         agent           None (never retried)
    backend / endpoint down     error         infrastructure  None (after ``retries`` further attempts)
    task definition error       error         task            None (never retried: fix the task)
    ==========================  ============  ==============  ===========================================
    """

    model_config = ConfigDict(extra="allow")

    task_id: str
    family: str = Field(
        pattern=r"^[a-z][a-z0-9_]*$", description="The task family (rca, path, topology or a plug-in's)."
    )
    status: ResultStatus
    error_kind: ErrorKind | None = Field(
        default=None, description="Set when status is 'error': who failed, the agent or the harness."
    )
    answer_text: str | None = None
    answer: dict[str, Any] | None = Field(default=None, description="ParsedAnswer.to_json(), or None.")
    answer_source: Literal["submit", "answer_file", "stdout", "final_message"] | None = None
    rounds: int | None = None
    latency_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    commands: int = Field(
        default=0,
        description="Replay calls made (lines in the trajectory but an SSH client's session setup).",
    )
    error: str | None = None
    attempts: int = 1
    retries: list[RetryRecord] = Field(default_factory=list)
    started: datetime | None = None
    finished: datetime | None = None
    trajectory: str | None = None
    log: str | None = None
    notes: list[str] = Field(default_factory=list, description="Remarks from the agent adapter.")
    trial: int = Field(default=1, ge=1, description="Which trial of the task this line is (--trials).")
    content_hash: str | None = Field(default=None, description="sha256 of the task's content when it ran.")
    cached_tokens: int | None = None
    cost_usd: float | None = None
    rounds_kind: str | None = Field(
        default=None, description="What rounds counts: model requests or tool turns, as the harness reports."
    )
    harness_version: str | None = None
    worker: str | None = None
    model_reported: str | None = Field(
        default=None, description="The model id(s) the endpoint reported, when not the requested one."
    )
    model_reported_source: str | None = Field(
        default=None,
        description="Who reported model_reported: the harness's own record, or the model endpoint's "
        "responses as ctbench's model tap read them.",
    )

    @property
    def is_infrastructure_error(self) -> bool:
        return self.status == "error" and self.error_kind == "infrastructure"


def trial_suffix(trial: int) -> str:
    return "" if trial == 1 else f".trial{trial}"


def latest_lines(lines: Iterable[ResultLine]) -> dict[str, ResultLine]:
    """The last line of every task: what counts when a task was run again (``--retry-errors``).

    For runs of several trials use :func:`latest_by_key`: this keeps one line per task id.
    """
    return {r.task_id: r for r in lines}


def latest_by_key(lines: Iterable[ResultLine]) -> dict[tuple[str, int], ResultLine]:
    """The last line of every (task, trial)."""
    return {(r.task_id, r.trial): r for r in lines}


@dataclass(frozen=True)
class ResultsScan:
    """What is in ``results.jsonl``: the parsed lines and whether the last one was torn."""

    lines: list[ResultLine]
    torn_bytes: int
    valid_size: int

    @property
    def finished_ids(self) -> set[str]:
        return {r.task_id for r in self.lines}

    @property
    def finished_keys(self) -> set[tuple[str, int]]:
        return {(r.task_id, r.trial) for r in self.lines}

    @property
    def latest(self) -> dict[str, ResultLine]:
        return latest_lines(self.lines)

    def infrastructure_failed_ids(self) -> set[str]:
        """Tasks whose last line is an infrastructure error (the harness failed, not the agent)."""
        return {t for t, _ in self.infrastructure_failed_keys()}

    def infrastructure_failed_keys(self) -> set[tuple[str, int]]:
        return {k for k, r in latest_by_key(self.lines).items() if r.is_infrastructure_error}


class RunFolderError(CtbError):
    pass


class RunFolder:
    """A run folder on disk. Create or open it, then hold :meth:`lock` while writing results."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock_fh: IO[str] | None = None
        self._results_fd: int | None = None

    # ----------------------------------------------------------------- layout

    @property
    def run_file(self) -> Path:
        return self.path / RUN_FILE

    @property
    def results_file(self) -> Path:
        return self.path / RESULTS_FILE

    def trajectory_path(self, task_id: str, trial: int = 1) -> Path:
        """``trajectories/<ID>.jsonl`` (trial 1, as before trials existed) or ``<ID>.trial<K>.jsonl``."""
        return self.path / TRAJECTORIES_DIR / f"{task_id}{trial_suffix(trial)}.jsonl"

    def log_path(self, task_id: str, trial: int = 1) -> Path:
        return self.path / LOGS_DIR / f"{task_id}{trial_suffix(trial)}.log"

    def relative(self, p: Path) -> str:
        return p.relative_to(self.path).as_posix()

    def exists(self) -> bool:
        return self.run_file.is_file()

    # ----------------------------------------------------------------- lock

    def lock(self) -> None:
        """Take the folder's writer lock, or explain who holds it. Released on :meth:`close` or death."""
        self.path.mkdir(parents=True, exist_ok=True)
        fh = (self.path / LOCK_FILE).open("a+", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise RunFolderError(
                f"{self.path}: another ctb-eval run is writing to this folder ({holder}); "
                "wait for it to finish or use another --out folder"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        fh.flush()
        self._lock_fh = fh
        (self.path / TRAJECTORIES_DIR).mkdir(exist_ok=True)
        (self.path / LOGS_DIR).mkdir(exist_ok=True)

    @property
    def lock_fd(self) -> int | None:
        """The descriptor that holds the folder's lock (None unlocked): a writer process that inherits
        it keeps the folder locked as long as it may still write."""
        return None if self._lock_fh is None else self._lock_fh.fileno()

    def close(self) -> None:
        if self._results_fd is not None:
            os.close(self._results_fd)
            self._results_fd = None
        if self._lock_fh is not None:
            self._lock_fh.close()  # closing the descriptor releases the flock
            self._lock_fh = None

    def __enter__(self) -> RunFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- run.yaml

    def load_config(self) -> RunConfig:
        data = load_fast(self.run_file)
        try:
            return RunConfig.model_validate(data)
        except ValidationError as exc:
            raise RunFolderError(f"{self.run_file}: {validation_message(exc, 'run.yaml')}") from None

    def save_config(self, config: RunConfig) -> None:
        data = config.model_dump(mode="json")
        header = (
            "# ctbench run configuration: what ran, on which tasks, with which options.\n"
            "# Written by `ctb-eval run`; read by `ctb-eval score`. Do not edit by hand.\n"
        )
        atomic_write_text(self.run_file, header + dump_document(to_commented(data)))

    # ----------------------------------------------------------------- results.jsonl

    def read_results(self) -> ResultsScan:
        """Every complete result line; a final line without its newline is torn and reported apart.

        A complete line that is not a valid result is an error naming the file and line: it means the
        file was edited or written by something else, and silently skipping it would lose a result.
        """
        try:
            data = self.results_file.read_bytes()
        except FileNotFoundError:
            return ResultsScan([], 0, 0)
        cut = data.rfind(b"\n") + 1
        body, torn = data[:cut], data[cut:]
        lines: list[ResultLine] = []
        for n, raw in enumerate(body.split(b"\n")[:-1], start=1):
            if not raw.strip():
                continue
            try:
                lines.append(ResultLine.model_validate(json.loads(raw)))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise RunFolderError(f"{self.results_file}:{n}: not a JSON object ({exc})") from None
            except ValidationError as exc:
                raise RunFolderError(f"{self.results_file}:{n}: {validation_message(exc, 'line')}") from None
        return ResultsScan(lines, len(torn), cut)

    def repair(self, scan: ResultsScan) -> bool:
        """Cut a torn last line off ``results.jsonl`` so the next append starts on a fresh line."""
        if not scan.torn_bytes:
            return False
        with self.results_file.open("r+b") as fh:
            fh.truncate(scan.valid_size)
            fh.flush()
            os.fsync(fh.fileno())
        return True

    def append_result(self, line: ResultLine) -> None:
        """Append one line and ``fsync`` it; returns once it is on disk.

        For writers outside a run (``ctb-eval import-inspect`` and the like): a run's own lines go
        through its writer process (:mod:`ctbench.evaluate.writer`), which commits a round of
        finished attempts with one flush. On a failed write (a full disk) the line is cut off again,
        so the file keeps whole lines only, and the error is raised.
        """
        data = (result_json(line) + "\n").encode("utf-8")
        if self._results_fd is None:
            created = not self.results_file.exists()
            self._results_fd = os.open(self.results_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            if created:
                _fsync_dir(self.path)
        append_whole(self._results_fd, data)


def result_json(line: ResultLine) -> str:
    """``line`` as one JSON text, whatever its strings hold.

    An agent's answer (or error text, or a note) may carry a lone surrogate - ``"\\ud800"`` sent
    over JSON - that no UTF-8 encoder accepts; failing here would lose the result and make every
    resume fail on the same task, so such characters are written as U+FFFD instead.
    """
    try:
        return line.model_dump_json(exclude_none=False)
    except PydanticSerializationError:
        return json.dumps(
            scrub_json(line.model_dump(mode="json", exclude_none=False)),
            ensure_ascii=False,
            separators=(",", ":"),
        )


def trajectory_bytes(records: Iterable[Any]) -> bytes:
    """A trajectory file's content: one JSON record a line."""
    return "".join(r.model_dump_json() + "\n" for r in records).encode("utf-8")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
