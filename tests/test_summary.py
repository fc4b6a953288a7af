"""Column-wise summaries against a straightforward per-task computation, on random scores and subsets.

The reference below walks the TaskScores objects one by one with the paper's definitions, as the first
implementation did; the columnar :class:`ScoreTable` must give the same JSON, byte for byte, for any
subset and any order (it serves every stratum of a report from one table).
"""

from __future__ import annotations

import json
import math
import random
import statistics
from typing import Any

import numpy as np
import pytest

from ctbench.scoring.failures import FAILURE_MODES
from ctbench.scoring.metrics import TASK_STATUSES, EntryMatchScores, EvidenceCounts, TaskScores, TaskUsage
from ctbench.scoring.stats import breakdown
from ctbench.scoring.summary import ScoreTable, _sum, summarize


def _mean(values: list[float]) -> float | None:
    return None if not values else math.fsum(values) / len(values)


def _div(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def _evidence(rows: list[TaskScores]) -> dict[str, Any]:
    c, g, a = (
        sum(s.evidence.covered for s in rows),
        sum(s.evidence.golden for s in rows),
        sum(s.evidence.executed for s in rows),
    )
    return {"covered": c, "golden": g, "executed": a, "coverage": _div(c, g), "f1": _div(2 * c, g + a)}


def _on_correct(rows: list[TaskScores]) -> dict[str, Any]:
    correct = [s for s in rows if s.exact]
    inc = sum(1 for s in correct if s.evidence.covered < s.evidence.golden)
    c, g = sum(s.evidence.covered for s in correct), sum(s.evidence.golden for s in correct)
    return {
        "n_correct": len(correct),
        "incomplete": inc,
        "incomplete_freq": _div(inc, len(correct)),
        "covered": c,
        "golden": g,
        "coverage": _div(c, g),
    }


def _entry(rows: list[TaskScores], attr: str) -> dict[str, Any]:
    if any(s.entries is None or getattr(s.entries, attr) is None for s in rows):
        return {"macro": None, "micro": None}
    values = [getattr(s.entries, attr) for s in rows]
    golds = [s.entries.n_gold for s in rows]  # type: ignore[union-attr]
    return {
        "macro": _mean([v / n for v, n in zip(values, golds, strict=True) if n]),
        "micro": _div(math.fsum(values), sum(golds)),
    }


def _efficiency(rows: list[TaskScores]) -> dict[str, Any]:
    out = {}
    for name in ("rounds", "latency_s", "input_tokens", "output_tokens", "total_tokens"):
        known = [float(v) for s in rows if (v := getattr(s.usage, name)) is not None]
        out[name] = {
            "n": len(known),
            "missing": len(rows) - len(known),
            "mean": _mean(known),
            "median": statistics.median(known) if known else None,
        }
    return out


def _head(rows: list[TaskScores]) -> dict[str, Any]:
    return {
        "n_tasks": len(rows),
        "status": {st: sum(1 for s in rows if s.status == st) for st in TASK_STATUSES},
        "accuracy": _mean([float(s.exact) for s in rows]),
        "n_correct": sum(1 for s in rows if s.exact),
        "loc_iou": _mean([s.loc for s in rows]),
    }


def reference(scores: list[TaskScores]) -> dict[str, Any]:
    rca = [s for s in scores if s.family == "rca"]
    path = [s for s in scores if s.family == "path"]
    topo = [s for s in scores if s.family == "topology"]
    wrong = [s for s in rca if not s.exact]
    inter, union = sum(s.edges_intersection for s in path), sum(s.edges_union for s in path)
    return {
        "n_tasks": len(scores),
        "rca": {
            **_head(rca),
            "id_iou": _mean([s.ident or 0.0 for s in rca]),
            "triplet_iou": _mean([s.triplet or 0.0 for s in rca]),
            "evidence": _evidence(rca),
            "evidence_on_correct": _on_correct(rca),
            "entry_match": {
                "n_gold_entries": sum(s.entries.n_gold for s in rca if s.entries),
                **{
                    a: _entry(rca, a)
                    for a in ("id_exact", "id_hierarchical", "loc_exact", "loc_hierarchical")
                },
                "n_tasks_without_topology": sum(1 for s in rca if not s.has_topology),
            },
            "failures": {
                "n_wrong": len(wrong),
                **{m: sum(1 for s in wrong if s.failure == m) for m in sorted(FAILURE_MODES)},
            },
        },
        "path": {
            **_head(path),
            "rest_iou": _mean([s.rest or 0.0 for s in path]),
            "sequence_iou": _mean([s.sequence or 0.0 for s in path]),
            "micro_edge_iou": _div(inter, union),
            "edges": {"intersection": inter, "union": union},
            "evidence": _evidence(path),
            "evidence_on_correct": _on_correct(path),
        },
        "topology": {
            **_head(topo),
            "link_iou": _mean([s.link_iou or 0.0 for s in topo]),
            "evidence": _evidence(topo),
            "evidence_on_correct": _on_correct(topo),
        },
        "efficiency": {
            "all": _efficiency(rca + path + topo),
            "rca": _efficiency(rca),
            "path": _efficiency(path),
            "topology": _efficiency(topo),
        },
    }


def random_scores(seed: int, n: int, *, taxonomy: bool = True, entries: bool = True) -> list[TaskScores]:
    rng = random.Random(seed)

    def maybe(value: float) -> float | None:
        return None if rng.random() < 0.15 else value

    out = []
    for i in range(n):
        g = rng.randint(0, 6)
        ev = EvidenceCounts(rng.randint(0, g), g, rng.randint(0, 9))
        usage = TaskUsage(
            maybe(rng.randint(1, 40)),
            maybe(round(rng.uniform(1, 900), 3)),  # type: ignore[arg-type]
            maybe(rng.randint(100, 400_000)),
            maybe(rng.randint(10, 9_000)),
        )  # type: ignore[arg-type]
        exact = rng.random() < 0.4
        status = rng.choice(TASK_STATUSES)
        meta = {"obs": rng.choice(["O1", "O2"]), "cats": rng.sample(["C1", "C2", "C3"], rng.randint(0, 2))}
        if rng.random() < 0.55:
            n_gold = rng.randint(0, 3)
            em = (
                EntryMatchScores(
                    n_gold,
                    rng.randint(0, n_gold) * 1.0,
                    rng.uniform(0, n_gold) if taxonomy else None,
                    rng.uniform(0, n_gold),
                    rng.uniform(0, n_gold),
                )
                if entries or rng.random() < 0.9
                else None
            )
            out.append(
                TaskScores(
                    f"r{i}",
                    "rca",
                    status,
                    exact,
                    rng.random(),
                    ev,
                    usage,
                    meta,
                    ident=rng.choice([None, rng.random()]),
                    triplet=rng.random(),
                    entries=em,
                    has_topology=rng.random() < 0.7,
                    failure=None if exact else rng.choice([None, *FAILURE_MODES]),
                )
            )
        elif rng.random() < 0.25:
            out.append(
                TaskScores(
                    f"t{i}", "topology", status, exact, rng.random(), ev, usage, meta, link_iou=rng.random()
                )
            )
        else:
            u = rng.randint(0, 12)
            out.append(
                TaskScores(
                    f"p{i}",
                    "path",
                    status,
                    exact,
                    rng.random(),
                    ev,
                    usage,
                    meta,
                    rest=rng.random(),
                    sequence=rng.choice([None, rng.random()]),
                    edges_intersection=rng.randint(0, u),
                    edges_union=u,
                )
            )
    return out


@pytest.mark.parametrize(("taxonomy", "entries"), [(True, True), (False, True), (True, False)])
def test_columns_equal_the_per_task_reference_on_random_subsets(taxonomy: bool, entries: bool) -> None:
    rows = random_scores(7, 600, taxonomy=taxonomy, entries=entries)
    rng = random.Random(11)
    table = ScoreTable.of(rows)
    for k in range(40):
        subset = rng.sample(range(len(rows)), rng.choice([0, 1, 2, 3, rng.randint(0, len(rows))]))
        want = json.dumps(reference([rows[i] for i in subset]))
        assert json.dumps(table.summarize(np.asarray(subset, dtype=np.intp))) == want, k
        assert json.dumps(summarize([rows[i] for i in reversed(subset)])) == want, k


def test_breakdown_strata_equal_the_stratum_summarised_alone() -> None:
    rows = random_scores(3, 300)
    for key in ("obs", "cats"):
        bd = breakdown(ScoreTable.of(rows), key, min_tasks=5)
        for name, stratum in bd["strata"].items():
            members = [s for s in rows if s.meta[key] == name or name in s.meta[key]]
            assert json.dumps(stratum["metrics"]) == json.dumps(reference(members))
            assert stratum["n_tasks"] == len(members)
        assert bd == breakdown(rows, key, min_tasks=5)
    assert breakdown(rows, "cats")["unassigned"] == sum(1 for s in rows if not s.meta["cats"])


def test_duplicate_tasks_are_refused() -> None:
    rows = random_scores(5, 4)
    with pytest.raises(ValueError, match="duplicate task"):
        ScoreTable.of([*rows, rows[0]])


@pytest.mark.parametrize(
    "values",
    [
        [],
        [0.5, 0.25, 1.0],
        [1 / 3, 2 / 3, 1 / 7] * 50,
        [120_000.0, 3.0, 987_654_321.0] * 1000,
        [0.1, 0.2, 0.3],
        [2.0**-40, 1.0, -1.0],
        [1e300, 1.0, -1e300],
        [float(i) for i in range(100_000)],
    ],
)
def test_fast_sum_is_fsum(values: list[float]) -> None:
    assert _sum(np.asarray(values, dtype=np.float64)) == math.fsum(values)
