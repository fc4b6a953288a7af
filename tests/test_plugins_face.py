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
    "Agent": "ctbench.plugin_api.agent",
    "AgentContext": "ctbench.plugin_api.agent",
    "AgentResult": "ctbench.plugin_api.agent",
    "ModelTurn": "ctbench.plugin_api.turns",
    "HarnessAgent": "ctbench.evaluate.agents.harness_base",
    "HarnessLaunch": "ctbench.evaluate.agents.harness_base",
    "refuse_options": "ctbench.plugin_api.exporter",
    "Family": "ctbench.model",
    "AgentSettings": "ctbench.plugin_api.settings",
    "AgentOptions": "ctbench.plugin_api.settings",
    "Executor": "ctbench.plugin_api.executor",
    "QueueExecutor": "ctbench.plugin_api.executor",
    "WorkUnit": "ctbench.plugin_api.work",
    "AttemptOutcome": "ctbench.plugin_api.work",
    "ExportRequest": "ctbench.plugin_api.exporter",
    "ExportSummary": "ctbench.plugin_api.exporter",
    "SshAccess": "ctbench.plugin_api.ssh",
    "Prices": "ctbench.prices",
    "TaskFamily": "ctbench.scoring.families",
    "ParsedAnswer": "ctbench.scoring.parse",
    "GoldLinesError": "ctbench.scoring.gold_lines",
    "Run": "ctbench.plugin_api.runs",
    "RunRecord": "ctbench.plugin_api.runs",
    "RunResult": "ctbench.plugin_api.runs",
    "RunScores": "ctbench.plugin_api.runs",
    "RunReadError": "ctbench.plugin_api.runs",
    "families_of": "ctbench.plugin_api.runs",
    "TaskSetRef": "ctbench.provenance",
    "atomic_write_text": "ctbench.yamlio",
    "atomic_write_bytes": "ctbench.yamlio",
    "get_dialect": "ctbench.dialects",
}

OLD_HOMES = {
    # where outside code may have imported a contract type before it moved below the evaluator
    "ctbench.evaluate.agents.base": ["Agent", "AgentContext", "AgentResult", "AgentError", "AgentOptions"],
    "ctbench.evaluate.agents.turns": ["ModelTurn", "token_count"],
    "ctbench.evaluate.agents": ["Agent", "AgentContext", "AgentSettings", "InfrastructureError"],
    "ctbench.evaluate.work": ["WorkUnit", "AttemptOutcome", "AgentSettings", "SandboxSettings"],
    "ctbench.evaluate.settings": ["AgentSettings", "AgentOptions", "SandboxSettings", "DEFAULT_TIMEOUT_S"],
    "ctbench.evaluate.executors": [
        "Executor",
        "ExecutionContext",
        "ExecutorError",
        "UnitStarted",
        "QueueExecutor",
    ],
    "ctbench.evaluate.exporters": ["ExportRequest", "ExporterError", "refuse_options", "ExportSummary"],
    "ctbench.evaluate.export": ["ExportSummary"],
    "ctbench.evaluate.prices": ["Prices"],
    "ctbench.evaluate.ssh_access": ["SshAccess"],
    "ctbench.evaluate.limits": ["AttemptLimits"],
}


def test_every_public_name_is_ctbench_own_object() -> None:
    assert set(plugins.__all__) == {n for n in dir(plugins) if not n.startswith("_")} - {"annotations"}
    for name, module in HOMES.items():
        assert getattr(plugins, name) is getattr(importlib.import_module(module), name), name
    groups = {plugins.AGENTS_GROUP, plugins.EXECUTORS_GROUP, plugins.EXPORTERS_GROUP, plugins.FAMILIES_GROUP}
    assert groups == {"ctbench.agents", "ctbench.executors", "ctbench.exporters", "ctbench.families"}
    assert all(isinstance(f, plugins.TaskFamily) for f in plugins.families().values())


