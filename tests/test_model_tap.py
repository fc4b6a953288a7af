"""The model tap reads what the endpoint said - the model it named, each response's usage, the tool
calls it made - from every API a harness speaks, streamed or not, and passes the bytes on unchanged.

The endpoint is the scripted model server on 127.0.0.1, naming a dated snapshot (not the model asked
for) in every reply; the client is the standard library's HTTP client through the tap's route, as a
harness CLI would reach it. The real CLIs through the tap are in test_harness_transcripts.py.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctbench.evaluate.model_tap import SOURCE, ModelTap, TapRoute, fill_usage
from ctbench.evaluate.transcript import ToolCall, TranscriptEntry
from tests.support.model_server import ScriptedModelServer, scripts_for, usage_for

SNAPSHOT = "scripted-model-2026-11-30"
TASK = "RCA-001"


@pytest.fixture
def tapped(task_set: Path) -> Iterator[tuple[ScriptedModelServer, ModelTap, TapRoute]]:
    with ScriptedModelServer(scripts_for(task_set, [TASK]), reported_model=SNAPSHOT) as model:
        tap = ModelTap(model.url + "/v1").start()
        try:
            yield model, tap, tap.open_route()
        finally:
            tap.stop()


def _post(url: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.headers.get("content-type", ""), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("content-type", ""), exc.read()


def _body(api: str, stream: bool) -> dict[str, Any]:
    """The first request of task RCA-001 (the server plays list_devices), with one ctb tool offered."""
    prompt = f"Diagnose task {TASK}."
    schema = {"type": "object", "properties": {}}
    if api == "chat":
        tools = [{"type": "function", "function": {"name": "mcp_ctb_list_devices", "parameters": schema}}]
        body = {"messages": [{"role": "user", "content": prompt}], "tools": tools}
        if stream:
            body["stream_options"] = {"include_usage": True}
    elif api == "messages":
        tools = [{"name": "mcp__ctb__list_devices", "input_schema": schema}]
        body = {"messages": [{"role": "user", "content": prompt}], "tools": tools, "max_tokens": 100}
    else:
        tools = [{"type": "function", "name": "mcp__ctb__list_devices", "parameters": schema}]
        body = {"input": [{"type": "message", "role": "user", "content": prompt}], "tools": tools}
    return {"model": "scripted-model", "stream": stream, **body}


PATHS = {"chat": "/chat/completions", "messages": "/messages", "responses": "/responses"}


@pytest.mark.parametrize(
    ("api", "stream"),
    [("chat", False), ("chat", True), ("messages", False), ("messages", True), ("responses", True)],
)
def test_the_tap_reads_model_and_usage_and_passes_the_reply_on(
    tapped: tuple[ScriptedModelServer, ModelTap, TapRoute], api: str, stream: bool
) -> None:
    model, tap, route = tapped
    body = _body(api, stream)
    _, _, direct = _post(model.url + "/v1" + PATHS[api], body)
    status, ctype, through = _post(route.base_url + PATHS[api], body)
    assert status == 200 and ("event-stream" in ctype) == stream, (status, ctype, through[:300])
    # the same reply as without the tap, but for the ids and times the server makes afresh
    assert len(through) == pytest.approx(len(direct), abs=40), (through[:400], direct[:400])
    (record,) = route.records()
    expected = usage_for(0)
    assert (record.api, record.status, record.stream, record.model) == (api, 200, stream, SNAPSHOT)
    assert record.usage is not None
    assert (record.usage.input, record.usage.cached, record.usage.output) == (
        expected.input,
        expected.cached,
        expected.output,
    )
    (call_id,) = record.call_ids
    assert call_id.encode() in through  # the id the agent saw is the one recorded
    assert [r.step for r in model.requests] == [0, 0]


def test_a_request_on_no_open_route_reaches_nothing(
    tapped: tuple[ScriptedModelServer, ModelTap, TapRoute],
) -> None:
    model, tap, route = tapped
    forged = f"{tap.url}/r/not-a-route/v1/chat/completions"
    status, _, text = _post(forged, _body("chat", False))
    assert status == 404 and b"no such route" in text
    route.close()  # an attempt that is over: its route is gone too
    status, _, _ = _post(route.base_url + "/chat/completions", _body("chat", False))
    assert status == 404
    assert model.requests == [] and route.records() == []


def test_an_unreachable_endpoint_ends_the_connection_as_without_the_tap() -> None:
    """No made-up HTTP error: the agent sees its connection end, as it would have, and retries or gives
    up as it would; the route keeps why for the task log."""
    tap = ModelTap("http://127.0.0.1:9/v1").start()  # the discard port: nothing listens
    try:
        route = tap.open_route()
        with pytest.raises((urllib.error.URLError, ConnectionError, http.client.HTTPException)):
            _post(route.base_url + "/chat/completions", _body("chat", False))
    finally:
        tap.stop()
    (why,) = route.failures
    assert why.startswith("http://127.0.0.1:9: ") and "refused" in why.lower(), why
    assert route.records() == []


def test_turns_get_the_usage_of_the_response_that_made_them(
    tapped: tuple[ScriptedModelServer, ModelTap, TapRoute],
) -> None:
    """Responses are matched to turns in order, by tool call id or text; a turn no response made gets
    no usage, and no response is used twice: the turns' usage sums to what the responses reported."""
    model, _, route = tapped
    url = route.base_url + "/chat/completions"
    _, _, first = _post(url, _body("chat", False))
    for question in ("Title this.", "Done?"):  # the server answers both "OK."
        _post(url, {"model": "scripted-model", "messages": [{"role": "user", "content": question}]})
    call = json.loads(first)["choices"][0]["message"]["tool_calls"][0]
    entries = [
        TranscriptEntry(kind="prompt", text="Diagnose"),
        TranscriptEntry(kind="model", tool_calls=[ToolCall(id=call["id"], name="mcp_ctb_list_devices")]),
        TranscriptEntry(kind="tool_result", call_id=call["id"], content="CORE_SW_01"),
        TranscriptEntry(kind="model", text="A reply the endpoint never sent."),
        TranscriptEntry(kind="model", text="OK."),
        TranscriptEntry(kind="model", text="OK."),
        TranscriptEntry(kind="model", text="OK."),
    ]
    records = route.records()
    assert [r.usage is not None for r in records] == [True, True, True]
    assert fill_usage(entries, records) == 3
    turns = [e for e in entries if e.kind == "model"]
    assert [t.usage for t in turns] == [
        r.usage.model_copy(update={"source": SOURCE}) for r in records[:1]
    ] + [None] + [r.usage.model_copy(update={"source": SOURCE}) for r in records[1:]] + [None]  # type: ignore[union-attr]
    assert turns[0].model == SNAPSHOT
