"""Scoring a run folder: run folder + task set -> per-task records -> ``scores.json``.

This is the adapter between the on-disk contracts (docs/run-folder.md, docs/task-folder.md)
and the one judge of :mod:`ctbench.scoring` (:class:`~ctbench.scoring.judge.TaskJudge`, which the
runner, the review reveal and the oracle check call too). It decides what the scorer *believes*
about a run, so the rules are spelled out here:

- **The answer is parsed once.** The runner parses it with the task's judge (the network's node
  names, the taxonomy's aliases, the vendor dialects' interface names) and stores the parse in the
  result line with a fingerprint of everything that parse depended on (parser version, ctbench
  version, taxonomy, dialect extensions, family, the network's nodes, the answer text). The scorer
  takes a stored parse whose fingerprint is the judge's own and parses ``answer_text`` again only
  when it differs (the task set or the parser changed, or another tool wrote the run without one), so
  scores still follow the current parser and task set. A stored parse is trusted like the rest of
  the run folder (its usage figures, its statuses): the runner is its only writer. Every stated cause counts: an RCA line of the schema's shape that names a node,
  label or object the task does not know is a predicted entry that matches no gold entry (accuracy 0,
  lower IoUs, F1/F2 by the set rule of :mod:`ctbench.scoring.failures`), never dropped; the parse record's
  ``unresolved_lines`` lists those lines with the reason.
- **Timeout and error results score as "missing"** (no prediction: 0 on every IoU, wrong, F5), as do
  tasks the run selected (``run.yaml`` ``tasks``) but never finished: the paper keeps unanswered
  tasks in every denominator (B.1, C.3, C.5). Infrastructure errors, timeouts and missing results
  are counted (``unfinished`` in scores.json) and a run with any of them is ``incomplete``: the
  scorecard, every report and compare say so, so that no silent zero reads as the agent's result.
- **Executed actions** are the distinct (device, canonical command) pairs of trajectory calls whose
  outcome is ``recorded`` or ``denied`` (the device accepted the command); invalid commands,
  unknown devices and ``?`` help requests (outcome ``help``) execute nothing. Both these and the golden actions go through the device's dialect
  (full keywords, normal parameters; an output filter only stays part of the command when the task
  recorded the command with it, as in replay), so an abbreviation or a ``| include`` never hides a
  match, and a match is always the same device *and* the same command (4.1).
- **The gold** goes through the same normalisers as the prediction (taxonomy label, interface names),
  so an author who wrote ``GE0/0/24`` in hidden.yaml is matched by an agent who wrote the full name.

``scores.json`` is a pure function of the run folder and the task set: no timestamps, no absolute
paths, lists sorted, floats as Python writes them, so scoring the same run twice gives the same bytes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctbench import __version__
from ctbench.collector import full_collections_deferred
from ctbench.errors import CtbError
from ctbench.evaluate.prices import (
    REPORTED_CURRENCY,
    UNKNOWN,
    AttemptCost,
    Prices,
    attempt_cost,
    cost_section,
)
from ctbench.evaluate.runfolder import (
    RESULTS_FILE,
    RUN_FILE,
    TRAJECTORIES_DIR,
    ResultLine,
    RunFolder,
    RunFolderError,
    TaskSetRef,
    task_set_commit,
)
from ctbench.model import TaskSpec
from ctbench.scoring.failures import FAILURE_MODES, PRIORITY
from ctbench.scoring.judge import ABLATION_LEVEL, EXECUTED_OUTCOMES, Call, Judges, TaskJudge
from ctbench.scoring.metrics import TaskRecord, TaskScores, TaskUsage, score_task
from ctbench.scoring.parse import ParsedAnswer
from ctbench.store import TaskNotFound, TaskRef, TaskSet
from ctbench.yamlio import atomic_write_text, load_fast

SCORES_FILE = "scores.json"
UNFINISHED: dict[str, str] = {
    "infrastructure_error": "infrastructure_errors",
    "timeout": "timeouts",
    "missing": "missing_results",
}
"""Kinds of task-trial a run did not finish -> their count's key in scores.json ``unfinished``."""
SCORES_FORMAT = 1
__all__ = ["ABLATION_LEVEL", "EXECUTED_OUTCOMES"]  # re-exported: the run-folder rules name them

