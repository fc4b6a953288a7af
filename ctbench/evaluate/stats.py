"""Uncertainty, paired comparisons and per-stratum breakdowns (paper appendices D.1, D.2, C.2-C.4).

Standard errors (D.1): accuracy and the task-macro IoUs use the sample standard deviation of the
per-task scores over sqrt(n); pooled ratios (evidence coverage, evidence F1, path micro IoU) use the
standard deviation (ddof=1) of the ratio recomputed on 10,000 task resamples drawn with replacement
within the task family.

Paired comparisons (D.2) of two runs on the same tasks, A minus B: accuracy gets the exact two-sided
McNemar test (a binomial test on the discordant pairs) and a paired bootstrap interval; task-macro
IoUs and pooled coverage get paired-bootstrap percentile intervals (the same task indices for both
runs; for coverage each resample recomputes both pooled ratios before differencing) and the bootstrap
sign probability. Holm's step-down correction is applied within a family of comparisons.

Seeds (the rule, so that anyone can reproduce a figure): every bootstrap draws its index matrix from
``numpy.random.default_rng(seed)`` with ``seed = BASE_SEED + zlib.crc32(key.encode("utf-8"))`` where
``key = "|".join([metric_key, *run_names])`` (:func:`seed_for`); ``BASE_SEED = 20260725`` (D.1).
Metric keys: ``"se:<family>.<metric>"`` for a standard error of one run (run names: that run), and
``"paired:<family>.<metric>"`` for a comparison (run names: A then B). So each (metric, run) gets its
own deterministic stream, a different metric or run gets different draws, and re-running gives the
same numbers.

Vectorisation: indices are drawn as ``(rows, n)`` int64 matrices, many resamples per numpy call, and
the statistic is computed on a whole matrix at once. Chunks hold ``max_chunk_bytes`` (index matrix
plus one gathered float64 temporary), default 2 MiB: that size keeps the working set in cache and
measured 30-60% faster than 200 MB chunks (``tests/bench/bench_stats.py``), and memory stays far
below the ~200 MB ceiling (``MAX_CHUNK_BYTES``) at any task count. Chunking does not change the draws
(the generator's stream is consumed in the same order), so results do not depend on the chunk size.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ctbench.evaluate.metrics import FAMILIES, Family, TaskScores, summarize

BASE_SEED = 20260725
N_RESAMPLES = 10_000
MAX_CHUNK_BYTES = 200 * 2**20
"""Ceiling on the memory of one resampling chunk; the default chunk is much smaller."""
CHUNK_BYTES = 2 * 2**20
"""Default chunk size (bytes of index matrix + gathered temporary), chosen by measurement."""
CONFIDENCE = 0.95
MIN_STRATUM_TASKS = 10

_BYTES_PER_CELL = 16  # int64 index + one float64 gathered temporary per (resample, task) cell

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.int64]


def seed_for(metric_key: str, *runs: str, base_seed: int = BASE_SEED) -> int:
    """Deterministic bootstrap seed: ``base_seed + crc32("metric_key|run...")`` (see module doc)."""
    return base_seed + zlib.crc32("|".join((metric_key, *runs)).encode("utf-8"))


# --------------------------------------------------------------------------- core resampling

def bootstrap(
    n: int,
    statistic: Callable[[IndexArray], FloatArray],
    *,
    seed: int,
    n_resamples: int = N_RESAMPLES,
    max_chunk_bytes: int = CHUNK_BYTES,
) -> FloatArray:
    """Evaluate ``statistic`` on ``n_resamples`` resamples of ``n`` task indices.

    ``statistic`` receives an index matrix of shape ``(rows, n)`` (each row one resample, drawn with
    replacement) and returns one value per row. Rows are produced in chunks of at most
    ``max_chunk_bytes`` (counting the index matrix and one gathered float64 temporary; never more
    than ``MAX_CHUNK_BYTES``, and at least one row).
    """
    if n <= 0:
        raise ValueError("cannot bootstrap zero tasks")
    rng = np.random.default_rng(seed)
    out = np.empty(n_resamples, dtype=np.float64)
    budget = min(max_chunk_bytes, MAX_CHUNK_BYTES)
    rows = max(1, min(n_resamples, budget // (_BYTES_PER_CELL * n)))
    done = 0
    while done < n_resamples:
        r = min(rows, n_resamples - done)
        idx = rng.integers(0, n, size=(r, n), dtype=np.int64)
        out[done: done + r] = statistic(idx)
        done += r
    return out


def _pooled(num: FloatArray, den: FloatArray) -> Callable[[IndexArray], FloatArray]:
    def stat(idx: IndexArray) -> FloatArray:
        top = np.take(num, idx).sum(axis=1)
        bottom = np.take(den, idx).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)
    return stat


def standard_error(values: ArrayLike) -> float | None:
    """Sample standard deviation / sqrt(n) of per-task scores (D.1); ``None`` below two tasks."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size < 2:
        return None
    return float(arr.std(ddof=1) / math.sqrt(arr.size))


