"""The runner behind ``ctb-eval run``: plan, gate, hand work units to an executor, record outcomes.

The pipeline (issue 12; docs in DESIGN "The evaluation engine"):

    select (--select)  ->  gate (approved, valid, unchanged since approval)  ->  WorkUnit per
    (task, trial)  ->  Executor (local asyncio pool, ray, a plug-in)  ->  AttemptOutcome  ->  this
    process writes the trajectory, the log, then the result line

What it guarantees:

- **One writer.** Attempts return everything as data (:mod:`ctbench.evaluate.work`); only this
  process writes the run folder, so an attempt may run anywhere and never sees the run folder.
- **Isolation.** Each attempt gets a new replay session and, for external agents, a fresh workspace
  (:mod:`ctbench.evaluate.attempt`).
- **Honest outcomes.** ``answered`` / ``unparsable`` from the parsed answer; ``timeout``; ``error``
  with ``error_kind`` ``agent`` (never retried), ``infrastructure`` (retried up to ``retries`` times,
  each retry recorded in the result line) or ``task`` (the task cannot be served: never retried).
- **Nothing lost, nothing doubled.** A (task, trial) is done exactly when its line is in
  ``results.jsonl`` (appended and fsynced after its trajectory and log are on disk); a rerun into the
  same folder skips those and runs the rest, and refuses when the agent, its options, the model or
  the task-set commit changed unless forced. With ``retry_errors`` a resume also runs again the
  (task, trial)s whose last line is an infrastructure error; the last line of each is what counts.
- **Only what was approved.** The gate (:mod:`ctbench.approval.gate`) lists what it kept out and why;
  every result line carries the task's content hash.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctbench.approval.gate import Skipped, apply_gate, content_hash
from ctbench.errors import CtbError
from ctbench.evaluate.agents import Agent, make_agent
from ctbench.evaluate.progress import NullDisplay, ProgressDisplay, ProgressTracker
from ctbench.evaluate.recorder import Recorder
from ctbench.evaluate.runfolder import (
    CtbenchInfo,
    HostInfo,
    ResultLine,
    ResumeRecord,
    RetryRecord,
    RunConfig,
    RunFolder,
    RunTotals,
    SkippedTask,
    default_run_name,
    latest_by_key,
    task_set_commit,
    trajectory_bytes,
    utc_now,
)
from ctbench.evaluate.selection import PlannedTask, Selection, select_tasks
from ctbench.evaluate.settings import RunSettings
from ctbench.evaluate.transcript import transcript_path
from ctbench.evaluate.work import AttemptOutcome, WorkUnit
from ctbench.model import HiddenSpec, TaskSpec
from ctbench.scoring.gold_check import PluginGoldCheck
from ctbench.scoring.judge import Judges
from ctbench.scoring.parse import ParsedAnswer
from ctbench.scoring.prompt import PROMPT_VERSION, prompt_for
from ctbench.store import TaskSet

if TYPE_CHECKING:
    from ctbench.evaluate.executors import Executor

RETRY_BACKOFF_S = 1.0


class RunFolderFull(CtbError):
    """The run folder's disk is full (``ENOSPC``, ``EDQUOT``): the runner's trouble, never the
    agent's. The attempt is run again (``--retries``); past them the run stops, resumable."""


def _write_error(exc: OSError, what: str) -> CtbError:
    """The error for a failed write to the run folder: a full disk is :class:`RunFolderFull`."""
    text = f"{what}: {exc.strerror or exc}"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return RunFolderFull(
            f"runner: {text} (the run folder's disk is full; free some space, then "
            "ctb-eval run --resume continues)"
        )
    return CtbError(text)


class RunInterrupted(CtbError):
    """Ctrl-C or SIGTERM: finished tasks are saved, the rest will run on resume."""

    exit_code = 130


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


# --------------------------------------------------------------------------- answers


