"""Each harness's log events are read by its own adapter: the run's details (viewer, HTML drill-down,
ATIF export) get harness-neutral model turns from the ``log_turn`` of the agent run.yaml names, so
``details.py`` knows no harness's format (issue 27 item 6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctbench.evaluate.agents.turns import ModelTurn
from ctbench.evaluate.details import DetailLoader
from ctbench.evaluate.score import Scorer, read_trial_results
from ctbench.store import TaskSet
from tests.test_score_support import oracle_run, starter_copy

CODEX_LOG = [
    "=== RCA-001 trial 1 attempt 1 at 2026-12-02T10:48:55+00:00 (agent codex) ===",
    {"type": "thread.started", "thread_id": "t1"},
    {"type": "item.completed", "item": {"id": "i0", "type": "reasoning", "text": "Core switch first."}},
    {
        "type": "item.completed",
        "item": {"id": "i1", "type": "mcp_tool_call", "server": "ctb", "tool": "run_command"},
    },
    {"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": "Port 24 is down."}},
    {"type": "item.completed", "item": {"id": "i3", "type": "command_execution", "command": "ls"}},
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 900, "cached_input_tokens": 700, "output_tokens": 30},
    },
    "[ctbench] exit status 0",
]
CODEX_TURNS = [
    ModelTurn("reasoning", "Core switch first."),
    ModelTurn("agent", "", tool_calls=("run_command",)),
    ModelTurn("agent", "Port 24 is down."),
    ModelTurn("usage", "", input_tokens=900, output_tokens=30, cached_tokens=700),
]
CLAUDE_LOG = [
    {"type": "system", "subtype": "init", "mcp_servers": [{"name": "ctb", "status": "connected"}]},
    {
        "type": "assistant",
        "message": {
            "id": "m1",
            "model": "claude-x",
            "content": [
                {"type": "text", "text": "Looking at the core."},
                {"type": "tool_use", "id": "c1", "name": "mcp__ctb__run_command", "input": {}},
            ],
            "usage": {"input_tokens": 12, "cache_read_input_tokens": 800, "output_tokens": 40},
        },
    },
    {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "c1"}]}},
    {"type": "result", "subtype": "success", "result": "done", "usage": {"input_tokens": 12}},
]
CLAUDE_TURNS = [
    ModelTurn(
        "agent",
        "Looking at the core.",
        input_tokens=12,
        output_tokens=40,
        cached_tokens=800,
        tool_calls=("mcp__ctb__run_command",),
    )
]
NEUTRAL = {"event": "model_turn", "role": "agent", "text": "Mine.", "input_tokens": 5, "tool_calls": ["x"]}
NEUTRAL_TURN = ModelTurn("agent", "Mine.", input_tokens=5, tool_calls=("x",))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("log-turns")
    tasks = starter_copy(tmp)
    return tasks, oracle_run(tmp / "runs" / "r", tasks)


def _as_agent(made: tuple[Path, Path], tmp: Path, agent: str, log: list[str | dict]) -> Path:
    """A copy of the oracle-answer run as if ``agent`` had made it, RCA-001's log holding ``log``."""
    run = tmp / agent
    shutil.copytree(made[1], run)
    config = run / "run.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\nagent: test-agent\n" in text
    config.write_text(text.replace("\nagent: test-agent\n", f"\nagent: {agent}\n"), encoding="utf-8")
    (run / "logs").mkdir(exist_ok=True)
    lines = [x if isinstance(x, str) else json.dumps(x) for x in log]
    (run / "logs" / "RCA-001.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return run


def _turns(made: tuple[Path, Path], run: Path) -> list[ModelTurn]:
    line = read_trial_results(run)[0][("RCA-001", 1)][1]
    return DetailLoader(Scorer(TaskSet.open(made[0]))).load(run, "RCA-001", line, with_output=False).turns


@pytest.mark.parametrize(
    ("agent", "log", "turns"),
    [
        ("codex", [*CODEX_LOG, NEUTRAL], [*CODEX_TURNS, NEUTRAL_TURN]),
        ("claude-code", [*CLAUDE_LOG, NEUTRAL], [*CLAUDE_TURNS, NEUTRAL_TURN]),
        # another agent's log: only ctbench's own neutral lines are turns; the harness events are text
        ("oracle", [*CODEX_LOG, *CLAUDE_LOG, NEUTRAL], [NEUTRAL_TURN]),
        ("hermes", [*CODEX_LOG, *CLAUDE_LOG], []),
        # run.yaml names an agent not installed here: the neutral reading, not an error
        ("gone-plugin", [*CODEX_LOG, NEUTRAL], [NEUTRAL_TURN]),
    ],
)
def test_the_runs_own_adapter_reads_its_log(
    made: tuple[Path, Path], tmp_path: Path, agent: str, log: list[str | dict], turns: list[ModelTurn]
) -> None:
    assert _turns(made, _as_agent(made, tmp_path, agent, log)) == turns


def test_one_run_folder_reads_each_log_with_its_agent(made: tuple[Path, Path], tmp_path: Path) -> None:
    """One loader over two runs of different agents keeps each run's reader apart."""
    codex = _as_agent(made, tmp_path, "codex", CODEX_LOG)
    claude = _as_agent(made, tmp_path, "claude-code", [*CLAUDE_LOG, *CODEX_LOG])
    loader = DetailLoader(Scorer(TaskSet.open(made[0])))
    got = {
        run.name: loader.load(
            run, "RCA-001", read_trial_results(run)[0][("RCA-001", 1)][1], with_output=False
        ).turns
        for run in (codex, claude, codex)
    }
    assert got == {"codex": CODEX_TURNS, "claude-code": CLAUDE_TURNS}
