"""Both commit writers speak one vocabulary (ctbench.commits), and the review log reader understands both."""

from __future__ import annotations

from ctbench.authoring.saving import commit_message
from ctbench.commits import TRAILER_ACTION, ReviewAction, Trailer, trailer_lines
from ctbench.review.gitflow import LogEntry, format_message, parse_trailers


def test_authoring_and_review_commits_carry_the_same_trailer_names() -> None:
    authoring = commit_message(
        "RCA-001: edit the statement", task_id="RCA-001", action="edit", author="Ann", details=["statement"]
    )
    review = format_message(
        "review(RCA-001): approve",
        [(Trailer.TASK, "RCA-001"), (Trailer.ACTION, ReviewAction.APPROVE), (Trailer.AUTHOR, "Ann")],
    )
    assert f"{TRAILER_ACTION}: edit" in authoring.splitlines()
    a, r = parse_trailers(authoring), parse_trailers(review)
    assert set(a) == set(r) == {"task", "action", "author"}
    assert a["task"] == r["task"] == ["RCA-001"] and a["author"] == r["author"] == ["Ann"]
    entries = [LogEntry("0" * 40, (), "", "Ann", "s", trailers=t) for t in (a, r)]
    assert [(e.task, e.action) for e in entries] == [("RCA-001", "edit"), ("RCA-001", "approve")]


def test_trailer_values_stay_on_one_line_and_empty_ones_are_left_out() -> None:
    assert trailer_lines(
        [
            (Trailer.TASK, "RCA-001"),
            (Trailer.CRITERION, None),
            (Trailer.STATUS, ""),
            (Trailer.PARTS, "statement,\n gold"),
        ]
    ) == ["Ctbench-Task: RCA-001", "Ctbench-Parts: statement, gold"]
