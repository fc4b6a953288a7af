"""``ctb-eval run --ssh``: an agent logs into its attempt's devices with netmiko and OpenSSH, sandboxed.

The agent is a real program run by the ``command`` adapter inside bubblewrap, with the default
``loopback`` network (only the replay, the SSH front end and the model endpoint reachable) and with
the ``host`` network. It runs a task's
golden commands over SSH - the first with the OpenSSH client checking the host key from
``$CTBENCH_SSH_KNOWN_HOSTS``, the rest through netmiko's ``ConnectHandler`` - and answers. The same
program then runs the same commands over MCP (the stdio proxy every harness uses). Both runs must
score alike: same answers, same evidence, same command counts, the SSH clients' paging and width
commands logged as ``session`` and counted nowhere.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("asyncssh", reason="--ssh needs: pip install -e '.[ssh,ssh-clients]'")
pytest.importorskip("netmiko", reason="the SSH agent needs: pip install -e '.[ssh-clients]'")

from ctbench.errors import CtbError  # noqa: E402 - after the extras are known to be here
from ctbench.evaluate.runner import Runner, RunSettings
from ctbench.evaluate.score import score_run
from ctbench.store import TaskSet
from tests.conftest import needs_bwrap
from tests.ssh_support import NETMIKO_TYPES
from tests.test_runner import agent_script

pytestmark = pytest.mark.xdist_group("ssh")

TASKS = ("RCA-001", "RCA-002")

AGENT = r"""
import asyncio, json, os, stat, subprocess, sys

mode, plan_file = sys.argv[1], sys.argv[2]
sys.stdin.read()
task = os.environ["CTBENCH_TASK_ID"]
plan = json.load(open(plan_file))[task]
commands = plan["commands"]  # [device, netmiko device_type, command]
seen = {}

def over_ssh():
    host, port = os.environ["CTBENCH_SSH_HOST"], int(os.environ["CTBENCH_SSH_PORT"])
    password = os.environ["CTBENCH_SSH_PASSWORD"]
    # OpenSSH first, checking the host key it was given; the password comes from an askpass helper
    askpass = os.path.join(os.getcwd(), "askpass.sh")
    with open(askpass, "w") as fh:
        fh.write('#!/bin/sh\necho "$CTBENCH_SSH_PASSWORD"\n')
    os.chmod(askpass, stat.S_IRWXU)
    device, _, command = commands[0]
    proc = subprocess.run(
        ["ssh", "-p", str(port), "-o", "UserKnownHostsFile=" + os.environ["CTBENCH_SSH_KNOWN_HOSTS"],
         "-o", "StrictHostKeyChecking=yes", "-o", "PubkeyAuthentication=no", "-o", "BatchMode=no",
         "-o", "PreferredAuthentications=password,keyboard-interactive",
         f"{device}@{host}", command],
        env={**os.environ, "SSH_ASKPASS": askpass, "SSH_ASKPASS_REQUIRE": "force", "DISPLAY": ":0"},
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    seen[command] = proc.stdout
    from netmiko import ConnectHandler
    by_device = {}
    for device, device_type, command in commands[1:]:
        by_device.setdefault((device, device_type), []).append(command)
    for (device, device_type), cmds in by_device.items():
        conn = ConnectHandler(device_type=device_type, host=host, port=port, username=device,
                              password=password, fast_cli=True, timeout=30)
        try:
            for command in cmds:
                seen[command] = conn.send_command(command)
        finally:
            conn.disconnect()

async def over_mcp():
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ctbench.replay.cli", "mcp", "--connect=" + os.environ["CTBENCH_REPLAY_URL"],
              "--session=" + os.environ["CTBENCH_REPLAY_SESSION"]],
        env={**os.environ},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        for device, _, command in commands:
            res = await s.call_tool("run_command", {"device": device, "command": command})
            seen[command] = "".join(getattr(c, "text", "") for c in res.content)

if mode == "ssh":
    over_ssh()
else:
    asyncio.run(over_mcp())
for command in [c for _, _, c in commands]:
    print(f"{command}: {len(seen[command])} characters", file=sys.stderr)
    assert seen[command].strip(), command
with open(os.environ["CTBENCH_ANSWER_FILE"], "w") as fh:
    fh.write(plan["answer"])
"""


def plan(task_set: Path) -> dict[str, Any]:
    """Per task: its golden commands with each device's netmiko type, and the gold answer."""
    ts = TaskSet.open(task_set)
    out: dict[str, Any] = {}
    for tid in TASKS:
        ref = ts.ref(tid)
        spec, hidden = ts.load_task(ref), ts.load_hidden(ref)
        types = {d.name: NETMIKO_TYPES[d.os] for d in ts.network(spec.network).devices if d.os}
        assert hidden.answer.rca
        out[tid] = {
            "commands": [[a.device, types[a.device], a.command] for a in hidden.golden_actions],
            "answer": "".join(f"{r.node};{r.object};{r.label}\n" for r in hidden.answer.rca),
        }
    return out


