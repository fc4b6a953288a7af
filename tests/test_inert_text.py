"""Inert text for people (issue 25, item 6): an agent's escape sequences never reach the terminal.

The agent crashes with a last log line holding a window-title sequence (OSC 0), a clipboard write
(OSC 52), a screen clear (CSI), a C1 CSI and a right-to-left override; the runner quotes that line in
the task's error, which the progress display prints. Through the real ``ctb-eval run`` (a
subprocess, both displays) none of those characters is written, and the error says what was sent
(``\\x1b]52;...``). With :func:`ctbench.safetext.visible` taken out (in-process, the same CLI), the
sequences are written as they came: the assertions can fail.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.evaluate import progress
from ctbench.evaluate.agents import command, harness_base
from ctbench.evaluate.cli import main
from ctbench.safetext import visible
from tests.conftest import REPO

HOSTILE = "\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J\u009b31m\u202eboom"
AGENT = f"""\
import sys
sys.stdin.read()
sys.stderr.write({HOSTILE!r} + "\\n")
sys.exit(3)
"""
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _agent(tmp_path: Path) -> str:
    script = tmp_path / "hostile.py"
    script.write_text(AGENT)
    return shlex.join([sys.executable, str(script)])


def _args(task_set: Path, tmp_path: Path, cmd: str, display: str, out: str) -> list[str]:
    return [
        "run",
        "--allow-unreviewed",
        "--agent",
        "command",
        "--agent-cmd",
        cmd,
        "--tasks",
        str(task_set),
    ] + [
        "--select",
        "RCA-001",
        "--out",
        str(tmp_path / out),
        "--progress",
        display,
        "--sandbox",
        "none",
        "--no-score",
    ]


@pytest.mark.parametrize("display", ["plain", "rich"])
def test_the_agents_escape_sequences_are_shown_not_sent(task_set: Path, tmp_path: Path, display: str) -> None:
    cmd = _agent(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "ctbench.evaluate.cli", *_args(task_set, tmp_path, cmd, display, display)],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "400"},
        timeout=120,
    )
    err = proc.stderr.decode("utf-8")
    assert "error (agent)" in err, err
    assert CONTROL.search(err) is None, repr(CONTROL.search(err))
    assert "\\x1b]52;c;ZXZpbA==\\x07" in err and "\\u202eboom" in err and "\\x9b31m" in err
    # the task log keeps the bytes as the agent wrote them (a file, not a terminal)
    log = (tmp_path / display / "logs" / "RCA-001.log").read_text(encoding="utf-8")
    assert HOSTILE in log


def test_protection_off_the_sequences_reach_the_terminal(
    task_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def same(text: str, *, keep_newlines: bool = False) -> str:
        return text

    for module in (progress, command, harness_base):
        monkeypatch.setattr(module, "visible", same)
    assert main(_args(task_set, tmp_path, _agent(tmp_path), "plain", "off")) == 0
    err = capsys.readouterr().err
    assert "\x1b]52;c;ZXZpbA==\x07" in err and "\u202eboom" in err


def test_visible_writes_out_every_control_but_keeps_text() -> None:
    assert visible("plain text, é, 中文") == "plain text, é, 中文"
    assert visible("a\x1b[31mb\x07\n") == "a\\x1b[31mb\\x07\\x0a"
    assert visible("two\nlines\tok\x1b", keep_newlines=True) == "two\nlines\tok\\x1b"
    assert visible("\u009b\u202e\u2066") == "\\x9b\\u202e\\u2066"
