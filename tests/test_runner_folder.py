"""The run folder on disk: durable appends, torn lines, the writer lock, run.yaml and its comparison."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ctbench.errors import CtbError
from ctbench.evaluate.runfolder import (
    HostInfo,
    ResultLine,
    RunConfig,
    RunFolder,
    TaskSetRef,
    default_run_name,
    task_set_commit,
)
from ctbench.evaluate.settings import RunSettings
from tests.conftest import REPO


def _line(task_id: str, status: str = "answered") -> ResultLine:
    return ResultLine(task_id=task_id, family="rca", status=status, answer_text="x;y;z", latency_s=1.5)


def _config(**changes: object) -> RunConfig:
    base = RunConfig(
        name="r",
        harness="ctbench-openai",
        harness_version="0.1.0",
        settings=RunSettings(agent="openai", model="m1", timeout_s=60, retries=2),
        task_set=TaskSetRef(path="/t", commit="abc", dirty=False),
        tasks=["A", "B"],
        started=datetime(2026, 7, 25, tzinfo=UTC),
        host=HostInfo.current(),
    )
    return base.model_copy(update=changes)


def test_append_writes_whole_lines_and_reads_them_back(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run")
    folder.lock()
    for tid in ("A", "B", "C"):
        folder.append_result(_line(tid))
    folder.close()
    raw = (tmp_path / "run" / "results.jsonl").read_bytes()
    assert raw.count(b"\n") == 3 and raw.endswith(b"\n")
    scan = RunFolder(tmp_path / "run").read_results()
    assert [r.task_id for r in scan.lines] == ["A", "B", "C"] and scan.torn_bytes == 0
    assert json.loads(raw.splitlines()[0])["status"] == "answered"


def test_a_torn_last_line_is_dropped_and_cut_off(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    folder.lock()
    folder.append_result(_line("A"))
    folder.append_result(_line("B"))
    good_size = folder.results_file.stat().st_size
    with folder.results_file.open("ab") as fh:
        fh.write(_line("C").model_dump_json().encode()[:37])  # killed mid-write: no newline
    scan = folder.read_results()
    assert scan.finished_ids == {"A", "B"} and scan.torn_bytes == 37
    assert folder.repair(scan)
    assert folder.results_file.stat().st_size == good_size
    folder.append_result(_line("C"))
    assert [r.task_id for r in folder.read_results().lines] == ["A", "B", "C"]
    folder.close()


def test_a_broken_complete_line_is_an_error_with_file_and_line(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    folder.results_file.write_text(_line("A").model_dump_json() + "\n{not json}\n", encoding="utf-8")
    with pytest.raises(CtbError, match=r"results.jsonl:2: not a JSON object"):
        folder.read_results()
    folder.results_file.write_text('{"task_id": "A", "family": "rca", "status": "maybe"}\n', encoding="utf-8")
    with pytest.raises(CtbError, match=r"results.jsonl:1: status"):
        folder.read_results()


def test_lines_written_by_other_tools_keep_their_extra_fields(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    folder.results_file.write_text(
        '{"task_id": "A", "family": "path", "status": "timeout", "harness_note": 7}\n', encoding="utf-8"
    )
    (line,) = folder.read_results().lines
    assert line.status == "timeout" and line.model_extra == {"harness_note": 7}


def test_only_one_writer_per_folder_even_across_processes(tmp_path: Path) -> None:
    first = RunFolder(tmp_path / "run")
    first.lock()
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from ctbench.evaluate.runfolder import RunFolder; RunFolder(sys.argv[2]).lock()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(REPO), str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "another ctb-eval run is writing to this folder" in proc.stderr
    first.close()
    proc = subprocess.run(
        [sys.executable, "-c", code, str(REPO), str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


def test_run_yaml_round_trip_and_differences(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    config = _config()
    folder.save_config(config)
    assert folder.load_config() == config
    # concurrency and where attempts ran do not change results
    assert config.differences(_config(settings=config.settings.updated(concurrency=32, executor="ray"))) == []
    diffs = config.differences(
        _config(
            settings=config.settings.updated(model="m2", timeout_s=30),
            task_set=TaskSetRef(path="/elsewhere", commit="def", dirty=True),
        )
    )
    assert "model: 'm1' -> 'm2'" in diffs
    assert "option timeout_s: 60.0 -> 30.0" in diffs
    assert any(d.startswith("task-set commit") for d in diffs)
    assert any(d.startswith("task set uncommitted changes") for d in diffs)
    (tmp_path / "run.yaml").write_text("agent: oracle\n", encoding="utf-8")
    with pytest.raises(CtbError, match=r"run.yaml: name: Field required"):
        folder.load_config()
    (tmp_path / "run.yaml").write_text("agent: [unclosed\n", encoding="utf-8")
    with pytest.raises(CtbError, match=r"run.yaml:\d+: broken YAML"):
        folder.load_config()


def test_default_run_name_and_commit_outside_git(tmp_path: Path) -> None:
    when = datetime(2026, 7, 25, 10, 15, 0, tzinfo=UTC)
    assert default_run_name("openai", "org/gpt 4o", when) == "openai-org_gpt_4o-20260725T101500Z"
    assert default_run_name("oracle", None, when) == "oracle-20260725T101500Z"
    ref = task_set_commit(tmp_path)
    assert (ref.commit, ref.dirty) == ("none", False)
