"""Standard errors, bootstrap reproducibility, paired tests, Holm and breakdowns (D.1, D.2, C.2-C.4)."""

from __future__ import annotations

import math
import zlib
from math import comb

import numpy as np
import pytest

from ctbench.scoring.metrics import EvidenceCounts, TaskScores, TaskUsage
from ctbench.scoring.stats import (
    BASE_SEED,
    PairedResult,
    bootstrap,
    bootstrap_pooled_se,
    breakdown,
    compare_runs,
    compare_scope,
    holm,
    holm_adjust,
    mcnemar_exact,
    metric_seed,
    paired_mean_difference,
    paired_pooled_difference,
    percentile_interval,
    seed_for,
    sign_probability,
    standard_error,
    standard_errors,
)


def rca_row(
    tid: str, exact: bool, loc: float, ident: float, c: int, g: int, a: int = 0, **meta: object
) -> TaskScores:
    return TaskScores(
        tid,
        "rca",
        "answered",
        exact,
        loc,
        EvidenceCounts(c, g, a),
        TaskUsage(),
        meta,
        ident=ident,
        triplet=float(exact),
    )


def path_row(
    tid: str,
    exact: bool,
    loc: float,
    rest: float,
    c: int,
    g: int,
    inter: int = 1,
    union: int = 2,
    **meta: object,
) -> TaskScores:
    return TaskScores(
        tid,
        "path",
        "answered",
        exact,
        loc,
        EvidenceCounts(c, g, g),
        TaskUsage(),
        meta,
        rest=rest,
        sequence=float(exact),
        edges_intersection=inter,
        edges_union=union,
    )


def synthetic_run(seed: int, n_rca: int = 30, n_path: int = 20) -> list[TaskScores]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_rca):
        g = int(rng.integers(1, 6))
        rows.append(
            rca_row(
                f"r{i:03d}",
                bool(rng.random() < 0.5),
                float(rng.random()),
                float(rng.random()),
                int(rng.integers(0, g + 1)),
                g,
                int(rng.integers(0, 8)),
            )
        )
    for i in range(n_path):
        g = int(rng.integers(1, 10))
        u = int(rng.integers(1, 12))
        rows.append(
            path_row(
                f"p{i:03d}",
                bool(rng.random() < 0.7),
                float(rng.random()),
                float(rng.random()),
                int(rng.integers(0, g + 1)),
                g,
                int(rng.integers(0, u + 1)),
                u,
            )
        )
    return rows


# --------------------------------------------------------------------------- seeds and resampling


def test_seed_rule() -> None:
    assert seed_for("se:rca.evidence_coverage", "CX+G") == 20260725 + zlib.crc32(
        b"se:rca.evidence_coverage|CX+G"
    )
    assert seed_for("paired:rca.accuracy", "A", "B") == BASE_SEED + zlib.crc32(b"paired:rca.accuracy|A|B")
    assert seed_for("m", "r", base_seed=1) == 1 + zlib.crc32(b"m|r")
    assert seed_for("m", "run1") != seed_for("m", "run2") != seed_for("m2", "run2")


def test_bootstrap_reproducible_and_offsets_differ() -> None:
    num = np.array([1, 2, 0, 3, 1, 4], dtype=float)
    den = np.array([2, 2, 1, 3, 4, 5], dtype=float)
    s1 = bootstrap_pooled_se(num, den, seed=seed_for("se:rca.evidence_coverage", "runA"))
    s2 = bootstrap_pooled_se(num, den, seed=seed_for("se:rca.evidence_coverage", "runA"))
    s3 = bootstrap_pooled_se(num, den, seed=seed_for("se:rca.evidence_coverage", "runB"))
    assert s1 == s2
    assert s1 != s3
    idx_a = bootstrap(6, lambda idx: idx[:, 0].astype(float), seed=seed_for("x", "runA"), n_resamples=50)
    idx_b = bootstrap(6, lambda idx: idx[:, 0].astype(float), seed=seed_for("x", "runB"), n_resamples=50)
    assert not np.array_equal(idx_a, idx_b)


