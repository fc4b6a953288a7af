"""The reveal: score a blind answer against the gold with the one judge every score comes from.

A reviewer's blind answer is judged exactly as an agent's would be (same parsing, same
normalisation of labels and interface names, same IoU and evidence definitions), so the reviewers'
blind accuracy is directly comparable with the agents' scores, as the paper's expert baseline is.
Around the numbers it lays out what a reviewer needs to rule on the four criteria: the answer lines
side by side, the golden actions against the commands the reviewer ran, and the authored metadata
against what ctbench derives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ctbench.approval.records import MetadataRow
from ctbench.derived import DECLARED_FIELDS, derive
from ctbench.model import Family, HiddenSpec, Network, TaskSpec
from ctbench.scoring.judge import Judges
from ctbench.scoring.metrics import TaskUsage
from ctbench.scoring.parse import ParsedAnswer
from ctbench.store import TaskSet


@dataclass
class Side:
    """The blind answer and gold as comparable values, plus the raw evaluator scores."""

    parsed: ParsedAnswer
    gold_lines: list[str]
    blind_lines: list[str]
    exact: bool
    scores: dict[str, Any]
    golden_covered: list[list[str]] = field(default_factory=list)
    golden_missed: list[list[str]] = field(default_factory=list)
    extra_commands: list[list[str]] = field(default_factory=list)
    metadata: list[MetadataRow] = field(default_factory=list)


def trajectory_lines(data: bytes | None) -> list[dict[str, Any]]:
    """Trajectory lines (docs/run-folder.md); a torn last line from a crash is skipped."""
    out: list[dict[str, Any]] = []
    for line in (data or b"").decode("utf-8", "replace").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def metadata_against_derived(
    ts: TaskSet, task: TaskSpec, hidden: HiddenSpec, network: Network | None
) -> list[MetadataRow]:
    """Authored (and declared) metadata next to what ctbench derives from the task."""
    d = derive(task, hidden, network, ts.taxonomy, ts.config)
    m = hidden.metadata
    rows: list[MetadataRow] = []
    if task.family == Family.RCA:
        rows.append(
            MetadataRow(field="observability", authored=m.observability.value if m.observability else None)
        )
        rows.append(MetadataRow(field="chain_length", authored=m.chain_length))
        rows.append(
            MetadataRow(
                field="root_cause_count",
                authored=m.root_cause_count,
                derived=d.entries,
                agrees=None if m.root_cause_count is None else m.root_cause_count <= d.entries,
            )
        )
    rows.append(
        MetadataRow(
            field="protocol_mechanisms",
            authored=list(m.protocol_mechanisms),
            derived=d.protocol_complexity,
            agrees=len(dict.fromkeys(m.protocol_mechanisms)) == d.protocol_complexity,
        )
    )
    for name in DECLARED_FIELDS:
        if task.family == Family.RCA and name == "path_count":
            continue
        if task.family == Family.PATH and name in ("categories", "entries"):
            continue
        declared = getattr(m.declared, name)
        derived = getattr(d, name)
        if name == "categories" and declared is not None:
            agrees: bool | None = sorted(set(declared)) == sorted(derived)
        else:
            agrees = None if declared is None else declared == derived
        rows.append(MetadataRow(field=name, authored=declared, derived=derived, agrees=agrees))
    return rows


def judge_blind(
    ts: TaskSet,
    task: TaskSpec,
    hidden: HiddenSpec,
    answer: str,
    trajectory: list[dict[str, Any]],
    *,
    time_spent_s: float | None = None,
    judges: Judges | None = None,
) -> Side:
    """Judge a blind answer with the task's :class:`~ctbench.scoring.judge.TaskJudge`, the judge
    ``ctb-eval score`` uses (same settings, taxonomy and topology), and lay it beside the gold.

    ``judges`` shares the task set's judges between reveals (built from ``ts`` when not given).
    """
    network = ts.network(task.network)
    judge = (judges or Judges(ts)).judge_of(task, hidden)
    calls = [
        (
            str(t["device"]),
            str(t["canonical"]),
            str(t.get("command") or t["canonical"]),
            str(t.get("outcome") or "recorded"),
        )
        for t in trajectory
        if t.get("device") and t.get("canonical")
    ]
    executed = judge.executed(calls)
    parsed = judge.parse(answer)
    scores = judge.score(parsed, executed, TaskUsage(rounds=len(trajectory), latency_s=time_spent_s))
    gold_lines, blind_lines = judge.gold_lines(), judge.answer_lines(parsed)
    golden = judge.golden_actions
    ran = set(executed)
    covered = sorted([list(k) for k in golden if k in ran])
    missed = sorted([list(k) for k in golden if k not in ran])
    extra = sorted({k for k in ran if k not in golden})
    return Side(
        parsed=parsed,
        gold_lines=gold_lines,
        blind_lines=blind_lines,
        exact=bool(scores.exact),
        scores=scores.to_json(),
        golden_covered=covered,
        golden_missed=missed,
        extra_commands=[list(k) for k in extra],
        metadata=metadata_against_derived(ts, task, hidden, network),
    )
