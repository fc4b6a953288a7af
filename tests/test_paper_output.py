"""Paper-ready output: LaTeX with labels, captions and bold best values; one name for an unreadable
answer; the task-set commit that scoring and importing used, recorded and compared with the run's."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from ctbench.store import TaskSet
from tests.conftest import run_cli
from tests.test_score_support import gold_text, golden_calls, oracle_run, starter_copy, write_run


def _runs(tmp_path: Path, tasks: Path) -> list[Path]:
    ts = TaskSet.open(tasks)
    good = oracle_run(tmp_path / "runs" / "good", tasks, name="good", agent="good")
    weak = write_run(
        tmp_path / "runs" / "weak",
        tasks,
        name="weak",
        agent="weak",
        answers={"RCA-001": gold_text(ts, "RCA-001"), "RCA-002": "", "PATH-001": "no idea at all"},
        calls={"RCA-001": golden_calls(ts, "RCA-001")[:1]},
        usage={
            t: {"rounds": 1, "latency_s": 1.0, "input_tokens": 10, "output_tokens": 5}
            for t in ("RCA-001", "RCA-002", "PATH-001")
        },
    )
    return [good, weak]


def test_latex_is_paper_ready(tmp_path: Path) -> None:
    tasks = starter_copy(tmp_path)
    runs = _runs(tmp_path, tasks)
    res = run_cli(
        "evaluate",
        "report",
        *map(str, runs),
        "--format",
        "latex",
        "--bold-best",
        "--tasks",
        str(tasks),
        "--resamples",
        "200",
    )
    assert res.returncode == 0, res.stderr
    tex = res.stdout
    assert "\\label{tab:table5}" in tex and "\\label{tab:table21}" in tex
    assert "shape)" not in tex.replace("% the layout", "")  # captions name what they show
    assert "\\caption{Overall pass@1 capabilities. Percent $\\pm$ SE across tasks" in tex
    assert "% the layout of the CTBench paper's Table 5" in tex
    assert "\\resizebox" not in tex and "\\footnotesize" in tex  # nothing shrunk below footnotesize
    start = tex.index("\\label{tab:table5}")
    table5 = tex[start : tex.index("\\end{table", start)]
    assert "\\multicolumn{5}{c}{RCA}" in table5 and "\\cmidrule(lr){2-6}" in table5  # grouped by family
    good_row = next(line for line in table5.splitlines() if line.startswith("good"))
    weak_row = next(line for line in table5.splitlines() if line.startswith("weak"))
    stacked = "\\textbf{\\begin{tabular}[t]{@{}r@{}}100.00 \\\\ $\\pm$0.00\\end{tabular}}"
    assert stacked in good_row and "\\textbf" not in weak_row
    table6 = tex[tex.index("\\label{tab:table6}") :]
    table6 = table6[: table6.index("\\end{table")]
    # lowest cost is best: the weak run's single round and 15 tokens
    assert re.search(r"weak\+m1 & RCA & 2 & \\textbf\{1\.00\} & \\textbf\{1\.00\} & \\textbf\{10\}", table6)
    plain = run_cli(
        "evaluate",
        "report",
        *map(str, runs),
        "--format",
        "latex",
        "--tasks",
        str(tasks),
        "--resamples",
        "200",
    )
    assert "\\textbf" not in plain.stdout


def test_one_name_for_an_unreadable_answer(tmp_path: Path) -> None:
    tasks = starter_copy(tmp_path)
    weak = _runs(tmp_path, tasks)[1]
    res = run_cli("evaluate", "score", str(weak), "--tasks", str(tasks), "--resamples", "200")
    assert res.returncode == 0, res.stderr
    # RCA-002 is blank and PATH-001 prose: both are "unparsable", as the run's progress lines say
    assert "not answered: 1 unparsable" in res.stdout and "empty" not in res.stdout
    doc = json.loads((weak / "scores.json").read_text(encoding="utf-8"))
    assert doc["summary"]["rca"]["status"]["empty"] == 1  # the detail is kept in the data


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def _repo(tasks: Path) -> str:
    _git(tasks, "init", "-q")
    _git(tasks, "-c", "user.name=t", "-c", "user.email=t@example.org", "add", "-A")
    _git(tasks, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "tasks")
    return _git(tasks, "rev-parse", "HEAD")


def test_score_records_the_commit_it_scored_against(tmp_path: Path) -> None:
    tasks = starter_copy(tmp_path)
    head = _repo(tasks)
    same = oracle_run(tmp_path / "runs" / "same", tasks, commit=head)
    other = oracle_run(tmp_path / "runs" / "other", tasks, commit="0123456789abcdef0123456789abcdef01234567")
    res = run_cli("evaluate", "score", str(same), "--tasks", str(tasks), "--resamples", "200")
    assert res.returncode == 0 and "scored against" not in res.stdout
    assert f"at commit {head[:12]}" in res.stderr
    assert json.loads((same / "scores.json").read_text())["scoring"]["task_set_commit"] == head
    res = run_cli("evaluate", "score", str(other), "--tasks", str(tasks), "--resamples", "200")
    assert res.returncode == 0
    assert f"scored against task-set commit {head[:12]}, but the run was made on 0123456789ab" in res.stdout


def test_import_records_the_commit_it_imported_against(tmp_path: Path) -> None:
    tasks = starter_copy(tmp_path)
    head = _repo(tasks)
    src = tmp_path / "r.json"
    src.write_text(json.dumps([{"task_id": "RCA-001", "final_answer": "x"}]), encoding="utf-8")
    res = run_cli("evaluate", "import-results", str(src), "--out", str(tmp_path / "a"), "--tasks", str(tasks))
    assert res.returncode == 0, res.stderr
    assert f"at commit {head[:12]}" in res.stdout
    assert f"commit: {head}" in (tmp_path / "a" / "run.yaml").read_text(encoding="utf-8")
    src.write_text(
        json.dumps(
            {"task_set_commit": "feedface" * 5, "results": [{"task_id": "RCA-001", "final_answer": "x"}]}
        )
    )
    res = run_cli("evaluate", "import-results", str(src), "--out", str(tmp_path / "b"), "--tasks", str(tasks))
    assert res.returncode == 0, res.stderr
    assert f"made on task-set commit feedfacefeed but are imported against {head[:12]}" in res.stderr
    assert "commit: " + "feedface" * 5 in (tmp_path / "b" / "run.yaml").read_text(encoding="utf-8")
