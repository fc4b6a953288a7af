"""A plug-in family's gold written as answer lines: the authoring app's answer section and
``ctb-author set-answer --line``, with no edit to ctbench for the family.

The family is ``tests/plugin_family/downports_family.py`` ("which ports are down?", one
``node:interface`` per line, importing only :mod:`ctbench.plugins`), installed as a package would
leave it (a ``.dist-info`` with an entry point in ``ctbench.families``). It provides neither optional
method of :mod:`ctbench.scoring.gold_lines`, so the defaults built from its ``parse``, ``lines`` and
``gold`` are what is tested: every line through the family's parser (a refused line named with its
number and reason), the gold stored as the family writes its lines (``GE0/0/24`` normalised by the
node's dialect), saved and committed, and valid afterwards.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import git
import pytest
from textual.widgets import DataTable, Input, Select, Static, TextArea

from ctbench.commits import TRAILER_ACTION
from ctbench.store import TaskSet
from tests.conftest import REPO, run_cli
from tests.test_app_flows import SIZE, author_app, errors_of, settle, type_text, until, validated
from tests.test_editing import trailers

pytestmark = pytest.mark.xdist_group("family_plugin")

FIXTURE = Path(__file__).parent / "fixtures" / "family-plugin" / "tasks"
MODULE_DIR = Path(__file__).parent / "plugin_family"


def _install(site: Path) -> Path:
    """The family as ``pip install`` would leave it: a distribution with its entry point."""
    info = site / "ctbench_downports-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ctbench-downports\nVersion: 0.1\n", "utf-8")
    (info / "entry_points.txt").write_text(
        "[ctbench.families]\ndownports = downports_family:DownPortsFamily\n", "utf-8"
    )
    return site


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return _install(tmp_path / "site")


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    """The plug-in family's two tasks in a git repository (saves commit)."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root / "tasks")
    repo = git.Repo.init(root)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Repo Owner")
        cw.set_value("user", "email", "owner@example.org")
    repo.git.add("-A")
    repo.git.commit("-q", "-m", "plug-in family tasks")
    return root / "tasks"


def _env(site: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([str(REPO), str(site), str(MODULE_DIR)])}


def _stored(tasks: Path, task_id: str) -> list[str]:
    return list(TaskSet.open(tasks).load_hidden(TaskSet.open(tasks).ref(task_id)).answer.plugin("downports"))


