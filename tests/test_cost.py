"""What runs cost: the harness's own figure, else tokens times a price file (``--prices``), with the
source of every figure; timed-out attempts counted with what they spent; the cost column in Table 6
(text, JSON, LaTeX, HTML), compare and the leaderboard export.

The runs are real: ``ctb-eval run --agent command`` starts a scripted agent program per task that
writes its usage file as an agent harness would (tokens, cache reads, and with ``cost`` its cost),
and sleeps past the timeout on the task named ``slow=ID``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.yamlio import load_fast
from tests.conftest import REPO, needs_bwrap
from tests.leaderboard_site_rules import check_agent_details

pytestmark = needs_bwrap

AGENT = """\
import json, os, sys, time
task = os.environ["CTBENCH_TASK_ID"]
n = sum(map(ord, task)) % 7
usage = {"rounds": 3 + n, "input_tokens": 10000 + 1000 * n, "cached_tokens": 4000,
         "output_tokens": 500 + 10 * n}
if "cost" in sys.argv[1:]:
    usage["cost_usd"] = round(0.01 * (n + 1), 4)
with open(os.environ["CTBENCH_USAGE_FILE"], "w") as fh:
    fh.write(json.dumps(usage))
if "slow=" + task in sys.argv[1:]:
    time.sleep(120)
print("no idea")
"""
PRICES = """\
# what the scripted models cost
currency: USD
date: 2026-11-30
source: the test's own prices
models:
  m1:
    input: 2.0
    cached_input: 0.5
    output: 8.0
  m2:
    input: 1.0
    output: 4.0
    aliases: [provider/m2]
"""
TASKS = ("RCA-001", "RCA-002", "PATH-001")


def _ctb_eval(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("COLUMNS", None)
    return subprocess.run(
        [sys.executable, "-m", "ctbench.evaluate.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=cwd,
    )


def _ok(*args: str) -> str:
    proc = _ctb_eval(*args)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Run A: model m1, tokens only. Run B: model m2, reported costs, RCA-002 timed out."""
    from tests.conftest import copy_starters

    root = tmp_path_factory.mktemp("cost")
    tasks = copy_starters(root / "tasks")
    agent = root / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    (root / "prices.yaml").write_text(PRICES, encoding="utf-8")
    common = ["--agent", "command", "--tasks", str(tasks), "--select", " ".join(TASKS)]
    common += ["--allow-unreviewed", "--progress", "none", "--timeout", "4"]
    _ok("run", *common, "--agent-cmd", f"{sys.executable} {agent}", "--model", "m1", "--out", str(root / "a"))
    _ok(
        "run", *common, "--agent-cmd", f"{sys.executable} {agent} cost slow=RCA-002", "--model", "m2",
        "--out", str(root / "b"),
    )  # fmt: skip
    return {"a": root / "a", "b": root / "b", "tasks": tasks, "prices": root / "prices.yaml", "root": root}


def _lines(run: Path) -> dict[str, dict]:
    out = {}
    for raw in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        line = json.loads(raw)
        out[line["task_id"]] = line
    return out


def _priced(line: dict, input_price: float, cached_price: float, output_price: float) -> float:
    cached = line["cached_tokens"]
    return (
        (line["input_tokens"] - cached) * input_price
        + cached * cached_price
        + line["output_tokens"] * output_price
    ) / 1e6


def _table(tables: list[dict], key: str) -> dict:
    return next(t for t in tables if t["key"] == key)


def test_a_timed_out_attempt_keeps_its_tokens_and_cost(runs: dict[str, Path]) -> None:
    lines = _lines(runs["b"])
    slow = lines["RCA-002"]
    assert slow["status"] == "timeout"
    assert slow["input_tokens"] > 0 and slow["cached_tokens"] == 4000 and slow["cost_usd"] > 0
    totals = load_fast(runs["b"] / "run.yaml")["totals"]
    assert totals["attempts"] == {"unparsable": 2, "timeout": 1}
    assert totals["cost_usd"] == pytest.approx(sum(line["cost_usd"] for line in lines.values()))
    assert totals["input_tokens"] == sum(line["input_tokens"] for line in lines.values())


