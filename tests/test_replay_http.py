"""The HTTP JSON API (``ctb-replay serve`` as a subprocess) and its shell client (``ctb-replay exec``)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ctbench.replay.client import ReplayClient
from ctbench.replay.engine import ReplayEngine
from ctbench.replay.http_server import SessionRegistry, serve_in_thread
from ctbench.store import TaskSet
from tests.test_replay_support import (
    ALL_TASK,
    GOLD_STRINGS,
    HOSTILE_TASK,
    KeepAliveClient,
    build_vendor_task_set,
    captures,
    gold_strings,
)

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
ENV.pop("CTBENCH_DEBUG", None)


def recording(device: str, command: str) -> bytes:
    return next(c.source.read_bytes() for c in captures() if c.device == device and c.command == command)


@pytest.fixture(scope="module")
def vendor_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_vendor_task_set(tmp_path_factory.mktemp("http") / "tasks")


def start_serve(*args: str) -> tuple[subprocess.Popen[str], str]:
    """``ctb-replay serve`` on a free port; its stderr goes to a file (a full pipe would block it)."""
    errlog = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctbench.replay.cli", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=errlog,
        text=True,
        env=ENV,
        cwd=str(REPO),
    )
    proc.errlog = errlog  # type: ignore[attr-defined]
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    for _ in range(200):
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        asyncio.run(asyncio.sleep(0.05))
    proc.kill()
    raise AssertionError("ctb-replay serve did not come up")


@pytest.fixture(scope="module")
def traj_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("trajectories")


@pytest.fixture(scope="module")
def server(vendor_root: Path, traj_root: Path) -> Iterator[str]:
    proc, url = start_serve("--tasks", str(vendor_root), "--trajectories", str(traj_root))
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        proc.errlog.seek(0)  # type: ignore[attr-defined]
        assert "Traceback" not in proc.errlog.read()  # type: ignore[attr-defined]


def open_session(url: str, task: str = ALL_TASK, **extra: str) -> str:
    r = httpx.post(f"{url}/sessions", json={"task_id": task, **extra})
    assert r.status_code == 201, r.text
    return r.json()["session_id"]


# --------------------------------------------------------------------------- the API


def test_session_lifecycle(server: str, traj_root: Path) -> None:
    traj = traj_root / "run" / "trajectories" / f"{ALL_TASK}.jsonl"
    r = httpx.post(
        f"{server}/sessions", json={"task_id": ALL_TASK, "trajectory": f"run/trajectories/{ALL_TASK}.jsonl"}
    )
    assert r.status_code == 201
    body = r.json()
    sid = body["session_id"]
    names = [d["name"] for d in body["devices"]]
    assert "VRP_01" in names and "PC_01" not in names and "SECRET_RTR" not in names
    assert httpx.get(f"{server}/sessions/{sid}/devices").json()["devices"] == body["devices"]

    run = f"{server}/sessions/{sid}/run"
    obs = httpx.post(run, json={"device": "CMW_01", "command": "dis int br"}).json()
    assert obs["outcome"] == "recorded" and obs["canonical"] == "display interface brief"
    assert obs["text"] == recording("CMW_01", "display interface brief").decode()
    assert "data" not in obs and obs["seq"] == 1
    invalid = httpx.post(run, json={"device": "CMW_01", "command": "dis xyz"})
    assert invalid.status_code == 200 and invalid.json()["outcome"] == "invalid"
    assert "% Unrecognized command" in invalid.json()["text"] and invalid.json()["prompt"] == "<CMW_01>"
    assert (
        httpx.post(run, json={"device": "CMW_01", "command": "display ospf peer"}).json()["outcome"]
        == "denied"
    )
    assert (
        httpx.post(run, json={"device": "SECRET_RTR", "command": "x"}).json()["outcome"] == "unknown-device"
    )

    sub = httpx.post(f"{server}/sessions/{sid}/submit", json={"answer": "CMW_01;GE0/1;shutdown\n"})
    assert sub.status_code == 200 and sub.json()["lines"] == 1
    summary = httpx.get(f"{server}/sessions/{sid}").json()
    assert summary["calls"] == 4 and summary["answer"]["answer"] == "CMW_01;GE0/1;shutdown\n"

    records = httpx.get(f"{server}/sessions/{sid}/trajectory").json()["records"]
    assert [r["outcome"] for r in records] == ["recorded", "invalid", "denied", "unknown-device"]
    assert [json.loads(x) for x in traj.read_text().splitlines()] == records

    assert httpx.delete(f"{server}/sessions/{sid}").json()["closed"] is True
    gone = httpx.post(run, json={"device": "CMW_01", "command": "dis int br"})
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "unknown_session"


@pytest.mark.parametrize(
    "method,path,body,status,code",
    [
        ("POST", "/sessions", b"not json", 400, "bad_json"),
        ("POST", "/sessions", b"[1, 2]", 422, "bad_request"),
        ("POST", "/sessions", b'{"task": "VENDOR-ALL"}', 422, "bad_request"),
        ("POST", "/sessions", b'{"task_id": "NOPE-1"}', 404, "unknown_task"),
        ("POST", "/sessions", b'{"task_id": "../../etc/passwd"}', 404, "unknown_task"),
        (
            "POST",
            "/sessions",
            b'{"task_id": "VENDOR-ALL", "trajectory": "/etc/passwd"}',
            400,
            "bad_trajectory",
        ),
        (
            "POST",
            "/sessions",
            b'{"task_id": "VENDOR-ALL", "trajectory": "/tmp/x.jsonl"}',
            400,
            "bad_trajectory",
        ),
        (
            "POST",
            "/sessions",
            b'{"task_id": "VENDOR-ALL", "trajectory": "../x.jsonl"}',
            400,
            "bad_trajectory",
        ),
        (
            "POST",
            "/sessions",
            b'{"task_id": "VENDOR-ALL", "trajectory": "a/../../x.jsonl"}',
            400,
            "bad_trajectory",
        ),
        ("POST", "/sessions", b'{"task_id": "VENDOR-ALL", "trajectory": "~/x.jsonl"}', 400, "bad_trajectory"),
        ("POST", "/sessions", b'{"task_id": "VENDOR-ALL", "extra": 1}', 422, "bad_request"),
        ("POST", "/sessions", b"\xff\xfe\x00garbage", 400, "bad_json"),
        ("GET", "/sessions/does-not-exist/devices", None, 404, "unknown_session"),
        (
            "POST",
            "/sessions/..%2F..%2Fetc%2Fpasswd/run",
            b'{"device": "a", "command": "b"}',
            404,
            "not_found",
        ),
        ("GET", "/sessions/../../etc/passwd", None, 404, "not_found"),
        ("DELETE", "/sessions/nope", None, 404, "unknown_session"),
        ("PUT", "/health", None, 405, "method_not_allowed"),
        ("GET", "/etc/passwd", None, 404, "not_found"),
    ],
)
def test_bad_requests_get_clean_json_errors(
    server: str, method: str, path: str, body: bytes | None, status: int, code: str
) -> None:
    r = httpx.request(method, f"{server}{path}", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["code"] in (code, "unknown_session") and err["message"]
    assert "root:" not in r.text and "Traceback" not in r.text


def test_bad_run_bodies(server: str) -> None:
    sid = open_session(server)
    run = f"{server}/sessions/{sid}/run"
    for body, status in [
        ({"device": "VRP_01"}, 422),
        ({"device": 1, "command": "x"}, 422),
        ({"device": "VRP_01", "command": None}, 422),
        ("just a string", 422),
    ]:
        r = httpx.post(run, json=body)
        assert r.status_code == status and r.json()["error"]["code"] == "bad_request"
    huge = httpx.post(run, json={"device": "VRP_01", "command": "display " + "x" * 10_000_000})
    assert huge.status_code == 413 and huge.json()["error"]["code"] == "body_too_large"
    long = httpx.post(run, json={"device": "VRP_01", "command": "display " + "x" * 100_000})
    assert (
        long.status_code == 200 and long.json()["outcome"] == "invalid" and "too long" in long.json()["text"]
    )
    for device, command in [
        ("VRP_01", "dis ver\x00\x1b[2J"),
        ("../../etc/passwd", "display version"),
        ("VRP_01", "../../etc/passwd"),
        ("路由器", "显示 版本"),
        ("VRP_01", "display version 🙂"),
    ]:
        r = httpx.post(run, json={"device": device, "command": command})
        assert r.status_code == 200 and r.json()["outcome"] in ("invalid", "unknown-device")
        assert "root:" not in r.text
    assert httpx.post(run, json={"device": "VRP_01", "command": "dis int br"}).json()["outcome"] == "recorded"


def test_thousands_of_concurrent_sessions(server: str) -> None:
    n, connections = 2000, 50
    cases = [
        ("VRP_01", "dis int br"),
        ("IOS_01", "sh ip int br"),
        ("JUN_01", "sh int terse"),
        ("NXOS_01", "sh int br"),
        ("CMW_01", "dis int br"),
    ]
    expected = [
        recording(d, c).decode()
        for d, c in [
            ("VRP_01", "display interface brief"),
            ("IOS_01", "show ip interface brief"),
            ("JUN_01", "show interfaces terse"),
            ("NXOS_01", "show interface brief"),
            ("CMW_01", "display interface brief"),
        ]
    ]
    sids: list[str] = [""] * n
    problems: list[str] = []

    async def worker(k: int, phase: str) -> None:
        async with KeepAliveClient(server) as http:
            for i in range(k, n, connections):  # each connection serves every 50th session
                if phase == "open":
                    status, body = await http.request("POST", "/sessions", {"task_id": ALL_TASK})
                    sids[i] = body["session_id"] if status == 201 else ""
                    if status != 201:
                        problems.append(f"open {status} {body}")
                elif phase == "run":
                    device, command = cases[i % 5]
                    status, body = await http.request(
                        "POST",
                        f"/sessions/{sids[(i * 7919) % n]}/run",
                        {"device": device, "command": command},
                    )
                    if status != 200 or body["seq"] != 1 or body["text"] != expected[i % 5]:
                        problems.append(f"run {status} {str(body)[:80]}")
                else:
                    status, body = await http.request("DELETE", f"/sessions/{sids[i]}")
                    if status != 200:
                        problems.append(f"close {status} {body}")

    async def main() -> int:
        await asyncio.gather(*(worker(k, "open") for k in range(connections)))
        async with KeepAliveClient(server) as http:
            _, health = await http.request("GET", "/health")
        await asyncio.gather(*(worker(k, "run") for k in range(connections)))
        await asyncio.gather(*(worker(k, "close") for k in range(connections)))
        return health["sessions"]

    open_at_once = asyncio.run(main())
    assert problems == []
    assert len(set(sids)) == n and open_at_once >= n
    assert httpx.get(f"{server}/health").json()["status"] == "ok"


def test_session_limit_is_a_clean_429(vendor_root: Path) -> None:
    engine = ReplayEngine(TaskSet.open(vendor_root))
    handle = serve_in_thread(engine, registry=SessionRegistry(engine, max_sessions=3))
    try:
        codes = [
            httpx.post(f"{handle.url}/sessions", json={"task_id": ALL_TASK}).status_code for _ in range(5)
        ]
        assert codes == [201, 201, 201, 429, 429]
        r = httpx.post(f"{handle.url}/sessions", json={"task_id": ALL_TASK})
        assert r.json()["error"]["code"] == "too_many_sessions"
    finally:
        handle.stop()
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"{handle.url}/health", timeout=2)


def test_serve_in_thread_serves_a_session_opened_by_the_runner(vendor_root: Path, tmp_path: Path) -> None:
    engine = ReplayEngine(TaskSet.open(vendor_root))
    with serve_in_thread(engine) as handle:
        session = engine.open_session(ALL_TASK, trajectory_path=tmp_path / "t.jsonl")
        handle.registry.add(session)
        with ReplayClient(handle.url, session.id) as client:
            obs = client.run("VRP_01", "dis int br")
            assert obs.ok and obs.text == recording("VRP_01", "display interface brief").decode()
            client.submit("VRP_01;x;y")
        assert session.answer is not None and session.answer.answer == "VRP_01;x;y"
        assert session.calls == 1
    assert session.closed


# --------------------------------------------------------------------------- the shell client


def exec_cli(url: str, sid: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "CTBENCH_REPLAY_URL": url, "CTBENCH_REPLAY_SESSION": sid}
    return subprocess.run(
        [sys.executable, "-m", "ctbench.replay.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=60,
        cwd=str(REPO),
    )


def test_exec_prints_like_a_device_and_sets_the_exit_status(server: str, tmp_path: Path) -> None:
    sid = open_session(server)
    ok = exec_cli(server, sid, "exec", "IOS_01", "show", "ip", "interface", "brief")
    assert ok.returncode == 0 and ok.stdout == recording("IOS_01", "show ip interface brief").decode()
    filtered = exec_cli(server, sid, "exec", "IOS_01", "sh ip int br | i up")
    assert filtered.returncode == 0 and all("up" in ln for ln in filtered.stdout.splitlines())
    bad = exec_cli(server, sid, "exec", "IOS_01", "show", "ip", "foo")
    assert bad.returncode == 1
    echo, caret, message = bad.stdout.splitlines()[:3]
    assert (echo, message) == ("IOS_01#show ip foo", "% Invalid input detected at '^' marker.")
    assert caret == " " * len("IOS_01#show ip ") + "^"
    denied = exec_cli(server, sid, "exec", "IOS_01", "show ip protocols")
    assert denied.returncode == 1 and denied.stdout.strip()
    unknown = exec_cli(server, sid, "exec", "SECRET_RTR", "show version")
    assert unknown.returncode == 1 and "Accessible devices" in unknown.stdout

    devices = exec_cli(server, sid, "devices", "--json")
    assert devices.returncode == 0 and "VRP_01" in [d["name"] for d in json.loads(devices.stdout)]
    answer = tmp_path / "answer.txt"
    answer.write_text("IOS_01;Gi0/1;shutdown\n")
    sub = exec_cli(server, sid, "submit", str(answer))
    assert sub.returncode == 0 and "1 line" in sub.stdout
    sub2 = exec_cli(server, sid, "submit", "-", stdin="a\nb\n")
    assert sub2.returncode == 0 and "replacing" in sub2.stdout
    assert httpx.get(f"{server}/sessions/{sid}").json()["answer"]["answer"] == "a\nb\n"
    calls = httpx.get(f"{server}/sessions/{sid}/trajectory").json()["records"]
    assert [c["outcome"] for c in calls] == ["recorded", "recorded", "invalid", "denied", "unknown-device"]


def test_exec_without_a_session_says_what_is_missing(server: str) -> None:
    env = {k: v for k, v in ENV.items() if not k.startswith("CTBENCH_REPLAY")}
    r = subprocess.run(
        [sys.executable, "-m", "ctbench.replay.cli", "exec", "R1", "show", "version"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert r.returncode == 2 and "CTBENCH_REPLAY_URL" in r.stderr and "Traceback" not in r.stderr
    r = exec_cli(server, "no-such-session", "exec", "R1", "show", "version")
    assert r.returncode == 2 and "no open session" in r.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    r = exec_cli(dead, "x", "exec", "R1", "show", "version")
    assert r.returncode == 2 and "cannot reach" in r.stderr


# --------------------------------------------------------------------------- secrecy


def test_no_http_response_contains_the_gold(server: str, vendor_root: Path) -> None:
    bundled = REPO / "tasks"
    bodies: list[str] = []
    proc, url = start_serve("--tasks", str(bundled))
    http = httpx.Client(timeout=30)
    try:
        for base, task, devices in [
            (server, HOSTILE_TASK, ["VRP_01", "IOS_01"]),
            (url, "RCA-001", ["CORE_SW_01", "FW_01", "GW_01", "PE_01", "ACC_SW_01"]),
            (url, "RCA-002", ["CORE_SW_01", "FW_01", "GW_01"]),
            (url, "PATH-001", ["CORE_SW_01", "FW_01", "GW_01", "PE_01", "ACC_SW_01"]),
        ]:
            r = http.post(f"{base}/sessions", json={"task_id": task})
            bodies.append(r.text)
            sid = r.json()["session_id"]
            for device in devices:
                for command in (
                    "display version",
                    "display interface brief",
                    "display vlan",
                    "display arp all",
                    "display device",
                    "display startup",
                    "display eth-trunk",
                    "display ip routing-table",
                    "display current-configuration",
                    "show running-config",
                    "show ip route",
                    "show route",
                    "display security-policy rule all",
                    "../hidden.yaml",
                    "hidden.yaml",
                ):
                    bodies.append(
                        http.post(
                            f"{base}/sessions/{sid}/run", json={"device": device, "command": command}
                        ).text
                    )
            for path in ("", "/devices", "/trajectory"):
                bodies.append(http.get(f"{base}/sessions/{sid}{path}").text)
            bodies.append(http.post(f"{base}/sessions/{sid}/submit", json={"answer": "?"}).text)
            bodies.append(http.delete(f"{base}/sessions/{sid}").text)
        for path in ("/health", "/sessions", "/rca/RCA-001/hidden.yaml", "/tasks/rca/RCA-001/hidden.yaml"):
            bodies.append(http.get(f"{url}{path}").text)
    finally:
        http.close()
        proc.terminate()
        proc.wait(10)
    everything = "\n".join(bodies)
    assert "administratively down" in everything or "*down" in everything  # recordings were reached
    gold = [
        *GOLD_STRINGS,
        *(g for t in ("rca/RCA-001", "rca/RCA-002", "path/PATH-001") for g in gold_strings(bundled / t)),
    ]
    for g in gold:
        assert json.dumps(g)[1:-1] not in everything and g not in everything, g


def test_client_trajectories_stay_in_the_servers_folder(
    server: str, traj_root: Path, tmp_path: Path, vendor_root: Path
) -> None:
    """An agent holding the URL must not make the server write, or move aside, files elsewhere."""
    outside = tmp_path / "other-run" / "RCA-002.jsonl"
    outside.parent.mkdir()
    outside.write_text('{"seq": 1}\n')
    (traj_root / "link").symlink_to(outside.parent, target_is_directory=True)
    r = httpx.post(f"{server}/sessions", json={"task_id": ALL_TASK, "trajectory": "link/RCA-002.jsonl"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_trajectory"
    assert outside.read_text() == '{"seq": 1}\n' and not (outside.parent / "RCA-002.jsonl.prev1").exists()

    handle = serve_in_thread(
        ReplayEngine(TaskSet.open(vendor_root))
    )  # as the runner serves agents: no trajectory folder
    try:
        r = httpx.post(f"{handle.url}/sessions", json={"task_id": ALL_TASK, "trajectory": "x.jsonl"})
        assert r.status_code == 403 and r.json()["error"]["code"] == "trajectories_disabled"
        assert "--trajectories DIR" in r.json()["error"]["message"]
        assert httpx.post(f"{handle.url}/sessions", json={"task_id": ALL_TASK}).status_code == 201
    finally:
        handle.stop()
