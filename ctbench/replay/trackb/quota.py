"""Track B's daily quota: Phase 1 allows 1,000 API calls per participant and day, then refuses (429).

Track B's README lists it twice ("Daily Quota: 1,000 calls per participant per day (Phase 1 only)",
and "Max 1,000 API calls per day" among the API call rules); Phase 2 and 3 have none. A participant
is its token, so the facade counts by client (its bearer token, else its address). Track B documents
neither when a day starts nor the body of the refusal: here a day is a UTC calendar day, and the
refusal tells the client when the count starts again (``Retry-After``, seconds to 00:00 UTC).

Only calls the facade serves count: a request refused for the rate, the requests in flight or the
quota itself, or one without its fields, does not. The counts live in the server process (a restart
starts them again, as a new day would). The clock is passed in, so a day's end is tested without
waiting for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

DOCUMENTED_DAILY = 1000
"""API calls per participant and day in Phase 1 (Track B README, "Security Measures")."""

DAY = 86400.0

MAX_KEYS = 4096
"""Counts kept; yesterday's go first, so a flood of clients cannot grow memory without bound."""


def quota_message(limit: int) -> str:
    """The refusal's ``error`` text (ctbench's own words: Track B does not publish its body)."""
    return (
        f"Daily quota exceeded: at most {limit} API calls per participant per day; "
        "the count starts again at 00:00 UTC"
    )


@dataclass
class DailyQuota:
    """Calls per key and UTC day: :meth:`take` counts one call, or says how long until it may."""

    limit: int
    clock: Callable[[], float] = time.time
    _counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ValueError(f"a daily quota is one call or more, not {self.limit}")

    def take(self, key: str) -> float | None:
        """Count one call for ``key`` (None); past the day's limit, the seconds until 00:00 UTC."""
        now = self.clock()
        day = int(now // DAY)
        with self._lock:
            seen, used = self._counts.get(key, (day, 0))
            if seen != day:
                used = 0
            if used >= self.limit:
                return (day + 1) * DAY - now
            if key not in self._counts and len(self._counts) >= MAX_KEYS:
                self._forget(day)
            self._counts[key] = (day, used + 1)
            return None

    def used(self, key: str) -> int:
        """Calls ``key`` made today."""
        day = int(self.clock() // DAY)
        with self._lock:
            seen, used = self._counts.get(key, (day, 0))
        return used if seen == day else 0

    def _forget(self, day: int) -> None:
        """Drop the counts of past days, else the smallest of today's (the least of a loss)."""
        for k in [k for k, (d, _) in self._counts.items() if d != day]:
            del self._counts[k]
        if len(self._counts) >= MAX_KEYS:
            del self._counts[min(self._counts, key=lambda k: self._counts[k][1])]
