"""A several-trial run is scored over tasks: n = tasks, a task's score the mean of its trials.

The issue's hand case: 2 RCA tasks x 3 trials, answered (right, right, wrong) and (wrong x 3) by a real
``command`` agent in a real ``ctb-eval run --trials 3``. By hand, over the two task means 2/3 and 0:

- pass@1 = accuracy = 1/3 = 33.33, SE = sd(2/3, 0) / sqrt(2) = 33.33 (over task-trials it was n 6 and
  an SE of 21.08; and the scorecard printed pass@1 as 3333.33, percent applied twice);
- pass@2 = (1 - C(1,2)/C(3,2) + 0) / 2 = 50; pass@3 = 50;
- pass^2 = (C(2,2)/C(3,2) + 0) / 2 = 16.67; pass^3 = 0.

Every place a researcher reads figures must say so: scores.json, the scorecard, every report format,
compare and the leaderboard export.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from ctbench.evaluate.compare import compare
from ctbench.evaluate.export import export_leaderboard
from ctbench.evaluate.report import build_report
from ctbench.evaluate.report_formats import REPORT_FORMATS, render_report
from ctbench.evaluate.score import Scorer, print_scorecard
from ctbench.store import TaskSet
from tests.conftest import run_cli

pytestmark = pytest.mark.xdist_group("trials_over_tasks")

AGENT = """\
import fcntl, json, os, sys
sys.stdin.read()
task = os.environ["CTBENCH_TASK_ID"]
answers = json.load(open(sys.argv[1], encoding="utf-8"))[task]
with open(os.path.join(sys.argv[2], task), "a+") as fh:  # which attempt of this task this is
    fcntl.flock(fh, fcntl.LOCK_EX)
    fh.seek(0)
    n = len(fh.read())
    fh.write("x")
