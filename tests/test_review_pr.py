"""The pull-request description (issue #17 item 6): what a reviewer on a hosting site approves from."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from ctbench.authoring.cli import main as author_main
from ctbench.yamlio import load_document, save_document
from tests.review_support import RCA_ANSWER, RCA_COMMANDS, World, make_world, ok


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = make_world(tmp_path / "w")
    (w.root / "a.txt").write_text(RCA_ANSWER)
    (w.root / "c.txt").write_text(RCA_COMMANDS)
    return w


@pytest.fixture(autouse=True)
def _alice_edits(monkeypatch: pytest.MonkeyPatch) -> None:
    """ctb-author edits are alice's: her git identity (ctb-review steps name theirs with --as)."""
    monkeypatch.setenv("GIT_AUTHOR_NAME", "alice")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "alice@example.net")


def test_pr_description_has_title_summary_validation_threads_and_agreement(world: World) -> None:
    t = world.tasks
    ok("submit", "RCA-101", "--as", "alice", tasks=t)
    ok(
        "blind",
        "RCA-101",
        "--as",
        "bob",
        "--answer",
        str(world.root / "a.txt"),
        "--commands",
        str(world.root / "c.txt"),
        tasks=t,
    )
    ok(
        "reveal",
        "RCA-101",
        "--as",
        "bob",
        "--agree",
        "solvability",
        "completeness",
        "golden",
        "--disagree",
        "metadata",
        "the chain is 3 long",
        tasks=t,
    )
    # the author revises: metadata, and a recording re-captured (a size change)
    hidden = world.task_dir("rca", "RCA-101") / "hidden.yaml"
    doc = load_document(hidden)
    doc["metadata"]["chain_length"] = 3
    save_document(hidden, doc)
    rec_file = world.task_dir("rca", "RCA-101") / "recordings" / "CORE_SW_01" / "display_interface_brief.txt"
    capture = world.root / "capture.txt"
    capture.write_bytes(rec_file.read_bytes() + b"\r\n")
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = author_main(
            [
                "add-recording",
                "RCA-101",
                "--tasks",
                str(t),
                "--device",
                "CORE_SW_01",
                "--command",
                "display interface brief",
                "--file",
                str(capture),
                "--replace",
                "--no-commit",
                "--author",
                "alice",
            ]
        )
    assert code == 0, err.getvalue()
    ok(
        "respond",
        "RCA-101",
        "--as",
        "alice",
        "--concede",
        "metadata",
        "chain_length is 3 now",
        "--why",
        "chain_length 2 -> 3, fresh capture",
        tasks=t,
    )
    ok("reveal", "RCA-101", "--as", "bob", "--agree", "metadata", "solvability", "golden", tasks=t)
    out_file = world.root / "pr.md"
    ok("pr", "RCA-101", "--out", str(out_file), "--no-push", tasks=t)
    text = out_file.read_text()
    size = len(capture.read_bytes())
    for needle in (
        "# review(RCA-101): HQ user cannot reach the data-centre server — approved after 2 round(s)",
        "### The task",
        "> Users in the HQ office VLAN 10 report",
        "**Rationale:** CORE_SW_01 shows GE0/0/24 administratively down",
        "1. `CORE_SW_01: display current-configuration interface GigabitEthernet0/0/24` — The interface "
        "carries an explicit shutdown.",
        f"- changed `CORE_SW_01: display interface brief` ({size - 2:,} bytes → {size:,} bytes)",
        "### Validation",
        "`ctb-author validate` on `review/RCA-101`: ✅ passes (0 error(s)",
        "### Review thread, round by round",
        "**Round 1** — reviewer bob, outcome needs_revision",
        "bob (reviewer, disagree",
        "the chain is 3 long",
        "alice (author, concede",
        "chain_length is 3 now",
        "- revision by alice (",
        "changed recordings, metadata",
        "**Round 2**",
        "| `protocol_mechanisms` | interface state, static routing | 2 | ✅ yes |",
        "| `observability` | O1 | — | — (nothing to compare) |",
    ):
        assert needle in text, f"{needle!r} not in the PR description:\n{text}"
