"""The runner's replay server as agents see it: the ``ctb-replay mcp --connect`` stdio proxy, the
per-session streamable-HTTP MCP endpoints, and runner mode's tokens - all through the real ``mcp``
client, real subprocesses and real sockets, compared byte for byte with ``ctb-replay mcp TASK``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from ctbench.evaluate.attempt import mcp_proxy_command
from ctbench.replay.client import ReplayClient
from ctbench.replay.engine import ReplayEngine
from ctbench.replay.http_server import Grant, ServerHandle, SessionRegistry, serve_in_thread
from ctbench.replay.session import new_session_id
from ctbench.store import TaskSet
from tests.test_replay_support import ALL_TASK, build_vendor_task_set

REPO = Path(__file__).resolve().parents[1]

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_devices", {}),
    ("run_command", {"device": "IOS_01", "command": "show ip interface brief"}),  # recorded
    ("run_command", {"device": "IOS_01", "command": "sh ip int br"}),  # recorded, abbreviated
    ("run_command", {"device": "VRP_01", "command": "display foo"}),  # invalid (caret)
    ("run_command", {"device": "VRP_01", "command": "display ospf peer"}),  # denied
    ("run_command", {"device": "SECRET_RTR", "command": "show version"}),  # unknown device
    ("run_command", {"device": "../../etc/passwd", "command": "display version"}),
    ("run_command", {"device": "VRP_01", "command": "dis ver\x00\x1b[31m"}),
    ("run_command", {"device": "VRP_01", "command": "dis ver\ndisplay current-configuration"}),
    ("run_command", {"device": "VRP_01", "command": "display 版本 🙂"}),
    ("run_command", {"device": "VRP_01", "command": "   "}),
    ("run_command", {"device": "VRP_01"}),  # missing argument
    ("run_command", {"device": "VRP_01", "command": 7}),  # wrong type
    ("reboot_everything", {}),  # unknown tool
    ("submit_answer", {"answer": "x" * 70_000}),  # over the answer limit
    ("submit_answer", {"answer": "VRP_01;GE0/0/1;shutdown"}),
    ("submit_answer", {"answer": "VRP_01;GE0/0/1;shutdown\nIOS_01;Gi0/1;down\n"}),  # replaces it
]


@pytest.fixture(scope="module")
def vendor_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_vendor_task_set(tmp_path_factory.mktemp("connect") / "tasks")


@pytest.fixture()
def runner_server(vendor_root: Path, tmp_path: Path) -> Iterator[tuple[ServerHandle, ReplayEngine]]:
    engine = ReplayEngine(TaskSet.open(vendor_root))
    with serve_in_thread(engine, runner=True, unix_socket=tmp_path / "replay.sock") as handle:
        yield handle, engine


def proxy_env(token: str | None) -> dict[str, str]:
    """What a sandboxed agent would have: no task set anywhere, not even a working directory in one."""
    env = {"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "")}
    if token is not None:
        env["CTBENCH_REPLAY_TOKEN"] = token
    return env


@asynccontextmanager
async def stdio(args: list[str], env: dict[str, str], cwd: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ctbench.replay.cli", "mcp", *args], env=env, cwd=str(cwd)
    )
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


async def transcript(s: ClientSession) -> list[str]:
    """Everything the agent sees, as JSON text: the server's greeting, the tools, every answer."""
    init = s.initialize_result
    assert init is not None
    out = [init.server_info.name, init.instructions or "", init.protocol_version]
    out.append(json.dumps([t.model_dump(mode="json") for t in (await s.list_tools()).tools], sort_keys=True))
    for name, args in CALLS:
        res = await s.call_tool(name, args)
        out.append(res.model_dump_json())
    return out


def direct_transcript(vendor_root: Path) -> list[str]:
    got: list[str] = []

    async def main() -> None:
        async with stdio([ALL_TASK, "--tasks", str(vendor_root)], proxy_env(None), REPO) as s:
            got.extend(await transcript(s))

    anyio.run(main)
    return got


