"""A plug-in family in every report view: the HTML charts, the paper tables and the exports.

The family is ``tests/plugin_family/downports_family.py``, installed by an entry point exactly as in
``tests/test_family_plugin.py`` (whose fixture this module reuses). Two runs of the same model: the
oracle (100 everywhere) and a ``command`` agent with the hand-made wrong answers there (Acc 0, Loc 75,
port IoU 5/12 = 41.67 ± 8.33). Nothing under ``ctbench/`` names the family, so each view below shows
it only if it picks families up generically; without that each assertion fails (the family was
scored, then silently left out, or a view crashed on its name).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.browser_support import Browser, chromium_path
from tests.conftest import run_cli
from tests.test_family_plugin import TASKS, WRONG, plugin_env  # noqa: F401 - a fixture

pytestmark = pytest.mark.xdist_group("family_plugin")

CHROMIUM = chromium_path()
AGENT = """\
import json, os, sys
sys.stdin.read()
task = os.environ["CTBENCH_TASK_ID"]
cost = {"DOWN-001": 0.02, "DOWN-002": 0.04}[task]
with open(os.environ["CTBENCH_USAGE_FILE"], "w") as fh:
    fh.write(json.dumps({"rounds": 2, "input_tokens": 1000, "output_tokens": 100, "cost_usd": cost}))
