"""`ctb-eval import-results`: a paper-style result JSON becomes a run folder that scores like a native one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctbench.errors import CtbError
from ctbench.evaluate.importer import import_results
from ctbench.evaluate.runfolder import RunFolder
from ctbench.evaluate.score import score_run
from ctbench.replay.trajectory import read_trajectory
from ctbench.store import TaskSet
from tests.conftest import run_cli
from tests.test_score_support import gold_text, starter_copy

N = 300


@pytest.fixture
def starter_set(tmp_path: Path) -> Path:
    """The bundled task set reduced to the three starter tasks the expected numbers are worked out on."""
    return starter_copy(tmp_path)


def paper_results(ts: TaskSet) -> list[dict]:
    """The gold answers with the golden commands, written in the different ways harnesses write them."""
    items = []
    for ref in ts.refs():
        hidden = ts.load_hidden(ref)
        actions = hidden.golden_actions
        commands: list[object] = []
        for i, a in enumerate(actions):
            if i % 3 == 0:
                commands.append(f"{a.device}: {a.command}")
            elif i % 3 == 1:
                commands.append({"device": a.device.lower(), "command": a.command})
            else:
                commands.append(
                    {
                        "type": "function",
                        "function": {
                            "name": "run_command",
                            "arguments": json.dumps({"device": a.device, "command": a.command}),
                        },
                    }
                )
        items.append(
            {
                "question_id": ref.id.lower(),
                "final_answer": gold_text(ts, ref.id),
                "commands_executed": commands,
                "rounds": len(commands) + 1,
                "latency": 42.5,
                "usage": {"prompt_tokens": 12000, "completion_tokens": 800},
            }
        )
    return items


def test_round_trip_scores_like_the_oracle(starter_set: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(starter_set)
    src = tmp_path / "codex_results.json"
    src.write_text(json.dumps({"model": "gpt-5.5", "harness": "codex", "results": paper_results(ts)}))
    summary = import_results(src, tmp_path / "runs" / "codex", ts)
    assert summary.tasks == 3 and summary.answered == 3 and summary.commands == 12
    assert summary.outcomes == {
        "recorded": 12,
        "denied": 0,
        "invalid": 0,
        "unknown-device": 0,
        "help": 0,
        "session": 0,
    }
    run = tmp_path / "runs" / "codex"
    config = RunFolder(run).load_config()
    assert (config.agent, config.model, config.harness, config.name) == ("codex", "gpt-5.5", "codex", "codex")
    assert config.tasks == ["PATH-001", "RCA-001", "RCA-002"]
    assert not list((tmp_path / "runs").glob(".*"))  # no temporary folder left behind
    lines = RunFolder(run).read_results().lines
    assert {(r.status, r.input_tokens, r.output_tokens, r.latency_s) for r in lines} == {
        ("answered", 12000, 800, 42.5)
    }
    scores = score_run(run, ts, n_resamples=N)
    for fam, third in (("rca", "id_iou"), ("path", "rest_iou")):
        s = scores["summary"][fam]
        assert (s["accuracy"], s["loc_iou"], s[third], s["evidence"]["coverage"], s["evidence"]["f1"]) == (
            1.0,
        ) * 5
    assert scores["summary"]["efficiency"]["all"]["total_tokens"]["mean"] == 12800


def test_commands_are_canonicalised_like_replay(starter_set: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(starter_set)
    src = tmp_path / "r.json"
    src.write_text(
        json.dumps(
            [
                {
                    "task_id": "RCA-001",
                    "answer": "CORE_SW_01;GE0/0/24;shutdown",
                    "commands": [
                        "<CORE_SW_01> dis int br | inc GE",  # abbreviated and filtered: covers the bare golden action
                        ["CORE_SW_01", "dis cur int GE0/0/24"],  # abbreviated interface too
                        {
                            "device": "CORE_SW_01",
                            "command": "display version",
                        },  # valid, not recorded: denied, still executed
                        {"device": "CORE_SW_01", "command": "dis foo"},  # the device rejects it: invalid
                        {"device": "CORE_SW_01", "command": "dis int br ?"},  # context help: executes nothing
                        {"device": "NOPE_01", "command": "display version"},  # not in the network
                        {"note": "no device here"},
                    ],
                }
            ]
        )
    )
    summary = import_results(src, tmp_path / "run", ts)
    assert summary.outcomes == {
        "recorded": 2,
        "denied": 1,
        "invalid": 1,
        "unknown-device": 1,
        "help": 1,
        "session": 0,
    }
    assert any("1 command entr(y/ies) name no device" in w for w in summary.warnings)
    traj = read_trajectory(tmp_path / "run" / "trajectories" / "RCA-001.jsonl")
    assert [(r.canonical, r.outcome.value) for r in traj] == [
        ("display interface brief", "recorded"),
        ("display current-configuration interface GigabitEthernet0/0/24", "recorded"),
        ("display version", "denied"),
        (None, "invalid"),
        (None, "help"),
        (None, "unknown-device"),
    ]
    assert traj[0].command == "dis int br | inc GE"
    task = score_run(tmp_path / "run", ts, n_resamples=N)["tasks"][0]
    assert task["exact"] is True and task["evidence"] == {"covered": 2, "golden": 3, "executed": 3}


def test_statuses_and_missing_usage(starter_set: Path, tmp_path: Path) -> None:
    src = tmp_path / "r.json"
    src.write_text(
        json.dumps(
            [
                {"id": "RCA-001", "status": "timeout", "last_message": "still thinking"},
                {"id": "RCA-002", "error": "harness crashed"},
                {"id": "PATH-001", "output": {"content": "no path found"}},
            ]
        )
    )
    import_results(src, tmp_path / "run", TaskSet.open(starter_set))
    lines = {r.task_id: r for r in RunFolder(tmp_path / "run").read_results().lines}
    assert lines["RCA-001"].status == "timeout" and lines["RCA-002"].status == "error"
    assert lines["PATH-001"].status == "unparsable" and lines["PATH-001"].answer_text == "no path found"
    assert lines["PATH-001"].rounds is None and lines["PATH-001"].input_tokens is None


def test_bad_input_gives_clear_messages_and_leaves_nothing(starter_set: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(starter_set)
    src = tmp_path / "r.json"
    out = tmp_path / "run"
    cases = [
        ('{"results": [ {"task_id": "RCA-001",, }', r"r\.json:1: not valid JSON"),
        ('"just a string"', "expected a list of per-question results"),
        ("[]", "holds no results"),
        ("[42]", "result 1: expected an object"),
        ('[{"answer": "x"}]', "result 1: no task id"),
        (
            '[{"task_id": "q7"}, {"task_id": "RCA-001"}, {"task_id": "q8"}]',
            r"2 task id\(s\) are not in the task set .*q7 \(result 1\), q8 \(result 3\)",
        ),
        (
            '[{"task_id": "RCA-001"}, {"task_id": "rca-001"}]',
            "result 2: task RCA-001 already imported from result 1",
        ),
        (
            '[{"task_id": "RCA-001"}, {"task_id": "RCA-002", "commands": "display version"}]',
            r"result 2 \(RCA-002\): commands must be a list",
        ),
    ]
    for text, message in cases:
        src.write_text(text)
        with pytest.raises(CtbError, match=message):
            import_results(src, out, ts)
        assert not out.exists() and not list(tmp_path.glob(".run.*"))
    with pytest.raises(CtbError, match="no such file"):
        import_results(tmp_path / "nope.json", out, ts)
    src.write_text('[{"task_id": "RCA-001", "answer": "x"}]')
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(CtbError, match="already exists and is not empty"):
        import_results(src, out, ts)
    assert (out / "keep.txt").read_text() == "mine"


def test_import_command(starter_set: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(starter_set)
    src = tmp_path / "hermes.json"
    src.write_text(json.dumps(paper_results(ts)))
    out = tmp_path / "runs" / "hermes"
    proc = run_cli(
        "evaluate",
        "import-results",
        str(src),
        "--out",
        str(out),
        "--tasks",
        str(starter_set),
        "--agent",
        "hermes",
        "--model",
        "qwen",
    )
    assert proc.returncode == 0, proc.stderr
    assert "imported 3 task(s) (3 answered, 12 command(s): 12 recorded)" in proc.stdout
    assert f"next: ctb-eval score {out}" in proc.stdout
    config = RunFolder(out).load_config()
    assert (config.agent, config.model) == ("hermes", "qwen")
    items = paper_results(ts)
    items[0]["final_answer"] = "I think it is a cabling problem somewhere."
    src.write_text(json.dumps(items))
    proc = run_cli(
        "evaluate",
        "import-results",
        str(src),
        "--out",
        str(tmp_path / "runs" / "vague"),
        "--tasks",
        str(starter_set),
    )
    assert proc.returncode == 0, proc.stderr
    assert "imported 3 task(s) (2 answered," in proc.stdout
    assert (
        f"unparsable (the answer is not in the task's format; scored as wrong): {items[0]['question_id'].upper()}"
        in proc.stdout
    )
    src.write_text("{broken")
    proc = run_cli(
        "evaluate", "import-results", str(src), "--out", str(tmp_path / "x"), "--tasks", str(starter_set)
    )
    assert proc.returncode == 1 and "not valid JSON" in proc.stderr and "Traceback" not in proc.stderr
