"""Python's cycle collector during the big, allocation-heavy builds (a report over 100,000 tasks).

A report keeps nearly everything it makes: per-task records, per-task scores, their summaries. The
collector's full (oldest-generation) pass walks every object the process holds, and with a heap that
grows by hundreds of thousands of lasting objects it runs again and again: 2.9 s of one 100k-task
report's 12 s of scoring went to one such pass (``tests/bench/bench_report.py``, workload 2). What a
build makes is freed by reference counting as it goes; the cycles it leaves are young ones, which the
young generations' passes still collect. So during a build the full passes are put off, and the
caller's threshold is given back at the end.

``gc.freeze`` (what the runner does for its attempts) is not enough here: after a freeze the
collector's measure of the old generation is nearly empty, so full passes come more often, each over
what the build made since, and one report measured no faster.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

DEFERRED = 1_000_003
"""The oldest generation's threshold while full passes are put off: a number no caller would choose,
so a nested or concurrent build sees that an outer one holds the threshold and leaves it alone."""


@contextmanager
def full_collections_deferred() -> Iterator[None]:
    """Put off the collector's full passes for the block; restore the threshold found at entry.

    Only the outermost block changes and restores the threshold: an inner block (or one in another
    thread while an outer one runs) finds :data:`DEFERRED` and does nothing, so no block can leave
    the threshold deferred after every block has ended. Where the collector is off (``gc.disable``),
    nothing is changed either.
    """
    young, middle, old = gc.get_threshold()
    if old == DEFERRED or not gc.isenabled():
        yield
        return
    gc.set_threshold(young, middle, DEFERRED)
    try:
        yield
    finally:
        now = gc.get_threshold()
        gc.set_threshold(now[0], now[1], old)  # a caller's change to the young thresholds stays


__all__ = ["DEFERRED", "full_collections_deferred"]