def test_table6_has_reported_and_priced_costs_with_their_sources(runs: dict[str, Path]) -> None:
    out = _ok(
        "report", str(runs["a"]), str(runs["b"]), "--tasks", str(runs["tasks"]), "--prices", str(runs["prices"]),
        "--resamples", "100", "--format", "json",
    )  # fmt: skip
    t6 = _table(json.loads(out), "table6")
    assert t6["columns"][-2:] == ["Cost/task (USD)", "Cost (USD)"]
    rows = {(r[0], r[1]): r for r in t6["rows"]}
    a, b = _lines(runs["a"]), _lines(runs["b"])
    # run A: no reported cost, so tokens x m1's prices (cache reads at the cached price)
    a_rca = [_priced(a[t], 2.0, 0.5, 8.0) for t in ("RCA-001", "RCA-002")]
    assert rows[("command+m1", "RCA")][-2] == pytest.approx(sum(a_rca) / 2)
    assert rows[("command+m1", "RCA")][-1] == pytest.approx(sum(a_rca))
    assert rows[("command+m1", "Path")][-1] == pytest.approx(_priced(a["PATH-001"], 2.0, 0.5, 8.0))
    # run B: the harness's own figures, the timed-out task's included
    assert rows[("command+m2", "RCA")][-1] == pytest.approx(
        b["RCA-001"]["cost_usd"] + b["RCA-002"]["cost_usd"]
    )
    assert "3 attempt(s) as the harness reported it, 3 priced from tokens with prices.yaml" in t6["note"]
    assert "(USD, prices of 2026-11-30)" in t6["note"]
    scores = json.loads(
        _ok("score", str(runs["a"]), "--tasks", str(runs["tasks"]), "--prices", str(runs["prices"]), "--json")
    )
    assert scores["cost"]["sources"] == {"reported": 0, "priced": 3, "unknown": 0}
    assert scores["cost"]["prices"]["models"] == ["m1"] and scores["cost"]["prices"]["date"] == "2026-11-30"
    assert {t["task_id"]: t["cost_source"] for t in scores["tasks"]} == dict.fromkeys(TASKS, "priced")
    assert str(runs["root"]) not in json.dumps(scores["cost"])  # no absolute path in scores.json


def test_without_a_price_file_only_reported_costs_show(runs: dict[str, Path]) -> None:
    out = _ok(
        "report", str(runs["a"]), str(runs["b"]), "--tasks", str(runs["tasks"]), "--resamples", "100",
        "--format", "json",
    )  # fmt: skip
    rows = {(r[0], r[1]): r for r in _table(json.loads(out), "table6")["rows"]}
    assert rows[("command+m1", "RCA")][-2:] == [None, None]
    assert rows[("command+m2", "Path")][-1] == pytest.approx(_lines(runs["b"])["PATH-001"]["cost_usd"])
    alone = json.loads(
        _ok("report", str(runs["a"]), "--tasks", str(runs["tasks"]), "--resamples", "100", "--format", "json")
    )
    assert not any(c.startswith("Cost") for c in _table(alone, "table6")["columns"])


def test_cost_in_latex_html_compare_and_the_leaderboard(runs: dict[str, Path], tmp_path: Path) -> None:
    base = [str(runs["a"]), str(runs["b"]), "--tasks", str(runs["tasks"]), "--prices", str(runs["prices"])]
    base += ["--resamples", "100"]
    latex = _ok("report", *base, "--format", "latex")
    assert "Cost/task" in latex and "(USD)" in latex
    html = _ok("report", *base, "--format", "html")
    assert "Cost/task (USD)" in html and "Cost (USD)" in html
    text = _ok("compare", *base, "--allow-incomplete")
    assert "Cost on the compared tasks" in text and "2 reported" in text and "2 priced" in text
    cmp = json.loads(_ok("compare", *base, "--allow-incomplete", "--json"))
    b_name = cmp["runs"][1]["name"]
    assert cmp["cost"][b_name]["by_family"]["rca"]["sources"] == {"reported": 2, "priced": 0, "unknown": 0}
    site = tmp_path / "site"
    _ok("export", *base, "--format", "leaderboard", "--out", str(site))
    details = json.loads((site / "agent-details.json").read_text(encoding="utf-8"))
    board = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    check_agent_details(details, board)  # the site still accepts it
    a_cost = details["agents"][0]["efficiency"]["rca"]["cost"]
    assert a_cost["status"] == "available" and a_cost["unit"] == "USD" and a_cost["observed"] == 2
    assert "prices.yaml (USD, prices of 2026-11-30)" in a_cost["definition"]
    efficiency = json.loads((site / "efficiency.json").read_text(encoding="utf-8"))
    assert efficiency["results"][1]["rca"]["cost"]["sources"]["reported"] == 2


