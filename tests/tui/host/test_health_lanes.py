"""Health's lane findings: which nights it reports as not started, missed or held, and from when.

A night is reported only after its slot (moved or repeated by a change of clocks) and the grace,
never before the commission's effectiveFrom, before it was recorded, before a lane joined, or at or
before the lane's watermark. Real SQLite journals in `tmp_path`, a ManualClock, no process alive.
"""

from __future__ import annotations

from typing import Any

from factory_schedule.core import ManualClock
from factory_schedule.tui.host import health
from tests.core.schedule.support import basic_lane, commission, weekly_lane

HOST = "test-host"


def _lane_findings(world: tuple[Any, Any, ManualClock], grace_minutes: float = 30) -> list[tuple[str, str]]:
    journal, schedule, clock = world
    report = health.check_health(journal, schedule, clock.now(), HOST, health.HealthScope(grace_minutes=grace_minutes),
                                 alive=lambda _pid: False)
    assert not report.could_not_check, report.could_not_check
    return [(f.kind, f.evidence["occurrence"]) for f in report.findings if f.kind.startswith("lane-")]


def _at(world: tuple[Any, Any, ManualClock], instant: str, grace_minutes: float = 30) -> list[tuple[str, str]]:
    world[2].set(instant)
    return _lane_findings(world, grace_minutes)


def _record(world: tuple[Any, Any, ManualClock], recorded: dict[str, Any]) -> None:
    schedule = world[1]
    schedule.record_commission(recorded)
    if recorded["revision"] == 1:
        schedule.record_account(account="claude", sequence=1, sign_in="me", overage=False, recorded_by="owner")


def test_a_slot_moved_by_the_spring_forward_gap_is_reported_only_after_its_moved_slot_and_grace(world):
    world[2].set("2026-03-20T12:00:00Z")
    _record(world, commission([weekly_lane(weekday=7, time="01:30", closes="04:00", deadline=45)],
                              effective_from="2026-03-23"))
    # Sunday 29 March 2026: 01:30 does not exist in London; the slot is 02:30 BST = 01:30Z, grace ends 02:00Z.
    assert _at(world, "2026-03-29T01:59:00Z") == []
    assert _at(world, "2026-03-29T02:01:00Z") == [("lane-not-started", "discovery/alpha/full/2026-W13")]
    assert _at(world, "2026-04-04T23:59:00Z") == [("lane-missed", "discovery/alpha/full/2026-W13")]


def test_a_slot_repeated_by_the_autumn_change_is_reported_after_its_first_instant_and_grace(world):
    world[2].set("2026-10-20T12:00:00Z")
    _record(world, commission([weekly_lane(weekday=7, time="01:30", closes="04:00", deadline=45)],
                              effective_from="2026-10-21"))
    # Sunday 25 October 2026: 01:30 happens twice; the slot is the BST one (00:30Z), grace ends 01:00Z.
    assert _at(world, "2026-10-25T00:59:00Z") == []
    assert _at(world, "2026-10-25T01:01:00Z") == [("lane-not-started", "discovery/alpha/full/2026-W43")]
    assert _at(world, "2026-10-31T12:00:00Z") == [("lane-missed", "discovery/alpha/full/2026-W43")]


def test_no_night_before_a_future_effective_from_is_reported(world):
    _record(world, commission([basic_lane(), weekly_lane(weekday=1, time="03:00", deadline=45)],
                              effective_from="2026-12-10"))
    assert _at(world, "2026-12-09T23:59:00Z") == []  # Monday 7 December is before effectiveFrom
    assert _at(world, "2026-12-10T02:31:00Z") == [("lane-not-started", "discovery/alpha/basic/2026-12-10")]


def test_no_night_that_closed_before_the_commission_was_recorded_is_reported(world):
    world[2].set("2026-12-09T12:00:00Z")  # recorded Wednesday, effective from the Saturday before
    _record(world, commission([basic_lane(), weekly_lane(weekday=1, time="03:00", deadline=45)],
                              effective_from="2026-12-05"))
    assert _lane_findings(world) == []
    assert _at(world, "2026-12-10T02:31:00Z") == [("lane-not-started", "discovery/alpha/basic/2026-12-10")]


