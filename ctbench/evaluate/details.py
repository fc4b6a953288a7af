"""What one agent did on one task, laid out for people: the viewer, the HTML drill-down and the exports.

A run folder keeps what happened as data (the result line, the trajectory, the agent's log), and
scores.json keeps the verdict; neither is readable as a story. :func:`task_detail` joins them with the
task set into one :class:`TaskDetail`: the prompt, the parsed answer entry by entry beside the gold
(what matched, what did not, the lines that could not be read), the trajectory step by step with the
output as the device printed it, the golden actions marked covered or missed, and the agent's own log
with the model turns the harness recorded there.

Two decisions worth knowing:

- **The device output is replayed, not stored.** Trajectories record the size of each answer, not its
  bytes (they would double the run folder). Replay is deterministic - the same (device, command) gives
  the same recorded bytes - so a fresh session on the same task reproduces what the agent saw, as long
  as the task set is the one the run used (the run's task-set commit is shown beside it).
- **The log is optional.** ``logs/<ID>.log`` is whatever the agent printed; harness adapters also write
  their CLI's JSON event stream there. Which lines are model turns is the adapter's business: the
  log is read by the ``log_turn`` of the agent the run names (:meth:`Agent.log_turn`: Codex and
  Claude Code read their own events, every agent ctbench's neutral ``{"event": "model_turn"}``), and
  this module sees only the harness-neutral :class:`ModelTurn` values; anything else is shown as
  text. A missing log means "absent", never an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ctbench.answer import Path as AnswerPath
from ctbench.answer import RcaEntry, align_ingress, path_edges, path_line
from ctbench.evaluate.agents.turns import ModelTurn, TurnReader, ctbench_turn, log_turns
from ctbench.evaluate.runfolder import ResultLine, RunFolder
from ctbench.evaluate.score import EXECUTED_OUTCOMES, Scorer, _trajectory_file
from ctbench.evaluate.transcript import TranscriptEntry, read_transcript, transcript_path
from ctbench.scoring.judge import TaskJudge
from ctbench.scoring.metrics import FAMILIES, TaskScores, score_task
from ctbench.scoring.parse import AnswerLink, ParsedAnswer
from ctbench.scoring.topology import link_line

if TYPE_CHECKING:
    from ctbench.model import TaskSpec
    from ctbench.replay.engine import ReplayEngine
    from ctbench.store import TaskRef

LOG_LIMIT = 2_000_000
"""Characters of a log kept for display; a runaway agent can print gigabytes."""


@dataclass(frozen=True)
class Step:
    """One replay call as the agent made it, with what the device answered."""

    seq: int
    t: float
    device: str
    command: str
    canonical: str | None
    outcome: str
    output_bytes: int
    output: str | None = None
    golden: bool = False
    """True when this call covered a golden action (same device and canonical command)."""

    @property
    def executed(self) -> bool:
        return self.outcome in EXECUTED_OUTCOMES


@dataclass(frozen=True)
class EntryCheck:
    """One answer entry (an RCA triple or a path) and how it fares against the other side.

    ``matched`` is the exact match; ``parts`` says which parts matched when it did not (RCA: ``node``,
    ``object``, ``label``; path: the share of its directed edges found on the other side).
    """

    text: str
    matched: bool
    parts: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class GoldenCheck:
    device: str
    command: str
    covered: bool


@dataclass
class TaskDetail:
    task_id: str
    family: str
    result: ResultLine | None
    scores: TaskScores
    prompt: str | None
    predicted: list[EntryCheck]
    gold: list[EntryCheck]
    invalid_lines: list[str]
    steps: list[Step]
    golden: list[GoldenCheck]
    log_text: str | None
    turns: list[ModelTurn] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    transcript: list[TranscriptEntry] = field(default_factory=list)
    """The conversation the harness recorded (``transcripts/<ID>.jsonl``), empty where none was kept."""

    @property
    def answer_text(self) -> str | None:
        return self.result.answer_text if self.result is not None else None

    @property
    def outcome(self) -> str:
        """One word for how the task ended; ``unparsable`` for any answer that could not be read."""
        return outcome_name(self.result, self.scores.status)


def outcome_name(result: ResultLine | None, score_status: str | None = None) -> str:
    """The one name of how a task ended, shared by the scorecard, the viewer and the reports.

    ``unparsable`` covers both an answer with no valid line and no answer at all (the result line's
    own status); a blank answer is not a different outcome, only a different reason.
    """
    if result is None:
        return "missing"
    if result.status == "error":
        return "error"
    if result.status == "timeout":
        return "timeout"
    if score_status in ("unparsable", "empty"):
        return "unparsable"
    return result.status


# --------------------------------------------------------------------------- logs


def display_log(folder: RunFolder, task_id: str, result: ResultLine | None) -> str | None:
    """The agent's log as shown (at most :data:`LOG_LIMIT` characters), or None when there is none
    (the log is optional); the runner's capped reader is ``agent_files.read_log``."""
    path = folder.log_path(task_id, result.trial if result is not None else 1)
    rel = result.log if result is not None else None
    if rel:
        candidate = (folder.path / rel).resolve()
        if candidate.is_relative_to(folder.path.resolve()):
            path = candidate
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            return fh.read(LOG_LIMIT)
    except OSError:
        return None


