"""The model id the endpoint reported, beside the one asked for: in each result line and run.yaml, and
used to price the run (an alias resolved to a dated snapshot is priced as that snapshot).

The endpoint is the scripted model server on 127.0.0.1, naming ``scripted-model-2026-11-30`` in
every reply to a request for ``scripted-model``; the agents are the built-in OpenAI agent and the real
Claude Code CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctbench.evaluate.prices import load_prices
from ctbench.evaluate.runner import Runner
from ctbench.evaluate.score import Scorer, build_scores
from ctbench.store import TaskSet
from ctbench.yamlio import load_fast
from tests.support.model_server import ScriptedModelServer, scripts_for
from tests.test_harness_agents import _keys, _lines, _settings, harness  # noqa: F401 - _keys: test keys

SNAPSHOT = "scripted-model-2026-11-30"


def _run(name: str, task_set: Path, out: Path, reported: str | None) -> Path:
    with ScriptedModelServer(
        scripts_for(task_set, ["RCA-001"]), max_seconds=240, reported_model=reported
    ) as m:
        report = Runner(_settings(name, m.url, task_set, out, select="RCA-001", timeout_s=180.0)).run()
    assert report.complete, report.summary_line()
    return report.folder


@pytest.mark.parametrize("name", ["openai", pytest.param("claude-code", marks=pytest.mark.timeout(600))])
def test_the_endpoint_reported_model_is_recorded_and_priced(
    name: str, task_set: Path, tmp_path: Path
) -> None:
    if name != "openai":
        harness(name)
    folder = _run(name, task_set, tmp_path / "run", SNAPSHOT)
    (line,) = _lines(folder)
    assert line["status"] == "answered" and line["model_reported"] == SNAPSHOT, line
    config = load_fast(folder / "run.yaml")
    assert config["model"] == "scripted-model" and config["totals"]["models_reported"] == [SNAPSHOT]
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        f"currency: USD\ndate: 2026-11-30\nmodels:\n  {SNAPSHOT}: {{input: 1.0, output: 2.0}}\n"
        "  scripted-model: {input: 100.0, output: 200.0}\n",
        encoding="utf-8",
    )
    scorer = Scorer(TaskSet.open(task_set), prices=load_prices(prices))
    scores = json.loads(
        json.dumps(build_scores(scorer.score_folder(folder), min_stratum=10, n_resamples=100))
    )
    expected = (line["input_tokens"] * 1.0 + line["output_tokens"] * 2.0) / 1e6  # the snapshot's price
    assert scores["cost"]["prices"]["models"] == [SNAPSHOT]
    assert scores["cost"]["by_family"]["rca"]["total"] == pytest.approx(expected)


def test_a_model_reported_as_requested_is_not_repeated(task_set: Path, tmp_path: Path) -> None:
    folder = _run("openai", task_set, tmp_path / "run", None)
    (line,) = _lines(folder)
    assert line["model_reported"] is None
    assert load_fast(folder / "run.yaml")["totals"]["models_reported"] == []
