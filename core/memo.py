"""The one memo of the engine's hot path: each lane's night on each local date, computed once.

Why: every tick asks, for every lane, which night holds the clock reading, when the next one is
due, where a resume may start and what coalesces; each question walks a lane's nights date by date,
and each night costs two wall times resolved in the commission's zone by the compatible rule
(`zones.zoned_instant`) plus its occurrence ID. A year's simulation asked for the same few hundred
nights tens of thousands of times, and resolving them again is the largest block of a command's
Python after the journal (a profile of the year's simulation: over a second of pendulum conversions in six).

A night depends only on the commission's zone and the lane's ID, weekday, opening and closing wall
times and the date (`commission.lane_occurrence_on` reads nothing else), so it is memoised under
exactly those values: a new revision that keeps a lane's times keeps its nights, and one that moves
them or the zone finds nothing stale. The answer is a frozen `LaneOccurrence` (or None) holding
immutable dates and instants, shared by every caller. The memo is bounded: when it holds
`MAX_NIGHTS` answers it starts again empty, so it never holds more than a few weeks of every lane
of the largest commission for long, and a long-running process does not grow.
"""

from __future__ import annotations

from pendulum import Date

from .commission import Commission, Lane, LaneOccurrence, lane_occurrence_on

# 21 lanes of nine Products, each asked about ~50 dates around the clock reading (a resume or a
# coalescing search looks up to six weeks ahead): a few thousand answers cover every question.
MAX_NIGHTS = 8192

_NightKey = tuple[str, str, int | None, str, str, int]
_nights: dict[_NightKey, LaneOccurrence | None] = {}


def lane_night(commission: Commission, lane: Lane, ordinal: int) -> LaneOccurrence | None:
    """`lane_occurrence_on(commission, lane, the date of this proleptic ordinal)`, memoised."""
    key = (commission.zone, lane.lane, lane.weekday, lane.time, lane.closes, ordinal)
    try:
        return _nights[key]
    except KeyError:
        pass
    night = lane_occurrence_on(commission, lane, Date.fromordinal(ordinal))
    if len(_nights) >= MAX_NIGHTS:
        _nights.clear()
    _nights[key] = night
    return night


def memoised_nights() -> int:
    """How many answers the memo holds now (for the tests of its bound)."""
    return len(_nights)
