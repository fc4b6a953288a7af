"""Track B's request-rate limit, as nginx's ``limit_req`` applies it: leaky buckets per address.

The clock is a list the test advances: the rule is checked at exact instants, without sleeping. The
same limiter answers over real HTTP in ``test_trackb_facade.py``.
"""

from __future__ import annotations

import pytest

from ctbench.replay.trackb import ratelimit
from ctbench.replay.trackb.ratelimit import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_without_burst_a_request_sooner_than_one_over_rate_is_refused() -> None:
    clock = Clock()
    limit = RateLimiter(50, clock=clock)
    assert limit.allow("10.0.0.1")
    for dt in (0.001, 0.01, 0.019):  # refused requests do not fill the bucket
        clock.now = 100.0 + dt
        assert not limit.allow("10.0.0.1")
    assert limit.retry_after("10.0.0.1") == pytest.approx(0.001)
    clock.now = 100.02
    assert limit.allow("10.0.0.1")
    clock.now = 100.039
    assert not limit.allow("10.0.0.1")
    assert limit.allow("10.0.0.2")  # another address has its own bucket
    clock.now = 100.04
    assert limit.allow("10.0.0.1")


def test_fifty_a_second_at_most_whatever_the_spacing() -> None:
    clock = Clock()
    limit = RateLimiter(50, clock=clock)
    accepted = 0
    for i in range(1000):  # one request every 7 ms for 7 s
        clock.now = 100.0 + i * 0.007
        accepted += limit.allow("a")
    # accepted at 0, 21, 42, ... ms: every third request
    assert accepted == 334
    assert accepted <= 1 + 50 * 7.0


def test_burst_lets_requests_come_early_then_drains_at_the_rate() -> None:
    clock = Clock()
    limit = RateLimiter(10, burst=2, clock=clock)
    assert [limit.allow("a") for _ in range(4)] == [True, True, True, False]
    assert limit.retry_after("a") == pytest.approx(0.1)
    clock.now += 0.1
    assert [limit.allow("a") for _ in range(2)] == [True, False]
    clock.now += 1.0
    assert [limit.allow("a") for _ in range(4)] == [True, True, True, False]


@pytest.mark.parametrize(("rate", "burst"), [(0, 0), (-1, 0), (float("inf"), 0), (float("nan"), 0), (5, -1)])
def test_bad_limits_are_refused(rate: float, burst: int) -> None:
    with pytest.raises(ValueError, match="request rate|burst"):
        RateLimiter(rate, burst=burst)


def test_a_flood_of_addresses_does_not_grow_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ratelimit, "MAX_KEYS", 8)
    clock = Clock()
    limit = RateLimiter(1, clock=clock)
    for i in range(8):
        clock.now += 0.1
        assert limit.allow(f"busy-{i}")
    clock.now += 0.05
    assert limit.allow("new")  # nothing drained yet: the longest idle bucket goes
    assert len(limit._buckets) == 8 and "busy-0" not in limit._buckets
    assert not limit.allow("busy-7")  # the others are still counted
    clock.now += 5
    assert limit.allow("newer") and len(limit._buckets) == 1  # all drained: all forgotten


def test_the_daily_quota_counts_per_key_and_starts_again_at_utc_midnight() -> None:
    from ctbench.replay.trackb.quota import DAY, DailyQuota

    clock = Clock()
    clock.now = 20_000 * DAY + 86_000.0  # 23:53:20 UTC
    quota = DailyQuota(2, clock=clock)
    assert quota.take("alice") is None and quota.take("alice") is None
    assert quota.take("alice") == pytest.approx(400.0)  # refused: 400 s to 00:00 UTC
    assert quota.take("alice") == pytest.approx(400.0) and quota.used("alice") == 2  # refusals do not count
    assert quota.take("bob") is None  # another participant has its own count
    clock.now = 20_001 * DAY + 1.0  # 00:00:01 the next day
    assert quota.used("alice") == 0
    assert [quota.take("alice") for _ in range(3)] == [None, None, pytest.approx(DAY - 1.0)]


def test_a_flood_of_clients_does_not_grow_the_quota_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctbench.replay.trackb import quota as quota_module
    from ctbench.replay.trackb.quota import DAY, DailyQuota

    monkeypatch.setattr(quota_module, "MAX_KEYS", 4)
    clock = Clock()
    quota = DailyQuota(5, clock=clock)
    for i in range(4):
        assert quota.take(f"old-{i}") is None
    clock.now += DAY
    assert quota.take("busy") is None and quota.take("busy") is None
    for i in range(3):
        assert quota.take(f"new-{i}") is None
    assert sorted(quota._counts) == ["busy", "new-0", "new-1", "new-2"]  # yesterday's went first
    assert quota.take("newer") is None and quota.used("busy") == 2  # then today's smallest count
    with pytest.raises(ValueError, match="one call or more"):
        DailyQuota(0)