def test_a_price_file_in_another_currency_prices_every_attempt(runs: dict[str, Path], tmp_path: Path) -> None:
    eur = tmp_path / "eur.json"
    eur.write_text(
        json.dumps({"currency": "EUR", "date": "2026-12-01", "models": {"provider/m2x": {"input": 1, "output": 4,
                   "aliases": ["m2"]}}}),
        encoding="utf-8",
    )  # fmt: skip
    proc = _ctb_eval("score", str(runs["b"]), "--tasks", str(runs["tasks"]), "--prices", str(eur), "--json")
    assert proc.returncode == 0, proc.stderr
    scores = json.loads(proc.stdout)
    assert scores["cost"]["currency"] == "EUR"
    assert scores["cost"]["sources"] == {"reported": 0, "priced": 3, "unknown": 0}
    b = _lines(runs["b"])
    expected = sum((line["input_tokens"] * 1 + line["output_tokens"] * 4) / 1e6 for line in b.values())
    assert scores["cost"]["by_family"]["all"]["total"] == pytest.approx(expected)  # no cached price: input's
    assert any("3 reported cost(s) in USD set aside" in w for w in scores["warnings"])


def test_a_model_without_a_price_is_named(runs: dict[str, Path], tmp_path: Path) -> None:
    only_m2 = tmp_path / "m2.yaml"
    only_m2.write_text(
        "currency: USD\ndate: 2026-11-30\nmodels:\n  m2: {input: 1, output: 4}\n", encoding="utf-8"
    )
    scores = json.loads(
        _ok("score", str(runs["a"]), "--tasks", str(runs["tasks"]), "--prices", str(only_m2), "--json")
    )
    assert scores["cost"]["sources"]["unknown"] == 3 and scores["cost"]["by_family"]["all"]["mean"] is None
    assert any("no price for model 'm1' in m2.yaml (its models: m2)" in w for w in scores["warnings"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("currency: usd\ndate: 2026-11-30\nmodels:\n  m1: {input: 1, output: 1}\n", "p.yaml:1: currency:"),
        ("currency: USD\nmodels:\n  m1: {input: 1, output: 1}\n", "date: Field required"),
        ("currency: USD\ndate: 2026-11-30\nmodels:\n  m1:\n    input: 2\n    ouput: 3\n",
         "p.yaml:6: models.m1.ouput: Extra inputs are not permitted (expected one of: input, output"),
        ("currency: USD\ndate: 2026-11-30\nmodels:\n  m1:\n    input: 2\n    output: -3\n",
         "p.yaml:6: models.m1.output: Input should be greater than or equal to 0"),
        ("currency: USD\ndate: 2026-11-30\nmodels:\n  m1: {input: 1, output: 1}\n  m2: {input: 1, output: 1, "
         "aliases: [m1]}\n", "model id 'm1' is given for both 'm1' and 'm2'"),
        ("currency: USD\ndate: 2026-11-30\nmodels:\n  m1: {input: 1, output: 1\n", "p.yaml:4: broken YAML"),
        ("- m1\n", "p.yaml:1: expected a mapping with currency, date and models"),
    ],
)  # fmt: skip
def test_a_broken_price_file_is_named_with_its_line(
    runs: dict[str, Path], tmp_path: Path, text: str, expected: str
) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text(text, encoding="utf-8")
    proc = _ctb_eval("report", str(runs["a"]), "--tasks", str(runs["tasks"]), "--prices", str(bad))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert expected in proc.stderr, proc.stderr


