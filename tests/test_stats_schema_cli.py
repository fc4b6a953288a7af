"""Dataset statistics, JSON Schema export and the console scripts' help."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctbench.authoring.stats import dataset_stats
from ctbench.derived import derive
from ctbench.store import TaskSet
from tests.conftest import run_cli


def test_stats_tables_count_entries_and_mentions(task_set: Path) -> None:
    ts = TaskSet.open(task_set)
    res = dataset_stats(ts)
    tables = {t.key: t for t in res.tables}
    fam = {row[0]: row[1] for row in tables["families"].rows}
    assert fam["rca"] == len([r for r in ts.refs() if r.family.value == "rca"])
    entries = dict((row[0], row[1]) for row in tables["entries"].rows)
    n_entries = sum(len(ts.load_hidden(r).answer.rca or []) for r in ts.refs() if r.family.value == "rca")
    assert entries["root-cause entries (triples)"] == n_entries
    cats = {row[0]: row[2] for row in tables["categories"].rows}
    assert set(cats) == {"C1", "C2", "C3", "C4", "C5"} and sum(cats.values()) == n_entries


@pytest.mark.parametrize("fmt", ["text", "md", "json", "latex"])
def test_stats_formats(task_set: Path, fmt: str) -> None:
    r = run_cli("authoring", "stats", str(task_set), "--format", fmt)
    assert r.returncode == 0, r.stderr
    if fmt == "json":
        keys = {t["key"] for t in json.loads(r.stdout)["tables"]}
        assert {"families", "categories", "heterogeneity", "yields"} <= keys
    elif fmt == "latex":
        assert "\\begin{tabular}" in r.stdout and "\\toprule" in r.stdout
    elif fmt == "md":
        assert "| category |" in r.stdout
    else:
        assert "Merged RCA categories" in r.stdout


def test_derived_heterogeneity_uses_golden_devices_only(task_set: Path) -> None:
    ts = TaskSet.open(task_set)
    t, h = ts.load_task("PATH-001"), ts.load_hidden("PATH-001")
    d = derive(t, h, ts.network(t.network), ts.taxonomy, ts.config)
    # golden devices: H3C switch, Huawei switch, Huawei firewall, Cisco router, Juniper router
    assert (d.vendors, d.device_types, d.h_l, d.heterogeneity) == (4, 3, 4, "high")
    t, h = ts.load_task("RCA-001"), ts.load_hidden("RCA-001")
    d = derive(t, h, ts.network(t.network), ts.taxonomy, ts.config)
    assert (d.h_l, d.heterogeneity, d.categories, d.golden_tier) == (1, "low", ["C1"], "short")


def test_schema_export_matches_committed(task_set: Path, tmp_path: Path) -> None:
    r = run_cli("authoring", "schema", "--out", str(tmp_path / "schema"))
    assert r.returncode == 0, r.stderr
    repo = Path(__file__).parents[1]
    # every committed copy: the bundled set's, and those of the other sets kept in the repository
    for folder in ("tasks/schema", "tasks/labs/recorded/schema", "tests/fixtures/review/schema"):
        for p in (tmp_path / "schema").glob("*.json"):
            committed = repo / folder / p.name
            assert committed.read_text() == p.read_text(), (
                f"{folder}/{p.name} is stale: run ctb-author schema --out {folder}"
            )
    task_schema = json.loads((tmp_path / "schema/task.schema.json").read_text())
    assert "statement" in task_schema["properties"] and "statement" in task_schema["required"]


@pytest.mark.parametrize("component", ["authoring", "review", "replay", "evaluate"])
def test_help_for_every_console_script(component: str) -> None:
    r = run_cli(component, "--help")
    assert r.returncode == 0 and "examples:" in r.stdout


def test_unknown_task_set_is_a_message(tmp_path: Path) -> None:
    r = run_cli("authoring", "stats", str(tmp_path / "nowhere"))
    assert r.returncode == 1 and "no such task set folder" in r.stderr and "Traceback" not in r.stderr