class AnswerParser:
    """Parses final answers with the reader of the one judge (:class:`ctbench.scoring.judge.Judges`):
    the network's node names, the taxonomy and the vendor dialects, from the agent-visible task only."""

    def __init__(self, task_set: TaskSet) -> None:
        self.task_set = task_set
        self.judges = Judges(task_set)

    def parse(self, spec: TaskSpec, text: str | None) -> tuple[ParsedAnswer, dict[str, Any]]:
        """The parse and the record of it a result line stores (parsed once: the scorer takes it)."""
        reader = self.judges.reader(spec)
        parsed = reader.parse(text)
        return parsed, reader.record(parsed, text)


# --------------------------------------------------------------------------- settings and report


@dataclass(repr=False)
class RunReport:
    """What a run left behind: the folder, its configuration and every result line in it."""

    folder: Path
    config: RunConfig
    results: list[ResultLine]
    ran: int
    skipped: int
    resumed: bool
    complete: bool
    differences_forced: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        # short: asyncio formats the run's main task (and so its result, this report) when it puts
        # back the SIGINT handler - every line of a 1,000-task run cost 0.1-0.4 ms per task there
        return (
            f"RunReport({self.folder}, ran={self.ran}, lines={len(self.results)}, complete={self.complete})"
        )

    def counts(self) -> dict[str, int]:
        selected = set(self.config.tasks)
        trials = self.config.settings.trials
        out = {
            "answered": 0,
            "unparsable": 0,
            "timeout": 0,
            "agent error": 0,
            "infrastructure error": 0,
            "task error": 0,
        }
        for (task_id, trial), r in latest_by_key(self.results).items():  # a rerun counts by its last line
            if task_id not in selected or trial > trials:
                continue
            key = r.status if r.status != "error" else f"{r.error_kind or 'agent'} error"
            out[key] = out.get(key, 0) + 1
        return out

    def summary_line(self) -> str:
        c = self.counts()
        parts = ", ".join(f"{v} {k}" for k, v in c.items() if v)
        done = sum(c.values())
        trials = self.config.settings.trials
        state = "complete" if self.complete else "incomplete"
        what = (
            f"{len(self.config.tasks)} task(s)"
            if trials == 1
            else f"{len(self.config.tasks) * trials} task-trial(s) ({len(self.config.tasks)} tasks x {trials})"
        )
        line = f"{done}/{what} {state}: {parts or 'nothing run'}; run folder {self.folder}"
        if c.get("infrastructure error"):  # not the agent's doing: say how to run those tasks again
            line += f"; once the cause is fixed: ctb-eval run --resume {self.folder} --retry-errors"
        return line


def unit_label(task_id: str, trial: int) -> str:
    """How progress names a unit: the task id, with ``#K`` for trials after the first."""
    return task_id if trial == 1 else f"{task_id}#{trial}"


# --------------------------------------------------------------------------- the runner


