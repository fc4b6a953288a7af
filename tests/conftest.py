"""Shared fixtures: real task sets on disk, copied from the bundled tasks so tests can break them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ctbench.evaluate.sandbox import find_bwrap

if TYPE_CHECKING:
    from tests.support.harness_runs import HarnessRuns

REPO = Path(__file__).resolve().parents[1]

# pytest-xdist's workers run with COLUMNS=80 and LINES=24 in their environment. ctbench's text output
# honours COLUMNS (a user's pipe or file has none and gets tables whole), so every command a test runs,
# through run_cli or its own subprocess call, would fold its tables at 80 columns under -n and not
# without it. The tests' processes are a pipe's: no terminal size.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)
# Ray reads this once, when it is first imported, and any test module may import it first (through
# ctbench's Ray executor). Unset, Ray turns a cluster address of 127.0.0.1 into this machine's own
# address (192.0.2.2 here), where the test clusters, which listen on loopback only, do not answer.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
BUNDLED = REPO / "tasks"
VENDOR_CLI = Path(os.environ.get("CTBENCH_VENDOR_CLI") or REPO / "tests" / "fixtures" / "vendor-cli")
"""Real device outputs (356 public parser-test captures, Apache-2.0), kept in the repository so a clone
alone runs the suite; ``README.md`` and ``MANIFEST.tsv`` there say where each came from. Set
``CTBENCH_VENDOR_CLI`` to run the tests against another copy (a newer capture set, say)."""


STARTERS = ("rca/RCA-001", "rca/RCA-002", "path/PATH-001")

# The default sandbox is bubblewrap: a test that runs an agent process with the default settings
# needs it, and on a machine without it (README: "the tests that need them skip") says so instead
# of failing on ctb-eval's "bubblewrap (bwrap) is not installed". `.ci/run` installs it.
needs_bwrap = pytest.mark.skipif(
    find_bwrap() is None,
    reason="bubblewrap (bwrap) is not installed: the default sandbox needs it (apt-get install -y bubblewrap)",
)


def copy_starters(dst: Path) -> Path:
    """The bundled set's configuration, taxonomy, networks and its three starter tasks.

    Small and stable on purpose: tests that count or score tasks must not change when the sample set
    grows. Tests about the whole sample set read ``tasks/`` itself.
    """
    dst.mkdir(parents=True, exist_ok=True)
    for name in ("ctbench.yaml", "taxonomy.yaml"):
        shutil.copy(BUNDLED / name, dst / name)
    for folder in ("networks", "schema"):
        shutil.copytree(BUNDLED / folder, dst / folder)
    for rel in STARTERS:
        shutil.copytree(BUNDLED / rel, dst / rel)
    return dst


@pytest.fixture
def task_set(tmp_path: Path) -> Path:
    """A private copy of the bundled starter tasks (see :func:`copy_starters`)."""
    return copy_starters(tmp_path / "tasks")


@pytest.fixture
def full_task_set(tmp_path: Path) -> Path:
    """A private copy of the whole bundled task set."""
    dst = tmp_path / "full-tasks"
    shutil.copytree(BUNDLED, dst)
    return dst


def run_cli(
    component: str,
    *args: str,
    cwd: Path | None = None,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run a console script as a real subprocess (``python -m ctbench.<component>.cli``)."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    full_env.pop("CTBENCH_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", f"ctbench.{component}.cli", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )


def _drives_a_textual_app(module: object) -> bool:
    """Whether a test module holds a Textual ``App`` class: the mark of a pilot or snapshot test module.

    Checked on the module's names rather than listed by hand so that a new pilot-test module is marked
    without anyone remembering to; ``sys.modules`` is consulted so that this check never imports Textual.
    """
    textual_app = sys.modules.get("textual.app")
    if textual_app is None:
        return False
    app_class = textual_app.App
    return any(isinstance(value, type) and issubclass(value, app_class) for value in vars(module).values())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every Textual pilot and snapshot test ``tui``, so ``pytest -m "not tui"`` runs the fast rest."""
    for item in items:
        module = getattr(item, "module", None)
        if "snap_compare" in getattr(item, "fixturenames", ()) or (
            module is not None and _drives_a_textual_app(module)
        ):
            item.add_marker(pytest.mark.tui)


@pytest.fixture(scope="session")
def harness_runs(tmp_path_factory: pytest.TempPathFactory) -> HarnessRuns:
    """Each agent CLI's run against the scripted model, made once per session (``.get(NAME)``)."""
    from tests.support.harness_runs import HarnessRuns

    return HarnessRuns(tmp_path_factory.mktemp("harness-runs"))