BREAKDOWNS: tuple[tuple[str, str], ...] = (
    # (name in scores.json and reports, meta field)
    ("category", "categories"),
    ("observability", "observability"),
    ("heterogeneity", "heterogeneity"),
    ("root_cause_count", "root_cause_count"),
    ("chain_length", "chain_length"),
    ("protocol_complexity", "protocol_complexity"),
    ("golden_tier", "golden_tier"),
    ("path_count", "path_count"),
)
"""Every metadata field the scores are broken down by (issue 4; paper Tables 19-22, A.5-A.6)."""
_TASK_META: tuple[str, ...] = (*(k for _, k in BREAKDOWNS), "golden_length", "h_l", "ablation_of")
"""The metadata a task's entry in scores.json shows: its strata values, golden length and H_L."""


# --------------------------------------------------------------------------- the run folder


@dataclass(frozen=True)
class RunInfo:
    """What a report needs to know about a run, read from ``run.yaml``.

    ``name`` keys the bootstrap seeds (:func:`ctbench.scoring.stats.seed_for`), so it comes from
    run.yaml and not from where the folder happens to live.
    """

    name: str
    agent: str | None = None
    model: str | None = None
    harness: str | None = None
    harness_version: str | None = None
    task_set_commit: str | None = None
    tasks: tuple[str, ...] | None = None
    trials: int = 1
    """Trials per task the run was asked for (``--trials``); 1 for runs made before trials existed."""
    sandbox: str | None = None
    """``none`` when an external agent ran unsandboxed (reports say so); see RunConfig.sandbox."""
    release: str | None = None
    """Version of the release the task set was imported from (run.yaml task_set.release), if any."""
    release_hash: str | None = None
    effort: str | None = None
    """The agent's reasoning effort (run.yaml), part of the default label."""
    custom_label: str | None = None
    """A label given for this report (``--label RUN=TEXT``), shown instead of the default one."""

    @property
    def label(self) -> str:
        """Short label for table rows: ``agent+model (effort)`` as the paper writes configurations."""
        if self.custom_label:
            return self.custom_label
        base = f"{self.agent}+{self.model}" if self.agent and self.model else self.agent or self.name
        return f"{base} ({self.effort})" if self.effort else base

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "agent": self.agent,
            "model": self.model,
            "harness": self.harness,
            "harness_version": self.harness_version,
            "task_set_commit": self.task_set_commit,
            "n_selected": None if self.tasks is None else len(self.tasks),
        }
        if self.sandbox is not None:
            out["sandbox"] = self.sandbox
        if self.release is not None:
            out["release"] = {"version": self.release, "manifest_hash": self.release_hash}
        if self.trials != 1:
            out["trials"] = self.trials
        return out


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def read_run_info(run_dir: Path) -> tuple[RunInfo, list[str]]:
    """``run.yaml`` as :class:`RunInfo`, plus warnings.

    A run written by ``ctb-eval run`` matches :class:`~ctbench.evaluate.runfolder.RunConfig`; a run
    written by another tool may carry fewer fields, and only ``name``/``agent``/``model``/``tasks``
    matter for scoring, so such a file is read leniently with a warning rather than refused.
    """
    folder = RunFolder(run_dir)
    if not folder.path.exists():
        raise CtbError(f"{run_dir}: no such run folder")
    if not folder.path.is_dir():
        raise CtbError(f"{run_dir}: not a folder (a run is a folder holding {RUN_FILE} and {RESULTS_FILE})")
    if not folder.run_file.is_file():
        raise CtbError(
            f"{run_dir}: not a run folder (no {RUN_FILE}; expected {RUN_FILE}, {RESULTS_FILE} and "
            f"{TRAJECTORIES_DIR}/ as written by `ctb-eval run` or `ctb-eval import-results`)"
        )
    try:
        config = folder.load_config()
    except RunFolderError as exc:
        data = load_fast(folder.run_file)
        if not isinstance(data, Mapping):
            raise CtbError(
                f"{folder.run_file}: expected a mapping of run settings (agent, model, tasks, ...)"
            ) from None
        tasks = data.get("tasks")
        if tasks is not None and not (isinstance(tasks, list) and all(isinstance(t, str) for t in tasks)):
            raise CtbError(f"{folder.run_file}: tasks: expected a list of task ids") from None
        task_set = data.get("task_set")
        commit = task_set.get("commit") if isinstance(task_set, Mapping) else None
        settings = data.get("settings")
        section = settings.get("agent") if isinstance(settings, Mapping) else None
        agent = section if isinstance(section, Mapping) else data  # format 2 nests them, 1 did not
        info = RunInfo(
            name=_text(data.get("name")) or folder.path.resolve().name,
            agent=_text(agent.get("agent")),
            model=_text(agent.get("model")),
            harness=_text(data.get("harness")),
            harness_version=_text(data.get("harness_version")),
            task_set_commit=_text(commit),
            tasks=None if tasks is None else tuple(tasks),
        )
        return info, [f"{RUN_FILE} is not in ctbench's run format ({exc}); read leniently"]
    return RunInfo(
        name=config.name,
        agent=config.agent,
        model=config.model,
        harness=config.harness,
        harness_version=config.harness_version,
        task_set_commit=config.task_set.commit,
        tasks=tuple(config.tasks),
        trials=config.settings.trials,
        sandbox=config.sandbox,
        release=config.task_set.release,
        release_hash=config.task_set.release_hash,
        effort=config.reasoning_effort or _text(config.settings.agent.args.get("reasoning_effort")),
    ), []


