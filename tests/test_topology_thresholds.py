"""Topology restoration's own thresholds: heterogeneity levels and golden-length tiers are configuration
per family (DESIGN "Metadata"; ``ctbench.yaml``), and the topology family no longer borrows the path
family's. A set whose ctbench.yaml predates the family gets ctbench's topology defaults, not path's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctbench.derived import derive
from ctbench.model import Family
from ctbench.store import TaskSet
from ctbench.taxonomy import TaskSetConfig
from ctbench.yamlio import load_fast
from tests.conftest import BUNDLED, copy_starters


def _derived(root: Path, task_id: str) -> tuple[str, str]:
    ts = TaskSet.open(root)
    task, hidden = ts.load_task(task_id), ts.load_hidden(task_id)
    d = derive(task, hidden, ts.network(task.network), ts.taxonomy, ts.config)
    return d.heterogeneity, d.golden_tier


@pytest.fixture
def topo_set(tmp_path: Path) -> Path:
    root = copy_starters(tmp_path / "tasks")
    shutil.copytree(BUNDLED / "topology" / "TOPO-003", root / "topology" / "TOPO-003")
    return root


def test_the_bundled_config_gives_topology_its_own_levels() -> None:
    raw = load_fast(BUNDLED / "ctbench.yaml")
    assert "topology" in raw["heterogeneity"] and "topology" in raw["golden_tiers"]
    config = TaskSetConfig.model_validate(raw)
    assert config.golden_tiers.for_family(Family.TOPOLOGY) != config.golden_tiers.for_family(Family.PATH)
    # TOPO-003 reads one LLDP table on one device: T* = 1 is "short", not path's "short/moderate"
    assert _derived(BUNDLED, "TOPO-003") == ("low", "short")


def test_a_config_written_before_the_family_gets_topology_defaults_not_paths(topo_set: Path) -> None:
    text = (topo_set / "ctbench.yaml").read_text(encoding="utf-8")
    start = text.index("  # Topology restoration")
    text = text[:start] + text[text.index("golden_tiers:") :]
    text = text[: text.index("  topology:", text.index("golden_tiers:"))] + text[text.index("similarity:") :]
    # path's levels made unmistakable: a topology task on path's thresholds would be "huge" and "P-only"
    text = text.replace("    - {name: low, max: 3}\n", "    - {name: huge, max: 99}\n")
    text = text.replace("    - {name: short/moderate, max: 33}\n", "    - {name: P-only, max: 99}\n")
    (topo_set / "ctbench.yaml").write_text(text, encoding="utf-8")
    assert "topology" not in load_fast(topo_set / "ctbench.yaml")["heterogeneity"]
    assert _derived(topo_set, "PATH-001")[1] == "P-only"  # the edit took
    assert _derived(topo_set, "TOPO-003") == ("low", "short")


def test_the_topology_levels_are_read_from_the_config(topo_set: Path) -> None:
    text = (topo_set / "ctbench.yaml").read_text(encoding="utf-8")
    a = text.index("  topology:", text.index("heterogeneity:"))
    text = text[:a] + text[a:].replace("    - {name: low, max: 2}\n", "    - {name: flat, max: 0}\n", 1)
    b = text.index("  topology:", text.index("golden_tiers:"))
    text = text[:b] + text[b:].replace("    - {name: short, max: 2}\n", "    - {name: none, max: 0}\n", 1)
    (topo_set / "ctbench.yaml").write_text(text, encoding="utf-8")
    assert _derived(topo_set, "TOPO-003") == ("high", "moderate")
    assert _derived(topo_set, "RCA-001")[0] in ("low", "high")  # RCA's own levels are untouched
