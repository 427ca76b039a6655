"""A lane's nights: when its window opens (the slot) and closes, on each local date.

Every "when" the engine answers (is this occurrence due, when may it resume, what
is the next slot) is a question about these windows in the commission's zone; a
night is the commission's own `LaneOccurrence` of the lane on a date, memoised (`memo`): the same
nights are asked about on every tick.
"""

from __future__ import annotations

from collections.abc import Iterator

from pendulum import Date, DateTime

from .commission import Commission, Lane, LaneOccurrence
from .memo import lane_night
from .zones import local_date_of

Night = LaneOccurrence

# How far ahead a "next slot" search looks: a weekly lane's slot is at most a week away,
# and a resume bounded by a reset or the next ISO week is at most two.
SEARCH_DAYS = 40


def night_on(commission: Commission, lane: Lane, date: Date) -> Night | None:
    """The lane's window on a local date, or None when the lane has no occurrence that day."""
    return lane_night(commission, lane, date.toordinal())


def nights_from(commission: Commission, lane: Lane, date: Date, days: int = SEARCH_DAYS) -> Iterator[Night]:
    """The lane's nights on `date` and the `days - 1` dates after it."""
    return nights_from_ordinal(commission, lane, date.toordinal(), days)


def nights_from_ordinal(commission: Commission, lane: Lane, first: int, days: int = SEARCH_DAYS) -> Iterator[Night]:
    """`nights_from` the date of this proleptic ordinal: a tick's searches start a day before or after a date it
    holds, which is one integer step here and a calendar computation on a date."""
    for ordinal in range(first, first + days):
        night = lane_night(commission, lane, ordinal)
        if night is not None:
            yield night


def night_containing(commission: Commission, lane: Lane, instant: DateTime) -> Night | None:
    """The night whose window [slot, closes) holds the instant."""
    night = lane_night(commission, lane, local_date_of(commission.zone, instant).toordinal())
    if night is not None and night.slot <= instant < night.closes:
        return night
    return None


def first_slot_at_or_after(commission: Commission, lane: Lane, instant: DateTime, strictly: bool = False) -> Night:
    """The lane's first night whose slot is at (or strictly after) the instant."""
    start = local_date_of(commission.zone, instant).toordinal() - 1
    for night in nights_from_ordinal(commission, lane, start, SEARCH_DAYS + 8):
        if night.slot > instant or (not strictly and night.slot == instant):
            return night
    raise AssertionError("a lane has a slot at least once a week")  # pragma: no cover