def test_bootstrap_chunking_does_not_change_draws() -> None:
    num = np.arange(37, dtype=float) % 5
    den = np.full(37, 4.0)
    whole = bootstrap_pooled_se(num, den, seed=7, n_resamples=1000)
    chunked = bootstrap_pooled_se(num, den, seed=7, n_resamples=1000, max_chunk_bytes=16 * 37 * 3)  # 3 rows
    single = bootstrap_pooled_se(num, den, seed=7, n_resamples=1000, max_chunk_bytes=1)  # 1 row
    assert whole == chunked == single


def test_bootstrap_pooled_se_equals_explicit_loop() -> None:
    num = np.array([3, 0, 2, 5, 1, 1, 4], dtype=float)
    den = np.array([4, 2, 2, 5, 3, 1, 6], dtype=float)
    seed = seed_for("se:path.evidence_coverage", "r")
    rng = np.random.default_rng(seed)
    ratios = []
    for _ in range(2000):
        idx = rng.integers(0, 7, size=7)
        ratios.append(num[idx].sum() / den[idx].sum())
    expected = float(np.std(ratios, ddof=1))
    assert bootstrap_pooled_se(num, den, seed=seed, n_resamples=2000) == pytest.approx(expected, rel=1e-12)


def test_bootstrap_se_close_to_analytic_for_a_mean() -> None:
    # with all denominators 1 the pooled ratio is a mean; its bootstrap SE ~ sd(ddof=0)/sqrt(n)
    x = np.random.default_rng(0).random(200)
    se = bootstrap_pooled_se(x, np.ones(200), seed=1)
    assert se == pytest.approx(x.std() / math.sqrt(200), rel=0.05)


def test_standard_error_hand_value() -> None:
    assert standard_error([1, 0, 1, 1]) == pytest.approx(0.25)  # sd 0.5 / sqrt(4)
    assert standard_error([1.0]) is None


def test_pooled_se_undefined_resamples_dropped() -> None:
    assert bootstrap_pooled_se([0.0], [0.0], seed=1, n_resamples=10) is None
    assert bootstrap_pooled_se([], [], seed=1) is None


# --------------------------------------------------------------------------- McNemar, sign, Holm


def _pairs(a_only: int, b_only: int, both: int = 3, neither: int = 4) -> tuple[list[bool], list[bool]]:
    a = [True] * a_only + [False] * b_only + [True] * both + [False] * neither
    b = [False] * a_only + [True] * b_only + [True] * both + [False] * neither
    return a, b


@pytest.mark.parametrize(
    ("a_only", "b_only", "expected"),
    [
        (8, 2, 2 * (comb(10, 0) + comb(10, 1) + comb(10, 2)) / 2**10),  # 0.109375
        (0, 5, 2 / 2**5),  # 0.0625
        (3, 3, 1.0),
        (0, 0, 1.0),
        (11, 3, 2 * sum(comb(14, k) for k in range(4)) / 2**14),
    ],
)
def test_mcnemar_exact_against_hand_binomial(a_only: int, b_only: int, expected: float) -> None:
    a, b = _pairs(a_only, b_only)
    got = mcnemar_exact(a, b)
    assert got[:2] == (a_only, b_only)
    assert got[2] == pytest.approx(min(1.0, expected), rel=1e-12)


def test_sign_probability() -> None:
    assert sign_probability([1, 2, 3, -1]) == 0.5
    assert sign_probability([0, 0, 0]) == 1.0  # ties count on both sides
    assert sign_probability([0.1, 0.2]) == 0.0
    assert sign_probability([-1, 1]) == 1.0


def test_holm_hand_example() -> None:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == [1.0, 1.0]
    assert holm([0.02]) == [0.02]
    assert holm([]) == []


def test_percentile_interval() -> None:
    lo, hi = percentile_interval(np.arange(101, dtype=float))  # type: ignore[misc]
    assert (lo, hi) == (2.5, 97.5)


