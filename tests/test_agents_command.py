"""The ``command`` agent: real child processes, a real HTTP replay server, real process groups."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ctbench.evaluate.runner import Runner, RunSettings
from tests.conftest import needs_bwrap
from tests.test_runner import agent_script, results

HUNG_AGENT = """\
import os, signal, subprocess, sys, time
# Leader of the group: record our pid (= the process group id), start a child that ignores SIGTERM,
# then hang. The runner must end both.
with open(sys.argv[1], "w") as fh:
    fh.write(str(os.getpid()))
subprocess.Popen([sys.executable, "-c",
                  "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"])
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("thinking...", file=sys.stderr, flush=True)
time.sleep(120)
"""

CRASHING_AGENT = """\
import sys
sys.stdin.read()
print("<answer>CORE_SW_01;GigabitEthernet0/0/24;shutdown</answer>")
print("RuntimeError: model quota exhausted", file=sys.stderr)
sys.exit(3)
"""

API_AGENT = """\
import json, os, sys, urllib.request
prompt = sys.stdin.read()
assert "RCA-001" in prompt and os.environ["CTBENCH_TASK_ID"] == "RCA-001"
assert os.getcwd() == os.environ["CTBENCH_WORKSPACE"] and os.listdir(".") == []
url, sid = os.environ["CTBENCH_REPLAY_URL"], os.environ["CTBENCH_REPLAY_SESSION"]
token = os.environ["CTBENCH_REPLAY_TOKEN"]

