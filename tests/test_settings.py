"""The one run-settings model (:mod:`ctbench.evaluate.settings`): its sections, the one timeout default,
the flat keywords callers use, the record it leaves in run.yaml, and run folders whose run.yaml has an
older shape resuming through the real ``ctb-eval run --resume``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

import ctbench.plugins as plugins
from ctbench.evaluate.agents import make_agent
from ctbench.evaluate.agents.base import AgentOptions
from ctbench.evaluate.limits import AttemptLimits
from ctbench.evaluate.runfolder import RunFolder, RunOptions
from ctbench.evaluate.runner import Runner
from ctbench.evaluate.settings import DEFAULT_TIMEOUT_S, AgentSettings, RunSettings, SandboxSettings
from ctbench.scoring.prompt import PROMPT_VERSION
from ctbench.yamlio import dump_document, load_document
from tests.conftest import run_cli


def test_one_timeout_default_and_the_old_agent_options_name() -> None:
    assert AgentSettings().timeout_s == DEFAULT_TIMEOUT_S == 3600.0
    assert RunSettings(agent="oracle").agent.timeout_s == DEFAULT_TIMEOUT_S
    assert AgentOptions is AgentSettings is plugins.AgentSettings is plugins.AgentOptions
    # a plug-in agent built the old way still gets its options under the old field names
    agent = make_agent("command", AgentOptions(agent_cmd="true", model="m1", timeout_s=30))
    assert (agent.options.agent_cmd, agent.options.model, agent.options.timeout_s) == ("true", "m1", 30)


def test_flat_keywords_go_into_their_sections() -> None:
    limits = AttemptLimits(procs=64)
    s = RunSettings(
        agent="command",
        model="m1",
        agent_cmd="true",
        timeout_s=60,
        agent_args={"k": "v"},
        sandbox="none",
        sandbox_network="host",
        limits=limits,
        ssh=True,
        retries=0,
        select="rca",
    )
    assert s.agent == AgentSettings(
        agent="command",
        model="m1",
        agent_cmd="true",
        timeout_s=60,
        args={"k": "v"},
        sandbox=SandboxSettings(mode="none", network="host", limits=limits),
        ssh=True,
    )
    assert (s.retries, s.select, s.concurrency, s.trials) == (0, "rca", 4, 1)
    # sections given as models or mappings mean the same
    assert RunSettings(agent=s.agent, retries=0, select="rca") == s
    assert RunSettings(agent=s.agent.model_dump(), retries=0, select="rca") == s
    with pytest.raises(ValidationError, match="timeuot_s"):
        RunSettings(agent="oracle", timeuot_s=5)
    with pytest.raises(ValidationError, match="mode"):
        RunSettings(agent="oracle", sandbox="docker")


def test_updated_changes_only_what_is_given() -> None:
    s = RunSettings(agent="openai", model="m1", timeout_s=60, sandbox="none", retries=1)
    u = s.updated(model="m2", sandbox=None, retries=3, limits=AttemptLimits(disk=None))
    assert (u.agent.agent, u.agent.model, u.agent.timeout_s, u.agent.sandbox.mode) == (
        "openai",
        "m2",
        60,
        "none",
    )
    assert (u.retries, u.agent.sandbox.limits.disk) == (3, None)
    assert s.agent.model == "m1" and s.retries == 1  # the original is untouched
    assert s.updated(agent="null").agent.model == "m1"


def test_the_record_round_trips_through_from_config(task_set: Path, tmp_path: Path) -> None:
    settings = RunSettings(
        agent="oracle",
        tasks=task_set,
        out=tmp_path / "run",
        allow_unreviewed=True,
        select="RCA-001",
        timeout_s=120,
        retries=1,
        trials=2,
        limits=AttemptLimits(procs=99),
    )
    report = Runner(settings).run()
    options = report.config.options
    assert isinstance(options, RunOptions)
    assert (options.timeout_s, options.retries, options.trials, options.sandbox) == (120, 1, 2, "in-process")
    assert options.prompt_version == PROMPT_VERSION and options.limits == AttemptLimits(procs=99)
    back = RunSettings.from_config(RunFolder(report.folder).load_config())
    assert back.agent.timeout_s == 120 and back.agent.sandbox.limits.procs == 99
    assert (back.select, back.trials, back.retries, back.allow_unreviewed) == ("RCA-001", 2, 1, True)
    assert back.updated(timeout_s=30, select=None).agent.timeout_s == 30


OLD_OPTIONS = {
    # run.yaml's options as ctbench wrote them before the gate, the sandbox and the attempt caps:
    # --all-statuses instead of --allow-unreviewed, no sandbox, sandbox_network, ssh, limits or trials.
    "timeout_s": 900.0,
    "retries": 1,
    "max_rounds": None,
    "base_url": None,
    "agent_cmd": None,
    "select": "rca",
    "all_statuses": True,
    "prompt_version": PROMPT_VERSION,
}


def test_a_run_yaml_in_the_old_shape_loads_and_resumes(task_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    Runner(RunSettings(agent="oracle", tasks=task_set, out=out, allow_unreviewed=True, select="rca")).run()
    run_yaml = out / "run.yaml"
    data = load_document(run_yaml)
    data["options"] = OLD_OPTIONS
    for key in ("executor", "executor_options", "skipped", "unreviewed", "ctbench", "reasoning_effort"):
        data.pop(key, None)
    run_yaml.write_text(dump_document(data), encoding="utf-8")
    results = out / "results.jsonl"
    kept = results.read_text(encoding="utf-8").splitlines()[:1]
    results.write_text(kept[0] + "\n", encoding="utf-8")

    old = RunFolder(out).load_config()
    assert old.options.allow_unreviewed and old.options.sandbox is None and old.options.limits is None
    settings = RunSettings.from_config(old)
    assert (settings.agent.timeout_s, settings.retries, settings.select) == (900.0, 1, "rca")
    assert settings.allow_unreviewed and settings.agent.sandbox.mode == "none"

    resumed = run_cli("evaluate", "run", "--resume", str(out), "--progress", "plain", "--no-score")
    assert resumed.returncode == 0, resumed.stderr
    lines = [json.loads(x) for x in results.read_text(encoding="utf-8").splitlines()]
    assert sorted(x["task_id"] for x in lines) == ["RCA-001", "RCA-002"]
    config = RunFolder(out).load_config()
    assert config.resumes[-1].already_done == 1 and not config.resumes[-1].forced
    assert config.resumes[-1].differences == []
    assert (config.options.timeout_s, config.options.retries, config.options.allow_unreviewed) == (
        900.0,
        1,
        True,
    )
    # an external agent ran unsandboxed before the sandbox existed: resuming it so still needs --force
    external = config.options.model_copy(update={"sandbox": "none"})
    assert "option sandbox: None -> 'none'" in old.differences(
        config.model_copy(update={"options": external})
    )
    assert not any("sandbox" in d for d in old.differences(config))
