"""Every scheduled firing has a record: a night the schedule has no record of (past its slot and grace,
neither admitted nor coalesced) gets a compact `no-op` or `error` record from the reconciler, once.
Real SQLite journals in tmp_path, a ManualClock, no process alive."""

from __future__ import annotations

from typing import Any

from factory_schedule.core import ManualClock
from factory_schedule.tui.host import health, reconciler

from .test_health import HOST, OCCURRENCE, _commissioned

NEXT_NIGHT = "discovery/alpha/basic/2026-12-08"


def _repair(world: tuple[Any, Any, ManualClock]) -> list[health.Repair]:
    journal, schedule, clock = world
    return health.repair(journal, schedule, clock.now(), HOST, alive=lambda _pid: False, grace_minutes=30)


def test_a_night_nothing_fired_for_gets_one_error_record_after_its_grace(world: tuple[Any, Any, ManualClock]) -> None:
    journal, _schedule, clock = world
    _commissioned(world)
    clock.set("2026-12-07T02:29:00Z")
    assert _repair(world) == []  # inside the grace: a tick may still come
    clock.set("2026-12-07T02:31:00Z")
    [repair] = _repair(world)
    assert (repair.kind, repair.scope) == ("recorded-firing", OCCURRENCE)
    [record] = reconciler.firing_records_written(journal)
    assert (record["occurrence"], record["kind"], record["recordedBy"]) == (
        OCCURRENCE, "error", f"health-reconciler@{HOST}")
    assert record["slot"] == "2026-12-07T02:00:00+00:00"
    assert _repair(world) == []  # once per night
    assert len(reconciler.firing_records_written(journal)) == 1


def test_a_night_the_lane_could_not_admit_because_it_was_held_is_a_no_op_record(
    world: tuple[Any, Any, ManualClock],
) -> None:
    journal, schedule, clock = world
    _commissioned(world)
    clock.set("2026-12-07T02:00:00Z")
    assert schedule.start(lane="alpha/basic", runner="r-long").kind == "admitted"
    clock.set("2026-12-08T02:31:00Z")  # the first night still runs (no lease: nothing to reconcile)
    [repair] = _repair(world)
    assert repair.scope == NEXT_NIGHT
    [record] = reconciler.firing_records_written(journal)
    assert (record["occurrence"], record["kind"]) == (NEXT_NIGHT, "no-op")
    assert OCCURRENCE in record["reason"]


def test_an_admitted_night_needs_no_firing_record(world: tuple[Any, Any, ManualClock]) -> None:
    journal, schedule, clock = world
    _commissioned(world)
    clock.set("2026-12-07T02:00:00Z")
    started = schedule.start(lane="alpha/basic", runner="r-1")
    schedule.settle(occurrence_id=started.occurrence.id, settled_by="r-1", status="completed", reason="done")
    clock.set("2026-12-07T04:00:00Z")
    assert _repair(world) == []
    assert reconciler.firing_records_written(journal) == []
