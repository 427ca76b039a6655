"""A lane's nights: when its window opens (the slot) and closes, on each local date.

Every "when" the engine answers (is this occurrence due, when may it resume, what
is the next slot) is a question about these windows in the commission's zone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pendulum import Date, DateTime

from .identity import is_weekly, occurrence_id
from .zones import iso_week_of, local_date_of, zoned_instant

# How far ahead a "next slot" search looks: a weekly lane's slot is at most a week away,
# and a resume bounded by a reset or the next ISO week is at most two.
SEARCH_DAYS = 40


@dataclass(frozen=True)
class Night:
    """One lane's window on one local date."""

    lane: str
    date: Date
    key: str
    id: str
    slot: DateTime
    closes: DateTime

    @property
    def week(self) -> str:
        return iso_week_of(self.date)


def night_on(zone: str, lane: Any, date: Date) -> Night | None:
    """The lane's window on a local date, or None when the lane has no occurrence that day."""
    if lane.weekday is not None and date.isoweekday() != lane.weekday:
        return None
    key = iso_week_of(date) if is_weekly(lane.rhythm) else date.isoformat()
    return Night(
        lane=lane.lane,
        date=date,
        key=key,
        id=occurrence_id(lane.product, lane.rhythm, key),
        slot=zoned_instant(zone, date, lane.time),
        closes=zoned_instant(zone, date, lane.closes),
    )


def nights_from(zone: str, lane: Any, date: Date, days: int = SEARCH_DAYS) -> Iterator[Night]:
    """The lane's nights on `date` and the `days - 1` dates after it."""
    for offset in range(days):
        night = night_on(zone, lane, date.add(days=offset))
        if night is not None:
            yield night


def night_containing(zone: str, lane: Any, instant: DateTime) -> Night | None:
    """The night whose window [slot, closes) holds the instant."""
    night = night_on(zone, lane, local_date_of(zone, instant))
    if night is not None and night.slot <= instant < night.closes:
        return night
    return None


def first_slot_at_or_after(zone: str, lane: Any, instant: DateTime, strictly: bool = False) -> Night:
    """The lane's first night whose slot is at (or strictly after) the instant."""
    start = local_date_of(zone, instant).subtract(days=1)
    for night in nights_from(zone, lane, start, SEARCH_DAYS + 8):
        if night.slot > instant or (not strictly and night.slot == instant):
            return night
    raise AssertionError("a lane has a slot at least once a week")  # pragma: no cover
