"""The collector's full passes are put off during a report build, and given back after (ctbench.collector).

Each case changes the process's collector settings, so each restores what it found even on failure.
"""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctbench.collector import DEFERRED, full_collections_deferred
from ctbench.evaluate.report import build_report
from ctbench.evaluate.score import Scorer
from ctbench.store import TaskSet
from tests.test_report import N, runs, starter_set  # noqa: F401  (fixtures)


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        (gc.enable if enabled else gc.disable)()


class FullPasses:
    """Counts and times the collector's full (oldest-generation) passes inside a ``with`` block
    (also tests/bench/bench_report.py's measure of them)."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0
        self._began = 0.0

    def _see(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.count += 1
            self.seconds += time.perf_counter() - self._began

    def __enter__(self) -> FullPasses:
        gc.callbacks.append(self._see)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._see)


def grow_the_heap() -> list[list[int]]:
    """As many lasting container objects as the process holds after a full collection: more than the
    quarter of the old generation Python waits for, so its full pass comes during the growth unless
    put off. The caller collects first, before it counts."""
    n = max(200_000, len(gc.get_objects()))
    return [[i] for i in range(n)]


def test_a_growing_heap_gets_no_full_pass_inside_the_block_and_does_outside() -> None:
    gc.set_threshold(700, 10, 10)  # Python's defaults, whatever the suite set
    gc.collect()
    with FullPasses() as outside:
        kept = grow_the_heap()
    assert outside.count >= 1, "the control made no full pass: the heap did not grow enough to show anything"
    del kept
    gc.collect()
    with FullPasses() as inside, full_collections_deferred():
        kept = grow_the_heap()
    assert inside.count == 0, f"{inside.count} full pass(es) ran inside the block"
    del kept


def test_the_threshold_is_given_back_after_the_block_even_on_error() -> None:
    gc.set_threshold(500, 7, 9)
    with pytest.raises(RuntimeError), full_collections_deferred():
        assert gc.get_threshold() == (500, 7, DEFERRED)
        raise RuntimeError("the build failed")
    assert gc.get_threshold() == (500, 7, 9)


def test_an_inner_block_leaves_the_outer_ones_threshold_alone() -> None:
    gc.set_threshold(700, 10, 10)
    with full_collections_deferred():
        with full_collections_deferred():
            assert gc.get_threshold()[2] == DEFERRED
        assert gc.get_threshold()[2] == DEFERRED, "the inner block gave the threshold back early"
    assert gc.get_threshold() == (700, 10, 10)


def test_blocks_in_two_threads_ending_out_of_order_leave_the_threshold_as_found() -> None:
    gc.set_threshold(700, 10, 10)
    outer_in, inner_in, outer_out = threading.Event(), threading.Event(), threading.Event()

    def outer() -> None:
        with full_collections_deferred():
            outer_in.set()
            inner_in.wait(5)
        outer_out.set()

    def inner() -> None:
        outer_in.wait(5)
        with full_collections_deferred():
            inner_in.set()
            outer_out.wait(5)  # the outer block ends first

    threads = [threading.Thread(target=outer), threading.Thread(target=inner)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert gc.get_threshold() == (700, 10, 10)


def test_a_disabled_collector_is_left_as_it_is() -> None:
    gc.set_threshold(700, 10, 10)
    gc.disable()
    with full_collections_deferred():
        assert gc.get_threshold() == (700, 10, 10)
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_a_young_cycle_made_inside_the_block_is_still_collected() -> None:
    class Node:
        other: object = None

    with full_collections_deferred():
        a, b = Node(), Node()
        a.other, b.other = b, a
        probe = weakref.ref(a)
        del a, b
        gc.collect(0)
        assert probe() is None, "a cycle in the youngest generation outlived its pass"


def test_build_report_and_score_folder_run_with_full_passes_put_off(
    starter_set: Path,  # noqa: F811
    runs: list[Path],  # noqa: F811
) -> None:
    gc.set_threshold(700, 10, 10)
    seen: list[int] = []
    report = build_report(
        runs, TaskSet.open(starter_set), n_resamples=N, progress=lambda _: seen.append(gc.get_threshold()[2])
    )
    assert report.runs and seen and set(seen) == {DEFERRED}
    assert gc.get_threshold() == (700, 10, 10)
    scorer = Scorer(TaskSet.open(starter_set))
    during: list[int] = []
    scorer.score_folder(runs[0], progress=lambda i, n: during.append(gc.get_threshold()[2]))
    assert during and set(during) == {DEFERRED}
    assert gc.get_threshold() == (700, 10, 10)