def run(task_set: Path, tmp_path: Path, mode: str, name: str, **extra: Any) -> Path:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan(task_set)), encoding="utf-8")
    settings = RunSettings(
        agent="command",
        agent_cmd=agent_script(tmp_path, "ssh_agent.py", AGENT) + f" {mode} {plan_file}",
        tasks=task_set,
        select=",".join(TASKS),
        out=tmp_path / f"run-{name}",
        allow_unreviewed=True,
        concurrency=2,
        timeout_s=240,
        retries=0,
        **extra,
    )
    report = Runner(settings).run()
    return report.folder


def lines(folder: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for text in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        out[line["task_id"]] = line
    return out


def trajectory(folder: Path, line: dict[str, Any]) -> list[dict[str, Any]]:
    text = (folder / line["trajectory"]).read_text(encoding="utf-8")
    return [json.loads(t) for t in text.splitlines() if t.strip()]


@needs_bwrap
def test_an_ssh_agent_scores_like_the_same_agent_over_mcp(task_set: Path, tmp_path: Path) -> None:
    mcp_run = run(task_set, tmp_path, "mcp", "mcp", sandbox="bwrap", sandbox_network="loopback")
    # the default sandbox (whatever its network is), then the host network shared with the runner
    for name, network in (("default", {}), ("host", {"sandbox_network": "host"})):
        ssh_run = run(task_set, tmp_path, "ssh", f"ssh-{name}", ssh=True, **network)
        assert "mode: bwrap" in (ssh_run / "run.yaml").read_text(encoding="utf-8")
        same_score(task_set, ssh_run, mcp_run)


def same_score(task_set: Path, ssh_run: Path, mcp_run: Path) -> None:
    ssh_lines, mcp_lines = lines(ssh_run), lines(mcp_run)
    gold = plan(task_set)
    for tid in TASKS:
        s, m = ssh_lines[tid], mcp_lines[tid]
        log = (ssh_run / s["log"]).read_text(encoding="utf-8")
        assert (s["status"], s["answer_source"]) == ("answered", "answer_file"), (s, log[-3000:])
        assert (m["status"], m["answer_source"]) == ("answered", "answer_file"), m
        want = [(d, c) for d, _, c in gold[tid]["commands"]]
        ssh_calls = trajectory(ssh_run, s)
        agent_calls = [(r["device"], r["command"]) for r in ssh_calls if r["outcome"] != "session"]
        assert agent_calls == want, ssh_calls
        assert [r["outcome"] for r in ssh_calls if r["outcome"] != "session"] == ["recorded"] * len(want)
        # netmiko turned paging off on each device it logged into: logged, but as session setup
        setup = [r for r in ssh_calls if r["outcome"] == "session"]
        assert {r["device"] for r in setup} == {d for d, _, _ in gold[tid]["commands"][1:]}, setup
        mcp_calls = [(r["device"], r["command"]) for r in trajectory(mcp_run, m)]
        assert mcp_calls == want
        assert s["commands"] == m["commands"] == len(want)
    config = (ssh_run / "run.yaml").read_text(encoding="utf-8")
    assert "ssh: true" in config
    scored = {
        name: score_run(folder, TaskSet.open(task_set), write=False, n_resamples=200)
        for name, folder in (("ssh", ssh_run), ("mcp", mcp_run))
    }
    for name in ("ssh", "mcp"):
        rca = scored[name]["summary"]["rca"]
        assert rca["accuracy"] == 1.0 and rca["evidence"]["coverage"] == 1.0, (name, rca)
    ssh_tasks = {t["task_id"]: t for t in scored["ssh"]["tasks"]}
    mcp_tasks = {t["task_id"]: t for t in scored["mcp"]["tasks"]}
    for tid in TASKS:
        a, b = ssh_tasks[tid], mcp_tasks[tid]
        a["usage"].pop("latency_s")
        b["usage"].pop("latency_s")
        assert a == b, (a, b)


def test_ssh_is_for_agents_that_run_as_a_process(task_set: Path, tmp_path: Path) -> None:
    settings = RunSettings(
        agent="oracle",
        tasks=task_set,
        select="RCA-001",
        out=tmp_path / "run",
        allow_unreviewed=True,
        ssh=True,
    )
    with pytest.raises(CtbError, match="--ssh: agent oracle runs inside the runner"):
        Runner(settings).run()
