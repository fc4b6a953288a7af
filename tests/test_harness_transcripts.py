"""Each real agent CLI's conversation is kept in the run folder, and its ATIF export is that conversation.

The CLIs (Codex, Claude Code, Hermes) run through the runner as ``ctb-eval run --agent NAME`` does,
under the default sandbox (bubblewrap where it works), against the scripted model server, which
records every request it answered and what it played. The transcript in ``transcripts/<ID>.jsonl``
must hold, in the server's order, each model response the CLI received (its tool call with the
arguments the server sent, or its final text), each tool result as the replay returned it, the
harness's own timestamps and, where the harness reports it, each request's usage. The ATIF export
must list the same steps in the same order, with the real results (the server's "Answer recorded:
N line(s).", not an invented text) and the real times, and pass the ATIF checker.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctbench.evaluate.cli import main as ctb_eval
from ctbench.evaluate.transcript import TranscriptEntry, bare_tool, read_transcript, transcript_path
from ctbench.yamlio import load_fast
from tests.atif_check import check_atif
from tests.conftest import needs_bwrap
from tests.support.harness_runs import SNAPSHOT, TASK, HarnessRuns
from tests.test_harness_agents import HARNESSES, _lines, _why

pytestmark = [pytest.mark.timeout(600), pytest.mark.xdist_group("harness-transcripts")]
"""The group shares the runs of ``harness_runs`` (tests/support/harness_runs.py) with the Harbor test."""

OWN_USAGE = {"codex", "claude-code"}
"""Harnesses that record each model request's usage; Hermes keeps only its session's totals, so its
turns' usage is the model tap's reading of the endpoint's responses."""
OWN_MODEL = {"claude-code"}
"""Harnesses that record the model id the endpoint named; for the others it is the model tap's."""


@pytest.mark.parametrize("name", HARNESSES)
@needs_bwrap
def test_the_run_folder_keeps_the_conversation_and_atif_is_that_conversation(
    name: str, harness_runs: HarnessRuns, tmp_path: Path
) -> None:
    run = harness_runs.get(name)
    script, served, answered, task_set, folder = (
        run.script,
        run.served,
        run.answered,
        run.task_set,
        run.folder,
    )
    (line,) = _lines(folder)
    assert (line["status"], line["answer_source"]) == ("answered", "submit"), _why(folder, line)
    # the model the endpoint named, not the one asked for: from the harness, else from the tap
    assert line["model_reported"] == SNAPSHOT, line
    assert line["model_reported_source"] == (
        "claude-code stream" if name in OWN_MODEL else "model endpoint (ctbench model tap)"
    )
    config = load_fast(folder / "run.yaml")
    assert config["totals"]["models_reported"] == [SNAPSHOT]
    assert config["totals"]["models_reported_by"] == {line["model_reported_source"]: [SNAPSHOT]}

    entries, warnings = read_transcript(transcript_path(folder, TASK))
    assert entries and not warnings, warnings
    assert entries[0].kind == "prompt" and TASK in (entries[0].text or "")
    turns = [e for e in entries if e.kind == "model"]
    # one model entry per request the server answered, in its order, holding what it played
    assert len(turns) == len(served), ([t.tool_calls for t in turns], [r.played for r in served])
    for turn, request in zip(turns, served, strict=True):
        assert request.step is not None
        step = script.steps[request.step]
        if step.tool is None:
            assert turn.text == step.text and not turn.tool_calls
        else:
            (call,) = turn.tool_calls
            assert (bare_tool(call.name), call.arguments) == (step.tool, step.arguments)
        assert request.usage is not None and turn.usage is not None, (name, turn)
        assert (turn.usage.input, turn.usage.cached, turn.usage.output) == (
            request.usage.input,
            request.usage.cached,
            request.usage.output,
        )
        assert turn.usage.source == (None if name in OWN_USAGE else "model endpoint (ctbench model tap)")
    # the turns' usage and the side requests' (a session title: not a turn) add up to the line's totals
    side = [r for r in answered if r not in served]
    for key, field in (("input", "input_tokens"), ("output", "output_tokens"), ("cached", "cached_tokens")):
        turned = sum(getattr(t.usage, key) for t in turns if t.usage is not None)
        assert turned + sum(getattr(r.usage, key) for r in side if r.usage) == line[field], (key, line)
    # every call has the result the replay gave it, right after it
    results = {e.call_id: (i, e) for i, e in enumerate(entries) if e.kind == "tool_result"}
    for i, entry in enumerate(entries):
        for call in entry.tool_calls:
            assert call.id in results, (call, results.keys())
            j, got = results[call.id]
            assert j > i and not got.is_error, got
            content = got.content or ""
            if bare_tool(call.name) == "list_devices":
                assert "CORE_SW_01" in content
            elif bare_tool(call.name) == "run_command":
                assert call.arguments["command"].split()[0] not in ("", None)
                assert "Unknown" not in content and len(content) > 20, content
            else:
                assert "Answer recorded: 3 line(s)." in content, content
    # the harness's own clock: in order, within the attempt, not all one instant
    stamps = [e.t for e in entries]
    assert all(t is not None for t in stamps), [e.kind for e in entries if e.t is None]
    assert stamps == sorted(stamps)  # type: ignore[type-var]
    assert len({t for t in stamps}) > len(stamps) // 2
    assert turns[-1].text == script.steps[-1].text

    _shown_by_the_viewer_and_the_report(folder, task_set, entries)

    out = tmp_path / "atif"
    assert (
        ctb_eval(["export", str(folder), "--format", "atif", "--out", str(out), "--tasks", str(task_set)])
        == 0
    )
    doc = json.loads((out / TASK / "trajectory.json").read_text(encoding="utf-8"))
    assert check_atif(doc) == [], check_atif(doc)
    _atif_is_the_transcript(doc, entries, name)


