"""The LaTeX of a 4-run report compiles with pdflatex in one- and two-column article classes, with only
booktabs, and with no overfull box: the test reads pdflatex's log, as an author checking a paper would.

The runs cover every bundled family (RCA, path and topology restoration), and two of them are one model
under two harnesses, so Table 23 (harness sensitivity) is there with its topology columns."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from ctbench.store import TaskSet
from tests.conftest import run_cli
from tests.test_score_support import gold_text, golden_calls, write_run

pytestmark = [
    pytest.mark.xdist_group("latex"),
    pytest.mark.skipif(
        shutil.which("pdflatex") is None, reason="needs pdflatex: apt-get install texlive-latex-base"
    ),
]

CONFIGS = (
    ("codex", "gpt-5.5"),
    ("claude-code", "claude-sonnet-5-5"),
    ("hermes", "deepseek-v4-pro"),
    ("openai", "gpt-5.5"),
)


@pytest.fixture(scope="module")
def tex(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 4-run report over the whole bundled set, with long run labels and a label given by hand."""
    root = tmp_path_factory.mktemp("latex")
    tasks = Path(__file__).resolve().parents[1] / "tasks"
    ts = TaskSet.open(tasks)
    ids = [r.id for r in ts.refs() if any((tasks / f / r.id).is_dir() for f in ("rca", "path", "topology"))]
    rng = random.Random(7)
    runs = []
    for i, (agent, model) in enumerate(CONFIGS):
        answers = {t: gold_text(ts, t) if rng.random() < 0.3 + 0.15 * i else "no idea" for t in ids}
        usage = {
            t: {"rounds": 12 + i, "latency_s": 123.4, "input_tokens": 123456, "output_tokens": 4567}
            for t in ids
        }
        calls = {t: golden_calls(ts, t)[: 1 + i] for t in ids}
        run = write_run(
            root / f"run{i}",
            tasks,
            name=f"run{i}",
            agent=agent,
            model=model,
            answers=answers,
            calls=calls,
            usage=usage,
        )
        # each run under its own harness: codex and openai then hold one model under two (Table 23)
        config = run / "run.yaml"
        config.write_text(config.read_text().replace("harness: test-harness", f"harness: {agent}"))
        runs.append(run)
    proc = run_cli(
        "evaluate", "report", *map(str, runs), "--tasks", str(tasks), "--format", "latex", "--bold-best",
        "--resamples", "200", "--label", "run3=OpenAI agent, GPT-5.5 mini (medium)", timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("layout", ["onecolumn", "twocolumn"])
def test_the_report_compiles_without_an_overfull_box(tex: str, layout: str, tmp_path: Path) -> None:
    (tmp_path / "tables.tex").write_text(tex, encoding="utf-8")
    doc = tmp_path / "paper.tex"
    doc.write_text(
        f"\\documentclass[{layout}]{{article}}\n\\usepackage{{booktabs}}\n"
        "\\begin{document}\n\\input{tables}\n\\end{document}\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", doc.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (tmp_path / "paper.log").read_text(encoding="latin-1")
    assert proc.returncode == 0, log[-3000:]
    overfull = [line for line in log.splitlines() if line.startswith("Overfull \\hbox")]
    assert not overfull, overfull
    assert (tmp_path / "paper.pdf").stat().st_size > 10_000


def test_the_latex_is_typeset_as_a_paper_sets_tables(tex: str) -> None:
    assert "\\resizebox" not in tex and "\\scriptsize" not in tex and "\\tiny" not in tex
    assert tex.count("\\footnotesize") == tex.count("\\begin{tabular}{")
    assert "n \\textless{} 10" in tex and "<" not in tex.replace("% ", "")  # never OT1's inverted "!"
    assert "\\cmidrule(lr)" in tex and "\\multicolumn" in tex  # RCA and Path grouped
    assert "Abbreviations: n: tasks; Acc: exact-answer accuracy" in tex
    assert "OpenAI agent, GPT-\\allowbreak{}5.5 mini (medium) & 19" in tex  # --label, in Table 5
    runs = tex[tex.index("\\label{tab:runs}") :]
    assert "\nIncomplete & no & no & no & no \\\\" in runs[: runs.index("\\end{tabular}\n")]  # turned
    assert "claude-\\allowbreak{}code+\\allowbreak{}claude-" in tex  # a long label may break at its joins


def test_every_family_has_its_paper_tables_in_the_latex(tex: str) -> None:
    """Topology restoration has its Table 5 and Table 23 (harness sensitivity) and rows in Table 24."""

    def table(label: str) -> str:
        body = tex[tex.index(f"\\label{{tab:{label}}}") :]
        return body[: body.index("\\bottomrule")]

    assert "\\label{tab:table5-topology}" in tex
    t23 = table("table23-topology")
    assert "Link" in t23 and "Harness" in t23
    rows = [line for line in t23.splitlines() if line.startswith("gpt-")]
    assert sorted(line.split(" & ")[1] for line in rows) == ["codex", "openai"]  # one model, two harnesses
    assert "Topology" not in table("table23")  # the paper's two families, as in the paper
    t24 = table("table24")
    assert t24.count("& Topology & 4 &") == 6  # every pair of the four runs, on the four topology tasks