@pytest.fixture(scope="module")
def direct(vendor_root: Path) -> list[str]:
    return direct_transcript(vendor_root)


def grant(handle: ServerHandle, engine: ReplayEngine) -> tuple[Grant, Any]:
    session = engine.open_session(ALL_TASK)
    return handle.registry.grant(session), session


def check_session_saw_every_call(session: Any) -> None:
    outcomes = [r.outcome.value for r in session.trajectory]
    assert outcomes[:5] == ["recorded", "recorded", "invalid", "denied", "unknown-device"]
    assert session.answer is not None and session.answer.count == 2
    assert session.answer.answer.startswith("VRP_01;GE0/0/1;shutdown\nIOS_01")


@pytest.mark.parametrize("via", ["tcp", "unix", "token-file"])
def test_connect_proxy_answers_byte_for_byte_like_the_direct_server(
    via: str, direct: list[str], runner_server: tuple[ServerHandle, ReplayEngine], tmp_path: Path
) -> None:
    handle, engine = runner_server
    g, session = grant(handle, engine)
    url = handle.unix_url if via == "unix" else handle.url
    assert url is not None
    args, env = ["--connect", url, "--session", g.session_id], proxy_env(g.token)
    if via == "token-file":
        (tmp_path / "token").write_text(g.token + "\n")
        args += ["--token-file", str(tmp_path / "token")]
        env = proxy_env(None)
    got: list[str] = []

    async def main() -> None:
        async with stdio(args, env, tmp_path) as s:
            got.extend(await transcript(s))

    anyio.run(main)
    assert len(got) == len(direct)
    for i, (a, b) in enumerate(zip(got, direct, strict=True)):
        assert a == b, f"answer {i} differs ({(CALLS[i - 4][0] if i >= 4 else 'greeting')})"
    check_session_saw_every_call(session)


def test_per_session_streamable_http_endpoint_answers_like_the_direct_server(
    direct: list[str], runner_server: tuple[ServerHandle, ReplayEngine]
) -> None:
    handle, engine = runner_server
    g, session = grant(handle, engine)
    other, other_session = grant(handle, engine)
    got: list[str] = []

    async def main() -> None:
        async with streamable_http_client(handle.mcp_url(g)) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                got.extend(await transcript(s))

    anyio.run(main)
    assert got == direct
    check_session_saw_every_call(session)
    assert other_session.calls == 0 and other_session.answer is None  # one URL, one session
    # a guessed or closed endpoint is a 404 before any MCP code runs
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    headers = {"accept": "application/json, text/event-stream"}
    for path in ("/mcp/", "/mcp/guess/", f"/mcp/{g.session_id}/", f"/mcp/{g.token[:-1]}/"):
        r = httpx.post(handle.url + path, json=init, headers=headers)
        assert r.status_code == 404, path
    assert httpx.post(handle.url + other.mcp_path, json=init, headers=headers).status_code == 200
    handle.registry.close(other.session_id)
    assert httpx.post(handle.url + other.mcp_path, json=init, headers=headers).status_code == 404


def test_connect_with_a_wrong_token_fails_in_one_line(
    runner_server: tuple[ServerHandle, ReplayEngine], tmp_path: Path
) -> None:
    handle, engine = runner_server
    g, _ = grant(handle, engine)
    other, _ = grant(handle, engine)
    cases = [proxy_env(None), proxy_env("guess"), proxy_env(other.token)]
    for env in cases:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "ctbench.replay.cli",
                "mcp",
                "--connect",
                handle.url,
                "--session",
                g.session_id,
            ],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == 2, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
        assert "no open session" in proc.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "ctbench.replay.cli", "mcp", "--connect", handle.url],
        env=proxy_env(g.token),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "--session" in bad.stderr


