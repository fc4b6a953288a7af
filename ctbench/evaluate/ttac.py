"""TTAC Track B's scoring rules, beside ctbench's metrics (``ctb-eval score --metrics ttac``).

Track B documents exact match; the rest is inferred from its ground truth (docs/trackb.md) and kept
behind switches: every line has all its whitespace deleted, case is kept, a multi-line answer is a
set of lines (order does not count), and the lines of a Phase 1 path gold are ECMP alternatives, any
one of which is right (``paths="any"``; ``"all"`` wants them all). Phase 2 breaks ties by the API
calls made on solved problems; Phase 3 is pass@1 over trials, the fastest correct trial discounted
by its time. The gold is the task's ``reference_answer`` (Track B's ground truth, verbatim) or, for a
task authored in ctbench, its gold rendered as an agent would write it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ctbench.evaluate.runfolder import ResultLine, RunFolder
from ctbench.replay.trackb.layout import question_of, read_sidecar
from ctbench.store import TaskSet

PathsRule = Literal["any", "all"]

TIME_DISCOUNT: tuple[tuple[float, float], ...] = ((300.0, 1.0), (600.0, 0.8), (900.0, 0.6))
"""Phase 3: (runtime up to, in seconds; credit) - 100% under 5 min, 80% to 10, 60% to 15, then 0."""


def answer_lines(text: str | None) -> list[str]:
    """The lines of an answer as Track B compares them: whitespace deleted, empty lines dropped.

    A literal two-character ``\\n`` (how submissions and the ground truth join lines) splits too.
    """
    if not text:
        return []
    out = []
    for line in text.replace("\\n", "\n").splitlines():
        squashed = re.sub(r"\s+", "", line)
        if squashed:
            out.append(squashed)
    return out


_ANSWER_SHAPES = (
    re.compile(r"[\w-]+\([A-Za-z0-9/]+\)\s*->\s*[\w-]+\([A-Za-z0-9/]+\)"),  # Node(port)->Node(port)
    re.compile(r"[\w-]+(?:\s*->\s*[\w-]+){2,}"),  # A->B->C
    re.compile(r"[\w-]+;[^;\n]+;[^;\n]+"),  # node;object;reason
)


def extract_answer(reply: str | None) -> str:
    """The answer Track B's batch script takes from an agent's reply: the lines shaped like answers.

    Its shapes are tried in turn (links, node paths, fault triples); the first that matches any line
    keeps those lines, and a reply with none is taken whole. Tags and prose around the answer go.
    """
    text = (reply or "").strip()
    lines = [ln.strip() for ln in text.splitlines()]
    for shape in _ANSWER_SHAPES:
        kept = [ln for ln in lines if shape.search(ln)]
        if kept:
            return "\n".join(kept)
    return text


def ttac_correct(
    answer: str | None,
    gold: str,
    *,
    alternatives: bool = False,
    paths: PathsRule = "any",
    extract: bool = True,
) -> bool:
    """Track B's verdict on one answer: the set of squashed lines equals the gold's.

    ``extract``: first take the answer lines out of the reply as Track B's batch script does
    (:func:`extract_answer`); a reply it already extracted is unchanged by it.

    ``alternatives``: the gold's lines are alternatives (Phase 1 ECMP paths); under ``paths="any"``
    an answer is right when every line it gives is one of them, under ``"all"`` it must give them all.
    """
    given, wanted = set(answer_lines(extract_answer(answer) if extract else answer)), set(answer_lines(gold))
    if not given or not wanted:
        return False
    if alternatives and paths == "any":
        return given <= wanted
    return given == wanted


def time_credit(seconds: float | None) -> float:
    """Phase 3's credit for a correct run that took ``seconds``."""
    if seconds is None:
        return 0.0
    for limit, credit in TIME_DISCOUNT:
        if seconds < limit:
            return credit
    return 0.0


@dataclass(frozen=True)
class TaskGold:
    """What Track B's rules compare an answer with, for one task."""

    text: str
    alternatives: bool
    question: int | None
    scenario_id: str | None


def task_gold(task_set: TaskSet, task_id: str) -> TaskGold:
    ref = task_set.ref(task_id)
    hidden = task_set.load_hidden(ref)
    side = read_sidecar(ref.path)
    text = hidden.reference_answer.strip() or "\n".join(hidden.gold_answer_lines(ref.family))
    return TaskGold(
        text=text,
        alternatives=bool(side and side.paths_any),
        question=side.question if side else None,
        scenario_id=side.scenario_id if side else None,
    )


