"""The one run-settings model (:mod:`ctbench.evaluate.settings`): its sections, the one timeout default,
the flat keywords callers use, the record it leaves in run.yaml, and run folders whose run.yaml has an
older shape resuming through the real ``ctb-eval run --resume``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

import ctbench.plugins as plugins
from ctbench.errors import CtbError
from ctbench.evaluate import runfolder
from ctbench.evaluate.agents import make_agent
from ctbench.evaluate.agents.base import AgentOptions
from ctbench.evaluate.executor_record import REDACTED
from ctbench.evaluate.limits import AttemptLimits
from ctbench.evaluate.runfolder import RUN_FORMAT, HostInfo, RunConfig, RunFolder, TaskSetRef
from ctbench.evaluate.runner import Runner
from ctbench.evaluate.score import read_run_info
from ctbench.evaluate.settings import (
    DEFAULT_TIMEOUT_S,
    INVOCATION,
    AgentSettings,
    RunSettings,
    SandboxSettings,
)
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
    recorded = report.config.settings
    assert isinstance(recorded, RunSettings)
    assert (recorded.agent.timeout_s, recorded.retries, recorded.trials) == (120, 1, 2)
    assert (report.config.sandbox, recorded.agent.sandbox.limits) == ("in-process", AttemptLimits(procs=99))
    assert report.config.prompt_version == PROMPT_VERSION
    # what one invocation was told (where to write, --force) is not the run's record
    assert recorded.out is None and recorded.tasks is None and not recorded.force
    back = RunSettings.from_config(RunFolder(report.folder).load_config())
    assert back.agent.timeout_s == 120 and back.agent.sandbox.limits.procs == 99
    assert (back.select, back.trials, back.retries, back.allow_unreviewed) == ("RCA-001", 2, 1, True)
    assert back.tasks == str(task_set.resolve()) and back.agent.sandbox.mode == "none"
    assert back.updated(timeout_s=30, select=None).agent.timeout_s == 30


def test_run_yaml_records_the_settings_once(task_set: Path, tmp_path: Path) -> None:
    """run.yaml (format 2) holds the settings model under ``settings:``, and no option is named twice:
    none of the recorded settings is also a field of run.yaml itself."""
    out = tmp_path / "run"
    Runner(RunSettings(agent="oracle", tasks=task_set, out=out, allow_unreviewed=True, timeout_s=90)).run()
    data = load_document(out / "run.yaml")
    assert data["format"] == RUN_FORMAT == 2 and "options" not in data
    assert set(data["settings"]) == set(RunSettings.model_fields) - INVOCATION
    section = data["settings"]["agent"]
    assert set(section) == set(AgentSettings.model_fields) and set(section["sandbox"]) == set(
        SandboxSettings.model_fields
    )
    assert (section["agent"], section["timeout_s"], section["sandbox"]["mode"]) == (
        "oracle",
        90.0,
        "in-process",
    )
    names = {
        *RunSettings.model_fields,
        *AgentSettings.model_fields,
        *SandboxSettings.model_fields,
    } - INVOCATION
    assert not names & set(RunConfig.model_fields), names & set(RunConfig.model_fields)
    for gone in ("RunOptions",):
        assert not hasattr(runfolder, gone)


def test_the_executors_secrets_stay_redacted_in_run_yaml(tmp_path: Path) -> None:
    """A run folder is shared: the executor's options are recorded without their secrets, whichever
    way the record is made (the runner's RunConfig, or a copy given settings straight)."""
    settings = RunSettings(
        agent="oracle",
        executor="ray",
        executor_options={
            "address": "ray://ops:hunter2@10.0.0.1:10001",
            "auth_token": "tok-123",
            "runtime_env": {"env_vars": {"OPENAI_API_KEY": "sk-live-456"}},
            "cpus_per_attempt": 0.5,
        },
    )
    config = RunConfig(
        name="r",
        harness="ctbench-oracle",
        harness_version="0",
        settings=settings,
        task_set=TaskSetRef(path="/t", commit="abc", dirty=False),
        tasks=["A"],
        started=datetime(2026, 12, 2, tzinfo=UTC),
        host=HostInfo.current(),
    )
    folder = RunFolder(tmp_path)
    folder.save_config(config)
    text = (tmp_path / "run.yaml").read_text(encoding="utf-8")
    for secret in ("hunter2", "tok-123", "sk-live-456"):
        assert secret not in text
    assert config.executor_options == {
        "address": f"ray://ops:{REDACTED}@10.0.0.1:10001",
        "auth_token": REDACTED,
        "runtime_env": {"env_vars": {"OPENAI_API_KEY": REDACTED}},
        "cpus_per_attempt": 0.5,
    }
    assert folder.load_config().executor_options == config.executor_options
    assert settings.executor_options["auth_token"] == "tok-123"  # the run itself keeps what it was given


# run.yaml's ``options`` (format 1) as each earlier ctbench wrote them; the rest of the file moved too.
FORMAT_1_SHAPES = {
    # tests/fixtures/runs-v1: the first run folders, before trials, the gate, the sandbox and the caps
    "v1": {
        "options": ["timeout_s", "retries", "max_rounds", "base_url", "agent_cmd", "select", "all_statuses",
                    "prompt_version"],
        "top": ["format", "name", "agent", "model", "harness", "harness_version", "concurrency", "task_set",
                "tasks", "started", "finished", "host", "resumes"],
    },
    # before the gate said allow_unreviewed: --all-statuses ran the unapproved tasks
    "all-statuses": {
        "options": ["timeout_s", "retries", "max_rounds", "base_url", "agent_cmd", "select", "all_statuses",
                    "prompt_version", "agent_args", "trials"],
        "top": ["format", "name", "agent", "model", "harness", "harness_version", "concurrency", "task_set",
                "tasks", "started", "finished", "host", "resumes", "executor", "executor_options"],
    },
    # tests/fixtures/runs-v2-families: the last format 1, every option
    "last": {
        "options": ["timeout_s", "retries", "max_rounds", "base_url", "agent_cmd", "select", "all_statuses",
                    "prompt_version", "agent_args", "trials", "allow_unreviewed", "allow_invalid", "sandbox",
                    "sandbox_network", "ssh", "limits"],
        "top": ["format", "name", "agent", "model", "harness", "harness_version", "concurrency", "task_set",
                "tasks", "started", "finished", "host", "resumes", "executor", "executor_options", "skipped",
                "unreviewed", "ctbench", "reasoning_effort", "totals"],
    },
}  # fmt: skip


def _format_1(data: dict[str, object], shape: str) -> dict[str, object]:
    """``data`` (a format 2 run.yaml) written as ``shape`` was, key for key in that version's order."""
    settings = data["settings"]
    assert isinstance(settings, dict)
    agent = settings["agent"]
    sandbox = agent["sandbox"]
    flat = {
        "timeout_s": agent["timeout_s"],
        "retries": settings["retries"],
        "max_rounds": agent["max_rounds"],
        "base_url": agent["base_url"],
        "agent_cmd": agent["agent_cmd"],
        "select": settings["select"],
        "all_statuses": settings["allow_unreviewed"],
        "prompt_version": data["prompt_version"],
        "agent_args": agent["args"],
        "trials": settings["trials"],
        "allow_unreviewed": settings["allow_unreviewed"],
        "allow_invalid": settings["allow_invalid"],
        "sandbox": sandbox["mode"],
        "sandbox_network": sandbox["network"],
        "ssh": agent["ssh"],
        "limits": sandbox["limits"],
    }
    top = {
        **data,
        "format": 1,
        "agent": agent["agent"],
        "model": agent["model"],
        "concurrency": settings["concurrency"],
        "executor": settings["executor"],
        "executor_options": settings["executor_options"],
        "options": {k: flat[k] for k in FORMAT_1_SHAPES[shape]["options"]},
    }
    keys = FORMAT_1_SHAPES[shape]["top"]
    return {**{k: top[k] for k in keys[: keys.index("harness_version") + 1]}, "options": top["options"]} | {
        k: top[k] for k in keys[keys.index("harness_version") + 1 :]
    }


@pytest.mark.parametrize("shape", sorted(FORMAT_1_SHAPES))
def test_a_run_yaml_of_each_old_shape_loads_and_resumes(shape: str, task_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    Runner(
        RunSettings(
            agent="oracle", tasks=task_set, out=out, allow_unreviewed=True, select="rca", timeout_s=900
        )
    ).run()
    run_yaml = out / "run.yaml"
    old_data = _format_1(load_document(run_yaml), shape)
    run_yaml.write_text(dump_document(old_data), encoding="utf-8")
    assert "settings:" not in run_yaml.read_text(encoding="utf-8")
    results = out / "results.jsonl"
    kept = results.read_text(encoding="utf-8").splitlines()[:1]
    results.write_text(kept[0] + "\n", encoding="utf-8")

    old = RunFolder(out).load_config()
    assert (old.agent, old.settings.agent.timeout_s, old.settings.select) == ("oracle", 900.0, "rca")
    assert old.settings.allow_unreviewed and old.prompt_version == PROMPT_VERSION
    before_sandbox = shape != "last"
    assert old.sandbox == (None if before_sandbox else "in-process")
    assert old.unrecorded == (["sandbox.mode", "sandbox.limits"] if before_sandbox else [])
    settings = RunSettings.from_config(old)
    assert (settings.agent.timeout_s, settings.retries, settings.select) == (900.0, 2, "rca")
    assert settings.allow_unreviewed and settings.agent.sandbox.mode == "none"

    resumed = run_cli("evaluate", "run", "--resume", str(out), "--progress", "plain", "--no-score")
    assert resumed.returncode == 0, resumed.stderr
    lines = [json.loads(x) for x in results.read_text(encoding="utf-8").splitlines()]
    assert sorted(x["task_id"] for x in lines) == ["RCA-001", "RCA-002"]
    data = load_document(run_yaml)  # the resume wrote run.yaml again, in today's shape
    assert data["format"] == 2 and "options" not in data and data["settings"]["agent"]["timeout_s"] == 900.0
    config = RunFolder(out).load_config()
    assert config.resumes[-1].already_done == 1 and not config.resumes[-1].forced
    assert config.resumes[-1].differences == [] and config.unrecorded == []
    assert (config.settings.agent.timeout_s, config.settings.retries, config.settings.allow_unreviewed) == (
        900.0,
        2,
        True,
    )
    external = config.settings.updated(sandbox="none")
    unsandboxed = config.model_copy(update={"settings": external})
    if before_sandbox:
        # an external agent ran unsandboxed before the sandbox existed: resuming it so still needs --force
        assert "option sandbox.mode: None -> 'none'" in old.differences(unsandboxed)
    else:
        assert "option sandbox.mode: 'in-process' -> 'none'" in old.differences(unsandboxed)
    assert not any("sandbox" in d for d in old.differences(config))


def test_a_changed_option_refuses_the_resume_by_its_name(task_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    Runner(
        RunSettings(agent="oracle", tasks=task_set, out=out, allow_unreviewed=True, select="RCA-001")
    ).run()
    refused = run_cli("evaluate", "run", "--resume", str(out), "--timeout", "30", "--progress", "plain")
    assert refused.returncode != 0
    assert f"option timeout_s: {DEFAULT_TIMEOUT_S} -> 30.0" in refused.stderr, refused.stderr
    forced = run_cli(
        "evaluate", "run", "--resume", str(out), "--timeout", "30", "--force", "--progress", "plain", "--no-score"
    )  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    config = RunFolder(out).load_config()
    assert config.resumes[-1].forced and config.settings.agent.timeout_s == 30.0


def test_a_run_yaml_out_of_bounds_is_refused_and_scored_leniently(task_set: Path, tmp_path: Path) -> None:
    """The record keeps the runner's bounds (a resume of trials: 0 would run nothing); a report still
    reads such a file leniently, its agent and model found inside ``settings``."""
    out = tmp_path / "run"
    Runner(RunSettings(agent="oracle", model="m1", tasks=task_set, out=out, allow_unreviewed=True)).run()
    data = load_document(out / "run.yaml")
    data["settings"]["trials"] = 0
    (out / "run.yaml").write_text(dump_document(data), encoding="utf-8")
    with pytest.raises(CtbError, match="run.yaml: settings: .*trials must be at least 1"):
        RunFolder(out).load_config()
    info, warnings = read_run_info(out)
    assert (info.agent, info.model, info.name) == ("oracle", "m1", "run")
    assert len(warnings) == 1 and "read leniently" in warnings[0]
