"""Export/import bundles: lossless, public-only drops the hidden part, conflicts refused."""

from __future__ import annotations

import json
from pathlib import Path

from ctbench.store import TaskSet
from tests.conftest import run_cli


def test_export_import_export_is_byte_identical(task_set: Path, tmp_path: Path) -> None:
    ref = TaskSet.open(task_set).ref("RCA-001")
    rec = ref.path / "recordings/CORE_SW_01/display_interface_brief.txt"
    rec.write_bytes(rec.read_bytes().replace(b"\n", b"\r\n") + b"\xff\xfe\ttrailing  \n")
    out1 = tmp_path / "b1"
    r = run_cli("authoring", "export", "--tasks", str(task_set), "--out", str(out1))
    assert r.returncode == 0, r.stderr
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for name in ("ctbench.yaml", "taxonomy.yaml"):
        (fresh / name).write_bytes((task_set / name).read_bytes())
    r = run_cli("authoring", "import", "--tasks", str(fresh), *map(str, sorted(out1.glob("*.json"))))
    assert r.returncode == 0, r.stderr
    out2 = tmp_path / "b2"
    r = run_cli("authoring", "export", "--tasks", str(fresh), "--out", str(out2))
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in out1.glob("*.json"))
    assert names == sorted(p.name for p in out2.glob("*.json")) and names
    for n in names:
        assert (out1 / n).read_bytes() == (out2 / n).read_bytes()
    imported = fresh / "rca/RCA-001/recordings/CORE_SW_01/display_interface_brief.txt"
    assert imported.read_bytes() == rec.read_bytes()
    assert run_cli("authoring", "validate", str(fresh)).returncode == 0


def test_jsonl_and_public_only(task_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "public.jsonl"
    r = run_cli("authoring", "export", "--tasks", str(task_set), "--public-only", "--jsonl", str(out))
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == len(TaskSet.open(task_set).refs())
    for line in lines:
        b = json.loads(line)
        assert "hidden" not in b and "hidden.yaml" not in b["files"]
        assert "shutdown" not in json.dumps(b["task"])
    gold = "static route next hop incorrect"
    assert gold not in out.read_text()


def test_import_refuses_to_overwrite_changed_files(task_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "b"
    assert (
        run_cli("authoring", "export", "RCA-001", "--tasks", str(task_set), "--out", str(out)).returncode == 0
    )
    (task_set / "rca/RCA-001/task.yaml").write_text(
        (task_set / "rca/RCA-001/task.yaml").read_text() + "# edit\n"
    )
    r = run_cli("authoring", "import", "--tasks", str(task_set), str(out / "RCA-001.json"))
    assert r.returncode == 1 and "--replace" in r.stderr
    r = run_cli("authoring", "import", "--tasks", str(task_set), "--replace", str(out / "RCA-001.json"))
    assert r.returncode == 0
    assert not (task_set / "rca/RCA-001/task.yaml").read_text().endswith("# edit\n")


def test_import_rejects_bad_bundles(task_set: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = run_cli("authoring", "import", "--tasks", str(task_set), str(bad))
    assert r.returncode == 1 and "invalid JSON" in r.stderr and "Traceback" not in r.stderr
    evil = tmp_path / "evil.json"
    evil.write_text(
        json.dumps(
            {
                "format": "ctbench-task-bundle",
                "version": 1,
                "id": "X",
                "family": "rca",
                "files": {"task.yaml": {"text": "x"}, "../../../escape.txt": {"text": "x"}},
            }
        )
    )
    r = run_cli("authoring", "import", "--tasks", str(task_set), str(evil))
    assert r.returncode == 1 and "unsafe path" in r.stderr
    assert not (tmp_path / "escape.txt").exists()
