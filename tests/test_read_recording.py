"""The replay reads recordings through :func:`ctbench.store.read_recording`: a task folder an author (or
an adversary) filled with links, a FIFO or traversing index entries yields no byte outside
``recordings/`` and never blocks, with the same refusals as :func:`safe_recording_path`.

Each attack is played against both; the ``protection-off`` case reads the same entry the naive way
(``(folder / rel).read_bytes()``, in a thread so a FIFO cannot hang the test) to show that the attack
is real: it would leak the gold or block.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from ctbench.store import RecordingAccessError, read_recording, safe_recording_path

GOLD = b"root_causes: [CORE_SW_01;GE0/0/24;shutdown]\n"


@pytest.fixture
def task(tmp_path: Path) -> Path:
    folder = tmp_path / "RCA-001"
    (folder / "recordings" / "CORE_SW_01").mkdir(parents=True)
    (folder / "recordings" / "CORE_SW_01" / "ok.txt").write_bytes(b"<CORE_SW_01>display version\n")
    (folder / "hidden.yaml").write_bytes(GOLD)
    (folder / "recordings" / "CORE_SW_01" / "leak.txt").symlink_to(folder / "hidden.yaml")
    (folder / "recordings" / "linked").symlink_to(folder, target_is_directory=True)
    (folder / "recordings" / "dangling.txt").symlink_to(folder / "nowhere")
    os.mkfifo(folder / "recordings" / "fifo.txt")
    (folder / "recordings" / "sub").mkdir()
    return folder


ATTACKS = {
    "recordings/CORE_SW_01/leak.txt": "goes through a symbolic link",
    "recordings/linked/hidden.yaml": "goes through a symbolic link",
    "recordings/dangling.txt": "goes through a symbolic link",
    "recordings/fifo.txt": "is not a regular file",
    "recordings/sub": "is not a regular file",
    "recordings/../hidden.yaml": "leaves the task folder",
    "/etc/passwd": "is absolute",
    "hidden.yaml": "is not under recordings/",
    "recordings/CORE_SW_01/missing.txt": "is missing",
}


def test_a_plain_recording_reads_as_it_is(task: Path) -> None:
    rel = "recordings/CORE_SW_01/ok.txt"
    assert read_recording(task, rel) == safe_recording_path(task, rel).read_bytes()


@pytest.mark.parametrize("rel", sorted(ATTACKS))
def test_every_attack_is_refused_as_safe_recording_path_refuses_it(task: Path, rel: str) -> None:
    with pytest.raises(RecordingAccessError) as fast:
        read_recording(task, rel)
    with pytest.raises(RecordingAccessError) as slow:
        safe_recording_path(task, rel)
    assert ATTACKS[rel] in str(fast.value)
    # the same words (the "sub" folder: resolve() finds a folder, the walk opens it as a file)
    assert str(fast.value) == str(slow.value) or rel == "recordings/sub"


@pytest.mark.parametrize(
    "rel", ["recordings/CORE_SW_01/leak.txt", "recordings/linked/hidden.yaml", "recordings/fifo.txt"]
)
def test_protection_off_the_attack_is_real(task: Path, rel: str) -> None:
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append((task / rel).read_bytes()), daemon=True)
    reader.start()
    reader.join(timeout=2)
    if rel.endswith("fifo.txt"):
        assert reader.is_alive()  # a naive read blocks on the FIFO
        with open(task / rel, "wb"):  # let it go
            pass
        reader.join(timeout=5)
    else:
        assert got == [GOLD]  # a naive read follows the link to the gold