def test_a_session_id_that_begins_with_a_dash_never_happens_and_would_still_connect(
    runner_server: tuple[ServerHandle, ReplayEngine], tmp_path: Path
) -> None:
    """Issue 13's flake: 1 session id in 64 began with "-", and ``--session -Xy...`` made the proxy
    exit with a usage error before the CLI's first MCP message, so the CLI started without its tools."""
    assert not any(new_session_id().startswith("-") for _ in range(5000))
    handle, engine = runner_server
    session = engine.open_session(ALL_TASK)
    session.id = "-" + session.id[1:]  # what the old generator handed out once in 64 sessions
    g = handle.registry.grant(session)
    argv = mcp_proxy_command(handle.url, g.session_id)
    assert argv[:3] == [sys.executable, "-m", "ctbench.replay.cli"]
    (tmp_path / "token").write_text(g.token)
    log = tmp_path / "proxy.log"
    tools: list[str] = []

    async def main() -> None:
        args = [*argv[4:], "--token-file", str(tmp_path / "token"), "--log", str(log)]
        async with stdio(args, proxy_env(None), tmp_path) as s:
            tools.extend(t.name for t in (await s.list_tools()).tools)
            await s.call_tool("run_command", {"device": "IOS_01", "command": "show ip interface brief"})

    anyio.run(main)
    assert tools == ["list_devices", "run_command", "submit_answer"]
    assert [r.outcome.value for r in session.trajectory] == ["recorded"]
    lines = log.read_text(encoding="utf-8").splitlines()
    steps = [line.split(" ", 1)[1] for line in lines]
    assert steps[0].startswith("pid ") and " started " in steps[0] and g.session_id in steps[0], lines
    assert steps[1].startswith("session checked in "), lines
    assert "read initialize (id 1)" in steps and "read tools/list (id 2)" in steps, lines
    assert "read tools/call (id 3)" in steps and "read notifications/initialized" in steps, lines
    assert steps[-2:] == [
        "standard input closed after 4 message(s)",
        "ended: its client closed standard input",
    ]
    assert g.token not in log.read_text(encoding="utf-8")


