"""The model id the endpoint reported, beside the one asked for: in each result line and run.yaml, and
used to price the run (an alias resolved to a dated snapshot is priced as that snapshot); and what an
attempt the endpoint failed had spent, kept when it is retried.

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
    assert config["settings"]["agent"]["model"] == "scripted-model"
    assert config["totals"]["models_reported"] == [SNAPSHOT]
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


def test_a_retried_attempt_keeps_what_it_spent(task_set: Path, tmp_path: Path) -> None:
    """The endpoint fails (HTTP 500, past the client's own retries) at the third request: the attempt is
    an infrastructure error, retried; its tokens stay in the line's retry record, in run.yaml's totals
    and in the cost of the task."""
    scripts = scripts_for(task_set, ["RCA-001"])
    with ScriptedModelServer(scripts, max_seconds=240, fail_at=2, fail_times=3) as model:
        settings = _settings("openai", model.url, task_set, tmp_path / "run", select="RCA-001", retries=1)
        report = Runner(settings).run()
        first = model.requests[: model.requests.index(model.failed[0])]
    assert report.complete, report.summary_line()
    (line,) = _lines(report.folder)
    (retry,) = line["retries"]
    assert line["status"] == "answered" and line["attempts"] == 2, line
    assert retry["input_tokens"] == sum(r.usage.input for r in first if r.usage) > 0
    assert retry["output_tokens"] == sum(r.usage.output for r in first if r.usage)
    totals = load_fast(report.folder / "run.yaml")["totals"]
    assert totals["input_tokens"] == line["input_tokens"] + retry["input_tokens"]
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: USD\ndate: 2026-11-30\nmodels:\n  scripted-model: {input: 1, output: 2}\n")
    scorer = Scorer(TaskSet.open(task_set), prices=load_prices(prices))
    scores = build_scores(scorer.score_folder(report.folder), min_stratum=10, n_resamples=100)
    spent = (line["input_tokens"] + retry["input_tokens"]) * 1 + (
        line["output_tokens"] + retry["output_tokens"]
    ) * 2
    assert scores["cost"]["by_family"]["rca"]["total"] == pytest.approx(spent / 1e6)