def bootstrap_pooled_se(
    numerators: ArrayLike,
    denominators: ArrayLike,
    *,
    seed: int,
    n_resamples: int = N_RESAMPLES,
    max_chunk_bytes: int = CHUNK_BYTES,
) -> float | None:
    """Bootstrap SE of a pooled ratio sum(num)/sum(den) over tasks (D.1).

    Resamples whose denominator sums to zero are undefined and left out; ``None`` when fewer than two
    resamples remain (or there are no tasks).
    """
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    if num.shape != den.shape or num.ndim != 1:
        raise ValueError("numerators and denominators must be 1-d and of equal length")
    if num.size == 0:
        return None
    ratios = bootstrap(num.size, _pooled(num, den), seed=seed, n_resamples=n_resamples,
                       max_chunk_bytes=max_chunk_bytes)
    ratios = ratios[~np.isnan(ratios)]
    return None if ratios.size < 2 else float(ratios.std(ddof=1))


# --------------------------------------------------------------------------- paired tests

def mcnemar_exact(a_correct: ArrayLike, b_correct: ArrayLike) -> tuple[int, int, float]:
    """Exact two-sided McNemar test (D.2): ``(a_only, b_only, p)``.

    Only discordant task pairs inform the test; under H0 each is equally likely to favour A or B, so
    ``p`` is the two-sided binomial test of ``a_only`` successes in ``a_only + b_only`` trials at 1/2
    (``scipy.stats.binomtest``); 1.0 when there is no discordant pair.
    """
    from scipy.stats import binomtest

    a = np.asarray(a_correct, dtype=bool)
    b = np.asarray(b_correct, dtype=bool)
    if a.shape != b.shape:
        raise ValueError("paired samples must have equal length")
    a_only = int(np.sum(a & ~b))
    b_only = int(np.sum(~a & b))
    n = a_only + b_only
    p = 1.0 if n == 0 else float(binomtest(a_only, n, 0.5, alternative="two-sided").pvalue)
    return a_only, b_only, p


def sign_probability(diffs: ArrayLike) -> float:
    """Bootstrap sign probability (D.2): ``min(1, 2 * min(P(d <= 0), P(d >= 0)))``.

    Resampled differences exactly at zero count on both sides, so identical runs give 1, not 0.
    """
    d = np.asarray(diffs, dtype=np.float64)
    d = d[~np.isnan(d)]
    if d.size == 0:
        return 1.0
    below = float(np.mean(d <= 0))
    above = float(np.mean(d >= 0))
    return min(1.0, 2.0 * min(below, above))


