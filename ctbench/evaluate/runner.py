"""The runner behind ``ctb-eval run``: every selected task, a fresh replay session each, one agent.

What it guarantees (issue 5, DESIGN.md "Runs and scores"):

- **Isolation.** Each attempt gets a new :class:`~ctbench.replay.session.Session` (its own call
  counter, clock and trajectory file) and, for external agents, a fresh empty workspace.
- **Timeouts that stick.** The attempt is cancelled at ``timeout_s``; adapters that start processes
  end the whole process group before the attempt is recorded as ``timeout``.
- **Honest outcomes.** ``answered`` / ``unparsable`` from the parsed answer; ``timeout``; ``error``
  with ``error_kind`` ``agent`` (the agent crashed or its endpoint refused it - never retried) or
  ``infrastructure`` (the replay backend or the endpoint's availability - retried up to ``retries``
  times, each retry recorded in the result line).
- **Nothing lost, nothing doubled.** A result line is appended and fsynced as each task finishes; a
  task is done exactly when its line exists; a rerun into the same folder skips those and reruns the
  rest, and refuses when the agent, model, options or task-set commit changed unless forced. With
  ``retry_errors`` a resume also runs again the tasks whose last line is an infrastructure error; the
  new line is appended after the old one, and the last line of a task is the one that counts.

The event loop runs agents concurrently (``concurrency`` workers pulling tasks in order); replay calls
are in-memory and fast, and external agents reach the same engine through the HTTP API served from a
background thread for the duration of the run.
"""

from __future__ import annotations

import asyncio
import fnmatch
import re
import shlex
import shutil
import signal
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctbench.errors import CtbError
from ctbench.evaluate.agents import (
    Agent,
    AgentContext,
    AgentError,
    AgentLog,
    AgentOptions,
    AgentResult,
    InfrastructureError,
    make_agent,
)
from ctbench.evaluate.parse import ParsedAnswer, parse_answer
from ctbench.evaluate.progress import NullDisplay, ProgressDisplay, ProgressTracker
from ctbench.evaluate.prompt import PROMPT_VERSION, prompt_for
from ctbench.evaluate.runfolder import (
    HostInfo,
    ResultLine,
    ResumeRecord,
    RetryRecord,
    RunConfig,
    RunFolder,
    RunOptions,
    default_run_name,
    latest_lines,
    task_set_commit,
    utc_now,
)
from ctbench.model import Family, HiddenSpec, Status, TaskSpec
from ctbench.store import TaskRef, TaskSet

DEFAULT_CONCURRENCY = 4
DEFAULT_TIMEOUT_S = 3600.0
DEFAULT_RETRIES = 2
RETRY_BACKOFF_S = 1.0


class RunInterrupted(CtbError):
    """Ctrl-C or SIGTERM: finished tasks are saved, the rest will run on resume."""

    exit_code = 130


# --------------------------------------------------------------------------- selection

_FILTER = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_-]*)\s*(?P<op>!=|<=|>=|=|<|>)\s*(?P<value>.*)$")

VISIBLE_KEYS: dict[str, str] = {
    "id": "id", "family": "family", "status": "status", "network": "network", "tag": "tags",
    "author": "authors",
}
"""Selectable fields of task.yaml: selection key -> attribute."""

METADATA_KEYS: dict[str, str] = {
    "observability": "observability", "category": "categories", "label": "labels",
    "golden_length": "golden_length", "tier": "golden_tier", "h_l": "h_l", "heterogeneity": "heterogeneity",
    "vendors": "vendors", "device_types": "device_types", "path_count": "path_count", "entries": "entries",
    "root_cause_count": "root_cause_count", "chain_length": "chain_length",
    "protocol_complexity": "protocol_complexity",
}
"""Selectable metadata (derived from hidden.yaml by the runner, never shown to agents)."""


