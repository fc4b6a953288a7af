"""``ctb-eval import-results``: a result JSON in the paper's runner style -> a ctbench run folder.

The paper's runner (appendix D.5) writes one JSON file per run: a list (or ``{"results": [...]}``)
of per-question objects with the question id, the agent's final answer or last message, the commands
it executed and its usage. Harnesses differ in how they name those fields, so the reader accepts the
usual spellings (listed in the constants below) and says which item it cannot read.

What the importer decides, so that scoring an imported run means the same as scoring a native one:

- **Commands** may be raw and abbreviated (``dis ip rou``). Each is resolved with the device's vendor
  dialect, as the replay backend would: a command the dialect accepts gets its canonical form and
  counts as executed (``recorded`` when the task has a recording of it, else ``denied``) - the result
  file does not say what the backend answered, so an accepted command is taken as executed; a
  command the dialect rejects is ``invalid`` and a device outside the network ``unknown-device``,
  neither of which executes anything. An outcome given in the file is kept.
- **Answers** are parsed with the same parser as native runs (``answer`` in results.jsonl); the scorer
  re-parses ``answer_text`` anyway.
- **run.yaml** records what the file says (model, harness) and the import itself: the run's options
  are unknown, so they are recorded as the paper's harness settings (``--timeout 3600``, no retries),
  and the host as ``imported``. The start and finish times are the result file's modification time.

The run folder is written under a temporary name and renamed into place at the end, so an import that
fails half-way leaves nothing behind; an existing folder is never overwritten.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctbench.errors import CtbError
from ctbench.evaluate.runfolder import (
    HostInfo,
    ResultLine,
    RunConfig,
    RunFolder,
    TaskSetRef,
    task_set_commit,
)
from ctbench.evaluate.score import Scorer, _text
from ctbench.evaluate.settings import RunSettings
from ctbench.replay.observation import Outcome
from ctbench.scoring.judge import TaskJudge
from ctbench.store import TaskSet
from ctbench.yamlio import read_input

ID_KEYS = ("task_id", "question_id", "qid", "id", "task", "question")
ANSWER_KEYS = (
    "answer_text",
    "final_answer",
    "last_message",
    "final_message",
    "answer",
    "output",
    "response",
    "result",
    "prediction",
)
COMMAND_KEYS = (
    "commands",
    "commands_executed",
    "executed_commands",
    "tool_calls",
    "actions",
    "trajectory",
    "steps",
)
DEVICE_KEYS = ("device", "node", "host", "hostname", "target", "device_name")
COMMAND_TEXT_KEYS = ("command", "cmd", "raw_command", "raw", "input", "canonical")
ROUND_KEYS = ("rounds", "turns", "num_rounds", "iterations", "n_rounds")
LATENCY_KEYS = (
    "latency_s",
    "latency",
    "duration_s",
    "duration",
    "elapsed_s",
    "elapsed",
    "time_s",
    "wall_time",
)
INPUT_KEYS = ("input_tokens", "prompt_tokens", "tokens_in")
OUTPUT_KEYS = ("output_tokens", "completion_tokens", "tokens_out")
OUTCOMES = tuple(o.value for o in Outcome)
"""Every outcome a replay call can have (``session`` included): one given in the file is kept."""
ANSWER_SOURCES = ("submit", "answer_file", "stdout", "final_message")


@dataclass
class ImportSummary:
    """What an import did, for the command's report."""

    run_dir: Path
    tasks: int = 0
    answered: int = 0
    commands: int = 0
    outcomes: dict[str, int] = field(default_factory=lambda: {o: 0 for o in OUTCOMES})
    warnings: list[str] = field(default_factory=list)
    not_answered: dict[str, list[str]] = field(default_factory=dict)
    """Status (unparsable, timeout, error) -> the tasks imported with it, so the report can name them."""
    task_set_commit: str = "none"
    """The commit of the task set the import canonicalised against."""

    def to_json(self) -> dict[str, Any]:
        return {
            "run_dir": str(self.run_dir),
            "tasks": self.tasks,
            "answered": self.answered,
            "commands": self.commands,
            "outcomes": dict(self.outcomes),
            "warnings": list(self.warnings),
            "not_answered": {k: list(v) for k, v in self.not_answered.items()},
            "task_set_commit": self.task_set_commit,
        }


