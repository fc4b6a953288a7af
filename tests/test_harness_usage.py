"""A real agent CLI cut off by the runner's timeout keeps the tokens it had spent.

The scripted model server answers the first steps of the task at once and then stops answering
(``stall_at``), so each CLI (Codex, Claude Code, Hermes) has made a few model requests when the
attempt's timeout ends it. Its result line is a timeout that counts what those requests reported -
an agent that often times out must not look cheap. Codex reports usage on its standard output only
when its turn completes: its tokens are read from the rollout it writes as it goes. Each CLI's
transcript (``transcripts/<ID>.jsonl``) keeps the conversation up to the cut.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctbench.evaluate.runner import Runner
from ctbench.evaluate.transcript import read_transcript, transcript_path
from tests.support.model_server import ScriptedModelServer, scripts_for
from tests.test_harness_agents import HARNESSES, _keys, _lines, _settings, harness  # noqa: F401 - _keys: the test keys

pytestmark = [pytest.mark.timeout(600), pytest.mark.xdist_group("harness-usage")]

STALL_AT = 3
"""list_devices and two commands are answered; the fourth request never is."""


@pytest.mark.parametrize("name", HARNESSES)
def test_a_timed_out_cli_keeps_the_usage_of_its_answered_requests(
    name: str, task_set: Path, tmp_path: Path
) -> None:
    harness(name)
    with ScriptedModelServer(scripts_for(task_set, ["RCA-001"]), max_seconds=240, stall_at=STALL_AT) as model:
        report = Runner(
            _settings(name, model.url, task_set, tmp_path / "run", select="RCA-001", timeout_s=60.0)
        ).run()
        answered = [r for r in model.requests if r.task_id == "RCA-001" and r.usage is not None]
        answered = [r for r in answered if r.step is None or r.step < STALL_AT]
    (line,) = _lines(report.folder)
    assert line["status"] == "timeout", (line["status"], line.get("error"))
    assert len([r for r in answered if r.step is not None]) >= STALL_AT, "the CLI never got to the stall"
    assert line["input_tokens"] == sum(r.usage.input for r in answered if r.usage), (line, answered)
    assert line["output_tokens"] == sum(r.usage.output for r in answered if r.usage)
    assert line["cached_tokens"] == sum(r.usage.cached for r in answered if r.usage)
    assert line["rounds"] == len(answered) and line["rounds_kind"] == "model requests"
    assert "usage so far" in (report.folder / line["log"]).read_text(encoding="utf-8")
    if name == "codex":  # its standard output has no usage before the turn completes: the rollout has
        assert any("read from Codex's rollout" in n for n in line["notes"]), line["notes"]
    # the conversation up to the cut is kept: every answered request, each call with its result
    entries, _ = read_transcript(transcript_path(report.folder, "RCA-001"))
    turns = [e for e in entries if e.kind == "model"]
    assert len(turns) == len([r for r in answered if r.step is not None]), entries
    done = {e.call_id for e in entries if e.kind == "tool_result"}
    assert all(c.id in done for t in turns for c in t.tool_calls), entries