def _atif_is_the_transcript(doc: dict, entries: list[TranscriptEntry], name: str) -> None:
    steps = doc["steps"]
    assert steps[0]["source"] == "user" and TASK in steps[0]["message"]
    agent = steps[1:]
    turns = [e for e in entries if e.kind == "model"]
    assert len(agent) == len(turns)
    for step, turn in zip(agent, turns, strict=True):
        assert step["source"] == "agent"
        assert step["message"] == (turn.text or "")
        assert [c["tool_call_id"] for c in step.get("tool_calls", [])] == [c.id for c in turn.tool_calls]
        assert step["timestamp"].startswith(turn.t.strftime("%Y-%m-%dT%H:%M:%S")) if turn.t else True
        for call in step.get("tool_calls", []):
            (result,) = [
                r for r in step["observation"]["results"] if r["source_call_id"] == call["tool_call_id"]
            ]
            (recorded,) = [
                e for e in entries if e.kind == "tool_result" and e.call_id == call["tool_call_id"]
            ]
            assert result["content"] == recorded.content
        assert step["metrics"]["prompt_tokens"] == turn.usage.input  # type: ignore[union-attr]
    submit = next(
        i
        for i, s in enumerate(agent)
        if any(c["function_name"] == "submit_answer" for c in s.get("tool_calls", []))
    )
    assert "Answer recorded: 3 line(s)." in agent[submit]["observation"]["results"][0]["content"]
    assert agent[-1]["message"] == "Done: answer submitted." and submit == len(agent) - 2
    assert len({s["timestamp"] for s in agent[:4]}) > 1, [s["timestamp"] for s in agent]
    assert doc["final_metrics"]["total_steps"] == len(steps)


def _shown_by_the_viewer_and_the_report(run: Path, task_set: Path, entries: list[TranscriptEntry]) -> None:
    """The viewer's log pane and the HTML drill-down show the transcript, every call with its result."""
    from ctbench.evaluate.details import DetailLoader
    from ctbench.evaluate.report_tasks import detail_html
    from ctbench.evaluate.score import Scorer, read_trial_results
    from ctbench.store import TaskSet
    from ctbench.viewer.app import log_text

    (line,) = [line for _, line in read_trial_results(run)[0].values()]
    detail = DetailLoader(Scorer(TaskSet.open(task_set))).load(run, TASK, line)
    assert [e.model_dump() for e in detail.transcript] == [e.model_dump() for e in entries]
    html, text = detail_html(detail), log_text(detail)
    assert f"Transcript: {len(entries)} entries" in html and f"Transcript[/b] ({len(entries)} entries" in text
    for entry in entries:
        for call in entry.tool_calls:
            assert html.count(f"[{call.id}]") == 2 and text.count(f"[{call.id}]") == 2  # the call, its result
