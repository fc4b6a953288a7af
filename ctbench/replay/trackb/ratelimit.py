"""Track B's request-rate limit: 50 requests per second per address, refused with 429.

Track B's README lists the limit among its security measures ("Nginx rate limit: 50 req/s per
IP"); its reference server has none of its own, so an agent tuned against the local server meets the
limit only online. The facade applies it the way nginx's ``limit_req`` does, so a run against
ctbench meets the same refusals: a leaky bucket per address that drains at ``rate`` requests per
second and holds ``burst`` requests beyond the one being served. Without a burst (nginx's default) a
request that comes sooner than ``1/rate`` seconds after the last one accepted is refused; a refused
request does not fill the bucket. The clock is passed in, so the rule is tested without sleeping.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

DOCUMENTED_RATE = 50.0
"""Requests per second per address (Track B README, "Security Measures")."""

MAX_KEYS = 4096
"""Buckets kept; an empty bucket is dropped first, so a flood of addresses cannot grow memory."""


@dataclass
class RateLimiter:
    """Leaky buckets by key (the client's address): :meth:`allow` says whether one more request fits."""

    rate: float
    burst: int = 0
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if not self.rate > 0 or math.isinf(self.rate):
            raise ValueError(
                f"a request rate must be a positive number of requests per second, not {self.rate}"
            )
        if self.burst < 0:
            raise ValueError(f"a burst is zero or more requests, not {self.burst}")

    def allow(self, key: str) -> bool:
        """Count one request for ``key`` if it fits (True); False when it must be refused (429)."""
        now = self.clock()
        with self._lock:
            state = self._buckets.get(key)
            if state is None:
                if len(self._buckets) >= MAX_KEYS:
                    self._forget(now)
                self._buckets[key] = (0.0, now)
                return True
            excess, last = state
            # nginx's rule: what the bucket holds once drained since the last accepted request, plus this one
            level = max(0.0, excess - self.rate * max(0.0, now - last) + 1.0)
            if level > self.burst + 1e-9:
                return False
            self._buckets[key] = (level, now)
            return True

    def retry_after(self, key: str) -> float:
        """Seconds until ``key`` may send again (0 when it may now)."""
        now = self.clock()
        with self._lock:
            state = self._buckets.get(key)
        if state is None:
            return 0.0
        excess, last = state
        return max(0.0, (excess + 1.0 - self.burst) / self.rate - (now - last))

    def _forget(self, now: float) -> None:
        """Drop the buckets a new key would be (drained), else the one idle longest."""
        drained = [k for k, (e, t) in self._buckets.items() if e + 1.0 - self.rate * (now - t) <= 0]
        for k in drained:
            del self._buckets[k]
        if len(self._buckets) >= MAX_KEYS:
            del self._buckets[min(self._buckets, key=lambda k: self._buckets[k][1])]
