"""The ``openai`` agent against a scripted OpenAI-compatible server on 127.0.0.1, over real HTTP.

The server is a small Starlette app served by uvicorn in a thread. It plays a fixed script chosen by
the model name: tool calls first (``list_devices``, two ``run_command`` in one round, one call with
broken JSON arguments), then a final answer - as a plain final message or through ``submit_answer``.
It records every request so the tests can check what the agent actually sent back to the model.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ctbench.evaluate.runfolder import RunFolder
from ctbench.evaluate.runner import Runner, RunSettings
from ctbench.evaluate.transcript import read_transcript, transcript_path
from tests.conftest import run_cli
from tests.test_runner import results

ANSWER = "CORE_SW_01;GigabitEthernet0/0/24;shutdown"


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


SCRIPT: list[list[dict[str, Any]]] = [
    [_call("c1", "list_devices", "{}")],
    [
        _call("c2", "run_command", json.dumps({"device": "CORE_SW_01", "command": "dis int br"})),
        _call("c3", "run_command", json.dumps({"device": "NOPE_99", "command": "show version"})),
    ],
    [_call("c4", "run_command", "{not json")],
]


@dataclass
class ScriptedServer:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    failures_left: int = 0


def _app(state: ScriptedServer) -> Starlette:
    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        state.requests.append(body)
        state.headers.append(dict(request.headers))
        model = body["model"]
        if model == "scripted-refuse":
            return JSONResponse(
                {
                    "error": {
                        "message": "model 'scripted-refuse' does not exist",
                        "type": "invalid_request_error",
                    }
                },
                status_code=404,
            )
        if model == "scripted-flaky" and state.failures_left > 0:
            state.failures_left -= 1
            return JSONResponse(
                {"error": {"message": "overloaded"}}, status_code=503, headers={"x-should-retry": "false"}
            )
        step = sum(1 for m in body["messages"] if m["role"] == "assistant")
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if model == "scripted-invalid" and step == 0:
            message["tool_calls"] = [
                _call(
                    "c1",
                    "run_command",
                    json.dumps({"device": "CORE_SW_01", "command": "display interfaec brief"}),
                )
            ]
            finish = "tool_calls"
        elif step < len(SCRIPT) and model not in ("scripted-flaky", "scripted-invalid"):
            message["tool_calls"] = SCRIPT[step]
            finish = "tool_calls"
        elif model == "scripted-submit":
            message["tool_calls"] = [_call("c9", "submit_answer", json.dumps({"answer": ANSWER}))]
            finish = "tool_calls"
        else:
            message["content"] = f"The core switch port is shut down.\n<answer>\n{ANSWER}\n</answer>"
            finish = "stop"
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(state.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {
                    "prompt_tokens": 100 * (step + 1),
                    "completion_tokens": 10 + step,
                    "total_tokens": 100 * (step + 1) + 10 + step,
                },
            }
        )

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    state = ScriptedServer(url=f"http://127.0.0.1:{sock.getsockname()[1]}/v1")
    server = uvicorn.Server(uvicorn.Config(_app(state), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "scripted server did not start"
        time.sleep(0.01)
    yield state
    server.should_exit = True
    thread.join(10)
    sock.close()


def test_openai_agent_end_to_end_through_the_cli(
    scripted: ScriptedServer, task_set: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    proc = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "openai",
        "--model",
        "scripted-final",
        "--base-url",
        scripted.url,
        "--tasks",
        str(task_set),
        "--select",
        "RCA-001",
        "--out",
        str(out),
        "--progress",
        "plain",
        "--no-score",
        env={"CTBENCH_API_KEY": "sk-test-123", "OPENAI_API_KEY": ""},
    )
    assert proc.returncode == 0, proc.stderr
    (line,) = results(out)
    assert line["status"] == "answered" and line["answer_source"] == "final_message"
    assert line["answer"]["rca"] == [
        {"node": "CORE_SW_01", "object": "GigabitEthernet0/0/24", "label": "shutdown"}
    ]
    # Four model requests; usage summed from the responses.
    assert line["rounds"] == len(scripted.requests) == 4
    assert line["input_tokens"] == 100 + 200 + 300 + 400 and line["output_tokens"] == 10 + 11 + 12 + 13
    # What the model was given: the one prompt, the three tools, the key from CTBENCH_API_KEY.
    first = scripted.requests[0]
    assert first["model"] == "scripted-final"
    assert first["messages"][0]["role"] == "user" and "question RCA-001" in first["messages"][0]["content"]
    assert {t["function"]["name"] for t in first["tools"]} == {"list_devices", "run_command", "submit_answer"}
    assert scripted.headers[0]["authorization"] == "Bearer sk-test-123"
    # What came back from the tools, round by round.
    tool_messages = [m for m in scripted.requests[-1]["messages"] if m["role"] == "tool"]
    by_id = {m["tool_call_id"]: m["content"] for m in tool_messages}
    devices = json.loads(by_id["c1"])
    assert [d["name"] for d in devices] == ["ACC_SW_01", "CORE_SW_01", "FW_01", "GW_01", "PE_01"]
    assert "GigabitEthernet0/0/24" in by_id["c2"]  # the recorded output of display interface brief
    assert "Unknown device" in by_id["c3"] and "CORE_SW_01" in by_id["c3"]
    assert by_id["c4"].startswith("error: the arguments are not a JSON object")
    assistant = [m for m in scripted.requests[-1]["messages"] if m["role"] == "assistant"]
    assert [c["id"] for c in assistant[1]["tool_calls"]] == ["c2", "c3"]
    # The trajectory holds the two replay calls, with canonical command and outcome.
    trajectory = [json.loads(t) for t in (out / line["trajectory"]).read_text().splitlines()]
    assert [(t["device"], t["canonical"], t["outcome"]) for t in trajectory] == [
        ("CORE_SW_01", "display interface brief", "recorded"),
        ("NOPE_99", None, "unknown-device"),
    ]
    log = (out / line["log"]).read_text(encoding="utf-8")
    assert "[assistant, round 4]" in log and "The core switch port is shut down." in log
    # The transcript is the conversation the endpoint saw: its last request's messages, then the reply.
    said, warnings = read_transcript(transcript_path(out, "RCA-001"))
    assert not warnings and [e.kind for e in said][0] == "prompt"
    seen = scripted.requests[-1]["messages"]
    assert [e.kind for e in said[1:-1]] == [
        "model" if m["role"] == "assistant" else "tool_result" for m in seen[1:]
    ]
    for entry, message in zip(said[1:-1], seen[1:], strict=True):
        if entry.kind == "tool_result":
            assert (entry.call_id, entry.content) == (message["tool_call_id"], message["content"])
        else:
            assert [c.id for c in entry.tool_calls] == [c["id"] for c in message.get("tool_calls") or []]
    assert said[-1].kind == "model" and said[-1].text == line["answer_text"]  # the final message
    assert [e.usage.input for e in said if e.usage] == [100, 200, 300, 400]
    assert all(a.t <= b.t for a, b in zip(said, said[1:], strict=False))  # type: ignore[operator]
    config = (out / "run.yaml").read_text(encoding="utf-8")
    assert "openai" in config and "scripted-final" in config and "sk-test" not in config


def test_submit_answer_tool_ends_the_loop(
    scripted: ScriptedServer, task_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    report = Runner(
        RunSettings(
            allow_unreviewed=True,
            agent="openai",
            model="scripted-submit",
            base_url=scripted.url,
            tasks=task_set,
            select="RCA-001",
            out=tmp_path / "run",
        )
    ).run()
    (line,) = results(report.folder)
    assert (
        line["status"] == "answered" and line["answer_source"] == "submit" and line["answer_text"] == ANSWER
    )
    assert line["rounds"] == 4 == len(scripted.requests)


def test_round_limit_and_refusal(
    scripted: ScriptedServer, task_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    report = Runner(
        RunSettings(
            allow_unreviewed=True,
            agent="openai",
            model="scripted-final",
            base_url=scripted.url,
            tasks=task_set,
            select="RCA-001",
            out=tmp_path / "limited",
            max_rounds=2,
        )
    ).run()
    (line,) = results(report.folder)
    assert (line["status"], line["rounds"], line["answer"]["status"]) == ("unparsable", 2, "empty")
    assert line["input_tokens"] == 300 and line["output_tokens"] == 21
    assert line["notes"] == ["round limit 2 reached"]

    report = Runner(
        RunSettings(
            allow_unreviewed=True,
            agent="openai",
            model="scripted-refuse",
            base_url=scripted.url,
            tasks=task_set,
            select="RCA-001",
            out=tmp_path / "refused",
            retries=2,
        )
    ).run()
    (line,) = results(report.folder)
    assert (line["status"], line["error_kind"], line["attempts"]) == ("error", "agent", 1)
    assert "HTTP 404" in line["error"] and "does not exist" in line["error"]


def test_unavailable_endpoint_is_an_infrastructure_error_and_is_retried(
    scripted: ScriptedServer, task_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setattr("ctbench.evaluate.runner.RETRY_BACKOFF_S", 0.0)
    scripted.failures_left = 1
    report = Runner(
        RunSettings(
            allow_unreviewed=True,
            agent="openai",
            model="scripted-flaky",
            base_url=scripted.url,
            tasks=task_set,
            select="RCA-001",
            out=tmp_path / "run",
        )
    ).run()
    (line,) = results(report.folder)
    assert line["status"] == "answered" and line["attempts"] == 2
    assert len(line["retries"]) == 1 and "InternalServerError" in line["retries"][0]["error"]


def test_retry_errors_reruns_only_tasks_the_endpoint_failed(
    scripted: ScriptedServer, task_set: Path, tmp_path: Path
) -> None:
    """Endpoint down for the first task, no retries: exit 1; `--resume DIR --retry-errors` reruns just it."""
    out = tmp_path / "run"
    env = {"CTBENCH_API_KEY": "sk-test", "OPENAI_API_KEY": ""}
    scripted.failures_left = 1
    first = run_cli(
        "evaluate",
        "run",
        "--allow-unreviewed",
        "--agent",
        "openai",
        "--model",
        "scripted-flaky",
        "--base-url",
        scripted.url,
        "--tasks",
        str(task_set),
        "--select",
        "RCA-001,RCA-002",
        "--concurrency",
        "1",
        "--retries",
        "0",
        "--out",
        str(out),
        "--progress",
        "plain",
        "--no-score",
        env=env,
    )
    assert first.returncode == 1, first.stderr
    before = results(out)
    assert [(r["task_id"], r["status"], r.get("error_kind")) for r in before] == [
        ("RCA-001", "error", "infrastructure"),
        ("RCA-002", "answered", None),
    ]

    plain = run_cli("evaluate", "run", "--resume", str(out), "--progress", "plain", "--no-score", env=env)
    assert plain.returncode == 1 and results(out) == before  # a plain resume leaves the error as the result

    again = run_cli("evaluate", "run", "--resume", str(out), "--retry-errors", "--progress", "plain", env=env)
    assert again.returncode == 0, again.stderr
    assert "running again 1 task(s)" in again.stderr
    after = results(out)
    assert after[:2] == before  # the error line is kept; the rerun is appended
    assert [(r["task_id"], r["status"]) for r in after[2:]] == [("RCA-001", "answered")]
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert scores["summary"]["rca"]["status"]["answered"] == 2  # the rerun's line is scored, not the error
    assert "RCA-001" not in scores["failures"]["tasks"]  # and it holds the right answer
    assert not any("more than one result line" in w for w in scores["warnings"])
    resumes = RunFolder(out).load_config().resumes
    assert [r.retried_errors for r in resumes] == [[], ["RCA-001"]]


def test_invalid_command_gives_the_model_the_echoed_line(
    scripted: ScriptedServer, task_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The device's caret points into the echoed ``<prompt><command>`` line, so the model must get that
    line too - the same text the MCP server returns for the same mistake."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    report = Runner(
        RunSettings(
            allow_unreviewed=True,
            agent="openai",
            model="scripted-invalid",
            base_url=scripted.url,
            tasks=task_set,
            select="RCA-001",
            out=tmp_path / "run",
        )
    ).run()
    (line,) = results(report.folder)
    assert line["status"] == "answered" and line["rounds"] == 2
    (tool,) = [m for m in scripted.requests[-1]["messages"] if m["role"] == "tool"]
    lines = tool["content"].splitlines()
    assert lines[0] == "<CORE_SW_01>display interfaec brief"
    caret = lines[1].index("^")
    assert (
        lines[1].strip() == "^" and lines[0][caret:] == "interfaec brief"
    )  # under the typo, past the prompt
    assert "Unrecognized command" in lines[2]
