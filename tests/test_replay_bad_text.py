"""Text that is not valid Unicode, and JSON built to break parsers, on every transport (issue 16, items 1-2).

Through the real ``ctb-replay serve`` (HTTP, raw request bodies: a JSON client library would refuse
to write most of these), the real ``ctb-replay mcp`` on stdio (raw JSON-RPC lines: the MCP client
cannot serialise a lone surrogate, a hostile agent's own client can), the MCP streamable HTTP
transport, and a real ``ctb-eval run`` whose agent submits a lone surrogate. Every request gets a
clean answer, every command is recorded, the session goes on, and no stderr holds a traceback.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ctbench.evaluate.runfolder import ResultLine, RunFolder
from ctbench.replay.http_body import MAX_DEPTH, nesting_depth, parse_json
from ctbench.safetext import first_bad_char, scrub
from tests.conftest import copy_starters, needs_bwrap
from tests.test_runner import agent_script, results

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
ENV.pop("CTBENCH_DEBUG", None)
JSON = {"content-type": "application/json"}

BROKEN_COMMANDS = [  # raw JSON text of the command, and what the trajectory must hold
    (r'"dis \ud800"', "dis \ufffd"),
    (r'"\udfff"', "\ufffd"),
    (r'"display\udc80 version"', "display\ufffd version"),
    (r'"dis int br \ud83d"', "dis int br \ufffd"),  # a high surrogate with no low one after it
]
DEEP = [
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    '{"device":' + "[{" * 40 + "]}" * 40 + "}",
]
HUGE_NUMBERS = ["1" * 100_000, "-" + "9" * 5000, "0." + "1" * 1000, "1e" + "9" * 200]


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_starters(tmp_path_factory.mktemp("badtext") / "tasks")


@pytest.fixture(scope="module")
def server(tasks: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    traj_root = tmp_path_factory.mktemp("trajectories")
    errlog = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ctbench.replay.cli",
            "serve",
            "--port",
            "0",
            "--tasks",
            str(tasks),
            "--trajectories",
            str(traj_root),
        ],
        stdout=subprocess.PIPE,
        stderr=errlog,
        text=True,
        env=ENV,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    for _ in range(200):
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.05)
    try:
        yield url, traj_root
    finally:
        proc.terminate()
        proc.wait(10)
        errlog.seek(0)
        err = errlog.read()
        assert "Traceback" not in err and "Exception" not in err, err[-3000:]


def post_raw(client: httpx.Client, path: str, body: str) -> httpx.Response:
    return client.post(path, content=body.encode("utf-8"), headers=JSON)


def open_session(client: httpx.Client, trajectory: str | None = None) -> str:
    body: dict[str, Any] = {"task_id": "RCA-001"}
    if trajectory:
        body["trajectory"] = trajectory
    r = client.post("/sessions", json=body)
    assert r.status_code == 201, r.text
    return r.json()["session_id"]


# --------------------------------------------------------------------------- HTTP


def test_http_broken_text_is_answered_recorded_and_the_session_goes_on(server: tuple[str, Path]) -> None:
    url, traj_root = server
    with httpx.Client(base_url=url, timeout=30) as c:
        sid = open_session(c, "broken.jsonl")
        expected = []
        for raw, shown in BROKEN_COMMANDS:
            r = post_raw(c, f"/sessions/{sid}/run", f'{{"device":"CORE_SW_01","command":{raw}}}')
            assert r.status_code == 200, r.text
            obs = r.json()
            assert obs["outcome"] == "invalid" and obs["command"] == shown
            assert "not valid Unicode" in obs["text"] and "surrogate" in obs["text"], obs["text"]
            expected.append(("CORE_SW_01", shown, "invalid"))
        for device in (r'"CORE_SW_01\ud800"', r'"\udc00"', r'"FW\udbff_01"'):
            r = post_raw(c, f"/sessions/{sid}/run", f'{{"device":{device},"command":"dis int br"}}')
            assert r.status_code == 200, r.text
            assert r.json()["outcome"] == "unknown-device" and "Accessible devices" in r.json()["text"]
            expected.append(
                (
                    json.loads(device)
                    .replace("\ud800", "\ufffd")
                    .replace("\udc00", "\ufffd")
                    .replace("\udbff", "\ufffd"),
                    "dis int br",
                    "unknown-device",
                )
            )
        for answer in (r'"CORE_SW_01;GE0/0/24;shutdown\ud800"', r'"\udfff"', r'"ok\ufffd"'):
            r = post_raw(c, f"/sessions/{sid}/submit", f'{{"answer":{answer}}}')
            assert r.status_code == 422, r.text
            assert "not valid Unicode" in r.json()["error"]["message"]
        # the session is not poisoned: a good call, a good answer, the summary and the trajectory all work
        ok = c.post(f"/sessions/{sid}/run", json={"device": "CORE_SW_01", "command": "dis int br"})
        assert ok.status_code == 200 and ok.json()["outcome"] == "recorded"
        expected.append(("CORE_SW_01", "dis int br", "recorded"))
        sub = c.post(f"/sessions/{sid}/submit", json={"answer": "CORE_SW_01;GE0/0/24;shutdown"})
        assert sub.status_code == 200 and sub.json()["count"] == 1  # the refused answers never counted
        summary = c.get(f"/sessions/{sid}")
        assert summary.status_code == 200 and summary.json()["calls"] == len(expected)
        records = c.get(f"/sessions/{sid}/trajectory").json()["records"]
        assert [(r["device"], r["command"], r["outcome"]) for r in records] == expected
        assert c.delete(f"/sessions/{sid}").status_code == 200
    on_disk = [
        json.loads(line) for line in (traj_root / "broken.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [(r["device"], r["command"], r["outcome"]) for r in on_disk] == expected


def test_http_paired_surrogate_escapes_are_ordinary_text(server: tuple[str, Path]) -> None:
    url, _ = server
    with httpx.Client(base_url=url, timeout=30) as c:
        sid = open_session(c)
        r = post_raw(c, f"/sessions/{sid}/run", r'{"device":"CORE_SW_01","command":"dis \ud83d\ude00"}')
        assert r.status_code == 200 and r.json()["command"] == "dis \U0001f600"
        assert "not valid Unicode" not in r.json()["text"]
        sub = post_raw(
            c, f"/sessions/{sid}/submit", r'{"answer":"CORE_SW_01;GE0/0/24;shutdown \ud83d\ude00"}'
        )
        assert sub.status_code == 200, sub.text


@pytest.mark.parametrize(
    "body",
    [
        r'{"task_id":"RCA-001\ud800"}',
        r'{"task_id":"\udc00"}',
        r'{"task_id":"RCA-001","trajectory":"x\ud800.jsonl"}',
        r'{"task_id":"RCA-001","\ud800":1}',
    ],
)
def test_http_broken_text_when_opening_a_session_is_a_4xx(server: tuple[str, Path], body: str) -> None:
    url, _ = server
    r = post_raw(httpx.Client(base_url=url, timeout=30), "/sessions", body)
    assert 400 <= r.status_code < 500, r.text
    assert r.json()["error"]["message"]


HOSTILE_VALUES = DEEP + HUGE_NUMBERS + ["NaN", "Infinity", "-Infinity"]


@pytest.mark.parametrize("value", HOSTILE_VALUES, ids=[f"{v[:12]}..{len(v)}" for v in HOSTILE_VALUES])
def test_http_hostile_json_is_a_400_not_a_500(server: tuple[str, Path], value: str) -> None:
    url, _ = server
    with httpx.Client(base_url=url, timeout=60) as c:
        sid = open_session(c)
        for path, body in (
            (f"/sessions/{sid}/run", f'{{"device":"CORE_SW_01","command":"x","extra":{value}}}'),
            (f"/sessions/{sid}/submit", f'{{"answer":{value}}}'),
            ("/sessions", value),
            (f"/sessions/{sid}/run", value),
        ):
            r = post_raw(c, path, body)
            assert r.status_code == 400 and r.json()["error"]["code"] == "bad_json", (
                path,
                r.status_code,
                r.text,
            )
            assert len(r.text) < 500
        assert c.get(f"/sessions/{sid}").json()["calls"] == 0  # refused before anything was recorded
        ok = c.post(f"/sessions/{sid}/run", json={"device": "CORE_SW_01", "command": "dis int br"})
        assert ok.json()["outcome"] == "recorded"


def test_brackets_and_digits_inside_strings_are_just_text(server: tuple[str, Path]) -> None:
    url, _ = server
    with httpx.Client(base_url=url, timeout=30) as c:
        sid = open_session(c)
        command = "dis " + "[" * 500 + "{" * 500 + "9" * 1000
        r = c.post(f"/sessions/{sid}/run", json={"device": "CORE_SW_01", "command": command})
        assert r.status_code == 200 and r.json()["outcome"] == "invalid"
        r = c.post(f"/sessions/{sid}/submit", json={"answer": "[" * 5000 + '\\"{' * 100})
        assert r.status_code == 200


def test_body_limits_unit() -> None:
    assert nesting_depth(b'{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}') == 1
    assert (
        nesting_depth(b"[" * 40 + b"]" * 40) == MAX_DEPTH + 1
        and nesting_depth(b"[" * 40 + b"]" * 40, 50) == 40
    )
    assert nesting_depth(b'["\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["]') == 1
    assert parse_json(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) is not None
    assert first_bad_char("ok") is None and first_bad_char("a\ud800")[0] == 1  # type: ignore[index]
    assert scrub("a\ud800b\udfff") == "a\ufffdb\ufffd" and scrub("é\U0001f600") == "é\U0001f600"


# --------------------------------------------------------------------------- MCP over stdio (raw JSON-RPC)


class RawMcp:
    """``ctb-replay mcp`` on stdio, spoken to line by line as a hand-written client would."""

    def __init__(self, tasks: Path, trajectory: Path) -> None:
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ctbench.replay.cli",
                "mcp",
                "RCA-001",
                "--tasks",
                str(tasks),
                "--trajectory",
                str(trajectory),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            env=ENV,
        )
        self.next_id = 1
        init = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        assert "result" in init, init
        self.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 30) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "the MCP server sent no reply"
        return json.loads(self.proc.stdout.readline())

    def request(
        self, method: str, params: dict[str, Any] | None = None, raw_params: str | None = None
    ) -> Any:
        ident = self.next_id
        self.next_id += 1
        params_text = raw_params if raw_params is not None else json.dumps(params or {})
        self.send(f'{{"jsonrpc":"2.0","id":{ident},"method":"{method}","params":{params_text}}}')
        msg = self.reply()
        assert msg["id"] == ident, msg
        return msg

    def call(self, name: str, raw_arguments: str) -> dict[str, Any]:
        msg = self.request("tools/call", raw_params=f'{{"name":"{name}","arguments":{raw_arguments}}}')
        assert "result" in msg, msg
        return msg["result"]

    def close(self) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(20)
        self.err.seek(0)
        return self.err.read()


def test_mcp_stdio_answers_every_hostile_line(tasks: Path, tmp_path: Path) -> None:
    traj = tmp_path / "mcp.jsonl"
    mcp = RawMcp(tasks, traj)
    try:
        expected = []
        for raw, shown in BROKEN_COMMANDS:
            res = mcp.call("run_command", f'{{"device":"CORE_SW_01","command":{raw}}}')
            assert res["isError"] and "not valid Unicode" in res["content"][0]["text"]
            expected.append(("CORE_SW_01", shown, "invalid"))
        for device in (r'"CORE_SW_01\ud800"', r'"\udc00"'):
            res = mcp.call("run_command", f'{{"device":{device},"command":"dis int br"}}')
            assert res["isError"] and "Accessible devices" in res["content"][0]["text"]
            expected.append(
                (
                    json.loads(device).replace("\ud800", "\ufffd").replace("\udc00", "\ufffd"),
                    "dis int br",
                    "unknown-device",
                )
            )
        for answer in (r'"CORE_SW_01;GE0/0/24;shutdown\ud800"', r'"\udfff"'):
            res = mcp.call("submit_answer", f'{{"answer":{answer}}}')
            assert res["isError"] and "not valid Unicode" in res["content"][0]["text"]
        for value in DEEP[:2] + HUGE_NUMBERS[:2] + ["NaN"]:
            res = mcp.call("run_command", f'{{"device":"CORE_SW_01","command":"dis int br","x":{value}}}')
            assert res["isError"] and "refused" in res["content"][0]["text"], res
            assert len(res["content"][0]["text"]) < 300
        # other methods with hostile params get an error reply for their id rather than silence
        msg = mcp.request(
            "tools/list", raw_params='{"cursor":"\\ud800", "x":' + "[" * 1000 + "]" * 1000 + "}"
        )
        assert "error" in msg
        ok = mcp.call("run_command", '{"device":"CORE_SW_01","command":"dis int br"}')
        assert not ok["isError"] and ok["_meta"]["outcome"] == "recorded"
        expected.append(("CORE_SW_01", "dis int br", "recorded"))
        assert not mcp.call("submit_answer", '{"answer":"CORE_SW_01;GE0/0/24;shutdown"}')["isError"]
    finally:
        err = mcp.close()
    assert "Traceback" not in err, err[-3000:]
    rows = [json.loads(line) for line in traj.read_text(encoding="utf-8").splitlines()]
    assert [(r["device"], r["command"], r["outcome"]) for r in rows] == expected


def sse_result(r: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a streamable-HTTP answer (an SSE stream or plain JSON)."""
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in r.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return r.json()