def turn_reader(folder: RunFolder) -> TurnReader:
    """How the run's agent reads its own log (its adapter's :meth:`Agent.log_turn`); ctbench's
    neutral reading when run.yaml is unreadable or names an agent not installed here."""
    from ctbench.errors import CtbError
    from ctbench.evaluate.agents import agent_class

    try:
        return agent_class(folder.load_config().agent).log_turn
    except (CtbError, OSError):
        return ctbench_turn


# --------------------------------------------------------------------------- answers against the gold


def _rca_checks(mine: Iterable[RcaEntry], other: frozenset[RcaEntry]) -> list[EntryCheck]:
    nodes = {e.node for e in other}
    objects = {(e.node, e.object) for e in other}
    labels = {e.label for e in other}
    return [
        EntryCheck(
            e.line(),
            e in other,
            (
                ("node", e.node in nodes),
                ("object", (e.node, e.object) in objects),
                ("label", e.label in labels),
            ),
        )
        for e in sorted(mine)
    ]


def _path_checks(mine: Iterable[AnswerPath], other: Iterable[AnswerPath]) -> list[EntryCheck]:
    other_paths = {tuple(p) for p in other}
    other_edges = {e for p in other_paths for e in path_edges(p)}
    out = []
    for p in mine:
        edges = path_edges(p)
        hit = sum(1 for e in edges if e in other_edges)
        out.append(
            EntryCheck(
                path_line(p),
                tuple(p) in other_paths,
                (("edges", hit == len(edges) and bool(edges)),),
            )
        )
    return out


def _link_checks(mine: Iterable[AnswerLink], other: frozenset[AnswerLink]) -> list[EntryCheck]:
    """Each link against the other side's: exact (both ends and ports), and whether its two nodes are
    cabled there at all (the node-pair IoU's test)."""
    pairs = {frozenset((a[0], b[0])) for a, b in other}
    return [
        EntryCheck(link_line(x), x in other, (("nodes", frozenset((x[0][0], x[1][0])) in pairs),))
        for x in sorted(mine)
    ]


def _entry_checks(ctx: TaskJudge, mine: frozenset[Any], other: frozenset[Any]) -> list[EntryCheck]:
    """A plug-in family's entries against the other side's, each written as its family writes it."""
    return [
        EntryCheck(
            " ".join(ctx.answer_lines(ParsedAnswer("answered", entries=frozenset([e]), kind=ctx.family))),
            e in other,
            (),
        )
        for e in sorted(mine, key=repr)
    ]


def answer_checks(ctx: TaskJudge, parsed: Any) -> tuple[list[EntryCheck], list[EntryCheck], list[str]]:
    """(predicted entries vs gold, gold entries vs prediction, invalid lines) of one parsed answer."""
    if ctx.family not in FAMILIES:  # a plug-in family: each entry as its answer line, found or not
        gold_set = frozenset(ctx.gold)
        pred_set = frozenset(parsed.entries or ()) if parsed is not None else frozenset()
        return (
            _entry_checks(ctx, pred_set, gold_set),
            _entry_checks(ctx, gold_set, pred_set),
            list(parsed.invalid_lines if parsed else ()),
        )
    if ctx.family == "rca":
        gold = cast(frozenset[RcaEntry], ctx.gold)  # the family says which of the two gold is
        pred = frozenset(parsed.rca or ()) if parsed is not None else frozenset()
        return _rca_checks(pred, gold), _rca_checks(gold, pred), list(parsed.invalid_lines if parsed else ())
    if ctx.family == "topology":
        gold_links = cast(frozenset[AnswerLink], ctx.gold)
        pred_links = frozenset(parsed.links or ()) if parsed is not None else frozenset()
        return (
            _link_checks(pred_links, gold_links),
            _link_checks(gold_links, pred_links),
            list(parsed.invalid_lines if parsed else ()),
        )
    gold_paths = cast(tuple[AnswerPath, ...], ctx.gold)
    pred_paths = align_ingress(tuple(parsed.paths or ()), gold_paths) if parsed is not None else ()
    return (
        _path_checks(pred_paths, gold_paths),
        _path_checks(gold_paths, pred_paths),
        list(parsed.invalid_lines if parsed else ()),
    )


# --------------------------------------------------------------------------- one task


def read_steps(folder: RunFolder, task_id: str, result: ResultLine | None) -> tuple[list[Step], list[str]]:
    """The trajectory of one task as steps (output not filled in), plus warnings for unreadable lines."""
    from ctbench.replay.trajectory import BadLine, iter_trajectory

    path = _trajectory_file(folder, task_id, result, result.trial if result is not None else 1)
    steps: list[Step] = []
    warnings: list[str] = []
    if not path.is_file():
        return steps, warnings
    for rec in iter_trajectory(path):
        if isinstance(rec, BadLine):
            warnings.append(f"{path.name}:{rec.line}: {rec.reason}")
            continue
        steps.append(
            Step(
                seq=rec.seq,
                t=rec.t,
                device=rec.device,
                command=rec.command,
                canonical=rec.canonical,
                outcome=rec.outcome.value,
                output_bytes=rec.output_bytes,
            )
        )
    return steps, warnings


