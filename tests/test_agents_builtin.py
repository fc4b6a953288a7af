"""The built-in agents that need no model: oracle, null and probe, on the bundled tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctbench.dialects import OS_FAMILIES, get_dialect
from ctbench.evaluate.agents import AgentConfigError, AgentOptions, agent_class, agent_names, make_agent
from ctbench.evaluate.agents.probe import checklist
from ctbench.evaluate.runner import Runner, RunSettings
from ctbench.store import TaskSet
from tests.test_runner import results


def test_every_cli_family_has_a_checklist_the_dialect_accepts() -> None:
    for os_name in OS_FAMILIES:
        dialect = get_dialect(os_name)
        commands = checklist(os_name)
        assert len(commands) >= 5, f"{os_name}: no first_commands in its dialect data file"
        for command in commands:
            res = dialect.resolve(command)
            assert res.ok, f"{os_name}: {command!r} is not a valid command: {res.error}"


def test_probe_runs_the_checklist_on_every_accessible_device(task_set: Path, tmp_path: Path) -> None:
    report = Runner(
        RunSettings(
            allow_unreviewed=True, agent="probe", tasks=task_set, out=tmp_path / "probe", select="RCA-001"
        )
    ).run()
    (line,) = results(report.folder)
    assert line["status"] == "unparsable" and line["answer_text"] is None
    trajectory = [json.loads(t) for t in (report.folder / line["trajectory"]).read_text().splitlines()]
    ts = TaskSet.open(task_set)
    network = ts.network("campus-lab")
    expected = [
        (d, c) for d in ts.load_task("RCA-001").accessible or [] for c in checklist(network.device(d).os)
    ]
    assert [(t["device"], t["command"]) for t in trajectory] == expected
    assert {t["outcome"] for t in trajectory} <= {"recorded", "denied"}
    assert line["rounds"] == line["commands"] == len(expected)
    # Brute force finds some of the golden evidence, which is what makes it a useful baseline.
    golden = ts.load_hidden("RCA-001").golden_keys()
    assert {(t["device"], t["canonical"]) for t in trajectory} & golden


def test_agent_registry_and_option_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    assert agent_names()[:5] == ["oracle", "null", "probe", "openai", "command"]
    assert agent_class("oracle").needs_hidden and not agent_class("probe").needs_hidden
    assert agent_class("command").transport == "http" and agent_class("openai").transport == "in-process"
    with pytest.raises(AgentConfigError, match="unknown agent 'gpt'"):
        make_agent("gpt", AgentOptions())
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("CTBENCH_API_KEY", raising=False)
    with pytest.raises(AgentConfigError, match="API key"):
        make_agent("openai", AgentOptions(model="m"))
    assert make_agent("openai", AgentOptions(model="m", base_url="http://127.0.0.1:1/v1")).name == "openai"
    with pytest.raises(AgentConfigError, match="unbalanced|No closing quotation"):
        make_agent("command", AgentOptions(agent_cmd="python 'oops"))
    assert make_agent("command", AgentOptions(agent_cmd="true")).harness == "command: true"
