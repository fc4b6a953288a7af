"""The real agent CLIs (Codex, Claude Code, Hermes) end to end, against the scripted model server.

Each test starts the real CLI through the runner, as ``ctb-eval run --agent NAME`` does; the "model"
is :mod:`tests.support.model_server` on 127.0.0.1, which plays the task's golden actions through
the CLI's ``ctb`` tools and submits the gold answer. A CLI that is not installed is skipped with the
command that installs it (``.ci/run`` installs all three).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from ctbench.evaluate.agents import agent_class
from ctbench.evaluate.agents.harness_base import HarnessAgent, with_v1, without_v1
from ctbench.evaluate.harnesses import find
from ctbench.evaluate.runner import Runner, RunSettings
from ctbench.evaluate.score import score_run
from ctbench.evaluate.settings import SandboxSettings
from ctbench.store import TaskSet
from tests.conftest import needs_bwrap
from tests.support.model_server import CTB_TOOLS, ScriptedModelServer, scripts_for

HARNESSES = ("codex", "claude-code", "hermes")
TASKS = ("RCA-001", "PATH-001")
FORBIDDEN = (
    "exec",
    "shell",
    "bash",
    "terminal",
    "read_file",
    "write",
    "edit",
    "patch",
    "glob",
    "grep",
    "web",
    "browser",
    "view_image",
    "file",
    "search",
    "spawn",
    "agent",
    "todo",
    "python",
    "code",
)
"""Words in the name of a CLI's own shell, file, web or sub-agent tools; none may reach the model."""

pytestmark = pytest.mark.timeout(600)


def harness(name: str) -> type[HarnessAgent]:
    cls = agent_class(name)
    assert issubclass(cls, HarnessAgent)
    found = cls.availability()
    if not found.available:
        if os.environ.get("CTBENCH_REQUIRE_HARNESSES"):  # CI installed them: missing is a failure
            pytest.fail(f"{name} is not installed ({found.detail}) but CTBENCH_REQUIRE_HARNESSES is set")
        pytest.skip(f"{name} is not installed ({found.detail})")
    return cls


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ctbench-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-ctbench-test")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def _why(folder: Path, line: dict) -> str:
    """A failed line's error and the end of its task log: enough to tell a flake's cause from CI output."""
    log = folder / "logs" / f"{line['task_id']}.log"
    tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-40:] if log.is_file() else []
    return f"{line['status']}: {line.get('error_kind')}: {line.get('error')}\n" + "\n".join(tail)


def _settings(name: str, base_url: str, task_set: Path, out: Path, **kw: object) -> RunSettings:
    values: dict = {
        "agent": name,
        "model": "scripted-model",
        "base_url": base_url,
        "tasks": task_set,
        "out": out,
        "select": " ".join(TASKS),
        "concurrency": 2,
        "timeout_s": 180.0,
        "retries": 0,
        "allow_unreviewed": True,
        "sandbox": os.environ.get("CTB_TEST_SANDBOX", "none"),
        # the run's default (loopback: each attempt in a network of its own) unless asked otherwise
        "sandbox_network": os.environ.get("CTB_TEST_SANDBOX_NETWORK", SandboxSettings().network),
    }
    values.update(kw)
    return RunSettings(**values)  # type: ignore[arg-type]


def test_base_url_is_normalised_for_each_api() -> None:
    for given in ("http://h:1", "http://h:1/", "http://h:1/v1", "http://h:1/v1/"):
        assert with_v1(given) == "http://h:1/v1"
        assert without_v1(given) == "http://h:1"