class Runner:
    """Plan, then execute, one run. ``agent`` may be given directly (a plug-in adapter, a benchmark),
    and so may ``executor`` (an object implementing :class:`~ctbench.evaluate.executors.Executor`)."""

    def __init__(
        self,
        settings: RunSettings,
        display: ProgressDisplay | None = None,
        *,
        agent: Agent | None = None,
        executor: Executor | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.tracker = ProgressTracker(display or NullDisplay(), clock=clock)
        self._agent = agent
        self._executor = executor
        self._clock = clock
        self.task_set: TaskSet | None = None
        self.plan: list[PlannedTask] = []
        self._planned: dict[str, PlannedTask] = {}
        """``plan`` by task id: a finished attempt's task found at once, not by a walk of the plan."""
        self.skipped: list[Skipped] = []
        self.hashes: dict[str, str] = {}
        self.folder: RunFolder | None = None
        self.config: RunConfig | None = None
        self.finished: set[tuple[str, int]] = set()
        self._lines: list[ResultLine] = []
        """Every line of ``results.jsonl``, in file order: read on resume, then each one appended."""
        self.resumed = False
        self.forced: list[str] = []
        self.agent_args: dict[str, Any] = {}
        self._recorder: Recorder | None = None

    # ----------------------------------------------------------------- planning

    @property
    def agent(self) -> Agent:
        assert self._agent is not None, "prepare() first"
        return self._agent

    def keys(self) -> list[tuple[str, int]]:
        """Every (task, trial) the run must have a line for, in run order (trials of a task together)."""
        return [(t.id, k) for t in self.plan for k in range(1, self.settings.trials + 1)]

    def prepare(self) -> RunConfig:
        """Select and gate tasks, check the agent, and open (or resume) the run folder (takes its lock)."""
        s = self.settings
        if s.concurrency < 1:
            raise CtbError("--concurrency must be at least 1")
        if s.agent.timeout_s <= 0:
            raise CtbError("--timeout must be a positive number of seconds")
        if s.retries < 0:
            raise CtbError("--retries must be 0 or more")
        if s.trials < 1:
            raise CtbError("--trials must be at least 1")
        self.task_set = ts = TaskSet.open(s.tasks)
        if self._agent is None:
            self._agent = make_agent(s.agent.agent, s.agent, s.agent.args)
        self.agent_args = self.agent.args.model_dump(mode="json")
        if self._executor is None and s.executor != "local":
            from ctbench.evaluate.executors import make_executor

            # built now, so a misspelt executor option is refused before a run folder exists
            self._executor = make_executor(s.executor, s.executor_options)
        unreadable: list[Skipped] = []
        candidates = select_tasks(ts, Selection.parse(s.select), unreadable)
        gate = apply_gate(
            ts,
            [(c.ref, c.spec) for c in candidates],
            allow_unreviewed=s.allow_unreviewed,
            allow_invalid=s.allow_invalid,
            gold_check=PluginGoldCheck(ts),
        )
        gate.skipped[:0] = unreadable
        admitted = {ref.id for ref in gate.admitted}
        self.plan = [c for c in candidates if c.id in admitted]
        self._planned = {t.id: t for t in self.plan}
        self.skipped = gate.skipped
        for line in gate.skipped_summary():
            self.tracker.note(f"skipped {line}")
        if not self.plan:
            shown = "; ".join(gate.skipped_summary(limit=3))
            raise CtbError(
                f"no task to run: the gate kept out all {len(gate.skipped)} selected task(s) ({shown}). "
                "Run approved tasks that validate, or add --allow-unreviewed to run tasks that are "
                "not approved, never reviewed or changed since approval (run.yaml records it)"
            )
        self.hashes = {t.id: content_hash(t.ref.path, self.task_set) for t in self.plan}
        sandbox = self._sandbox_mode()
        now = utc_now()
        name = default_run_name(s.agent.agent, s.agent.model, now)
        out = Path(s.out) if s.out is not None else Path(s.runs_root) / name
        config = RunConfig(
            name=out.name,
            harness=self.agent.harness,
            harness_version=self.agent.harness_version,
            prompt_version=PROMPT_VERSION,
            # recorded: the agent's validated args and the sandbox it really ran in (only a bubblewrap
            # sandbox has a network of its own); RunConfig keeps them without invocation or secrets
            settings=s.updated(
                agent_args=self.agent_args,
                sandbox=sandbox,
                sandbox_network=s.agent.sandbox.network if sandbox == "bwrap" else "host",
            ),
            task_set=task_set_commit(ts.root),
            tasks=[t.id for t in self.plan],
            started=now,
            host=HostInfo.current(),
            skipped=[SkippedTask(task_id=k.task_id, reason=k.reason) for k in gate.skipped],
            unreviewed=gate.unreviewed_admitted,
            ctbench=CtbenchInfo.current(),
            reasoning_effort=_text_or_none(self.agent_args.get("reasoning_effort")),
        )
        folder = RunFolder(out)
        if not folder.exists() and out.is_dir() and any(p.name != ".lock" for p in out.iterdir()):
            raise CtbError(
                f"{out}: folder exists and is not a run folder (no run.yaml); choose another --out"
            )
        folder.lock()
        try:
            self.config = self._open_folder(folder, config)
        except BaseException:
            folder.close()
            raise
        self.folder = folder
        return self.config

    def _sandbox_mode(self) -> str:
        """What run.yaml records: in-process agents need no sandbox; external ones get what was asked."""
        if not self.agent.needs_http:
            return "in-process"
        agent = self.settings.agent
        if agent.sandbox.mode == "in-process":
            raise CtbError(
                f"sandbox in-process is what run.yaml records for built-in agents; {agent.agent} runs "
                "a process: choose --sandbox auto, bwrap or none"
            )
        if agent.sandbox.mode in ("auto", "bwrap"):
            from ctbench.evaluate.sandbox import require_bwrap

            require_bwrap(agent.sandbox.mode, agent.sandbox.network)
            sandbox = agent.sandbox.model_copy(update={"mode": "bwrap"})
            self.settings.agent = agent.model_copy(update={"sandbox": sandbox})
        return self.settings.agent.sandbox.mode

    def _open_folder(self, folder: RunFolder, config: RunConfig) -> RunConfig:
        if not folder.exists():
            folder.save_config(config)
            return config
        old = folder.load_config()
        diffs = old.differences(config)
        if diffs and not self.settings.force:
            listed = "\n".join(f"  - {d}" for d in diffs)
            raise CtbError(
                f"{folder.path} was run with different settings:\n{listed}\n"
                "rerun with the original settings to resume it, choose another --out, or add "
                "--force to resume anyway (the differences are recorded in run.yaml)"
            )
        scan = folder.read_results()
        if folder.repair(scan):
            self.tracker.note(
                f"dropped a torn last line ({scan.torn_bytes} bytes) from {folder.results_file}"
            )
        self.finished = scan.finished_keys
        self._lines = list(scan.lines)
        wanted = set(self.keys())
        again: set[tuple[str, int]] = set()
        if self.settings.retry_errors:
            again = scan.infrastructure_failed_keys() & wanted
            if again:
                self.finished -= again
                self.tracker.note(
                    f"running again {len(again)} task(s) whose last attempt ended in an "
                    "infrastructure error (--retry-errors); their earlier lines stay in "
                    f"{folder.results_file.name}"
                )
        self.resumed = True
        self.forced = diffs
        record = ResumeRecord(
            at=config.started,
            already_done=len(self.finished & wanted),
            forced=bool(diffs),
            differences=diffs,
            retried_errors=sorted(unit_label(t, k) for t, k in again),
        )
        merged = config.model_copy(
            update={
                "name": old.name,
                "started": old.started,
                "finished": None,
                "resumes": [*old.resumes, record],
                "totals": old.totals,
                "ctbench": old.ctbench or config.ctbench,
            }
        )
        folder.save_config(merged)
        return merged

    # ----------------------------------------------------------------- executing

    def run(self) -> RunReport:
        """Prepare (unless done) and execute in a fresh event loop; always releases the folder."""
        if self.folder is None:
            self.prepare()
        try:
            return asyncio.run(self._main())
        finally:
            assert self.folder is not None
            self.folder.close()

    async def _main(self) -> RunReport:
        loop = asyncio.get_running_loop()
        # File-system work of every running task goes through the default executor; size it for the
        # concurrency so 32 agents finishing at once do not queue behind the 6 threads of a 2-core box.
        loop.set_default_executor(
            ThreadPoolExecutor(
                max_workers=min(64, self.settings.concurrency + 4), thread_name_prefix="ctb-run-io"
            )
        )
        main = asyncio.current_task()
        installed = False
        if threading.current_thread() is threading.main_thread() and main is not None:
            try:
                loop.add_signal_handler(signal.SIGTERM, main.cancel)
                installed = True
            except (NotImplementedError, RuntimeError):
                pass
        assert self.folder is not None
        # finished attempts are written by a process of their own (the recorder's writer)
        self._recorder = recorder = Recorder(self.folder, _write_error)
        try:
            return await self.execute()
        except asyncio.CancelledError:
            assert self.folder is not None
            # self.finished is exactly what is saved: resumed lines minus any --retry-errors reruns,
            # plus every line appended since.
            wanted = set(self.keys())
            done = len(self.finished & wanted)
            raise RunInterrupted(
                f"interrupted: {done} of {len(wanted)} task(s) done and saved in "
                f"{self.folder.path}; run the same command with --out {self.folder.path} "
                "to finish the rest"
            ) from None
        finally:
            if installed:
                loop.remove_signal_handler(signal.SIGTERM)
            self._recorder = None
            await recorder.aclose()  # every write begun has ended (the driver waited for them)

    def units(self, todo: Sequence[tuple[str, int]]) -> list[WorkUnit]:
        """The first attempt of every (task, trial) to run; the gold only for an agent entitled to it."""
        assert self.task_set is not None
        by_id = {t.id: t for t in self.plan}
        settings = self.settings.agent.model_copy(update={"args": self.agent_args})
        prompts: dict[str, str] = {}
        gold: dict[str, HiddenSpec] = {}
        out = []
        for task_id, trial in todo:
            task = by_id[task_id]
            if task_id not in prompts:
                prompts[task_id] = prompt_for(self.task_set, task.ref, task.spec)
                if self.agent.needs_hidden:
                    gold[task_id] = self.task_set.load_hidden(task.ref)
            out.append(
                WorkUnit(
                    task_id=task_id,
                    family=task.spec.family.value,
                    trial=trial,
                    content_hash=self.hashes[task_id],
                    prompt=prompts[task_id],
                    settings=settings,
                    gold=gold.get(task_id),
                )
            )
        return out

    async def execute(self) -> RunReport:
        """Run every unfinished (task, trial) through the executor; returns once all are recorded."""
        assert self.folder is not None and self.config is not None and self.task_set is not None
        from ctbench.evaluate.attempt import sweep_stale_workspaces
        from ctbench.evaluate.executors import ExecutionContext, make_executor

        todo = [k for k in self.keys() if k not in self.finished]
        total = len(self.keys())
        s = self.settings
        began = time.monotonic()
        self.tracker.start(
            total=total,
            resumed=total - len(todo),
            message=f"agent {s.agent.agent}"
            + (f", model {s.agent.model}" if s.agent.model else "")
            + (f", {s.trials} trials" if s.trials > 1 else "")
            + f", concurrency {s.concurrency}"
            + (f", executor {s.executor}" if s.executor != "local" else "")
            + f", folder {self.folder.path}",
        )
        if todo:
            await asyncio.to_thread(sweep_stale_workspaces)
            parser = AnswerParser(self.task_set)
            units = await asyncio.to_thread(self.units, todo)
            executor = self._executor or make_executor(s.executor, s.executor_options)
            ctx = ExecutionContext(
                task_set=self.task_set,
                settings=units[0].settings,
                concurrency=s.concurrency,
                task_ids=sorted({t for t, _ in todo}),
                agent=self._agent,
                options=dict(s.executor_options),
                loaded={t.id: (t.ref, t.spec) for t in self.plan},
            )
            await executor.start(ctx)
            freeze = gc.get_freeze_count() == 0  # never thaw what a caller of ours froze
            if freeze:
                gc.freeze()  # see _drive's note: what exists now outlives every attempt
            try:
                await self._drive(executor, units, parser)
            except BaseException:
                await asyncio.shield(executor.cancel())
                raise
            finally:
                await asyncio.shield(executor.close())
                if freeze:
                    gc.unfreeze()
        complete = all(k in self.finished for k in self.keys())
        results = list(self._lines)  # what results.jsonl holds now, without reading it back
        before = self.config.totals.wall_s if self.config.totals else 0.0
        totals = RunTotals.of(results, before + time.monotonic() - began)
        update: dict[str, Any] = {"totals": totals}
        if complete:
            update["finished"] = utc_now()
        self.config = self.config.model_copy(update=update)
        self.folder.save_config(self.config)
        report = RunReport(
            folder=self.folder.path,
            config=self.config,
            results=results,
            ran=len(todo),
            skipped=total - len(todo),
            resumed=self.resumed,
            complete=complete,
            differences_forced=self.forced,
        )
        self.tracker.finish(report.summary_line())
        return report

    async def _drive(self, executor: Executor, units: list[WorkUnit], parser: AnswerParser) -> None:
        """Submit, retry infrastructure errors with back-off, and record each final outcome as it comes.

        Outcomes are recorded by the run's :class:`~ctbench.evaluate.recorder.Recorder` (its writer
        process writes the files of every attempt that arrived since its last round, makes them
        durable together, then appends their lines), so 32 attempts that end together cost two
        flushes; a task counts as finished once the writer says its line is written.

        The caller freezes the collector's view of every object that exists when the drive begins
        (the task set, the plan, the units: hundreds of thousands at 1,000 tasks) and thaws it after:
        they live through the whole run, and each full collection would otherwise walk them all
        again (0.7-0.8 ms per task at 1,000 tasks, `tests/bench/bench_runner.py` part 1). Garbage
        among them waits for the thaw; a process that had frozen objects of its own is left as is.
        """
        from ctbench.evaluate.executors import UnitStarted

        pending = {u.key for u in units}
        retries: dict[tuple[str, int], list[RetryRecord]] = {}
        started: dict[tuple[str, int], datetime] = {}
        backoffs: set[asyncio.Task[None]] = set()
        recording: set[asyncio.Task[None]] = set()
        in_flight: set[tuple[str, int]] = set()
        inbox: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        for unit in units:
            await executor.submit(unit)

        async def resubmit(unit: WorkUnit, delay: float) -> None:
            await asyncio.sleep(delay)
            await executor.submit(unit)

        def retry_later(u: WorkUnit) -> None:
            t = asyncio.create_task(resubmit(u.retry(), RETRY_BACKOFF_S * u.attempt))
            backoffs.add(t)
            t.add_done_callback(backoffs.discard)

        async def pump() -> None:
            try:
                async for event in executor.events():
                    inbox.put_nowait(("event", event))
            except BaseException as exc:  # the executor failed: the driver raises it
                inbox.put_nowait(("failed", exc))
                raise

        async def record(outcome: AttemptOutcome) -> None:
            u = outcome.unit
            try:
                line = await self._record(outcome, parser, retries.get(u.key, []), started.get(u.key))
            except Exception as exc:
                inbox.put_nowait(("not recorded", (outcome, exc)))
            else:
                inbox.put_nowait(("recorded", (outcome, line)))

        pumping = asyncio.create_task(pump())
        try:
            while pending:
                what, item = await inbox.get()
                if what == "failed":
                    raise item
                if what == "not recorded":
                    outcome, exc = item
                    u = outcome.unit
                    in_flight.discard(u.key)
                    # the runner's own disk, never the agent's doing: the attempt is run again
                    if not isinstance(exc, RunFolderFull) or u.attempt > self.settings.retries:
                        raise exc
                    retries.setdefault(u.key, []).append(
                        RetryRecord(attempt=u.attempt, error=str(exc), at=utc_now())
                    )
                    self.tracker.task_retry(unit_label(u.task_id, u.trial), f"attempt {u.attempt}: {exc}")
                    retry_later(u)
                    continue
                if what == "recorded":
                    outcome, line = item
                    in_flight.discard(outcome.unit.key)
                    pending.discard(outcome.unit.key)
                    self.finished.add(outcome.unit.key)
                    self._lines.append(line)
                    self.tracker.task_finished(line)
                    continue
                event = item
                if isinstance(event, UnitStarted):
                    u = event.unit
                    started.setdefault(u.key, utc_now())
                    if u.attempt == 1:
                        self.tracker.task_started(unit_label(u.task_id, u.trial))
                    continue
                outcome = event
                u = outcome.unit
                if u.key not in pending or u.key in in_flight:
                    continue  # a late duplicate from an executor that re-ran a lost unit: first one counts
                if outcome.retryable and u.attempt <= self.settings.retries:
                    spent = outcome.usage
                    retries.setdefault(u.key, []).append(
                        RetryRecord(
                            attempt=u.attempt,
                            error=outcome.error or "",
                            at=utc_now(),
                            input_tokens=spent.input_tokens,
                            output_tokens=spent.output_tokens,
                            cached_tokens=spent.cached_tokens,
                            cost_usd=spent.cost_usd,
                        )
                    )
                    self.tracker.task_retry(
                        unit_label(u.task_id, u.trial), f"attempt {u.attempt}: {outcome.error}"
                    )
                    try:
                        await self._save_files(outcome)
                    except RunFolderFull:  # its log is lost; the retry is not
                        pass
                    retry_later(u)
                    continue
                in_flight.add(u.key)
                t = asyncio.create_task(record(outcome))
                recording.add(t)
                t.add_done_callback(recording.discard)
        finally:
            pumping.cancel()
            for t in backoffs:
                t.cancel()
            if recording:  # lines being written are written: an outcome is never half-recorded
                await asyncio.shield(asyncio.gather(*recording, return_exceptions=True))

    async def _save_files(self, outcome: AttemptOutcome) -> None:
        """The files of an attempt that gets no line (it is retried), durable, by the writer process."""
        assert self._recorder is not None
        u = outcome.unit
        ops, _, _ = self._attempt_files(outcome)
        await self._recorder.record(ops, None, f"{u.task_id} (trial {u.trial})")

    def _attempt_files(self, outcome: AttemptOutcome) -> tuple[list[tuple[Any, ...]], Path, Path]:
        """Trajectory, log (and transcript) as the writer's operations, with the trajectory's and the
        log's paths (the result line names them)."""
        assert self.folder is not None
        u = outcome.unit
        traj = self.folder.trajectory_path(u.task_id, u.trial)
        log = self.folder.log_path(u.task_id, u.trial)
        data = outcome.log if not outcome.log or outcome.log.endswith(b"\n") else outcome.log + b"\n"
        ops: list[tuple[Any, ...]] = [
            ("replace", self.folder.relative(traj), trajectory_bytes(outcome.trajectory), 0o666, False),
            ("append", self.folder.relative(log), data),
            # a transcript already there is an earlier attempt's: kept aside even when this one has none
            (
                "replace",
                self.folder.relative(transcript_path(self.folder.path, u.task_id, u.trial)),
                outcome.transcript or None,
                0o640,
                True,
            ),
        ]
        return ops, traj, log

    async def _record(
        self,
        outcome: AttemptOutcome,
        parser: AnswerParser,
        retries: list[RetryRecord],
        started: datetime | None,
    ) -> ResultLine:
        """Have the writer process save the attempt's files, then its result line (the commit point)."""
        assert self._recorder is not None
        u = outcome.unit
        ops, traj, log = self._attempt_files(outcome)
        line = self._result_line(outcome, parser, retries, started, traj, log)
        done = await self._recorder.record(ops, line, f"{u.task_id} (trial {u.trial})")
        assert done is not None
        return done

    def _result_line(
        self,
        outcome: AttemptOutcome,
        parser: AnswerParser,
        retries: list[RetryRecord],
        started: datetime | None,
        traj: Path,
        log: Path,
    ) -> ResultLine:
        assert self.folder is not None
        u, usage = outcome.unit, outcome.usage
        task = self._planned[u.task_id]
        line = ResultLine(
            task_id=u.task_id,
            family=u.family,
            status="error",
            rounds=usage.rounds,
            latency_s=round(outcome.latency_s, 3),
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            commands=outcome.commands,
            attempts=u.attempt,
            retries=retries,
            started=started or utc_now(),
            finished=utc_now(),
            trajectory=self.folder.relative(traj),
            log=self.folder.relative(log),
            notes=list(outcome.notes),
            trial=u.trial,
            content_hash=u.content_hash,
            cached_tokens=usage.cached_tokens,
            cost_usd=usage.cost_usd,
            rounds_kind=usage.rounds_kind,
            harness_version=outcome.harness_version,
            worker=outcome.worker,
            model_reported=usage.model_reported,
            model_reported_source=usage.model_reported_source,
        )
        if outcome.kind == "timeout":
            line.status, line.error = "timeout", outcome.error
        elif outcome.kind in ("agent", "infrastructure", "task"):
            line.status, line.error_kind, line.error = "error", outcome.kind, outcome.error
        else:
            parsed, line.answer = parser.parse(task.spec, outcome.answer_text)
            line.answer_text, line.answer_source = outcome.answer_text, outcome.answer_source
            line.status = "answered" if parsed.status == "answered" else "unparsable"
            if parsed.status == "empty":
                line.error = "no answer"
            elif parsed.status == "unparsable":
                line.error = f"no valid answer line ({len(parsed.invalid_lines)} invalid)"
        return line


__all__ = [
    "AnswerParser",
    "PlannedTask",
    "RunFolderFull",
    "RunInterrupted",
    "RunReport",
    "RunSettings",
    "Runner",
    "Selection",
    "select_tasks",
    "unit_label",
]
