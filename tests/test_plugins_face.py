"""ctbench.plugins, the public face for plug-in authors: each name is the object ctbench itself uses
(not a copy that could drift), and importing it loads no Textual."""

from __future__ import annotations

import importlib
import subprocess
import sys

import ctbench.plugins as plugins
from tests.conftest import REPO

HOMES = {
    "Agent": "ctbench.evaluate.agents.base",
    "AgentContext": "ctbench.evaluate.agents.base",
    "AgentResult": "ctbench.evaluate.agents.base",
    "ModelTurn": "ctbench.evaluate.agents.turns",
    "Executor": "ctbench.evaluate.executors",
    "WorkUnit": "ctbench.evaluate.work",
    "AttemptOutcome": "ctbench.evaluate.work",
    "ExportRequest": "ctbench.evaluate.exporters",
    "ExportSummary": "ctbench.evaluate.export",
    "TaskFamily": "ctbench.scoring.families",
    "ParsedAnswer": "ctbench.scoring.parse",
}


def test_every_public_name_is_ctbench_own_object() -> None:
    assert set(plugins.__all__) == {n for n in dir(plugins) if not n.startswith("_")} - {"annotations"}
    for name, module in HOMES.items():
        assert getattr(plugins, name) is getattr(importlib.import_module(module), name), name
    groups = {plugins.AGENTS_GROUP, plugins.EXECUTORS_GROUP, plugins.EXPORTERS_GROUP, plugins.FAMILIES_GROUP}
    assert groups == {"ctbench.agents", "ctbench.executors", "ctbench.exporters", "ctbench.families"}
    assert all(isinstance(f, plugins.TaskFamily) for f in plugins.families().values())


def test_importing_the_face_loads_no_textual() -> None:
    code = "import sys, ctbench.plugins; print('textual' in sys.modules)"
    res = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert res.stdout.strip() == "False"