def percentile_interval(samples: ArrayLike, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Percentile interval of bootstrap samples (numpy's default linear interpolation)."""
    s = np.asarray(samples, dtype=np.float64)
    s = s[~np.isnan(s)]
    if s.size == 0:
        return None
    tail = (100.0 - 100.0 * confidence) / 2.0  # written so that 0.95 gives exactly 2.5
    lo, hi = np.percentile(s, [tail, 100.0 - tail])
    return float(lo), float(hi)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order (D.2).

    Sorted ascending ``p_(1) <= ... <= p_(m)``: ``adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))``.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class PairedResult:
    """One paired comparison A - B of one metric on the same tasks (D.2, Tables 25-27).

    ``p_value`` is McNemar's exact p for accuracy and the bootstrap sign probability otherwise
    (``test`` says which); ``p_holm`` is filled by :func:`holm_adjust`. The interval is not
    multiplicity-adjusted.
    """

    family: str
    metric: str
    run_a: str
    run_b: str
    n: int
    a: float | None
    b: float | None
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float
    test: Literal["mcnemar-exact", "bootstrap-sign"]
    seed: int
    n_resamples: int
    a_only: int | None = None
    b_only: int | None = None
    p_holm: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def paired_mean_difference(
    a: ArrayLike, b: ArrayLike, *, seed: int, n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE, max_chunk_bytes: int = CHUNK_BYTES,
) -> tuple[float, tuple[float, float] | None, float]:
    """Paired bootstrap of a difference in task means: ``(diff, interval, sign probability)``.

    Task indices are resampled jointly for both runs; ``mean(a[idx]) - mean(b[idx])`` equals
    ``mean((a - b)[idx])``, so the per-task differences are resampled directly.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError("paired samples must be non-empty, 1-d and of equal length")
    d = x - y
    diffs = bootstrap(d.size, lambda idx: np.take(d, idx).mean(axis=1), seed=seed, n_resamples=n_resamples,
                      max_chunk_bytes=max_chunk_bytes)
    return float(d.mean()), percentile_interval(diffs, confidence), sign_probability(diffs)


def paired_pooled_difference(
    num_a: ArrayLike, den_a: ArrayLike, num_b: ArrayLike, den_b: ArrayLike, *, seed: int,
    n_resamples: int = N_RESAMPLES, confidence: float = CONFIDENCE,
    max_chunk_bytes: int = CHUNK_BYTES,
) -> tuple[float | None, tuple[float, float] | None, float]:
    """Paired bootstrap of a difference of pooled ratios (D.2 evidence coverage).

    Each resample recomputes ``sum(num_a)/sum(den_a)`` and ``sum(num_b)/sum(den_b)`` on the same task
    indices, then differences them. Returns ``(diff, interval, sign probability)``.
    """
    arrays = [np.asarray(v, dtype=np.float64) for v in (num_a, den_a, num_b, den_b)]
    if len({v.shape for v in arrays}) != 1 or arrays[0].ndim != 1 or arrays[0].size == 0:
        raise ValueError("paired samples must be non-empty, 1-d and of equal length")
    na, da, nb, db = arrays
    ratio_a, ratio_b = _pooled(na, da), _pooled(nb, db)
    diffs = bootstrap(na.size, lambda idx: ratio_a(idx) - ratio_b(idx), seed=seed,
                      n_resamples=n_resamples, max_chunk_bytes=max_chunk_bytes)
    est = None
    if da.sum() > 0 and db.sum() > 0:
        est = float(na.sum() / da.sum() - nb.sum() / db.sum())
    return est, percentile_interval(diffs, confidence), sign_probability(diffs)


# --------------------------------------------------------------------------- run-level helpers

_MACRO: dict[Family, tuple[tuple[str, str], ...]] = {
    # (metric name in the output, TaskScores attribute)
    "rca": (("accuracy", "exact"), ("loc_iou", "loc"), ("id_iou", "ident"), ("triplet_iou", "triplet")),
    "path": (("accuracy", "exact"), ("loc_iou", "loc"), ("rest_iou", "rest"), ("sequence_iou", "sequence")),
}


def _values(rows: Sequence[TaskScores], attr: str) -> FloatArray:
    return np.array([float(getattr(s, attr) or 0.0) for s in rows], dtype=np.float64)


def _pooled_parts(rows: Sequence[TaskScores], metric: str) -> tuple[FloatArray, FloatArray]:
    if metric == "evidence_coverage":
        return (np.array([s.evidence.covered for s in rows], dtype=np.float64),
                np.array([s.evidence.golden for s in rows], dtype=np.float64))
    if metric == "evidence_f1":
        return (np.array([2 * s.evidence.covered for s in rows], dtype=np.float64),
                np.array([s.evidence.golden + s.evidence.executed for s in rows], dtype=np.float64))
    if metric == "micro_edge_iou":
        return (np.array([s.edges_intersection for s in rows], dtype=np.float64),
                np.array([s.edges_union for s in rows], dtype=np.float64))
    raise ValueError(f"unknown pooled metric {metric!r}")


_POOLED: dict[Family, tuple[str, ...]] = {
    "rca": ("evidence_coverage", "evidence_f1"),
    "path": ("evidence_coverage", "evidence_f1", "micro_edge_iou"),
}


def _by_family(rows: Iterable[TaskScores]) -> dict[Family, list[TaskScores]]:
    out: dict[Family, list[TaskScores]] = {f: [] for f in FAMILIES}
    for s in rows:
        out[s.family].append(s)
    for f in FAMILIES:
        out[f].sort(key=lambda s: s.task_id)
        ids = [s.task_id for s in out[f]]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate task id in family {f}")
    return out


def standard_errors(
    scores: Iterable[TaskScores], *, run: str, n_resamples: int = N_RESAMPLES,
    base_seed: int = BASE_SEED, max_chunk_bytes: int = CHUNK_BYTES,
) -> dict[str, dict[str, float | None]]:
    """Standard errors of one run's headline metrics, per family (D.1, Table 5).

    Task-macro metrics: sample sd / sqrt(n). Pooled ratios (evidence coverage, evidence F1, and for
    paths the micro edge IoU): bootstrap SE within the family, seed ``seed_for("se:<family>.<metric>",
    run)``.
    """
    fam = _by_family(scores)
    out: dict[str, dict[str, float | None]] = {}
    for f in FAMILIES:
        rows = fam[f]
        res: dict[str, float | None] = {}
        for name, attr in _MACRO[f]:
            res[name] = standard_error(_values(rows, attr)) if rows else None
        for metric in _POOLED[f]:
            if not rows:
                res[metric] = None
                continue
            num, den = _pooled_parts(rows, metric)
            res[metric] = bootstrap_pooled_se(
                num, den, seed=seed_for(f"se:{f}.{metric}", run, base_seed=base_seed),
                n_resamples=n_resamples, max_chunk_bytes=max_chunk_bytes)
        out[f] = res
    return out


def compare_runs(
    a: Iterable[TaskScores], b: Iterable[TaskScores], *, run_a: str, run_b: str,
    n_resamples: int = N_RESAMPLES, base_seed: int = BASE_SEED, confidence: float = CONFIDENCE,
    max_chunk_bytes: int = CHUNK_BYTES,
) -> list[PairedResult]:
    """Paired comparison A - B of two runs on the same tasks, per family (D.2).

    Metrics per family: accuracy (exact McNemar + paired bootstrap interval), the two task-macro IoUs
    (RCA-Loc, RCA-ID / Path-Loc, Path-Rest) and pooled evidence coverage. Both runs must hold the same
    task ids in each family (unanswered tasks are records too, scored as wrong): a ``ValueError``
    otherwise, rather than silently comparing different task sets.
    """
    fa, fb = _by_family(a), _by_family(b)
    results: list[PairedResult] = []
    for f in FAMILIES:
        ra, rb = fa[f], fb[f]
        if [s.task_id for s in ra] != [s.task_id for s in rb]:
            raise ValueError(f"runs {run_a!r} and {run_b!r} do not hold the same {f} tasks")
        if not ra:
            continue
        n = len(ra)
        common = dict(family=f, run_a=run_a, run_b=run_b, n=n, n_resamples=n_resamples)
        for name, attr in _MACRO[f][:3]:
            x, y = _values(ra, attr), _values(rb, attr)
            seed = seed_for(f"paired:{f}.{name}", run_a, run_b, base_seed=base_seed)
            diff, ci, sign_p = paired_mean_difference(x, y, seed=seed, n_resamples=n_resamples,
                                                      confidence=confidence, max_chunk_bytes=max_chunk_bytes)
            ci_low, ci_high = ci if ci is not None else (None, None)
            if name == "accuracy":
                a_only, b_only, p = mcnemar_exact(x > 0.5, y > 0.5)
                results.append(PairedResult(**common, metric=name, a=float(x.mean()), b=float(y.mean()),
                                            diff=diff, ci_low=ci_low, ci_high=ci_high, p_value=p,
                                            test="mcnemar-exact", seed=seed, a_only=a_only, b_only=b_only))
            else:
                results.append(PairedResult(**common, metric=name, a=float(x.mean()), b=float(y.mean()),
                                            diff=diff, ci_low=ci_low, ci_high=ci_high, p_value=sign_p,
                                            test="bootstrap-sign", seed=seed))
        na, da = _pooled_parts(ra, "evidence_coverage")
        nb, db = _pooled_parts(rb, "evidence_coverage")
        seed = seed_for(f"paired:{f}.evidence_coverage", run_a, run_b, base_seed=base_seed)
        diff_p, ci, sign_p = paired_pooled_difference(na, da, nb, db, seed=seed, n_resamples=n_resamples,
                                                      confidence=confidence, max_chunk_bytes=max_chunk_bytes)
        ci_low, ci_high = ci if ci is not None else (None, None)
        results.append(PairedResult(
            **common, metric="evidence_coverage",
            a=float(na.sum() / da.sum()) if da.sum() > 0 else None,
            b=float(nb.sum() / db.sum()) if db.sum() > 0 else None,
            diff=diff_p, ci_low=ci_low, ci_high=ci_high, p_value=sign_p, test="bootstrap-sign", seed=seed))
    return results


def holm_adjust(results: Sequence[PairedResult]) -> list[PairedResult]:
    """Holm-adjust p-values within each (family, metric) across the given comparisons (D.2).

    Pass the comparisons of one scope (e.g. the three "A vs each other configuration" pairs); the
    adjustment runs over the comparisons sharing a family and metric, order preserved.
    """
    groups: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(results):
        groups.setdefault((r.family, r.metric), []).append(i)
    out = list(results)
    for idxs in groups.values():
        adjusted = holm([results[i].p_value for i in idxs])
        for i, p in zip(idxs, adjusted, strict=True):
            out[i] = replace(results[i], p_holm=p)
    return out


def compare_scope(
    runs: Mapping[str, Iterable[TaskScores]], pairs: Sequence[tuple[str, str]], **options: Any,
) -> list[PairedResult]:
    """All pairs of one comparison scope, Holm-adjusted within family and metric (D.2).

    ``runs`` maps run names to their scores; ``pairs`` lists (A, B) run names. ``options`` go to
    :func:`compare_runs`.
    """
    materialised = {name: list(rows) for name, rows in runs.items()}
    results: list[PairedResult] = []
    for a, b in pairs:
        results.extend(compare_runs(materialised[a], materialised[b], run_a=a, run_b=b, **options))
    return holm_adjust(results)


# --------------------------------------------------------------------------- strata

def _strata_of(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple, set, frozenset)):
        seen: list[Any] = []
        for v in value:
            if v is not None and v not in seen:
                seen.append(v)
        return seen
    return [value]


def _stratum_order(value: Any) -> tuple[int, float, str]:
    if isinstance(value, bool):
        return (1, 0.0, str(value))
    if isinstance(value, (int, float)):
        return (0, float(value), str(value))
    return (1, 0.0, str(value))


def breakdown(
    rows: Iterable[TaskScores],
    key: str | Callable[[TaskScores], Any],
    *,
    min_tasks: int = MIN_STRATUM_TASKS,
) -> dict[str, Any]:
    """Per-stratum aggregation (C.2-C.4, Tables 19-22) by a metadata field or a function.

    ``key`` is a ``meta`` field name or a callable returning the task's stratum value: a single value,
    a collection (the task counts in each of its strata, as RCA categories do in Table 19), or
    ``None`` (the task is in no stratum and is counted under ``unassigned`` - e.g. path tasks for an
    RCA-only field). Each stratum gets the full :func:`~ctbench.evaluate.metrics.summarize` dict and
    ``warning: True`` when one of its non-empty families has fewer than ``min_tasks`` tasks. Strata are
    ordered numerically where the values are numbers, then by name.
    """
    getter: Callable[[TaskScores], Any] = (lambda s: s.meta.get(key)) if isinstance(key, str) else key
    members: dict[Any, list[TaskScores]] = {}
    unassigned = 0
    for s in rows:
        values = _strata_of(getter(s))
        if not values:
            unassigned += 1
        for v in values:
            members.setdefault(v, []).append(s)
    strata: dict[str, Any] = {}
    for value in sorted(members, key=_stratum_order):
        subset = members[value]
        counts = {f: sum(1 for s in subset if s.family == f) for f in FAMILIES}
        name = str(value)
        if name in strata:
            raise ValueError(f"two strata of {key!r} render as {name!r}")
        strata[name] = {
            "n_tasks": len(subset),
            "n_rca": counts["rca"],
            "n_path": counts["path"],
            "warning": any(0 < c < min_tasks for c in counts.values()),
            "metrics": summarize(subset),
        }
    return {"key": key if isinstance(key, str) else getattr(key, "__name__", "key"),
            "min_tasks": min_tasks, "unassigned": unassigned, "strata": strata}
