"""Shared fixtures: real task sets on disk, copied from the bundled tasks so tests can break them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "tasks"
VENDOR_CLI = REPO.parent / "shared" / "data" / "vendor-cli"


@pytest.fixture
def task_set(tmp_path: Path) -> Path:
    """A private copy of the bundled task set."""
    dst = tmp_path / "tasks"
    shutil.copytree(BUNDLED, dst)
    return dst


def run_cli(component: str, *args: str, cwd: Path | None = None, input: str | None = None,
            env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a console script as a real subprocess (``python -m ctbench.<component>.cli``)."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    full_env.pop("CTBENCH_DEBUG", None)
    return subprocess.run([sys.executable, "-m", f"ctbench.{component}.cli", *args], cwd=cwd, input=input,
                          capture_output=True, text=True, env=full_env, timeout=timeout)