def test_mcp_streamable_http_answers_hostile_calls_like_stdio(tasks: Path, tmp_path: Path) -> None:
    traj = tmp_path / "http.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ctbench.replay.cli",
            "mcp",
            "RCA-001",
            "--tasks",
            str(tasks),
            "--trajectory",
            str(traj),
            "--http",
            "127.0.0.1:0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    headers = {**JSON, "accept": "application/json, text/event-stream"}
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        deadline = time.monotonic() + 20
        init = (
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
            '"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
        )
        while True:
            try:
                r = httpx.post(url, content=init.encode(), headers=headers, timeout=30)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline, "MCP HTTP server not answering"
                time.sleep(0.1)
        assert r.status_code == 200, r.text
        session = {
            **headers,
            "mcp-session-id": r.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-06-18",
        }
        assert (
            httpx.post(
                url,
                content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                headers=session,
                timeout=30,
            ).status_code
            == 202
        )

        def call(ident: int, name: str, raw_arguments: str) -> dict[str, Any]:
            body = (
                f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call","params":{{"name":"{name}",'
                f'"arguments":{raw_arguments}}}}}'
            )
            r = httpx.post(url, content=body.encode(), headers=session, timeout=60)
            assert r.status_code == 200, r.text[:300]
            msg = sse_result(r)
            assert msg["id"] == ident
            return msg["result"]

        expected = []
        for n, (raw, shown) in enumerate(BROKEN_COMMANDS):
            res = call(10 + n, "run_command", f'{{"device":"CORE_SW_01","command":{raw}}}')
            assert res["isError"] and "not valid Unicode" in res["content"][0]["text"]
            expected.append(("CORE_SW_01", shown, "invalid"))
        res = call(20, "submit_answer", r'{"answer":"CORE_SW_01;GE0/0/24;shutdown\ud800"}')
        assert res["isError"] and "not valid Unicode" in res["content"][0]["text"]
        for n, value in enumerate(DEEP[:2] + HUGE_NUMBERS[:2] + ["NaN"]):
            res = call(30 + n, "run_command", f'{{"device":"CORE_SW_01","command":"x","extra":{value}}}')
            assert res["isError"] and "refused" in res["content"][0]["text"]
        ok = call(40, "run_command", '{"device":"CORE_SW_01","command":"dis int br"}')
        assert not ok["isError"]
        expected.append(("CORE_SW_01", "dis int br", "recorded"))
        # a body with no request id to answer is a plain 4xx
        for junk in ("[" * 100_000, r'{"x":"\ud800"', r"\udc00", b"\xff\xfe".decode("latin-1")):
            r = httpx.post(url, content=junk.encode(), headers=session, timeout=30)
            assert 400 <= r.status_code < 500, (r.status_code, r.text[:200])
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert "Traceback" not in err, err[-3000:]
    rows = [json.loads(line) for line in traj.read_text(encoding="utf-8").splitlines()]
    assert [(r["device"], r["command"], r["outcome"]) for r in rows] == expected


