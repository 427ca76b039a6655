"""The nights memo (`core/memo.py`): a memoised night is the commission's own night, and the memo stays bounded."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pendulum
from hypothesis import example, given, settings
from hypothesis import strategies as st

from factory_schedule.core import memo
from factory_schedule.core.calendar import first_slot_at_or_after, night_containing, night_on, nights_from
from factory_schedule.core.commission import lane_occurrence_on, parse_commission
from factory_schedule.core.zones import is_valid_zone, local_date_of
from tests.core.schedule.support import basic_lane, commission, weekly_lane

ZONES = sorted(zone for zone in zoneinfo.available_timezones() if is_valid_zone(zone))
WALL_TIMES = st.tuples(st.integers(0, 22), st.integers(0, 59)).map(lambda hm: f"{hm[0]:02d}:{hm[1]:02d}")


def _commission(zone: str, time: str, weekday: int) -> object:
    opens = int(time[:2])
    closes = f"{opens + 1:02d}:{time[3:]}"
    return parse_commission(commission(zone=zone, lanes=[
        basic_lane("alpha", time=time, closes=closes),
        weekly_lane("alpha", "full", weekday=weekday, time=time, closes=closes),
    ]))


@settings(max_examples=200, deadline=None)
@example(zone="Europe/Berlin", time="02:30", weekday=7, day=dt.date(2026, 3, 29))  # a slot in the spring gap
@example(zone="Europe/London", time="01:30", weekday=7, day=dt.date(2026, 10, 25))  # in the repeated hour
@example(zone="Pacific/Apia", time="12:00", weekday=5, day=dt.date(2011, 12, 30))  # a date the zone skipped
@given(zone=st.sampled_from(ZONES), time=WALL_TIMES, weekday=st.integers(1, 7),
       day=st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2060, 12, 31)))
def test_a_memoised_night_is_the_commissions_own_night_on_that_date(zone: str, time: str, weekday: int,
                                                                      day: dt.date) -> None:
    parsed = _commission(zone, time, weekday)
    date = pendulum.Date(day.year, day.month, day.day)
    for lane in parsed.lanes:  # type: ignore[attr-defined]
        expected = lane_occurrence_on(parsed, lane, date)  # type: ignore[arg-type]
        assert night_on(parsed, lane, date) == expected  # type: ignore[arg-type]
        assert night_on(parsed, lane, date) == expected, "asked again, from the memo"  # type: ignore[arg-type]
        walked = list(nights_from(parsed, lane, date, 8))  # type: ignore[arg-type]
        assert walked == [night for offset in range(8)
                          if (night := lane_occurrence_on(parsed, lane, date.add(days=offset))) is not None]  # type: ignore[arg-type]
        if expected is not None:  # the searches from an instant, against the same searches on unmemoised nights
            for instant in (expected.slot, expected.closes, expected.slot.subtract(minutes=1)):
                local = local_date_of(zone, instant)
                holder = lane_occurrence_on(parsed, lane, local)  # type: ignore[arg-type]
                if holder is None or not holder.slot <= instant < holder.closes:
                    holder = None
                assert night_containing(parsed, lane, instant) == holder  # type: ignore[arg-type]
                following = (lane_occurrence_on(parsed, lane, local.add(days=offset))  # type: ignore[arg-type]
                             for offset in range(-1, 48))
                first = next(night for night in following if night is not None and night.slot >= instant)
                assert first_slot_at_or_after(parsed, lane, instant) == first  # type: ignore[arg-type]


def test_a_revision_that_moves_a_lanes_times_or_zone_finds_none_of_its_old_nights() -> None:
    date = pendulum.Date(2026, 12, 7)
    london = parse_commission(commission(lanes=[basic_lane("alpha", time="02:00")]))
    later = parse_commission(commission(revision=2, lanes=[basic_lane("alpha", time="03:00")]))
    tokyo = parse_commission(commission(revision=3, zone="Asia/Tokyo", lanes=[basic_lane("alpha", time="02:00")]))
    nights = [night_on(parsed, parsed.lanes[0], date) for parsed in (london, later, tokyo, london)]

    assert [(n.slot.isoformat() if n else None) for n in nights] == [
        "2026-12-07T02:00:00+00:00", "2026-12-07T03:00:00+00:00", "2026-12-06T17:00:00+00:00",
        "2026-12-07T02:00:00+00:00"]
    assert nights == [lane_occurrence_on(parsed, parsed.lanes[0], date) for parsed in (london, later, tokyo, london)]


def test_the_memo_never_holds_more_than_its_bound() -> None:
    parsed = parse_commission(commission(lanes=[basic_lane("alpha"), weekly_lane("alpha", "full")]))
    first = pendulum.Date(2000, 1, 1)
    for lane in parsed.lanes:
        for offset in range(0, memo.MAX_NIGHTS + 100):
            night_on(parsed, lane, first.add(days=offset))
            assert memo.memoised_nights() <= memo.MAX_NIGHTS
    assert night_on(parsed, parsed.lanes[0], first) == lane_occurrence_on(parsed, parsed.lanes[0], first)
