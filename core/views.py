"""Read-only answers over a parsed schedule: an occurrence's status and each lane's plan."""

from __future__ import annotations

from typing import Literal

from pendulum import DateTime

from .calendar import night_containing, night_on
from .identity import OccurrenceRef
from .lifecycle import is_due, joined_after, next_due, resume_check
from .limits import SCHEDULE_LIMITS
from .results import LanePlan, OccurrenceStatusView
from .schedule_checks import Schedule
from .schedule_document import Occurrence
from .zones import monday_of_week


def _settled_view(occurrence: Occurrence) -> OccurrenceStatusView:
    assert occurrence.settlement is not None
    return OccurrenceStatusView(occurrence.id, "settled", occurrence.settlement.status)


def occurrence_status(schedule: Schedule | None, ref: OccurrenceRef, now: DateTime,
                      pruned: Occurrence | None) -> OccurrenceStatusView:
    """Where an occurrence stands, for any occurrence ID of any lane."""
    if schedule is None:
        return OccurrenceStatusView(ref.id, "not-commissioned", None)
    lane_state = schedule.state.lane(ref.lane)
    if lane_state is not None:
        held = [o for o in (lane_state.open, *lane_state.recent) if o is not None]
        for occurrence in held:
            if occurrence.id == ref.id:
                if occurrence.state == "settled":
                    return _settled_view(occurrence)
                return OccurrenceStatusView(ref.id, occurrence.state, None)
        for occurrence in held:
            span = occurrence.coalesced
            if span is not None and span.first.rsplit("/", 1)[1] <= ref.key <= span.last.rsplit("/", 1)[1]:
                return OccurrenceStatusView(ref.id, "coalesced", "unavailable", occurrence.id)
    if pruned is not None:
        return OccurrenceStatusView(ref.id, "pruned", pruned.settlement.status if pruned.settlement else None)
    lane = schedule.lane_config(ref.lane)
    if lane is None or lane_state is None:
        return OccurrenceStatusView(ref.id, "not-commissioned", None)
    date = ref.date if ref.date is not None else monday_of_week(ref.week).add(days=(lane.weekday or 1) - 1)
    night = night_on(schedule.commission, lane, date)
    if night is None or night.date < schedule.commission.effective_date or joined_after(lane_state, night):
        # Nothing is due before the lane joined (a Product a later revision adds has nothing missed before
        # it): checked before the watermark, which its first admission moves past those dates.
        return OccurrenceStatusView(ref.id, "not-commissioned", None)
    if lane_state.watermark is not None and (
        night.date.isoformat() <= lane_state.watermark.date
        or (ref.week is not None and lane_state.last_week is not None and ref.week <= lane_state.last_week)
    ):
        return OccurrenceStatusView(ref.id, "pruned", None)
    if not is_due(schedule, lane_state, night):
        return OccurrenceStatusView(ref.id, "not-commissioned", None)
    if now < night.slot:
        return OccurrenceStatusView(ref.id, "scheduled", None)
    if now < night.closes:
        return OccurrenceStatusView(ref.id, "due", None)
    return OccurrenceStatusView(ref.id, "missed", None)


def lane_plans(schedule: Schedule, now: DateTime) -> list[LanePlan]:
    """What a tick of each lane of the current commission would do, and when."""
    plans: list[LanePlan] = []
    for lane in schedule.commission.lanes:
        lane_state = schedule.state.lane(lane.lane)
        assert lane_state is not None
        occurrence = lane_state.open
        if occurrence is not None:
            if occurrence.state == "running":
                segment = occurrence.segments[-1]
                plans.append(LanePlan(lane.lane, "running", None, occurrence.id,
                                      f"runner {segment.runner} until {segment.deadline}"))
                continue
            check = resume_check(schedule, occurrence, now)
            action: Literal["settle", "resume"] = (
                "settle" if len(occurrence.segments) >= SCHEDULE_LIMITS.max_segments else "resume"
            )
            if check.until is None:
                plans.append(LanePlan(lane.lane, "wait", None, occurrence.id, check.reason))
            else:
                plans.append(LanePlan(lane.lane, action, check.until, occurrence.id, check.reason))
            continue
        night = night_containing(schedule.commission, lane, now)
        if night is not None and is_due(schedule, lane_state, night):
            plans.append(LanePlan(lane.lane, "admit", now, night.id, "due now"))
            continue
        upcoming = next_due(schedule, lane, lane_state, now)
        if upcoming is None:
            plans.append(LanePlan(lane.lane, "wait", None, None, "nothing due within the search horizon"))
        else:
            plans.append(LanePlan(lane.lane, "admit", upcoming.slot, upcoming.id, "at the lane's slot"))
    return plans
