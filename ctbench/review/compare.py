"""The reveal: score a blind answer against the gold with the evaluator's own parser and metrics.

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

from ctbench.answer import Path, RcaEntry, path_line
from ctbench.approval.records import MetadataRow
from ctbench.derived import DECLARED_FIELDS, derive
from ctbench.evaluate.metrics import TaskRecord, Usage, score_task
from ctbench.evaluate.parse import ParsedAnswer, parse_answer
from ctbench.model import Family, HiddenSpec, Network, TaskSpec
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


def read_trajectory(data: bytes | None) -> list[dict[str, Any]]:
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


def executed_actions(trajectory: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (str(t["device"]), str(t["canonical"])) for t in trajectory if t.get("device") and t.get("canonical")
    ]


def metadata_rows(
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


def compare(
    ts: TaskSet,
    task: TaskSpec,
    hidden: HiddenSpec,
    answer: str,
    trajectory: list[dict[str, Any]],
    *,
    time_spent_s: float | None = None,
) -> Side:
    network = ts.network(task.network)
    nodes = [d.name for d in network.devices]
    norm = ts.vendors.normalizer(network.device_map())
    tax = ts.taxonomy
    executed = executed_actions(trajectory)
    usage = Usage(rounds=len(trajectory), latency_s=time_spent_s)
    if task.family == Family.RCA:
        parsed = parse_answer(answer, "rca", node_names=nodes, resolve_label=tax.resolve, normalize=norm)
        gold_rca = frozenset(
            RcaEntry(t.node, norm(t.node, t.object), tax.resolve(t.label) or t.label)
            for t in hidden.answer.rca or []
        )
        gold: frozenset[RcaEntry] | tuple[Path, ...] = gold_rca
        gold_lines = sorted(e.line() for e in gold_rca)
        blind_lines = sorted(e.line() for e in parsed.rca or ())
    else:
        parsed = parse_answer(answer, "path", node_names=nodes, resolve_label=tax.resolve, normalize=norm)
        gold_paths = tuple(
            tuple(h._replace(egress=norm(h.node, h.egress) if h.egress else None) for h in p)
            for p in hidden.gold_paths()
        )
        gold = gold_paths
        gold_lines = [path_line(p) for p in gold_paths]
        blind_lines = [path_line(p) for p in parsed.paths or ()]
    golden = hidden.golden_keys()
    record = TaskRecord(
        task_id=task.id,
        family=task.family.value,
        gold=gold,
        prediction=parsed,
        golden_actions=golden,
        executed_actions=tuple(executed),
        usage=usage,
    )
    scores = score_task(record)
    ran = set(executed)
    covered = sorted([list(k) for k in golden if k in ran])
    missed = sorted([list(k) for k in golden if k not in ran])
    extra = sorted({k for k in executed if k not in golden})
    return Side(
        parsed=parsed,
        gold_lines=gold_lines,
        blind_lines=blind_lines,
        exact=scores.exact,
        scores=scores.to_json(),
        golden_covered=covered,
        golden_missed=missed,
        extra_commands=[list(k) for k in extra],
        metadata=metadata_rows(ts, task, hidden, network),
    )
