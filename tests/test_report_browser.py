"""The HTML report in a real headless browser: filter and sort the per-task table, open a task and expand
its trajectory, and nothing is fetched from anywhere (Chromium from the distribution: apt-get install chromium)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from ctbench.store import TaskSet
from tests.browser_support import Browser, chromium_path
from tests.conftest import BUNDLED, run_cli
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
        # the detail is packed in the page until the row is opened (loaded on demand)
        assert b.eval(f"document.querySelector('{row} tr.detail td').hasAttribute('data-z')")
        assert b.eval(f"document.querySelector('{row} tr.detail td').childElementCount") == 0
        b.click(f"{row} tr.main")
        b.wait_for(_visible(f"{row} tr.detail"), "the task's detail")
        assert not b.eval(f"document.querySelector('{row} tr.detail td').hasAttribute('data-z')")
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


def _topology_report(tmp_path: Path) -> Path:
    """Two runs over the starter tasks and two topology tasks: one perfect, one that gets the topology
    tasks half right (TOPO-001 exactly, TOPO-002 with nothing parseable)."""
    tasks = starter_copy(tmp_path)
    for task_id in ("TOPO-001", "TOPO-002"):
        shutil.copytree(BUNDLED / "topology" / task_id, tasks / "topology" / task_id)
    ts = TaskSet.open(tasks)
    good = oracle_run(tmp_path / "runs" / "good", tasks, name="good", agent="oracle", model="gold")
    ids = [r.id for r in ts.refs()]
    answers = {t: gold_text(ts, t) for t in ids} | {"TOPO-002": "no idea"}
    weak = write_run(
        tmp_path / "runs" / "weak",
        tasks,
        name="weak",
        agent="cheap",
        model="small",
        answers=answers,
        calls={t: golden_calls(ts, t) for t in ids},
    )
    out = tmp_path / "report.html"
    res = run_cli(
        "evaluate", "report", str(good), str(weak), "--format", "html", "--out", str(out),
        "--tasks", str(tasks), "--resamples", "200",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    return out


def test_the_charts_draw_the_topology_family(tmp_path: Path) -> None:
    """Heterogeneity bars and cost markers for topology restoration, drawn and inside their charts."""
    report = _topology_report(tmp_path)
    assert CHROMIUM is not None
    with Browser(CHROMIUM, tmp_path / "profile") as b:
        b.open(report.as_uri())
        het = "svg[aria-label='Accuracy by heterogeneity (%)']"
        groups = b.eval(f'[...document.querySelectorAll("{het} text")].map(t => t.textContent)')
        assert {"RCA low", "Path high", "Topology low"} <= set(groups)
        bars = b.eval(
            f'[...document.querySelectorAll("{het} rect title")].map(t => t.textContent)'
            ".filter(t => t.includes(':'))"
        )
        # one bar per run and group; the topology group: 100 for the perfect run, 50 for the half-right one
        assert len(bars) == 2 * len([g for g in groups if g.endswith((" low", " high"))])
        heights = b.eval(
            f'(function () {{ var labels = [...document.querySelectorAll("{het} text")]'
            ".filter(t => t.textContent.endsWith(' low') || t.textContent.endsWith(' high'))"
            '.map(t => t.textContent); var rects = [...document.querySelectorAll("' + het + ' rect")]'
            ".filter(r => r.querySelector('title')); var i = labels.indexOf('Topology low');"
            " return [rects[2 * i].getBBox().height, rects[2 * i + 1].getBBox().height,"
            " rects[2 * i].querySelector('title').textContent, rects[2 * i + 1].querySelector('title').textContent]; })()"
        )
        assert heights[2] == "oracle+gold: 100.00" and heights[3] == "cheap+small: 50.00"
        assert heights[0] == pytest.approx(2 * heights[1], rel=0.02) and heights[1] > 0
        scatter = "svg[aria-label='Cost vs accuracy']"
        marks = b.eval(
            f'[...document.querySelectorAll("{scatter} polygon")].map(p => {{ var r = p.getBoundingClientRect();'
            f" var s = p.closest('svg').getBoundingClientRect(); return [p.textContent, r.width > 0 && r.left >= s.left"
            " && r.right <= s.right && r.top >= s.top && r.bottom <= s.bottom]; })"
        )
        topology = sorted(text for text, _ in marks if "Topology" in text)
        assert topology == ["cheap+small Topology: 50.00% at 1,200", "oracle+gold Topology: 100.00% at 1,200"]
        assert all(inside for _, inside in marks)
        legend = b.eval(f'[...document.querySelectorAll("{scatter} text")].map(t => t.textContent)')
        assert {"RCA", "Path", "Topology"} <= set(legend)
        caption = b.eval("[...document.querySelectorAll('figcaption')].map(f => f.textContent).join(' ')")
        assert "triangles topology restoration" in caption


def test_a_long_task_table_lists_a_page_and_reaches_every_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the paper's scale the page opens with the first rows laid out only (the rest are written hidden,
    so the browser never lays them out while parsing); the filter, a sort and "list all" reach the others.
    Two rows a page here stand for 100 (``PAGE_ROWS``) of a 936-row report."""
    from ctbench.evaluate import report_tasks
    from ctbench.evaluate.report import build_report
    from ctbench.evaluate.report_formats import render_report

    _report(tmp_path)
    monkeypatch.setattr(report_tasks, "PAGE_ROWS", 2)
    runs = [tmp_path / "runs" / "good", tmp_path / "runs" / "weak"]
    html = render_report(build_report(runs, TaskSet.open(tmp_path / "tasks"), n_resamples=200), "html")
    page = tmp_path / "paged.html"
    page.write_text(html, encoding="utf-8")
    assert html.count('<tbody class="task"') == 6 and html.count('<tbody class="task" data-run=') == 6
    assert len(re.findall(r'<tbody class="task"[^>]* hidden>', html)) == 4  # hidden as parsed
    listed = "[...document.querySelectorAll('#tasks tbody.task')].filter(g => !g.hidden).map(g => g.dataset.run + ' ' + g.dataset.task)"
    assert CHROMIUM is not None
    with Browser(CHROMIUM, tmp_path / "profile") as b:
        b.open(page.as_uri())
        assert (
            b.eval("document.getElementById('tasks-count').textContent")
            == "6 of 6 task(s), the first 2 listed"
        )
        assert b.eval(listed) == ["oracle+gold PATH-001", "oracle+gold RCA-001"]
        assert (
            b.eval(_visible("#tasks-more"))
            and b.eval("document.getElementById('tasks-more').textContent") == "list all 6"
        )
        b.type("#tasks-filter", "cheap")  # the filter reaches rows that were not listed
        b.wait_for("document.getElementById('tasks-count').textContent.indexOf('3 of 6') === 0", "the filter")
        assert [x.split(" ")[0] for x in b.eval(listed)] == ["cheap+small", "cheap+small"]
        b.eval(
            "document.getElementById('tasks-filter').value = ''; "
            "document.getElementById('tasks-filter').dispatchEvent(new Event('input'))"
        )
        b.click("table.tasks th:nth-child(5)")  # Acc: wrong answers first, listed from the new order
        assert sorted(b.eval(listed)) == ["cheap+small PATH-001", "cheap+small RCA-001"]
        b.click("#tasks-more")
        b.wait_for("document.getElementById('tasks-count').textContent === '6 of 6 task(s)'", "list all")
        assert len(b.eval(listed)) == 6 and not b.eval(_visible("#tasks-more"))
        row = 'tbody[data-run="oracle+gold"][data-task="RCA-002"]'  # opened after "list all"
        b.click(f"{row} tr.main")
        b.wait_for(_visible(f"{row} tr.detail"), "the task's detail")