def parse_labels(specs: Sequence[str] | None) -> dict[str, str]:
    """``--label RUN=TEXT`` options as a mapping; RUN is a run folder, its folder name or its run name."""
    out: dict[str, str] = {}
    for spec in specs or ():
        run, sep, text = spec.partition("=")
        if not sep or not run.strip() or not text.strip():
            raise CtbError(f"--label {spec!r}: expected RUN=TEXT (a run folder or run name, then its label)")
        out[run.strip()] = text.strip()
    return out


def apply_labels(runs: Sequence[ScoredRun], labels: Mapping[str, str]) -> None:
    """Give each run the label ``labels`` names it by (its folder, the folder's name or its run name);
    a key that names no run is an error, so a typo never passes silently."""
    used: set[str] = set()
    for run in runs:
        keys = [str(run.path), str(Path(run.path).resolve()), Path(run.path).name, run.info.name]
        for key in keys:
            if key in labels:
                run.info = replace(run.info, custom_label=labels[key])
                used.add(key)
                break
    unknown = sorted(set(labels) - used)
    if unknown:
        names = ", ".join(Path(r.path).name for r in runs)
        raise CtbError(f"--label names no run given: {', '.join(unknown)} (the runs: {names})")


def read_results(run_dir: Path) -> tuple[dict[str, tuple[int, ResultLine]], list[str]]:
    """Result lines of trial 1 by task id (with their line numbers), plus warnings.

    See :func:`read_trial_results` for every trial; this is its single-trial view.
    """
    by_key, warnings = read_trial_results(run_dir)
    return {tid: v for (tid, trial), v in by_key.items() if trial == 1}, warnings


def read_trial_results(run_dir: Path) -> tuple[dict[tuple[str, int], tuple[int, ResultLine]], list[str]]:
    """Result lines by (task id, trial) (with their line numbers), plus warnings.

    A torn last line (a run killed while writing it) is left out with a warning: the task counts as
    unfinished. A broken line elsewhere is an error naming file and line (from the run-folder reader).
    A task listed twice keeps its last line; that is expected after an infrastructure error (the task
    was run again with ``--retry-errors``), and a warning otherwise.
    """
    folder = RunFolder(run_dir)
    warnings: list[str] = []
    if not folder.results_file.is_file():
        return {}, [f"{RESULTS_FILE} is missing: no task finished"]
    scan = folder.read_results()
    if scan.torn_bytes:
        warnings.append(
            f"{RESULTS_FILE}: the last line is incomplete ({scan.torn_bytes} bytes, written when the "
            "run was interrupted); it is ignored and its task counts as unfinished"
        )
    by_key: dict[tuple[str, int], tuple[int, ResultLine]] = {}
    duplicates: list[str] = []
    for n, line in enumerate(scan.lines, start=1):
        key = (line.task_id, line.trial)
        if key in by_key and not by_key[key][1].is_infrastructure_error:
            duplicates.append(
                line.task_id
            )  # a line after an infrastructure error is a rerun (--retry-errors)
        by_key[key] = (n, line)
    if duplicates:
        shown = ", ".join(sorted(set(duplicates))[:5])
        warnings.append(
            f"{RESULTS_FILE}: {len(duplicates)} task(s) have more than one result line ({shown}); "
            "the last line of each is scored"
        )
    return by_key, warnings


