"""The runner's replay server serves per-session MCP endpoints only to agents that take an MCP URL.

Importing the MCP SDK builds some 550 pydantic models: about 4 s on this 2-core machine under load,
paid before the first attempt of every run, by agents that never speak MCP over HTTP too (issue 25's
"one-time set-up not explained"). These tests hold both sides: a ``command`` run through the real
runner never imports ``mcp`` and its server has no ``/mcp/`` route, while an agent with transport
``mcp-http`` still gets its own endpoint, and the server without endpoints still answers REST.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ctbench.replay.engine import ReplayEngine
from ctbench.replay.http_server import serve_in_thread
from ctbench.store import TaskSet
from tests.conftest import REPO, copy_starters

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-endpoint") / "tasks"
    copy_starters(root)
    return root


@pytest.mark.parametrize("mcp", [True, False], ids=["endpoints", "no-endpoints"])
def test_the_server_serves_mcp_endpoints_only_when_asked(tasks: Path, mcp: bool) -> None:
    engine = ReplayEngine(TaskSet.open(tasks))
    with serve_in_thread(engine, runner=True, mcp=mcp) as handle:
        session = engine.open_session("RCA-001")
        grant = handle.grant(session)
        path = f"{handle.url}/mcp/{grant.token}/"
        answer = httpx.post(path, json=INIT, headers=MCP_HEADERS, timeout=30)
        if mcp:
            assert grant.mcp_url == path
            assert answer.status_code == 200, answer.text
        else:
            assert grant.mcp_url is None
            assert answer.status_code == 404
        # the REST API the command agent and the --connect proxy use is there either way
        listed = httpx.get(
            f"{handle.url}/sessions/{grant.session_id}/devices",
            headers={"Authorization": f"Bearer {grant.token}"},
            timeout=30,
        )
        assert listed.status_code == 200, listed.text


RUN = r"""
import json, sys, tempfile
from pathlib import Path
from ctbench.evaluate.agents import Agent, AgentContext, AgentOptions, AgentResult
from ctbench.evaluate.runner import Runner, RunSettings

class McpHttpAgent(Agent):
    name = "mcp-http-probe"
    description = "takes an MCP URL; answers through its session"
    transport = "mcp-http"
    seen: list = []

    async def solve(self, ctx: AgentContext) -> AgentResult:
        McpHttpAgent.seen.append(ctx.mcp_url)
        ctx.session.submit("CORE_SW_01;GigabitEthernet0/0/24;shutdown")
        return AgentResult(rounds=1)

tasks, out = Path(sys.argv[1]), Path(sys.argv[2])
common = dict(allow_unreviewed=True, tasks=tasks, select="RCA-001", sandbox="none", timeout_s=60)
Runner(RunSettings(agent="command", agent_cmd="true", out=out / "command", **common)).run()
after_command = "mcp" in sys.modules
Runner(
    RunSettings(agent="mcp-http-probe", out=out / "mcp-http", **common),
    agent=McpHttpAgent(AgentOptions()),
).run()
print(json.dumps({"mcp_after_command_run": after_command, "urls": McpHttpAgent.seen}))
"""


def test_a_command_run_never_imports_the_mcp_sdk_and_an_mcp_http_agent_gets_its_url(
    tasks: Path, tmp_path: Path
) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(tasks), str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["mcp_after_command_run"] is False
    (url,) = got["urls"]
    assert url.startswith("http://127.0.0.1:") and "/mcp/" in url
