"""A tick takes a segment's lease before the schedule records its start: a tick that dies between the two
leaves a lease naming a process that is gone (health proves it dead and reconciles the segment), never a
running segment without a lease, which nothing could prove dead and which would hold its lane for good."""

from __future__ import annotations

from typing import Any

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import Journal, leases
from factory_schedule.tui.cli.tick import _start_lanes
from factory_schedule.tui.host.clock import SystemClock
from tests.tui.runner_support import commissioned_journal


class LeasesSeenAtStart(LifecycleSchedule):
    """The schedule, noting the segment leases held at the moment each start is asked for."""

    seen: list[list[tuple[str, str, Any]]]

    def start(self, *, lane: Any, runner: Any) -> Any:
        assert isinstance(self.journal, Journal)
        self.seen.append([(lease.scope, lease.owner, lease.info.get("pid"))
                          for lease in leases.list_leases(self.journal) if lease.scope.startswith("segment/")])
        return super().start(lane=lane, runner=runner)


def test_a_segments_lease_names_the_tick_before_its_start_is_recorded(sqlite_url: str) -> None:
    import os

    journal = commissioned_journal(sqlite_url)
    schedule = LeasesSeenAtStart(journal, SystemClock())
    schedule.seen = []
    [plan] = schedule.plan()
    [job], _code = _start_lanes(journal, schedule, [plan.lane], 1.0, SystemClock())
    scope = f"segment/{job.occurrence_id}/{job.segment}"
    assert schedule.seen == [[(scope, job.runner, os.getpid())]]
    [held] = [lease for lease in leases.list_leases(journal) if lease.scope == scope]
    assert (held.owner, held.info["pid"], held.info["runner"]) == (job.runner, os.getpid(), job.runner)


def test_a_lane_whose_start_is_refused_or_replayed_keeps_no_lease(sqlite_url: str) -> None:
    journal = commissioned_journal(sqlite_url)
    schedule = LifecycleSchedule(journal, SystemClock())
    [plan] = schedule.plan()
    [first], _code = _start_lanes(journal, schedule, [plan.lane], 1.0, SystemClock())
    again, _code = _start_lanes(journal, schedule, [plan.lane], 1.0, SystemClock())  # its segment runs already
    assert again == []
    assert [lease.owner for lease in leases.list_leases(journal)] == [first.runner]


def test_a_segment_leased_by_an_earlier_tick_is_not_started_under_another_runner(sqlite_url: str) -> None:
    """An earlier tick that leased the segment and died before recording its start still holds it (until health
    removes the lease of a provably gone holder): starting the segment under a new runner would leave it running
    without its lease once that lease is removed."""
    from datetime import UTC, datetime

    from factory_schedule.tui.host import segments

    journal = commissioned_journal(sqlite_url)
    schedule = LifecycleSchedule(journal, SystemClock())
    [plan] = schedule.plan()
    assert plan.occurrence_id is not None
    segments.lease_ahead(journal, segments.SegmentJob(plan.lane, plan.occurrence_id, 1, "r-earlier"), 1.0,
                         datetime.now(UTC))
    jobs, _code = _start_lanes(journal, schedule, [plan.lane], 1.0, SystemClock())
    assert jobs == []
    view = schedule.read()
    assert view is not None
    assert not [o for o in view.occurrences if o.state == "running"], view.occurrences  # nothing started
    assert [lease.owner for lease in leases.list_leases(journal)] == ["r-earlier"]
