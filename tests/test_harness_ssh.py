"""A real agent CLI logs into its devices over SSH under ``ctb-eval run --ssh``, inside its sandbox.

Claude Code (its Bash tool) and Hermes (its terminal tool) run as ``ctb-eval run --agent NAME --ssh``
runs them: under bubblewrap with the default ``loopback`` network, against the scripted model
server. The "model" lists the devices, then runs each golden command through the CLI's own shell
tool as ``ssh -F CONFIG DEVICE 'COMMAND'`` with the configuration its prompt names (the OpenSSH
client, checking the host key, to the run's SSH front end on 127.0.0.1 inside the attempt's
network), tries one command that is not ``ssh`` (Claude Code denies it: its Bash runs ssh only),
and submits the gold answer. The commands must land in the attempt's trajectory, their recorded
output must reach the model, and the run must score as the same CLI does over MCP.

Codex (no shell tool from its adapter) and Hermes unsandboxed (its terminal runs anything) are
refused with ``--ssh`` before any attempt.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

pytest.importorskip("asyncssh", reason="--ssh needs: pip install -e '.[ssh]'")

from ctbench.errors import CtbError  # noqa: E402 - after the extra is known to be here
from ctbench.evaluate.agents import agent_class
from ctbench.evaluate.agents.harness_base import HarnessAgent
from ctbench.evaluate.runner import Runner, RunSettings
from ctbench.evaluate.score import score_run
from ctbench.replay.engine import ReplayEngine
from ctbench.store import TaskSet
from tests.conftest import needs_bwrap
from tests.support.model_server import SSH_CONFIG, ScriptedModelServer, Step, TaskScript, scripts_for

pytestmark = [pytest.mark.xdist_group("ssh"), pytest.mark.timeout(600)]

TASKS = ("RCA-001", "RCA-002")
NOT_SSH = "touch made-by-bash"
"""A command the Bash tool must refuse under --ssh (it is given to run ssh only)."""


def installed(name: str) -> None:
    cls = agent_class(name)
    assert issubclass(cls, HarnessAgent)
    found = cls.availability()
    if not found.available:
        if os.environ.get("CTBENCH_REQUIRE_HARNESSES"):
            pytest.fail(f"{name} is not installed ({found.detail}) but CTBENCH_REQUIRE_HARNESSES is set")
        pytest.skip(f"{name} is not installed ({found.detail})")


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ctbench-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-ctbench-test")


def over_ssh(script: TaskScript, shell_tool: str, key: str = "command") -> TaskScript:
    """The golden script with every run_command sent as ``ssh`` through the CLI's shell tool, and one
    command that is not ssh before the answer."""
    steps: list[Step] = []
    for step in script.steps:
        if step.tool == "run_command":
            device, command = step.arguments["device"], step.arguments["command"]
            # the configuration's path as the prompt gives it (the server fills it in)
            line = f"ssh -F {SSH_CONFIG} {shlex.quote(device)} {shlex.quote(command)}"
            steps.append(Step(shell_tool, {key: line} | ({} if key == "cmd" else {"description": command})))
        elif step.tool == "submit_answer":
            steps.append(Step(shell_tool, {key: NOT_SSH}))
            steps.append(step)
        else:
            steps.append(step)
    return TaskScript(script.task_id, tuple(steps))


def settings(name: str, base_url: str, task_set: Path, out: Path, **kw: object) -> RunSettings:
    values: dict = {
        "agent": name,
        "model": "scripted-model",
        "base_url": base_url,
        "tasks": task_set,
        "out": out,
        "select": " ".join(TASKS),
        "concurrency": 2,
        "timeout_s": 240.0,
        # a model request dropped on its way (seen once under CI's load: ECONNRESET before the tap)
        # is retried as infrastructure, as in a real run; the retry is in the line, the check is on
        # the attempt that counted
        "retries": 1,
        "allow_unreviewed": True,
        "sandbox": "bwrap",
    }
    values.update(kw)
    return RunSettings(**values)  # type: ignore[arg-type]


def results(folder: Path) -> dict[str, dict]:
    out = {}
    for text in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        out[line["task_id"]] = line
    return out


def tool_results(body: dict) -> list[str]:
    """The text of every tool result the CLI sent back to the model (Messages or chat API)."""
    out: list[str] = []
    for message in body.get("messages") or []:
        if message.get("role") == "tool":  # chat completions (Hermes)
            out.append(str(message.get("content")))
            continue
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                if isinstance(content, list):
                    content = " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
                out.append(str(content))
    for item in body.get("input") if isinstance(body.get("input"), list) else []:  # Responses (Codex)
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            output = item.get("output")
            if isinstance(output, list):
                output = " ".join(str(c.get("text", "")) for c in output if isinstance(c, dict))
            out.append(str(output))
    return out


SHELLS = [
    ("claude-code", "Bash", "command"),
    ("hermes", "terminal", "command"),
    ("codex", "exec_command", "cmd"),
]
"""Each CLI that takes --ssh, the name of its shell tool and the argument that holds the command."""


@needs_bwrap
@pytest.mark.parametrize(("name", "shell", "key"), SHELLS, ids=[n for n, _, _ in SHELLS])
def test_an_agent_cli_logs_in_over_ssh_from_its_sandbox(
    name: str, shell: str, key: str, task_set: Path, tmp_path: Path
) -> None:
    installed(name)
    ts = TaskSet.open(task_set)
    scripts = [over_ssh(s, shell, key) for s in scripts_for(task_set, list(TASKS))]
    with ScriptedModelServer(scripts, max_seconds=400) as model:
        ssh_run = Runner(settings(name, model.url, task_set, tmp_path / "ssh", ssh=True)).run()
    with ScriptedModelServer(scripts_for(task_set, list(TASKS)), max_seconds=400) as model_mcp:
        mcp_run = Runner(settings(name, model_mcp.url, task_set, tmp_path / "mcp")).run()
    assert ssh_run.complete and mcp_run.complete
    config = (ssh_run.folder / "run.yaml").read_text(encoding="utf-8")
    assert "ssh: true" in config and "mode: bwrap" in config and "network: loopback" in config
    ssh_lines, mcp_lines = results(ssh_run.folder), results(mcp_run.folder)
    for tid in TASKS:
        line = ssh_lines[tid]
        log = (ssh_run.folder / line["log"]).read_text(encoding="utf-8")
        assert (line["status"], line["answer_source"]) == ("answered", "submit"), log[-4000:]
        assert "[ctbench] sandbox bwrap: " in log and f"--ssh: {shell} may run ssh" in log
        hidden = ts.load_hidden(ts.ref(tid))
        want = [(a.device, a.command) for a in hidden.golden_actions]
        calls = [
            json.loads(t)
            for t in (ssh_run.folder / line["trajectory"]).read_text(encoding="utf-8").splitlines()
        ]
        evidence = [(c["device"], c["command"]) for c in calls if c["outcome"] != "session"]
        assert evidence == want, calls
        assert [c["outcome"] for c in calls if c["outcome"] != "session"] == ["recorded"] * len(want)
        assert line["commands"] == mcp_lines[tid]["commands"] == len(want)
        # what each device printed came back to the model through the Bash tool
        sent = tool_results(model.main_requests(tid)[-1].body)
        with ReplayEngine(ts).open_session(tid) as replay:
            for device, command in want:
                printed = [ln.strip() for ln in replay.run(device, command).text.splitlines() if ln.strip()]
                assert any(printed[-1] in t for t in sent), (command, printed[-1], sent)
        if name == "claude-code":  # its Bash runs ssh only: the one other command was refused
            refused = [t for t in sent if t.startswith("touch ")]
            assert refused and any(w in refused[0] for w in ("approval", "permission", "denied")), refused
    tools = {n for r in model.main_requests() for n in r.tool_names}
    assert shell in tools
    others = [t for t in tools if t != shell and "ctb" not in t]
    for word in (
        "read_file",
        "write_file",
        "edit",
        "patch",
        "web",
        "glob",
        "grep",
        "browser",
        "spawn",
        "image",
    ):
        assert not [t for t in others if word in t.lower()], others
    scored = {
        name: score_run(folder, ts, write=False, n_resamples=200)
        for name, folder in (("ssh", ssh_run.folder), ("mcp", mcp_run.folder))
    }
    for name in ("ssh", "mcp"):
        rca = scored[name]["summary"]["rca"]
        assert rca["accuracy"] == 1.0 and rca["evidence"]["coverage"] == 1.0, (name, rca)
    by_task = {name: {t["task_id"]: t for t in scored[name]["tasks"]} for name in scored}
    for tid in TASKS:
        a, b = by_task["ssh"][tid], by_task["mcp"][tid]
        same = ("exact", "loc", "ident", "triplet", "entry_match", "evidence")
        assert [a[k] for k in same] == [b[k] for k in same], (a, b)


REFUSED = [
    # Hermes' terminal and Codex's exec_command run any command: given only inside the sandbox
    ("hermes", "none", "--ssh: agent hermes gets a shell tool that runs any command"),
    ("codex", "none", "--ssh: agent codex gets a shell tool that runs any command"),
]


@pytest.mark.parametrize(("name", "sandbox", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_ssh_refuses_what_it_cannot_give_safely(
    name: str, sandbox: str, message: str, task_set: Path, tmp_path: Path
) -> None:
    installed(name)
    run = settings(
        name, "http://127.0.0.1:9/v1", task_set, tmp_path / "r", ssh=True, select="RCA-001", sandbox=sandbox
    )
    with pytest.raises(CtbError, match=message):
        Runner(run).run()
    assert not (tmp_path / "r" / "results.jsonl").exists()


@needs_bwrap
def test_a_cli_without_a_shell_tool_is_refused_with_ssh(task_set: Path, tmp_path: Path) -> None:
    """A harness whose adapter gives no shell tool (a plug-in's, say) gets no logins it cannot use."""
    from ctbench.evaluate.agents.codex import CodexAgent

    installed("codex")
    shell_less = type("ShellLessCodex", (CodexAgent,), {"shell_tool": None})
    run = settings("codex", "http://127.0.0.1:9/v1", task_set, tmp_path / "r", ssh=True, select="RCA-001")
    with pytest.raises(CtbError, match="--ssh: agent codex has no shell tool"):
        Runner(run, agent=shell_less(run.agent)).run()
