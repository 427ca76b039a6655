"""What a commission's nights will look like, in lines an owner reads before recording it.

Each lane's slot in the commission's local time, the first night's lanes in the order they
start, and the week's provider calls and token bounds against the weekly ceiling: a week whose
bounds add up past the ceiling will see its later calls refused `budget-exhausted`, which the
owner learns here rather than on a Sunday night. Pure: a parsed commission in, text out.
"""

from __future__ import annotations

from dataclasses import dataclass

from pendulum import DateTime

from .commission import Commission, Lane, lane_occurrence_on
from .zones import local_wall_of

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
DAYS_A_WEEK = 7
DAYS_A_YEAR = 366  # every clock change of a zone falls within a year


@dataclass(frozen=True)
class NightOutline:
    """The outline's lines, and whether the week's bounds exceed the ceiling (a warning, not a refusal)."""

    lines: tuple[str, ...]
    over_ceiling: bool


def _tokens(number: int) -> str:
    return f"{number:,}"


def _lane_calls(lane: Lane) -> int:
    return sum(task.max_calls for task in lane.tasks)


def _lane_bounds(lane: Lane) -> int:
    return sum(task.max_calls * task.call_bound for task in lane.tasks)


def _lane_line(lane: Lane, zone: str) -> str:
    when = f"{WEEKDAYS[lane.weekday - 1]}s" if lane.weekday is not None else "every night"
    tasks = ", ".join(f"{task.task} ({task.account}) {task.max_calls} x {_tokens(task.call_bound)}"
                      for task in lane.tasks)
    return (f"{lane.lane}: {when} {lane.time}-{lane.closes} {zone}, deadline {lane.deadline_minutes} min; "
            f"{tasks} tokens")


def _emptied_windows(commission: Commission) -> list[tuple[str, str, str]]:
    """Each lane whose window a clock change empties on a night of the year from effectiveFrom, with the first such
    date: a slot in a DST gap moves forward by the gap, and when that passes the close nothing can be admitted."""
    emptied = []
    for lane in commission.lanes:
        day = commission.effective_date
        for _ in range(DAYS_A_YEAR):
            occurrence = lane_occurrence_on(commission, lane, day)
            if occurrence is not None and occurrence.closes <= occurrence.slot:
                emptied.append((lane.lane, f"{lane.time}-{lane.closes}", day.to_date_string()))
                break
            day = day.add(days=1)
    return emptied


def night_outline(commission: Commission, now: DateTime | None = None) -> NightOutline:
    """The lanes, the first night and the week's totals against the ceiling. With `now`, the first night is the
    first from effectiveFrom with a lane whose window has not closed by then, and it lists only such lanes: a
    commission recorded at noon runs none of that morning's slots."""
    lines = [f"commission revision {commission.revision}: {len(commission.lanes)} lanes in {commission.zone}, "
             f"from {commission.effective_from}"]
    lines += [f"  {_lane_line(lane, commission.zone)}" for lane in commission.lanes]
    first, tonight = commission.effective_date, []
    for _ in range(DAYS_A_WEEK + 1):  # every lane runs at least once a week
        tonight = sorted(
            (occurrence for lane in commission.lanes
             if (occurrence := lane_occurrence_on(commission, lane, first)) is not None
             and (now is None or occurrence.closes > now)),
            key=lambda occurrence: (occurrence.slot, occurrence.lane),
        )
        if tonight:
            break
        first = first.add(days=1)
    starts = ", ".join(f"{local_wall_of(commission.zone, occurrence.slot)[1]} {occurrence.lane}"
                       for occurrence in tonight)
    lines.append(f"first night, {WEEKDAYS[first.isoweekday() - 1]} {first.to_date_string()}: "
                 f"{starts or 'no lane is due'}")
    calls = bounds = peak = 0
    for weekday in range(1, DAYS_A_WEEK + 1):
        due = [lane for lane in commission.lanes if lane.weekday in (None, weekday)]
        calls += sum(_lane_calls(lane) for lane in due)
        night = sum(_lane_bounds(lane) for lane in due)
        bounds += night
        peak = max(peak, night)
    ceiling = commission.weekly_tokens
    share = bounds * 100 // ceiling
    lines.append(f"a week: at most {calls} calls whose bounds add up to {_tokens(bounds)} tokens "
                 f"({share}% of the weekly ceiling {_tokens(ceiling)}); the busiest night {_tokens(peak)}")
    lines += [f"warning: {lane}'s window {window} is empty on {date} (a clock change moves its slot past its "
              "close): that night is missed; move the lane out of the changing hour" for lane, window, date in
              _emptied_windows(commission)]
    over = bounds > ceiling
    if over:
        lines.append(f"warning: the week's bounds are above the ceiling by {_tokens(bounds - ceiling)} tokens: once "
                     "the ceiling is spent, the week's later calls are refused budget-exhausted (raise weeklyTokens, "
                     "or lower maxCalls or callBound)")
    return NightOutline(tuple(lines), over)
