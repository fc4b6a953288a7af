"""An answer is parsed once: the runner stores its parse with a fingerprint, the scorer takes it.

A real ``ctb-eval run`` writes the result lines; the tests then edit them the way a later change would
(the stored parse, the answer text, the task set's taxonomy) and score the folder again, so that what
the scorer believed is visible in ``scores.json``: a stored parse it took shows through, one it
refused is replaced by a fresh parse of the text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctbench.evaluate.score import score_run
from ctbench.store import TaskSet
from tests.conftest import run_cli
from tests.test_score_support import starter_copy

pytestmark = pytest.mark.xdist_group("parse-once")


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("parse-once")
    tasks = starter_copy(tmp)
    out = tmp / "run"
    res = run_cli(
        "evaluate", "run", "--agent", "oracle", "--allow-unreviewed", "--tasks", str(tasks), "--out", str(out)
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    return tasks, out


def _lines(run: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (run / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def _write(run: Path, lines: list[dict[str, object]]) -> None:
    (run / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def _exact(scores: dict[str, object]) -> dict[str, bool]:
    return {t["task_id"]: t["exact"] for t in scores["tasks"]}  # type: ignore[index,attr-defined]


def test_the_runner_stores_each_parse_with_its_fingerprint(oracle_run: tuple[Path, Path]) -> None:
    tasks, run = oracle_run
    lines = _lines(run)
    assert lines and all(str(x["answer"]["parser"]).startswith("sha256:") for x in lines)  # type: ignore[index]
    # one fingerprint per answer: the text is part of it
    assert len({x["answer"]["parser"] for x in lines}) == len(lines)  # type: ignore[index]
    scores = score_run(run, TaskSet.open(tasks), write=False, n_resamples=200)
    assert set(_exact(scores).values()) == {True}


def test_the_scorer_takes_the_stored_parse_instead_of_parsing_again(
    oracle_run: tuple[Path, Path], tmp_path: Path
) -> None:
    tasks, run = oracle_run
    run = _copy(run, tmp_path / "run")
    lines = _lines(run)
    # empty the stored parse of RCA-001 but keep its fingerprint: a scorer that parsed the (right) text
    # again would score it exact; one that takes the stored parse scores what it says
    rca = next(x for x in lines if x["task_id"] == "RCA-001")
    rca["answer"] = {**rca["answer"], "status": "empty", "rca": []}  # type: ignore[dict-item]
    _write(run, lines)
    scores = score_run(run, TaskSet.open(tasks), write=False, n_resamples=200)
    assert _exact(scores)["RCA-001"] is False
    assert {t: e for t, e in _exact(scores).items() if t != "RCA-001"} == {
        t: True for t in _exact(scores) if t != "RCA-001"
    }


def test_a_stored_parse_that_is_not_the_judges_own_is_parsed_again(
    oracle_run: tuple[Path, Path], tmp_path: Path
) -> None:
    tasks, run = oracle_run
    # the same emptied parse, but the text changed since (an edited line): the fingerprint no longer
    # matches, so the text is parsed and the answer is exact again
    text_run = _copy(run, tmp_path / "text")
    lines = _lines(text_run)
    rca = next(x for x in lines if x["task_id"] == "RCA-001")
    rca["answer"] = {**rca["answer"], "status": "empty", "rca": []}  # type: ignore[dict-item]
    rca["answer_text"] = str(rca["answer_text"]) + "\n"
    _write(text_run, lines)
    assert _exact(score_run(text_run, TaskSet.open(tasks), write=False, n_resamples=200))["RCA-001"] is True
    # the task set's taxonomy changed after the run (one more alias): every stored parse is stale
    tax_run = _copy(run, tmp_path / "tax")
    lines = _lines(tax_run)
    rca = next(x for x in lines if x["task_id"] == "RCA-001")
    rca["answer"] = {**rca["answer"], "status": "empty", "rca": []}  # type: ignore[dict-item]
    _write(tax_run, lines)
    tasks2 = _copy(tasks, tmp_path / "tasks2")
    taxonomy = tasks2 / "taxonomy.yaml"
    taxonomy.write_text(taxonomy.read_text(encoding="utf-8") + "\n# edited after the run\n", encoding="utf-8")
    ts = TaskSet.open(tasks2)
    assert _exact(score_run(tax_run, ts, write=False, n_resamples=200))["RCA-001"] is False  # a comment only
    text = taxonomy.read_text(encoding="utf-8").replace("aliases: [", "aliases: [an alias added later, ", 1)
    assert "an alias added later" in text
    taxonomy.write_text(text, encoding="utf-8")
    assert _exact(score_run(tax_run, TaskSet.open(tasks2), write=False, n_resamples=200))["RCA-001"] is True
