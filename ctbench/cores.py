"""How many cores this process may use: the one count every parallel step sizes itself by.

``os.cpu_count()`` is the machine's; a process pinned to fewer (``taskset``, a container's cpuset, a
CI runner's share) that started one thread or process per machine core would run several to a core,
each slower for the switching. The affinity mask says what the scheduler will give.
"""

from __future__ import annotations

import os


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the platform tells it)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


__all__ = ["available_cores"]
