"""ctbench tasks as Inspect AI tasks: ``inspect eval ctbench/rca`` (and ``ctbench/path``, ``ctbench/topology``,
``ctbench/all``).

Researchers who compare many models with one agent work inside Inspect; this module lets them run
ctbench's task set there without giving up what makes the numbers ctbench's:

- **The same tools.** Each sample gets a fresh replay session and the three tools every ctbench
  transport exposes (``list_devices``, ``run_command``, ``submit_answer``), with the same names,
  argument schemas and answers (:class:`~ctbench.replay.tools.ReplayTools`). A command the device
  rejects comes back as a tool error, as it does over MCP.
- **The same prompt and the same gate.** The sample input is :func:`~ctbench.scoring.prompt.prompt_for`,
  and only tasks ``ctb-eval run`` would take are samples (approved, valid, unchanged since approval;
  ``-T allow_unreviewed=true`` is the same escape hatch as ``--allow-unreviewed``).
- **Gold never in the sample.** ``Sample.target`` is empty and the metadata holds the task id and
  family only; the gold is read by the scorer, in the evaluating process, from the task set.
- **ctbench's judge.** The scorer parses the answer (the submitted one, else the final message, as the
  runner does) with the one judge every ctbench tool uses (:class:`~ctbench.scoring.judge.Judges`). Its metadata keeps the replay trajectory, so ``ctb-eval import-inspect LOG`` rebuilds a
  run folder in which every call carries the outcome the replay gave, and the paper's paired
  statistics apply to Inspect runs.

Sessions live in a dict owned by the task object (keyed by the sample's uuid), created by the task's
setup step and closed by the scorer; nothing is module-global.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver
from inspect_ai.tool import ToolDef, ToolError, ToolParams

from ctbench.errors import CtbError
from ctbench.replay.engine import ReplayEngine
from ctbench.replay.session import Session
from ctbench.replay.tools import INPUT_SCHEMAS, ReplayTools
from ctbench.store import TaskSet

SCORER_NAME = "ctbench_judge"
"""The scorer's name in an Inspect log; ``ctb-eval import-inspect`` reads the trajectory from it."""

TOOL_DESCRIPTIONS = {
    "list_devices": "List the devices you may query, with vendor, CLI family, type, role and site.",
    "run_command": "Run one read-only CLI command on one device and return its output, as the device prints it.",
    "submit_answer": "Submit your final answer, in the format the task statement asks for. "
    "You may submit again to replace it.",
}


@dataclass
class _Sessions:
    """The replay sessions of one Inspect task, one per running sample."""

    engine: ReplayEngine
    open: dict[str, Session] = field(default_factory=dict)

    def start(self, key: str, task_id: str) -> Session:
        self.end(key)
        session = self.engine.open_session(task_id)
        self.open[key] = session
        return session

    def end(self, key: str) -> Session | None:
        session = self.open.pop(key, None)
        if session is not None:
            session.close()
        return session


def _tool_defs(tools: ReplayTools) -> list[ToolDef]:
    """The three replay tools as Inspect tool definitions, answering through ``tools``."""

    def make(name: str) -> ToolDef:
        async def call(**kwargs: Any) -> str:
            result = tools.call(name, kwargs)
            if result.is_error:
                raise ToolError(result.text)
            return result.text

        schema = INPUT_SCHEMAS[name]
        params = ToolParams.model_validate(
            {"properties": schema["properties"], "required": schema["required"]}
        )
        return ToolDef(call, name=name, description=TOOL_DESCRIPTIONS[name], parameters=params)

    return [make(name) for name in ("list_devices", "run_command", "submit_answer")]


def _samples(
    task_set: TaskSet, family: str | None, select: str | list[str] | None, allow_unreviewed: bool
) -> list[Sample]:
    from ctbench.approval.gate import apply_gate
    from ctbench.evaluate.selection import Selection, select_tasks
    from ctbench.scoring.gold_check import PluginGoldCheck
    from ctbench.scoring.prompt import prompt_for

    # `-T select=A,B` reaches us as a list: Inspect reads task arguments as YAML.
    terms = [select] if isinstance(select, str) else list(select or [])
    expression = " ".join(str(x) for x in (family, *terms) if x)
    candidates = select_tasks(task_set, Selection.parse(expression or None))
    gate = apply_gate(
        task_set,
        [(c.ref, c.spec) for c in candidates],
        allow_unreviewed=allow_unreviewed,
        gold_check=PluginGoldCheck(task_set),
    )
    admitted = {ref.id for ref in gate.admitted}
    samples = []
    for c in candidates:
        if c.id not in admitted:
            continue
        samples.append(
            Sample(
                input=prompt_for(task_set, c.ref, c.spec),
                id=c.id,
                metadata={"task_id": c.id, "family": c.spec.family.value},
            )
        )
    if not samples:
        reasons = "; ".join(gate.skipped_summary()) or "no task matches"
        hint = (
            ""
            if allow_unreviewed
            else " (-T allow_unreviewed=true runs unreviewed tasks, as --allow-unreviewed)"
        )
        raise CtbError(f"{task_set.root}: no task to evaluate: {reasons}{hint}")
    return samples