def test_old_import_paths_give_the_same_objects() -> None:
    """The contract types moved below the evaluator (ctbench.plugin_api); their old homes still work."""
    for module, names in OLD_HOMES.items():
        old = importlib.import_module(module)
        for name in names:
            assert getattr(old, name) is getattr(plugins, name), f"{module}.{name}"


def test_a_family_refuses_gold_lines_with_the_face_error() -> None:
    """A family's own ``gold_from_lines`` raises the face's ``GoldLinesError``; the author is shown its
    problems as the family named them (not wrapped, not lost), as for the built-in default."""
    from ctbench.scoring.gold_lines import gold_from_lines
    from ctbench.scoring.judge import AnswerReader
    from ctbench.store import TaskSet

    sys.path.insert(0, str(REPO / "tests" / "plugin_family"))
    try:
        from downports_family import DownPortsFamily
    finally:
        sys.path.remove(str(REPO / "tests" / "plugin_family"))

    class Strict(DownPortsFamily):
        def gold_from_lines(self, lines: list[str], **_: object) -> list[str]:
            raise plugins.GoldLinesError(
                [f"line {n}: {line!r} is not down" for n, line in enumerate(lines, 1)]
            )

    ts = TaskSet.open(REPO / "tests" / "fixtures" / "family-plugin" / "tasks")
    devices = ts.network("campus-lab").device_map()
    reader = AnswerReader("downports", tuple(devices), devices, ts.vendors, lambda _: None, Strict())
    try:
        gold_from_lines(reader, ["CORE_SW_01:GE0/0/24", "X:Y"])
    except plugins.GoldLinesError as exc:
        assert exc.problems == ["line 1: 'CORE_SW_01:GE0/0/24' is not down", "line 2: 'X:Y' is not down"]
    else:
        raise AssertionError("the family's refusal was not raised")


def test_answer_link_is_not_the_cable() -> None:
    """``AnswerLink`` (a parsed answer's link) is not ``model.Link`` (a cable); ``Link`` warns."""
    import warnings

    import ctbench.model
    import ctbench.scoring.parse

    assert plugins.AnswerLink == tuple[plugins.Port, plugins.Port]
    assert plugins.AnswerLink is ctbench.scoring.parse.AnswerLink
    assert "Link" not in plugins.__all__
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert plugins.Link is plugins.AnswerLink
    assert [w.category for w in caught] == [DeprecationWarning]
    assert "AnswerLink" in str(caught[0].message)
    assert plugins.AnswerLink is not ctbench.model.Link


def test_importing_the_face_loads_no_textual() -> None:
    code = "import sys, ctbench.plugins; print('textual' in sys.modules)"
    res = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert res.stdout.strip() == "False"


