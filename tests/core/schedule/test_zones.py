"""Zone arithmetic: local dates, the compatible rule at DST changes, ISO weeks."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pendulum
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from factory_schedule.core.clock import as_utc
from factory_schedule.core.errors import ScheduleError
from factory_schedule.core.schedule_document import at, instant_text
from factory_schedule.core.zones import (
    is_valid_zone,
    iso_week_of,
    local_date_of,
    local_wall_of,
    monday_of_week,
    parse_local_date,
    parse_wall_time,
    zoned_instant,
)
from tests.core.schedule.support import utc

# --- day boundary ---------------------------------------------------------------------------


def test_day_boundary_in_london_is_local_midnight_in_winter_and_summer() -> None:
    assert local_date_of("Europe/London", utc("2026-12-06T23:59:59Z")) == pendulum.Date(2026, 12, 6)
    assert local_date_of("Europe/London", utc("2026-12-07T00:00:00Z")) == pendulum.Date(2026, 12, 7)
    # BST: local midnight is 23:00 UTC the day before.
    assert local_date_of("Europe/London", utc("2026-06-30T22:59:59Z")) == pendulum.Date(2026, 6, 30)
    assert local_date_of("Europe/London", utc("2026-06-30T23:00:00Z")) == pendulum.Date(2026, 7, 1)
    assert zoned_instant("Europe/London", "2026-12-07", "02:00") == utc("2026-12-07T02:00:00Z")
    assert zoned_instant("Europe/London", "2026-07-01", "02:00") == utc("2026-07-01T01:00:00Z")


def test_day_boundary_in_tokyo_runs_a_day_ahead_of_utc() -> None:
    slot = zoned_instant("Asia/Tokyo", "2026-12-07", "02:00")
    assert slot == utc("2026-12-06T17:00:00Z")
    assert slot.date() == pendulum.Date(2026, 12, 6)  # the UTC date is the day before
    assert local_date_of("Asia/Tokyo", slot) == pendulum.Date(2026, 12, 7)
    assert local_date_of("Asia/Tokyo", utc("2026-12-06T14:59:59Z")) == pendulum.Date(2026, 12, 6)
    assert local_date_of("Asia/Tokyo", utc("2026-12-06T15:00:00Z")) == pendulum.Date(2026, 12, 7)


def test_zoned_instant_is_a_pendulum_datetime_in_utc() -> None:
    instant = zoned_instant("Europe/Berlin", pendulum.Date(2026, 12, 7), "02:00")
    assert isinstance(instant, pendulum.DateTime)
    assert instant.utcoffset() == dt.timedelta(0)
    assert instant.timezone_name == "UTC"


def test_local_date_of_accepts_any_aware_instant_and_refuses_a_naive_one() -> None:
    aware = dt.datetime(2026, 12, 6, 18, 0, tzinfo=dt.timezone(dt.timedelta(hours=-5)))  # 23:00Z
    assert local_date_of("Asia/Tokyo", aware) == pendulum.Date(2026, 12, 7)
    with pytest.raises(ScheduleError) as refused:
        local_date_of("Asia/Tokyo", dt.datetime(2026, 12, 6, 18, 0))  # type: ignore[arg-type]
    assert refused.value.code == "INVALID"


# --- ISO weeks ------------------------------------------------------------------------------


@pytest.mark.parametrize("day", ["2026-12-28", "2026-12-31", "2027-01-01", "2027-01-02", "2027-01-03"])
def test_iso_week_2026_w53_runs_from_monday_28_december_to_sunday_3_january(day: str) -> None:
    assert iso_week_of(day) == "2026-W53"


def test_iso_week_2027_w01_opens_on_monday_4_january() -> None:
    assert iso_week_of("2027-01-04") == "2027-W01"
    assert iso_week_of(pendulum.Date(2027, 1, 10)) == "2027-W01"
    assert monday_of_week("2026-W53") == pendulum.Date(2026, 12, 28)
    assert monday_of_week("2027-W01") == pendulum.Date(2027, 1, 4)
    assert iso_week_of("2026-01-01") == "2026-W01"  # Thursday 1 January opens 2026's week 1
    assert iso_week_of("2025-12-29") == "2026-W01"  # ... which starts in December 2025


@pytest.mark.parametrize("week", ["2027-W53", "2026-W54", "2026-W00", "2026W53", "2026-W5", "2026-w53", "", 202653])
def test_monday_of_week_refuses_a_week_the_year_does_not_have(week: object) -> None:
    with pytest.raises(ScheduleError) as refused:
        monday_of_week(week)
    assert refused.value.code == "INVALID"


# --- DST: London's 23- and 25-hour days, Berlin's gap and repeated hour ---------------------


def test_london_spring_day_has_23_hours_and_one_slot_each_night() -> None:
    day_length = zoned_instant("Europe/London", "2026-03-30", "00:00") - zoned_instant(
        "Europe/London", "2026-03-29", "00:00"
    )
    assert day_length.in_hours() == 23
    before = zoned_instant("Europe/London", "2026-03-28", "02:00")
    after = zoned_instant("Europe/London", "2026-03-29", "02:00")
    assert (before, after) == (utc("2026-03-28T02:00:00Z"), utc("2026-03-29T01:00:00Z"))
    assert (after - before).in_hours() == 23
    # London's gap is 01:00-02:00: 01:30 does not exist and moves forward by the gap.
    assert zoned_instant("Europe/London", "2026-03-29", "01:30") == utc("2026-03-29T01:30:00Z")


def test_london_autumn_day_has_25_hours_and_one_slot_each_night() -> None:
    day_length = zoned_instant("Europe/London", "2026-10-26", "00:00") - zoned_instant(
        "Europe/London", "2026-10-25", "00:00"
    )
    assert day_length.in_hours() == 25
    before = zoned_instant("Europe/London", "2026-10-24", "02:00")
    after = zoned_instant("Europe/London", "2026-10-25", "02:00")
    assert (before, after) == (utc("2026-10-24T01:00:00Z"), utc("2026-10-25T02:00:00Z"))
    assert (after - before).in_hours() == 25
    # 01:30 happens twice; the earlier (BST) instant is taken.
    assert zoned_instant("Europe/London", "2026-10-25", "01:30") == utc("2026-10-25T00:30:00Z")


def test_berlin_slot_in_the_spring_gap_moves_forward_by_the_gap() -> None:
    slot = zoned_instant("Europe/Berlin", "2026-03-29", "02:30")
    assert slot == utc("2026-03-29T01:30:00Z")
    assert local_wall_of("Europe/Berlin", slot) == (pendulum.Date(2026, 3, 29), "03:30")
    # The instants either side of the gap are untouched.
    assert zoned_instant("Europe/Berlin", "2026-03-29", "01:59") == utc("2026-03-29T00:59:00Z")
    assert zoned_instant("Europe/Berlin", "2026-03-29", "03:00") == utc("2026-03-29T01:00:00Z")


def test_berlin_repeated_hour_takes_its_earlier_instant() -> None:
    slot = zoned_instant("Europe/Berlin", "2026-10-25", "02:30")
    assert slot == utc("2026-10-25T00:30:00Z")  # CEST, not 01:30Z (CET)
    assert local_wall_of("Europe/Berlin", slot) == (pendulum.Date(2026, 10, 25), "02:30")
    assert zoned_instant("Europe/Berlin", "2026-10-25", "03:00") == utc("2026-10-25T02:00:00Z")


def test_the_compatible_rule_differs_from_pendulums_default_fold_in_one_direction_each() -> None:
    """Why zoned_instant chooses explicitly: pendulum's fold=1 default is right in the gap only,
    fold=0 right in the repeated hour only."""
    gap_default = pendulum.datetime(2026, 3, 29, 2, 30, tz="Europe/Berlin", fold=0).in_timezone("UTC")
    repeat_default = pendulum.datetime(2026, 10, 25, 2, 30, tz="Europe/Berlin").in_timezone("UTC")
    assert gap_default != zoned_instant("Europe/Berlin", "2026-03-29", "02:30")
    assert repeat_default != zoned_instant("Europe/Berlin", "2026-10-25", "02:30")


def test_half_hour_shifts_follow_the_same_rule() -> None:
    # Lord Howe moves its clocks by 30 minutes at 02:00.
    assert local_wall_of("Australia/Lord_Howe", zoned_instant("Australia/Lord_Howe", "2026-10-04", "02:15"))[1] == (
        "02:45"
    )
    assert zoned_instant("Australia/Lord_Howe", "2026-04-05", "01:45") == utc("2026-04-04T14:45:00Z")


# --- parsing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["2026-02-30", "2026-2-3", "26-12-07", "2026-12-07T00:00", " 2026-12-07", 20261207, None]
)
def test_parse_local_date_refuses_anything_but_a_real_iso_date(value: object) -> None:
    with pytest.raises(ScheduleError) as refused:
        parse_local_date(value)
    assert refused.value.code == "INVALID"


def test_parse_local_date_refuses_an_instant() -> None:
    with pytest.raises(ScheduleError):
        parse_local_date(pendulum.datetime(2026, 12, 7))


def test_parse_local_date_accepts_dates_and_strings_alike() -> None:
    assert parse_local_date("2028-02-29") == pendulum.Date(2028, 2, 29)
    assert parse_local_date(dt.date(2026, 12, 7)) == pendulum.Date(2026, 12, 7)
    assert isinstance(parse_local_date(dt.date(2026, 12, 7)), pendulum.Date)


@pytest.mark.parametrize("value", ["24:00", "2:00", "02:60", "02:00:00", "0200", "", 200, None])
def test_parse_wall_time_refuses_anything_but_hh_mm(value: object) -> None:
    with pytest.raises(ScheduleError) as refused:
        parse_wall_time(value)
    assert refused.value.code == "INVALID"


def test_parse_wall_time_reads_the_whole_day() -> None:
    assert parse_wall_time("00:00") == (0, 0)
    assert parse_wall_time("23:59") == (23, 59)


@pytest.mark.parametrize("zone", ["localtime", "posixrules", "right/UTC", "posix/Europe/London", "Mars/Base", "", 1])
def test_a_zone_must_be_a_host_independent_iana_name(zone: object) -> None:
    assert not is_valid_zone(zone)
    with pytest.raises(ScheduleError) as refused:
        zoned_instant(zone, "2026-12-07", "02:00")  # type: ignore[arg-type]
    assert refused.value.code == "INVALID"


@pytest.mark.parametrize("zone", ["Europe/London", "Asia/Tokyo", "UTC", "America/Argentina/Buenos_Aires", "Etc/GMT+5"])
def test_iana_zone_names_are_valid(zone: str) -> None:
    assert is_valid_zone(zone)


# --- properties -------------------------------------------------------------------------------

ZONES = sorted(zone for zone in zoneinfo.available_timezones() if is_valid_zone(zone))
assert len(ZONES) > 300, "the zone sample should be broad"


def _date_exists(zone: str, day: dt.date) -> bool:
    start = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC) - dt.timedelta(hours=15)
    steps = (start + dt.timedelta(minutes=15 * k) for k in range(4 * 54))
    return any(step.astimezone(zoneinfo.ZoneInfo(zone)).date() == day for step in steps)


def _offset_at(zone: str, instant: dt.datetime) -> dt.timedelta:
    return instant.astimezone(zoneinfo.ZoneInfo(zone)).utcoffset()  # type: ignore[return-value]


@settings(max_examples=200, deadline=None)
@example(zone="Europe/Berlin", day=dt.date(2026, 3, 29), hour=2, minute=30)
@example(zone="Europe/Berlin", day=dt.date(2026, 10, 25), hour=2, minute=30)
@example(zone="Europe/London", day=dt.date(2026, 3, 29), hour=1, minute=0)
@example(zone="Europe/London", day=dt.date(2026, 10, 25), hour=1, minute=59)
@example(zone="America/New_York", day=dt.date(2026, 3, 8), hour=2, minute=15)
@example(zone="Australia/Lord_Howe", day=dt.date(2026, 10, 4), hour=2, minute=15)
@example(zone="Australia/Lord_Howe", day=dt.date(2026, 4, 5), hour=1, minute=45)
@example(zone="America/Havana", day=dt.date(2026, 3, 8), hour=0, minute=30)
@example(zone="America/Havana", day=dt.date(2026, 11, 1), hour=0, minute=30)
@example(zone="America/Santiago", day=dt.date(2026, 9, 6), hour=0, minute=0)
@example(zone="America/Santiago", day=dt.date(2026, 4, 4), hour=23, minute=30)
@example(zone="Pacific/Apia", day=dt.date(2011, 12, 30), hour=12, minute=0)
@given(
    zone=st.sampled_from(ZONES),
    day=st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2060, 12, 31)),
    hour=st.integers(0, 23),
    minute=st.integers(0, 59),
)
def test_zoned_instant_reads_back_as_its_wall_time_except_in_a_gap(
    zone: str, day: dt.date, hour: int, minute: int
) -> None:
    wall_time = f"{hour:02d}:{minute:02d}"
    naive = dt.datetime(day.year, day.month, day.day, hour, minute)
    instant = zoned_instant(zone, day, wall_time)
    local: dt.datetime = instant.astimezone(zoneinfo.ZoneInfo(zone)).replace(tzinfo=None)
    if local == naive:
        assert local_date_of(zone, instant) == day
        # The earlier instant of a repeated wall time: no instant up to a day earlier reads the same.
        earlier = [
            instant - dt.timedelta(minutes=step)
            for step in range(15, 24 * 60 + 1, 15)
            if (instant - dt.timedelta(minutes=step)).astimezone(zoneinfo.ZoneInfo(zone)).replace(tzinfo=None) == naive
        ]
        assert earlier == []
    else:
        # A gap: moved forward by exactly the gap, the offset jump between just before and the instant.
        gap = local - naive
        assert dt.timedelta(0) < gap <= dt.timedelta(hours=24)
        assert _offset_at(zone, instant) - _offset_at(zone, instant - gap) == gap
        assert local_date_of(zone, instant) == (naive + gap).date()
        if (naive + gap).date() == day:
            assert local_date_of(zone, instant) == day


@settings(max_examples=200, deadline=None)
@given(zone=st.sampled_from(ZONES), day=st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2060, 12, 31)))
@example(zone="Pacific/Apia", day=dt.date(2011, 12, 31))
@example(zone="Europe/Berlin", day=dt.date(2026, 3, 29))
def test_local_date_of_a_schedule_window_slot_is_its_date(zone: str, day: dt.date) -> None:
    assume(_date_exists(zone, day))  # Apia and Fakaofo skipped 30 December 2011 entirely
    for wall_time in ("02:00", "05:00", "08:00"):
        assert local_date_of(zone, zoned_instant(zone, day, wall_time)) == day


# --- the hot path's standard-library readings, against pendulum's and zoneinfo's --------------------------------

_INSTANTS = st.datetimes(min_value=dt.datetime(1990, 1, 1), max_value=dt.datetime(2060, 12, 31))


def _aware(zone: str, naive_utc: dt.datetime, as_pendulum: bool) -> dt.datetime:
    instant = naive_utc.replace(tzinfo=dt.UTC)
    if as_pendulum:
        return pendulum.instance(instant).in_timezone(zone)
    return instant.astimezone(zoneinfo.ZoneInfo(zone))


@settings(max_examples=300, deadline=None)
@example(zone="Europe/Berlin", naive_utc=dt.datetime(2026, 3, 29, 1, 30), as_pendulum=True)
@example(zone="Europe/London", naive_utc=dt.datetime(2026, 10, 25, 1, 0), as_pendulum=True)
@example(zone="Australia/Lord_Howe", naive_utc=dt.datetime(2026, 4, 4, 14, 45), as_pendulum=False)
@given(zone=st.sampled_from(ZONES), naive_utc=_INSTANTS, as_pendulum=st.booleans())
def test_local_date_and_wall_of_an_instant_are_the_zone_databases_reading(
    zone: str, naive_utc: dt.datetime, as_pendulum: bool
) -> None:
    """`local_date_of` and `local_wall_of` convert with the standard library: they read what zoneinfo reads
    for the same instant, whether it comes as a pendulum DateTime (in any zone) or a stdlib datetime."""
    instant = _aware(zone, naive_utc, as_pendulum)
    reference = naive_utc.replace(tzinfo=dt.UTC).astimezone(zoneinfo.ZoneInfo(zone))
    assert local_date_of(zone, instant) == reference.date()
    assert local_wall_of(zone, instant) == (reference.date(), f"{reference.hour:02d}:{reference.minute:02d}")
    assert local_date_of("UTC", instant) == naive_utc.date()


def _pendulum_instant_text(instant: dt.datetime) -> str:
    """The stored form as it was made before the hot path stopped going through pendulum's formatting."""
    utc_instant = pendulum.instance(instant).in_timezone("UTC")
    return f"{utc_instant.format('YYYY-MM-DDTHH:mm:ss')}.{utc_instant.microsecond // 1000:03d}Z"