@pytest.mark.parametrize("name", HARNESSES)
@needs_bwrap
def test_each_cli_scores_100_and_records_what_the_model_reported(
    name: str, task_set: Path, tmp_path: Path
) -> None:
    """Run as a user runs it: the default ``--sandbox auto``, which is bubblewrap where it works
    (``.ci/run`` installs it), so the CLI and its MCP proxy run inside the sandbox and still score 100."""
    harness(name)
    sandbox = os.environ.get("CTB_TEST_SANDBOX", "auto")
    with ScriptedModelServer(scripts_for(task_set, list(TASKS)), max_seconds=300) as model:
        report = Runner(_settings(name, model.url, task_set, tmp_path / "run", sandbox=sandbox)).run()
    assert report.complete, report.summary_line()
    expected = "none" if sandbox == "none" else "bwrap"
    assert report.config.sandbox == expected
    assert f"mode: {expected}" in (report.folder / "run.yaml").read_text(encoding="utf-8")
    if expected == "bwrap" and "CTB_TEST_SANDBOX_NETWORK" not in os.environ:
        # the default network: the CLI reached its model only through the sandbox's forwarder
        assert report.config.settings.agent.sandbox.network == "loopback"
    lines = {line["task_id"]: line for line in _lines(report.folder)}
    for tid in TASKS:
        line = lines[tid]
        assert (line["status"], line["answer_source"]) == ("answered", "submit"), _why(report.folder, line)
        reported = model.reported(tid)
        assert (line["input_tokens"], line["output_tokens"]) == (reported.input, reported.output), (
            line,
            reported,
        )
        if "cached_tokens" in line:
            assert line["cached_tokens"] == reported.cached
        assert line["rounds"] and line["rounds"] >= 5
        if name == "codex":  # model requests, counted from its rollout as the others count theirs
            assert (line["rounds"], line["rounds_kind"]) == (len(model.main_requests(tid)), "model requests")
        log = (report.folder / line["log"]).read_text(encoding="utf-8")
        assert "[ctbench] exit status 0" in log
        proxy = [ln.split(" ", 3)[-1] for ln in log.splitlines() if ln.startswith("[ctb proxy] ")]
        assert (
            proxy and proxy[1].startswith("session checked in ") and "read tools/list" in " ".join(proxy)
        ), proxy
        if expected == "bwrap":  # the CLI itself was started through bubblewrap
            assert "[ctbench] sandbox bwrap: " in log and "bwrap ... (" in log, log[:2000]
    scores = score_run(report.folder, TaskSet.open(task_set), write=False)["summary"]
    for family in ("rca", "path"):
        assert scores[family]["accuracy"] == 1.0, (family, scores[family])
        assert scores[family]["evidence"]["coverage"] == 1.0, (family, scores[family]["evidence"])
    main = model.main_requests()
    assert main, "the CLI never offered the ctb tools to the model"
    for request in main:
        bare = [t for t in request.tool_names if any(t.endswith(b) for b in CTB_TOOLS)]
        assert sorted(b for t in bare for b in CTB_TOOLS if t.endswith(b)) == sorted(CTB_TOOLS), (
            request.tool_names
        )
        others = [t for t in request.tool_names if t not in bare]
        assert not [t for t in others if any(word in t.lower() for word in FORBIDDEN)], others
        schema = next(t["schema"] for t in request.tools if t["name"].endswith("run_command"))
        assert set(schema["properties"]) == {"device", "command"}
    assert report.config.harness_version == agent_class(name).availability().version


class _NoReplay:
    """Mix-in: the MCP proxy points at a port where nothing listens (the replay is unreachable)."""

    dead_url = ""

    @staticmethod
    def mcp_command(ctx):  # type: ignore[no-untyped-def]
        return [
            sys.executable,
            "-m",
            "ctbench.evaluate.agents.mcp_bridge",
            _NoReplay.dead_url,
            ctx.session_id,
        ]


@pytest.mark.parametrize("name", HARNESSES)
def test_unreachable_mcp_server_is_an_infrastructure_error_then_resumes(
    name: str, task_set: Path, tmp_path: Path
) -> None:
    cls = harness(name)
    broken = type(f"NoReplay{cls.__name__}", (_NoReplay, cls), {})
    _NoReplay.dead_url = f"http://127.0.0.1:{_free_port()}"
    with ScriptedModelServer(scripts_for(task_set, list(TASKS)), max_seconds=300) as model:
        settings = _settings(name, model.url, task_set, tmp_path / "run", select="RCA-001")
        first = Runner(settings, agent=broken(settings.agent)).run()
        (line,) = _lines(first.folder)
        assert (line["status"], line["error_kind"]) == ("error", "infrastructure"), line
        # its MCP client's account of the failure, from a log that goes with the home
        account = {"hermes": "[hermes agent.log]", "claude-code": "[claude mcp-logs]"}.get(name)
        if account is not None:
            assert account in (first.folder / "logs" / "RCA-001.log").read_text(encoding="utf-8")
        again = Runner(
            _settings(name, model.url, task_set, tmp_path / "run", select="RCA-001", retry_errors=True)
        ).run()
    last = _lines(again.folder)[-1]
    assert (last["status"], last["answer_source"]) == ("answered", "submit"), _why(again.folder, last)
    assert again.resumed


@pytest.mark.parametrize("name", HARNESSES)
def test_model_endpoint_down_is_an_infrastructure_error_then_resumes(
    name: str, task_set: Path, tmp_path: Path
) -> None:
    harness(name)
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    first = Runner(_settings(name, url, task_set, tmp_path / "run", select="RCA-001", timeout_s=120.0)).run()
    (line,) = _lines(first.folder)
    assert (line["status"], line["error_kind"]) == ("error", "infrastructure"), line
    assert first.summary_line().endswith(f"ctb-eval run --resume {first.folder} --retry-errors")
    with ScriptedModelServer(scripts_for(task_set, ["RCA-001"]), max_seconds=300, port=port):
        again = Runner(
            _settings(
                name, url, task_set, tmp_path / "run", select="RCA-001", timeout_s=120.0, retry_errors=True
            )
        ).run()
    last = _lines(again.folder)[-1]
    assert (last["status"], last["answer_source"]) == ("answered", "submit"), _why(again.folder, last)


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _mine(pid: int) -> bool:
    """A descendant of this test process (other people's runs on the machine do not count)."""
    for _ in range(64):
        pid = _parent(pid)
        if pid == os.getpid():
            return True
        if pid <= 1:
            return False
    return False


