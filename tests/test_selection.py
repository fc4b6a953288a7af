"""The ``--select`` language (:mod:`ctbench.evaluate.selection`): parsing, matching, and picking
tasks from a real copy of the bundled starter tasks (ids, globs, families, visible fields and the
metadata derived from hidden.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctbench.approval.gate import Skipped
from ctbench.errors import CtbError
from ctbench.evaluate.selection import Selection, select_tasks
from ctbench.store import TaskSet


def test_selection_by_id_family_status_and_metadata(task_set: Path) -> None:
    ts = TaskSet.open(task_set)

    def ids(expr: str | None) -> list[str]:
        return [t.id for t in select_tasks(ts, Selection.parse(expr))]

    assert ids(None) == ["PATH-001", "RCA-001", "RCA-002"]
    assert ids("rca") == ["RCA-001", "RCA-002"]
    assert ids("RCA-00*,PATH-001") == ["PATH-001", "RCA-001", "RCA-002"]
    assert ids("family=path") == ["PATH-001"]
    assert ids("category=C1") == ["RCA-001"]
    assert ids("golden_length>=6") == ["PATH-001"]
    assert ids("observability=O1|O2 golden_length<4") == ["RCA-001", "RCA-002"]
    task = task_set / "rca" / "RCA-002" / "task.yaml"
    task.write_text(
        task.read_text(encoding="utf-8").replace("status: approved", "status: draft"), encoding="utf-8"
    )
    ts = TaskSet.open(task_set)
    # Selection picks by fields; whether a draft may run is the gate's decision (test_gate.py).
    assert ids("rca") == ["RCA-001", "RCA-002"]
    assert ids("rca status=approved") == ["RCA-001"]
    with pytest.raises(CtbError, match="no task to run matching 'NOPE'"):
        ids("NOPE")
    with pytest.raises(CtbError, match="unknown field 'colour'"):
        Selection.parse("colour=red")


def test_parse_splits_ids_families_and_filters() -> None:
    sel = Selection.parse("RCA-00*, path observability=O1|O2 golden_length>=5")
    assert sel.ids == ("RCA-00*",)
    assert [(f.key, f.op, f.values) for f in sel.filters] == [
        ("family", "=", ("path",)),
        ("observability", "=", ("O1", "O2")),
        ("golden_length", ">=", ("5",)),
    ]
    assert sel.needs_metadata
    assert not Selection.parse("rca tag=bgp").needs_metadata
    assert Selection.parse(None) == Selection() == Selection.parse("   ")


def test_parse_keeps_quoted_values_and_normalises_keys() -> None:
    sel = Selection.parse("\"label='static route missing'\" Golden-Length<3")
    assert [(f.key, f.op, f.values) for f in sel.filters] == [
        ("label", "=", ("'static route missing'",)),
        ("golden_length", "<", ("3",)),
    ]


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("colour=red", "unknown field 'colour' in 'colour=red'; known fields: author, category"),
        ("tier>=", "'tier>=' has no value after '>='"),
        ("id='RCA", '--select "id=\'RCA": No closing quotation'),
    ],
)
def test_parse_errors_name_the_term(expression: str, message: str) -> None:
    with pytest.raises(CtbError) as err:
        Selection.parse(expression)
    assert message in str(err.value)


def test_matches_globs_case_folded_and_numbers_compared_as_numbers(task_set: Path) -> None:
    ts = TaskSet.open(task_set)
    spec = ts.load_task(next(r for r in ts.refs() if r.id == "RCA-001"))
    assert Selection.parse("rca-0*").matches(spec, None)
    assert not Selection.parse("PATH-*").matches(spec, None)
    assert Selection.parse("status!=draft").matches(spec, None)
    assert Selection.parse("golden_length>=3").matches(spec, {"golden_length": 3})
    assert not Selection.parse("golden_length>=10").matches(spec, {"golden_length": 9})  # not "9" > "10"
    assert not Selection.parse("golden_length>2").matches(spec, {"golden_length": "many"})
    assert not Selection.parse("golden_length>2").matches(spec, None)  # no metadata: no match
    assert Selection.parse("category=C*").matches(spec, {"categories": ["C3", "C1"]})


def test_unreadable_task_is_listed_not_fatal(task_set: Path) -> None:
    (task_set / "rca" / "RCA-002" / "task.yaml").write_text("id: [not, a, task\n", encoding="utf-8")
    ts = TaskSet.open(task_set)
    unreadable: list[Skipped] = []
    assert [t.id for t in select_tasks(ts, Selection.parse("rca"), unreadable)] == ["RCA-001"]
    assert [k.task_id for k in unreadable] == ["RCA-002"]
    assert "cannot be read" in unreadable[0].reason
    with pytest.raises(CtbError):
        select_tasks(ts, Selection.parse("rca"))  # without a list to note it in, it stops