def _trajectory_file(folder: RunFolder, task_id: str, result: ResultLine | None, trial: int = 1) -> Path:
    """The trajectory a result points at, when that is a plain path inside the run folder."""
    default = folder.trajectory_path(task_id, trial)
    rel = result.trajectory if result is not None else None
    if not rel:
        return default
    candidate = (folder.path / rel).resolve()
    return candidate if candidate.is_relative_to(folder.path.resolve()) else default


# --------------------------------------------------------------------------- the judges, over runs


class Scorer:
    """Scores run folders against one task set with the one judge of :mod:`ctbench.scoring.judge`.
    The judges are cached, so scoring several runs (``compare``, ``report``) loads each task, network
    and dialect once."""

    def __init__(self, task_set: TaskSet, judges: Judges | None = None, prices: Prices | None = None) -> None:
        self.task_set = task_set
        self.judges = judges or Judges(task_set)
        self.config = self.judges.config
        self.prices = prices
        """The price file (``--prices``) that turns tokens into cost where a harness reported none."""
        self._task_set_ref: TaskSetRef | None = None

    @property
    def min_stratum(self) -> int:
        return self.task_set.config.min_stratum

    @property
    def task_set_ref(self) -> TaskSetRef:
        """The git commit of the task set this scorer scores against (read once)."""
        if self._task_set_ref is None:
            self._task_set_ref = task_set_commit(self.task_set.root)
        return self._task_set_ref

    def judge(self, task_id: str) -> TaskJudge:
        """The task's judge; :class:`CtbError` when the task set has no such task."""
        return self.judges.judge(task_id)

    def loaded(self, task_id: str) -> tuple[TaskRef, TaskSpec]:
        """The task's ref and agent-visible spec as the judge read them (for the replay engine)."""
        return self.judges.loaded(task_id)

    def record(self, judge: TaskJudge, result: ResultLine | None, trajectory: Iterable[Call]) -> TaskRecord:
        """One task's :class:`TaskRecord`; ``trajectory`` yields (device, canonical, command, outcome)."""
        prediction: ParsedAnswer | None = None
        usage = TaskUsage()
        if result is not None:
            usage = TaskUsage(result.rounds, result.latency_s, result.input_tokens, result.output_tokens)
            prediction = result_prediction(judge, result)
        return judge.record(prediction, judge.executed(trajectory), usage)

    @full_collections_deferred()  # the scores it makes all last: see ctbench.collector
    def score_folder(
        self, run_dir: Path | str, progress: Callable[[int, int], None] | None = None
    ) -> ScoredRun:
        """Read and score every task of a run folder (see the module docstring for the rules)."""
        from ctbench.replay.trajectory import BadLine, iter_trajectory

        run_dir = Path(run_dir)
        info, warnings = read_run_info(run_dir)
        by_key, more = read_trial_results(run_dir)
        warnings.extend(more)
        scored = self.task_set_ref
        if (
            info.task_set_commit not in (None, "none")
            and scored.commit != "none"
            and info.task_set_commit != scored.commit
        ):
            warnings.append(
                f"scored against task-set commit {scored.commit[:12]}, but the run was made on "
                f"{str(info.task_set_commit)[:12]}: statements, recordings or gold may differ"
            )
        folder = RunFolder(run_dir)
        seen_trials = max((t for _, t in by_key), default=1)
        if seen_trials > info.trials:
            warnings.append(
                f"{RESULTS_FILE} has lines of trial {seen_trials} but run.yaml asks for {info.trials} "
                f"trial(s); trials above {info.trials} are ignored"
            )
        trials = info.trials
        results = {tid: v for (tid, trial), v in by_key.items() if trial == 1}
        selected = list(info.tasks) if info.tasks is not None else []
        task_ids = list(dict.fromkeys([*selected, *sorted({tid for tid, _ in by_key})]))
        unknown = []
        for tid in task_ids:
            try:
                self.judges.judge(tid)
            except TaskNotFound:  # a broken task file is not "unknown": its own error names file and line
                unknown.append(tid)
        if unknown:
            where = [f"{RESULTS_FILE}:{results[t][0]}" if t in results else RUN_FILE for t in unknown[:5]]
            shown = ", ".join(f"{t} ({w})" for t, w in zip(unknown[:5], where, strict=True))
            more_text = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise CtbError(
                f"{run_dir}: {len(unknown)} task id(s) are not in the task set {self.task_set.root}: "
                f"{shown}{more_text}. Score with the task set the run used (--tasks DIR)."
            )
        keys = [(tid, k) for tid in task_ids for k in range(1, trials + 1)]
        missing_keys = [key for key in keys if key not in by_key]
        missing = sorted({t for t, _ in missing_keys})
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            what = "" if trials == 1 else f" (in {len(missing_keys)} of {len(keys)} task-trials)"
            warnings.append(
                f"the run is incomplete: {len(missing)} of {len(task_ids)} selected task(s) have no "
                f"result{what} ({shown}); they count as unanswered (wrong, 0 on every metric)"
            )
        bad_trajectories: list[str] = []
        scores: list[TaskScores] = []
        for i, (tid, trial) in enumerate(keys):
            ctx = self.judges.judge(tid)
            line = by_key.get((tid, trial))
            result = line[1] if line else None
            if result is not None and result.family != ctx.family:
                raise CtbError(
                    f"{folder.results_file}:{line[0] if line else '?'}: task {tid} is a {ctx.family} "
                    f"task in the task set but the result says {result.family!r}"
                )
            calls: list[tuple[str, str | None, str, str]] = []
            path = _trajectory_file(folder, tid, result, trial)
            if path.is_file():
                bad = 0
                first_bad: BadLine | None = None
                for rec in iter_trajectory(path):
                    if isinstance(rec, BadLine):
                        bad += 1
                        first_bad = first_bad or rec
                        continue
                    calls.append((rec.device, rec.canonical, rec.command, rec.outcome.value))
                if first_bad is not None:
                    bad_trajectories.append(
                        f"{_relative(path, folder)}:{first_bad.line}: {first_bad.reason} "
                        f"({bad} unreadable line(s) skipped)"
                    )
            elif result is not None and result.commands:
                bad_trajectories.append(
                    f"{_relative(path, folder)}: missing although the result counts "
                    f"{result.commands} command(s); no evidence is credited"
                )
            task_scores = score_task(self.record(ctx, result, calls), ctx.config)
            scores.append(task_scores if trial == 1 else replace(task_scores, trial=trial))
            if progress is not None:
                progress(i + 1, len(keys))
        if bad_trajectories:
            warnings.append(
                f"{len(bad_trajectories)} trajector(y/ies) had problems: "
                + "; ".join(bad_trajectories[:3])
                + (" ..." if len(bad_trajectories) > 3 else "")
            )
        scores.sort(key=lambda s: (s.family, s.task_id, s.trial))
        hashes = {
            tid: line.content_hash
            for (tid, trial), (_, line) in by_key.items()
            if trial == 1 and line.content_hash
        }
        versions = frozenset(line.harness_version for _, line in by_key.values() if line.harness_version)
        costs = {
            key: attempt_cost(line, info.model, self.prices)
            for key, (_, line) in by_key.items()
            if key[1] <= trials
        }
        warnings.extend(cost_warnings(costs, by_key, info.model, self.prices))
        unfinished: dict[str, list[str]] = {kind: [] for kind in UNFINISHED}
        for tid, trial in keys:
            label = tid if trials == 1 else f"{tid}#{trial}"
            entry = by_key.get((tid, trial))
            if entry is None:
                unfinished["missing"].append(label)
            elif entry[1].is_infrastructure_error:
                unfinished["infrastructure_error"].append(label)
            elif entry[1].status == "timeout":
                unfinished["timeout"].append(label)
        return ScoredRun(
            info=info,
            trial_scores=scores,
            unfinished=unfinished,
            warnings=warnings,
            missing=missing,
            path=run_dir,
            content_hashes=hashes,
            harness_versions=versions or frozenset([info.harness_version] if info.harness_version else []),
            task_set=scored,
            costs=costs,
            prices=self.prices,
            rounds_kinds=frozenset(line.rounds_kind for _, line in by_key.values() if line.rounds_kind),
        )


