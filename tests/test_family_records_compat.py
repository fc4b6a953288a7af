"""Runs written before the family records went generic still load and score identically.

``tests/fixtures/runs-v2-families/run`` is a real ``ctb-eval run --trials 2`` of a ``command`` agent
over five bundled tasks of the three built-in families (``tasks/`` beside it, copied from the bundled
set), written by ctbench at main's 8a8cf07, before the family records went generic. Its answers
cover a right answer, an alias-normalised one, a near-miss label, an unknown node, prose with no
answer, a right and a wrong path, a reversed link, a wrong port and a link to an unknown node, and an
empty answer block. ``expected-scores.json`` and ``expected-scorecard.txt`` are what ``ctb-eval score``
wrote and printed for it before the change.

Today's code must read every stored parse back to the same value, judge every answer as
``expected-scores.json`` says (per-task scores, summary, standard errors, failure modes, pass@k) and
print the same scorecard. That file was last written by main at 9143a14, the tip before the records
went generic. A deliberate change to the metrics rewrites it with the code of that change::

    ctb-eval score tests/fixtures/runs-v2-families/run --tasks tests/fixtures/runs-v2-families/tasks
    cp tests/fixtures/runs-v2-families/run/scores.json tests/fixtures/runs-v2-families/expected-scores.json
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ctbench.scoring.parse import ParsedAnswer
from tests.conftest import run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "runs-v2-families"


JUDGED = ("n_tasks", "incomplete", "unfinished", "missing_results", "trials", "n_task_trials")
"""What scores.json says of the answers themselves (with the per-task scores, the summary, the SEs, the
failure modes and pass@k); the rest - the task set's git commit, which moves with this repository, and
the strata, which follow the set's thresholds in ctbench.yaml - is not the judge's."""


def _judged(text: str) -> dict[str, object]:
    doc = json.loads(text)
    tasks = [{k: v for k, v in t.items() if k != "meta"} for t in doc["tasks"]]
    return {
        **{k: doc.get(k) for k in JUDGED},
        "tasks": tasks,
        **{k: doc[k] for k in ("summary", "se", "failures", "pass_k")},
    }


def _card(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("warning:")]


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
    assert _judged((run / "scores.json").read_text("utf-8")) == _judged(
        (FIXTURE / "expected-scores.json").read_text("utf-8")
    )
    assert _card(res.stdout) == _card((FIXTURE / "expected-scorecard.txt").read_text("utf-8"))
    summary = json.loads((run / "scores.json").read_text("utf-8"))["summary"]
    # the figures by hand: RCA-001 right then wrong, RCA-002 wrong twice -> 1/4; TOPO-001 right then
    # wrong, TOPO-002 wrong twice -> 1/4; PATH-001 right then wrong -> 1/2
    assert summary["rca"]["accuracy"] == 0.25
    assert summary["topology"]["accuracy"] == 0.25
    assert summary["path"]["accuracy"] == 0.5


def test_the_report_breaks_topology_down_like_the_paper_families(tmp_path: Path) -> None:
    """Table 18, Table 22 and the protocol-complexity and golden-tier breakdowns hold a row for each
    family the run has, topology restoration included; they once listed the paper's two and plug-ins."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURE / "run", run)
    res = run_cli(
        "evaluate", "report", str(run), "--tasks", str(FIXTURE / "tasks"), "--format", "json",
        "--resamples", "100", timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    tables = {t["key"]: t for t in json.loads(res.stdout)}

    def by_family(key: str) -> dict[str, dict]:
        t = tables[key]
        return {r[1]: dict(zip(t["columns"], r, strict=True)) for r in t["rows"]}

    assert set(by_family("table18")) == {"RCA", "Path", "Topology"}
    t22 = by_family("table22")
    # TOPO-001 right then wrong, TOPO-002 wrong twice: 1 of 4 task-trials, over 2 tasks at level low
    assert (t22["Topology"]["Level"], t22["Topology"]["n"], t22["Topology"]["Acc"]) == ("low", 2, 25.0)
    for key in ("by_protocol_complexity", "by_golden_tier"):
        assert by_family(key)["Topology"]["n"] == 2, key