# --------------------------------------------------------------------------- paired bootstrap


def test_paired_mean_difference_identical_runs() -> None:
    x = np.array([1.0, 0.5, 0.0, 0.25])
    diff, ci, p = paired_mean_difference(x, x, seed=3, n_resamples=500)
    assert diff == 0.0 and ci == (0.0, 0.0) and p == 1.0


def test_paired_mean_difference_equals_explicit_loop() -> None:
    rng0 = np.random.default_rng(5)
    a, b = rng0.random(40), rng0.random(40)
    seed = seed_for("paired:rca.loc_iou", "A", "B")
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(3000):
        idx = rng.integers(0, 40, size=40)
        diffs.append(a[idx].mean() - b[idx].mean())
    diff, ci, p = paired_mean_difference(a, b, seed=seed, n_resamples=3000)
    assert diff == pytest.approx(a.mean() - b.mean())
    assert ci == pytest.approx(tuple(np.percentile(diffs, [2.5, 97.5])), rel=1e-9)
    d = np.array(diffs)
    assert p == pytest.approx(min(1.0, 2 * min(np.mean(d <= 0), np.mean(d >= 0))), abs=1e-9)


def test_paired_pooled_difference_recomputes_both_ratios() -> None:
    na, da = np.array([1, 2, 3, 0, 2.0]), np.array([2, 2, 4, 1, 3.0])
    nb, db = np.array([0, 2, 1, 0, 1.0]), np.array([2, 2, 4, 1, 3.0])
    seed = 11
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(1000):
        idx = rng.integers(0, 5, size=5)
        diffs.append(na[idx].sum() / da[idx].sum() - nb[idx].sum() / db[idx].sum())
    diff, ci, _ = paired_pooled_difference(na, da, nb, db, seed=seed, n_resamples=1000)
    assert diff == pytest.approx(8 / 12 - 4 / 12)
    assert ci == pytest.approx(tuple(np.percentile(diffs, [2.5, 97.5])), rel=1e-9)


def test_compare_runs_structure_and_seeds() -> None:
    a, b = synthetic_run(1), synthetic_run(2)
    res = compare_runs(a, b, run_a="A", run_b="B", n_resamples=500)
    assert [(r.family, r.metric) for r in res] == [
        ("rca", "accuracy"),
        ("rca", "loc_iou"),
        ("rca", "id_iou"),
        ("rca", "evidence_coverage"),
        ("path", "accuracy"),
        ("path", "loc_iou"),
        ("path", "rest_iou"),
        ("path", "evidence_coverage"),
    ]
    acc = res[0]
    ea = np.array([s.exact for s in a if s.family == "rca"])
    eb = np.array([s.exact for s in b if s.family == "rca"])
    assert acc.test == "mcnemar-exact"
    assert (acc.a_only, acc.b_only, acc.p_value) == mcnemar_exact(ea, eb)
    assert acc.diff == pytest.approx(ea.mean() - eb.mean())
    assert acc.ci_low is not None and acc.ci_high is not None and acc.ci_low <= acc.diff <= acc.ci_high
    # one matrix per family and metric (the per-metric offsets of D.1/D.2), shared by both runs
    assert acc.seed == metric_seed("rca", "accuracy") == seed_for("bootstrap:rca:accuracy")
    assert res[3].seed == metric_seed("rca", "evidence_coverage") != acc.seed
    # the shared engine draws the same resamples as the single-metric function with that seed
    _, ci, _ = paired_mean_difference(ea.astype(float), eb.astype(float), seed=acc.seed, n_resamples=500)
    assert (acc.ci_low, acc.ci_high) == ci
    assert res[1].test == "bootstrap-sign"
    # reproducible, and independent of row order
    again = compare_runs(list(reversed(a)), b, run_a="A", run_b="B", n_resamples=500)
    assert again == res
    assert isinstance(res[3].to_json()["diff"], float)


def test_compare_runs_requires_same_tasks() -> None:
    a, b = synthetic_run(1), synthetic_run(2)
    with pytest.raises(ValueError):
        compare_runs(a, b[1:], run_a="A", run_b="B", n_resamples=10)