def cost_warnings(
    costs: Mapping[tuple[str, int], AttemptCost],
    by_key: Mapping[tuple[str, int], tuple[int, ResultLine]],
    model: str | None,
    prices: Prices | None,
) -> list[str]:
    """What a reader of the cost column must know: attempts a price file could not price, and
    reported costs set aside because the price file is in another currency."""
    if prices is None:
        return []
    out: list[str] = []
    unpriced = sorted({k[0] for k, c in costs.items() if c.source == "unknown"})
    if unpriced:
        known = ", ".join(sorted(prices.table.models)[:8])
        out.append(
            f"{len(unpriced)} task(s) have no cost: no reported cost and no price for model {model!r} in "
            f"{prices.name} (its models: {known}), or no token counts ({', '.join(unpriced[:5])}"
            f"{' ...' if len(unpriced) > 5 else ''})"
        )
    if prices.table.currency != REPORTED_CURRENCY:
        set_aside = sum(1 for k in costs if by_key[k][1].cost_usd is not None)
        if set_aside:
            out.append(
                f"{set_aside} reported cost(s) in {REPORTED_CURRENCY} set aside: {prices.name} prices in "
                f"{prices.table.currency}, so every task is priced from its tokens"
            )
    return out


def _relative(path: Path, folder: RunFolder) -> str:
    """A path as shown in scores.json: relative to the run folder, so the file does not change when the
    run folder moves."""
    try:
        return path.resolve().relative_to(folder.path.resolve()).as_posix()
    except ValueError:
        return path.name