@dataclass(frozen=True)
class _Filter:
    key: str
    op: str
    values: tuple[str, ...]

    def matches(self, actual: Any) -> bool:
        items = list(actual) if isinstance(actual, list | tuple | set | frozenset) else [actual]
        items = [i for i in items if i is not None]
        if self.op in ("=", "!="):
            hit = any(_equal(i, v) for i in items for v in self.values)
            return hit if self.op == "=" else not hit
        return any(_compare(i, self.op, v) for i in items for v in self.values)


def _equal(actual: Any, wanted: str) -> bool:
    text = str(actual.value if hasattr(actual, "value") else actual)
    return fnmatch.fnmatchcase(text.casefold(), wanted.casefold())


def _compare(actual: Any, op: str, wanted: str) -> bool:
    try:
        a, w = float(actual), float(wanted)
    except (TypeError, ValueError):
        return False
    return {"<": a < w, "<=": a <= w, ">": a > w, ">=": a >= w}[op]


@dataclass(frozen=True)
class Selection:
    """A parsed ``--select`` expression: id patterns (any may match) and field filters (all must hold).

    Terms are separated by spaces or commas; a term is an id or glob (``RCA-00*``), a family name
    (``rca``, ``path``), or ``key OP value`` with OP one of ``= != < <= > >=`` and ``|`` between
    alternative values (``observability=O2``, ``heterogeneity=high|medium``, ``golden_length>=5``).
    Quote values with spaces: ``"label='static route missing'"``.
    """

    ids: tuple[str, ...] = ()
    filters: tuple[_Filter, ...] = ()
    expression: str | None = None

    @property
    def needs_metadata(self) -> bool:
        return any(f.key in METADATA_KEYS for f in self.filters)

    @classmethod
    def parse(cls, expression: str | None) -> Selection:
        if not expression or not expression.strip():
            return cls()
        try:
            tokens = [t for raw in shlex.split(expression) for t in raw.split(",") if t.strip()]
        except ValueError as exc:
            raise CtbError(f"--select {expression!r}: {exc}") from None
        ids: list[str] = []
        filters: list[_Filter] = []
        for token in tokens:
            m = _FILTER.match(token.strip())
            if m is None:
                if token.lower() in {f.value for f in Family}:
                    filters.append(_Filter("family", "=", (token.lower(),)))
                else:
                    ids.append(token.strip())
                continue
            key = m["key"].lower().replace("-", "_")
            if key not in VISIBLE_KEYS and key not in METADATA_KEYS:
                known = ", ".join(sorted([*VISIBLE_KEYS, *METADATA_KEYS]))
                raise CtbError(f"--select: unknown field {m['key']!r} in {token!r}; known fields: {known}")
            values = tuple(v.strip() for v in m["value"].split("|") if v.strip())
            if not values:
                raise CtbError(f"--select: {token!r} has no value after {m['op']!r}")
            filters.append(_Filter(key, m["op"], values))
        return cls(tuple(ids), tuple(filters), expression)

    def matches(self, spec: TaskSpec, metadata: dict[str, Any] | None) -> bool:
        if self.ids and not any(fnmatch.fnmatchcase(spec.id.casefold(), p.casefold()) for p in self.ids):
            return False
        for f in self.filters:
            if f.key in VISIBLE_KEYS:
                actual = getattr(spec, VISIBLE_KEYS[f.key])
            else:
                actual = (metadata or {}).get(METADATA_KEYS[f.key])
            if not f.matches(actual):
                return False
        return True


@dataclass(frozen=True)
class PlannedTask:
    ref: TaskRef
    spec: TaskSpec

    @property
    def id(self) -> str:
        return self.ref.id


