"""Runs written before the family records went generic still load and score identically.

``tests/fixtures/runs-v2-families/run`` is a real ``ctb-eval run --trials 2`` of a ``command`` agent
over five bundled tasks of the three built-in families (``tasks/`` beside it, copied from the bundled
set), written and scored by ctbench at the commit before this change (main at 8a8cf07). Its answers
cover a right answer, an alias-normalised one, a near-miss label, an unknown node, prose with no
answer, a right and a wrong path, a reversed link, a wrong port and a link to an unknown node, and an
empty answer block. ``expected-scores.json`` and ``expected-scorecard.txt`` are what that commit's
``ctb-eval score`` wrote and printed.

Today's code must read every stored parse back to the same value and write the same scores.json (but
for the task set's git commit, which moves with this repository) and print the same scorecard.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ctbench.scoring.parse import ParsedAnswer
from tests.conftest import run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "runs-v2-families"


COMMIT_WARNING = "scored against task-set commit"


def _provenance_free(text: str) -> str:
    """scores.json without the task set's git commit: the fixture's tasks live in this repository, so
    their commit moves with every commit made to it (and scoring says so in a warning)."""
    doc = json.loads(text)
    doc["scoring"].pop("task_set_commit")
    doc["scoring"].pop("task_set_dirty")
    doc["warnings"] = [w for w in doc["warnings"] if not w.startswith(COMMIT_WARNING)]
    return json.dumps(doc, indent=2)


def _card(text: str) -> list[str]:
    return [line for line in text.splitlines() if COMMIT_WARNING not in line]


def test_every_stored_parse_reads_back_to_what_was_written() -> None:
    lines = [json.loads(x) for x in (FIXTURE / "run" / "results.jsonl").read_text("utf-8").splitlines()]
    assert {x["family"] for x in lines} == {"rca", "path", "topology"}
    assert len(lines) == 10
    for line in lines:
        stored = {k: v for k, v in line["answer"].items() if k != "parser"}
        parsed = ParsedAnswer.from_json(stored)
        assert parsed.family == line["family"]
        assert parsed.to_json() == stored, line["task_id"]


def test_an_old_run_scores_byte_for_byte_as_it_did(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE / "run", run)
    (run / "scores.json").unlink()
    res = run_cli(
        "evaluate", "score", str(run), "--tasks", str(FIXTURE / "tasks"), env={"COLUMNS": "120"}, timeout=300
    )
    assert res.returncode == 0, res.stderr
    assert _provenance_free((run / "scores.json").read_text("utf-8")) == _provenance_free(
        (FIXTURE / "expected-scores.json").read_text("utf-8")
    )
    assert _card(res.stdout) == _card((FIXTURE / "expected-scorecard.txt").read_text("utf-8"))
    summary = json.loads((run / "scores.json").read_text("utf-8"))["summary"]
    # the figures by hand: RCA-001 right then wrong, RCA-002 wrong twice -> 1/4; TOPO-001 right then
    # wrong, TOPO-002 wrong twice -> 1/4; PATH-001 right then wrong -> 1/2
    assert summary["rca"]["accuracy"] == 0.25
    assert summary["topology"]["accuracy"] == 0.25
    assert summary["path"]["accuracy"] == 0.5
