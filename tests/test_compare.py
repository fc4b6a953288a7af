"""`ctb-eval compare`: paired comparisons (D.2) on run folders, with McNemar numbers worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ctbench.errors import CtbError
from ctbench.evaluate.compare import compare_folders, comparison_table
from ctbench.scoring.stats import metric_seed, paired_mean_difference, resample_sums, resample_sums_many
from ctbench.store import TaskSet
from tests.conftest import run_cli
from tests.test_score_support import clone_rca, gold_text, starter_copy, write_run

N = 500


@pytest.fixture
def starter_set(tmp_path: Path) -> Path:
    """The bundled task set reduced to the three starter tasks the expected numbers are worked out on."""
    return starter_copy(tmp_path)


WRONG = "CORE_SW_01;GigabitEthernet0/0/24;physical link down"


@pytest.fixture
def big_set(starter_set: Path) -> Path:
    """The bundled tasks plus ten copies of RCA-001 (RCA-C01..RCA-C10): 12 RCA tasks and 1 path task."""
    clone_rca(starter_set, "RCA-001", 10)
    return starter_set


def run_correct_on(tmp_path: Path, tasks: Path, name: str, correct: set[str]) -> Path:
    ts = TaskSet.open(tasks)
    answers = {
        r.id: (gold_text(ts, r.id) if r.id in correct else (WRONG if r.family.value == "rca" else None))
        for r in ts.refs()
    }
    return write_run(tmp_path / name, tasks, answers=answers, name=name, agent=name, model="m")


def clones(*numbers: int) -> set[str]:
    return {f"RCA-C{n:02d}" for n in numbers}


def test_mcnemar_and_holm_by_hand(big_set: Path, tmp_path: Path) -> None:
    a = run_correct_on(tmp_path, big_set, "A", clones(*range(1, 11)))  # 10 of 12 RCA right
    b = run_correct_on(tmp_path, big_set, "B", clones(1, 2, 3))  # A only on C04..C10: 7, B only 0
    c = run_correct_on(tmp_path, big_set, "C", clones(1, 2, 3, 4) | {"RCA-001"})  # A only 6, C only 1
    cmp = compare_folders([a, b, c], TaskSet.open(big_set), n_resamples=N)
    acc = {r.run_b: r for r in cmp.results if (r.family, r.metric) == ("rca", "accuracy")}
    # exact two-sided McNemar = binomial test on the discordant tasks at 1/2:
    # B: 7 vs 0 -> 2 * (1/2)^7; C: 6 vs 1 -> 2 * (C(7,0) + C(7,1)) / 2^7
    assert (acc["B"].a_only, acc["B"].b_only) == (7, 0)
    assert acc["B"].p_value == pytest.approx(2 / 2**7, rel=1e-12)
    assert (acc["C"].a_only, acc["C"].b_only) == (6, 1)
    assert acc["C"].p_value == pytest.approx(2 * 8 / 2**7, rel=1e-12)
    # Holm over the two comparisons: smallest p x 2, then the next x 1 (never below the previous)
    assert acc["B"].p_holm == pytest.approx(2 * 2 / 2**7) and acc["C"].p_holm == pytest.approx(0.125)
    assert acc["B"].diff == pytest.approx(7 / 12) and acc["C"].diff == pytest.approx(5 / 12)
    assert acc["B"].n == 12 and acc["B"].a == pytest.approx(10 / 12)
    # the interval comes from the documented seed: same draws as the single-metric bootstrap
    order = ["RCA-001", "RCA-002", *sorted(clones(*range(1, 11)))]  # tasks sorted by id
    xa = np.array([1.0 if t in clones(*range(1, 11)) else 0.0 for t in order])
    xb = np.array([1.0 if t in clones(1, 2, 3) else 0.0 for t in order])
    _, ci, _ = paired_mean_difference(xa, xb, seed=metric_seed("rca", "accuracy"), n_resamples=N)
    assert (acc["B"].ci_low, acc["B"].ci_high) == ci and acc["B"].seed == metric_seed("rca", "accuracy")
    # identical path answers: no discordant pair, p = 1, zero-width interval
    path_acc = [r for r in cmp.results if (r.family, r.metric) == ("path", "accuracy")]
    assert all(
        r.p_value == 1.0 and r.a_only == r.b_only == 0 and r.ci_low == r.ci_high == 0 for r in path_acc
    )
    table = comparison_table(cmp)
    row = next(r for r in table.rows if r[:3] == ["RCA", "Acc", "B+m"])
    assert row[8:] == ["0.016", "0.031", "7 / 0"]
    assert any("only 1 path task(s) compared" in w for w in cmp.warnings)


def test_same_runs_compare_the_same_way_twice(big_set: Path, tmp_path: Path) -> None:
    a = run_correct_on(tmp_path, big_set, "A", clones(1, 2, 3, 4, 5))
    b = run_correct_on(tmp_path, big_set, "B", clones(4, 5, 6))
    ts = TaskSet.open(big_set)
    first = compare_folders([a, b], ts, n_resamples=N).to_json()
    assert compare_folders([a, b], ts, n_resamples=N).to_json() == first
    assert json.dumps(first)  # plain JSON values


def test_runs_on_different_tasks_are_refused_or_restricted(big_set: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(big_set)
    a = run_correct_on(tmp_path, big_set, "A", clones(1, 2))
    short = write_run(
        tmp_path / "short",
        big_set,
        answers={"RCA-001": gold_text(ts, "RCA-001"), "RCA-C01": WRONG},
        name="short",
    )
    with pytest.raises(
        CtbError,
        match=r"not made on the same tasks.*A\+m: 13 task\(s\), 11 not in every run.*"
        r"--common-tasks to compare on the 2 task",
    ):
        compare_folders([a, short], ts, n_resamples=N)
    cmp = compare_folders([a, short], ts, common=True, n_resamples=N)
    assert {r.n for r in cmp.results} == {2} and {r.family for r in cmp.results} == {"rca"}
    assert any("compared on 2 common task(s); 11 task(s) left out" in w for w in cmp.warnings)
    acc = next(r for r in cmp.results if r.metric == "accuracy")
    assert (acc.a_only, acc.b_only) == (1, 1)  # A right on C01, short right on RCA-001
    with pytest.raises(CtbError, match="at least two runs"):
        compare_folders([a], ts)


def test_compare_command(big_set: Path, tmp_path: Path) -> None:
    a = run_correct_on(tmp_path, big_set, "A", clones(*range(1, 11)))
    b = run_correct_on(tmp_path, big_set, "B", clones(1, 2, 3))
    proc = run_cli("evaluate", "compare", str(a), str(b), "--tasks", str(big_set), "--resamples", "300")
    assert proc.returncode == 0, proc.stderr
    assert (
        "Paired comparisons (as in the paper's Table 25): A = A+m" in proc.stdout and "7 / 0" in proc.stdout
    )
    assert "warning: only 1 path task(s)" in proc.stderr
    proc = run_cli(
        "evaluate", "compare", str(a), str(b), "--tasks", str(big_set), "--resamples", "300", "--json"
    )
    data = json.loads(proc.stdout)
    acc = next(c for c in data["comparisons"] if (c["family"], c["metric"]) == ("rca", "accuracy"))
    assert (
        acc["p_value"] == pytest.approx(2 / 2**7)
        and data["a"] == "A"
        and data["n_tasks"] == {"rca": 12, "path": 1, "topology": 0}
    )
    proc = run_cli("evaluate", "compare", str(a), "--tasks", str(big_set))
    assert proc.returncode == 2 and "at least two run folders" in proc.stderr


def test_shared_resamples_do_not_depend_on_threads_or_chunks() -> None:
    rng = np.random.default_rng(3)
    cols = np.column_stack([rng.integers(0, 5, 57), rng.random(57), rng.integers(-1, 2, 57)])
    one = resample_sums(cols, seed=11, n_resamples=300)
    assert np.array_equal(one, resample_sums(cols, seed=11, n_resamples=300, max_chunk_bytes=1))
    many = resample_sums_many([(cols, 11), (cols[:20], 12), (cols, 11)], n_resamples=300, workers=3)
    assert np.array_equal(many[0], one) and np.array_equal(many[2], one)
    assert np.array_equal(many[1], resample_sums(cols[:20], seed=12, n_resamples=300))
    # integer columns are summed exactly; the draws are those of rng.integers(0, n, size=n) per resample
    draw = np.random.default_rng(11)
    idx = draw.integers(0, 57, size=57)
    assert one[0, 0] == cols[idx, 0].sum() and one[0, 2] == cols[idx, 2].sum()
    assert one[0, 1] == pytest.approx(cols[idx, 1].sum(), abs=57 * 2.0**-31)


def test_figures_do_not_depend_on_the_other_runs_in_the_report(big_set: Path, tmp_path: Path) -> None:
    from ctbench.evaluate.score import Scorer
    from ctbench.scoring.stats import compare_runs, compare_scope, standard_errors, standard_errors_many

    ts = TaskSet.open(big_set)
    scorer = Scorer(ts)
    runs = {
        name: scorer.score_folder(run_correct_on(tmp_path, big_set, name, clones(*picks))).scores
        for name, picks in (("A", range(1, 9)), ("B", (1, 2)), ("C", (3, 4, 5, 6)))
    }
    many = standard_errors_many(runs, n_resamples=N)
    assert many["B"] == standard_errors(runs["B"], run="B", n_resamples=N)
    scope = compare_scope(runs, [("A", "B"), ("A", "C")], n_resamples=N)
    alone = compare_runs(runs["A"], runs["C"], run_a="A", run_b="C", n_resamples=N)
    in_scope = [r for r in scope if r.run_b == "C"]
    strip = [(r.metric, r.family, r.diff, r.ci_low, r.ci_high, r.p_value) for r in alone]
    assert [(r.metric, r.family, r.diff, r.ci_low, r.ci_high, r.p_value) for r in in_scope] == strip