@settings(max_examples=300, deadline=None)
@example(zone="America/New_York", naive_utc=dt.datetime(2036, 3, 9, 2, 0), as_pendulum=False, fold=0)  # a gap
@example(zone="Europe/London", naive_utc=dt.datetime(2026, 10, 25, 1, 30), as_pendulum=True, fold=1)  # repeated
@example(zone="America/Danmarkshavn", naive_utc=dt.datetime(1996, 1, 1, 0, 0), as_pendulum=False, fold=1)  # offset 0
@given(zone=st.sampled_from(ZONES), naive_utc=_INSTANTS, as_pendulum=st.booleans(), fold=st.integers(0, 1))
def test_an_instants_stored_form_and_its_reading_back_are_pendulums(
    zone: str, naive_utc: dt.datetime, as_pendulum: bool, fold: int
) -> None:
    """`instant_text` formats a UTC instant field by field and `at` builds the DateTime directly; both give
    exactly what pendulum gave, for instants in any zone, naive ones (read as UTC) and wall times a zone
    skips or repeats (a stdlib datetime with either fold)."""
    instant = _aware(zone, naive_utc, as_pendulum)
    wall = naive_utc.replace(tzinfo=zoneinfo.ZoneInfo(zone), fold=fold)  # the same fields as a wall time there
    for value in (instant, wall, naive_utc, pendulum.instance(naive_utc.replace(tzinfo=dt.UTC))):
        text = instant_text(value)
        assert text == _pendulum_instant_text(value)
        parsed, reference = at(text), pendulum.instance(dt.datetime.fromisoformat(text), tz=pendulum.UTC)
        assert parsed == reference
        assert (type(parsed), parsed.timezone_name, parsed.microsecond) == (
            type(reference), reference.timezone_name, reference.microsecond)


@settings(max_examples=200, deadline=None)
@given(zone=st.sampled_from(["UTC", "Europe/London", "Asia/Tokyo", "America/Havana"]), naive_utc=_INSTANTS,
       as_pendulum=st.booleans())
def test_as_utc_gives_pendulums_utc_instant_and_keeps_one_it_already_is(
    zone: str, naive_utc: dt.datetime, as_pendulum: bool
) -> None:
    instant = _aware(zone, naive_utc, as_pendulum)
    converted = as_utc(instant)  # type: ignore[arg-type]
    reference = pendulum.instance(instant).in_timezone("UTC")
    assert converted == reference
    assert (type(converted), converted.timezone_name) == (type(reference), "UTC")
    assert as_utc(converted) is converted