def result_prediction(judge: TaskJudge, result: ResultLine) -> ParsedAnswer | None:
    """The prediction of a result line: ``None`` for a timeout or an error (no answer); the parse the
    runner stored when it is the judge's own (same parser fingerprint: parsed once, never again);
    else the text parsed by the task's judge; a stored parse without a fingerprint only when no text
    was kept."""
    if result.status not in ("answered", "unparsable"):
        return None
    stored = judge.reader.stored(result.answer, result.answer_text)
    if stored is not None:
        return stored
    if result.answer_text is not None or result.answer is None:
        return judge.parse(result.answer_text)
    return _stored_answer(result.answer, judge.family)


def _stored_answer(data: Mapping[str, Any], family: str) -> ParsedAnswer | None:
    """A runner's parsed answer, used only when it kept no answer text."""
    try:
        parsed = ParsedAnswer.from_json(data)
    except (KeyError, TypeError, ValueError):
        return None
    return parsed if parsed.family == family else None


@dataclass
class ScoredRun:
    """One run scored: its info, per-task scores (sorted by family and id) and what went wrong.

    ``scores`` has one row per task - with several trials, the task's mean over its trials
    (:func:`ctbench.scoring.trials.task_means`) - so every figure computed from it (summary, standard
    errors, breakdowns, paired comparisons, paper tables) is over tasks, n the number of tasks.
    ``trial_scores`` keeps every task-trial (the per-trial listing and pass@k/pass^k).
    """

    info: RunInfo
    trial_scores: list[TaskScores]
    warnings: list[str]
    missing: list[str]
    path: Path
    unfinished: dict[str, list[str]] = field(default_factory=dict)
    """Kind (:data:`UNFINISHED`) -> the task-trials that ended so (``ID``, or ``ID#K`` for trial K of
    a several-trial run); they score as wrong."""
    content_hashes: dict[str, str] = field(default_factory=dict)
    """Task id -> the content hash its result line recorded (runs made since the run gate)."""
    harness_versions: frozenset[str] = frozenset()
    """Versions the result lines report for the harness (a CLI upgraded mid-run shows two)."""
    task_set: TaskSetRef | None = None
    """The task set it was scored against (commit and dirtiness), recorded in scores.json."""
    costs: dict[tuple[str, int], AttemptCost] = field(default_factory=dict)
    """(task id, trial) -> what its result line cost and where the figure came from (:mod:`.prices`)."""
    prices: Prices | None = None
    rounds_kinds: frozenset[str] = frozenset()
    """What the result lines' ``rounds`` count (model requests, tool turns), as the harness said."""
    scores: list[TaskScores] = field(init=False)

    def __post_init__(self) -> None:
        from ctbench.scoring.trials import task_means  # numpy: loaded when a run is scored, not on import

        self.scores = task_means(self.trial_scores)

    @property
    def incomplete(self) -> bool:
        """Whether any task-trial ended in an infrastructure error or a timeout, or has no result."""
        return bool(self.missing) or any(self.unfinished.values())

    def unfinished_tasks(self, kinds: tuple[str, ...] = ("infrastructure_error", "missing")) -> set[str]:
        """Task ids with a task-trial of one of ``kinds`` (by default: those the agent never got to
        finish, which a paired comparison must not silently count as wrong)."""
        return {label.split("#")[0] for kind in kinds for label in self.unfinished.get(kind, [])} | (
            set(self.missing) if "missing" in kinds else set()
        )

    def restricted(self, keys: set[tuple[str, str]]) -> ScoredRun:
        """The same run on a subset of its tasks (comparisons on common tasks)."""
        ids = {t for _, t in keys}
        return replace(
            self,
            trial_scores=[s for s in self.trial_scores if (s.family, s.task_id) in keys],
            missing=[t for t in self.missing if t in ids],
            unfinished={k: [x for x in v if x.split("#")[0] in ids] for k, v in self.unfinished.items()},
            costs={k: v for k, v in self.costs.items() if k[0] in ids},
        )


