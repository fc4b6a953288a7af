"""The MCP server through the real MCP client: stdio (a subprocess) and streamable HTTP (127.0.0.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.test_replay_support import (
    ALL_TASK,
    GOLD_STRINGS,
    HOSTILE_TASK,
    build_vendor_task_set,
    captures,
    gold_strings,
)

REPO = Path(__file__).resolve().parents[1]
ENV = {"PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def vendor_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_vendor_task_set(tmp_path_factory.mktemp("mcp") / "tasks")


@asynccontextmanager
async def stdio_session(*args: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ctbench.replay.cli", "mcp", *args], env=ENV, cwd=str(REPO)
    )
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def text(result: Any) -> str:
    return "".join(block.text for block in result.content)


def run_async(fn: Callable[[], Awaitable[None]]) -> None:
    anyio.run(fn)


def recording(device: str, command: str) -> bytes:
    return next(c.source.read_bytes() for c in captures() if c.device == device and c.command == command)


# --------------------------------------------------------------------------- stdio


def test_stdio_tools_behave_like_the_devices(vendor_root: Path, tmp_path: Path) -> None:
    traj = tmp_path / "trajectories" / f"{ALL_TASK}.jsonl"
    answer = tmp_path / "answer.txt"

    async def main() -> None:
        async with stdio_session(
            ALL_TASK, "--tasks", str(vendor_root), "--trajectory", str(traj), "--answer", str(answer)
        ) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {"list_devices", "run_command", "submit_answer"}
            assert tools["list_devices"].annotations.read_only_hint is True
            assert tools["run_command"].annotations.read_only_hint is True
            assert tools["submit_answer"].annotations.destructive_hint is False
            assert tools["run_command"].input_schema["required"] == ["device", "command"]

            listing = await s.call_tool("list_devices", {})
            assert not listing.is_error
            assert "VRP_01" in text(listing) and "Juniper" in text(listing) and "PC_01" not in text(listing)

            full = await s.call_tool(
                "run_command", {"device": "IOS_01", "command": "show ip interface brief"}
            )
            short = await s.call_tool("run_command", {"device": "IOS_01", "command": "sh ip int br"})
            assert not full.is_error and text(full) == text(short)
            assert text(full) == recording("IOS_01", "show ip interface brief").decode()
            assert full.meta["outcome"] == "recorded"

            bad = await s.call_tool("run_command", {"device": "VRP_01", "command": "display foo"})
            assert bad.is_error
            lines = text(bad).split("\n")
            assert lines[0] == "<VRP_01>display foo"
            assert lines[0][lines[1].index("^") :].startswith("foo")
            assert "Error: Unrecognized command found at '^' position." in text(bad)

            denied = await s.call_tool("run_command", {"device": "VRP_01", "command": "display ospf peer"})
            assert not denied.is_error and denied.meta["outcome"] == "denied" and text(denied).strip()

            unknown = await s.call_tool("run_command", {"device": "SECRET_RTR", "command": "show version"})
            assert unknown.is_error and "Accessible devices" in text(unknown)

            missing = await s.call_tool("run_command", {"device": "VRP_01"})
            assert missing.is_error and "missing command" in text(missing)
            wrong = await s.call_tool("run_command", {"device": "VRP_01", "command": 7})
            assert wrong.is_error
            nope = await s.call_tool("reboot_everything", {})
            assert nope.is_error

            sub = await s.call_tool("submit_answer", {"answer": "VRP_01;GE0/0/1;shutdown"})
            assert not sub.is_error and "1 line" in text(sub)

    run_async(main)
    assert answer.read_text() == "VRP_01;GE0/0/1;shutdown\n"
    rows = [json.loads(x) for x in traj.read_text().splitlines()]
    assert [r["outcome"] for r in rows] == ["recorded", "recorded", "invalid", "denied", "unknown-device"]
    assert rows[1]["canonical"] == "show ip interface brief"


def test_stdio_survives_hostile_input(vendor_root: Path) -> None:
    async def main() -> None:
        async with stdio_session(ALL_TASK, "--tasks", str(vendor_root)) as s:
            hostile = [
                ("VRP_01", "display " + "A" * 10_000_000),
                ("VRP_01", "dis ver\x00\x1b[31m"),
                ("VRP_01", "dis ver\ndisplay current-configuration"),
                ("../../etc/passwd", "display version"),
                ("VRP_01", "../../etc/passwd"),
                ("VRP_01", "display 版本 🙂"),
                ("V" * 100_000, "show version"),
            ]
            for device, command in hostile:
                res = await s.call_tool("run_command", {"device": device, "command": command})
                assert res.is_error, (device[:20], command[:40])
                assert len(text(res)) < 5000 and "root:" not in text(res)
            ok = await s.call_tool("run_command", {"device": "VRP_01", "command": "dis int br"})
            assert not ok.is_error and text(ok) == recording("VRP_01", "display interface brief").decode()

    run_async(main)


def test_no_mcp_response_contains_the_gold(vendor_root: Path) -> None:
    seen: list[str] = []

    async def probe(task: str, tasks_dir: Path, devices_cmds: list[tuple[str, str]]) -> None:
        async with stdio_session(task, "--tasks", str(tasks_dir)) as s:
            seen.append(text(await s.call_tool("list_devices", {})))
            seen.append(json.dumps([t.model_dump(mode="json") for t in (await s.list_tools()).tools]))
            seen.append(s.initialize_result.model_dump_json() if s.initialize_result else "")
            for device, command in devices_cmds:
                res = await s.call_tool("run_command", {"device": device, "command": command})
                seen.append(text(res) + json.dumps(res.meta))
            seen.append(text(await s.call_tool("submit_answer", {"answer": "guess"})))

    probes = [
        (d, c)
        for d in ("VRP_01", "IOS_01")
        for c in (
            "display version",
            "display interface brief",
            "display vlan",
            "display arp all",
            "display device",
            "display startup",
            "display eth-trunk",
            "display mac-address",
            "display lldp neighbor",
            "display current-configuration",
            "../hidden.yaml",
            "show running-config",
            "show version",
        )
    ]
    bundled = REPO / "tasks"
    real_probes = [
        (d, c)
        for d in ("CORE_SW_01", "FW_01", "GW_01", "PE_01", "ACC_SW_01")
        for c in (
            "display interface brief",
            "display current-configuration interface GigabitEthernet0/0/24",
            "display ip routing-table",
            "show ip route",
            "show route",
            "display version",
            "show running-config",
        )
    ]

    async def main() -> None:
        await probe(HOSTILE_TASK, vendor_root, probes)
        await probe("RCA-001", bundled, real_probes)

    run_async(main)
    everything = "\n".join(seen)
    assert "Huawei Versatile Routing Platform" in everything  # the probes did reach recordings
    for gold in [*GOLD_STRINGS, *gold_strings(bundled / "rca" / "RCA-001")]:
        assert gold not in everything, gold


# --------------------------------------------------------------------------- streamable HTTP


def start_http_server(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctbench.replay.cli", "mcp", *args, "--http", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **ENV},
        cwd=str(REPO),
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
    return proc, url


def test_streamable_http(vendor_root: Path, tmp_path: Path) -> None:
    traj = tmp_path / "http.jsonl"
    proc, url = start_http_server(ALL_TASK, "--tasks", str(vendor_root), "--trajectory", str(traj))
    try:

        async def main() -> None:
            deadline = time.monotonic() + 20
            while True:
                try:
                    async with streamable_http_client(url) as (read, write):
                        async with ClientSession(read, write) as s:
                            await s.initialize()
                            tools = {t.name: t for t in (await s.list_tools()).tools}
                            assert tools["run_command"].annotations.read_only_hint is True
                            r = await s.call_tool(
                                "run_command", {"device": "JUN_01", "command": "sh int terse"}
                            )
                            assert text(r) == recording("JUN_01", "show interfaces terse").decode()
                            bad = await s.call_tool("run_command", {"device": "JUN_01", "command": "sh o ne"})
                            assert bad.is_error and "is ambiguous" in text(bad)
                            big = await s.call_tool(
                                "run_command", {"device": "JUN_01", "command": "x" * 500_000}
                            )
                            assert big.is_error and "too long" in text(big)
                            sub = await s.call_tool("submit_answer", {"answer": "a\nb\n"})
                            assert "2 line" in text(sub)
                            return
                except (OSError, ExceptionGroup) as exc:  # server still starting
                    if time.monotonic() > deadline:
                        raise AssertionError(f"MCP HTTP server not answering: {exc!r}") from None
                    await anyio.sleep(0.2)

        run_async(main)
        assert proc.poll() is None, "server died"
        rows = [json.loads(x) for x in traj.read_text().splitlines()]
        assert [r["outcome"] for r in rows] == ["recorded", "invalid", "invalid"]
    finally:
        proc.terminate()
        proc.wait(10)


def test_mcp_command_reports_bad_arguments_cleanly(vendor_root: Path) -> None:
    for args in (
        ["NOPE-404", "--tasks", str(vendor_root)],
        [ALL_TASK, "--tasks", str(vendor_root), "--http", "x"],
        [ALL_TASK, "--tasks", str(vendor_root / "missing")],
    ):
        r = subprocess.run(
            [sys.executable, "-m", "ctbench.replay.cli", "mcp", *args],
            capture_output=True,
            text=True,
            env={**os.environ, **ENV},
            cwd=str(REPO),
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert r.returncode != 0 and "Traceback" not in r.stderr and r.stderr.startswith("ctb-replay:"), (
            r.stderr
        )