@pytest.mark.skipif(
    shutil.which("pdflatex") is None, reason="needs pdflatex: apt-get install texlive-latex-base"
)
@pytest.mark.parametrize("layout", ["onecolumn", "twocolumn"])
def test_the_latex_with_costs_compiles_without_an_overfull_box(
    runs: dict[str, Path], tmp_path: Path, layout: str
) -> None:
    tables = tmp_path / "tables.tex"
    _ok(
        "report", str(runs["a"]), str(runs["b"]), "--tasks", str(runs["tasks"]), "--prices", str(runs["prices"]),
        "--resamples", "100", "--format", "latex", "--bold-best", "--out", str(tables),
    )  # fmt: skip
    assert "Cost/task" in tables.read_text(encoding="utf-8")
    (tmp_path / "paper.tex").write_text(
        f"\\documentclass[{layout}]{{article}}\n\\usepackage{{booktabs}}\n"
        "\\begin{document}\n\\input{tables}\n\\end{document}\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (tmp_path / "paper.log").read_text(encoding="latin-1")
    assert proc.returncode == 0, log[-3000:]
    assert not [line for line in log.splitlines() if line.startswith("Overfull \\hbox")]


def test_atif_trajectories_carry_the_attempts_cost(runs: dict[str, Path], tmp_path: Path) -> None:
    """total_cost_usd of each exported trajectory: the reported cost, else the priced one (in USD)."""
    from tests.atif_check import check_atif

    for run, prices, expected in (
        ("b", [], {t: line["cost_usd"] for t, line in _lines(runs["b"]).items()}),
        (
            "a",
            ["--prices", str(runs["prices"])],
            {t: _priced(x, 2.0, 0.5, 8.0) for t, x in _lines(runs["a"]).items()},
        ),
        ("a", [], dict.fromkeys(TASKS)),
    ):
        out = tmp_path / f"atif-{run}-{len(prices)}"
        _ok(
            "export",
            str(runs[run]),
            "--tasks",
            str(runs["tasks"]),
            "--format",
            "atif",
            "--out",
            str(out),
            *prices,
        )
        for task_id, cost in expected.items():
            doc = json.loads((out / task_id / "trajectory.json").read_text(encoding="utf-8"))
            assert not check_atif(doc), check_atif(doc)
            assert doc["final_metrics"]["total_cost_usd"] == (None if cost is None else pytest.approx(cost))


def test_run_scores_with_its_price_file_and_a_broken_one_stops_it_first(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """``ctb-eval run --prices``: the scorecard it writes at the end prices the tokens; a broken price
    file is refused before the run starts (no attempt spent, no run folder)."""
    agent = runs["root"] / "agent.py"
    common = ["--agent", "command", "--tasks", str(runs["tasks"]), "--select", "RCA-001 PATH-001"]
    common += ["--allow-unreviewed", "--progress", "none", "--agent-cmd", f"{sys.executable} {agent}"]
    out = tmp_path / "priced"
    got = json.loads(
        _ok("run", *common, "--model", "m1", "--out", str(out), "--prices", str(runs["prices"]), "--json")
    )
    lines = _lines(out)
    expected = sum(_priced(line, 2.0, 0.5, 8.0) for line in lines.values())
    for scores in (got["scores"], json.loads((out / "scores.json").read_text(encoding="utf-8"))):
        assert scores["cost"]["sources"] == {"reported": 0, "priced": 2, "unknown": 0}
        assert scores["cost"]["by_family"]["all"]["total"] == pytest.approx(expected)
    bad = tmp_path / "p.yaml"
    bad.write_text("currency: USD\ndate: 2026-11-30\nmodels:\n  m1: {input: 1, ouput: 1}\n", encoding="utf-8")
    proc = _ctb_eval("run", *common, "--model", "m1", "--out", str(tmp_path / "never"), "--prices", str(bad))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "p.yaml:4" in proc.stderr and "ouput" in proc.stderr, proc.stderr
    assert not (tmp_path / "never").exists()


def test_a_sweep_prices_its_report_from_its_file_or_the_command_line(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    agent = runs["root"] / "agent.py"
    sweep = tmp_path / "s.yaml"
    sweep.write_text(
        f"""\
name: priced
tasks: {runs["tasks"]}
select: RCA-001 PATH-001
allow_unreviewed: true
prices: {runs["prices"]}
common: {{agent_cmd: "{sys.executable} {agent}", timeout: 30}}
cells:
  - agent: command
    model: [m1, m2]
report: [json]
""",
        encoding="utf-8",
    )
    _ok("sweep", str(sweep), "--out", str(tmp_path / "out"))
    t6 = _table(json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8")), "table6")
    assert t6["columns"][-2:] == ["Cost/task (USD)", "Cost (USD)"]
    rows = {(r[0].split("+")[-1], r[1]): r for r in t6["rows"]}
    m1 = _lines(tmp_path / "out" / "command-m1")
    m2 = _lines(tmp_path / "out" / "command-m2")
    assert rows[("m1", "RCA")][-1] == pytest.approx(_priced(m1["RCA-001"], 2.0, 0.5, 8.0))
    assert rows[("m2", "Path")][-1] == pytest.approx(_priced(m2["PATH-001"], 1.0, 1.0, 4.0))
    # --prices on the command line wins; a broken file stops the sweep before its first cell
    bad = tmp_path / "bad.yaml"
    bad.write_text("- m1\n", encoding="utf-8")
    proc = _ctb_eval("sweep", str(sweep), "--out", str(tmp_path / "never"), "--prices", str(bad))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "bad.yaml:1: expected a mapping" in proc.stderr, proc.stderr
    assert not (tmp_path / "never").exists()