def test_holm_within_family_and_metric() -> None:
    runs = {"A": synthetic_run(1), "B": synthetic_run(2), "C": synthetic_run(3), "D": synthetic_run(4)}
    res = compare_scope(runs, [("A", "B"), ("A", "C"), ("A", "D")], n_resamples=300)
    assert len(res) == 3 * 8
    for fam in ("rca", "path"):
        for metric in ("accuracy", "evidence_coverage"):
            group = [r for r in res if (r.family, r.metric) == (fam, metric)]
            assert [r.run_b for r in group] == ["B", "C", "D"]
            assert [r.p_holm for r in group] == pytest.approx(holm([r.p_value for r in group]))


def test_holm_adjust_single_comparison_is_unchanged() -> None:
    r = PairedResult("rca", "accuracy", "A", "B", 10, 0.5, 0.4, 0.1, -0.1, 0.3, 0.2, "mcnemar-exact", 1, 10)
    assert holm_adjust([r])[0].p_holm == 0.2


# --------------------------------------------------------------------------- standard errors of a run


def test_standard_errors_of_a_run() -> None:
    rows = synthetic_run(9)
    se = standard_errors(rows, run="A", n_resamples=400)
    rca = [s for s in rows if s.family == "rca"]
    assert se["rca"]["accuracy"] == pytest.approx(standard_error([float(s.exact) for s in rca]))
    assert se["rca"]["loc_iou"] == pytest.approx(standard_error([s.loc for s in rca]))
    num = np.array([s.evidence.covered for s in rca], dtype=float)
    den = np.array([s.evidence.golden for s in rca], dtype=float)
    assert se["rca"]["evidence_coverage"] == bootstrap_pooled_se(
        num, den, seed=metric_seed("rca", "evidence_coverage"), n_resamples=400
    )
    assert set(se["path"]) == {
        "accuracy",
        "loc_iou",
        "rest_iou",
        "sequence_iou",
        "evidence_coverage",
        "evidence_f1",
        "micro_edge_iou",
    }
    assert standard_errors(rows, run="A", n_resamples=400) == se


# --------------------------------------------------------------------------- breakdown


def test_breakdown_multi_membership_warning_and_unassigned() -> None:
    rows = [
        rca_row("r1", True, 1.0, 1.0, 1, 1, categories=["C1", "C2"], obs="O1"),
        rca_row("r2", False, 0.5, 0.0, 0, 2, categories=["C2"], obs="O2"),
        rca_row("r3", False, 0.0, 1.0, 1, 2, categories=["C1", "C1"], obs="O1"),
        path_row("p1", True, 1.0, 1.0, 1, 1, npaths=1),
        path_row("p2", False, 0.5, 0.5, 0, 1, npaths=10),
        path_row("p3", False, 0.5, 0.5, 0, 1, npaths=2),
    ]
    cats = breakdown(rows, "categories", min_tasks=2)
    assert list(cats["strata"]) == ["C1", "C2"]
    assert cats["unassigned"] == 3
    c1 = cats["strata"]["C1"]
    assert c1["n_tasks"] == 2 and c1["n_rca"] == 2 and c1["warning"] is False
    assert c1["metrics"]["rca"]["accuracy"] == 0.5
    assert c1["metrics"]["rca"]["loc_iou"] == 0.5
    assert c1["metrics"]["rca"]["evidence"]["coverage"] == pytest.approx(2 / 3)
    c2 = cats["strata"]["C2"]
    assert c2["metrics"]["rca"]["id_iou"] == 0.5
    by_paths = breakdown(rows, "npaths")
    assert list(by_paths["strata"]) == ["1", "2", "10"]  # numeric order
    assert all(s["warning"] for s in by_paths["strata"].values())  # default minimum is 10
    fam = breakdown(rows, lambda s: s.family)
    assert fam["strata"]["rca"]["n_tasks"] == 3 and fam["unassigned"] == 0