def test_set_answer_takes_answer_lines_through_the_family(
    tasks: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _env(site)
    hidden = tasks / "downports" / "DOWN-001" / "hidden.yaml"
    base = ["--tasks", str(tasks), "--author", "Pat Pilot <pat@example.org>"]

    res = run_cli(
        "authoring", "set-answer", "DOWN-001", "--line", "core_sw_01:GE0/0/2", "--line", "CORE_SW_01:GE0/0/24",
        *base, env=env,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    lines = ["CORE_SW_01:GigabitEthernet0/0/2", "CORE_SW_01:GigabitEthernet0/0/24"]
    assert "gold answer is now: " + "; ".join(lines) in res.stdout
    monkeypatch.syspath_prepend(str(MODULE_DIR))
    monkeypatch.syspath_prepend(str(site))
    assert _stored(tasks, "DOWN-001") == lines  # in the node's dialect's full names, as the family writes
    assert trailers(tasks)[TRAILER_ACTION] == "set-answer"

    # every refused line named, with its number and the family's reason; nothing written
    before = hidden.read_bytes()
    bad = run_cli(
        "authoring", "set-answer", "DOWN-001", "--line", "GHOST:GE0/0/2", "--line", "nonsense", *base, env=env
    )
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "line 1 'GHOST:GE0/0/2': unknown node 'GHOST'" in bad.stderr
    assert "line 2 'nonsense': not an answer line (expected one port per line: node:interface" in bad.stderr
    again = run_cli(
        "authoring", "set-answer", "DOWN-001", "--append", "--line", "CORE_SW_01:GigabitEthernet0/0/24", *base, env=env
    )  # fmt: skip
    assert (
        again.returncode == 1
        and "'CORE_SW_01:GigabitEthernet0/0/24' is already in the answer" in again.stderr
    )
    wrong = run_cli(
        "authoring", "set-answer", "DOWN-001", "--rca", "CORE_SW_01;GE0/0/2;shutdown", *base, env=env
    )
    assert wrong.returncode == 1 and "DOWN-001 is a downports task" in wrong.stderr
    assert hidden.read_bytes() == before

    added = run_cli(
        "authoring", "set-answer", "DOWN-001", "--append", "--line", "CORE_SW_01:GE0/0/1", *base, env=env
    )
    assert added.returncode == 0, added.stderr
    assert _stored(tasks, "DOWN-001") == [
        "CORE_SW_01:GigabitEthernet0/0/1",
        "CORE_SW_01:GigabitEthernet0/0/2",
        "CORE_SW_01:GigabitEthernet0/0/24",
    ]
    check = run_cli("authoring", "validate", str(tasks / "downports" / "DOWN-001"), env=env)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "1 task(s) checked: 0 error(s)" in check.stdout


def test_the_answer_section_edits_a_plugin_familys_gold_as_lines(
    tasks: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(MODULE_DIR))
    monkeypatch.syspath_prepend(str(site))
    gold = ["CORE_SW_01:GigabitEthernet0/0/2", "CORE_SW_01:GigabitEthernet0/0/24"]

    async def scenario() -> None:
        app = author_app(tasks, mode="edit", task_id="DOWN-002")
        async with app.run_test(size=SIZE) as pilot:
            editor = await validated(pilot)
            assert errors_of(editor) == []
            await pilot.press("f6")
            await settle(pilot)
            table = editor.query_one("#answer-table", DataTable)
            assert [str(c.label) for c in table.columns.values()] == ["#", "Answer line"]
            assert str(editor.query_one("#answer-lines", Static).render()) == "\n".join(gold)

            # a: one line through the family's parser; a refused one keeps the dialog open, named
            await pilot.press("a")
            await settle(pilot)
            await type_text(pilot, "GHOST_SW:GE0/0/3")
            await pilot.press("enter")
            await settle(pilot)
            error = str(app.screen.query_one("#form-error", Static).render())
            assert "line 3 'GHOST_SW:GE0/0/3': unknown node 'GHOST_SW'" in error
            app.screen.query_one("#field-line", Input).value = ""
            await type_text(pilot, "core_sw_01:GE0/0/3")
            await pilot.press("enter")
            await settle(pilot)
            assert editor.session.answer_lines() == [
                "CORE_SW_01:GigabitEthernet0/0/2",
                "CORE_SW_01:GigabitEthernet0/0/24",
                "CORE_SW_01:GigabitEthernet0/0/3",
            ]

            # e: every line at once; a wrong shape is named and nothing changes until all are right
            await pilot.press("e")
            await settle(pilot)
            area = app.screen.query_one("#field-lines", TextArea)
            assert area.text.splitlines() == editor.session.answer_lines()
            area.text = "CORE_SW_01:GE0/0/24\nnot a port line\nCORE_SW_01:GE0/0/2"
            await pilot.press("ctrl+s")
            await settle(pilot)
            error = str(app.screen.query_one("#form-error", Static).render())
            assert "line 2 'not a port line': not an answer line (expected one port per line" in error
            assert len(editor.session.answer_lines()) == 3
            area.text = "CORE_SW_01:GE0/0/24\nCORE_SW_01:GE0/0/2\nCORE_SW_01:GE0/0/5"
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert editor.session.answer_lines() == [
                "CORE_SW_01:GigabitEthernet0/0/2",
                "CORE_SW_01:GigabitEthernet0/0/24",
                "CORE_SW_01:GigabitEthernet0/0/5",
            ]

            # x: the highlighted line, after a confirmation
            table.move_cursor(row=2)
            await pilot.press("x")
            await settle(pilot)
            await pilot.press("y")
            await validated(pilot)
            assert str(editor.query_one("#answer-lines", Static).render()) == "\n".join(gold)
            assert errors_of(editor) == []

            # the same gold as at the start, but written again: the save commits it
            await pilot.press("a")
            await settle(pilot)
            await type_text(pilot, "CORE_SW_01:Gi0/0/1")
            await pilot.press("enter")
            await validated(pilot)
            await pilot.press("ctrl+s")
            await until(pilot, lambda: not editor.dirty, "the save")

    asyncio.run(scenario())
    assert _stored(tasks, "DOWN-002") == [
        "CORE_SW_01:GigabitEthernet0/0/1",
        "CORE_SW_01:GigabitEthernet0/0/2",
        "CORE_SW_01:GigabitEthernet0/0/24",
    ]
    assert not list((tasks / "downports" / "DOWN-002").glob(".hidden.yaml.*"))  # no temp left by the save
    check = run_cli("authoring", "validate", str(tasks), env=_env(site))
    assert check.returncode == 0, check.stdout + check.stderr


ORACLE_CHECK = """
import json, sys
from ctbench.authoring.oracle_check import check_oracle
print(json.dumps({r.task: r.problems for r in check_oracle([sys.argv[1]])}))
"""


def test_a_plugin_task_from_nothing_by_script(tasks: Path, site: Path) -> None:
    """``ctb-author new --family <plug-in>`` starts from a statement stating the family's answer format;
    recording, gold as answer lines and golden action by script give a task that validates and that
    the oracle solves."""
    env = _env(site)
    base = ["--tasks", str(tasks), "--author", "Pat Pilot <pat@example.org>"]
    recording = tasks / "downports" / "DOWN-001" / "recordings" / "CORE_SW_01" / "display_interface_brief.txt"
    steps = [
        ["new", "--family", "downports", "--id", "DOWN-003", "--network", "campus-lab"],
        ["add-recording", "DOWN-003", "--device", "CORE_SW_01", "--command", "dis int br", "--file", str(recording)],
        ["set-answer", "DOWN-003", "--line", "CORE_SW_01:GE0/0/2"],
        ["add-golden", "DOWN-003", "--device", "CORE_SW_01", "--command", "dis int br", "--why", "GE0/0/2 is down"],
    ]  # fmt: skip
    for step in steps:
        res = run_cli("authoring", *step, *base, env=env)
        assert res.returncode == 0, (step, res.stdout + res.stderr)
    statement = (tasks / "downports" / "DOWN-003" / "task.yaml").read_text("utf-8")
    assert "Answer with one port per line: node:interface" in statement
    check = run_cli("authoring", "validate", "--json", str(tasks / "downports" / "DOWN-003"), env=env)
    found = json.loads(check.stdout)
    assert check.returncode == 0 and found["tasks_checked"] == 1, check.stdout
    assert [f for f in found["findings"] if f["severity"] == "error"] == []
    oracle = subprocess.run(
        [sys.executable, "-c", ORACLE_CHECK, str(tasks / "downports" / "DOWN-003")],
        capture_output=True, text=True, env={**os.environ, **env}, timeout=300,
    )  # fmt: skip
    assert oracle.returncode == 0, oracle.stderr
    assert json.loads(oracle.stdout) == {"DOWN-003": []}

    unknown = run_cli(
        "authoring", "new", "--family", "nosuch", "--id", "X-1", "--network", "campus-lab", *base, env=env
    )
    assert unknown.returncode == 2 and "invalid choice: 'nosuch'" in unknown.stderr


def test_the_app_starts_a_plugin_task(tasks: Path, site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new-task dialog offers the installed plug-in family by its title; the new task opens with
    the family's answer format in the statement's template and the answer section's help, and its
    gold is then added as an answer line."""
    monkeypatch.syspath_prepend(str(MODULE_DIR))
    monkeypatch.syspath_prepend(str(site))

    async def scenario() -> None:
        app = author_app(tasks)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("n")
            await settle(pilot)
            assert type(app.screen).__name__ == "NewTaskDialog"
            family = app.screen.query_one("#new-family", Select)
            assert ("downports: down-port audit", "downports") in family._options  # type: ignore[attr-defined]
            family.value = "downports"
            await settle(pilot)
            assert app.screen.query_one("#new-id", Input).value == "DOWNPORTS-001"
            await pilot.press("ctrl+s")
            editor = await validated(pilot)
            assert editor.session.family.value == "downports"
            statement = editor.query_one("#statement-text", TextArea)
            assert "Answer with one port per line: node:interface" in statement.placeholder
            await pilot.press("f6")
            await settle(pilot)
            help_text = " ".join(str(x.render()) for x in editor.query(".section-help"))
            assert "one port per line: node:interface" in help_text
            await pilot.press("a")
            await settle(pilot)
            await type_text(pilot, "CORE_SW_01:GE0/0/24")
            await pilot.press("enter")
            await validated(pilot)
            assert editor.session.answer_lines() == ["CORE_SW_01:GigabitEthernet0/0/24"]

    asyncio.run(scenario())


def test_a_family_may_store_its_gold_its_own_way(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The optional ``gold_from_lines``/``gold_to_lines`` of a family are used when it has them (here a
    gold stored as mappings); without them, lines the family cannot read back as the same answer are
    refused rather than stored wrong."""
    import dataclasses

    from ctbench.model import GoldAnswer
    from ctbench.scoring.gold_lines import GoldLinesError, answer_reader, gold_from_lines, gold_to_lines

    monkeypatch.syspath_prepend(str(MODULE_DIR))
    monkeypatch.syspath_prepend(str(site))
    from downports_family import NAME, DownPortsFamily

    class MappedPorts(DownPortsFamily):
        def gold(
            self, answer: GoldAnswer, *, normalize: Any, resolve_label: Any
        ) -> frozenset[tuple[str, str]]:
            return frozenset((x["node"], normalize(x["node"], x["port"])) for x in answer.plugin(NAME) or [])

        def gold_from_lines(
            self, lines: list[str], *, node_names: Any, resolve_label: Any, normalize: Any
        ) -> list:
            parsed = self.parse(
                "\n".join(lines), node_names=node_names, resolve_label=resolve_label, normalize=normalize
            )
            if parsed.invalid_lines:
                raise ValueError(f"not a port: {parsed.invalid_lines[0]}")
            return [{"node": n, "port": p} for n, p in sorted(parsed.entries or ())]

        def gold_to_lines(self, answer: GoldAnswer, *, normalize: Any, resolve_label: Any) -> list[str]:
            return [f"{x['node']} port {x['port']}" for x in answer.plugin(NAME) or []]

    class Unreadable(DownPortsFamily):
        def lines(self, parsed: Any) -> list[str]:  # writes what its own gold() does not read back
            return [f"{port}@{node}" for node, port in sorted(parsed.entries or ())]

    ts = TaskSet.open(FIXTURE)
    base = answer_reader(ts, NAME, ts.network("campus-lab"))
    mapped = dataclasses.replace(base, kind=MappedPorts())
    stored = gold_from_lines(mapped, ["CORE_SW_01:GE0/0/24"])
    assert stored == [{"node": "CORE_SW_01", "port": "GigabitEthernet0/0/24"}]
    assert gold_to_lines(mapped, GoldAnswer.model_validate({NAME: stored})) == [
        "CORE_SW_01 port GigabitEthernet0/0/24"
    ]
    with pytest.raises(GoldLinesError, match="not a port: nonsense"):
        gold_from_lines(mapped, ["nonsense"])

    assert gold_from_lines(base, ["CORE_SW_01:GE0/0/24"]) == ["CORE_SW_01:GigabitEthernet0/0/24"]
    with pytest.raises(GoldLinesError, match="does not read the lines it writes"):
        gold_from_lines(dataclasses.replace(base, kind=Unreadable()), ["CORE_SW_01:GE0/0/24"])


def test_the_gates_cache_keys_outcomes_by_the_plugin_code(
    tmp_path: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run gate caches validation outcomes; with the family's gold check they are stored apart from
    the bare validator's, and keyed by the plug-in's module too (an upgrade is checked again)."""
    from ctbench.approval.gate import validation_problems
    from ctbench.scoring.gold_check import PluginGoldCheck

    modules = tmp_path / "modules"  # a copy of the plug-in's module: its time stamp is changed below
    shutil.copytree(MODULE_DIR, modules, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(modules))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "downports_family", raising=False)
    monkeypatch.setenv("CTBENCH_CACHE_DIR", str(tmp_path / "cache"))
    bad = tmp_path / "tasks"
    shutil.copytree(FIXTURE, bad)
    hidden = bad / "downports" / "DOWN-001" / "hidden.yaml"
    hidden.write_text(hidden.read_text("utf-8").replace('["CORE_SW_01:', '["GHOST_SW:'), "utf-8")
    ts = TaskSet.open(bad)
    refs = ts.refs()
    specs = {r.id: ts.load_task(r) for r in refs}

    checked = validation_problems(ts, refs, specs, gold_check=PluginGoldCheck(ts))
    assert "no device 'GHOST_SW' in the network" in checked["DOWN-001"]
    assert "DOWN-002" not in checked
    assert "DOWN-001" not in validation_problems(ts, refs, specs)  # the bare validator's own outcomes
    assert "GHOST_SW" in validation_problems(ts, refs, specs, gold_check=PluginGoldCheck(ts))["DOWN-001"]

    module = modules / "downports_family.py"
    before = PluginGoldCheck(ts).basis
    assert sys.modules["downports_family"].__file__ == str(module)  # the copy is what was loaded
    st = module.stat()
    os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert PluginGoldCheck(ts).basis != before
