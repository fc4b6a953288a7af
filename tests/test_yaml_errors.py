"""A broken YAML file is reported where the problem starts (ruamel's marks), in the library and the CLI.

An unclosed quote is only noticed where the parser runs out of file; the author must be sent to the
quote, not to the end of the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctbench.yamlio import YamlFileError, load_document, load_fast
from tests.conftest import run_cli

UNCLOSED = """\
id: RCA-001
family: rca
title: HQ user cannot reach the server
statement: "Users in the HQ office report
  that the application server is unreachable.
network: campus-lab
recordings: []
authors: [starter]
"""


@pytest.mark.parametrize("load", [load_fast, load_document])
@pytest.mark.parametrize(
    "text,line,column,also",
    [
        (UNCLOSED, 4, 12, "line 9, column 1"),  # the quote; the end of the file is named as well
        ("a: 1\nb: [1, 2\nc: 3\n", 2, 4, "line 3"),  # the unclosed bracket
        ("a: 1\nb: 2\na: 3\n", 3, 1, "duplicate key"),  # the second "a", not the mapping's start
        ("a:\n  - 1\n - 2\n", 3, 2, "block"),  # the misindented item
    ],
)
def test_the_line_and_column_where_the_problem_starts(
    tmp_path: Path, load: object, text: str, line: int, column: int, also: str
) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(text)
    with pytest.raises(YamlFileError) as caught:
        load(path)  # type: ignore[operator]
    err = caught.value
    assert (err.line, err.column) == (line, column), str(err)
    assert str(err).startswith(f"{path}:{line}: broken YAML at column {column}:")
    assert also in str(err)


def test_validate_reports_the_quote_not_the_end_of_the_file(task_set: Path) -> None:
    (task_set / "rca/RCA-001/task.yaml").write_text(UNCLOSED)
    res = run_cli("authoring", "validate", "--json", str(task_set))
    assert res.returncode == 1 and "Traceback" not in res.stderr
    found = [f for f in json.loads(res.stdout)["findings"] if f["code"] == "yaml"]
    assert [(f["file"].rsplit("rca/", 1)[-1], f["line"]) for f in found] == [("RCA-001/task.yaml", 4)]
    assert "column 12" in found[0]["message"]
    text = run_cli("authoring", "validate", str(task_set))
    assert "rca/RCA-001/task.yaml:4" in text.stdout + text.stderr