def test_the_contract_loads_its_names_on_first_use() -> None:
    """ctb-eval's command line reads the evaluator's settings, which import ``plugin_api.settings``: that
    must not load the rest of the contract (the scoring layer, the replay's tools, asyncio) on the way,
    while every name of ``ctbench.plugin_api`` is still there when asked for."""
    import ctbench.plugin_api as contract

    code = (
        "import sys, ctbench.evaluate.cli\n"
        "print(sorted(m for m in ('asyncio', 'ctbench.scoring.families', 'ctbench.replay.tools', "
        "'ctbench.plugin_api.executor', 'ctbench.plugin_api.agent') if m in sys.modules))"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert res.stdout.strip() == "[]"
    assert set(contract.__all__) <= set(dir(contract))
    for name in contract.__all__:
        assert getattr(contract, name) is getattr(plugins, name), name


TRANSCRIPTS = (
    "its harness's own files read as transcript entries (harness_transcripts.py, shared by the CLIs)"
)

BUNDLED_PLUGINS: dict[str, dict[str, str]] = {
    # module of a bundled plug-in: each ctbench module it takes a name from that the face does not
    # offer (the same object), and why
    "ctbench/evaluate/agents/null.py": {},
    "ctbench/evaluate/agents/oracle.py": {},
    "ctbench/evaluate/agents/probe.py": {},
    "ctbench/evaluate/agents/openai_chat.py": {},
    "ctbench/evaluate/agents/command.py": {
        "ctbench.evaluate.agents.process": "runs its command through the sandbox's process layer, as the "
        "kit's HarnessAgent does (an outside agent CLI subclasses HarnessAgent instead)",
        "ctbench.plugin_api.agent_files": "copies the command's standard output into its log, capped",
    },
    "ctbench/evaluate/agents/codex.py": {"ctbench.evaluate.agents.harness_transcripts": TRANSCRIPTS},
    "ctbench/evaluate/agents/claude_code.py": {"ctbench.evaluate.agents.harness_transcripts": TRANSCRIPTS},
    "ctbench/evaluate/agents/hermes.py": {"ctbench.evaluate.agents.harness_transcripts": TRANSCRIPTS},
    "ctbench/evaluate/executors.py": {},
    "ctbench/evaluate/ray_executor.py": {
        "ctbench.evaluate.ray_address": "Ray's own cluster address checks",
    },
    "ctbench/evaluate/exporters.py": {
        "ctbench.evaluate.export": "the atif and leaderboard formats' own writers",
        "ctbench.evaluate.run_reader": "the leaderboard shares the request's scorer for its examples",
    },
    "ctbench/evaluate/mlflow_export.py": {},
    "ctbench/evaluate/release_export.py": {
        "ctbench.releases": "writes a release in the release format (manifest, shards), as "
        "`ctb-author release` does: the format is ctbench's own, not a plug-in's",
    },
    "ctbench/evaluate/trackb_io.py": {
        "ctbench.evaluate.ttac": "TTAC's answer extraction and question ids, shared with the TTAC "
        "importer and `ctb-eval score --ttac`: Track B's rules, not a plug-in's",
        "ctbench.replay.trackb.layout": "Track B's file layout (the answer cell), shared with the "
        "Track B facade and `ctb-author export --format trackb`",
    },
}
"""Every bundled plug-in (the agents, executors and exporters pyproject.toml registers). They sit below
``ctbench.plugins`` in the layers, so they import their contract types from ``ctbench.plugin_api``
(an import-linter contract holds that); this holds them to names the face offers (the same object),
each other module listed with its reason, so the face is enough to write them."""


def test_every_registered_plugin_is_checked() -> None:
    """A bundled plug-in added to pyproject.toml without an entry above would escape the check."""
    import tomllib

    eps = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    registered = {
        value.split(":")[0].replace(".", "/") + ".py"
        for group in ("ctbench.agents", "ctbench.executors", "ctbench.exporters")
        for value in eps[group].values()
    }
    assert registered == set(BUNDLED_PLUGINS)


def _private_imports(path: str) -> set[str]:
    """``module.name`` of every ctbench name ``path`` imports (lazily too) that is not on the face."""
    import ast

    out: set[str] = set()
    for node in ast.walk(ast.parse((REPO / path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):  # ``import ctbench`` (its version) is no private module
            out |= {a.name for a in node.names if a.name.startswith("ctbench.")}
        elif (
            isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("ctbench")
        ):
            home = importlib.import_module(node.module or "")
            for alias in node.names:
                if node.module == "ctbench" and alias.name == "__version__":
                    continue
                face = getattr(plugins, alias.name, None)
                if face is None or face is not getattr(home, alias.name, None):
                    out.add(f"{node.module}.{alias.name}")
    return out


def test_bundled_plugins_need_only_the_face() -> None:
    for path, allowed in BUNDLED_PLUGINS.items():
        homes = {name.rpartition(".")[0] for name in _private_imports(path)}
        assert homes == set(allowed), path


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    """The check fails on a plug-in that reaches past the face (here, the scorer and the store module)."""
    bad = tmp_path / "agent.py"
    bad.write_text(
        "from ctbench.evaluate.agents.base import Agent\n"
        "def f():\n    from ctbench.evaluate.score import Scorer\n    import ctbench.store\n",
        encoding="utf-8",
    )
    assert _private_imports(str(bad)) == {"ctbench.evaluate.score.Scorer", "ctbench.store"}
