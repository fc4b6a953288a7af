"""The oracle check: could a perfect agent solve each task through the same interfaces agents use?

A task is only fair if its intended solution works end to end: every golden action, sent to the replay
engine exactly as an agent would send it, must come back as recorded output (not a permission-denied or
invalid-command answer, which would mean the recording index, the canonical form or the dialect
disagree), and the gold answer, written out in the answer format the statement asks for, must survive
the judge's answer parser unchanged and score exact (labels that resolve, node names the parser can split, interface
names that normalise back to themselves). Both halves use the real components, so a change in the
dialects, the replay engine or the parser that would silently make a bundled task unsolvable shows up
here first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctbench.errors import CtbError
from ctbench.scoring.judge import Judges
from ctbench.scoring.metrics import FAMILIES
from ctbench.store import TaskRef, TaskSet, set_relative
from ctbench.validation import Finding, Report, Severity, resolve_targets

if TYPE_CHECKING:
    from ctbench.replay.engine import ReplayEngine


@dataclass
class OracleResult:
    """What the oracle saw for one task."""

    task: str
    actions: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    answer_lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    scores: dict[str, Any] | None = None
    """The judge's scores of the gold answer with the golden actions as evidence (when it parses)."""

    @property
    def ok(self) -> bool:
        return not self.problems


def gold_answer_text(ts: TaskSet, ref: TaskRef) -> str:
    """The gold answer as an agent would write it: one line per root cause or per path."""
    return "\n".join(ts.load_hidden(ref).gold_answer_lines(ref.family))


def check_task(
    ts: TaskSet, ref: TaskRef, engine: ReplayEngine | None = None, judges: Judges | None = None
) -> OracleResult:
    """Replay the golden actions and judge the gold answer of one task (with the task's
    :class:`~ctbench.scoring.judge.TaskJudge`, as ``ctb-eval score`` would)."""
    from ctbench.replay.engine import ReplayEngine

    engine = engine or ReplayEngine(ts)
    res = OracleResult(task=ref.id)
    hidden = ts.load_hidden(ref)
    task = ts.load_task(ref)
    with engine.open_session(ref.id) as session:
        for act in hidden.golden_actions:
            obs = session.run(act.device, act.command)
            res.actions += 1
            res.outcomes[obs.outcome.value] = res.outcomes.get(obs.outcome.value, 0) + 1
            if obs.outcome.value != "recorded":
                first = obs.text.strip().splitlines()[-1] if obs.text.strip() else ""
                res.problems.append(
                    f"golden action {act.device} {act.command!r} is answered "
                    f"{obs.outcome.value}: {first[:120]}"
                )

    # The judge every score comes from: its parse of the gold text must be its own gold, and its score
    # of that answer with the golden actions as evidence must be a perfect one.
    judge = (judges or Judges(ts)).judge_of(task, hidden)
    # the gold as the author wrote it; a plug-in family's as the family writes answer lines
    res.answer_lines = hidden.gold_answer_lines(ref.family) if ref.family in FAMILIES else judge.gold_lines()
    res.problems += [f"gold: {p}" for p in judge.reader.kind.gold_problems(judge.gold, judge.devices)]
    parsed = judge.parse("\n".join(res.answer_lines))
    expected = set(judge.gold_lines())
    got = set(judge.answer_lines(parsed))
    if parsed.status != "answered":
        res.problems.append(
            f"the gold answer does not parse ({parsed.status}): {list(parsed.invalid_lines)[:3]}"
        )
    elif parsed.invalid_lines:
        res.problems.append(f"gold answer lines rejected by the parser: {list(parsed.invalid_lines)[:3]}")
    elif parsed.unresolved_lines:
        res.problems.append(
            "gold answer lines name what the task does not know: "
            + "; ".join(f"{line!r} ({why})" for line, why in parsed.unresolved_lines[:3])
        )
    elif got != expected:
        res.problems.append(
            f"the parser reads the gold answer as {sorted(got)[:3]}, not as the gold {sorted(expected)[:3]}"
        )
    else:
        res.scores = judge.score(parsed, judge.golden_actions).to_json()
        if not res.scores["exact"]:
            res.problems.append(f"the judge does not score the gold answer as exact: {res.scores}")
    return res


def check_oracle(paths: Sequence[str], report: Report | None = None) -> list[OracleResult]:
    """Run the oracle over the tasks ``paths`` name; problems become errors in ``report`` when given."""
    from ctbench.replay.engine import ReplayEngine

    ts, refs = resolve_targets(paths)
    engine = ReplayEngine(ts)
    judges = Judges(ts)
    results: list[OracleResult] = []
    for ref in refs if refs is not None else ts.refs():
        try:
            res = check_task(ts, ref, engine, judges)
        except CtbError as exc:
            res = OracleResult(task=ref.id, problems=[f"cannot replay the task: {exc}"])
        results.append(res)
        if report is not None:
            for problem in res.problems:
                report.findings.append(
                    Finding(
                        severity=Severity.ERROR,
                        code="oracle",
                        task=ref.id,
                        file=set_relative(ts.root, ref.hidden_file),
                        message=problem,
                        expected="a task a perfect agent can solve",
                    )
                )
    return results