# --------------------------------------------------------------------------- reading the file


def _first(item: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for k in keys:
        if k in item and item[k] is not None:
            return item[k]
    return None


def load_result_file(path: Path) -> tuple[list[Any], dict[str, Any]]:
    """(items, top-level metadata) of a result JSON; :class:`CtbError` naming what is wrong."""
    try:
        text = read_input(path, "a result JSON file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CtbError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CtbError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno}); expected a list of "
            'per-question results or an object with a "results" list'
        ) from None
    if isinstance(data, list):
        return data, {}
    if isinstance(data, Mapping):
        for key in ("results", "items", "questions", "tasks"):
            if isinstance(data.get(key), list):
                meta = {k: v for k, v in data.items() if k != key and isinstance(v, (str, int, float))}
                return list(data[key]), meta
    raise CtbError(
        f'{path}: expected a list of per-question results or an object with a "results" list, '
        f"found {type(data).__name__}"
    )


def _as_text(value: Any) -> str | None:
    """An answer field as text: strings as they are, message objects by their content."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        inner = _first(value, ("text", "content", "answer", "message"))
        return _as_text(inner)
    if isinstance(value, list):
        parts = [t for t in (_as_text(v) for v in value) if t]
        return "\n".join(parts) if parts else None
    return str(value)


def _number(value: Any, kind: type) -> Any:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if number != number or number < 0:  # NaN or negative: not a usable figure
        return None
    return int(round(number)) if kind is int else number


def _parse_call(entry: Any, device_names: Sequence[str]) -> tuple[str, str, str | None, float | None] | None:
    """(device, command, outcome, t) of one executed-command entry, or None when it names none."""
    if isinstance(entry, (list, tuple)) and len(entry) >= 2:
        return str(entry[0]), str(entry[1]), None, None
    if isinstance(entry, str):
        return _split_prompt_line(entry, device_names)
    if not isinstance(entry, Mapping):
        return None
    args: Any = _first(entry, ("arguments", "args", "parameters", "params"))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            args = None
    fn = entry.get("function")
    if args is None and isinstance(fn, Mapping):  # OpenAI tool_calls: {"function": {"arguments": "..."}}
        return _parse_call({**fn, **{k: v for k, v in entry.items() if k != "function"}}, device_names)
    source: Mapping[str, Any] = args if isinstance(args, Mapping) else entry
    device = _first(source, DEVICE_KEYS)
    command = _first(source, COMMAND_TEXT_KEYS)
    if device is None or command is None or not isinstance(command, str):
        return None
    outcome = entry.get("outcome") or entry.get("status")
    outcome = outcome if outcome in OUTCOMES else None
    t = _number(_first(entry, ("t", "time", "timestamp_s")), float)
    return str(device), command, outcome, t


def _split_prompt_line(line: str, device_names: Sequence[str]) -> tuple[str, str, None, None] | None:
    """``DEVICE: cmd``, ``DEVICE> cmd``, ``DEVICE# cmd``, ``<DEVICE> cmd`` or ``[DEVICE] cmd``."""
    text = line.strip()
    for name in sorted(device_names, key=len, reverse=True):
        for opener, closers in (("<", ">"), ("[", "]"), ("", ":>#")):
            head = opener + name
            if (
                text.casefold().startswith(head.casefold())
                and len(text) > len(head)
                and text[len(head)] in closers
            ):
                command = text[len(head) + 1 :].strip()
                if command:
                    return name, command, None, None
    return None


# --------------------------------------------------------------------------- converting


def _resolve_id(raw: Any, ids: Mapping[str, str]) -> str | None:
    if raw is None:
        return None
    text = str(raw).strip()
    return ids.get(text) or ids.get(text.casefold())


def _calls(ctx: TaskJudge, entries: Any, summary: ImportSummary, where: str) -> list[dict[str, Any]]:
    """Trajectory records (run-folder format) for one task's executed commands."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise CtbError(
            f"{where}: commands must be a list of {{device, command}} objects or 'DEVICE: command' strings"
        )
    names = list(ctx.devices) or list(ctx.node_names)
    records: list[dict[str, Any]] = []
    skipped = 0
    for entry in entries:
        call = _parse_call(entry, names)
        if call is None:
            skipped += 1
            continue
        typed_device, command, outcome, t = call
        device = ctx.device_name(typed_device)
        canonical: str | None = None
        if device not in ctx.devices:
            outcome = outcome or "unknown-device"
        elif command.rstrip().endswith("?"):  # context help: answered from the grammar, executes nothing
            outcome = outcome or "help"
        else:
            canonical = ctx.resolve_command(device, command)
            if canonical is None:
                outcome = outcome or "invalid"
            elif outcome is None:
                outcome = "recorded" if canonical in ctx.recorded_forms.get(device, frozenset()) else "denied"
        summary.outcomes[outcome] += 1
        records.append(
            {
                "seq": len(records) + 1,
                "t": t if t is not None else 0.0,
                "device": device,
                "command": command,
                "canonical": canonical,
                "outcome": outcome,
                "output_bytes": 0,
            }
        )
    if skipped:
        summary.warnings.append(f"{where}: {skipped} command entr(y/ies) name no device and command; skipped")
    return records


def _task_set_ref(task_set: TaskSet, recorded: str | None, summary: ImportSummary) -> TaskSetRef:
    """The run's task-set commit: the one the result file names, else the set imported against (its
    commands were canonicalised and its ids checked with it); a difference between the two is said."""
    current = task_set_commit(task_set.root)
    summary.task_set_commit = current.commit
    if recorded is None:
        return current
    if current.commit != "none" and recorded != current.commit:
        summary.warnings.append(
            f"the results were made on task-set commit {recorded[:12]} but are imported against "
            f"{current.commit[:12]} ({task_set.root}): statements, recordings or gold may differ"
        )
    return TaskSetRef(path=str(task_set.root), commit=recorded)


def import_results(
    path: Path | str,
    out: Path | str,
    task_set: TaskSet,
    *,
    name: str | None = None,
    agent: str | None = None,
    model: str | None = None,
    harness: str | None = None,
) -> ImportSummary:
    """Write the run folder ``out`` from the result file ``path``; see the module docstring."""
    path = Path(path)
    items, meta = load_result_file(path)
    return import_items(
        items, meta, path, out, task_set, name=name, agent=agent, model=model, harness=harness
    )


def import_items(
    items: Sequence[Any],
    meta: Mapping[str, Any],
    path: Path,
    out: Path | str,
    task_set: TaskSet,
    *,
    name: str | None = None,
    agent: str | None = None,
    model: str | None = None,
    harness: str | None = None,
    when: datetime | None = None,
) -> ImportSummary:
    """Write the run folder ``out`` from result items already read from ``path`` (which names them in
    messages). An item may carry ``trial`` (1, 2, ...): one task may then appear once per trial, and the
    run records as many trials as the largest one. Other importers (``import-inspect``) build items in
    this format so that every import is checked and written by the same code."""
    from ctbench.replay.trajectory import TrajectoryRecord

    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CtbError(
            f"{out}: already exists and is not empty; choose a new --out folder (an import never "
            "overwrites a run)"
        )
    if not items:
        raise CtbError(f"{path}: holds no results")
    scorer = Scorer(task_set)
    ids = {}
    for ref in task_set.refs():
        ids[ref.id] = ref.id
        ids.setdefault(ref.id.casefold(), ref.id)
    # Read and check every item before writing anything.
    plan: list[tuple[int, str, int, Mapping[str, Any]]] = []
    unknown: list[str] = []
    seen: dict[tuple[str, int], int] = {}
    for i, item in enumerate(items, start=1):
        if not isinstance(item, Mapping):
            raise CtbError(
                f"{path}: result {i}: expected an object with a task id, an answer and commands, found "
                f"{type(item).__name__}"
            )
        raw_id = _first(item, ID_KEYS)
        if raw_id is None:
            raise CtbError(f"{path}: result {i}: no task id (expected one of: {', '.join(ID_KEYS)})")
        task_id = _resolve_id(raw_id, ids)
        if task_id is None:
            unknown.append(f"{raw_id!s} (result {i})")
            continue
        trial = _number(item.get("trial", 1), int)
        if not isinstance(trial, int) or trial < 1:
            raise CtbError(
                f"{path}: result {i}: trial must be a whole number from 1, found {item.get('trial')!r}"
            )
        if (task_id, trial) in seen:
            which = f"task {task_id}" + (f" trial {trial}" if trial > 1 else "")
            raise CtbError(
                f"{path}: result {i}: {which} already imported from result {seen[(task_id, trial)]}"
            )
        seen[(task_id, trial)] = i
        plan.append((i, task_id, trial, item))
    if unknown:
        sample = ", ".join(sorted(ids.values())[:3])
        raise CtbError(
            f"{path}: {len(unknown)} task id(s) are not in the task set {task_set.root}: "
            f"{', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''} (its ids look like {sample})"
        )
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".importing", dir=parent))
    summary = ImportSummary(run_dir=out)
    try:
        folder = RunFolder(tmp)
        folder.lock()
        when = when or datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
        trials = max(t for _, _, t, _ in plan)
        run_agent = agent or _text(meta.get("agent")) or _text(meta.get("harness")) or harness or "imported"
        config = RunConfig(
            name=name or out.name,
            harness=harness or _text(meta.get("harness")) or "imported",
            harness_version=_text(meta.get("harness_version")) or "unknown",
            prompt_version=f"imported:{path.name}",
            settings=RunSettings(
                agent=run_agent,
                model=model or _text(meta.get("model")),
                retries=0,
                trials=trials,
                concurrency=1,
                sandbox_network="host",
            ),
            # the file does not say how its agent was isolated, nor under which caps
            unrecorded=["sandbox.mode", "sandbox.limits"],
            task_set=_task_set_ref(task_set, _text(meta.get("task_set_commit")), summary),
            tasks=list(dict.fromkeys(t for _, t, _, _ in plan)),
            started=when,
            finished=when,
            host=HostInfo(
                hostname=f"imported from {path.name}",
                platform=platform.platform(),
                python=sys.version.split()[0],
            ),
        )
        folder.save_config(config)
        for i, task_id, trial, item in plan:
            where = f"{path}: result {i} ({task_id})"
            ctx = scorer.judge(task_id)
            records = _calls(ctx, _first(item, COMMAND_KEYS), summary, where)
            traj = folder.trajectory_path(task_id, trial)
            traj.parent.mkdir(parents=True, exist_ok=True)
            with traj.open("w", encoding="utf-8", newline="\n") as fh:
                for rec in records:
                    fh.write(TrajectoryRecord.model_validate(rec).model_dump_json() + "\n")
            text = _as_text(_first(item, ANSWER_KEYS))
            given_usage = item.get("usage")
            usage = given_usage if isinstance(given_usage, Mapping) else {}
            merged = {**item, **usage}
            status_given = str(item.get("status", "")).lower()
            error = _text(item.get("error"))
            parsed = ctx.parse(text)
            if status_given in ("timeout", "timed_out", "timed out"):
                status = "timeout"
            elif status_given == "error" or (error and not (text or "").strip()):
                status = "error"
            else:
                status = "answered" if parsed.status == "answered" else "unparsable"
            summary.answered += status == "answered"
            if status != "answered":
                summary.not_answered.setdefault(status, []).append(task_id)
            summary.commands += len(records)
            folder.append_result(
                ResultLine(
                    task_id=task_id,
                    family=ctx.family,
                    status=status,
                    error_kind="agent" if status == "error" else None,
                    answer_text=text,
                    answer=parsed.to_json(),
                    answer_source=item["answer_source"]
                    if item.get("answer_source") in ANSWER_SOURCES
                    else "final_message",
                    rounds=_number(_first(merged, ROUND_KEYS), int),
                    latency_s=_number(_first(merged, LATENCY_KEYS), float),
                    input_tokens=_number(_first(merged, INPUT_KEYS), int),
                    output_tokens=_number(_first(merged, OUTPUT_KEYS), int),
                    commands=len(records),
                    error=error if status in ("timeout", "error") else None,
                    trajectory=folder.relative(traj),
                    trial=trial,
                    cached_tokens=_number(merged.get("cached_tokens"), int),
                    cost_usd=_number(merged.get("cost_usd"), float),
                    rounds_kind=_text(merged.get("rounds_kind")),
                )
            )
            summary.tasks += 1
        folder.close()
        (tmp / ".lock").unlink(missing_ok=True)
        if out.exists():
            out.rmdir()  # checked empty above
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return summary
