"""Health's nights are those of the commission the schedule's reader checked, found as the rule says.

`nights_to_check` runs on every reading of the dashboard (twice: for the nights' states, then in the verdict).
It takes the commission the reader parsed and matched with its digest instead of validating the view's
document again, and the engine's memoised nights instead of resolving each date in the zone again; these
tests hold that it still answers for the document the view holds (a view given another document, a new
revision) and that its nights are, night for night, those the rule names.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import zoneinfo
from datetime import timedelta
from typing import Any

import pendulum
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from factory_schedule.core import ManualClock
from factory_schedule.core.commission import Commission, lane_occurrence_on, parse_commission
from factory_schedule.core.health import nights_to_check
from factory_schedule.core.results import ScheduleView
from factory_schedule.core.zones import is_valid_zone, local_date_of
from tests.core.pipeline.test_pipeline_claim_reads_the_schedule import documents_validated
from tests.core.schedule.support import SIGN_IN, basic_lane, commission, weekly_lane

ZONES = sorted(zone for zone in zoneinfo.available_timezones() if is_valid_zone(zone))
GRACE = timedelta(minutes=30)
WALL_TIMES = ["00:00", "01:30", "02:00", "02:30", "12:00", "22:30", "22:59"]  # each closes an hour later


def _recorded(world: tuple[Any, Any, ManualClock], *lanes: dict[str, Any]) -> None:
    _journal, schedule, _clock = world
    schedule.record_commission(commission(lanes=list(lanes)))
    schedule.record_account(account="claude", sequence=1, sign_in=SIGN_IN, overage=False, recorded_by="owner")


def _slots(view: ScheduleView, now: pendulum.DateTime) -> list[tuple[str, str]]:
    return [(night.occurrence_id, night.slot.isoformat()) for night in nights_to_check(view, now, GRACE)]


def test_health_finds_the_nights_of_the_commission_the_reader_checked_without_validating_it_again(
        world: tuple[Any, Any, ManualClock], monkeypatch: pytest.MonkeyPatch) -> None:
    _recorded(world, basic_lane("alpha"), weekly_lane("alpha", "full", weekday=1, time="02:40"))
    world[2].set("2026-12-08T12:00:00Z")
    view = world[1].read()
    validated = documents_validated(monkeypatch, Commission)
    assert _slots(view, world[2].now()) == [
        ("discovery/alpha/basic/2026-12-07", "2026-12-07T02:00:00+00:00"),
        ("discovery/alpha/basic/2026-12-08", "2026-12-08T02:00:00+00:00"),
        ("discovery/alpha/full/2026-W49", "2026-11-30T02:40:00+00:00"),  # the schedule says what it was
        ("discovery/alpha/full/2026-W50", "2026-12-07T02:40:00+00:00")]
    assert validated == []
    assert view.parsed_commission() == parse_commission(view.commission)


def test_a_view_given_another_commission_document_answers_for_that_document(
        world: tuple[Any, Any, ManualClock]) -> None:
    _recorded(world, basic_lane("alpha"))
    world[2].set("2026-12-08T12:00:00Z")
    view = world[1].read()
    moved = commission(lanes=[basic_lane("alpha", time="03:00", closes="06:00")])
    other = dataclasses.replace(view, commission=moved)
    assert other.parsed_commission() == parse_commission(moved) != view.parsed_commission()
    assert [slot for _id, slot in _slots(other, world[2].now())] == ["2026-12-07T03:00:00+00:00",
                                                                      "2026-12-08T03:00:00+00:00"]


def test_the_next_read_after_a_new_revision_finds_the_nights_of_that_revision(
        world: tuple[Any, Any, ManualClock]) -> None:
    _recorded(world, basic_lane("alpha"))
    world[2].set("2026-12-08T12:00:00Z")
    before = _slots(world[1].read(), world[2].now())
    world[1].record_commission(commission(revision=2, lanes=[basic_lane("alpha", time="03:00", closes="06:00"),
                                                              basic_lane("beta")]))
    view = world[1].read()
    assert view.parsed_commission().revision == 2
    after = _slots(view, world[2].now())
    assert before != after and ("discovery/beta/basic/2026-12-08", "2026-12-08T02:00:00+00:00") in after


def _nights_date_by_date(view: ScheduleView, now: dt.datetime, grace: timedelta) -> list[tuple[str, str]]:
    """The rule as it reads, with nothing memoised: each lane's last two nights on the dates from today back a
    week and the grace, whose slot + grace has passed and whose window a clock change did not swallow."""
    parsed = parse_commission(view.commission)
    today = local_date_of(parsed.zone, pendulum.instance(now))
    dates = [today.subtract(days=back) for back in range(8 + math.ceil(grace / timedelta(days=1)))]
    found: list[tuple[str, str]] = []
    for lane in parsed.lanes:
        past = []
        for date in dates:
            occurrence = lane_occurrence_on(parsed, lane, date)
            if occurrence is not None and occurrence.slot + grace <= now and occurrence.closes > occurrence.slot:
                past.append(occurrence)
            if len(past) == 2:
                break
        found.extend((occurrence.id, occurrence.slot.isoformat()) for occurrence in reversed(past))
    return found


@settings(max_examples=150, deadline=None)
@example(zone="Europe/Berlin", time="02:30", weekday=7, now=dt.datetime(2026, 3, 29, 1, 30), grace_minutes=0)
@example(zone="Europe/London", time="01:30", weekday=7, now=dt.datetime(2026, 10, 25, 1, 0), grace_minutes=30)
@example(zone="Pacific/Apia", time="12:00", weekday=5, now=dt.datetime(2012, 1, 1, 0, 0), grace_minutes=2000)
@example(zone="Europe/London", time="22:30", weekday=3, now=dt.datetime(2026, 12, 10, 23, 30), grace_minutes=2880)
@given(zone=st.sampled_from(ZONES), time=st.sampled_from(WALL_TIMES), weekday=st.integers(1, 7),
       now=st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2040, 1, 1)),
       grace_minutes=st.integers(0, 3 * 24 * 60))
def test_the_nights_to_check_are_the_rules_nights_in_any_zone_and_for_any_grace(
        zone: str, time: str, weekday: int, now: dt.datetime, grace_minutes: int) -> None:
    closes = f"{int(time[:2]) + 1:02d}:{time[3:]}"
    document = commission(zone=zone, effective_from="2000-01-03", lanes=[
        basic_lane("alpha", time=time, closes=closes),
        weekly_lane("alpha", "full", weekday=weekday, time=time, closes=closes)])
    view = ScheduleView(version=2, commission=document, lanes=[], occurrences=[], ledger=[], accounts=[],
                        revision_recorded_at="2000-01-01T00:00:00.000Z")
    instant = pendulum.instance(now.replace(tzinfo=dt.UTC))
    grace = timedelta(minutes=grace_minutes)
    assert [(night.occurrence_id, night.slot.isoformat()) for night in nights_to_check(view, instant, grace)] == (
        _nights_date_by_date(view, instant, grace))
