"""An exporter plug-in from outside ctbench reads runs through the plug-in face's read API.

``tests/plugin_exporter/csvrows_exporter.py`` imports ``ctbench.plugins`` only and is installed the
way ``pip install`` would leave it: a ``.dist-info`` with an entry point in the ``ctbench.exporters``
group. Through the real ``ctb-eval export`` it reads the ``runs-v2-families`` fixture (a run of
format 1, two trials over five tasks of the three built-in families) and writes one CSV row per
family, figures over tasks as ``ctb-eval score`` computes them, and the leaderboard beside it.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "runs-v2-families"
MODULE = Path(__file__).parent / "plugin_exporter" / "csvrows_exporter.py"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    info = site / "ctbench_csvrows-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ctbench-csvrows\nVersion: 0.1\n", "utf-8")
    (info / "entry_points.txt").write_text(
        "[ctbench.exporters]\ncsvrows = csvrows_exporter:export\n", "utf-8"
    )
    return {"PYTHONPATH": os.pathsep.join([str(REPO), str(site), str(MODULE.parent)])}


def test_the_plugin_imports_only_the_face() -> None:
    tree = ast.parse(MODULE.read_text("utf-8"))
    names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {n for n in names if n.startswith("ctbench")} == {"ctbench.plugins"}


def test_an_outside_exporter_reads_runs_scores_and_other_formats(env: dict[str, str], tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE / "run", run)
    out = tmp_path / "out"
    res = run_cli(
        "evaluate", "export", str(run), "--format", "csvrows", "--out", str(out), "--tasks", str(FIXTURE / "tasks"),
        "--json", env=env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    summary = json.loads(res.stdout)
    assert summary["format"] == "csvrows" and "runs.csv" in summary["files"]
    assert "board/leaderboard.json" in summary["files"] and (out / "board" / "leaderboard.json").is_file()
    rows = {r["family"]: r for r in csv.DictReader((out / "runs.csv").open(encoding="utf-8"))}
    assert set(rows) == {"rca", "path", "topology"}
    # by hand (test_family_records_compat): RCA 1 of 4 task-trials over 2 tasks; path 1 of 2 over 1
    assert (rows["rca"]["n_tasks"], rows["rca"]["accuracy"], rows["rca"]["lines"]) == ("2", "0.25", "4")
    assert (rows["path"]["n_tasks"], rows["path"]["accuracy"], rows["path"]["lines"]) == ("1", "0.5", "2")
    assert rows["topology"]["accuracy"] == "0.25" and rows["rca"]["trials"] == "2"
    # the SE is across the 2 task means (0.5 and 0): 0.25, not across the 4 task-trials
    assert rows["rca"]["se"] == "0.25"
    assert rows["rca"]["incomplete"] == "False"


def test_an_export_request_without_the_evaluator_reader_says_how(tmp_path: Path) -> None:
    from ctbench.plugins import ExporterError, ExportRequest
    from ctbench.store import TaskSet

    request = ExportRequest([tmp_path], tmp_path / "out", TaskSet(FIXTURE / "tasks"))
    with pytest.raises(ExporterError, match="export_request"):
        request.runs()
