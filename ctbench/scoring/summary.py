"""Aggregation of per-task scores into every summary figure of a run or of a stratum (section 4, B.1-B.3,
C.1, C.5, 4.3), column by column.

Why columns: a report summarises each run once and then once per stratum of eight metadata fields, so a
task is summarised about ten times. Done object by object, that cost ~8 s per run at 100,000 tasks (the
issue's scaling target is a whole 4-run report in 60 s). :class:`ScoreTable` reads the per-task scores
into numpy columns once; a summary of any subset is then a handful of array operations on an index.

Exactness, so that a stratum's figures equal those of the same tasks summarised alone, in any order:
means are the exact sum of the selected values, correctly rounded (:func:`math.fsum`, or numpy on
values it adds exactly - :func:`_sum`), divided by their count, so order does not matter; counts and
evidence sums are integers (held exactly in float64 far beyond any task count); medians are picked
from the sorted values exactly as :func:`statistics.median` does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ctbench.scoring.failures import FAILURE_MODES
from ctbench.scoring.metrics import (
    FAMILIES,
    TASK_STATUSES,
    ScoringConfig,
    TaskRecord,
    TaskScores,
    _div,
    score_task,
)

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.intp]

_FAILURES: tuple[str, ...] = tuple(sorted(FAILURE_MODES))
_COUNTED: tuple[str, ...] = (*TASK_STATUSES, *_FAILURES, "wrong")
"""What a row counts over the trials it stands for (one attempt: one-hot), :meth:`TaskScores.counts`."""
_COUNT_AT = {c: i for i, c in enumerate(_COUNTED)}
_USAGE_FIELDS: tuple[str, ...] = ("rounds", "latency_s", "input_tokens", "output_tokens", "total_tokens")
_ENTRY_FIELDS: tuple[str, ...] = ("id_exact", "id_hierarchical", "loc_exact", "loc_hierarchical")
_NAN = math.nan

# Column order of ScoreTable.matrix; one row per task.
_COLUMNS: tuple[str, ...] = (
    "family",
    "exact",
    "loc",
    "ident",
    "triplet",
    "rest",
    "sequence",
    "link_iou",
    "edges_intersection",
    "edges_union",
    "covered",
    "golden",
    "executed",
    *(f"count:{c}" for c in _COUNTED),
    "n_trials",
    "has_entries",
    "n_gold",
    *_ENTRY_FIELDS,
    "has_topology",
    "rounds",
    "latency_s",
    "input_tokens",
    "output_tokens",
)
_COL = {name: j for j, name in enumerate(_COLUMNS)}
_FAMILY_CODE: dict[str, float] = {f: float(i) for i, f in enumerate(FAMILIES)}


def _row(s: TaskScores, codes: dict[str, float], parts: tuple[str, ...]) -> tuple[float, ...]:
    ev, u, e = s.evidence, s.usage, s.entries
    entries: tuple[float, ...] = (
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        if e is None
        else (
            1.0,
            e.n_gold,
            e.id_exact,
            _NAN if e.id_hierarchical is None else e.id_hierarchical,
            e.loc_exact,
            e.loc_hierarchical,
        )
    )
    r, lat, tin, tout = u
    if s.trial_counts is None:  # one attempt: one-hot, without building a mapping per row
        one = [0] * len(_COUNTED)
        one[_COUNT_AT[s.status]] = 1
        if not s.exact:
            one[_COUNT_AT["wrong"]] = 1
        if s.failure:
            one[_COUNT_AT[s.failure]] = 1
        counts: tuple[int, ...] = tuple(one)
    else:
        counts = tuple(s.trial_counts.get(c, 0) for c in _COUNTED)
    return (
        codes[s.family],
        s.exact,
        s.loc,
        s.ident or 0.0,
        s.triplet or 0.0,
        s.rest or 0.0,
        s.sequence or 0.0,
        s.link_iou or 0.0,
        s.edges_intersection,
        s.edges_union,
        ev.covered,
        ev.golden,
        ev.executed,
        *counts,
        s.n_trials,
        *entries,
        s.has_topology,
        _NAN if r is None else r,
        _NAN if lat is None else lat,
        _NAN if tin is None else tin,
        _NAN if tout is None else tout,
        *(s.parts.get(p, _NAN) for p in parts),
    )


QUANTUM_BITS = 30
"""Finest binary fraction, ``2**-QUANTUM_BITS``, at which sums of per-task values are made exact (here
and in the bootstrap's resampled sums, :func:`ctbench.scoring.stats.resample_sums`)."""


def exact_bits(n: int, top: float) -> int:
    """The ``q`` (at most :data:`QUANTUM_BITS`) for which any sum of ``n`` multiples of ``2**-q`` bounded
    by ``top`` in size stays an exact integer count of ``2**-q`` below 2**52; negative when none does."""
    return min(QUANTUM_BITS, 52 - math.ceil(math.log2(max(1.0, n * max(top, 1.0)))))


def _sum(values: FloatArray) -> float:
    """The sum :func:`math.fsum` gives (the exact sum, correctly rounded), faster where that is easy.

    When every value is a multiple of ``2**-q`` and ``n * max|value| * 2**q`` stays below 2**53, numpy
    adds the scaled values without any rounding, in any order, and the result is exactly fsum's: so
    counts, tokens, rounds and most latencies skip the slow path; IoUs such as 1/3 take it.
    """
    n = values.size
    if n == 0:
        return 0.0
    top = float(np.abs(values).max())
    if math.isfinite(top):
        q = exact_bits(n, top)
        if q >= 0:
            scaled = values * (2.0**q)
            if np.array_equal(scaled, np.rint(scaled)):
                return float(scaled.sum()) / 2.0**q
    return math.fsum(values.tolist())


def _mean(values: FloatArray) -> float | None:
    return None if values.size == 0 else _sum(values) / values.size


def _median(values: FloatArray) -> float | None:
    """:func:`statistics.median` of the values (the middle one, or the mean of the middle two)."""
    n = values.size
    if n == 0:
        return None
    ordered = np.sort(values)
    m = n // 2
    return float(ordered[m]) if n % 2 else (float(ordered[m - 1]) + float(ordered[m])) / 2


def _total(values: FloatArray) -> int | float:
    """A column's exact sum: an int when it is whole (counts), else a float (means over trials)."""
    if not np.any(values % 1.0):  # whole numbers: numpy adds them exactly
        return int(values.sum())
    total = _sum(values)
    return int(total) if total.is_integer() else total


@dataclass(frozen=True)
class ScoreTable:
    """The per-task scores of a run as a task-by-column matrix, for summaries of any subset of tasks.

    ``rows`` keeps the tasks in the order given (row ``i`` of ``matrix`` is ``rows[i]``); unknown values
    are NaN (usage, hierarchical ID without a taxonomy).
    """

    rows: tuple[TaskScores, ...]
    matrix: FloatArray
    plugins: tuple[str, ...] = ()
    """Plug-in families among the rows, in name order (their family codes follow the built-ins')."""
    parts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Each plug-in family's part names in its rows' order; part ``p`` is column ``part:p``."""

    @classmethod
    def of(cls, scores: Iterable[TaskScores]) -> ScoreTable:
        """Read the scores into columns; ``ValueError`` on a duplicate (family, task id, trial)."""
        rows = tuple(scores)
        seen: set[tuple[str, str, int]] = set()
        parts: dict[str, dict[str, None]] = {}
        for s in rows:
            key = (s.family, s.task_id, s.trial)
            if key in seen:
                raise ValueError(f"duplicate task {s.family}/{s.task_id}")
            seen.add(key)
            if s.family not in _FAMILY_CODE:
                parts.setdefault(s.family, {}).update(dict.fromkeys(s.parts))
        plugins = tuple(sorted(parts))
        codes = {**_FAMILY_CODE, **{f: float(len(FAMILIES) + i) for i, f in enumerate(plugins)}}
        names = tuple(dict.fromkeys(p for f in plugins for p in parts[f]))
        width = len(_COLUMNS) + len(names)
        matrix = np.array([_row(s, codes, names) for s in rows], dtype=np.float64).reshape(len(rows), width)
        return cls(rows=rows, matrix=matrix, plugins=plugins, parts={f: tuple(parts[f]) for f in plugins})

    def _code(self, family: str) -> float:
        if family in _FAMILY_CODE:
            return _FAMILY_CODE[family]
        return float(len(FAMILIES) + self.plugins.index(family)) if family in self.plugins else -1.0

    def _part(self, name: str) -> int:
        names = tuple(dict.fromkeys(p for f in self.plugins for p in self.parts[f]))
        return len(_COLUMNS) + names.index(name)

    def __len__(self) -> int:
        return len(self.rows)

    def family_index(self, family: str, index: IndexArray | None = None) -> IndexArray:
        """The rows of ``family`` among ``index`` (all rows when ``None``)."""
        base = np.arange(len(self.rows), dtype=np.intp) if index is None else np.asarray(index, dtype=np.intp)
        return base[self.matrix[base, _COL["family"]] == self._code(family)]

    def summarize(self, index: IndexArray | None = None) -> dict[str, Any]:
        """Every aggregate of the tasks at ``index`` (distinct row numbers; all rows when ``None``); see
        :func:`summarize`."""
        rca, path = self.family_index("rca", index), self.family_index("path", index)
        topo = self.family_index("topology", index)
        plugins = {f: self.family_index(f, index) for f in self.plugins}
        plugins = {f: i for f, i in plugins.items() if i.size}
        n = rca.size + path.size + topo.size + sum(i.size for i in plugins.values())
        every = np.concatenate([rca, path, topo, *plugins.values()])
        return {
            "n_tasks": n,
            "rca": self._rca(self.matrix[rca]),
            "path": self._path(self.matrix[path]),
            "topology": self._topology(self.matrix[topo]),
            **{f: self._plugin(f, self.matrix[i]) for f, i in plugins.items()},
            "efficiency": {
                "all": _efficiency(self.matrix[every]),
                "rca": _efficiency(self.matrix[rca]),
                "path": _efficiency(self.matrix[path]),
                "topology": _efficiency(self.matrix[topo]),
                **{f: _efficiency(self.matrix[i]) for f, i in plugins.items()},
            },
        }

    def _plugin(self, family: str, m: FloatArray) -> dict[str, Any]:
        """A plug-in family's block: the headline figures, the task mean of each of its parts (as
        ``<part>``; unknown values left out of the mean) and the pooled evidence. Present only when
        the family has tasks among those summarised, so a run without plug-ins summarises as before."""
        out: dict[str, Any] = {**_headline(m), "columns": list(self.parts[family])}
        for name in self.parts[family]:
            col = m[:, self._part(name)]
            out[name] = _mean(col[~np.isnan(col)])
        out["evidence"] = _evidence(m)
        out["evidence_on_correct"] = _evidence_on_correct(m)
        return out

    @staticmethod
    def _rca(m: FloatArray) -> dict[str, Any]:
        return {
            **_headline(m),
            "id_iou": _mean(m[:, _COL["ident"]]),
            "triplet_iou": _mean(m[:, _COL["triplet"]]),
            "evidence": _evidence(m),
            "evidence_on_correct": _evidence_on_correct(m),
            "entry_match": {
                "n_gold_entries": _total(m[:, _COL["n_gold"]]),
                **{f: _macro_entry(m, f) for f in _ENTRY_FIELDS},
                "n_tasks_without_topology": int(m.shape[0] - np.count_nonzero(m[:, _COL["has_topology"]])),
            },
            "failures": {
                "n_wrong": _total(m[:, _COL["count:wrong"]]),
                **{mode: _total(m[:, _COL[f"count:{mode}"]]) for mode in _FAILURES},
            },
        }

    @staticmethod
    def _path(m: FloatArray) -> dict[str, Any]:
        inter, union = _total(m[:, _COL["edges_intersection"]]), _total(m[:, _COL["edges_union"]])
        return {
            **_headline(m),
            "rest_iou": _mean(m[:, _COL["rest"]]),
            "sequence_iou": _mean(m[:, _COL["sequence"]]),
            "micro_edge_iou": _div(inter, union),
            "edges": {"intersection": inter, "union": union},
            "evidence": _evidence(m),
            "evidence_on_correct": _evidence_on_correct(m),
        }

    @staticmethod
    def _topology(m: FloatArray) -> dict[str, Any]:
        """Topology restoration: accuracy, node-pair IoU as ``loc_iou`` and link IoU (ports too)."""
        return {
            **_headline(m),
            "link_iou": _mean(m[:, _COL["link_iou"]]),
            "evidence": _evidence(m),
            "evidence_on_correct": _evidence_on_correct(m),
        }


def _headline(m: FloatArray) -> dict[str, Any]:
    """The fields both families report first: counts, statuses, accuracy and localisation IoU.

    Over tasks: with several trials a row is a task's mean over its trials, so accuracy is the mean of
    the tasks' shares of correct trials (pass@1) and ``n_correct`` their sum; the statuses count the
    task-trials (``n_task_trials`` says how many there are when it is not ``n_tasks``).
    """
    n = int(m.shape[0])
    out: dict[str, Any] = {
        "n_tasks": n,
        "status": {st: _total(m[:, _COL[f"count:{st}"]]) for st in TASK_STATUSES},
        "accuracy": _mean(m[:, _COL["exact"]]),  # of 0/1 values: correct / n, exactly
        "n_correct": _total(m[:, _COL["exact"]]),
        "loc_iou": _mean(m[:, _COL["loc"]]),
    }
    trials = _total(m[:, _COL["n_trials"]])
    if trials != n:
        out["n_task_trials"] = trials
    return out


def _evidence(m: FloatArray) -> dict[str, Any]:
    """Pooled evidence: coverage sum C / sum G (4.1/4.2) and F1 = 2C / (G + A) (C.5)."""
    c, g, a = _total(m[:, _COL["covered"]]), _total(m[:, _COL["golden"]]), _total(m[:, _COL["executed"]])
    return {"covered": c, "golden": g, "executed": a, "coverage": _div(c, g), "f1": _div(2 * c, g + a)}


def _evidence_on_correct(m: FloatArray) -> dict[str, Any]:
    """Evidence restricted to exactly correct tasks (C.1, Table 18).

    ``incomplete`` counts correct tasks with per-task coverage below 100% (a golden action not
    executed); ``incomplete_freq`` = incomplete / correct; ``coverage`` pools C and G over them.
    """
    correct = m[m[:, _COL["exact"]] == 1.0]
    covered, golden = correct[:, _COL["covered"]], correct[:, _COL["golden"]]
    incomplete = int(np.count_nonzero(covered < golden))
    n = int(correct.shape[0])
    c, g = _total(covered), _total(golden)
    return {
        "n_correct": n,
        "incomplete": incomplete,
        "incomplete_freq": _div(incomplete, n),
        "covered": c,
        "golden": g,
        "coverage": _div(c, g),
    }


def _macro_entry(m: FloatArray, field: str) -> dict[str, Any]:
    """Task mean of sum/|G| (``macro``) and sum over tasks / total gold entries (``micro``); undefined
    when a task has no entry-match scores (or, for hierarchical ID, no taxonomy)."""
    values = m[:, _COL[field]]
    if not np.all(m[:, _COL["has_entries"]] == 1.0) or np.isnan(values).any():
        return {"macro": None, "micro": None}
    n_gold = m[:, _COL["n_gold"]]
    scored = n_gold > 0
    return {"macro": _mean(values[scored] / n_gold[scored]), "micro": _div(_sum(values), _total(n_gold))}


def _efficiency(m: FloatArray) -> dict[str, Any]:
    """Means and medians of rounds, latency and tokens (4.3); missing values excluded and counted."""
    n_tasks = int(m.shape[0])
    tin, tout = m[:, _COL["input_tokens"]], m[:, _COL["output_tokens"]]
    columns = [m[:, _COL["rounds"]], m[:, _COL["latency_s"]], tin, tout, tin + tout]  # NaN + x is NaN
    out: dict[str, Any] = {}
    for name, col in zip(_USAGE_FIELDS, columns, strict=True):
        known = col[~np.isnan(col)]
        out[name] = {
            "n": int(known.size),
            "missing": n_tasks - int(known.size),
            "mean": _mean(known),
            "median": _median(known),
        }
    return out


def summarize(scores: Iterable[TaskScores]) -> dict[str, Any]:
    """Aggregate per-task scores into the plain dict of every metric, per family.

    Task-macro means for accuracy and the IoUs (4.1, 4.2, B.1); pooled ratios for evidence (4.1,
    C.5) and path micro IoU; the correct-only evidence table (C.1); entry-match scores (Table 16) as
    the task mean of per-task scores (``macro``, the paper's Hier-RCA(q) averaged) and pooled over gold
    entries (``micro``); failure counts of wrong RCA answers (Table 29); efficiency per family and
    overall. Both families are always present (``n_tasks`` 0 and ``None`` values when empty). The
    result does not depend on the order of the scores. Raises ``ValueError`` on a duplicate task id.
    """
    return ScoreTable.of(scores).summarize()


def aggregate(records: Iterable[TaskRecord], config: ScoringConfig | None = None) -> dict[str, Any]:
    """Score every record and :func:`summarize` them: the whole metric dict of a run."""
    cfg = ScoringConfig() if config is None else config
    return summarize([score_task(r, cfg) for r in records])
