"""One real run of each agent CLI against the scripted model, made once per test session and shared.

The transcript test (``tests/test_harness_transcripts.py``) and the Harbor test
(``tests/test_harbor_export.py``) read the same run folders: each CLI (Codex, Claude Code, Hermes) runs
one task through the runner, under the default sandbox, against the scripted model server, which
records every request it answered. A run takes the better part of a minute, so it is made on first use
and kept for the session (the ``harness_runs`` fixture of ``tests/conftest.py``); the tests that use it
share one xdist group so they share the runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.model_server import RequestRecord, ScriptedModelServer, TaskScript, scripts_for

TASK = "RCA-001"
SNAPSHOT = "scripted-model-2026-11-30"
"""What the scripted server names in every reply to a request for ``scripted-model``."""
KEYS = {"OPENAI_API_KEY": "sk-ctbench-test", "ANTHROPIC_API_KEY": "sk-ant-ctbench-test"}


@dataclass(frozen=True)
class HarnessRun:
    """A finished run folder, the task set it ran and what the model server saw."""

    name: str
    folder: Path
    task_set: Path
    script: TaskScript
    served: list[RequestRecord]
    """The requests of the agent's conversation the server answered, in its order."""
    answered: list[RequestRecord]
    """Every request the server answered with usage (side requests such as a session title too)."""


@dataclass
class HarnessRuns:
    """Runs each CLI on first request and hands out the same run afterwards."""

    root: Path
    runs: dict[str, HarnessRun] = field(default_factory=dict)

    def get(self, name: str) -> HarnessRun:
        from tests.conftest import copy_starters
        from tests.test_harness_agents import _settings, harness

        harness(name)  # skips (or fails under CTBENCH_REQUIRE_HARNESSES) when the CLI is missing
        if name in self.runs:
            return self.runs[name]
        task_set = self.root / "tasks"
        if not task_set.exists():
            copy_starters(task_set)
        sandbox = os.environ.get("CTB_TEST_SANDBOX", "auto")
        from ctbench.evaluate.runner import Runner

        (script,) = scripts_for(task_set, [TASK])
        with pytest.MonkeyPatch.context() as mp:
            for key, value in KEYS.items():
                mp.setenv(key, value)
            with ScriptedModelServer([script], max_seconds=300, reported_model=SNAPSHOT) as model:
                settings = _settings(
                    name, model.url, task_set, self.root / name, select=TASK, sandbox=sandbox
                )
                report = Runner(settings).run()
                served = model.main_requests(TASK)
                answered = [r for r in model.requests if r.usage is not None]
        run = HarnessRun(name, report.folder, task_set, script, served, answered)
        self.runs[name] = run
        return run
