"""ctb-replay serve --trackb[-strict]: Track B's API with its status codes and bodies, over real HTTP.

Each server is a real ``ctb-replay serve`` subprocess on an ephemeral port of 127.0.0.1, serving a
set imported from the small Track B tree of :mod:`tests.trackb_support`.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctbench.replay.trackb.layout import safe_name
from tests.conftest import run_cli
from tests.trackb_support import Server, write_tree

pytestmark = pytest.mark.xdist_group("trackb_facade")

NO_PERMISSION = "Error: No permission to perform the operation"


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("trackb")
    tree = write_tree(root / "tree")
    out = root / "tasks"
    proc = run_cli(
        "authoring", "import-trackb", str(tree.phase_dir), "--outputs", str(tree.outputs),
        "--vendors", str(tree.vendors), "--phase", "1", "--gt", str(tree.gt), "--tasks", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def strict(imported: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(imported, tmp_path_factory.mktemp("traj-strict"), "--trackb-strict")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def lenient(imported: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(imported, tmp_path_factory.mktemp("traj"), "--trackb", "--max-calls-per-question", "6")
    yield server
    server.stop()


OK_KEYS = ["command_executed", "device_name", "result", "status", "vendor"]

# (device, command, question) -> status, keys, vendor, first line of result, caret word or None, message
STRICT = [
    pytest.param("Core-R1", "display ip routing-table", 1, 200, OK_KEYS, "huawei",
                 "<Core-R1> display ip routing-table", None, "Route Flags: R - relay, D - download to fib",
                 id="recorded"),
    pytest.param("Core-R1", "dis ip routing-table", 1, 422, OK_KEYS, "huawei",
                 "<Core-R1> dis ip routing-table", "routing-table",
                 "Error: Incomplete command found at '^' position.", id="abbreviation"),
    pytest.param("Core-R1", "display ip routing-table | include 10.9", 1, 422, OK_KEYS, "huawei",
                 "<Core-R1> display ip routing-table | include 10.9", "|",
                 "Error: Too many parameters found at '^' position.", id="filter"),
    pytest.param("Core-R1", "display current-configuration", 1, 403, OK_KEYS, "huawei",
                 NO_PERMISSION, None, None, id="no_permission"),
    pytest.param("Core-R1", "display vlan", 1, 404, ["error", "filename"], None, None, None, None,
                 id="whitelisted-unrecorded"),
    pytest.param("Core-R1", "display interfce brief", 1, 422, OK_KEYS, "huawei",
                 "<Core-R1> display interfce brief", "interfce",
                 "Error: Unrecognized command found at '^' position.", id="typo"),
    pytest.param("Nope-1", "display vlan", 1, 404, ["error"], None, None, None, None, id="unknown-device"),
    pytest.param("PSS", "show ip interface brief", 1, 200, OK_KEYS, "cisco",
                 "PSS# show ip interface brief", None, None, id="cisco"),
    pytest.param("PSS", "show ip route vrf", 1, 422, OK_KEYS, "cisco", "PSS# show ip route vrf", "vrf",
                 "% Invalid input detected at '^' marker.", id="cisco-too-many"),
    pytest.param("Core-R1", "display stp interface GE9/9/9", 1, 422, [*OK_KEYS, "reason"], "huawei",
                 "<Core-R1> display stp interface GE9/9/9", "GE9/9/9",
                 "Error: Wrong parameter found at '^' position.", id="wrong-parameter"),
    pytest.param("Edge-SW1", "display lldp neighbor-list", 2, 200, OK_KEYS, "h3c",
                 "<Edge-SW1> display lldp neighbor-list", None, None, id="h3c-others-folder"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("device", "command", "question", "status", "keys", "vendor", "first", "caret", "message"), STRICT
)
def test_strict_table(
    strict: Server,
    device: str,
    command: str,
    question: int,
    status: int,
    keys: list[str],
    vendor: str | None,
    first: str | None,
    caret: str | None,
    message: str | None,
) -> None:
    code, body = strict.post({"device_name": device, "command": command, "question_number": question})
    assert code == status, body
    assert sorted(body) == sorted(keys)
    if vendor is not None:
        assert body["vendor"] == vendor and body["command_executed"] == command
    result = str(body.get("result", ""))
    lines = result.split("\n")
    if first is not None:
        assert lines[0] == first
    if caret is not None:
        prompt = first.split(" ", 1)[0] if first else ""
        assert lines[1] == " " * (len(prompt) + 1 + command.index(caret)) + "^"
    if message is not None:
        assert message in lines
    if status == 404 and "filename" in keys:
        assert body == {"error": NO_PERMISSION, "filename": safe_name(command) + ".txt"}
    if device == "Nope-1":
        assert body == {"error": "Device 'Nope-1' not found"}


def test_strict_result_is_the_recording_with_the_servers_newlines(strict: Server, imported: Path) -> None:
    code, body = strict.post(
        {"device_name": "Edge-SW1", "command": "display interface brief", "question_number": 2}
    )
    assert code == 200
    raw = (
        imported / "rca" / "TTACB-P1-002" / "recordings" / "Edge-SW1" / "display_interface_brief.txt"
    ).read_bytes()
    assert b"\r\n" in raw
    assert body["result"] == "<Edge-SW1> display interface brief\n" + raw.decode().replace("\r\n", "\n")


def test_missing_fields_and_bad_bodies(strict: Server) -> None:
    missing = "Missing required parameter 'device_name', 'command', or 'question_number'"
    for body in ({"device_name": "Core-R1", "command": "display vlan"}, {}, [1, 2], "x"):
        assert strict.post(body) == (400, {"error": missing})
    with urllib.request.urlopen(strict.url + "/health", timeout=10) as resp:
        assert json.loads(resp.read()) == {"status": "ok"}


def test_one_session_and_trajectory_per_client_and_question(strict: Server) -> None:
    for token in ("alice", "bob"):
        strict.post({"device_name": "PSS", "command": "show lldp neighbors", "question_number": 3}, token)
        strict.post({"device_name": "PSS", "command": "sh lldp nei", "question_number": 3}, token)
    files = sorted(strict.trajectories.glob("token-*/TTACB-P1-003.jsonl"))
    assert len(files) == 2
    rows = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert [(r["command"], r["canonical"], r["outcome"]) for r in rows] == [
        ("show lldp neighbors", "show lldp neighbors", "recorded"),
        ("sh lldp nei", None, "invalid"),  # strict: the abbreviation was refused, and logged as such
    ]


def test_lenient_serves_ctbench_cli_in_track_b_envelopes(lenient: Server) -> None:
    ask = {"device_name": "Core-R1", "question_number": 1}
    code, body = lenient.post({**ask, "command": "dis ip rou"})
    assert code == 200 and body["result"].startswith("<Core-R1> dis ip rou\nRoute Flags")
    code, body = lenient.post({**ask, "command": "display ip routing-table | include 10.9.9.9"})
    assert code == 200 and body["result"].split("\n")[1:] == [
        "       10.9.9.9/32  (none: missing)\r",
        "",
    ]  # bytes kept
    code, body = lenient.post({**ask, "command": "display interfce brief"})
    lines = body["result"].split("\n")
    assert code == 422 and lines[0] == "<Core-R1> display interfce brief"
    assert lines[1] == " " * (len("<Core-R1> ") + len("display ")) + "^"  # ctbench's caret, after the blank
    code, body = lenient.post({**ask, "command": "display current-configuration"})
    assert code == 403 and body["result"] == NO_PERMISSION
    code, body = lenient.post({**ask, "command": "display vlan"})
    assert (code, body) == (404, {"error": NO_PERMISSION, "filename": "display_vlan.txt"})
    lenient.post({**ask, "command": "display vlan"})
    code, body = lenient.post({**ask, "command": "display vlan"})  # the seventh call of this question
    assert code == 429 and "6" in str(body["error"])


def test_concurrency_limit_per_client_and_the_set_it_serves(imported: Path, task_set: Path) -> None:
    from ctbench.replay.engine import ReplayEngine
    from ctbench.replay.trackb.facade import Phase, TrackbFacade
    from ctbench.store import TaskSet

    engine = ReplayEngine(TaskSet.open(imported))
    facade = TrackbFacade(engine, Phase.of(engine.task_set), max_concurrent_per_token=1)
    assert facade.enter("token-a") and not facade.enter("token-a")  # a second request in flight: 429
    assert facade.enter("token-b")  # another client is not held up
    facade.leave("token-a")
    assert facade.enter("token-a")
    status, body = facade.execute("token-a", "Core-R1", "display ip routing-table", 99)
    assert (status, body) == (404, {"error": "Question 99 not found in phase 1"})
    facade.close()
    proc = run_cli("replay", "serve", "--trackb", "--tasks", str(task_set), "--port", "0")
    assert proc.returncode == 1 and "not a Track B import" in proc.stderr and "Traceback" not in proc.stderr


def _burst(url: str, n: int) -> tuple[list[tuple[int, dict[str, str], bytes]], float]:
    """``n`` requests sent back to back on ``n`` open connections, each with its own token (so only the
    rate per address can refuse them, not the requests in flight per token), then their answers, and
    the seconds from the first send to the last answer (an upper bound on the time the server saw
    them in)."""
    port = int(url.rsplit(":", 1)[1])
    body = json.dumps({"device_name": "Core-R1", "command": "display ip routing-table", "question_number": 1})
    conns = [http.client.HTTPConnection("127.0.0.1", port, timeout=60) for _ in range(n)]
    for c in conns:
        c.connect()
    start = time.monotonic()
    for i, c in enumerate(conns):
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer burst-{i}"}
        c.request("POST", "/api/agent/execute", body=body, headers=headers)
    out = []
    for c in conns:
        resp = c.getresponse()
        out.append((resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()))
        c.close()
    return out, time.monotonic() - start


@pytest.mark.parametrize("protection", ["on", "off"])
def test_fifty_requests_a_second_per_address_then_429(
    imported: Path, tmp_path: Path, protection: str
) -> None:
    flags = ("--trackb-strict", "--trackb-limits") if protection == "on" else ("--trackb-strict",)
    server = Server(imported, tmp_path / "traj", *flags)
    try:
        answers, elapsed = _burst(server.url, 30)
    finally:
        server.stop()
    ok = [a for a in answers if a[0] == 200]
    refused = [a for a in answers if a[0] == 429]
    assert len(ok) + len(refused) == 30
    if protection == "off":  # the same burst without the limit: all served, so the test can fail
        assert not refused
        return
    assert refused and 1 <= len(ok) <= 1 + 50 * elapsed  # nginx's bucket: one per 20 ms, no burst
    for _status, headers, raw in refused:
        assert headers["retry-after"] == "1" and headers["content-type"] == "application/json"
        assert json.loads(raw) == {
            "error": "Too Many Requests: more than 50 requests per second from 127.0.0.1"
        }
    # a refused request reaches no session: only the accepted ones are in the trajectory
    rows = [ln for f in (tmp_path / "traj").rglob("*.jsonl") for ln in f.read_text().splitlines()]
    assert len(rows) == len(ok)


def test_rate_is_per_address_not_per_token(imported: Path, tmp_path: Path) -> None:
    """One request per 10 s: the second, from another token at the same address, is refused. (That
    the bucket drains is checked at exact instants in test_trackb_ratelimit.py, without sleeping.)"""
    server = Server(imported, tmp_path / "traj", "--trackb-strict", "--max-requests-per-second", "0.1")
    ask = {"device_name": "Core-R1", "command": "display ip routing-table", "question_number": 1}
    port = int(server.url.rsplit(":", 1)[1])
    try:
        assert server.post(ask, "alice")[0] == 200
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("POST", "/api/agent/execute", body=json.dumps(ask),
                     headers={"Content-Type": "application/json", "Authorization": "Bearer bob"})  # fmt: skip
        resp = conn.getresponse()
        assert resp.status == 429 and 1 <= int(resp.headers["Retry-After"]) <= 10
        assert json.loads(resp.read()) == {
            "error": "Too Many Requests: more than 0.1 requests per second from 127.0.0.1"
        }
        conn.close()
        code, _ = server.post({"device_name": "Core-R1"}, "bob")  # refused before its body is read
        assert code == 429
    finally:
        err = server.stop()
    assert "limits: 0.1 requests/s per address" in err


def test_bad_rate_options_are_named(imported: Path) -> None:
    for flags in (["--max-requests-per-second", "0"], ["--max-requests-per-second", "x"], ["--burst", "-1"]):
        proc = run_cli("replay", "serve", "--trackb", "--tasks", str(imported), "--port", "0", *flags)
        assert proc.returncode != 0 and "Traceback" not in proc.stderr
        assert flags[0] in proc.stderr, proc.stderr
