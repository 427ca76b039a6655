"""What `commission check` shows of the nights: the first night is the one the engine will run, not a morning
already gone."""

from __future__ import annotations

import pendulum

from factory_schedule.core.commission import parse_commission, proposed_commission
from factory_schedule.core.night_outline import night_outline

COMMISSION = parse_commission(proposed_commission(["alpha", "beta"], "2026-12-03", 40_000_000))  # a Thursday


def _first_night(now: pendulum.DateTime | None) -> str:
    return next(line for line in night_outline(COMMISSION, now).lines if line.startswith("first night"))


def test_before_the_effective_night_the_first_night_is_that_night_whole() -> None:
    first = _first_night(pendulum.datetime(2026, 12, 2, 15, tz="UTC"))
    assert first.startswith("first night, Thursday 2026-12-03: 02:00 alpha/basic, 02:20 beta/basic, 02:40 alpha/full")


def test_checked_after_that_mornings_windows_closed_the_first_night_is_the_next_with_only_its_lanes() -> None:
    """Recorded at 08:14 on the effective Thursday: its basic lanes first run on Friday, and the Thursday full
    runs a week later, so Friday's night lists the basic lanes alone."""
    first = _first_night(pendulum.datetime(2026, 12, 3, 8, 14, tz="UTC"))
    assert first == "first night, Friday 2026-12-04: 02:00 alpha/basic, 02:20 beta/basic"


def test_inside_an_open_window_that_night_still_counts_for_the_lanes_still_open() -> None:
    first = _first_night(pendulum.datetime(2026, 12, 3, 4, 30, tz="UTC"))
    assert first.startswith("first night, Thursday 2026-12-03: 02:00 alpha/basic")


def test_without_a_clock_the_first_night_is_the_effective_date() -> None:
    assert _first_night(None).startswith("first night, Thursday 2026-12-03: 02:00 alpha/basic")


def test_a_window_a_dst_gap_empties_is_a_warning_naming_the_night() -> None:
    """Europe/Berlin's clocks go from 02:00 to 03:00 on Sunday 28 March 2027: a 02:30 slot moves forward by the
    gap to 03:30, its close, so that night's window is empty and the night is missed. The owner learns it here."""
    document = proposed_commission(["alpha"], "2026-12-03", 40_000_000, zone="Europe/Berlin")
    document["lanes"] = [{**lane, "time": "02:30", "closes": "03:30"} if lane["lane"] == "alpha/basic" else lane
                         for lane in document["lanes"]]
    lines = night_outline(parse_commission(document)).lines
    [warning] = [line for line in lines if "2027-03-28" in line]
    assert warning.startswith("warning: alpha/basic") and "empty" in warning and "missed" in warning
    assert not [line for line in night_outline(COMMISSION).lines if "empty" in line]  # London: never in its window
