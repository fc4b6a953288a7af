"""Benchmark of the bootstrap statistics: vectorised (ctbench.scoring.stats) vs a per-resample loop.

Run from the repository root:

    python tests/bench/bench_stats.py            # full: 10,000 resamples
    python tests/bench/bench_stats.py --quick    # 1,000 resamples, smaller big case

Two workloads, both on synthetic per-task scores:

1. The paper's shape: 4 runs x 234 tasks (126 RCA + 108 path). Standard errors of every run (5 pooled
   bootstraps each) and paired comparisons of all 6 run pairs (8 paired bootstraps + McNemar each).
2. 100,000 RCA tasks, 2 runs: standard errors of one run and one paired comparison.

The loop baseline is the straightforward implementation: for each resample, draw one index vector
with the same generator and recompute the statistic. It uses the same seeds, so the two must agree to
rounding; the script checks that. When the loop would take too long it is run on fewer resamples and
its time extrapolated linearly to the full count - the output says so on that line.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path as FsPath

import numpy as np

sys.path.insert(0, str(FsPath(__file__).resolve().parents[2]))

from ctbench.scoring.metrics import EvidenceCounts, TaskScores, TaskUsage  # noqa: E402
from ctbench.scoring.stats import (  # noqa: E402
    CHUNK_BYTES,
    MAX_CHUNK_BYTES,
    bootstrap_pooled_se,
    compare_runs,
    compare_scope,
    paired_mean_difference,
    paired_pooled_difference,
    seed_for,
    standard_errors,
)

FloatArray = np.ndarray


# --------------------------------------------------------------------------- synthetic data


def synthetic_run(seed: int, n_rca: int, n_path: int) -> list[TaskScores]:
    rng = np.random.default_rng(seed)
    rows: list[TaskScores] = []
    g = rng.integers(1, 8, n_rca)
    c = np.minimum(g, rng.integers(0, 8, n_rca))
    a = rng.integers(0, 15, n_rca)
    ex = rng.random(n_rca) < 0.45
    loc, ident = rng.random(n_rca), rng.random(n_rca)
    for i in range(n_rca):
        rows.append(
            TaskScores(
                f"r{i:06d}",
                "rca",
                "answered",
                bool(ex[i]),
                float(loc[i]),
                EvidenceCounts(int(c[i]), int(g[i]), int(a[i])),
                TaskUsage(),
                {},
                ident=float(ident[i]),
                triplet=float(ex[i]),
            )
        )
    g = rng.integers(3, 40, n_path)
    c = np.minimum(g, rng.integers(0, 40, n_path))
    u = rng.integers(2, 20, n_path)
    inter = np.minimum(u, rng.integers(0, 20, n_path))
    ex = rng.random(n_path) < 0.7
    loc, rest = rng.random(n_path), rng.random(n_path)
    for i in range(n_path):
        rows.append(
            TaskScores(
                f"p{i:06d}",
                "path",
                "answered",
                bool(ex[i]),
                float(loc[i]),
                EvidenceCounts(int(c[i]), int(g[i]), int(g[i])),
                TaskUsage(),
                {},
                rest=float(rest[i]),
                sequence=float(ex[i]),
                edges_intersection=int(inter[i]),
                edges_union=int(u[i]),
            )
        )
    return rows


# --------------------------------------------------------------------------- the bootstrap jobs


@dataclass
class Job:
    """One bootstrap of the workload, in a form both implementations can run."""

    kind: str  # "se" | "mean" | "pooled"
    arrays: tuple[FloatArray, ...]
    seed: int


def _fam(rows: list[TaskScores], family: str) -> list[TaskScores]:
    return sorted((s for s in rows if s.family == family), key=lambda s: s.task_id)


def _arr(values: object) -> FloatArray:
    return np.asarray(list(values), dtype=np.float64)  # type: ignore[call-overload]


def se_jobs(rows: list[TaskScores], run: str) -> list[Job]:
    jobs = []
    for family in ("rca", "path"):
        fr = _fam(rows, family)
        if not fr:
            continue
        parts = {
            "evidence_coverage": (_arr(s.evidence.covered for s in fr), _arr(s.evidence.golden for s in fr)),
            "evidence_f1": (
                _arr(2 * s.evidence.covered for s in fr),
                _arr(s.evidence.golden + s.evidence.executed for s in fr),
            ),
        }
        if family == "path":
            parts["micro_edge_iou"] = (
                _arr(s.edges_intersection for s in fr),
                _arr(s.edges_union for s in fr),
            )
        for metric, (num, den) in parts.items():
            jobs.append(Job("se", (num, den), seed_for(f"se:{family}.{metric}", run)))
    return jobs


def paired_jobs(a: list[TaskScores], b: list[TaskScores], run_a: str, run_b: str) -> list[Job]:
    jobs = []
    for family, attrs in (
        ("rca", (("accuracy", "exact"), ("loc_iou", "loc"), ("id_iou", "ident"))),
        ("path", (("accuracy", "exact"), ("loc_iou", "loc"), ("rest_iou", "rest"))),
    ):
        fa, fb = _fam(a, family), _fam(b, family)
        if not fa:
            continue
        for metric, attr in attrs:
            jobs.append(
                Job(
                    "mean",
                    (_arr(float(getattr(s, attr)) for s in fa), _arr(float(getattr(s, attr)) for s in fb)),
                    seed_for(f"paired:{family}.{metric}", run_a, run_b),
                )
            )
        jobs.append(
            Job(
                "pooled",
                (
                    _arr(s.evidence.covered for s in fa),
                    _arr(s.evidence.golden for s in fa),
                    _arr(s.evidence.covered for s in fb),
                    _arr(s.evidence.golden for s in fb),
                ),
                seed_for(f"paired:{family}.evidence_coverage", run_a, run_b),
            )
        )
    return jobs


def run_vectorised(job: Job, n_resamples: int) -> tuple[float, ...]:
    if job.kind == "se":
        se = bootstrap_pooled_se(*job.arrays, seed=job.seed, n_resamples=n_resamples)
        return (float("nan") if se is None else se,)
    if job.kind == "mean":
        _, ci, p = paired_mean_difference(*job.arrays, seed=job.seed, n_resamples=n_resamples)
    else:
        _, ci, p = paired_pooled_difference(*job.arrays, seed=job.seed, n_resamples=n_resamples)
    assert ci is not None
    return (*ci, p)


def run_loop(job: Job, n_resamples: int) -> tuple[float, ...]:
    """The straightforward baseline: one resample per Python iteration."""
    rng = np.random.default_rng(job.seed)
    n = job.arrays[0].size
    values = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, size=n)
        if job.kind == "se":
            num, den = job.arrays
            values.append(num[idx].sum() / den[idx].sum())
        elif job.kind == "mean":
            x, y = job.arrays
            values.append(x[idx].mean() - y[idx].mean())
        else:
            na, da, nb, db = job.arrays
            values.append(na[idx].sum() / da[idx].sum() - nb[idx].sum() / db[idx].sum())
    v = np.asarray(values)
    if job.kind == "se":
        return (float(v.std(ddof=1)),)
    lo, hi = np.percentile(v, [2.5, 97.5])
    p = min(1.0, 2 * min(float(np.mean(v <= 0)), float(np.mean(v >= 0))))
    return (float(lo), float(hi), p)


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


# --------------------------------------------------------------------------- reporting


def compare_line(
    label: str, jobs: list[Job], n_resamples: int, vec_seconds: float, loop_budget: float
) -> None:
    """Time the loop (extrapolating when needed) and check both implementations agree."""
    probe = max(20, min(200, n_resamples))
    t_probe, _ = timed(lambda: [run_loop(j, probe) for j in jobs])
    estimate = t_probe * n_resamples / probe
    loop_resamples = (
        n_resamples if estimate <= loop_budget else max(probe, int(n_resamples * loop_budget / estimate))
    )
    t_loop, loop_out = timed(lambda: [run_loop(j, loop_resamples) for j in jobs])
    extrapolated = loop_resamples < n_resamples
    loop_full = t_loop * n_resamples / loop_resamples
    check = [run_vectorised(j, loop_resamples) for j in jobs]
    diff = max(abs(a - b) for x, y in zip(check, loop_out, strict=True) for a, b in zip(x, y, strict=True))  # type: ignore[arg-type]
    note = (
        f"loop run on {loop_resamples:,} resamples, time extrapolated x{n_resamples / loop_resamples:.1f}"
        if extrapolated
        else "loop run in full"
    )
    print(
        f"  {label:<44} {len(jobs):>4} bootstraps  vectorised {vec_seconds:8.2f} s   "
        f"loop {loop_full:8.2f} s   speed-up x{loop_full / vec_seconds:6.1f}"
    )
    print(f"  {'':<44} {'':>4}             ({note}; max |vectorised - loop| = {diff:.2e})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--big", type=int, default=100_000, help="task count of the large workload")
    ap.add_argument("--loop-budget", type=float, default=60.0, help="seconds the loop may take per line")
    ap.add_argument("--quick", action="store_true", help="1,000 resamples, 20,000 big tasks, 15 s budget")
    args = ap.parse_args(argv)
    if args.quick:
        args.resamples, args.big, args.loop_budget = 1_000, 20_000, 15.0
    B = args.resamples
    print(
        f"numpy {np.__version__}; {B:,} resamples per bootstrap; resampling chunks of "
        f"{CHUNK_BYTES / 2**20:g} MiB (ceiling {MAX_CHUNK_BYTES / 2**20:g} MiB)"
    )
    t_import, _ = timed(
        lambda: compare_runs(
            synthetic_run(0, 12, 12), synthetic_run(1, 12, 12), run_a="w", run_b="u", n_resamples=10
        )
    )
    print(f"warm-up (first scipy.stats import, one-off, not counted below): {t_import:.2f} s\n")

    # ---- workload 1: 4 runs x 234 tasks
    names = ["CX+G", "CC+S", "HA+D", "HA+Q"]
    runs = {name: synthetic_run(i, 126, 108) for i, name in enumerate(names)}
    pairs = list(itertools.combinations(names, 2))
    print("Workload 1: 4 runs x 234 tasks (126 RCA + 108 path)")
    t_se, _ = timed(lambda: {n: standard_errors(r, run=n, n_resamples=B) for n, r in runs.items()})
    compare_line(
        "standard errors, 4 runs",
        [j for n, r in runs.items() for j in se_jobs(r, n)],
        B,
        t_se,
        args.loop_budget,
    )
    t_cmp, _ = timed(lambda: compare_scope(runs, pairs, n_resamples=B))
    compare_line(
        "paired comparisons, 6 pairs (+McNemar, Holm)",
        [j for a, b in pairs for j in paired_jobs(runs[a], runs[b], a, b)],
        B,
        t_cmp,
        args.loop_budget,
    )
    print(f"  total vectorised: {t_se + t_cmp:.2f} s\n")

    # ---- workload 2: 100,000 tasks
    n = args.big
    print(f"Workload 2: {n:,} RCA tasks, 2 runs")
    big_a, big_b = synthetic_run(100, n, 0), synthetic_run(101, n, 0)
    t_se, _ = timed(lambda: standard_errors(big_a, run="A", n_resamples=B))
    compare_line("standard errors, 1 run", se_jobs(big_a, "A"), B, t_se, args.loop_budget)
    t_cmp, _ = timed(lambda: compare_runs(big_a, big_b, run_a="A", run_b="B", n_resamples=B))
    compare_line("paired comparison, 1 pair", paired_jobs(big_a, big_b, "A", "B"), B, t_cmp, args.loop_budget)
    print(f"  total vectorised: {t_se + t_cmp:.2f} s")

    print("\nChunk size (one pooled-ratio bootstrap, same draws whatever the chunk):")
    for n_tasks in (234, n):
        job = se_jobs(synthetic_run(7, n_tasks, 0), "chunk")[0]
        cells = []
        for chunk in (CHUNK_BYTES, MAX_CHUNK_BYTES):
            t, _ = timed(
                lambda c=chunk, j=job: bootstrap_pooled_se(
                    *j.arrays, seed=j.seed, n_resamples=B, max_chunk_bytes=c
                )
            )
            cells.append(f"{chunk / 2**20:g} MiB {t:6.2f} s ({t * 1e9 / (B * n_tasks):.1f} ns/cell)")
        print(f"  {n_tasks:>7,} tasks: " + "   ".join(cells))
    print(
        "\nNote: with 100,000 tasks each resample is already a 100,000-element numpy operation, so the loop's\n"
        "per-iteration overhead is small and the two run at similar speed; the index draws dominate both."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
