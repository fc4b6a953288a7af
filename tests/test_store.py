"""Task store: byte-exact recordings, round-trip YAML, atomic writes, lazy loading."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctbench.model import Family, HiddenSpec, Recording, TaskSpec
from ctbench.store import RecordingAccessError, TaskSet, safe_recording_path
from ctbench.yamlio import atomic_write_bytes


def test_bundled_tasks_load(task_set: Path) -> None:
    ts = TaskSet.open(task_set)
    ids = [r.id for r in ts.refs()]
    assert {"RCA-001", "RCA-002", "PATH-001"} <= set(ids)
    task = ts.load_task("RCA-001")
    assert task.family is Family.RCA
    hidden = ts.load_hidden("RCA-001")
    assert hidden.rca_entries()


def test_recordings_byte_exact(task_set: Path) -> None:
    ts = TaskSet.open(task_set)
    ref = ts.ref("RCA-001")
    payload = b"Interface  PHY\r\nGE0/0/1\tup   \r\n\xff\xfe raw bytes \x1b[0m trailing   \n\n"
    rel = ts.write_recording(ref.path, "CORE_SW_01", "display weird thing", payload)
    assert (ref.path / rel).read_bytes() == payload
    assert (
        ts.read_recording(ref, Recording(device="CORE_SW_01", command="display weird thing", file=rel))
        == payload
    )


def test_unchanged_save_changes_no_byte_and_comments_survive(task_set: Path) -> None:
    ts = TaskSet.open(task_set)
    ref = ts.ref("RCA-002")
    original = ref.hidden_file.read_bytes()
    hidden = ts.load_hidden(ref)
    ts.save_hidden(Family.RCA, hidden)
    assert ref.hidden_file.read_bytes() == original

    text = ref.task_file.read_text().replace("title:", "# a comment added by hand\ntitle:", 1)
    ref.task_file.write_text(text)
    task = ts.load_task(ref)
    ts.save_task(task)
    assert "# a comment added by hand" in ref.task_file.read_text()
    assert ref.task_file.read_text() == text

    task.title = "A new title"
    ts.save_task(task)
    after = ref.task_file.read_text().splitlines()
    before = text.splitlines()
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(changed) == 1 and "A new title" in after[changed[0]]


def test_new_task_files_reference_schema(task_set: Path) -> None:
    ts = TaskSet.open(task_set)
    spec = TaskSpec(id="RCA-NEW", family=Family.RCA, statement="x", network="campus-lab")
    folder = ts.save_task(spec)
    first = (folder / "task.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../../schema/task.schema.json"
    ts.save_hidden(
        Family.RCA,
        HiddenSpec(
            id="RCA-NEW",
            answer={"rca": [{"node": "GW_01", "object": "GigabitEthernet1", "label": "shutdown"}]},
        ),
    )
    assert ts.load_hidden("RCA-NEW").rca_entries()


def test_loading_a_task_reads_no_recording(task_set: Path) -> None:
    ts = TaskSet.open(task_set)
    ref = ts.ref("PATH-001")
    for p in (ref.path / "recordings").rglob("*.txt"):
        p.chmod(0)
    try:
        task = ts.load_task(ref)  # would fail if it read any recording
        assert len(task.recordings) == 7
    finally:
        for p in (ref.path / "recordings").rglob("*.txt"):
            p.chmod(0o644)


@pytest.mark.parametrize(
    "rel",
    [
        "../hidden.yaml",
        "/etc/passwd",
        "recordings/../hidden.yaml",
        "hidden.yaml",
        "recordings/../../../etc/passwd",
        "C:/x",
        "recordings\\..\\hidden.yaml",
        "",
    ],
)
def test_recording_paths_cannot_escape(task_set: Path, rel: str) -> None:
    ref = TaskSet.open(task_set).ref("RCA-001")
    with pytest.raises(RecordingAccessError):
        safe_recording_path(ref.path, rel)


def test_recording_symlink_refused(task_set: Path) -> None:
    ref = TaskSet.open(task_set).ref("RCA-001")
    link = ref.path / "recordings" / "CORE_SW_01" / "sneaky.txt"
    os.symlink(ref.hidden_file, link)
    with pytest.raises(RecordingAccessError):
        safe_recording_path(ref.path, "recordings/CORE_SW_01/sneaky.txt")


def test_atomic_write_leaves_no_temp_and_skips_identical(tmp_path: Path) -> None:
    p = tmp_path / "f.txt"
    assert atomic_write_bytes(p, b"one") is True
    mtime = p.stat().st_mtime_ns
    assert atomic_write_bytes(p, b"one") is False
    assert p.stat().st_mtime_ns == mtime
    assert atomic_write_bytes(p, b"two") is True
    assert p.read_bytes() == b"two"
    assert [x.name for x in tmp_path.iterdir()] == ["f.txt"]


def test_vendors_is_built_once_per_task_set(task_set: Path) -> None:
    """Validation, editing, the oracle and the review share one Vendors, with the set's extensions."""
    ts = TaskSet.open(task_set)
    assert ts.vendors is ts.vendors
    assert ts.vendors.extra == ts.dialect_extensions()


def test_network_file_is_the_one_lookup_rule(task_set: Path) -> None:
    ts = TaskSet.open(task_set)
    name = ts.network_names()[0]
    assert ts.network_file(name) == ts.network_path(name)
    assert ts.network_file("../etc") is None and ts.network_file("no-such-net") is None


def test_set_relative_starts_at_the_set_folder(task_set: Path) -> None:
    from ctbench.store import set_relative

    ts = TaskSet.open(task_set)
    ref = ts.refs()[0]
    assert set_relative(ts.root, ref.task_file) == f"{ts.root.name}/{ref.family.value}/{ref.id}/task.yaml"
    outside = Path("/elsewhere/file.txt")
    assert set_relative(ts.root, outside) == str(outside)


def test_read_input_says_what_is_wrong_in_one_wording(tmp_path: Path) -> None:
    from ctbench.errors import CtbError
    from ctbench.yamlio import read_input

    class Custom(CtbError):
        pass

    (tmp_path / "f.txt").write_bytes(b"x\n")
    assert read_input(tmp_path / "f.txt", "a log") == b"x\n"
    with pytest.raises(CtbError, match=r"no such file \(a session log\)"):
        read_input(tmp_path / "missing.txt", "a session log")
    with pytest.raises(Custom, match="is a folder, expected a session log"):
        read_input(tmp_path, "a session log", error=Custom)
    with pytest.raises(CtbError, match="no such file"):
        read_input("-", "a log")  # "-" is standard input only where a command says so
