"""``ctb-review``: blind review of tasks with author-reviewer consensus, every step in git."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ctbench.cli_support import add_command, build_parser, not_built, run

DESCRIPTION = """\
Blind review: a second expert solves each task through the replay backend without seeing the gold,
then compares, rules on four criteria (solvability, answer completeness, golden-action consistency,
metadata correctness) and agrees with the author, or the task is discarded. Every step is a commit.

examples:
  ctb-review queue --reviewer alice         what waits for alice
  ctb-review blind RCA-001                  solve blind (statement + device console only)
  ctb-review reveal RCA-001                 score the blind answer against the gold, rule on criteria
  ctb-review status                         yields, rounds, agreement
"""


def build() -> tuple[argparse.ArgumentParser, object]:
    parser, sub = build_parser("ctb-review", DESCRIPTION)
    for name, what in [
        ("submit", "submit a draft task for review"),
        ("assign", "propose reviewers for submitted tasks"),
        ("queue", "what waits for a reviewer"),
        ("blind", "solve a task blind (app, or --answer FILE)"),
        ("reveal", "score the blind answer against the gold and record verdicts"),
        ("respond", "the author answers the reviewer's verdicts"),
        ("discard", "discard a task with a reason"),
        ("pr", "push the review branch and write the pull-request description"),
        ("merge", "merge an approved review branch"),
        ("audit", "prove every approved task was answered blind"),
        ("status", "yields, revisions, blind accuracy, agreement"),
    ]:
        add_command(sub, name, what, not_built(f"ctb-review {name}"))
    return parser, sub


def main(argv: Sequence[str] | None = None) -> int:
    parser, _ = build()
    return run(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