def replay_outputs(
    engine: ReplayEngine,
    task_id: str,
    steps: list[Step],
    cache: dict[tuple[str, str, str], str] | None = None,
    *,
    loaded: tuple[TaskRef, TaskSpec] | None = None,
) -> tuple[list[str | None], str | None]:
    """What the device printed for each step, replayed on a fresh session (see the module docstring).

    ``cache`` keeps answers by (task, device, command) across calls: replay is deterministic, and the
    same command recurs across runs of a task (a report of four runs replays each once)."""
    cache = {} if cache is None else cache
    todo = [s for s in steps if (task_id, s.device, s.command) not in cache]
    problem = None
    if todo:
        try:
            session = engine.open_session(task_id, loaded=loaded)
        except Exception as exc:  # a task that no longer replays still shows its trajectory
            return [
                cache.get((task_id, s.device, s.command)) for s in steps
            ], f"the device output cannot be replayed: {exc}"
        try:
            for s in todo:
                try:
                    cache[(task_id, s.device, s.command)] = session.run(s.device, s.command).with_echo()
                except Exception as exc:
                    problem = problem or f"a call could not be replayed: {exc}"
        finally:
            session.close()
    return [cache.get((task_id, s.device, s.command)) for s in steps], problem


class DetailLoader:
    """Builds :class:`TaskDetail` values for any run against one task set, sharing the scorer's caches
    and one replay engine (so opening many tasks loads each task and dialect once)."""

    def __init__(self, scorer: Scorer) -> None:
        self.scorer = scorer
        self._engine: ReplayEngine | None = None
        self._prompts: dict[str, str | None] = {}
        self._outputs: dict[tuple[str, str, str], str] = {}
        self._readers: dict[Path, TurnReader] = {}

    @property
    def engine(self) -> ReplayEngine:
        if self._engine is None:
            from ctbench.replay.engine import ReplayEngine

            self._engine = ReplayEngine(self.scorer.task_set)
        return self._engine

    def _reader(self, folder: RunFolder) -> TurnReader:
        """The run's :func:`turn_reader`, looked up once per run folder."""
        key = folder.path.resolve()
        if key not in self._readers:
            self._readers[key] = turn_reader(folder)
        return self._readers[key]

    def prompt(self, task_id: str) -> str | None:
        from ctbench.errors import CtbError
        from ctbench.scoring.prompt import prompt_for

        if task_id not in self._prompts:
            try:
                self._prompts[task_id] = prompt_for(self.scorer.task_set, task_id)
            except CtbError:
                self._prompts[task_id] = None
        return self._prompts[task_id]

    def load(
        self,
        run_dir: Path | str,
        task_id: str,
        result: ResultLine | None,
        *,
        with_output: bool = True,
        with_prompt: bool = True,
        scores: TaskScores | None = None,
    ) -> TaskDetail:
        """``scores``: the task's scores when the caller has them (a report scored the run already),
        so they are not computed a second time; they must be of the same run, task and trial."""
        folder = RunFolder(run_dir)
        ctx = self.scorer.judge(task_id)
        steps, warnings = read_steps(folder, task_id, result)
        calls = [(s.device, s.canonical, s.command, s.outcome) for s in steps]
        record = self.scorer.record(ctx, result, calls)
        if scores is None:
            scores = score_task(record, ctx.config)
        executed = set(record.executed_actions)
        marked: list[Step] = []
        outputs: list[str | None] = [None] * len(steps)
        if with_output and steps:
            outputs, problem = replay_outputs(
                self.engine, task_id, steps, self._outputs, loaded=self.scorer.loaded(task_id)
            )
            if problem:
                warnings.append(problem)
        seen: set[tuple[str, str]] = set()
        for s, out in zip(steps, outputs, strict=True):
            golden = False
            if s.executed:
                key = ctx.action_key(s.device, s.canonical or s.command)
                golden = key in ctx.golden_actions and key not in seen
                seen.add(key)
            marked.append(Step(**{**s.__dict__, "output": out, "golden": golden}))
        golden_checks = [GoldenCheck(d, c, (d, c) in executed) for d, c in sorted(ctx.golden_actions)]
        predicted, gold, invalid = answer_checks(ctx, record.prediction)
        log_text = display_log(folder, task_id, result)
        transcript, more = read_transcript(
            transcript_path(folder.path, task_id, result.trial if result else 1)
        )
        warnings += more
        return TaskDetail(
            task_id=task_id,
            family=ctx.family,
            result=result,
            scores=scores,
            prompt=self.prompt(task_id) if with_prompt else None,
            predicted=predicted,
            gold=gold,
            invalid_lines=invalid,
            steps=marked,
            golden=golden_checks,
            log_text=log_text,
            turns=log_turns(log_text, self._reader(folder)) if log_text else [],
            warnings=warnings,
            transcript=transcript,
        )
