"""What a run folder records about itself, and how it is readable: run.yaml names the ctbench that
made it and sums what the run spent; files follow the umask like any other; text output honours
$COLUMNS and is never folded into a file or a pipe."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from ctbench.yamlio import load_fast
from tests.conftest import REPO


def _ctb_eval(
    *args: str, env: dict[str, str] | None = None, umask: int | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    if env is not None and "COLUMNS" not in env:
        full.pop("COLUMNS", None)
    return subprocess.run(
        [sys.executable, "-m", "ctbench.evaluate.cli", *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=120,
        preexec_fn=(lambda: os.umask(umask)) if umask is not None else None,  # noqa: PLW1509 - the test's own child
    )


def _oracle(task_set: Path, out: Path, umask: int | None = None) -> None:
    proc = _ctb_eval(
        "run", "--agent", "oracle", "--allow-unreviewed", "--tasks", str(task_set), "--out", str(out),
        "--progress", "none", umask=umask,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_run_yaml_names_the_ctbench_that_made_it_and_sums_the_run(task_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _oracle(task_set, out)
    config = load_fast(out / "run.yaml")
    assert config["ctbench"]["version"] == version("ctbench")
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:  # a checkout (CI's clone, a developer's tree): the commit it runs from
        assert config["ctbench"]["commit"] == head.stdout.strip()
    totals = config["totals"]
    assert totals["attempts"] == {"answered": 3} and totals["wall_s"] > 0
    assert totals["input_tokens"] == 0 and totals["agent_time_s"] is not None
    # A resume adds its own time to the run's and keeps what the run recorded.
    first = totals["wall_s"]
    proc = _ctb_eval("run", "--resume", str(out), "--progress", "none")
    assert proc.returncode == 0, proc.stderr
    again = load_fast(out / "run.yaml")
    assert again["totals"]["wall_s"] >= first and again["ctbench"] == config["ctbench"]


def test_run_files_are_readable_as_the_umask_says(task_set: Path, tmp_path: Path) -> None:
    for umask, mode in ((0o022, 0o644), (0o027, 0o640)):
        out = tmp_path / f"run-{umask:o}"
        _oracle(task_set, out, umask=umask)
        for name in ("run.yaml", "results.jsonl", "scores.json"):
            assert stat.S_IMODE((out / name).stat().st_mode) == mode, (name, oct(umask))


def test_text_tables_honour_columns_and_are_never_folded_into_a_pipe(task_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _oracle(task_set, out)
    piped = _ctb_eval("report", str(out), "--tasks", str(task_set), "--resamples", "100", env={})
    assert piped.returncode == 0, piped.stderr
    header = next(line for line in piped.stdout.splitlines() if "RCA Acc" in line)
    assert "Path Evid." in header and len(header) > 120  # one table row, one line, however wide
    narrow = _ctb_eval(
        "report", str(out), "--tasks", str(task_set), "--resamples", "100", env={"COLUMNS": "100"}
    )
    assert narrow.returncode == 0, narrow.stderr
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 100
    # --out: a file gets the full width whatever $COLUMNS says of the terminal
    written = tmp_path / "report.txt"
    proc = _ctb_eval(
        "report", str(out), "--tasks", str(task_set), "--resamples", "100", "--out", str(written),
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert any("RCA Acc" in line and "Path Evid." in line for line in written.read_text().splitlines())