print(answers[n])
"""

RIGHT = "CORE_SW_01;GigabitEthernet0/0/24;shutdown"
WRONG = "CORE_SW_01;GigabitEthernet0/0/24;port security violation"
ANSWERS = {"RCA-001": [RIGHT, RIGHT, WRONG], "RCA-002": [WRONG, WRONG, WRONG]}
THIRD = pytest.approx(1 / 3)


@pytest.fixture(scope="module")
def trial_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict, str]:
    from tests.conftest import copy_starters

    root = tmp_path_factory.mktemp("trials")
    tasks = copy_starters(root / "tasks")
    shutil.rmtree(tasks / "path")  # the two RCA starters only
    (root / "counts").mkdir()
    plan = root / "answers.json"
    plan.write_text(json.dumps(ANSWERS), encoding="utf-8")
    script = root / "agent.py"
    script.write_text(AGENT, encoding="utf-8")
    run_dir = root / "run"
    res = run_cli(
        "evaluate",
        "run",
        "--agent",
        "command",
        "--agent-cmd",
        f"{sys.executable} {script} {plan} {root / 'counts'}",
        "--tasks",
        str(tasks),
        "--allow-unreviewed",
        "--sandbox",
        "none",
        "--trials",
        "3",
        "--out",
        str(run_dir),
        "--progress",
        "none",
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    scores = json.loads((run_dir / "scores.json").read_text(encoding="utf-8"))
    return tasks, run_dir, scores, res.stdout


def test_scores_json_is_over_tasks(trial_run: tuple[Path, Path, dict, str]) -> None:
    _, _, scores, _ = trial_run
    rca = scores["summary"]["rca"]
    assert scores["n_tasks"] == 2 and rca["n_tasks"] == 2
    assert scores["n_task_trials"] == 6 and rca["n_task_trials"] == 6
    assert sum(rca["status"].values()) == 6  # statuses count task-trials
    assert rca["accuracy"] == THIRD and scores["se"]["rca"]["accuracy"] == THIRD
    assert rca["failures"]["n_wrong"] == 4
    assert len(scores["tasks"]) == 6  # the per-trial listing stays
    block = scores["pass_k"]["families"]["rca"]
    assert block["n_tasks"] == 2
    assert block["pass@1"]["value"] == THIRD and block["pass@1"]["se"] == THIRD
    assert block["pass@2"]["value"] == pytest.approx(0.5) and block["pass@3"]["value"] == pytest.approx(0.5)
    assert block["pass^2"]["value"] == pytest.approx(1 / 6) and block["pass^3"]["value"] == 0


def _assert_figures(text: str, where: str) -> None:
    text = text.replace("$\\pm$", "±").replace("&plusmn;", "±").replace("&#177;", "±")
    text = text.replace(" \\\\ ±", " ±")  # LaTeX stacks the SE under its value: "33.33 \\ $\pm$33.33"
    text = re.sub(r"± ?", "± ", text)
    for figure in ("33.33 ± 33.33", "50.00", "16.67"):
        assert figure in text, (where, figure)
    assert "3333" not in text and "5000" not in text, where  # never scaled twice


def test_scorecard_says_it(trial_run: tuple[Path, Path, dict, str]) -> None:
    _, _, scores, stdout = trial_run
    buf = io.StringIO()
    print_scorecard(scores, file=buf)
    for text in (buf.getvalue(), stdout):  # as printed, and as `ctb-eval run` printed it
        _assert_figures(text, "scorecard")
        assert "2 task(s) x 3 trials" in text
        assert "pass@1 33.33 ± 33.33; pass@2 50.00" in text and "pass^2 16.67" in text
        assert "pass^3 0.00" in text and "pass@3 50.00" in text


def test_every_report_format_says_it(
    trial_run: tuple[Path, Path, dict, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks, run_dir, _, _ = trial_run
    monkeypatch.setenv("COLUMNS", "400")  # the text format wraps cells to the terminal's width
    report = build_report([run_dir], TaskSet(tasks), n_resamples=500)
    assert set(REPORT_FORMATS) >= {"text", "md", "latex", "json", "html"}
    for fmt in REPORT_FORMATS:
        text = render_report(report, fmt)
        if fmt == "json":
            tables = {t["key"]: t for t in json.loads(text)}
            passk = {row[4]: row[5:] for row in tables["pass_k"]["rows"]}
            assert passk["pass@1"] == [pytest.approx(100 / 3), pytest.approx(100 / 3)]
            assert passk["pass@2"][0] == pytest.approx(50) and passk["pass^2"][0] == pytest.approx(100 / 6)
            assert passk["pass^3"][0] == 0 and passk["pass@3"][0] == pytest.approx(50)
            t5 = tables["table5"]
            row = dict(zip(t5["columns"], t5["rows"][0], strict=True))
            assert row["RCA n"] == 2 and row["RCA Acc"] == pytest.approx(100 / 3)
            assert row["RCA Acc SE"] == pytest.approx(100 / 3)
        else:
            _assert_figures(text, fmt)
            assert "pass^3" in text or "pass\\textasciicircum{}3" in text, fmt


def test_compare_and_export_say_it(trial_run: tuple[Path, Path, dict, str], tmp_path: Path) -> None:
    tasks, run_dir, _, _ = trial_run
    ts = TaskSet(tasks)
    scorer = Scorer(ts)
    runs = [scorer.score_folder(run_dir), scorer.score_folder(run_dir)]
    result = compare(runs, n_resamples=500)
    acc = next(r for r in result.results if r.family == "rca" and r.metric == "accuracy")
    assert acc.n == 2 and acc.a == THIRD and acc.b == THIRD
    assert acc.test == "bootstrap-sign"  # task means are not 0/1: no McNemar table
    assert result.n_tasks["rca"] == 2
    cli = run_cli("evaluate", "compare", str(run_dir), str(run_dir), "--tasks", str(tasks), "--json")
    assert cli.returncode == 0, cli.stderr
    rows = [
        r for r in json.loads(cli.stdout)["comparisons"] if r["family"] == "rca" and r["metric"] == "accuracy"
    ]
    assert rows and rows[0]["n"] == 2 and rows[0]["a"] == THIRD

    export_leaderboard([run_dir], tmp_path / "board", ts, n_resamples=500)
    board = json.loads((tmp_path / "board" / "leaderboard.json").read_text(encoding="utf-8"))
    entry = board["results"][0]["rca"]["accuracy"]
    assert entry == {"mean": 33.33, "sd": 33.33} or (entry["mean"], entry["sd"]) == (33.33, 33.33)