def ttac_block(
    lines: Sequence[ResultLine], task_set: TaskSet, *, paths: PathsRule = "any", task_ids: Iterable[str] = ()
) -> dict[str, Any]:
    """The ``ttac`` block of scores.json for the result lines of one run.

    ``task_ids``: the run's tasks (a task with no line counts as unanswered, hence wrong).
    """
    by_task: dict[str, list[ResultLine]] = {}
    for line in lines:
        by_task.setdefault(line.task_id, []).append(line)
    ids = sorted(set(task_ids) | set(by_task))
    tasks: list[dict[str, Any]] = []
    for tid in ids:
        gold = task_gold(task_set, tid)
        trials = sorted(by_task.get(tid, []), key=lambda r: r.trial)
        if not gold.text.strip():
            tasks.append({"task_id": tid, "question": gold.question, "verdict": None, "reason": "no gold"})
            continue
        verdicts = [
            r.status in ("answered", "unparsable")
            and ttac_correct(r.answer_text, gold.text, alternatives=gold.alternatives, paths=paths)
            for r in trials
        ]
        correct = [r for r, ok in zip(trials, verdicts, strict=True) if ok]
        fastest = min((r.latency_s for r in correct if r.latency_s is not None), default=None)
        tasks.append(
            {
                "task_id": tid,
                "question": gold.question,
                "verdict": bool(verdicts) and verdicts[0],
                "trials": len(trials),
                "correct_trials": len(correct),
                "pass_at_1": (len(correct) / len(trials)) if trials else 0.0,
                "api_calls": trials[0].commands if trials else 0,
                "fastest_correct_s": fastest,
                "time_credit": time_credit(fastest) if correct else 0.0,
            }
        )
    scored = [t for t in tasks if t["verdict"] is not None]
    solved = [t for t in scored if t["verdict"]]
    n = len(scored)
    return {
        "rules": {
            "whitespace": "deleted per line",
            "case": "kept",
            "lines": "compared as a set",
            "alternatives": paths,
        },
        "n_tasks": n,
        "unscored": len(tasks) - n,
        "correct": len(solved),
        "accuracy": (len(solved) / n) if n else None,
        "api_calls_on_solved": sum(int(t["api_calls"] or 0) for t in solved),
        "pass_at_1": (sum(t["pass_at_1"] for t in scored) / n) if n else None,
        "time_discounted": (sum(t["time_credit"] for t in scored) / n) if n else None,
        "tasks": tasks,
    }


def ttac_for_run(run_dir: Path, task_set: TaskSet, *, paths: PathsRule = "any") -> dict[str, Any]:
    """The ``ttac`` block for the run folder ``run_dir``."""
    folder = RunFolder(run_dir)
    config = folder.load_config()
    return ttac_block(folder.read_results().lines, task_set, paths=paths, task_ids=config.tasks or ())


def add_ttac_block(
    run_dir: Path, task_set: TaskSet, scores: dict[str, Any], *, paths: PathsRule
) -> dict[str, Any]:
    """``scores`` with its ``ttac`` block, written back to ``RUN/scores.json`` (atomically)."""
    from ctbench.evaluate.score import SCORES_FILE, dumps
    from ctbench.yamlio import atomic_write_text

    out = {**scores, "ttac": ttac_for_run(run_dir, task_set, paths=paths)}
    atomic_write_text(run_dir / SCORES_FILE, dumps(out))
    return out


def ttac_lines(block: dict[str, Any]) -> list[str]:
    """The ttac block as the scorecard prints it."""
    if block.get("accuracy") is None:
        return [f"TTAC Track B rules: no task with a gold ({block.get('unscored', 0)} unscored)"]
    line = (
        f"TTAC Track B rules: accuracy {block['accuracy']:.3f} ({block['correct']}/{block['n_tasks']}), "
        f"API calls on solved {block['api_calls_on_solved']}, pass@1 {block['pass_at_1']:.3f}, "
        f"time-discounted {block['time_discounted']:.3f}"
    )
    return [line] + ([f"  {block['unscored']} task(s) without gold, not scored"] if block["unscored"] else [])


def question_ids(task_set: TaskSet, task_id: str) -> tuple[int | str, str]:
    """(Track B question id, scenario id) of a task; a native task keeps its own id for both."""
    gold = task_gold(task_set, task_id)
    q = gold.question if gold.question is not None else (question_of(task_id) or (0, None))[1]
    return (q if q is not None else task_id), gold.scenario_id or task_id