def post(path, body):
    req = urllib.request.Request(f"{url}/sessions/{sid}/{path}", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json", "authorization": f"Bearer {token}"})
    return json.load(urllib.request.urlopen(req))

obs = post("run", {"device": "CORE_SW_01", "command": "dis int br"})
assert obs["outcome"] == "recorded", obs
post("run", {"device": "CORE_SW_01", "command": "display clock"})
mode = sys.argv[1]
answer = "CORE_SW_01;GE0/0/24;interface shutdown"
if mode == "submit":
    post("submit", {"answer": answer})
    print("I think it is something else entirely")   # the submission wins over stdout
elif mode == "file":
    with open(os.environ["CTBENCH_ANSWER_FILE"], "w") as fh:
        fh.write(answer + "\\n")
    print("see the answer file")
else:
    print("Final answer: " + answer)
with open(os.environ["CTBENCH_USAGE_FILE"], "w") as fh:
    json.dump({"rounds": 4, "input_tokens": 1200, "output_tokens": 80}, fh)
"""


def test_timeout_ends_the_whole_process_group(task_set: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "agent.pid"
    cmd = agent_script(tmp_path, "hung.py", HUNG_AGENT) + f" {pid_file}"
    # unsandboxed: the agent writes its pid where this test can read it
    settings = RunSettings(
        allow_unreviewed=True,
        agent="command",
        agent_cmd=cmd,
        tasks=task_set,
        out=tmp_path / "run",
        select="RCA-001",
        timeout_s=1.0,
        sandbox="none",
    )
    report = Runner(settings).run()
    (line,) = results(report.folder)
    assert line["status"] == "timeout" and line["error"] == "no answer within 1s"
    assert line["attempts"] == 1 and line["answer"] is None
    pgid = int(pid_file.read_text())
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        pass
    else:  # pragma: no cover - the assertion message is the point
        raise AssertionError(f"process group {pgid} still has members after the timeout")
    log = (report.folder / "logs" / "RCA-001.log").read_text(encoding="utf-8")
    assert "thinking..." in log and f"process group {pgid}" in log and "ended by the runner" in log


@needs_bwrap
def test_crashing_agent_is_an_agent_error_with_its_last_words(task_set: Path, tmp_path: Path) -> None:
    cmd = agent_script(tmp_path, "crash.py", CRASHING_AGENT)
    report = Runner(
        RunSettings(
            allow_unreviewed=True,
            agent="command",
            agent_cmd=cmd,
            tasks=task_set,
            out=tmp_path / "run",
            select="RCA-001",
            retries=2,
        )
    ).run()
    (line,) = results(report.folder)
    assert (line["status"], line["error_kind"], line["attempts"]) == ("error", "agent", 1)
    assert "exited with status 3" in line["error"] and "model quota exhausted" in line["error"]
    assert line["answer_text"] is None
    log = (report.folder / "logs" / "RCA-001.log").read_text(encoding="utf-8")
    assert "--- stdout ---" in log and "<answer>" in log  # the raw output is kept for inspection


@needs_bwrap
def test_answers_come_from_submit_then_answer_file_then_stdout(task_set: Path, tmp_path: Path) -> None:
    script = agent_script(tmp_path, "api_agent.py", API_AGENT)
    for mode, source in (("submit", "submit"), ("file", "answer_file"), ("stdout", "stdout")):
        report = Runner(
            RunSettings(
                allow_unreviewed=True,
                agent="command",
                agent_cmd=f"{script} {mode}",
                tasks=task_set,
                out=tmp_path / mode,
                select="RCA-001",
                model="m-1",
            )
        ).run()
        (line,) = results(report.folder)
        assert line["status"] == "answered", (mode, line)
        assert line["answer_source"] == source
        assert line["answer"]["rca"] == [
            {"node": "CORE_SW_01", "object": "GigabitEthernet0/0/24", "label": "shutdown"}
        ]
        assert (line["rounds"], line["input_tokens"], line["output_tokens"]) == (4, 1200, 80)
        trajectory = [json.loads(t) for t in (report.folder / line["trajectory"]).read_text().splitlines()]
        assert [(t["canonical"], t["outcome"]) for t in trajectory] == [
            ("display interface brief", "recorded"),
            ("display clock", "denied"),
        ]
        assert line["commands"] == 2


@needs_bwrap
def test_placeholders_and_relative_script_paths(task_set: Path, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "echo_agent.py").write_text(
        "import sys\nsys.stdin.read()\nprint('<answer>' + ' '.join(sys.argv[1:]) + '</answer>')\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    cmd = f"{sys.executable} echo_agent.py {{task_id}} {{model}}"
    report = Runner(
        RunSettings(
            allow_unreviewed=True,
            agent="command",
            agent_cmd=cmd,
            model="gpt-x",
            tasks=task_set,
            out=tmp_path / "run",
            select="RCA-001",
        )
    ).run()
    (line,) = results(report.folder)
    assert line["answer_text"].strip() == "<answer>RCA-001 gpt-x</answer>"
    assert line["status"] == "unparsable" and line["answer"]["invalid_lines"] == ["RCA-001 gpt-x"]


@needs_bwrap
def test_shell_agent_through_ctb_replay_exec_and_submit(task_set: Path, tmp_path: Path, monkeypatch) -> None:
    """The environment contract end to end: a shell script using the real ``ctb-replay`` client."""
    from tests.conftest import REPO

    monkeypatch.setenv("PYTHONPATH", str(REPO))
    script = tmp_path / "shell_agent.sh"
    script.write_text(
        "#!/bin/sh\n"
        "cat > /dev/null\n"
        f"replay() {{ '{sys.executable}' -m ctbench.replay.cli \"$@\"; }}\n"
        "replay exec CORE_SW_01 dis cur int GE0/0/24 | grep -q shutdown || exit 7\n"
        "replay exec CORE_SW_01 display ip routing-table > /dev/null\n"
        "echo 'CORE_SW_01;GigabitEthernet0/0/24;shutdown' | replay submit -\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    report = Runner(
        RunSettings(
            allow_unreviewed=True,
            agent="command",
            agent_cmd=str(script),
            tasks=task_set,
            out=tmp_path / "run",
            select="RCA-001",
        )
    ).run()
    (line,) = results(report.folder)
    assert (line["status"], line["answer_source"], line["commands"]) == ("answered", "submit", 2), line
    trajectory = [json.loads(t) for t in (report.folder / line["trajectory"]).read_text().splitlines()]
    assert [t["canonical"] for t in trajectory] == [
        "display current-configuration interface GigabitEthernet0/0/24",
        "display ip routing-table",
    ]