def select_tasks(task_set: TaskSet, selection: Selection, *, all_statuses: bool = False) -> list[PlannedTask]:
    """Approved tasks (or all with ``all_statuses``) that match the selection, in task-set order."""
    chosen: list[PlannedTask] = []
    excluded_by_status: list[str] = []
    for ref in task_set.refs():
        spec = task_set.load_task(ref)
        metadata = None
        if selection.needs_metadata:
            metadata = _metadata(task_set, ref, spec)
        if not selection.matches(spec, metadata):
            continue
        if not all_statuses and spec.status != Status.APPROVED:
            excluded_by_status.append(f"{spec.id} ({spec.status.value})")
            continue
        chosen.append(PlannedTask(ref, spec))
    if not chosen:
        what = f" matching {selection.expression!r}" if selection.expression else ""
        hint = ""
        if excluded_by_status:
            shown = ", ".join(excluded_by_status[:5]) + (" ..." if len(excluded_by_status) > 5 else "")
            hint = f"; not approved: {shown} (add --all-statuses to run them)"
        raise CtbError(f"no task to run{what} in {task_set.root}{hint}")
    return chosen


def _metadata(task_set: TaskSet, ref: TaskRef, spec: TaskSpec) -> dict[str, Any]:
    from ctbench.derived import derive

    hidden = task_set.load_hidden(ref)
    try:
        network = task_set.network(spec.network)
    except CtbError:
        network = None
    derived = derive(spec, hidden, network, task_set.taxonomy, task_set.config).model_dump()
    return derived


# --------------------------------------------------------------------------- answers


class AnswerParser:
    """Parses final answers against a task's network, the taxonomy and the vendor dialects."""

    def __init__(self, task_set: TaskSet) -> None:

        self.task_set = task_set
        self.vendors = task_set.vendors

    def parse(self, spec: TaskSpec, text: str | None) -> ParsedAnswer:
        try:
            network = self.task_set.network(spec.network)
            devices = network.device_map()
        except CtbError:
            devices = {}
        names = list(devices) or list(spec.accessible or [])
        return parse_answer(text, spec.family.value, node_names=names, resolve_label=self.task_set.taxonomy.resolve,
                            normalize=self.vendors.normalizer(devices))


# --------------------------------------------------------------------------- settings and report


@dataclass
class RunSettings:
    """Everything ``ctb-eval run`` was asked to do."""

    agent: str
    model: str | None = None
    tasks: Path | str | None = None
    select: str | None = None
    all_statuses: bool = False
    concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float = DEFAULT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES
    max_rounds: int | None = None
    out: Path | None = None
    force: bool = False
    retry_errors: bool = False
    """On resume, run again the tasks whose last line is an infrastructure error (a new line is appended)."""
    base_url: str | None = None
    agent_cmd: str | None = None
    runs_root: Path = Path("runs")

    def agent_options(self) -> AgentOptions:
        return AgentOptions(model=self.model, base_url=self.base_url, agent_cmd=self.agent_cmd,
                            max_rounds=self.max_rounds, timeout_s=self.timeout_s)

    def run_options(self) -> RunOptions:
        return RunOptions(timeout_s=self.timeout_s, retries=self.retries, max_rounds=self.max_rounds,
                          base_url=self.base_url, agent_cmd=self.agent_cmd, select=self.select,
                          all_statuses=self.all_statuses, prompt_version=PROMPT_VERSION)


@dataclass
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

    def counts(self) -> dict[str, int]:
        selected = set(self.config.tasks)
        out = {"answered": 0, "unparsable": 0, "timeout": 0, "agent error": 0, "infrastructure error": 0}
        for r in latest_lines(self.results).values():  # a task run again counts by its last line
            if r.task_id not in selected:
                continue
            key = r.status if r.status != "error" else f"{r.error_kind or 'agent'} error"
            out[key] = out.get(key, 0) + 1
        return out

    def summary_line(self) -> str:
        c = self.counts()
        parts = ", ".join(f"{v} {k}" for k, v in c.items() if v)
        done = sum(c.values())
        state = "complete" if self.complete else "incomplete"
        return f"{done}/{len(self.config.tasks)} task(s) {state}: {parts or 'nothing run'}; run folder {self.folder}"


# --------------------------------------------------------------------------- the runner


