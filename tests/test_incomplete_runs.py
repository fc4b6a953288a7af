"""A run whose attempts never reached the model says so everywhere; it is never shown as complete.

The real ``openai`` agent is pointed at a port on 127.0.0.1 where nothing listens: every attempt ends
in an infrastructure error. Before, such a run scored Acc 0.00 with "Incomplete: no" in scores.json
and the report - infrastructure errors became silent zeros.
"""

from __future__ import annotations

import io
import json
import shutil
import socket
from pathlib import Path

import pytest

from ctbench.errors import CtbError
from ctbench.evaluate.compare import compare_folders
from ctbench.evaluate.report import build_report
from ctbench.evaluate.report_formats import REPORT_FORMATS, render_report
from ctbench.evaluate.score import print_scorecard
from ctbench.store import TaskSet
from tests.conftest import copy_starters, run_cli

pytestmark = pytest.mark.xdist_group("incomplete_runs")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(tasks: Path, out: Path, *args: str) -> dict:
    res = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--tasks",
        str(tasks),
        "--out",
        str(out),
        "--progress",
        "none",
        "--json",
        *args,
        env={"CTBENCH_API_KEY": "sk-test", "OPENAI_API_KEY": ""},
        timeout=300,
    )
    assert res.stdout, res.stderr
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("incomplete")
    tasks = copy_starters(root / "tasks")
    shutil.rmtree(tasks / "path")
    broken = root / "broken"
    _run(
        tasks,
        broken,
        "--agent",
        "openai",
        "--model",
        "m",
        "--base-url",
        f"http://127.0.0.1:{_closed_port()}/v1",
        "--retries",
        "0",
    )
    oracle = root / "oracle"
    _run(tasks, oracle, "--agent", "oracle")
    return tasks, broken, oracle


def test_scores_json_counts_them(runs: tuple[Path, Path, Path]) -> None:
    _, broken, oracle = runs
    lines = [json.loads(x) for x in (broken / "results.jsonl").read_text().splitlines()]
    assert {(x["status"], x["error_kind"]) for x in lines} == {("error", "infrastructure")}
    scores = json.loads((broken / "scores.json").read_text())
    assert scores["incomplete"] is True
    assert scores["unfinished"]["infrastructure_errors"] == 2
    assert scores["unfinished"]["timeouts"] == 0 and scores["unfinished"]["missing_results"] == 0
    assert sorted(scores["unfinished"]["tasks"]["infrastructure_errors"]) == ["RCA-001", "RCA-002"]
    done = json.loads((oracle / "scores.json").read_text())
    assert done["incomplete"] is False and done["unfinished"]["infrastructure_errors"] == 0


def test_scorecard_and_every_report_format_say_it(
    runs: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks, broken, oracle = runs
    monkeypatch.setenv("COLUMNS", "400")  # the text format wraps cells to the terminal's width
    buf = io.StringIO()
    print_scorecard(json.loads((broken / "scores.json").read_text()), file=buf)
    assert "INCOMPLETE RUN: 2 infrastructure error(s)" in buf.getvalue()
    buf = io.StringIO()
    print_scorecard(json.loads((oracle / "scores.json").read_text()), file=buf)
    assert "INCOMPLETE" not in buf.getvalue()

    report = build_report([oracle, broken], TaskSet(tasks), n_resamples=200)
    for fmt in REPORT_FORMATS:
        text = render_report(report, fmt)
        if fmt == "json":
            tables = {t["key"]: t for t in json.loads(text)}
            banner = tables["incomplete"]
            assert [row[:4] for row in banner["rows"]] == [[report.runs[1].label, 2, 0, 0]]
            runs_table = tables["runs"]
            col = runs_table["columns"].index("Incomplete")
            assert [row[col] for row in runs_table["rows"]] == ["no", "yes: 2 infrastructure error(s)"]
            assert list(tables)[0] == "incomplete"  # a banner: before any figure
        else:
            assert "INCOMPLETE RUNS" in text, fmt
            assert "yes: 2 infrastructure error(s)" in text, fmt
            assert text.index("INCOMPLETE RUNS") < text.index("pass@1 capabilities"), fmt


def test_compare_refuses_unless_told(runs: tuple[Path, Path, Path]) -> None:
    tasks, broken, oracle = runs
    ts = TaskSet(tasks)
    with pytest.raises(CtbError, match="incomplete run would count its unfinished tasks as wrong"):
        compare_folders([oracle, broken], ts, n_resamples=200)
    told = compare_folders([oracle, broken], ts, n_resamples=200, allow_incomplete=True)
    assert told.n_tasks["rca"] == 2
    assert any("count as wrong in the comparison" in w for w in told.warnings)
    with pytest.raises(CtbError, match="no task in common"):
        compare_folders([oracle, broken], ts, n_resamples=200, common=True)  # nothing finished
    cli = run_cli("evaluate", "compare", str(oracle), str(broken), "--tasks", str(tasks))
    assert cli.returncode != 0 and "Traceback" not in cli.stderr
    assert "--allow-incomplete" in cli.stderr
    cli = run_cli(
        "evaluate", "compare", str(oracle), str(broken), "--tasks", str(tasks), "--allow-incomplete", "--json"
    )
    assert cli.returncode == 0, cli.stderr