def test_the_proxy_log_says_why_the_proxy_stopped(
    runner_server: tuple[ServerHandle, ReplayEngine], tmp_path: Path
) -> None:
    handle, engine = runner_server
    g, _ = grant(handle, engine)
    log = tmp_path / "proxy.log"
    base = [sys.executable, "-m", "ctbench.replay.cli", "mcp", f"--connect={handle.url}", "--log", str(log)]
    refused = subprocess.run(
        [*base, f"--session={g.session_id}"],
        env=proxy_env("not-the-token"),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert refused.returncode == 2, refused.stderr
    assert (
        log.read_text(encoding="utf-8")
        .splitlines()[-1]
        .endswith(f"refused (exit 2): replay server: no open session {g.session_id!r} (404)")
    ), log.read_text(encoding="utf-8")
    log.unlink()
    proc = subprocess.Popen(
        [*base, f"--session={g.session_id}"],
        env=proxy_env(g.token),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while "serving MCP" not in (log.read_text(encoding="utf-8") if log.exists() else ""):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        proc.terminate()
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    assert log.read_text(encoding="utf-8").splitlines()[-1].endswith("ended by signal SIGTERM")
    wrong = subprocess.run(
        [sys.executable, "-m", "ctbench.replay.cli", "mcp", ALL_TASK, "--log", str(log)],
        env=proxy_env(None),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wrong.returncode == 2 and "--log applies to --connect" in wrong.stderr
    unwritable = subprocess.run(  # the log is for afterwards: without it the proxy still does its work
        [*base[:-1], str(tmp_path / "no-such-folder" / "proxy.log"), f"--session={g.session_id}"],
        env=proxy_env("not-the-token"),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert unwritable.returncode == 2 and "cannot open" in unwritable.stderr, unwritable.stderr
    assert "no open session" in unwritable.stderr and "Traceback" not in unwritable.stderr


# --------------------------------------------------------------------------- runner mode


def probes(url: str, sid: str, token: str | None) -> dict[str, int]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=url, headers=headers, trust_env=False) as http:
        return {
            "summary": http.get(f"/sessions/{sid}").status_code,
            "devices": http.get(f"/sessions/{sid}/devices").status_code,
            "run": http.post(
                f"/sessions/{sid}/run", json={"device": "VRP_01", "command": "dis int br"}
            ).status_code,
            "submit": http.post(f"/sessions/{sid}/submit", json={"answer": "stolen"}).status_code,
            "trajectory": http.get(f"/sessions/{sid}/trajectory").status_code,
            "complete": http.post(
                f"/sessions/{sid}/complete", json={"device": "VRP_01", "line": "dis"}
            ).status_code,
        }


def test_runner_mode_grants_a_session_only_to_its_token(vendor_root: Path) -> None:
    engine = ReplayEngine(TaskSet.open(vendor_root))
    with serve_in_thread(engine, runner=True) as handle:
        g, session = grant(handle, engine)
        other, _ = grant(handle, engine)
        denied = {
            "summary": 404,
            "devices": 404,
            "run": 404,
            "submit": 404,
            "trajectory": 404,
            "complete": 404,
        }
        for token in (None, "", "x" * 43, other.token, g.session_id, g.token + "x", g.token.upper()):
            assert probes(handle.url, g.session_id, token) == denied, token
        assert session.calls == 0 and session.answer is None
        # a missing token and a wrong one are indistinguishable from an id that never existed
        never = httpx.get(f"{handle.url}/sessions/nope").json()
        wrong = httpx.get(
            f"{handle.url}/sessions/{g.session_id}", headers={"authorization": f"Bearer {other.token}"}
        ).json()
        assert never["error"]["code"] == wrong["error"]["code"] == "unknown_session"
        # clients cannot open, close or count sessions
        r = httpx.post(f"{handle.url}/sessions", json={"task_id": ALL_TASK})
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
        assert httpx.get(f"{handle.url}/health").json() == {"status": "ok"}
        assert (
            httpx.delete(
                f"{handle.url}/sessions/{g.session_id}", headers={"authorization": f"Bearer {g.token}"}
            ).status_code
            == 403
        )
        assert httpx.get(f"{handle.url}/sessions").status_code in (404, 405)
        # the right token works, and nothing it returns names a host path
        assert probes(handle.url, g.session_id, g.token) == {k: 200 for k in denied}
        with ReplayClient(handle.url, g.session_id, token=g.token) as client:
            summary = client.summary()
        assert summary["trajectory"] is None and summary["calls"] == 1
        assert str(vendor_root) not in json.dumps(summary) and "/" not in json.dumps(summary["answer"])


def test_the_same_probes_reach_a_standalone_session(vendor_root: Path) -> None:
    """The probes above are real: against a standalone server a session id alone opens the session,
    which is what runner mode must refuse."""
    engine = ReplayEngine(TaskSet.open(vendor_root))
    with serve_in_thread(engine) as handle:
        session = engine.open_session(ALL_TASK)
        handle.registry.add(session)
        assert set(probes(handle.url, session.id, None).values()) == {200}
        assert session.answer is not None and session.answer.answer == "stolen"


def test_runner_registry_refuses_add_without_token(vendor_root: Path) -> None:
    engine = ReplayEngine(TaskSet.open(vendor_root))
    reg = SessionRegistry(engine, runner=True)
    with pytest.raises(Exception, match="grant"):
        reg.add(engine.open_session(ALL_TASK))


def test_standalone_summary_names_the_trajectory_only_as_the_client_did(
    vendor_root: Path, tmp_path: Path
) -> None:
    engine = ReplayEngine(TaskSet.open(vendor_root))
    reg = SessionRegistry(engine, trajectory_root=tmp_path / "traj")
    with serve_in_thread(engine, registry=reg) as handle:
        r = httpx.post(f"{handle.url}/sessions", json={"task_id": ALL_TASK, "trajectory": "a/b.jsonl"})
        sid = r.json()["session_id"]
        summary = httpx.get(f"{handle.url}/sessions/{sid}").json()
        assert summary["trajectory"] == "a/b.jsonl"
        closed = httpx.delete(f"{handle.url}/sessions/{sid}").json()
        assert closed["trajectory"] == "a/b.jsonl" and str(tmp_path) not in json.dumps(closed)
    assert (tmp_path / "traj" / "a" / "b.jsonl").exists()
