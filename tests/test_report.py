"""`ctb-eval report`: the paper's table shapes in every format, and a self-contained HTML file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctbench.errors import CtbError
from ctbench.evaluate.report import build_report, report_tables
from ctbench.evaluate.report_formats import render_report
from ctbench.evaluate.report_html import bars_svg, radar_svg, scatter_svg
from ctbench.evaluate.report_tasks import unpack_detail
from ctbench.evaluate.score import score_run
from ctbench.store import TaskSet
from tests.conftest import run_cli
from tests.test_score_support import gold_text, golden_calls, oracle_run, starter_copy, write_run

N = 300


@pytest.fixture
def starter_set(tmp_path: Path) -> Path:
    """The bundled task set reduced to the three starter tasks the expected numbers are worked out on."""
    return starter_copy(tmp_path)


@pytest.fixture
def runs(starter_set: Path, tmp_path: Path) -> list[Path]:
    ts = TaskSet.open(starter_set)
    oracle = oracle_run(
        tmp_path / "oracle",
        starter_set,
        agent="oracle",
        model="gold",
        usage={
            t: {"rounds": 3, "latency_s": 2.0, "input_tokens": 5000, "output_tokens": 500}
            for t in ("RCA-001", "RCA-002", "PATH-001")
        },
    )
    half = write_run(
        tmp_path / "half",
        starter_set,
        agent="cheap",
        model="small",
        answers={
            "RCA-001": gold_text(ts, "RCA-001"),
            "RCA-002": "FW_01;10.10.10.10;security policy rule does not permit the corresponding user",
            "PATH-001": "no idea",
        },
        calls={"RCA-001": golden_calls(ts, "RCA-001")[:1]},
    )
    return [oracle, half]


def test_every_table_shape_is_there(starter_set: Path, runs: list[Path]) -> None:
    report = build_report(runs, TaskSet.open(starter_set), n_resamples=N)
    tables = {t.key: t for t in report_tables(report)}
    assert list(tables) == [
        "runs",
        "table5",
        "table6",
        "table13",
        "table16",
        "table18",
        "table19",
        "table20",
        "table22",
        "table21",
        "table24",
        "table25",
        "table29",
        "by_root_cause_count",
        "by_chain_length",
        "by_protocol_complexity",
        "by_golden_tier",
        "by_path_count",
        "warnings",
    ]
    t5 = tables["table5"]
    assert t5.rows[0][:6] == [
        "oracle+gold",
        2,
        "100.00 ± 0.00",
        "100.00 ± 0.00",
        "100.00 ± 0.00",
        "100.00 ± 0.00",
    ]
    # cheap: RCA-001 right, RCA-002 half right -> Acc 50, Loc/ID (1 + 0.5)/2; evidence 1 of 6 golden actions
    assert t5.rows[1][:6] == [
        "cheap+small",
        2,
        "50.00 ± 50.00",
        "75.00 ± 25.00",
        "75.00 ± 25.00",
        t5.rows[1][5],
    ]
    assert t5.rows[1][5].startswith("16.67 ± ")
    t18 = tables["table18"]
    assert ["cheap+small", "RCA", 1, 1, 100.0, pytest.approx(100 / 3)] == t18.rows[2]
    t19 = tables["table19"]
    assert [r[1:4] for r in t19.rows if r[0] == "cheap+small"] == [
        ["C1", "Interface and link state", 1],
        ["C2", "Routing protocol and route configuration", 1],
        ["C4", "Security policy and address translation", 1],
    ]
    assert all(r[-1] == "n < 10" for r in t19.rows)
    t25 = tables["table25"]
    acc = next(r for r in t25.rows if r[:3] == ["RCA", "Acc", "cheap+small"])
    assert acc[4:7] == [100.0, 50.0, 50.0] and acc[-1] == "1 / 0"
    t29 = tables["table29"]
    assert t29.rows == [["oracle+gold", 0, 0, 0, 0, 0, 0], ["cheap+small", 1, 1, 0, 0, 0, 0]]
    t6 = tables["table6"]
    assert t6.rows[0] == ["oracle+gold", "RCA", 2, 3.0, 2.0, 5000, 500, 5500]
    # a run's standard errors are the same in a report as when it is scored alone
    alone = score_run(runs[1], TaskSet.open(starter_set), write=False, n_resamples=N)
    assert report.runs[1].scores["se"] == alone["se"]


def test_text_md_latex_json(starter_set: Path, runs: list[Path]) -> None:
    report = build_report(runs, TaskSet.open(starter_set), n_resamples=N)
    text = render_report(report, "text")
    assert "Overall pass@1 capabilities (as in the paper's Table 5)" in text and "Paired comparisons" in text
    md = render_report(report, "md")
    assert "### Results by network heterogeneity (as in the paper's Table 22)" in md
    assert "| oracle+gold | 2 | 100.00 ± 0.00 |" in md
    latex = render_report(report, "latex")
    assert latex.count("\\begin{tabular}{") == len(report_tables(report))  # nested stacks are [t]
    assert "100.00 \\\\ $\\pm$0.00" in latex and "\\toprule" in latex
    data = json.loads(render_report(report, "json"))
    t5 = next(t for t in data if t["key"] == "table5")
    assert t5["columns"][:4] == ["Run", "RCA n", "RCA Acc", "RCA Acc SE"]
    assert t5["rows"][1][2:4] == [50.0, 50.0]  # raw numbers, not formatted strings
    t25 = next(t for t in data if t["key"] == "table25")
    assert "CI low (pp)" in t25["columns"] and all(isinstance(r[9], float) for r in t25["rows"])
    with pytest.raises(CtbError, match="unknown report format"):
        render_report(report, "pdf")


def test_the_cli_reads_its_formats_from_the_registry() -> None:
    """`--format` choices and help come from the registries, so a new format is one entry, not three edits."""
    from ctbench.evaluate.report_formats import REPORT_FORMATS
    from ctbench.tables import TABLE_FORMATS

    assert list(REPORT_FORMATS) == [*TABLE_FORMATS, "html"]
    for component, command, formats in (
        ("evaluate", "report", REPORT_FORMATS),
        ("authoring", "stats", TABLE_FORMATS),
        ("review", "status", TABLE_FORMATS),
    ):
        proc = run_cli(component, command, "--help")
        assert proc.returncode == 0, proc.stderr
        shown = " ".join(proc.stdout.split())
        for f in formats.values():
            assert f"{f.name}: {f.summary}" in shown, (command, f.name, shown)
    proc = run_cli("evaluate", "report", "runs/a", "--format", "pdf")
    assert proc.returncode == 2 and "'html'" in proc.stderr and "'latex'" in proc.stderr


def test_html_is_one_self_contained_file(starter_set: Path, runs: list[Path]) -> None:
    report = build_report(runs, TaskSet.open(starter_set), n_resamples=N)
    html = render_report(report, "html")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert html.count("<svg") == 4  # category radar, heterogeneity, observability, cost vs accuracy
    assert "<polygon" in html  # the category radar (C1, C2, C4)
    assert not re.search(r"https?://|<link|src=|url\(|@import", html)
    assert re.findall(r"<script[^>]*>", html) == [
        "<script>"
    ]  # the drill-down's inline sort/filter, nothing loaded
    assert "<style>" in html and "Cost vs accuracy" in html and "mean total tokens per task" in html
    assert html == render_report(
        build_report(runs, TaskSet.open(starter_set), n_resamples=N), "html"
    )  # deterministic


def test_single_run_report_has_no_paired_table(starter_set: Path, runs: list[Path]) -> None:
    report = build_report(runs[:1], TaskSet.open(starter_set), n_resamples=N)
    keys = [t.key for t in report_tables(report)]
    assert "table25" not in keys and "table5" in keys
    with pytest.raises(CtbError, match="at least one run"):
        build_report([], TaskSet.open(starter_set))


def test_report_on_runs_over_different_tasks_uses_common_tasks(
    starter_set: Path, runs: list[Path], tmp_path: Path
) -> None:
    ts = TaskSet.open(starter_set)
    one = write_run(tmp_path / "one", starter_set, answers={"RCA-001": gold_text(ts, "RCA-001")})
    report = build_report([runs[0], one], ts, n_resamples=N)
    assert report.comparison is not None and {r.n for r in report.comparison.results} == {1}
    assert any("compared on 1 common task(s)" in w for w in report.warnings)


def test_svg_charts_escape_labels_and_handle_gaps() -> None:
    svg = radar_svg(["C1", "C2", "C3"], [("<a&b>", [50.0, None, 100.0])], "t")
    assert "&lt;a&amp;b&gt;" in svg and "<a&b>" not in svg
    assert "n/a" in bars_svg(["x", "y"], [("r", [10.0, None])], "t")
    assert "<circle" in scatter_svg([("r", "rca", 1000.0, 40.0, 5.0)], ["r"], "t", "tokens")


def test_report_command_writes_the_file(starter_set: Path, runs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    proc = run_cli(
        "evaluate",
        "report",
        *map(str, runs),
        "--tasks",
        str(starter_set),
        "--format",
        "html",
        "--out",
        str(out),
        "--resamples",
        "200",
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8").count("<svg") == 4 and "report written to" in proc.stderr
    proc = run_cli(
        "evaluate",
        "report",
        str(runs[0]),
        "--tasks",
        str(starter_set),
        "--format",
        "md",
        "--resamples",
        "200",
    )
    assert (
        proc.returncode == 0 and "### Overall pass@1 capabilities (as in the paper's Table 5)" in proc.stdout
    )
    proc = run_cli("evaluate", "report", str(tmp_path / "missing"), "--tasks", str(starter_set))
    assert proc.returncode == 1 and "no such run folder" in proc.stderr and "Traceback" not in proc.stderr


def test_html_drill_down_opens_each_trial_of_a_several_trial_run(starter_set: Path, tmp_path: Path) -> None:
    run = tmp_path / "trials"
    proc = run_cli(
        "evaluate",
        "run",
        "--agent",
        "oracle",
        "--trials",
        "2",
        "--tasks",
        str(starter_set),
        "--out",
        str(run),
        "--no-score",
        "--progress",
        "none",
        "--all-statuses",
    )
    assert proc.returncode == 0, proc.stderr
    traj2 = run / "trajectories" / "RCA-001.trial2.jsonl"  # trial 2 skipped its last golden action
    traj2.write_text(
        "".join(x + "\n" for x in traj2.read_text(encoding="utf-8").splitlines()[:-1]), encoding="utf-8"
    )
    html = render_report(build_report([run], TaskSet.open(starter_set), n_resamples=N), "html")
    bodies = dict(
        re.findall(r'<tbody class="task" data-run="([^"]+)" data-task="RCA-001">(.*?)</tbody>', html, re.S)
    )
    assert sorted(bodies) == ["oracle (trial 1)", "oracle (trial 2)"]
    # each detail is packed in its row (loaded when opened): unpacked, it is the task's own
    assert all("Golden actions" not in body for body in bodies.values())
    bodies = {k: unpack_detail(re.findall(r'data-z="([^"]+)"', v)[0]) for k, v in bodies.items()}
    assert "Golden actions</strong> 3/3 covered" in bodies["oracle (trial 1)"]
    assert (
        "Golden actions</strong> 2/3 covered" in bodies["oracle (trial 2)"]
    )  # trial 2's own trajectory and scores
