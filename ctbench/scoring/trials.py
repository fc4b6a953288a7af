"""pass@k and pass^k over repeated trials of each task (``ctb-eval run --trials K``).

With n trials of a task of which c are exactly correct, the unbiased estimators are

    pass@k = 1 - C(n - c, k) / C(n, k)      (at least one of k trials correct; Chen et al., 2021)
    pass^k = C(c, k) / C(n, k)              (all of k trials correct; Yao et al., tau-bench, 2024)

averaged over the tasks of a family. Values are fractions, as every figure of scores.json is; each
renderer turns them into percent once.

Every headline figure of a several-trial run is computed over tasks, not over task-trials
(:func:`task_means`): a task's score is the mean over its trials, n is the number of tasks, and
standard errors and paired tests are across tasks (trials of one task are not independent). pass@1
is then the summary's accuracy, with the same standard error (sample sd of the task values / sqrt(n));
the 95% interval is the 2.5 and 97.5 percentiles of a bootstrap over tasks, with the seed rule of
:mod:`ctbench.scoring.stats` and the key ``pass_k:<family>:<k>``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from math import comb
from typing import Any

import numpy as np

from ctbench.scoring.metrics import FAMILIES, EntryMatchScores, EvidenceCounts, TaskScores, TaskUsage
from ctbench.scoring.stats import BASE_SEED, N_RESAMPLES, metric_seed, standard_error


def task_means(rows: Iterable[TaskScores]) -> list[TaskScores]:
    """One row per task: the task itself when it has one attempt, else its mean over its trials.

    The mean row averages every per-task figure (accuracy becomes the share of correct trials, IoUs,
    evidence counts, entry-match sums and usage their means; unknown usage is left out of its mean),
    keeps the task's metadata, and counts its trials' statuses and failure modes in ``trial_counts``.
    Rows keep the order of each task's first appearance.
    """
    groups: dict[tuple[str, str], list[TaskScores]] = {}
    for s in rows:
        groups.setdefault((s.family, s.task_id), []).append(s)
    return [trials[0] if len(trials) == 1 else _mean_row(trials) for trials in groups.values()]


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _known_mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return _mean(known) if known else None


def _mean_row(trials: Sequence[TaskScores]) -> TaskScores:
    first = min(trials, key=lambda s: s.trial)
    counts: Counter[str] = Counter()
    for s in trials:
        counts.update(s.counts())
    entries = None
    es = [s.entries for s in trials]
    if all(e is not None for e in es):
        ok = [e for e in es if e is not None]
        hier = [e.id_hierarchical for e in ok]
        entries = EntryMatchScores(
            n_gold=ok[0].n_gold,
            id_exact=_mean([e.id_exact for e in ok]),
            id_hierarchical=None
            if any(h is None for h in hier)
            else _mean([h for h in hier if h is not None]),
            loc_exact=_mean([e.loc_exact for e in ok]),
            loc_hierarchical=_mean([e.loc_hierarchical for e in ok]),
        )

    def opt(attr: str) -> float | None:
        values = [getattr(s, attr) for s in trials]
        return None if any(v is None for v in values) else _mean(values)

    return TaskScores(
        task_id=first.task_id,
        family=first.family,
        status=first.status,
        exact=_mean([float(s.exact) for s in trials]),
        loc=_mean([s.loc for s in trials]),
        evidence=EvidenceCounts(
            covered=_mean([s.evidence.covered for s in trials]),
            golden=_mean([s.evidence.golden for s in trials]),
            executed=_mean([s.evidence.executed for s in trials]),
        ),
        usage=TaskUsage(*(_known_mean([s.usage[i] for s in trials]) for i in range(4))),
        meta=first.meta,
        ident=opt("ident"),
        triplet=opt("triplet"),
        rest=opt("rest"),
        sequence=opt("sequence"),
        link_iou=opt("link_iou"),
        edges_intersection=_mean([s.edges_intersection for s in trials]),
        edges_union=_mean([s.edges_union for s in trials]),
        entries=entries,
        has_topology=first.has_topology,
        failure=None,
        trial=1,
        n_trials=len(trials),
        trial_counts=dict(counts),
        parts={
            p: _mean([s.parts[p] for s in trials]) for p in first.parts if all(p in s.parts for s in trials)
        },
    )


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
    """(SE across tasks, 95% bootstrap interval over tasks) of the mean of per-task values, as
    fractions; both undefined below two tasks."""
    n = len(values)
    if n < 2:
        return None, None
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    means = values[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return standard_error(values), [float(lo), float(hi)]


def pass_at_k_section(
    rows: Iterable[TaskScores], trials: int, *, n_resamples: int = N_RESAMPLES, base_seed: int = BASE_SEED
) -> dict[str, Any]:
    """The ``pass_k`` block of scores.json: per family, for each k, pass@k and pass^k with SE and CI.

    A task with fewer result lines than ``trials`` counts its missing trials as wrong (as the summary
    counts a missing result), so the estimators always see n = ``trials``.
    """
    correct: dict[str, dict[str, int]] = {f: {} for f in FAMILIES}
    for s in rows:
        fam = correct.setdefault(s.family, {})
        fam[s.task_id] = fam.get(s.task_id, 0) + (1 if s.exact else 0)
    out: dict[str, Any] = {
        "trials": trials,
        "rule": "unbiased estimators over n = trials per task, averaged over tasks; fractions; SE = sample "
        "sd of the task values / sqrt(n tasks), 95% interval from a bootstrap over tasks",
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
                block[name] = {"value": math.fsum(values.tolist()) / len(values), "se": se, "ci95": ci}
        block["tasks"] = {t: {"correct": c, "trials": trials} for t, c in zip(ids, cs, strict=True)}
        out["families"][family] = block
    return out


def pass_k_rows(section: dict[str, Any]) -> list[tuple[str, int, str, float, float | None]]:
    """The ``pass_k`` block as table rows: (family, n tasks, estimator, value, SE), fractions, in the
    block's order (pass@1, then pass@k and pass^k for each k)."""
    out: list[tuple[str, int, str, float, float | None]] = []
    for family, block in section.get("families", {}).items():
        for name, fig in block.items():
            if name.startswith("pass"):
                out.append((family, int(block["n_tasks"]), name, float(fig["value"]), fig["se"]))
    return out


__all__ = ["pass_at_k", "pass_at_k_section", "pass_hat_k", "pass_k_rows", "task_means"]
