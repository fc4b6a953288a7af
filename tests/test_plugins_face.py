"""ctbench.plugins, the public face for plug-in authors: each name is the object ctbench itself uses
(not a copy that could drift), and importing it loads no Textual."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import ctbench.plugins as plugins
from tests.conftest import REPO

HOMES = {
    "Agent": "ctbench.evaluate.agents.base",
    "AgentContext": "ctbench.evaluate.agents.base",
    "AgentResult": "ctbench.evaluate.agents.base",
    "ModelTurn": "ctbench.evaluate.agents.turns",
    "HarnessAgent": "ctbench.evaluate.agents.harness_base",
    "HarnessLaunch": "ctbench.evaluate.agents.harness_base",
    "refuse_options": "ctbench.evaluate.exporters",
    "Family": "ctbench.model",
    "AgentSettings": "ctbench.evaluate.settings",
    "AgentOptions": "ctbench.evaluate.settings",
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


BUNDLED_PLUGINS = {
    # module of a bundled plug-in: what it imports from ctbench that the face does not offer, and why
    "ctbench/evaluate/agents/null.py": {},
    "ctbench/evaluate/agents/oracle.py": {
        "ctbench.model.BUILTIN_FAMILIES": "the built-ins' gold is written by the task model's own lines",
    },
    "ctbench/evaluate/agents/probe.py": {
        "ctbench.dialects.get_dialect": "its checklist is each vendor dialect's first commands",
    },
}
"""The bundled plug-ins that are built as a plug-in from outside would be. They sit below
``ctbench.plugins`` in the layers (pyproject.toml), so they import each name from its home module;
this holds them to names the face offers (the same object), so the face is enough to write them."""


def _private_imports(path: str) -> set[str]:
    """``module.name`` of every ctbench name ``path`` imports (lazily too) that is not on the face."""
    import ast

    out: set[str] = set()
    for node in ast.walk(ast.parse((REPO / path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "ctbench"}
        elif (
            isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("ctbench")
        ):
            home = importlib.import_module(node.module or "")
            for alias in node.names:
                face = getattr(plugins, alias.name, None)
                if face is None or face is not getattr(home, alias.name, None):
                    out.add(f"{node.module}.{alias.name}")
    return out


def test_bundled_plugins_need_only_the_face() -> None:
    for path, allowed in BUNDLED_PLUGINS.items():
        assert _private_imports(path) == set(allowed), path


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    """The check fails on a plug-in that reaches past the face (here, the runner's internals)."""
    bad = tmp_path / "agent.py"
    bad.write_text(
        "from ctbench.evaluate.agents.base import Agent\n"
        "def f():\n    from ctbench.evaluate.attempt import run_attempt\n    import ctbench.store\n",
        encoding="utf-8",
    )
    assert _private_imports(str(bad)) == {"ctbench.evaluate.attempt.run_attempt", "ctbench.store"}
