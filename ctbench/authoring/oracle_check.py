"""The oracle check: could a perfect agent solve each task through the same interfaces agents use?

A task is only fair if its intended solution works end to end: every golden action, sent to the replay
engine exactly as an agent would send it, must come back as recorded output (not a permission-denied or
invalid-command answer, which would mean the recording index, the canonical form or the dialect
disagree), and the gold answer, written out in the answer format the statement asks for, must survive
the evaluator's answer parser unchanged (labels that resolve, node names the parser can split, interface
names that normalise back to themselves). Both halves use the real components, so a change in the
dialects, the replay engine or the parser that would silently make a bundled task unsolvable shows up
here first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctbench.answer import Hop
from ctbench.errors import CtbError
from ctbench.model import Family
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

    @property
    def ok(self) -> bool:
        return not self.problems


def gold_answer_text(ts: TaskSet, ref: TaskRef) -> str:
    """The gold answer as an agent would write it: one line per root cause or per path."""
    return "\n".join(ts.load_hidden(ref).gold_answer_lines(ref.family))


def check_task(ts: TaskSet, ref: TaskRef, engine: ReplayEngine | None = None) -> OracleResult:
    """Replay the golden actions and parse the gold answer of one task."""
    from ctbench.evaluate.parse import parse_answer
    from ctbench.replay.engine import ReplayEngine

    engine = engine or ReplayEngine(ts)
    res = OracleResult(task=ref.id)
    hidden = ts.load_hidden(ref)
    task = ts.load_task(ref)
    net = ts.network(task.network)
    devices = net.device_map()
    vendors = ts.vendors

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

    res.answer_lines = hidden.gold_answer_lines(ref.family)
    text = "\n".join(res.answer_lines)
    names = list(devices)

    iface = vendors.normalizer(devices)
    parsed = parse_answer(
        text, ref.family.value, node_names=names, resolve_label=ts.taxonomy.resolve, normalize=iface
    )
    # RCA: (node, object, label) triples; path: the paths as hop tuples. Compared as sets either way.
    expected: set[tuple[object, ...]]
    got: set[tuple[object, ...]]
    if ref.family == Family.RCA:
        expected = {
            (t.node, iface(t.node, t.object), ts.taxonomy.resolve(t.label) or t.label)
            for t in hidden.answer.rca or []
        }
        got = {tuple(e) for e in parsed.rca or ()}
    else:
        expected = {
            tuple(Hop(h.node, None if h.egress is None else iface(h.node, h.egress)) for h in p)
            for p in hidden.gold_paths()
        }
        got = set(parsed.paths or ())
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
            f"the parser reads the gold answer as {sorted(map(str, got))[:3]}, "
            f"not as the gold {sorted(map(str, expected))[:3]}"
        )
    return res


def check_oracle(paths: Sequence[str], report: Report | None = None) -> list[OracleResult]:
    """Run the oracle over the tasks ``paths`` name; problems become errors in ``report`` when given."""
    from ctbench.replay.engine import ReplayEngine

    ts, refs = resolve_targets(paths)
    engine = ReplayEngine(ts)
    results: list[OracleResult] = []
    for ref in refs if refs is not None else ts.refs():
        try:
            res = check_task(ts, ref, engine)
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
