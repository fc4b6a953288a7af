"""pass@k and pass^k over repeated trials of each task (``ctb-eval run --trials K``).

With n trials of a task of which c are exactly correct, the unbiased estimators are

    pass@k = 1 - C(n - c, k) / C(n, k)      (at least one of k trials correct; Chen et al., 2021)
    pass^k = C(c, k) / C(n, k)              (all of k trials correct; Yao et al., tau-bench, 2024)

averaged over the tasks of a family. pass@1 is the mean per-trial accuracy, which is also what the
summary's accuracy is when every task has the same number of trials. The standard error is across
tasks (the bootstrap resamples tasks, never trials: trials of one task are not independent), with the
seed rule of :mod:`ctbench.scoring.stats` and the key ``pass_k:<family>:<k>``; intervals are the 2.5
and 97.5 percentiles of the same resamples.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import comb
from typing import Any

import numpy as np

from ctbench.scoring.metrics import FAMILIES, TaskScores
from ctbench.scoring.stats import BASE_SEED, N_RESAMPLES, metric_seed


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k trials drawn from n (c of them correct) is correct."""
    if n < k:
        raise ValueError(f"pass@{k} needs at least {k} trials, got {n}")
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all of k trials drawn from n (c of them correct) are correct."""
    if n < k:
        raise ValueError(f"pass^{k} needs at least {k} trials, got {n}")
    return comb(c, k) / comb(n, k)


def _ks(trials: int) -> list[int]:
    """The k reported: 1, powers of two below K, and K itself."""
    ks = {1, trials}
    k = 2
    while k < trials:
        ks.add(k)
        k *= 2
    return sorted(ks)


def _interval(values: np.ndarray, seed: int, n_resamples: int) -> tuple[float | None, list[float] | None]:
    n = len(values)
    if n < 2:
        return None, None
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    means = values[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(means.std(ddof=1)) * 100, [float(lo) * 100, float(hi) * 100]


def pass_at_k_section(
    rows: Iterable[TaskScores], trials: int, *, n_resamples: int = N_RESAMPLES, base_seed: int = BASE_SEED
) -> dict[str, Any]:
    """The ``pass_k`` block of scores.json: per family, for each k, pass@k and pass^k with SE and CI.

    A task with fewer result lines than ``trials`` counts its missing trials as wrong (as the summary
    counts a missing result), so the estimators always see n = ``trials``.
    """
    correct: dict[str, dict[str, int]] = {f: {} for f in FAMILIES}
    for s in rows:
        fam = correct[s.family]
        fam[s.task_id] = fam.get(s.task_id, 0) + (1 if s.exact else 0)
    out: dict[str, Any] = {
        "trials": trials,
        "rule": "unbiased estimators over n = trials per task; SE and "
        "95% interval from a bootstrap over tasks",
        "families": {},
    }
    for family, per_task in correct.items():
        if not per_task:
            continue
        ids = sorted(per_task)
        cs = [per_task[t] for t in ids]
        block: dict[str, Any] = {"n_tasks": len(ids)}
        for k in _ks(trials):
            for name, fn in ((f"pass@{k}", pass_at_k), (f"pass^{k}", pass_hat_k)):
                if k == 1 and name == "pass^1":
                    continue  # pass^1 == pass@1
                values = np.array([fn(trials, c, k) for c in cs], dtype=float)
                se, ci = _interval(values, metric_seed(family, f"pass_k:{name}", base_seed), n_resamples)
                block[name] = {"value": float(values.mean()) * 100, "se": se, "ci95": ci}
        block["tasks"] = {t: {"correct": c, "trials": trials} for t, c in zip(ids, cs, strict=True)}
        out["families"][family] = block
    return out


__all__ = ["pass_at_k", "pass_at_k_section", "pass_hat_k"]