print(json.load(open(sys.argv[1], encoding="utf-8"))[task])
"""
"""The wrong answers, with usage and the cost the harness reports (0.02 and 0.04 USD: mean 0.03)."""


@pytest.fixture(scope="module")
def runs(plugin_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:  # noqa: F811
    """(oracle run, wrong-answer run with tokens and reported costs), both with model ``m1`` (so Table 23
    pairs their harnesses)."""
    root = tmp_path_factory.mktemp("plugin-runs")
    plan = root / "answers.json"
    plan.write_text(json.dumps(WRONG), "utf-8")
    script = root / "agent.py"
    script.write_text(AGENT, "utf-8")
    oracle, wrong = root / "oracle", root / "wrong"
    for args in (
        ["--agent", "oracle", "--out", str(oracle)],
        ["--agent", "command", "--agent-cmd", f"{sys.executable} {script} {plan}", "--sandbox", "none",
         "--out", str(wrong)],
    ):  # fmt: skip
        res = run_cli(
            "evaluate", "run", *args, "--model", "m1", "--tasks", str(TASKS), "--allow-unreviewed",
            env=plugin_env, timeout=300,
        )  # fmt: skip
        assert res.returncode == 0, res.stdout + res.stderr
    return oracle, wrong


def _report(env: dict[str, str], runs: tuple[Path, Path], fmt: str, out: Path | None = None) -> str:
    extra = ["--out", str(out)] if out else []
    res = run_cli(
        "evaluate", "report", *map(str, runs), "--tasks", str(TASKS), "--format", fmt, "--resamples", "200",
        *extra, env=env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    return out.read_text("utf-8") if out else res.stdout


@pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (apt-get install -y chromium)")
def test_the_html_charts_draw_the_plugin_family(
    plugin_env: dict[str, str],  # noqa: F811
    runs: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    """Heterogeneity bars, cost markers of a shape of its own, and its own chart of its headline figures
    and parts ± SE, each drawn inside its chart in a real browser."""
    report = tmp_path / "report.html"
    _report(plugin_env, runs, "html", report)
    assert CHROMIUM is not None
    with Browser(CHROMIUM, tmp_path / "profile") as b:
        b.open(report.as_uri())
        het = "svg[aria-label='Accuracy by heterogeneity (%)']"
        groups = b.eval(f'[...document.querySelectorAll("{het} text")].map(t => t.textContent)')
        assert "down-port audit low" in groups  # its title, as the built-ins show "RCA low"
        bars = b.eval(f'[...document.querySelectorAll("{het} rect title")].map(t => t.textContent)')
        assert "oracle+m1: 100.00" in bars and "command+m1: 0.00" in bars

        scatter = "svg[aria-label='Cost vs accuracy']"
        marks = b.eval(
            f'[...document.querySelectorAll("{scatter} polygon")].map(p => {{ var r = p.getBoundingClientRect();'
            " var s = p.closest('svg').getBoundingClientRect(); return [p.textContent,"
            " p.getAttribute('points').split(' ').length, r.width > 0 && r.left >= s.left && r.right <= s.right"
            " && r.top >= s.top && r.bottom <= s.bottom]; })"
        )
        points = sorted((text.split(":")[0], corners, inside) for text, corners, inside in marks if text)
        # a diamond (four corners), not the topology triangle the plug-in used to fall through to
        assert points == [("command+m1 down-port audit", 4, True), ("oracle+m1 down-port audit", 4, True)]
        legend = b.eval(f'[...document.querySelectorAll("{scatter} text")].map(t => t.textContent)')
        assert "down-port audit" in legend

        own = "svg[aria-label='down-port audit: headline figures (%)']"
        assert b.eval(f'!!document.querySelector("{own}")')
        axis = b.eval(f'[...document.querySelectorAll("{own} text")].map(t => t.textContent)')
        assert {"Acc", "Loc", "port_iou", "Evid."} <= set(axis)
        tips = b.eval(
            f'[...document.querySelectorAll("{own} rect")].filter(r => r.querySelector("title"))'
            '.map(r => [r.querySelector("title").textContent, r.getBBox().height])'
        )
        heights = {text: h for text, h in tips}
        assert "command+m1: 41.67" in heights and "oracle+m1: 100.00" in heights
        assert heights["command+m1: 41.67"] == pytest.approx(0.4167 * heights["oracle+m1: 100.00"], rel=0.02)
        # the port IoU's SE (8.33 points) drawn as an error bar: the bar's top is 41.67 +- 8.33
        errors = b.eval(f'document.querySelectorAll("{own} line[stroke=\\"#222\\"]").length')
        assert errors >= 2  # Loc (25.00) and port_iou (8.33) of the wrong run
        caption = b.eval("[...document.querySelectorAll('figcaption')].map(f => f.textContent).join(' ')")
        assert "diamonds downports (down-port audit)" in caption
        assert "downports (down-port audit, a plug-in)" in caption


def test_the_paper_tables_show_the_plugin_family(
    plugin_env: dict[str, str],  # noqa: F811
    runs: tuple[Path, Path],
) -> None:
    """Its own table (headline figures and parts per run, ± SE across tasks), its Table 23 and its
    rows in Table 24, in Markdown, LaTeX and JSON (split: value and SE in columns of their own)."""
    md = _report(plugin_env, runs, "md")
    own = md.split("### down-port audit (downports): headline figures and parts per run", 1)[1]
    assert "| Run | Model | Harness | n | Acc | Loc | port_iou | Evid. cov. | Evid. F1 |" in own
    assert re.search(r"\| command\+m1 \| m1 \| command: .* \| 2 \| 0\.00 ± 0\.00 \| 75\.00 ± 25\.00 \| "
                     r"41\.67 ± 8\.33 \|", own)  # fmt: skip
    assert "Harness sensitivity on down-port audit (downports)" in md
    assert re.search(r"\| m1 \| ctbench-oracle \| 100\.00 \| 100\.00 \| 100\.00 \| 100\.00 \| 100\.00 \|", md)
    assert "| oracle+m1 vs command+m1 | down-port audit | 2 | 0 | 2 | 0 | 0 |" in md

    tex = _report(plugin_env, runs, "latex")
    assert "down-port audit (downports): headline figures and parts per run" in tex
    assert "port\\_iou" in tex

    doc = json.loads(_report(plugin_env, runs, "json"))
    tables = doc["tables"] if isinstance(doc, dict) else doc
    table = next(t for t in tables if t["key"] == "family_downports")
    assert "port_iou SE" in table["columns"]
    rows = {r[0]: dict(zip(table["columns"], r, strict=True)) for r in table["rows"]}
    assert rows["command+m1"]["port_iou"] == pytest.approx(100 * 5 / 12)
    assert rows["command+m1"]["port_iou SE"] == pytest.approx(100 * (1 / 2 - 1 / 3) / 2)
    disagreement = next(t for t in tables if t["key"] == "table24")
    assert [r[1] for r in disagreement["rows"]] == ["down-port audit"]


def test_scoped_comparisons_take_the_plugin_family(
    plugin_env: dict[str, str],  # noqa: F811
    runs: tuple[Path, Path],
) -> None:
    """Tables 26-27 (``compare --scope``): the table used to stop on a family it had no order for."""
    args = ["evaluate", "compare", *map(str, runs), "--tasks", str(TASKS)]
    args += ["--scope", "main", "--pairs", "1:2"]
    res = run_cli(*args, "--resamples", "200", env={**plugin_env, "COLUMNS": "200"}, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    rows = [line for line in res.stdout.splitlines() if "│ down-port audit" in line]
    assert any("│ port_iou" in line and "41.67" in line for line in rows), res.stdout
    doc = json.loads(run_cli(*args, "--resamples", "200", "--json", env=plugin_env, timeout=300).stdout)
    found = {(c["family"], c["metric"]) for s in doc["scopes"] for c in s["comparisons"]}
    assert ("downports", "port_iou") in found and ("downports", "accuracy") in found


def test_report_tables_count_the_plugin_family_efficiency_cost_and_strata(
    plugin_env: dict[str, str],  # noqa: F811
    runs: tuple[Path, Path],
) -> None:
    """Table 6 (efficiency and cost), Table 18 (evidence on correct answers), Table 22 and the other
    generic breakdowns (heterogeneity, protocol complexity, golden tier) hold its rows; scores.json's
    cost has its block."""
    doc = json.loads(_report(plugin_env, runs, "json"))
    tables = {t["key"]: t for t in doc}

    def rows(key: str) -> list[dict]:
        return [dict(zip(tables[key]["columns"], r, strict=True)) for r in tables[key]["rows"]]

    t6 = {r["Run"]: r for r in rows("table6")}
    assert t6["command+m1"]["Family"] == "down-port audit" and t6["command+m1"]["Total tokens"] == 1100
    assert t6["command+m1"]["Cost/task (USD)"] == pytest.approx(0.03)
    assert t6["command+m1"]["Cost (USD)"] == pytest.approx(0.06)
    t18 = {r["Run"]: r for r in rows("table18")}
    assert (t18["oracle+m1"]["Family"], t18["oracle+m1"]["Correct"], t18["oracle+m1"]["Cov. (%)"]) == (
        "down-port audit",
        2,
        100.0,
    )
    t22 = {r["Run"]: r for r in rows("table22")}
    assert (t22["command+m1"]["Family"], t22["command+m1"]["Level"], t22["command+m1"]["n"]) == (
        "down-port audit",
        "low",
        2,
    )
    assert t22["command+m1"]["ID / Rest"] == pytest.approx(100 * 5 / 12)
    assert "third figure is its first part (down-port audit: port_iou)" in tables["table22"]["note"]
    for key in ("by_protocol_complexity", "by_golden_tier"):
        assert {r["Family"] for r in rows(key)} == {"down-port audit"}
    scores = json.loads((runs[1] / "scores.json").read_text("utf-8"))
    assert scores["cost"]["by_family"]["downports"]["total"] == pytest.approx(0.06)


def test_compare_warns_and_prices_the_plugin_family(
    plugin_env: dict[str, str],  # noqa: F811
    runs: tuple[Path, Path],
) -> None:
    res = run_cli(
        "evaluate", "compare", *map(str, runs), "--tasks", str(TASKS), "--resamples", "200",
        env={**plugin_env, "COLUMNS": "200"}, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "only 2 downports task(s) compared (< 10)" in res.stdout + res.stderr
    cost = [line for line in res.stdout.splitlines() if "│ down-port audit" in line and "0.0300" in line]
    assert cost, res.stdout  # Cost on the compared tasks: the wrong run's mean 0.03 USD


def test_the_leaderboard_and_mlflow_exports_carry_the_plugin_family(
    plugin_env: dict[str, str],  # noqa: F811
    runs: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    """The leaderboard counts its tasks and gives each row its four figures (reasoning = its first part)
    and its efficiency and cost; MLflow gets its metrics."""
    out = tmp_path / "board"
    res = run_cli(
        "evaluate", "export", *map(str, runs), "--tasks", str(TASKS), "--format", "leaderboard",
        "--resamples", "200", "--out", str(out), env=plugin_env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    board = json.loads((out / "leaderboard.json").read_text("utf-8"))
    assert board["tasks"]["downports"] == 2
    wrong = board["results"][1]["downports"]
    assert wrong["reasoning"] == {"mean": 41.67, "sd": 8.33}
    assert wrong["localization"] == {"mean": 75.0, "sd": 25.0}
    details = json.loads((out / "agent-details.json").read_text("utf-8"))
    eff = details["agents"][1]["efficiency"]["downports"]
    assert eff["tokens"]["value"] == 1100 and eff["cost"]["value"] == pytest.approx(0.03)
    efficiency = json.loads((out / "efficiency.json").read_text("utf-8"))
    assert efficiency["results"][1]["downports"]["cost"]["total"] == pytest.approx(0.06)

    from ctbench.evaluate.mlflow_export import score_metrics

    metrics = score_metrics(json.loads((runs[1] / "scores.json").read_text("utf-8")))
    assert metrics["downports.port_iou"] == pytest.approx(5 / 12)
    assert metrics["downports.se.port_iou"] == pytest.approx(1 / 12)


def test_a_release_of_plugin_tasks_imports_runs_and_exports_its_figures(
    plugin_env: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    """A release counts the family's tasks (RELEASE.yaml, card, summary), imports and runs again (the
    import refused a family it did not know by name), and the results dataset of runs on it has the
    family's columns in its runs rows and its first part as each result's ``reasoning``."""
    import subprocess

    tasks = tmp_path / "tasks"
    shutil.copytree(TASKS, tasks)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "tasks"]):
        subprocess.run([*git, *args], cwd=tasks, check=True, capture_output=True)
    rel, gold = tmp_path / "rel", tmp_path / "gold"
    made = run_cli(
        "authoring", "release", "0.1.0", "--tasks", str(tasks), "--out", str(rel), "--gold-out", str(gold),
        "--license", "cc-by-4.0", "--allow-unreviewed", env=plugin_env, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "2 task(s) (0 rca, 0 path, 2 downports)" in made.stdout
    assert "downports: 2" in (rel / "RELEASE.yaml").read_text("utf-8")
    assert "0 path restoration, 2 downports)" in (rel / "README.md").read_text("utf-8")
    back = run_cli(
        "authoring", "import-release", str(rel), "--gold", str(gold), "--out", str(tmp_path / "back"),
        env=plugin_env, timeout=300,
    )  # fmt: skip
    assert back.returncode == 0, back.stderr
    assert (tmp_path / "back" / "downports" / "DOWN-001" / "hidden.yaml").is_file()

    plan = tmp_path / "answers.json"
    plan.write_text(json.dumps(WRONG), "utf-8")
    script = tmp_path / "agent.py"
    script.write_text(AGENT, "utf-8")
    env = {**plugin_env, "CTBENCH_RELEASE_DIR": str(tmp_path / "cache")}
    runs = [tmp_path / "oracle", tmp_path / "wrong"]
    for run, args in zip(
        runs,
        (["--agent", "oracle"], ["--agent", "command", "--agent-cmd", f"{sys.executable} {script} {plan}",
                                 "--sandbox", "none"]),
        strict=True,
    ):  # fmt: skip
        res = run_cli(
            "evaluate", "run", *args, "--tasks", str(rel), "--gold", str(gold), "--allow-unreviewed",
            "--out", str(run), env=env, timeout=300,
        )  # fmt: skip
        assert res.returncode == 0, res.stdout + res.stderr
    out = tmp_path / "results"
    res = run_cli(
        "evaluate", "export", *map(str, runs), "--tasks", str(rel), "--gold", str(gold), "--format", "release",
        "--resamples", "200", "--out", str(out), env=env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    rows = [json.loads(x) for x in (out / "json" / "runs.jsonl").read_text("utf-8").splitlines()]
    assert (
        rows[1]["downports_tasks"],
        rows[1]["downports_reasoning"],
        rows[1]["downports_reasoning_se"],
    ) == (
        2,
        41.67,
        8.33,
    )
    results = [json.loads(x) for x in (out / "json" / "results.jsonl").read_text("utf-8").splitlines()]
    wrong = {r["id"]: r["reasoning"] for r in results if r["run"] == "wrong"}
    assert wrong == {"DOWN-001": pytest.approx(1 / 2), "DOWN-002": pytest.approx(1 / 3)}
    assert "`downports_`" in (out / "README.md").read_text("utf-8")
