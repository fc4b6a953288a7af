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
``numpy.random.default_rng(seed)`` - ``rng.integers(0, n, size=(rows, n))``, rows in order - with
``seed = BASE_SEED + zlib.crc32(key.encode("utf-8"))`` where ``key = "|".join([key, *names])``
(:func:`seed_for`); ``BASE_SEED = 20260725`` (D.1). The run-level statistics (:func:`standard_errors`,
:func:`compare_runs`, :func:`compare_scope`) draw **one index matrix per task family and metric**, key
``"bootstrap:<family>:<metric>"`` (:func:`metric_seed`) - the per-metric offsets of D.1/D.2 - and use it
for every run and every pair: a paired comparison resamples both runs jointly by construction, a run's
standard errors are the same whether it is scored alone or in a report with other runs, and the draws
depend only on the family, the metric and the (sorted) task list. The D.2 text also mentions
model-specific offsets; sharing a metric's matrix across runs is what makes the paired resampling joint,
and the paper never published its offsets, so its exact draws cannot be reproduced either way. The
single-metric functions (:func:`bootstrap_pooled_se`, :func:`paired_mean_difference`, ...) take an
explicit seed and draw the same stream for it, so ``metric_seed`` reproduces any figure with them.

Vectorisation: indices are drawn as ``(rows, n)`` int64 matrices, many resamples per numpy call. The
single-metric functions gather the statistic's values with the index matrix. The shared engine
(:func:`resample_sums`) turns each row into per-task multiplicities (``bincount``) and multiplies them
by the task-by-column matrix of every run (exact, loc, ID/Rest, covered, golden, executed, edge
counts): one matrix product for all of them, since every run-level statistic is a function of those resampled
sums. Its columns are first rounded to multiples of 2**-30 (evidence counts and accuracy are unchanged;
an IoU moves by at most 5e-10), so every resampled sum is an exact integer in float64 and the result
depends neither on the BLAS library nor on how the product is blocked. The products are cut into blocks
BLAS computes on the calling thread (:func:`_product`): a multithreaded OpenBLAS product busy-waits for
idle cores, and on a loaded machine the product measured up to 50x slower. The two families' draws run
on a small thread pool (numpy releases the GIL while drawing and multiplying); each has its own
generator, so the numbers do not depend on the thread count. Chunks hold ``max_chunk_bytes`` (index
matrix plus its temporaries, at least 8 resamples), default 2 MiB: small chunks keep the working set in
cache and measured 30-60% faster than 200 MB chunks (``tests/bench/bench_stats.py``), and memory stays
below the ~200 MB ceiling (``MAX_CHUNK_BYTES``) at any task count. Chunking does not change the draws
(the generator's stream is consumed in the same order), so results do not depend on the chunk size.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Literal, TypedDict

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ctbench.cores import available_cores
from ctbench.scoring.metrics import FAMILIES, FamilyName, TaskScores
from ctbench.scoring.summary import ScoreTable, exact_bits

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
        out[done : done + r] = statistic(idx)
        done += r
    return out


def _pooled(num: FloatArray, den: FloatArray) -> Callable[[IndexArray], FloatArray]:
    def stat(idx: IndexArray) -> FloatArray:
        return _ratio(np.take(num, idx).sum(axis=1), np.take(den, idx).sum(axis=1))

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
    ratios = bootstrap(
        num.size, _pooled(num, den), seed=seed, n_resamples=n_resamples, max_chunk_bytes=max_chunk_bytes
    )
    return _sd(ratios)


# --------------------------------------------------------------------------- shared resamples

_SUM_BYTES_PER_CELL = 24  # int64 index + int64 multiplicity + float64 multiplicity per cell


def _quantised(columns: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(round(columns * 2**q), 2**q)`` per column, so that every resampled sum is an exact integer.

    ``q`` is :func:`~ctbench.scoring.summary.exact_bits` of the column's size and largest value, the
    rule the summaries' exact sums follow too; it depends on the column alone, so a column sums the same
    whatever columns sit beside it.
    """
    n = columns.shape[0]
    top = np.abs(columns).max(axis=0) if columns.size else np.zeros(columns.shape[1])
    scales = np.empty(columns.shape[1], dtype=np.float64)
    for j, value in enumerate(top.tolist()):
        q = exact_bits(n, value)  # a resampled column sum is at most n * max|value|
        if q < 0:
            raise ValueError("column values too large to resample exactly")
        scales[j] = 2.0**q
    return np.rint(columns * scales), scales


def resample_sums(
    columns: ArrayLike,
    *,
    seed: int,
    n_resamples: int = N_RESAMPLES,
    max_chunk_bytes: int = CHUNK_BYTES,
) -> FloatArray:
    """Column sums over ``n_resamples`` task resamples: ``out[b, j] = sum_i columns[idx[b, i], j]``.

    ``columns`` is ``(n, k)``: one row per task, one column per quantity a statistic needs (evidence
    counts, per-task scores or their paired differences). The index rows are exactly those
    :func:`bootstrap` draws for the same seed; each becomes a multiplicity vector (``bincount``) and
    one matrix product gives all ``k`` sums, so adding a metric costs almost nothing. Values are
    rounded to multiples of ``2**-q`` first (:func:`_quantised`; see the module docstring), which makes every
    sum exact and the result independent of BLAS, threads and chunking.
    """
    cols = np.asarray(columns, dtype=np.float64)
    if cols.ndim == 1:
        cols = cols[:, None]
    if cols.ndim != 2 or cols.shape[0] == 0:
        raise ValueError("cannot resample zero tasks")
    n, k = cols.shape
    quantised, scales = _quantised(cols)
    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, k), dtype=np.float64)
    per_row = _SUM_BYTES_PER_CELL * n
    rows = min(max_chunk_bytes, MAX_CHUNK_BYTES) // per_row
    rows = max(1, min(n_resamples, max(rows, _MIN_PRODUCT_ROWS), MAX_CHUNK_BYTES // per_row))
    offsets = np.arange(rows, dtype=np.int64)[:, None] * n
    done = 0
    while done < n_resamples:
        r = min(rows, n_resamples - done)
        idx = rng.integers(0, n, size=(r, n), dtype=np.int64)
        if r > 1:
            idx += offsets[:r]  # row b counts into bins [b*n, (b+1)*n): one bincount per chunk
        counts = np.bincount(idx.ravel(), minlength=r * n).reshape(r, n)
        out[done : done + r] = _product(counts.astype(np.float64), quantised)
        done += r
    out /= scales
    return out


_BLAS_SINGLE_THREAD = 4 * 65_536
"""Largest ``m * n * k`` OpenBLAS multiplies on one thread (GEMM_MULTITHREAD_THRESHOLD x 65,536)."""
_MIN_PRODUCT_ROWS = 8  # keep products matrix-matrix (BLAS gemm), never matrix-vector


def _product(counts: FloatArray, cols: FloatArray) -> FloatArray:
    """``counts @ cols`` as blocks small enough for BLAS to compute on the calling thread.

    Above its threshold OpenBLAS spreads one product over every core and busy-waits for them: on a
    machine already busy (CI, other test runs, our own bootstrap threads) that measured up to 50x
    slower than one thread. The values are integers (multiplicities
    times quantised columns), so blocking the sum changes no result.
    """
    r, n = counts.shape
    k = cols.shape[1]
    if r * n * k <= _BLAS_SINGLE_THREAD:
        return counts @ cols
    nb = min(n, max(64, _BLAS_SINGLE_THREAD // (k * _MIN_PRODUCT_ROWS)))
    rb = max(1, _BLAS_SINGLE_THREAD // (nb * k))
    out = np.zeros((r, k), dtype=np.float64)
    for i in range(0, r, rb):
        block = out[i : i + rb]
        for j in range(0, n, nb):
            block += counts[i : i + rb, j : j + nb] @ cols[j : j + nb]
    return out


def _workers(jobs: int, workers: int | None) -> int:
    if workers is None:
        workers = available_cores()
    return max(1, min(jobs, workers))


def resample_sums_many(
    jobs: Sequence[tuple[FloatArray, int]],
    *,
    n_resamples: int = N_RESAMPLES,
    max_chunk_bytes: int | Sequence[int] = CHUNK_BYTES,
    workers: int | None = None,
) -> list[FloatArray]:
    """:func:`resample_sums` of several ``(columns, seed)`` jobs, on up to ``workers`` threads.

    Each job has its own generator and output, so the results are those of running the jobs one by
    one, whatever the number of threads (default: the machine's cores). ``max_chunk_bytes`` may be
    given per job.
    """
    budgets = [max_chunk_bytes] * len(jobs) if isinstance(max_chunk_bytes, int) else list(max_chunk_bytes)

    def one(i: int) -> FloatArray:
        cols, seed = jobs[i]
        return resample_sums(cols, seed=seed, n_resamples=n_resamples, max_chunk_bytes=budgets[i])

    n_workers = _workers(len(jobs), workers)
    if n_workers == 1:
        return [one(i) for i in range(len(jobs))]
    with ThreadPoolExecutor(max_workers=n_workers, thread_name_prefix="ctb-bootstrap") as pool:
        return list(pool.map(one, range(len(jobs))))


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _sd(samples: FloatArray) -> float | None:
    s = samples[~np.isnan(samples)]
    return None if s.size < 2 else float(s.std(ddof=1))


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


ZERO_TOLERANCE = 1e-9
"""A resampled difference this close to zero is a tie (see :func:`sign_probability`)."""


def sign_probability(diffs: ArrayLike, tolerance: float = ZERO_TOLERANCE) -> float:
    """Bootstrap sign probability (D.2): ``min(1, 2 * min(P(d <= 0), P(d >= 0)))``.

    Resampled differences at zero count on both sides, so identical runs give 1, not 0. "At zero"
    means within ``tolerance``: a difference of task means of IoUs is a sum of fractions that is
    often exactly zero (+1/2 - 1/3 - 1/6), and whether floating point leaves 0 or 3e-17 there
    must not decide its sign; no real difference in percentage points is that small.
    """
    d = np.asarray(diffs, dtype=np.float64)
    d = d[~np.isnan(d)]
    if d.size == 0:
        return 1.0
    below = float(np.mean(d <= tolerance))
    above = float(np.mean(d >= -tolerance))
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
    a: ArrayLike,
    b: ArrayLike,
    *,
    seed: int,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    max_chunk_bytes: int = CHUNK_BYTES,
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
    diffs = bootstrap(
        d.size,
        lambda idx: np.take(d, idx).mean(axis=1),
        seed=seed,
        n_resamples=n_resamples,
        max_chunk_bytes=max_chunk_bytes,
    )
    return float(d.mean()), percentile_interval(diffs, confidence), sign_probability(diffs)


def paired_pooled_difference(
    num_a: ArrayLike,
    den_a: ArrayLike,
    num_b: ArrayLike,
    den_b: ArrayLike,
    *,
    seed: int,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
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
    diffs = bootstrap(
        na.size,
        lambda idx: ratio_a(idx) - ratio_b(idx),
        seed=seed,
        n_resamples=n_resamples,
        max_chunk_bytes=max_chunk_bytes,
    )
    est = None
    if da.sum() > 0 and db.sum() > 0:
        est = float(na.sum() / da.sum() - nb.sum() / db.sum())
    return est, percentile_interval(diffs, confidence), sign_probability(diffs)


# --------------------------------------------------------------------------- run-level helpers

_MACRO: dict[FamilyName, tuple[tuple[str, str], ...]] = {
    # (metric name in the output, TaskScores attribute)
    "rca": (("accuracy", "exact"), ("loc_iou", "loc"), ("id_iou", "ident"), ("triplet_iou", "triplet")),
    "path": (("accuracy", "exact"), ("loc_iou", "loc"), ("rest_iou", "rest"), ("sequence_iou", "sequence")),
    "topology": (("accuracy", "exact"), ("loc_iou", "loc"), ("link_iou", "link_iou")),
}


def _macro(family: FamilyName, rows: Sequence[TaskScores]) -> tuple[tuple[str, str], ...]:
    """A family's task-macro metrics: the built-ins' from :data:`_MACRO`; a plug-in's accuracy, Loc and
    then each of its parts under its own name (from its rows, :attr:`TaskScores.parts`)."""
    if family in _MACRO:
        return _MACRO[family]
    parts = dict.fromkeys(p for s in rows for p in s.parts)
    return (("accuracy", "exact"), ("loc_iou", "loc"), *((p, p) for p in parts))


def _values(rows: Sequence[TaskScores], attr: str) -> FloatArray:
    if rows and attr not in _ATTRS:  # a plug-in family's part
        return np.array([float(s.figure(attr) or 0.0) for s in rows], dtype=np.float64)
    return np.array([float(getattr(s, attr) or 0.0) for s in rows], dtype=np.float64)


def _binary(values: FloatArray) -> bool:
    """Whether per-task values are 0/1 (one attempt per task). A several-trial run's accuracy is each
    task's share of correct trials: no McNemar table, so its paired test is the bootstrap sign test."""
    return bool(np.all((values == 0.0) | (values == 1.0)))


def _coverage_parts(rows: Sequence[TaskScores]) -> tuple[FloatArray, FloatArray]:
    """Per-task covered and golden action counts (the parts of pooled evidence coverage)."""
    return (
        np.array([s.evidence.covered for s in rows], dtype=np.float64),
        np.array([s.evidence.golden for s in rows], dtype=np.float64),
    )


_ATTRS = frozenset(
    {"exact", "loc", "ident", "triplet", "rest", "sequence", "link_iou", "edges_intersection", "edges_union"}
)

_POOLED: dict[FamilyName, tuple[str, ...]] = {
    "rca": ("evidence_coverage", "evidence_f1"),
    "path": ("evidence_coverage", "evidence_f1", "micro_edge_iou"),
    "topology": ("evidence_coverage", "evidence_f1"),
}


def _by_family(rows: Iterable[TaskScores], run: str | None = None) -> dict[FamilyName, list[TaskScores]]:
    """The rows per family: every built-in (empty when it has none), then plug-in families present."""
    out: dict[FamilyName, list[TaskScores]] = {f: [] for f in FAMILIES}
    for s in rows:
        out.setdefault(s.family, []).append(s)
    for f in out:
        out[f].sort(key=lambda s: (s.task_id, s.trial))
        ids = [(s.task_id, s.trial) for s in out[f]]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate task id in family {f}" + (f" of run {run!r}" if run else ""))
    return out


def metric_seed(family: str, metric: str, base_seed: int = BASE_SEED) -> int:
    """The seed of a metric's run-level bootstraps: ``seed_for("bootstrap:<family>:<metric>")``."""
    return seed_for(f"bootstrap:{family}:{metric}", base_seed=base_seed)


def _boot_metrics(family: FamilyName, rows: Sequence[TaskScores]) -> tuple[str, ...]:
    """Metrics that need resampling: the paired task-macro ones and every pooled ratio."""
    return tuple(name for name, _ in _macro(family, rows)[:3]) + _POOLED.get(
        family, ("evidence_coverage", "evidence_f1")
    )


def _run_columns(rows: Sequence[TaskScores], family: FamilyName) -> FloatArray:
    """Per-task columns of one run: exact, loc, ID/Rest, then C, G, A (and edge I, U for paths).

    Every run-level statistic is a function of resampled sums of these columns: task means are
    sums / n, pooled ratios quotients of sums, paired differences differences of two runs' sums.
    """
    cols = [_values(rows, attr) for _, attr in _macro(family, rows)[:3]]
    cols += [np.zeros(len(rows), dtype=np.float64)] * (3 - len(cols))  # a plug-in with no part
    cols += [
        np.array([getattr(s.evidence, a) for s in rows], dtype=np.float64)
        for a in ("covered", "golden", "executed")
    ]
    if family == "path":
        cols += [_values(rows, "edges_intersection"), _values(rows, "edges_union")]
    return np.column_stack(cols)


def _pooled_from_sums(sums: FloatArray, metric: str) -> FloatArray:
    c, g, a = sums[:, 3], sums[:, 4], sums[:, 5]
    if metric == "evidence_coverage":
        return _ratio(c, g)
    if metric == "evidence_f1":
        return _ratio(2.0 * c, g + a)
    if metric == "micro_edge_iou":
        return _ratio(sums[:, 6], sums[:, 7])
    raise ValueError(f"unknown pooled metric {metric!r}")


def _resample_runs(
    fams: Mapping[str, Mapping[FamilyName, list[TaskScores]]],
    *,
    n_resamples: int,
    base_seed: int,
    max_chunk_bytes: int,
    workers: int | None,
) -> dict[tuple[str, FamilyName], dict[str, FloatArray]]:
    """Resampled column sums of every run and family, per metric: ``{(run, family): {metric: sums}}``.

    Each metric has its own index matrix (seed :func:`metric_seed`); runs holding the same tasks of
    a family go side by side into one :func:`resample_sums` call per metric, so a metric's draw is
    paid once whatever the number of runs and pairs. A run whose task list differs (an unfinished
    run) gets its own calls with the same seeds.
    """
    groups: dict[tuple[FamilyName, tuple[str, ...]], list[str]] = {}
    for name, fam in fams.items():
        for f in fam:
            if fam[f]:
                groups.setdefault((f, tuple(s.task_id for s in fam[f])), []).append(name)
    plan = [
        (f, m, names, cols)
        for (f, _), names in groups.items()
        for cols in [[_run_columns(fams[n][f], f) for n in names]]
        for m in _boot_metrics(f, fams[names[0]][f])
    ]
    # Each metric resamples only the columns it reads (the product's cost grows with them); the
    # sums go back to their usual positions, the other columns stay NaN.
    used = [_metric_columns(f, m, fams[names[0]][f]) for f, m, names, _ in plan]
    jobs = [
        (np.hstack([c[:, u] for c in cols]), metric_seed(f, m, base_seed))
        for (f, m, _, cols), u in zip(plan, used, strict=True)
    ]
    sums = resample_sums_many(jobs, n_resamples=n_resamples, max_chunk_bytes=max_chunk_bytes, workers=workers)
    out: dict[tuple[str, FamilyName], dict[str, FloatArray]] = {}
    for (f, m, names, cols), u, total in zip(plan, used, sums, strict=True):
        for i, (name, c) in enumerate(zip(names, cols, strict=True)):
            full = np.full((total.shape[0], c.shape[1]), np.nan)
            full[:, u] = total[:, i * len(u) : (i + 1) * len(u)]
            out.setdefault((name, f), {})[m] = full
    return out


def _metric_columns(family: FamilyName, metric: str, rows: Sequence[TaskScores]) -> list[int]:
    """Positions in :func:`_run_columns` that a metric's bootstrap reads."""
    macro = [name for name, _ in _macro(family, rows)[:3]]
    if metric in macro:
        return [macro.index(metric)]
    return {"evidence_coverage": [3, 4], "evidence_f1": [3, 4, 5], "micro_edge_iou": [6, 7]}[metric]


def _standard_errors_of(
    rows: Mapping[FamilyName, list[TaskScores]], sums: Mapping[FamilyName, Mapping[str, FloatArray]]
) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {}
    for f in rows:
        if f not in FAMILIES and not rows[f]:
            continue
        res: dict[str, float | None] = {}
        for name, attr in _macro(f, rows[f]):
            res[name] = standard_error(_values(rows[f], attr)) if rows[f] else None
        for metric in _POOLED.get(f, ("evidence_coverage", "evidence_f1")):
            res[metric] = _sd(_pooled_from_sums(sums[f][metric], metric)) if rows[f] else None
        out[f] = res
    return out


def standard_errors_many(
    runs: Mapping[str, Iterable[TaskScores]],
    *,
    n_resamples: int = N_RESAMPLES,
    base_seed: int = BASE_SEED,
    max_chunk_bytes: int = CHUNK_BYTES,
    workers: int | None = None,
) -> dict[str, dict[str, dict[str, float | None]]]:
    """:func:`standard_errors` of several runs at once, sharing the draws (same numbers, less work)."""
    fams = {name: _by_family(rows, name) for name, rows in runs.items()}
    sums = _resample_runs(
        fams, n_resamples=n_resamples, base_seed=base_seed, max_chunk_bytes=max_chunk_bytes, workers=workers
    )
    return {
        name: _standard_errors_of(fam, {f: sums[(name, f)] for f in fam if fam[f]})
        for name, fam in fams.items()
    }


def standard_errors(
    scores: Iterable[TaskScores],
    *,
    run: str = "run",
    n_resamples: int = N_RESAMPLES,
    base_seed: int = BASE_SEED,
    max_chunk_bytes: int = CHUNK_BYTES,
    workers: int | None = None,
) -> dict[str, dict[str, float | None]]:
    """Standard errors of one run's headline metrics, per family (D.1, Table 5).

    Task-macro metrics: sample sd / sqrt(n). Pooled ratios (evidence coverage, evidence F1, and for
    paths the micro edge IoU): bootstrap SE within the family from the metric's index matrix (seed
    :func:`metric_seed`; module docstring). ``run`` names the run in error messages only: the draws
    depend on the family and its task list, so a run's standard errors are the same whether it is
    scored alone or in a report with others.
    """
    return standard_errors_many(
        {run: scores},
        n_resamples=n_resamples,
        base_seed=base_seed,
        max_chunk_bytes=max_chunk_bytes,
        workers=workers,
    )[run]


class _PairedCommon(TypedDict):
    """The fields every :class:`PairedResult` of one family and pair of runs shares."""

    family: str
    run_a: str
    run_b: str
    n: int
    n_resamples: int


def _paired_results(
    ra: Sequence[TaskScores],
    rb: Sequence[TaskScores],
    family: FamilyName,
    *,
    run_a: str,
    run_b: str,
    sums_a: Mapping[str, FloatArray],
    sums_b: Mapping[str, FloatArray],
    base_seed: int,
    n_resamples: int,
    confidence: float,
) -> list[PairedResult]:
    n = len(ra)
    common = _PairedCommon(family=family, run_a=run_a, run_b=run_b, n=n, n_resamples=n_resamples)
    results: list[PairedResult] = []
    for j, (name, attr) in enumerate(_macro(family, ra)[:3]):
        x, y = _values(ra, attr), _values(rb, attr)
        diffs = (sums_a[name][:, j] - sums_b[name][:, j]) / n
        seed = metric_seed(family, name, base_seed)
        ci = percentile_interval(diffs, confidence)
        ci_low, ci_high = ci if ci is not None else (None, None)
        diff = float((x - y).mean())
        if name == "accuracy" and _binary(x) and _binary(y):
            a_only, b_only, p = mcnemar_exact(x > 0.5, y > 0.5)
            results.append(
                PairedResult(
                    **common,
                    seed=seed,
                    metric=name,
                    a=float(x.mean()),
                    b=float(y.mean()),
                    diff=diff,
                    ci_low=ci_low,
                    ci_high=ci_high,
                    p_value=p,
                    test="mcnemar-exact",
                    a_only=a_only,
                    b_only=b_only,
                )
            )
        else:
            results.append(
                PairedResult(
                    **common,
                    seed=seed,
                    metric=name,
                    a=float(x.mean()),
                    b=float(y.mean()),
                    diff=diff,
                    ci_low=ci_low,
                    ci_high=ci_high,
                    p_value=sign_probability(diffs),
                    test="bootstrap-sign",
                )
            )
    na, da = _coverage_parts(ra)
    nb, db = _coverage_parts(rb)
    a_cov = float(na.sum() / da.sum()) if da.sum() > 0 else None
    b_cov = float(nb.sum() / db.sum()) if db.sum() > 0 else None
    diffs = _pooled_from_sums(sums_a["evidence_coverage"], "evidence_coverage") - _pooled_from_sums(
        sums_b["evidence_coverage"], "evidence_coverage"
    )
    ci = percentile_interval(diffs, confidence)
    ci_low, ci_high = ci if ci is not None else (None, None)
    results.append(
        PairedResult(
            **common,
            seed=metric_seed(family, "evidence_coverage", base_seed),
            metric="evidence_coverage",
            a=a_cov,
            b=b_cov,
            diff=None if a_cov is None or b_cov is None else a_cov - b_cov,
            ci_low=ci_low,
            ci_high=ci_high,
            p_value=sign_probability(diffs),
            test="bootstrap-sign",
        )
    )
    return results


def _check_pairs(
    fams: Mapping[str, Mapping[FamilyName, list[TaskScores]]], pairs: Sequence[tuple[str, str]]
) -> None:
    for a, b in pairs:
        for f in dict.fromkeys([*fams[a], *fams[b]]):
            if [s.task_id for s in fams[a].get(f, [])] != [s.task_id for s in fams[b].get(f, [])]:
                raise ValueError(f"runs {a!r} and {b!r} do not hold the same {f} tasks")


def _paired_from(
    fams: Mapping[str, Mapping[FamilyName, list[TaskScores]]],
    sums: Mapping[tuple[str, FamilyName], Mapping[str, FloatArray]],
    pairs: Sequence[tuple[str, str]],
    *,
    n_resamples: int,
    base_seed: int,
    confidence: float,
) -> list[PairedResult]:
    results: list[PairedResult] = []
    for a, b in pairs:
        for f in fams[a]:
            if fams[a][f]:
                results.extend(
                    _paired_results(
                        fams[a][f],
                        fams[b][f],
                        f,
                        run_a=a,
                        run_b=b,
                        sums_a=sums[(a, f)],
                        sums_b=sums[(b, f)],
                        base_seed=base_seed,
                        n_resamples=n_resamples,
                        confidence=confidence,
                    )
                )
    return results


def _compare_pairs(
    runs: Mapping[str, Iterable[TaskScores]],
    pairs: Sequence[tuple[str, str]],
    *,
    n_resamples: int,
    base_seed: int,
    confidence: float,
    max_chunk_bytes: int,
    workers: int | None,
) -> list[PairedResult]:
    """Every (A, B) pair's comparison, from the metrics' shared index matrices."""
    used = list(dict.fromkeys(name for pair in pairs for name in pair))
    fams = {name: _by_family(runs[name], name) for name in used}
    _check_pairs(fams, pairs)
    sums = _resample_runs(
        fams, n_resamples=n_resamples, base_seed=base_seed, max_chunk_bytes=max_chunk_bytes, workers=workers
    )
    return _paired_from(
        fams, sums, pairs, n_resamples=n_resamples, base_seed=base_seed, confidence=confidence
    )


def run_statistics(
    runs: Mapping[str, Iterable[TaskScores]],
    pairs: Sequence[tuple[str, str]],
    *,
    n_resamples: int = N_RESAMPLES,
    base_seed: int = BASE_SEED,
    confidence: float = CONFIDENCE,
    max_chunk_bytes: int = CHUNK_BYTES,
    workers: int | None = None,
) -> tuple[dict[str, dict[str, dict[str, float | None]]], list[PairedResult]]:
    """Standard errors of every run and the Holm-adjusted comparisons of ``pairs``, in one pass.

    The numbers are exactly those of :func:`standard_errors_many` and :func:`compare_scope`; a
    report computes both from the same draws (one per family and metric) instead of drawing twice.
    """
    fams = {name: _by_family(rows, name) for name, rows in runs.items()}
    _check_pairs(fams, pairs)
    sums = _resample_runs(
        fams, n_resamples=n_resamples, base_seed=base_seed, max_chunk_bytes=max_chunk_bytes, workers=workers
    )
    se = {
        name: _standard_errors_of(fam, {f: sums[(name, f)] for f in fam if fam[f]})
        for name, fam in fams.items()
    }
    paired = _paired_from(
        fams, sums, pairs, n_resamples=n_resamples, base_seed=base_seed, confidence=confidence
    )
    return se, holm_adjust(paired)


def compare_runs(
    a: Iterable[TaskScores],
    b: Iterable[TaskScores],
    *,
    run_a: str,
    run_b: str,
    n_resamples: int = N_RESAMPLES,
    base_seed: int = BASE_SEED,
    confidence: float = CONFIDENCE,
    max_chunk_bytes: int = CHUNK_BYTES,
    workers: int | None = None,
) -> list[PairedResult]:
    """Paired comparison A - B of two runs on the same tasks, per family (D.2).

    Metrics per family: accuracy (exact McNemar + paired bootstrap interval), the two task-macro IoUs
    (RCA-Loc, RCA-ID / Path-Loc, Path-Rest) and pooled evidence coverage, each from its metric's
    index matrix (seed :func:`metric_seed`), resampled jointly for both runs. Both runs must hold the
    same task ids in each family (unanswered tasks are records too, scored as wrong): a
    ``ValueError`` otherwise, rather than silently comparing different task sets.
    """
    if run_a == run_b:
        raise ValueError("the two runs of a comparison need different names")
    return _compare_pairs(
        {run_a: list(a), run_b: list(b)},
        [(run_a, run_b)],
        n_resamples=n_resamples,
        base_seed=base_seed,
        confidence=confidence,
        max_chunk_bytes=max_chunk_bytes,
        workers=workers,
    )


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
    runs: Mapping[str, Iterable[TaskScores]],
    pairs: Sequence[tuple[str, str]],
    *,
    n_resamples: int = N_RESAMPLES,
    base_seed: int = BASE_SEED,
    confidence: float = CONFIDENCE,
    max_chunk_bytes: int = CHUNK_BYTES,
    workers: int | None = None,
) -> list[PairedResult]:
    """All pairs of one comparison scope, Holm-adjusted within family and metric (D.2).

    ``runs`` maps run names to their scores; ``pairs`` lists (A, B) run names. Each pair's numbers are
    those :func:`compare_runs` gives it alone; only the Holm adjustment depends on the scope.
    """
    materialised = {name: list(rows) for name, rows in runs.items()}
    results = _compare_pairs(
        materialised,
        pairs,
        n_resamples=n_resamples,
        base_seed=base_seed,
        confidence=confidence,
        max_chunk_bytes=max_chunk_bytes,
        workers=workers,
    )
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


def _members(
    rows: Sequence[TaskScores], key: str | Callable[[TaskScores], Any]
) -> tuple[dict[Any, IndexArray], int]:
    """Row indices of every stratum value, and the number of rows in no stratum.

    This runs once per field over every task of a run, so it works on the few distinct values: each
    row gets the code of its value, and a stratum gathers the codes whose value is or holds it.
    """
    values = [s.meta.get(key) for s in rows] if isinstance(key, str) else [key(s) for s in rows]
    try:
        distinct = set(values)
    except TypeError:  # lists or sets (categories): their tuple stands for them
        values = [tuple(v) if isinstance(v, (list, set)) else v for v in values]
        distinct = set(values)
    code = {v: i for i, v in enumerate(distinct)}
    coded = np.fromiter((code[v] for v in values), dtype=np.intp, count=len(values))
    by_stratum: dict[Any, list[int]] = {}
    unassigned: list[int] = []
    for value, c in code.items():
        strata = _strata_of(value)
        if not strata:
            unassigned.append(c)
        for stratum in strata:
            by_stratum.setdefault(stratum, []).append(c)
    sizes = np.bincount(coded, minlength=len(code))
    members = {
        stratum: np.flatnonzero(coded == cs[0]) if len(cs) == 1 else np.flatnonzero(np.isin(coded, cs))
        for stratum, cs in by_stratum.items()
    }
    return members, int(sizes[unassigned].sum())


def breakdown(
    rows: Iterable[TaskScores] | ScoreTable,
    key: str | Callable[[TaskScores], Any],
    *,
    min_tasks: int = MIN_STRATUM_TASKS,
) -> dict[str, Any]:
    """Per-stratum aggregation (C.2-C.4, Tables 19-22) by a metadata field or a function.

    ``key`` is a ``meta`` field name or a callable returning the task's stratum value: a single value,
    a collection (the task counts in each of its strata, as RCA categories do in Table 19), or
    ``None`` (the task is in no stratum and is counted under ``unassigned`` - e.g. path tasks for an
    RCA-only field). Each stratum gets the full :func:`~ctbench.scoring.summary.summarize` dict and
    ``warning: True`` when one of its non-empty families has fewer than ``min_tasks`` tasks. Strata are
    ordered numerically where the values are numbers, then by name. Pass a
    :class:`~ctbench.scoring.summary.ScoreTable` to break one run down by several fields without
    reading its scores into columns each time.
    """
    table = rows if isinstance(rows, ScoreTable) else ScoreTable.of(rows)
    members, unassigned = _members(table.rows, key)
    strata: dict[str, Any] = {}
    for value in sorted(members, key=_stratum_order):
        name = str(value)
        if name in strata:
            raise ValueError(f"two strata of {key!r} render as {name!r}")
        summary = table.summarize(members[value])
        counts = [summary[f]["n_tasks"] for f in (*FAMILIES, *table.plugins) if f in summary]
        strata[name] = {
            "n_tasks": summary["n_tasks"],
            "n_rca": summary["rca"]["n_tasks"],
            "n_path": summary["path"]["n_tasks"],
            "n_topology": summary["topology"]["n_tasks"],
            **{f"n_{f}": summary[f]["n_tasks"] for f in table.plugins if f in summary},
            "warning": any(0 < c < min_tasks for c in counts),
            "metrics": summary,
        }
    return {
        "key": key if isinstance(key, str) else getattr(key, "__name__", "key"),
        "min_tasks": min_tasks,
        "unassigned": unassigned,
        "strata": strata,
    }
