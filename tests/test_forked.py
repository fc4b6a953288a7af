"""Work spread over forked processes (`ctbench.evaluate.forked`) and the HTML drill-down that uses it.

Each case runs in a fresh interpreter: a pytest-xdist worker runs threads of its own, and
`forked_map` rightly refuses to fork beside threads, so only a single-threaded process shows the
forking path. The scripts print JSON; the assertions are here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.test_score_support import gold_text, oracle_run, starter_copy, write_run

REPO = Path(__file__).resolve().parents[1]
PRELUDE = textwrap.dedent(
    """
    import json, os, sys, threading, time
    from ctbench.evaluate import forked

    forks = []  # (item, pid) of every child forked_map starts
    _fork = forked._fork


    def _counted(f, item):
        started = _fork(f, item)
        forks.append((item, started[0] if started else None))
        return started


    forked._fork = _counted
    """
)


def _script(body: str, *args: str) -> dict:
    code = PRELUDE + textwrap.dedent(body)
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_items_past_the_first_run_in_children_and_come_back_in_order() -> None:
    got = _script(
        """
        parent = os.getpid()
        res = forked.forked_map(lambda x: (x * x, os.getpid()), [1, 2, 3, 4], workers=4)
        try:
            os.waitpid(-1, os.WNOHANG)
            left = True
        except ChildProcessError:
            left = False
        print(json.dumps({"parent": parent, "res": res, "children_left": left}))
        """
    )
    assert [v for v, _ in got["res"]] == [1, 4, 9, 16]
    pids = [p for _, p in got["res"]]
    assert pids[0] == got["parent"]
    assert len(set(pids[1:])) == 3 and got["parent"] not in pids[1:]
    assert not got["children_left"]


def test_no_fork_beside_another_thread_or_with_one_worker() -> None:
    got = _script(
        """
        parent = os.getpid()
        stop = threading.Event()
        t = threading.Thread(target=stop.wait)
        t.start()
        beside = forked.forked_map(lambda x: os.getpid(), [1, 2, 3], workers=3)
        stop.set()
        t.join()
        one = forked.forked_map(lambda x: os.getpid(), [1, 2, 3], workers=1)
        alone = forked.forked_map(lambda x: os.getpid(), [1, 2, 3], workers=3)
        print(json.dumps({"parent": parent, "beside": beside, "one": one, "alone": alone}))
        """
    )
    assert set(got["beside"]) == {got["parent"]}
    assert set(got["one"]) == {got["parent"]}
    assert len(set(got["alone"])) == 3  # the same call forks once the thread is gone


def test_a_child_that_dies_costs_no_result() -> None:
    got = _script(
        """
        parent = os.getpid()

        def fn(x):
            if x == 2 and os.getpid() != parent:
                os._exit(3)  # as the OOM killer would end it, without a word
            if x == 3 and os.getpid() != parent:
                os.kill(os.getpid(), 9)
            return x * 10

        print(json.dumps({"res": forked.forked_map(fn, [1, 2, 3, 4], workers=4)}))
        """
    )
    assert got["res"] == [10, 20, 30, 40]


def test_an_error_of_the_work_is_raised_from_the_parent() -> None:
    got = _script(
        """
        def fn(x):
            if x == 3:
                raise ValueError(f"bad item {x}")
            return x

        try:
            forked.forked_map(fn, [1, 2, 3], workers=3)
            print(json.dumps({"raised": None}))
        except ValueError as exc:
            print(json.dumps({"raised": str(exc)}))
        """
    )
    assert got["raised"] == "bad item 3"


def test_an_interrupted_parent_leaves_no_child_behind() -> None:
    got = _script(
        """
        parent = os.getpid()

        def fn(x):
            if os.getpid() == parent:
                raise KeyboardInterrupt  # Ctrl-C while the children work
            time.sleep(60)
            return x

        t0 = time.monotonic()
        try:
            forked.forked_map(fn, [1, 2, 3], workers=3)
        except KeyboardInterrupt:
            pass
        pids = [pid for _, pid in forks]
        alive = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                alive.append(pid)
            except ProcessLookupError:
                pass
        print(json.dumps({"children": len(pids), "alive": alive, "seconds": time.monotonic() - t0}))
        """
    )
    assert got["children"] == 2
    assert got["alive"] == []  # killed and reaped: no zombie either (a zombie still answers kill 0)
    assert got["seconds"] < 30


def test_the_html_drill_down_is_the_same_page_from_any_number_of_processes(tmp_path: Path) -> None:
    tasks = starter_copy(tmp_path)
    from ctbench.store import TaskSet

    ts = TaskSet.open(tasks)
    runs = [
        oracle_run(tmp_path / "oracle", tasks, agent="oracle", model="gold"),
        write_run(
            tmp_path / "half",
            tasks,
            agent="cheap",
            model="small",
            answers={"RCA-001": gold_text(ts, "RCA-001"), "RCA-002": "FW_01;x;y", "PATH-001": "no idea"},
        ),
    ]
    got = _script(
        """
        from pathlib import Path
        from ctbench.evaluate import report_tasks
        from ctbench.evaluate.report import build_report
        from ctbench.store import TaskSet

        report_tasks.MIN_SHARE = 1  # three tasks: a share each, so that this small report forks
        tasks, *runs = sys.argv[1:]
        report = build_report(runs, TaskSet.open(tasks), n_resamples=200)
        one = report_tasks.tasks_section(report, workers=1)
        assert not forks
        three = report_tasks.tasks_section(report, workers=3)
        print(json.dumps({"forks": len(forks), "same": one == three, "rows": one.count('<tbody class="task"')}))
        """,
        str(tasks),
        *map(str, runs),
    )
    assert got["forks"] == 2
    assert got["rows"] == 6
    assert got["same"]


def test_a_child_does_not_run_the_parents_signal_handlers(tmp_path: Path) -> None:
    marker = tmp_path / "handled"
    got = _script(
        """
        import signal
        from pathlib import Path

        parent = os.getpid()
        marker = Path(sys.argv[1])
        signal.signal(signal.SIGTERM, lambda *_: marker.write_text(str(os.getpid())))

        def fn(x):
            if os.getpid() != parent:
                os.kill(os.getpid(), signal.SIGTERM)  # as `kill` would, or a terminal's Ctrl-C its SIGINT
                time.sleep(0.5)
            return x

        print(json.dumps({"res": forked.forked_map(fn, [1, 2], workers=2)}))
        """,
        str(marker),
    )
    assert got["res"] == [1, 2]
    assert not marker.exists()  # the parent's cleanup ran nowhere but in the parent


def test_ctb_eval_report_workers_sets_the_drill_downs_processes(tmp_path: Path) -> None:
    tasks = starter_copy(tmp_path)
    run = oracle_run(tmp_path / "oracle", tasks, agent="oracle", model="gold")
    got = _script(
        """
        from ctbench.evaluate import report_tasks
        from ctbench.evaluate.cli import main

        report_tasks.MIN_SHARE = 1
        tasks, run, out = sys.argv[1:]
        counts, pages = [], []
        for extra in (["--workers", "1"], ["--workers", "3"]):
            forks.clear()
            code = main(["report", "--tasks", tasks, "--format", "html", "--resamples", "200",
                         "--out", out, *extra, run])
            counts.append((code, len(forks)))
            pages.append(open(out, encoding="utf-8").read())
        print(json.dumps({"counts": counts, "same": pages[0] == pages[1]}))
        """,
        str(tasks),
        str(run),
        str(tmp_path / "r.html"),
    )
    assert got["counts"] == [[0, 0], [0, 2]]  # one process, then three (the parent and two children)
    assert got["same"]


def test_ctb_eval_report_refuses_workers_below_one(tmp_path: Path) -> None:
    tasks = starter_copy(tmp_path)
    run = oracle_run(tmp_path / "oracle", tasks, agent="oracle", model="gold")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctbench.evaluate.cli",
            "report",
            "--tasks",
            str(tasks),
            "--workers",
            "0",
            str(run),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert out.returncode == 2
    assert "--workers must be at least 1, not 0" in out.stderr
    assert "Traceback" not in out.stderr
