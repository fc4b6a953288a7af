"""The app's findings panel shows what ``ctb-author validate`` reports, for the same task.

The panel lists :func:`ctbench.authoring.shadow.validate_draft` of the working copy; opened and not
yet edited, that must be exactly the validator's findings on the saved task, bundled task by bundled
task, and on a task with a hand-made ``duplicate-gold`` (the case where the panel once said
"ready for review" while the CLI warned).
"""

from __future__ import annotations

from pathlib import Path

from ctbench.authoring.editing import EditSession
from ctbench.authoring.shadow import validate_draft
from ctbench.store import TaskSet
from ctbench.validation import Validator


def findings(items: list) -> list[tuple[str, str, str]]:
    return sorted((str(f.severity), f.code, f.message) for f in items)


def test_the_panel_equals_validate_on_every_bundled_task(full_task_set: Path) -> None:
    hidden = full_task_set / "rca/RCA-001/hidden.yaml"
    text = hidden.read_text()
    first = text.index("golden_actions:\n") + len("golden_actions:\n")
    entry_end = text.index("\n  - ", first + 1) + 1  # the first golden action, listed twice
    hidden.write_text(text[:entry_end] + text[first:entry_end] + text[entry_end:])

    ts = TaskSet.open(full_task_set)
    seen_duplicate = False
    for ref in ts.refs():
        app = findings(validate_draft(ts, EditSession.open(ts, ref.id).draft))
        cli = findings(Validator(ts).run([ref]).findings)
        assert app == cli, ref.id
        seen_duplicate |= any("listed twice" in message for _, _, message in cli)
    assert seen_duplicate
