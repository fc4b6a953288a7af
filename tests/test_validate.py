"""``ctb-author validate``: every bad-input case gets a clear finding with file and line, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctbench.validation import validate_paths
from tests.conftest import run_cli


def codes(task_set: Path, *paths: str) -> list[tuple[str, str, str, int | None]]:
    rep = validate_paths([str(task_set), *paths] if not paths else list(paths))
    return [(f.severity.value, f.code, f.file, f.line) for f in rep.findings]


def errors(task_set: Path) -> list[str]:
    rep = validate_paths([str(task_set)])
    return [f.render() for f in rep.errors]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_bundled_set_is_clean(task_set: Path) -> None:
    rep = validate_paths([str(task_set)])
    assert rep.errors == []
    assert rep.tasks_checked >= 3


def test_cli_exit_codes_and_json(task_set: Path) -> None:
    ok = run_cli("authoring", "validate", str(task_set))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    edit(task_set / "rca/RCA-001/hidden.yaml", "label: shutdown", "label: gremlins")
    bad = run_cli("authoring", "validate", str(task_set), "--json")
    assert bad.returncode == 1
    data = json.loads(bad.stdout)
    f = [x for x in data["findings"] if x["code"] == "label"][0]
    assert f["file"].endswith("rca/RCA-001/hidden.yaml") and f["line"] == 7
    assert "Traceback" not in bad.stderr


def test_broken_yaml_names_file_and_line(task_set: Path) -> None:
    p = task_set / "rca/RCA-001/task.yaml"
    edit(p, "status: approved", "status: [approved")
    out = errors(task_set)
    assert any("rca/RCA-001/task.yaml:" in e and "broken YAML" in e for e in out), out
    res = run_cli("authoring", "validate", str(task_set))
    assert res.returncode == 1 and "Traceback" not in res.stderr + res.stdout


def test_missing_files(task_set: Path) -> None:
    (task_set / "rca/RCA-001/hidden.yaml").unlink()
    (task_set / "path/PATH-001/recordings/PE_01/show_route_172.16.1.10.txt").unlink()
    out = errors(task_set)
    assert any("RCA-001/hidden.yaml" in e and "missing-file" in e for e in out)
    assert any("PATH-001/task.yaml" in e and "recording file" in e and "missing" in e for e in out)


def test_wrong_types_point_at_the_field(task_set: Path) -> None:
    edit(task_set / "rca/RCA-001/hidden.yaml", "chain_length: 2", "chain_length: two")
    rep = validate_paths([str(task_set)])
    [f] = [f for f in rep.errors if f.code == "schema"]
    assert "metadata.chain_length" in f.message and f.line is not None
    assert "chain_length" in (task_set / "rca/RCA-001/hidden.yaml").read_text().splitlines()[f.line - 1]


def test_unknown_field_and_missing_field(task_set: Path) -> None:
    edit(task_set / "rca/RCA-001/task.yaml", "title:", "titel: oops\ntitle:")
    edit(task_set / "path/PATH-001/task.yaml", "network: campus-lab\n", "")
    out = errors(task_set)
    assert any("titel: unknown field" in e for e in out)
    assert any("PATH-001/task.yaml" in e and "network: required field is missing" in e for e in out)


def test_unknown_label_and_alias(task_set: Path) -> None:
    p = task_set / "rca/RCA-001/hidden.yaml"
    edit(p, "label: shutdown", "label: Interface Administratively Down")  # an alias: fine
    assert errors(task_set) == []
    edit(p, "label: Interface Administratively Down", "label: cosmic rays")
    out = errors(task_set)
    assert any("unknown root-cause label 'cosmic rays'" in e for e in out)


def test_duplicate_ids_across_families(task_set: Path) -> None:
    shutil.copytree(task_set / "rca/RCA-001", task_set / "path/RCA-001")
    out = errors(task_set)
    assert sum("duplicate-id" in e for e in out) == 2


def test_empty_folder_and_empty_set(task_set: Path, tmp_path: Path) -> None:
    (task_set / "rca/RCA-EMPTY").mkdir()
    assert any("RCA-EMPTY" in e and "empty" in e for e in errors(task_set))
    empty = tmp_path / "empty"
    empty.mkdir()
    shutil.copy(task_set / "taxonomy.yaml", empty)
    res = run_cli("authoring", "validate", str(empty))
    assert res.returncode == 1 and "no task folders" in res.stdout


def test_golden_action_without_recording(task_set: Path) -> None:
    edit(
        task_set / "rca/RCA-001/hidden.yaml",
        "command: display ip routing-table\n",
        "command: display ip routing-table 172.16.1.10\n",
    )
    out = errors(task_set)
    assert any("golden-recording" in e and "display ip routing-table 172.16.1.10" in e for e in out)


def test_answer_node_object_and_path_links(task_set: Path) -> None:
    edit(
        task_set / "rca/RCA-001/hidden.yaml", "object: GigabitEthernet0/0/24", "object: GigabitEthernet0/0/99"
    )
    edit(
        task_set / "path/PATH-001/hidden.yaml",
        "{node: FW_01, egress: GigabitEthernet1/0/2}",
        "{node: FW_01, egress: GigabitEthernet1/0/1}",
    )
    edit(task_set / "rca/RCA-002/hidden.yaml", "node: GW_01", "node: GW_99")
    out = errors(task_set)
    assert any("CORE_SW_01 has no interface 'GigabitEthernet0/0/99'" in e for e in out), out
    assert any("cabled to CORE_SW_01, not to the next hop GW_01" in e for e in out), out
    assert any("root-cause node 'GW_99' is not in network" in e for e in out), out


def test_metadata_mismatch(task_set: Path) -> None:
    edit(task_set / "rca/RCA-001/hidden.yaml", "golden_length: 3", "golden_length: 5")
    edit(task_set / "rca/RCA-002/hidden.yaml", "categories: [C2, C4]", "categories: [C4]")
    out = errors(task_set)
    assert any("metadata golden_length is 5 but the task gives 3" in e for e in out)
    assert any("metadata categories" in e and "['C2', 'C4']" in e for e in out)


def test_leaks_into_statement(task_set: Path) -> None:
    edit(
        task_set / "rca/RCA-001/task.yaml", "Find the minimal", "Hint: look for a shutdown. Find the minimal"
    )
    out = errors(task_set)
    assert any("leak" in e and "'shutdown'" in e for e in out)


def test_unused_recording_warning_and_canary(task_set: Path) -> None:
    (task_set / "rca/RCA-001/recordings/GW_01/show_version.txt").write_text("Cisco IOS XE Software\n")
    p = task_set / "path/PATH-001/hidden.yaml"
    p.write_text(
        "".join(ln for ln in p.read_text().splitlines(keepends=True) if not ln.startswith("canary:"))
    )
    rep = validate_paths([str(task_set)])
    assert any(f.code == "unused-recording" and f.severity.value == "warning" for f in rep.findings)
    assert any(f.code == "canary" and "PATH-001/hidden.yaml" in f.file for f in rep.errors)


def test_not_canonical_command(task_set: Path) -> None:
    pytest.importorskip("ctbench.dialects")
    edit(task_set / "rca/RCA-001/task.yaml", "command: display interface brief", "command: dis int br")
    edit(task_set / "rca/RCA-001/hidden.yaml", "command: display interface brief", "command: dis int br")
    out = errors(task_set)
    assert any("not-canonical" in e and "'display interface brief'" in e for e in out), out


def test_single_task_and_file_paths(task_set: Path) -> None:
    edit(task_set / "rca/RCA-002/hidden.yaml", "label: static route next hop incorrect", "label: nope")
    one = validate_paths([str(task_set / "rca/RCA-001")])
    assert one.tasks_checked == 1 and not one.errors
    f = validate_paths([str(task_set / "rca/RCA-002/hidden.yaml")])
    assert f.tasks_checked == 1 and f.errors


def test_broken_taxonomy_and_network(task_set: Path) -> None:
    edit(
        task_set / "networks/campus-lab.yaml",
        "  - [PE_01:ge-0/0/2, SRV_01:eth0]",
        "  - [PE_01:ge-0/0/2, SRV_99:eth0]",
    )
    edit(task_set / "taxonomy.yaml", "category: C1", "category: C9")
    out = errors(task_set)
    assert any("networks/campus-lab.yaml" in e and "SRV_99" in e for e in out)
    assert any("taxonomy.yaml" in e and "C9" in e for e in out)


def test_precommit_hook_definition() -> None:
    from ruamel.yaml import YAML

    hooks = YAML(typ="safe").load((Path(__file__).parents[1] / ".pre-commit-hooks.yaml").read_text())
    [hook] = [h for h in hooks if h["id"] == "ctbench-validate"]
    assert hook["entry"].startswith("ctb-author validate")
