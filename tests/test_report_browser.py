"""The HTML report in a real headless browser: filter and sort the per-task table, open a task and expand
its trajectory, and nothing is fetched from anywhere (Chromium from the distribution: apt-get install chromium)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctbench.store import TaskSet
from tests.browser_support import Browser, chromium_path
from tests.conftest import run_cli
from tests.test_score_support import gold_text, golden_calls, oracle_run, starter_copy, write_run

CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (apt-get install -y chromium)")


def _report(tmp_path: Path) -> Path:
    tasks = starter_copy(tmp_path)
    ts = TaskSet.open(tasks)
    good = oracle_run(tmp_path / "runs" / "good", tasks, name="good", agent="oracle", model="gold")
    weak = write_run(
        tmp_path / "runs" / "weak",
        tasks,
        name="weak",
        agent="cheap",
        model="small",
        answers={
            "RCA-001": "<answer>\nCORE_SW_01;GigabitEthernet0/0/24;physical link down\n</answer>",
            "RCA-002": gold_text(ts, "RCA-002"),
            "PATH-001": "",
        },
        calls={
            "RCA-001": [("CORE_SW_01", "dis int br", "display interface brief", "recorded")],
            "RCA-002": golden_calls(ts, "RCA-002"),
        },
    )
    out = tmp_path / "report.html"
    res = run_cli(
        "evaluate",
        "report",
        str(good),
        str(weak),
        "--format",
        "html",
        "--out",
        str(out),
        "--tasks",
        str(tasks),
        "--resamples",
        "200",
    )
    assert res.returncode == 0, res.stderr
    return out


def _visible(selector: str) -> str:
    # checkVisibility: rendered, and not inside a closed <details> (whose content Chromium only skips painting)
    return (
        f"(function () {{ var e = document.querySelector('{selector}'); "
        "return !!e && e.offsetHeight > 0 && e.checkVisibility(); })()"
    )


def test_click_through_to_a_tasks_trajectory(tmp_path: Path) -> None:
    report = _report(tmp_path)
    assert CHROMIUM is not None
    with Browser(CHROMIUM, tmp_path / "profile") as b:
        b.open(report.as_uri())
        assert b.eval("document.getElementById('tasks-count').textContent") == "6 of 6 task(s)"
        b.type("#tasks-filter", "cheap")
        b.wait_for("document.getElementById('tasks-count').textContent === '3 of 6 task(s)'", "the filter")
        b.eval(
            "document.getElementById('tasks-filter').value = ''; "
            "document.getElementById('tasks-filter').dispatchEvent(new Event('input'))"
        )
        b.click("table.tasks th:nth-child(5)")  # Acc: wrong answers first
        first = b.eval(
            "[...document.querySelectorAll('#tasks tbody')].slice(0, 2)"
            ".map(g => g.dataset.run + ' ' + g.dataset.task)"
        )
        assert sorted(first) == ["cheap+small PATH-001", "cheap+small RCA-001"]
        row = 'tbody[data-run="cheap+small"][data-task="RCA-001"]'
        assert not b.eval(_visible(f"{row} tr.detail"))
        b.click(f"{row} tr.main")
        b.wait_for(_visible(f"{row} tr.detail"), "the task's detail")
        detail = b.eval(f"document.querySelector('{row} tr.detail').innerText")
        assert "✗ CORE_SW_01;GigabitEthernet0/0/24;physical link down" in detail
        assert (
            "Golden actions 1/3 covered" in detail
            and "✗ missed: CORE_SW_01: display ip routing-table" in detail
        )
        assert not b.eval(f"document.querySelector('{row} details.trajectory').open")  # collapsed at first
        assert not b.eval(_visible(f"{row} details.trajectory li.step pre"))
        b.click(f"{row} details.trajectory summary")
        b.wait_for(_visible(f"{row} details.trajectory li.step pre"), "the trajectory")
        step = b.eval(f"document.querySelector('{row} details.trajectory li.step').innerText")
        assert "CORE_SW_01: dis int br" in step and "★ golden" in step
        assert "GigabitEthernet0/0/24" in step  # what the device printed
        b.click(f"{row} tr.main")  # and closed again
        b.wait_for(f"!{_visible(row + ' tr.detail')}", "the detail to close")
        outside = [u for u in b.requests if not u.startswith(("file:", "data:", "about:"))]
        assert outside == []


def test_plus_minus_cells_do_not_wrap_and_small_strata_are_said_once(tmp_path: Path) -> None:
    report = _report(tmp_path)
    html = report.read_text(encoding="utf-8")
    assert html.count("strata with fewer than") == 1 and "stratum/strata have fewer than" not in html
    assert CHROMIUM is not None
    with Browser(CHROMIUM, tmp_path / "profile") as b:
        b.open(report.as_uri())
        b.eval("document.body.style.maxWidth = '420px'")  # a narrow window
        heights = b.eval(
            "[...document.querySelectorAll('#table5 td.num')].filter(td => td.textContent.includes('±'))"
            ".map(td => [td.getBoundingClientRect().height, "
            "parseFloat(getComputedStyle(td).lineHeight) || 16])"
        )
        assert heights and all(h < 2 * line for h, line in heights)  # one line each