def test_a_lane_a_revision_adds_mid_week_reports_no_night_before_it_joined(world):
    _record(world, commission([basic_lane()]))
    world[2].set("2026-12-09T12:00:00Z")
    _record(world, commission([basic_lane(), weekly_lane("beta", weekday=1, time="03:00", deadline=45),
                                basic_lane("beta", time="02:20")], revision=2))
    assert [f for f in _lane_findings(world) if "/beta/" in f[1]] == []
    assert [f for f in _at(world, "2026-12-14T03:31:00Z") if "/beta/" in f[1]] == [
        ("lane-not-started", "discovery/beta/full/2026-W51"),
        ("lane-missed", "discovery/beta/basic/2026-12-13"),
        ("lane-not-started", "discovery/beta/basic/2026-12-14"),
    ]


def test_a_sunday_lanes_missed_night_is_reported_through_the_next_iso_week_until_the_next_sunday(world):
    _record(world, commission([weekly_lane("portfolio", "audit", weekday=7, time="02:30", deadline=45)]))
    expected = [("lane-missed", "discovery/portfolio/audit/2026-W50")]
    assert _at(world, "2026-12-14T00:01:00Z") == expected  # Monday: a new ISO week, the same missed night
    assert _at(world, "2026-12-20T02:59:00Z") == expected  # Sunday, before this night's slot and grace
    assert _at(world, "2026-12-20T03:01:00Z") == [*expected, ("lane-not-started", "discovery/portfolio/audit/2026-W51")]


def test_a_night_at_or_before_the_lanes_watermark_is_never_reported(world):
    _record(world, commission([basic_lane()]))
    world[2].set("2026-12-10T02:05:00Z")  # 7 to 9 December missed; Thursday's admission coalesces them
    assert world[1].start(lane="alpha/basic", runner="r-1").kind == "admitted"
    assert _at(world, "2026-12-10T23:00:00Z") == []
    # Thursday's occurrence is still open: Friday's cannot be admitted, which is information, not a dead tick.
    assert _at(world, "2026-12-11T02:31:00Z") == [("lane-held", "discovery/alpha/basic/2026-12-11")]


def test_a_daily_lanes_last_two_nights_are_reported_when_grace_is_longer_than_a_day(world):
    _record(world, commission([basic_lane()]))
    assert _at(world, "2026-12-09T12:00:00Z", grace_minutes=25 * 60) == [
        ("lane-missed", "discovery/alpha/basic/2026-12-07"),
        ("lane-missed", "discovery/alpha/basic/2026-12-08"),
    ]


def test_a_weekly_lanes_missed_night_is_reported_without_a_gap_when_grace_is_longer_than_a_day(world):
    _record(world, commission([weekly_lane(weekday=1, time="03:00", deadline=45)]))
    grace = 2 * 24 * 60
    assert _at(world, "2026-12-14T12:00:00Z", grace) == [("lane-missed", "discovery/alpha/full/2026-W50")]
    # Tuesday: last Monday is 8 days back, this Monday's slot + 2 days is tomorrow 03:00. Both were missed.
    assert _at(world, "2026-12-15T12:00:00Z", grace) != []


def test_a_late_weekly_slot_whose_grace_crosses_midnight_stays_reported_across_midnight(world):
    _record(world, commission([weekly_lane(weekday=7, time="23:00", closes="23:50", deadline=45)]))
    assert _at(world, "2026-12-20T23:59:00Z", 90) == [("lane-missed", "discovery/alpha/full/2026-W50")]
    assert _at(world, "2026-12-21T00:10:00Z", 90) != []  # both Sundays missed; nothing is reported


def test_a_night_on_which_the_tick_resumed_the_lanes_open_occurrence_is_not_reported_as_not_started(world):
    _journal, schedule, clock = world
    _record(world, commission([basic_lane()]))
    clock.set("2026-12-07T02:00:00Z")
    assert schedule.start(lane="alpha/basic", runner="r-1").kind == "admitted"
    clock.set("2026-12-07T02:10:00Z")
    schedule.defer(occurrence_id="discovery/alpha/basic/2026-12-07", runner="r-1", reason="volume-unmounted")
    clock.set("2026-12-08T02:00:00Z")
    assert schedule.start(lane="alpha/basic", runner="r-2").kind == "resumed"
    assert _at(world, "2026-12-08T02:31:00Z") == [("lane-held", "discovery/alpha/basic/2026-12-08")]


def test_a_night_whose_window_a_dst_gap_swallowed_is_not_reported_as_missed(world):
    world[2].set("2026-03-20T12:00:00Z")
    _record(world, commission([weekly_lane(weekday=7, time="01:10", closes="02:00", deadline=45)],
                              effective_from="2026-03-23"))
    world[2].set("2026-03-29T01:20:00Z")
    assert world[1].start(lane="alpha/full", runner="r-1").kind == "waiting"  # the empty window admits nothing
    assert _at(world, "2026-04-02T12:00:00Z") == []