@dataclass
class _Attempt:
    kind: str  # ok | timeout | agent | infrastructure
    result: AgentResult
    error: str | None
    latency_s: float
    commands: int


class Runner:
    """Plan, then execute, one run. ``agent`` may be given directly (a plug-in adapter, a benchmark)."""

    def __init__(self, settings: RunSettings, display: ProgressDisplay | None = None, *,
                 agent: Agent | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.tracker = ProgressTracker(display or NullDisplay(), clock=clock)
        self._agent = agent
        self._clock = clock
        self.task_set: TaskSet | None = None
        self.plan: list[PlannedTask] = []
        self.folder: RunFolder | None = None
        self.config: RunConfig | None = None
        self.finished: set[str] = set()
        self.resumed = False
        self.forced: list[str] = []

    # ----------------------------------------------------------------- planning

    @property
    def agent(self) -> Agent:
        assert self._agent is not None, "prepare() first"
        return self._agent

    def prepare(self) -> RunConfig:
        """Select tasks, check the agent, and open (or resume) the run folder. Takes the folder lock."""
        s = self.settings
        if s.concurrency < 1:
            raise CtbError("--concurrency must be at least 1")
        if s.timeout_s <= 0:
            raise CtbError("--timeout must be a positive number of seconds")
        if s.retries < 0:
            raise CtbError("--retries must be 0 or more")
        self.task_set = ts = TaskSet.open(s.tasks)
        if self._agent is None:
            self._agent = make_agent(s.agent, s.agent_options())
        self.plan = select_tasks(ts, Selection.parse(s.select), all_statuses=s.all_statuses)
        now = utc_now()
        name = default_run_name(s.agent, s.model, now)
        out = Path(s.out) if s.out is not None else Path(s.runs_root) / name
        config = RunConfig(
            name=out.name, agent=s.agent, model=s.model, harness=self.agent.harness,
            harness_version=self.agent.harness_version, options=s.run_options(), concurrency=s.concurrency,
            task_set=task_set_commit(ts.root), tasks=[t.id for t in self.plan], started=now,
            host=HostInfo.current())
        folder = RunFolder(out)
        if not folder.exists() and out.is_dir() and any(p.name != ".lock" for p in out.iterdir()):
            raise CtbError(f"{out}: folder exists and is not a run folder (no run.yaml); choose another --out")
        folder.lock()
        try:
            self.config = self._open_folder(folder, config)
        except BaseException:
            folder.close()
            raise
        self.folder = folder
        return self.config

    def _open_folder(self, folder: RunFolder, config: RunConfig) -> RunConfig:
        if not folder.exists():
            folder.save_config(config)
            return config
        old = folder.load_config()
        diffs = old.differences(config)
        if diffs and not self.settings.force:
            listed = "\n".join(f"  - {d}" for d in diffs)
            raise CtbError(f"{folder.path} was run with different settings:\n{listed}\n"
                           "rerun with the original settings to resume it, choose another --out, or add "
                           "--force to resume anyway (the differences are recorded in run.yaml)")
        scan = folder.read_results()
        if folder.repair(scan):
            self.tracker.note(f"dropped a torn last line ({scan.torn_bytes} bytes) from {folder.results_file}")
        self.finished = scan.finished_ids
        again: set[str] = set()
        if self.settings.retry_errors:
            again = scan.infrastructure_failed_ids() & set(config.tasks)
            if again:
                self.finished -= again
                self.tracker.note(f"running again {len(again)} task(s) whose last attempt ended in an "
                                  "infrastructure error (--retry-errors); their earlier lines stay in "
                                  f"{folder.results_file.name}")
        self.resumed = True
        self.forced = diffs
        record = ResumeRecord(at=config.started, already_done=len(self.finished & set(config.tasks)),
                              forced=bool(diffs), differences=diffs, retried_errors=sorted(again))
        merged = config.model_copy(update={"name": old.name, "started": old.started, "finished": None,
                                           "resumes": [*old.resumes, record]})
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
        loop.set_default_executor(ThreadPoolExecutor(max_workers=min(64, self.settings.concurrency + 4),
                                                     thread_name_prefix="ctb-run-io"))
        main = asyncio.current_task()
        installed = False
        if threading.current_thread() is threading.main_thread() and main is not None:
            try:
                loop.add_signal_handler(signal.SIGTERM, main.cancel)
                installed = True
            except (NotImplementedError, RuntimeError):
                pass
        try:
            return await self.execute()
        except asyncio.CancelledError:
            assert self.folder is not None
            # self.finished is exactly what is saved: resumed lines minus any --retry-errors reruns,
            # plus every line appended since.
            done = len(self.finished & set(self.config.tasks if self.config else []))
            raise RunInterrupted(f"interrupted: {done} of {len(self.plan)} task(s) done and saved in "
                                 f"{self.folder.path}; run the same command with --out {self.folder.path} "
                                 "to finish the rest") from None
        finally:
            if installed:
                loop.remove_signal_handler(signal.SIGTERM)

    async def execute(self) -> RunReport:
        """Run every unfinished task; returns once all are recorded."""
        assert self.folder is not None and self.config is not None and self.task_set is not None
        from ctbench.replay.engine import ReplayEngine

        todo = [t for t in self.plan if t.id not in self.finished]
        self.tracker.start(total=len(self.plan), resumed=len(self.plan) - len(todo),
                           message=f"agent {self.settings.agent}"
                           + (f", model {self.settings.model}" if self.settings.model else "")
                           + f", concurrency {self.settings.concurrency}, folder {self.folder.path}")
        engine = ReplayEngine(self.task_set)
        parser = AnswerParser(self.task_set)
        if todo:
            await asyncio.to_thread(self._warm_up, engine, todo)
        server = None
        if todo and self.agent.needs_http:
            from ctbench.replay.http_server import serve_in_thread

            server = await asyncio.to_thread(serve_in_thread, engine, "127.0.0.1", 0)
        queue: asyncio.Queue[PlannedTask] = asyncio.Queue()
        for t in todo:
            queue.put_nowait(t)

        async def worker() -> None:
            while True:
                try:
                    task = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                line = await self._run_task(task, engine, parser, server)
                assert self.folder is not None
                try:
                    await asyncio.to_thread(self.folder.append_result, line)
                except OSError as exc:
                    raise CtbError(f"{self.folder.results_file}: cannot append the result of {task.id}: "
                                   f"{exc.strerror or exc}") from None
                self.finished.add(task.id)
                self.tracker.task_finished(line)

        try:
            if todo:
                await self.agent.open()
            workers = [asyncio.create_task(worker()) for _ in range(min(self.settings.concurrency, len(todo)))]
            try:
                await asyncio.gather(*workers)
            except BaseException:
                for w in workers:
                    w.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                raise
        finally:
            if todo:
                await self.agent.close()
            if server is not None:
                await asyncio.to_thread(server.stop)
        complete = all(t.id in self.finished for t in self.plan)
        if complete:
            self.config = self.config.model_copy(update={"finished": utc_now()})
            self.folder.save_config(self.config)
        results = self.folder.read_results().lines
        report = RunReport(folder=self.folder.path, config=self.config, results=results, ran=len(todo),
                           skipped=len(self.plan) - len(todo), resumed=self.resumed, complete=complete,
                           differences_forced=self.forced)
        self.tracker.finish(report.summary_line())
        return report

    def _warm_up(self, engine: Any, todo: Sequence[PlannedTask]) -> None:
        """Load every vendor dialect the tasks use before the clock starts, so the first task's
        latency is the agent's, not the parser's start-up."""
        assert self.task_set is not None
        seen: set[str] = set()
        for name in {t.spec.network for t in todo}:
            try:
                network = self.task_set.network(name)
            except CtbError:
                continue  # the task's session will fail and be recorded; not a reason to stop the run
            for device in network.devices:
                if device.os and device.os not in seen:
                    seen.add(device.os)
                    try:
                        engine.dialect(device.os)
                    except Exception:  # an unknown CLI family surfaces on the task, with its name
                        pass

    async def _run_task(self, task: PlannedTask, engine: Any, parser: AnswerParser, server: Any) -> ResultLine:
        assert self.folder is not None
        self.tracker.task_started(task.id)
        started = utc_now()
        retries: list[RetryRecord] = []
        attempt_no = 0
        while True:
            attempt_no += 1
            attempt = await self._attempt(task, attempt_no, engine, server)
            if attempt.kind == "infrastructure" and attempt_no <= self.settings.retries:
                retries.append(RetryRecord(attempt=attempt_no, error=attempt.error or "", at=utc_now()))
                self.tracker.task_retry(task.id, f"attempt {attempt_no}: {attempt.error}")
                await asyncio.sleep(RETRY_BACKOFF_S * attempt_no)
                continue
            break
        res = attempt.result
        line = ResultLine(
            task_id=task.id, family=task.spec.family.value, status="error", rounds=res.rounds,
            latency_s=round(attempt.latency_s, 3), input_tokens=res.input_tokens, output_tokens=res.output_tokens,
            commands=attempt.commands, attempts=attempt_no, retries=retries, started=started, finished=utc_now(),
            trajectory=self.folder.relative(self.folder.trajectory_path(task.id)),
            log=self.folder.relative(self.folder.log_path(task.id)), notes=list(res.notes))
        if attempt.kind == "timeout":
            line.status, line.error = "timeout", attempt.error
        elif attempt.kind in ("agent", "infrastructure"):
            line.status, line.error_kind, line.error = "error", attempt.kind, attempt.error  # type: ignore[assignment]
        else:
            parsed = parser.parse(task.spec, res.answer_text)
            line.answer_text, line.answer_source = res.answer_text, res.answer_source
            line.answer = parsed.to_json()
            line.status = "answered" if parsed.status == "answered" else "unparsable"
            if parsed.status == "empty":
                line.error = "no answer"
            elif parsed.status == "unparsable":
                line.error = f"no valid answer line ({len(parsed.invalid_lines)} invalid)"
        return line

    def _setup(self, task: PlannedTask, attempt_no: int, engine: Any) -> tuple[AgentLog, Any]:
        """Open the raw log and the replay session (file system work: run in a thread).

        Raises ``_SessionFailed`` (with the log open) when the backend cannot serve the task.
        """
        assert self.folder is not None
        log = AgentLog(self.folder.log_path(task.id))
        model = f", model {self.settings.model}" if self.settings.model else ""
        log.line(f"=== {task.id} attempt {attempt_no} at {utc_now().isoformat()} (agent {self.settings.agent}{model}) ===")
        try:
            session = engine.open_session(task.id, trajectory_path=self.folder.trajectory_path(task.id),
                                          loaded=(task.ref, task.spec))  # task.yaml parsed once, by select_tasks
        except Exception as exc:  # the backend could not serve this task
            log.line(f"[ctbench] replay session failed: {type(exc).__name__}: {exc}")
            raise _SessionFailed(log, f"replay session: {exc}") from None
        return log, session

    def _context(self, task: PlannedTask, attempt_no: int, log: AgentLog, session: Any, server: Any,
                 result: AgentResult) -> tuple[AgentContext, Path | None]:
        """Everything the agent gets, and the private workspace to remove afterwards (file system work:
        run in a thread).

        Agents reached over HTTP (``server`` given) are external processes and get a fresh empty
        workspace; in-process agents work in the run folder and leave nothing to remove (``None``).
        """
        assert self.folder is not None and self.task_set is not None
        hidden: HiddenSpec | None = self.task_set.load_hidden(task.ref) if self.agent.needs_hidden else None
        scratch = Path(tempfile.mkdtemp(prefix=f"ctbench-{task.id}-")) if server is not None else None
        ctx = AgentContext(
            task_id=task.id, family=task.spec.family.value, spec=task.spec,
            prompt=prompt_for(self.task_set, task.ref, task.spec), session=session, log=log,
            workdir=scratch or self.folder.path, options=self.settings.agent_options(), attempt=attempt_no,
            hidden=hidden, replay_url=server.url if server is not None else None, result=result)
        return ctx, scratch

    @staticmethod
    def _teardown(log: AgentLog, session: Any, server: Any, workdir: Path | None) -> None:
        if session is not None:
            if server is not None:
                try:
                    server.registry.close(session.id)
                except Exception:  # never registered, or already reaped by the server
                    session.close()
            else:
                session.close()
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
        log.close()

    async def _attempt(self, task: PlannedTask, attempt_no: int, engine: Any, server: Any) -> _Attempt:
        """One try at one task: session, agent, timeout; never raises for agent or backend trouble.

        File system work (logs, trajectories, workspaces) runs in threads so that 32 agents starting
        and finishing at once do not stall each other on a slow disk.
        """
        t0 = self._clock()
        result = AgentResult()
        try:
            log, session = await asyncio.to_thread(self._setup, task, attempt_no, engine)
        except _SessionFailed as failed:
            failed.log.close()
            return _Attempt("infrastructure", result, failed.message, self._clock() - t0, 0)
        # ``server`` is None unless the agent needs HTTP (see execute()).
        workdir: Path | None = None
        try:
            if server is not None:
                server.registry.add(session)
            ctx, workdir = await asyncio.to_thread(self._context, task, attempt_no, log, session, server, result)
            kind, error = "ok", None
            deadline = asyncio.timeout(self.settings.timeout_s)
            try:
                async with deadline:
                    returned = await self.agent.solve(ctx)
                result = returned if returned is not None else ctx.result
            except TimeoutError:
                if deadline.expired():
                    kind, error = "timeout", f"no answer within {self.settings.timeout_s:g}s"
                else:
                    kind, error = "agent", "TimeoutError raised inside the agent"
                result = ctx.result
            except InfrastructureError as exc:
                kind, error, result = "infrastructure", str(exc), ctx.result
            except AgentError as exc:
                kind, error, result = "agent", str(exc), ctx.result
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # an adapter bug or a replay refusal: the agent's failure, not ours
                kind, error, result = "agent", f"{type(exc).__name__}: {exc}", ctx.result
                log.write(traceback.format_exc())
            if kind == "ok" and session.answer is not None:
                # One rule for every adapter: a submission through the replay tools is the answer, over
                # whatever the agent also returned, printed or wrote to a file (the last one counts).
                result.answer_text, result.answer_source = session.answer.answer, "submit"
            if error:
                log.line(f"[ctbench] {kind}: {error}")
            return _Attempt(kind, result, error, self._clock() - t0, session.calls)
        finally:
            await asyncio.to_thread(self._teardown, log, session, server, workdir)


class _SessionFailed(Exception):
    def __init__(self, log: AgentLog, message: str) -> None:
        super().__init__(message)
        self.log = log
        self.message = message


def run_settings_from_config(config: RunConfig, **overrides: Any) -> RunSettings:
    """Settings that resume a run exactly as it was started (``ctb-eval run --resume DIR``)."""
    o = config.options
    settings = RunSettings(agent=config.agent, model=config.model, tasks=config.task_set.path, select=o.select,
                           all_statuses=o.all_statuses, concurrency=config.concurrency, timeout_s=o.timeout_s,
                           retries=o.retries, max_rounds=o.max_rounds, base_url=o.base_url, agent_cmd=o.agent_cmd)
    for key, value in overrides.items():
        if value is not None:
            setattr(settings, key, value)
    return settings


__all__ = [
    "AnswerParser",
    "PlannedTask",
    "RunInterrupted",
    "RunReport",
    "RunSettings",
    "Runner",
    "Selection",
    "run_settings_from_config",
    "select_tasks",
]