# --------------------------------------------------------------------------- scores.json


def unfinished_json(run: ScoredRun) -> dict[str, Any]:
    """scores.json's count of what did not finish: infrastructure errors, timeouts and missing results
    (task-trials), with the ids of each; all of them score as wrong."""
    counts = {UNFINISHED[k]: len(run.unfinished.get(k, [])) for k in UNFINISHED}
    return {**counts, "tasks": {UNFINISHED[k]: list(run.unfinished.get(k, [])) for k in UNFINISHED}}


def task_json(s: TaskScores) -> dict[str, Any]:
    """One task's entry in scores.json: the core's per-task scores plus its strata values."""
    out = s.to_json()
    if s.trial != 1:
        out["trial"] = s.trial
    out["failure_name"] = FAILURE_MODES.get(s.failure) if s.failure else None
    meta = s.meta
    out["meta"] = {k: v for k in _TASK_META if (v := meta.get(k)) is not None}
    return out


def small_strata(breakdowns: Mapping[str, Any]) -> list[str]:
    """``"field=value (n)"`` for every stratum with a family below the minimum size."""
    out: list[str] = []
    for name, bd in breakdowns.items():
        for value, st in bd["strata"].items():
            if st["warning"]:
                counts = "/".join(
                    f"{st[k]} {k[2:]}" for k in st if k.startswith("n_") and k != "n_tasks" and st[k]
                )
                out.append(f"{name}={value} ({counts})")
    return out


def size_warnings(summary: Mapping[str, Any], breakdowns: Mapping[str, Any], min_stratum: int) -> list[str]:
    """The caveats scores.json adds about small samples (after the run's own reading warnings); a
    function of the document's summary and breakdowns, so a reader can tell the two kinds apart."""
    out = []
    for fam in [k for k, v in summary.items() if isinstance(v, Mapping) and "status" in v]:
        n = summary[fam]["n_tasks"]
        if 0 < n < min_stratum:
            out.append(
                f"only {n} {fam} task(s) (< {min_stratum}): standard errors and intervals are too "
                "wide to mean much"
            )
    small = small_strata(breakdowns)
    if small:
        out.append(
            f"{len(small)} stratum/strata have fewer than {min_stratum} tasks of a family; their figures "
            f"are indicative only: {', '.join(small[:6])}{' ...' if len(small) > 6 else ''}"
        )
    return out


