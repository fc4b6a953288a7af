"""Harness installs and lookup (:mod:`ctbench.evaluate.harnesses`), and the version warning of compare.

No agent CLI is started here: installs are exercised with a fake ``npm`` on PATH (a real program that
writes what ``npm install`` would), so these tests run where Node is missing too.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ctbench.errors import CtbError
from ctbench.evaluate.compare import harness_version_warnings
from ctbench.evaluate.harnesses import (
    MARKER,
    cache_root,
    find,
    install,
    install_dir,
    installed_versions,
    specs,
)
from ctbench.evaluate.score import RunInfo
from tests.conftest import run_cli

FAKE_NPM = """#!/bin/sh
# ctbench test double: "npm install --prefix DIR ... PKG@VER" -> DIR/node_modules/.bin/<exe>
prefix=""; while [ $# -gt 0 ]; do case "$1" in --prefix) prefix="$2"; shift;; esac; last="$1"; shift; done
[ -n "$FAIL_NPM" ] && { echo "npm ERR! 404 $last" >&2; exit 1; }
mkdir -p "$prefix/node_modules/.bin"
for exe in codex claude; do printf '#!/bin/sh\\necho "%s"\\n' "$last" > "$prefix/node_modules/.bin/$exe"; chmod +x "$prefix/node_modules/.bin/$exe"; done
"""


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM, encoding="utf-8")
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CTBENCH_HARNESS_DIR", str(tmp_path / "cache"))
    return npm


def test_pins_live_in_one_data_file() -> None:
    pins = specs()
    assert set(pins) == {"codex", "claude-code", "hermes"}
    assert pins["codex"].requirement() == "@openai/codex@0.169.0"
    assert pins["claude-code"].requirement() == "@anthropic-ai/claude-code@2.1.328"
    assert pins["hermes"].requirement() == "hermes-agent[mcp]==0.19.0"


def test_cache_root_follows_the_environment(tmp_path: Path) -> None:
    assert cache_root({"CTBENCH_HARNESS_DIR": str(tmp_path)}) == tmp_path
    assert cache_root({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "ctbench" / "harnesses"


def test_install_then_find_and_an_interrupted_install_is_not_found(
    fake_npm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{fake_npm.parent}{os.pathsep}/usr/bin:/bin")  # no real codex on PATH
    found, seconds = install("codex")
    assert found.source == "cache" and found.version == "0.169.0" and seconds > 0
    assert found.executable == install_dir("codex", "0.169.0") / "node_modules" / ".bin" / "codex"
    marker = json.loads((found.folder / MARKER).read_text())  # type: ignore[operator]
    assert marker["requirement"] == "@openai/codex@0.169.0"
    assert install("codex")[1] == 0.0  # already there: nothing runs
    assert installed_versions("codex") == ["0.169.0"]
    (found.folder / MARKER).unlink()  # type: ignore[operator]  # as if the install had been killed
    assert find("codex") is None
    again, _ = install("codex")
    assert again.source == "cache"


def test_a_failed_install_says_why_and_leaves_nothing_usable(
    fake_npm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{fake_npm.parent}{os.pathsep}/usr/bin:/bin")
    monkeypatch.setenv("FAIL_NPM", "1")
    with pytest.raises(CtbError, match=r"installing @openai/codex@9\.9\.9 failed \(exit 1\): npm ERR! 404"):
        install("codex", "9.9.9")
    assert find("codex", "9.9.9") is None


def test_a_cli_on_path_is_found_with_the_version_it_reports(
    fake_npm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "path-bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text("#!/bin/sh\necho '2.1.400 (Claude Code)'\n", encoding="utf-8")
    claude.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    found = find("claude-code")
    assert found is not None and (found.source, found.version) == ("path", "2.1.400")
    assert find("claude-code", "2.1.328") is None


def test_harness_install_command_line(fake_npm: Path, tmp_path: Path) -> None:
    env = {"CTBENCH_HARNESS_DIR": str(tmp_path / "cache"), "PATH": os.environ["PATH"]}
    proc = run_cli("evaluate", "harness", "install", "claude-code", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["version"] == "2.1.328" and data["requirement"] == "@anthropic-ai/claude-code@2.1.328"
    listed = json.loads(run_cli("evaluate", "harness", "list", "--json", env=env).stdout)
    row = next(r for r in listed["harnesses"] if r["name"] == "claude-code")
    assert row["installed"] and row["source"] == "cache"
    bad = run_cli("evaluate", "harness", "install", "goose", env=env)
    assert bad.returncode == 2 and "unknown harness 'goose'" in bad.stderr and "Traceback" not in bad.stderr


def test_compare_warns_when_one_harness_ran_at_two_versions() -> None:
    runs = [
        RunInfo(name="a", agent="codex", harness_version="0.169.0"),
        RunInfo(name="b", agent="codex", harness_version="0.170.0"),
        RunInfo(name="c", agent="claude-code", harness_version="2.1.328"),
    ]
    (warning,) = harness_version_warnings(runs)
    assert "codex" in warning and "0.169.0, 0.170.0" in warning
    assert harness_version_warnings(runs[:1] + runs[2:]) == []
