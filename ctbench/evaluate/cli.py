"""``ctb-eval``: run agents on the approved tasks, score, compare and report."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ctbench.cli_support import add_command, build_parser, not_built, run

DESCRIPTION = """\
Run agents on the benchmark, score the runs with the paper's metrics, compare and report.

examples:
  ctb-eval run --agent oracle                  every approved task, writes runs/<name>/, prints the scorecard
  ctb-eval run --agent openai --model gpt-4o --base-url http://127.0.0.1:8000/v1
  ctb-eval score runs/oracle-...               (re)score a run folder, writes scores.json
  ctb-eval compare runs/a runs/b               paired tests (McNemar, bootstrap, Holm)
  ctb-eval report runs/a runs/b --format html > report.html
  ctb-eval prompt RCA-001                      the exact prompt an agent receives
"""


def build() -> tuple[argparse.ArgumentParser, object]:
    parser, sub = build_parser("ctb-eval", DESCRIPTION)
    for name, what in [
        ("run", "run an agent on the tasks and write a run folder"),
        ("score", "score a run folder (writes scores.json, prints the scorecard)"),
        ("compare", "paired comparison of runs on the same tasks"),
        ("report", "tables and charts for one or more runs (text, md, latex, json, html)"),
        ("prompt", "print the prompt an agent receives for a task"),
        ("import-results", "turn a paper-style result JSON into a run folder"),
    ]:
        add_command(sub, name, what, not_built(f"ctb-eval {name}"))
    return parser, sub


def main(argv: Sequence[str] | None = None) -> int:
    parser, _ = build()
    return run(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
