"""Health and the store judge a lease's staleness by one rule: health's reading of a lease is stale exactly when
the store would let a supervisor remove it, and from the future by the store's own test."""

from __future__ import annotations

from datetime import timedelta

import pendulum
from hypothesis import given
from hypothesis import strategies as st

from factory_schedule.core.health import LeaseFact
from factory_schedule.store import leases

NOW = pendulum.datetime(2026, 12, 7, 3, 0, tz="UTC")


@given(ago=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), ttl=st.floats(min_value=0.5, max_value=3600))
def test_health_and_the_store_agree_when_a_lease_is_stale_or_from_the_future(ago: float, ttl: float) -> None:
    heartbeat = NOW - timedelta(seconds=ago)
    stored = leases.Lease("worker", "tick-1", ttl, heartbeat, heartbeat, {})
    fact = LeaseFact(scope="worker", owner="tick-1", ttl_seconds=ttl, heartbeat_at=heartbeat, info={},
                     segment=None, worker=True, process_alive=False)
    assert fact.stale_at == stored.stale_at
    assert fact.stale(NOW) == leases.stale(stored, NOW)
    assert fact.from_future(NOW) == leases.heartbeat_from_future(heartbeat, ttl, NOW)