def _processes(marker: str, *, mine: bool = False) -> dict[int, str]:
    """Live processes whose command line mentions ``marker`` (only this test's descendants: ``mine``)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmd and state != "Z" and (not mine or _mine(int(entry.name))):
            found[int(entry.name)] = cmd
    return found


@pytest.mark.parametrize("name", HARNESSES)
def test_timeout_leaves_no_process_of_the_cli_behind(name: str, task_set: Path, tmp_path: Path) -> None:
    harness(name)
    # the MCP server each CLI starts as its child: the runner's --connect proxy, or the interim bridge
    proxies = ("ctbench.evaluate.agents.mcp_bridge", "ctbench.replay.cli mcp --connect")
    found = find(name)
    assert found is not None
    exe = str(found.folder or found.executable)  # every process of the install names its folder
    seen: dict[int, str] = {}
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for marker in (*proxies, exe):
                seen.update(_processes(marker, mine=True))
            time.sleep(0.05)

    with ScriptedModelServer(scripts_for(task_set, ["RCA-001"]), max_seconds=180, delay_s=120) as model:
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            report = Runner(
                _settings(name, model.url, task_set, tmp_path / "run", select="RCA-001", timeout_s=30.0)
            ).run()
        finally:
            done.set()
            watcher.join(5)
    (line,) = _lines(report.folder)
    assert line["status"] == "timeout", (line["status"], line.get("error"), line.get("error_kind"))
    assert model.requests, "the CLI never reached the model: the timeout did not hit a working CLI"
    assert any(exe in cmd for cmd in seen.values()), seen
    # A CLI that offered the model the ctb tools had its MCP proxy running; Claude Code may send its first
    # request before its MCP servers are up (seen once under load), and then the proxy may not have started.
    offered = any(any("list_devices" in t for t in r.tool_names) for r in model.requests)
    assert any(p in cmd for cmd in seen.values() for p in proxies) or not offered, seen
    alive = {pid for marker in (*proxies, exe) for pid in _processes(marker)}
    left = {pid: cmd for pid, cmd in seen.items() if pid in alive}
    assert not left, f"still running after the timeout: {left}"


EFFORT_IN_REQUEST = {
    "codex": lambda body: (body.get("reasoning") or {}).get("effort"),
    "hermes": lambda body: body.get("reasoning_effort") or (body.get("reasoning") or {}).get("effort"),
    "claude-code": lambda body: (body.get("output_config") or {}).get("effort"),
}


@pytest.mark.parametrize("name", HARNESSES)
def test_a_cli_that_answers_nothing_valid_is_unparsable_and_effort_reaches_the_model(
    name: str, task_set: Path, tmp_path: Path
) -> None:
    harness(name)
    scripts = scripts_for(task_set, ["RCA-001"], submit=False, final_text="I could not find the fault.")
    with ScriptedModelServer(scripts, max_seconds=300) as model:
        report = Runner(
            _settings(
                name,
                model.url,
                task_set,
                tmp_path / "run",
                select="RCA-001",
                agent_args={"reasoning_effort": "high"},
            )
        ).run()
    (line,) = _lines(report.folder)
    assert (line["status"], line["answer_source"]) == ("unparsable", "final_message"), _why(
        report.folder, line
    )
    assert "could not find the fault" in line["answer_text"]
    assert line["rounds_kind"] == agent_class(name).rounds_kind  # type: ignore[attr-defined]
    efforts = {EFFORT_IN_REQUEST[name](r.body) for r in model.main_requests()}
    assert efforts == {"high"}, [r.body.get("reasoning") for r in model.main_requests()]


def test_a_reused_pid_is_not_taken_for_an_orphan_of_the_attempt() -> None:
    """At an attempt's end its orphans are killed; a pid that came round again is another process."""
    import subprocess

    from ctbench.evaluate.agents.harness_base import adopted, remember

    child = subprocess.Popen(["sleep", "30"])  # a child of the runner, as another attempt's CLI is
    try:
        seen: dict[int, int | None] = {}
        remember(seen, [child.pid])
        assert adopted(seen) == [child.pid]  # the process noted, still there: it is ended
        start = seen[child.pid]
        assert start is not None
        seen[child.pid] = start - 1  # noted when the pid belonged to an earlier process
        assert adopted(seen) == []
    finally:
        child.kill()
        child.wait()