def build_scores(
    run: ScoredRun,
    *,
    min_stratum: int,
    n_resamples: int | None = None,
    base_seed: int | None = None,
    workers: int | None = None,
    se: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The scores.json document of one scored run (every figure of the scorecard and the reports).

    ``se`` takes standard errors already computed for this run (a report computes those of all its
    runs in one pass, :func:`ctbench.scoring.stats.standard_errors_many`: the same numbers).
    """
    from ctbench.scoring import stats
    from ctbench.scoring.summary import ScoreTable

    n_resamples = stats.N_RESAMPLES if n_resamples is None else n_resamples
    base_seed = stats.BASE_SEED if base_seed is None else base_seed
    rows = run.scores  # one row per task: a task's mean over its trials
    table = ScoreTable.of(rows)
    summary = table.summarize()
    if se is None:
        se = stats.standard_errors(
            rows, run=run.info.name, n_resamples=n_resamples, base_seed=base_seed, workers=workers
        )
    breakdowns = {name: stats.breakdown(table, key, min_tasks=min_stratum) for name, key in BREAKDOWNS}
    for name, bd in breakdowns.items():
        bd["key"] = name
    warnings = [*run.warnings, *size_warnings(summary, breakdowns, min_stratum)]
    document: dict[str, Any] = {
        "format": SCORES_FORMAT,
        "run": run.info.to_json(),
        "scoring": {
            "ctbench": __version__,
            "n_resamples": n_resamples,
            "base_seed": base_seed,
            "seed_rule": "numpy default_rng(base_seed + crc32('bootstrap:<family>:<metric>')), one index "
            "matrix per task family and metric",
            "min_stratum": min_stratum,
            "task_set_commit": run.task_set.commit if run.task_set else None,
            "task_set_dirty": run.task_set.dirty if run.task_set else None,
        },
        "n_tasks": len(rows),
        "incomplete": run.incomplete,
        "missing_results": list(run.missing),
        "unfinished": unfinished_json(run),
        "warnings": warnings,
        "summary": summary,
        "se": se,
        "failures": {
            "priority": list(PRIORITY),
            "names": dict(FAILURE_MODES),
            "counts": {m: summary["rca"]["failures"][m] for m in sorted(FAILURE_MODES)},
            # by task id; a later trial of a several-trial run as "<task id>#<trial>"
            "tasks": {
                s.task_id if s.trial == 1 else f"{s.task_id}#{s.trial}": s.failure
                for s in run.trial_scores
                if s.family == "rca" and s.failure
            },
        },
        "breakdowns": breakdowns,
        "tasks": [task_json(s) for s in run.trial_scores],
    }
    cost = cost_section(run)
    if cost is not None:  # runs without any cost figure keep the document they always had
        document["cost"] = cost
        for entry, s in zip(document["tasks"], run.trial_scores, strict=True):
            spent = run.costs.get((s.task_id, s.trial), UNKNOWN)
            entry["cost"], entry["cost_source"] = spent.value, spent.source
    if run.info.trials > 1:
        from ctbench.scoring.trials import pass_at_k_section

        document["trials"] = run.info.trials
        document["n_task_trials"] = len(run.trial_scores)
        document["pass_k"] = pass_at_k_section(
            run.trial_scores, run.info.trials, n_resamples=n_resamples, base_seed=base_seed
        )
    return document


def dumps(document: Any) -> str:
    """The one JSON spelling of scores: indented, UTF-8, and strict JSON (an undefined figure is null)."""
    return json.dumps(_finite(document), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def score_run(
    run_dir: Path | str,
    task_set: TaskSet,
    *,
    write: bool = True,
    progress: Callable[[int, int], None] | None = None,
    n_resamples: int | None = None,
    scorer: Scorer | None = None,
    prices: Prices | None = None,
) -> dict[str, Any]:
    """Score a run folder and (by default) write ``RUN/scores.json`` atomically; returns its content.

    This is what ``ctb-eval score`` and the end of ``ctb-eval run`` call.
    """
    scorer = scorer or Scorer(task_set, prices=prices)
    run = scorer.score_folder(run_dir, progress=progress)
    document = build_scores(run, min_stratum=scorer.min_stratum, n_resamples=n_resamples)
    text = dumps(document)
    if write:
        try:
            atomic_write_text(Path(run_dir) / SCORES_FILE, text)
        except OSError as exc:
            raise CtbError(f"{Path(run_dir) / SCORES_FILE}: cannot write: {exc.strerror or exc}") from None
    result: dict[str, Any] = json.loads(text)  # plain JSON values, exactly what the file holds
    return result


def print_scorecard(scores: Mapping[str, Any], file: Any = None) -> None:
    """Print the scorecard of a scores.json document (the runner calls this at the end of a run)."""
    from ctbench.evaluate.scorecard import print_scorecard as _print

    _print(scores, file=file)