@solver
def replay_setup(sessions: _Sessions) -> Solver:
    """Open the sample's replay session and give the model its three tools."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        session = sessions.start(state.uuid, str(state.metadata["task_id"]))
        state.tools = list(_tool_defs(ReplayTools(session)))
        return state

    return solve


def _answer_text(session: Session | None, state: TaskState) -> tuple[str | None, str]:
    """The answer the runner would score: the last submission, else the final message."""
    submitted = session.answer if session is not None else None
    if submitted is not None:
        return submitted.answer, "submit"
    completion = state.output.completion if state.output is not None else ""
    return (completion or None), "final_message"


@scorer(
    metrics={"accuracy": [mean(), stderr()], "loc": [mean()], "evidence_recall": [mean()]}, name=SCORER_NAME
)
def ctbench_judge(task_set: TaskSet, sessions: _Sessions) -> Any:
    """Score a sample with ctbench's own scorer; the replay trajectory goes into the score's metadata."""
    from ctbench.scoring.judge import Judges

    judges = Judges(task_set)

    async def score(state: TaskState, target: Target) -> Score:
        task_id = str(state.metadata["task_id"])
        session = sessions.end(state.uuid)
        text, source = _answer_text(session, state)
        trajectory = [r.model_dump(mode="json") for r in session.trajectory] if session else []
        judge = judges.judge(task_id)
        status = "answered" if judge.parse(text).status == "answered" else "unparsable"
        calls = [(r["device"], r["canonical"], r["command"], r["outcome"]) for r in trajectory]
        scores = judge.judge(text, calls)
        ev = scores.evidence
        recall = ev.covered / ev.golden if ev.golden else 1.0
        return Score(
            value={"accuracy": float(scores.exact), "loc": float(scores.loc), "evidence_recall": recall},
            answer=text,
            explanation=f"{task_id}: {'correct' if scores.exact else 'wrong'} ({scores.status})",
            metadata={
                "task_id": task_id,
                "family": judge.family,
                "answer_source": source,
                "status": status,
                "trajectory": trajectory,
                "scores": scores.to_json(),
            },
        )

    return score


def ctbench_task(
    tasks: str | None = None,
    family: str | None = None,
    select: str | list[str] | None = None,
    allow_unreviewed: bool = False,
    message_limit: int = 100,
) -> Task:
    """An Inspect task over a ctbench task set (``tasks``, default ``$CTBENCH_TASKS`` else ``./tasks``).

    ``select`` takes ``ctb-eval run --select``'s language (``RCA-00*``, ``observability=O2``).
    """
    root = Path(tasks or os.environ.get("CTBENCH_TASKS") or "tasks")
    task_set = TaskSet.open(root)
    sessions = _Sessions(ReplayEngine(task_set))
    return Task(
        dataset=MemoryDataset(
            _samples(task_set, family, select, allow_unreviewed), name=f"ctbench:{root.name}"
        ),
        setup=replay_setup(sessions),
        solver=generate(tool_calls="loop"),
        scorer=ctbench_judge(task_set, sessions),
        message_limit=message_limit,
        metadata={"ctbench_tasks": str(root.resolve()), "ctbench_family": family or "all"},
    )


@task
def rca(
    tasks: str | None = None,
    select: str | list[str] | None = None,
    allow_unreviewed: bool = False,
    message_limit: int = 100,
) -> Task:
    """The task set's root-cause-analysis tasks."""
    return ctbench_task(tasks, "rca", select, allow_unreviewed, message_limit)


@task
def path(
    tasks: str | None = None,
    select: str | list[str] | None = None,
    allow_unreviewed: bool = False,
    message_limit: int = 100,
) -> Task:
    """The task set's path-restoration tasks."""
    return ctbench_task(tasks, "path", select, allow_unreviewed, message_limit)


@task
def topology(
    tasks: str | None = None,
    select: str | list[str] | None = None,
    allow_unreviewed: bool = False,
    message_limit: int = 100,
) -> Task:
    """The task set's topology-restoration tasks (TTAC Track B's third kind: one cable per answer line)."""
    return ctbench_task(tasks, "topology", select, allow_unreviewed, message_limit)


@task(name="all")
def all_tasks(
    tasks: str | None = None,
    select: str | list[str] | None = None,
    allow_unreviewed: bool = False,
    message_limit: int = 100,
) -> Task:
    """Every task of the set, of every family."""
    return ctbench_task(tasks, None, select, allow_unreviewed, message_limit)


def family_task(family: str, title: str) -> Any:
    """The Inspect task of one installed family's tasks, registered as ``ctbench/<family>``.

    ``rca``, ``path`` and ``topology`` are written out above; :mod:`.inspect_registry` makes one of
    these for every other installed family (a plug-in's), so ``inspect eval ctbench/<family>`` names it
    with no edit to ctbench. Its arguments are the built-ins' own.
    """

    def one_family(
        tasks: str | None = None,
        select: str | list[str] | None = None,
        allow_unreviewed: bool = False,
        message_limit: int = 100,
    ) -> Task:
        return ctbench_task(tasks, family, select, allow_unreviewed, message_limit)

    one_family.__name__ = one_family.__qualname__ = family
    one_family.__doc__ = f"The task set's {title} tasks (the {family} family)."
    return task(name=family)(one_family)


def score_metadata(scores: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ctbench judge's metadata of one logged sample's scores, or None when it was not scored by it."""
    found = scores.get(SCORER_NAME)
    meta = getattr(found, "metadata", None) if found is not None else None
    return meta if isinstance(meta, Mapping) else None


__all__ = [
    "SCORER_NAME",
    "all_tasks",
    "ctbench_judge",
    "ctbench_task",
    "family_task",
    "path",
    "rca",
    "score_metadata",
    "topology",
]