# --------------------------------------------------------------------------- the runner


SURROGATE_AGENT = """\
import json, os, sys, urllib.error, urllib.request
sys.stdin.read()
url, sid = os.environ["CTBENCH_REPLAY_URL"], os.environ["CTBENCH_REPLAY_SESSION"]

def post(path, raw):
    req = urllib.request.Request(f"{url}/sessions/{sid}/{path}", data=raw.encode(),
                                 headers={"content-type": "application/json",
                                          "authorization": "Bearer " + os.environ["CTBENCH_REPLAY_TOKEN"]})
    try:
        return urllib.request.urlopen(req).status
    except urllib.error.HTTPError as exc:
        return exc.code

codes = [post("run", r'{"device":"CORE_SW_01","command":"dis int br\\ud800"}'),
         post("submit", r'{"answer":"CORE_SW_01;GE0/0/24;shutdown\\ud800"}'),
         post("run", '[' * 100000)]
print(json.dumps(codes), file=sys.stderr)
if sys.argv[1] == "then-good":
    post("submit", '{"answer":"CORE_SW_01;GE0/0/24;shutdown"}')
"""


@pytest.mark.parametrize("mode", ["then-good", "only-bad"])
@needs_bwrap
def test_run_survives_an_agent_that_sends_broken_text(tmp_path: Path, mode: str) -> None:
    tasks = copy_starters(tmp_path / "tasks")
    out = tmp_path / "run"
    cmd = agent_script(tmp_path, "agent.py", SURROGATE_AGENT) + f" {mode}"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctbench.evaluate.cli",
            "run",
            "--allow-unreviewed",
            "--agent",
            "command",
            "--agent-cmd",
            cmd,
            "--tasks",
            str(tasks),
            "--select",
            "RCA-001",
            "--out",
            str(out),
            "--progress",
            "none",
            "--no-score",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    (line,) = results(out)
    if mode == "then-good":
        assert line["status"] == "answered" and line["answer_text"].strip() == "CORE_SW_01;GE0/0/24;shutdown"
    else:
        assert line["status"] != "error" or line.get("error_kind") != "infrastructure", line
    rows = [
        json.loads(x)
        for x in (out / "trajectories" / "RCA-001.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert rows[0]["command"] == "dis int br\ufffd" and rows[0]["outcome"] == "invalid"
    log = (out / "logs" / "RCA-001.log").read_text(encoding="utf-8", errors="replace")
    assert "[200, 422, 400]" in log


def test_result_lines_with_any_string_are_written_and_read_back(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run")
    folder.lock()
    try:
        broken = ResultLine(
            task_id="RCA-001",
            family="rca",
            status="answered",
            answer_text="A;B;C\ud800",
            answer={"status": "unparsable", "invalid_lines": ["x\udfff"], "rca": []},
            error="bad \udc80",
            notes=["\ud800 note"],
            agent_said="\ud83d",
        )
        fine = ResultLine(task_id="RCA-002", family="rca", status="answered", answer_text="é 🙂")
        folder.append_result(broken)
        folder.append_result(fine)
    finally:
        folder.close()
    scan = RunFolder(tmp_path / "run").read_results()
    assert [r.task_id for r in scan.lines] == ["RCA-001", "RCA-002"] and scan.torn_bytes == 0
    first, second = scan.lines
    assert (
        first.answer_text == "A;B;C\ufffd" and first.error == "bad \ufffd" and first.notes == ["\ufffd note"]
    )
    assert first.answer == {"status": "unparsable", "invalid_lines": ["x\ufffd"], "rca": []}
    assert first.model_extra == {"agent_said": "\ufffd"}
    assert second.answer_text == "é 🙂"


def test_real_mcp_client_gets_an_error_for_hostile_arguments_and_goes_on(tasks: Path, tmp_path: Path) -> None:
    """The real MCP client cannot send a lone surrogate, but it can send what pydantic serialises:
    numbers of any size and deep nesting. Each call gets a tool error; the session goes on."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    traj = tmp_path / "client.jsonl"
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    hostile = [
        {"device": "CORE_SW_01", "command": "dis int br", "x": 10**5000},
        {"device": "CORE_SW_01", "command": deep},
        {"device": {"a": deep}, "command": "dis int br"},
        {"answer": 7},
    ]

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            env=ENV,
            args=[
                "-m",
                "ctbench.replay.cli",
                "mcp",
                "RCA-001",
                "--tasks",
                str(tasks),
                "--trajectory",
                str(traj),
            ],
        )
        with tempfile.TemporaryFile(mode="w+") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                for args in hostile:
                    name = "submit_answer" if "answer" in args else "run_command"
                    with anyio.fail_after(30):  # a reply, not a hang
                        res = await s.call_tool(name, args)
                    assert res.is_error, args
                ok = await s.call_tool("run_command", {"device": "CORE_SW_01", "command": "dis int br"})
                assert not ok.is_error and ok.meta and ok.meta["outcome"] == "recorded"
            errlog.seek(0)
            assert "Traceback" not in errlog.read()

    anyio.run(main)
    rows = [json.loads(line) for line in traj.read_text(encoding="utf-8").splitlines()]
    assert [r["outcome"] for r in rows] == ["recorded"]
