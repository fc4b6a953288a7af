"""The core, replay and evaluate never import Textual: scoring and replay must not pay for the TUI.

Each module is imported in a fresh interpreter, which then reports whether ``textual`` (or any of its
submodules) ended up in ``sys.modules``. The authoring command line and its editing layer are
checked too: scripted ``ctb-author add-recording`` runs must stay light; only the app imports Textual.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

MODULES = [
    "ctbench",
    "ctbench.model",
    "ctbench.store",
    "ctbench.replay.engine",
    "ctbench.scoring.metrics",
    "ctbench.evaluate.cli",
    "ctbench.evaluate.export",
    "ctbench.evaluate.paper_tables",
    "ctbench.viewer",
    "ctbench.viewer.data",
    "ctbench.authoring.cli",
    "ctbench.authoring.editing",
    "ctbench.authoring.drafts",
    "ctbench.validation",
    "ctbench.approval.check",  # the run gate's approval_state, in the core
]

PROBE = """
import importlib, json, sys
name = sys.argv[1]
try:
    importlib.import_module(name)
except ModuleNotFoundError as exc:
    print(json.dumps({"missing": exc.name}))
    raise SystemExit(0)
print(json.dumps({"textual": sorted(m for m in sys.modules if m == "textual" or m.startswith("textual."))}))
"""


def _probe(module: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run(
        [sys.executable, "-c", PROBE, module], capture_output=True, text=True, env=env, timeout=120, cwd=REPO
    )
    assert res.returncode == 0, f"importing {module} failed:\n{res.stderr}"
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", MODULES)
def test_module_does_not_import_textual(module: str) -> None:
    result = _probe(module)
    if "missing" in result:
        if result["missing"] == module:
            pytest.skip(f"{module} is not in this tree yet")
        raise AssertionError(f"importing {module} needs {result['missing']}, which is not installed")
    assert result["textual"] == [], f"{module} imports Textual: {result['textual'][:5]}"


def test_the_probe_sees_textual_when_it_is_imported() -> None:
    """The check above can fail: the app package does import Textual."""
    assert "textual" in _probe("ctbench.authoring.app.app")["textual"]
