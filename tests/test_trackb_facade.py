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


def track_b_call(url: str, body: dict[str, object], token: str, seen: list[int], budget: float = 5.0) -> dict:
    """A Track B client's tool call, as its agents make it, that handles a 429: it waits what
    ``Retry-After`` says and tries again while that fits in its ``budget`` of seconds, else gives the
    refusal's JSON to its model as it is (what Track B's own runner does with any answer)."""
    req = urllib.request.Request(
        url + "/api/agent/execute",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    while True:
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                seen.append(resp.status)
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            seen.append(exc.code)
            answer = json.loads(exc.read())
            wait = float(exc.headers.get("Retry-After", "0"))
            if exc.code != 429 or wait > budget:
                return answer
            budget -= wait
            time.sleep(wait)


ROUTES_ASK = {"device_name": "Core-R1", "command": "display ip routing-table", "question_number": 1}


@pytest.mark.parametrize("protection", ["on", "off"])
def test_a_request_in_flight_holds_its_token_over_http(
    imported: Path, tmp_path: Path, protection: str
) -> None:
    """Client A sends its headers and half its body, so it is in flight; client B, same token, is
    refused with 429 and ``Retry-After: 1``, waits, and is served once A has its answer."""
    import socket
    import threading

    flags = ["--trackb-strict"] + (["--max-concurrent-per-token", "1"] if protection == "on" else [])
    server = Server(imported, tmp_path / "traj", *flags)
    port = int(server.url.rsplit(":", 1)[1])
    body = json.dumps(ROUTES_ASK).encode()
    seen: list[int] = []
    answer: dict = {}
    try:
        assert server.post(ROUTES_ASK, "shared")[0] == 200  # the session is open: A is answered at once
        a = socket.create_connection(("127.0.0.1", port), timeout=30)
        a.sendall(
            b"POST /api/agent/execute HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer shared\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n"
            + body[:10]
        )  # fmt: skip
        time.sleep(0.3)  # the server has A's headers: A is in flight until it is answered
        b = threading.Thread(
            target=lambda: answer.update(track_b_call(server.url, ROUTES_ASK, "shared", seen, budget=20))
        )
        b.start()
        deadline = time.monotonic() + 20
        while not seen and time.monotonic() < deadline:
            time.sleep(0.01)
        a.sendall(body[10:])
        raw = b""
        while b"\r\n\r\n" not in raw or not raw.rstrip().endswith(b"}"):
            chunk = a.recv(65536)
            if not chunk:
                break
            raw += chunk
        a.close()
        b.join(30)
    finally:
        server.stop()
    assert raw.startswith(b"HTTP/1.1 200"), raw[:200]
    assert str(answer["result"]).startswith("<Core-R1> display ip routing-table\n")
    if protection == "off":  # the same two calls without the limit: B is served while A is in flight
        assert seen == [200]
        return
    # refused while A was in flight (again if A was not answered yet), then served after Retry-After
    assert seen[0] == 429 and seen[-1] == 200 and set(seen[:-1]) == {429}
    rows = [ln for f in (tmp_path / "traj").rglob("*.jsonl") for ln in f.read_text().splitlines()]
    assert len(rows) == 3  # the warm-up, A and B: the refused requests reached no session


def test_a_429_in_flight_says_so_and_when_to_retry(imported: Path, tmp_path: Path) -> None:
    import socket

    server = Server(imported, tmp_path / "traj", "--trackb-strict", "--max-concurrent-per-token", "1")
    port = int(server.url.rsplit(":", 1)[1])
    try:
        a = socket.create_connection(("127.0.0.1", port), timeout=30)
        a.sendall(
            b"POST /api/agent/execute HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer shared\r\n"
            b"Content-Length: 100\r\n\r\n{"
        )  # fmt: skip
        time.sleep(0.3)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/api/agent/execute", body=json.dumps(ROUTES_ASK),
                     headers={"Content-Type": "application/json", "Authorization": "Bearer shared"})  # fmt: skip
        resp = conn.getresponse()
        assert (resp.status, resp.headers["Retry-After"], resp.headers["Content-Type"]) == (
            429,
            "1",
            "application/json",
        )
        assert json.loads(resp.read()) == {"error": "Too many concurrent requests: at most 1 per token"}
        conn.close()
        assert server.post(ROUTES_ASK, "other")[0] == 200  # another token is not held up
        a.close()  # A goes away mid-body: its place is given back
        time.sleep(0.3)
        assert server.post(ROUTES_ASK, "shared")[0] == 200
    finally:
        server.stop()


def _seconds_to_utc_midnight() -> float:
    return 86400.0 - time.time() % 86400.0


@pytest.mark.parametrize("protection", ["on", "off"])
def test_the_daily_quota_over_http(imported: Path, tmp_path: Path, protection: str) -> None:
    flags = ["--trackb-strict"] + (["--max-calls-per-day", "3"] if protection == "on" else [])
    server = Server(imported, tmp_path / "traj", *flags)
    unrecorded = {**ROUTES_ASK, "command": "display vlan"}
    try:
        assert server.post(ROUTES_ASK, "alice")[0] == 200
        assert server.post(unrecorded, "alice")[0] == 404  # an answered call counts, whatever its answer
        assert server.post({"device_name": "Core-R1"}, "alice")[0] == 400  # a malformed one does not
        assert server.post(ROUTES_ASK, "alice")[0] == 200
        req = urllib.request.Request(
            server.url + "/api/agent/execute", data=json.dumps(ROUTES_ASK).encode(),
            headers={"Content-Type": "application/json", "Authorization": "Bearer alice"},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                status, headers, raw = resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as exc:
            status, headers, raw = exc.code, exc.headers, exc.read()
        expected_wait = _seconds_to_utc_midnight()
        seen: list[int] = []
        started = time.monotonic()
        told = track_b_call(server.url, ROUTES_ASK, "alice", seen)  # a client that must not wait hours
        gave_up_in = time.monotonic() - started
        other = server.post(ROUTES_ASK, "bob")[0]
    finally:
        err = server.stop()
    assert other == 200  # the quota is per participant
    if protection == "off":
        assert status == 200 and seen == [200]
        return
    assert status == 429 and headers["Content-Type"] == "application/json"
    assert json.loads(raw) == {
        "error": "Daily quota exceeded: at most 3 API calls per participant per day; "
        "the count starts again at 00:00 UTC"
    }
    assert abs(int(headers["Retry-After"]) - expected_wait) <= 5
    assert seen == [429] and told == json.loads(raw) and gave_up_in < 5  # it stopped, and said why
    alice = [f for f in (tmp_path / "traj").iterdir() if any(f.rglob("*.jsonl"))]
    rows = [ln for f in (tmp_path / "traj").rglob("*.jsonl") for ln in f.read_text().splitlines()]
    assert len(alice) == 2 and len(rows) == 4  # alice's three calls and bob's one: refusals are not calls
    assert "3 calls per client and day (UTC)" in err


def test_phase_one_limits_include_the_daily_quota(imported: Path) -> None:
    server = Server(imported, imported.parent / "traj-limits", "--trackb-strict", "--trackb-limits")
    err = server.stop()
    assert "50 requests/s per address, 2 in flight per client, 1000 calls per client and day (UTC)" in err
    proc = run_cli(
        "replay", "serve", "--trackb", "--tasks", str(imported), "--port", "0", "--max-calls-per-day", "0"
    )
    assert proc.returncode != 0 and "--max-calls-per-day" in proc.stderr and "Traceback" not in proc.stderr
