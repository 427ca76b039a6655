"""A staged run's lock scopes are built and read in one module: every scope a run takes reads back as one of
a lane run's locks, and no other lease (the tick's worker, a segment's) does."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from factory_schedule.core.pipeline.lock_scopes import (
    is_lane_lock,
    resource_scope,
    task_scope,
    task_scope_prefix,
    worker_scope,
)
from factory_schedule.store.leases import WORKER_SCOPE

LANES = st.sampled_from(["promotion", "maturation"])


@given(lane=LANES, task=st.integers(min_value=1, max_value=10**9),
       resource=st.text(alphabet="abcdefghijklmnopqrstuvwxyz-0123456789", min_size=1, max_size=20))
def test_every_scope_a_lane_run_takes_reads_back_as_a_lane_lock(lane: str, task: int, resource: str) -> None:
    assert is_lane_lock(worker_scope(lane))
    assert is_lane_lock(task_scope(lane, task))
    assert task_scope(lane, task).startswith(task_scope_prefix(lane))
    assert is_lane_lock(resource_scope(resource))


def test_the_ticks_worker_and_a_segments_lease_are_not_lane_locks() -> None:
    assert not is_lane_lock(WORKER_SCOPE)
    assert not is_lane_lock("segment/discovery/alpha/basic/2026-12-07/1")
    assert not is_lane_lock("pipeline/promotion/task/0")
    assert not is_lane_lock("pipeline/other/worker")
