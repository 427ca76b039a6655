"""Missed lanes and firing records: each lane's nights past their slot plus a grace that nothing admitted."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

import pendulum

from factory_schedule.core.memo import lane_night
from factory_schedule.core.results import ScheduleView
from factory_schedule.core.schedule_document import Occurrence
from factory_schedule.core.zones import local_date_of

from .report import Finding


@dataclass(frozen=True)
class Night:
    """A lane's night whose slot passed more than the grace ago and that its lane has not admitted past."""

    lane: str
    occurrence_id: str
    slot: datetime
    holding: Occurrence | None  # the lane's open occurrence, which any new admission waits for


def nights_to_check(view: ScheduleView, now: datetime, grace: timedelta) -> list[Night]:
    """Each lane's last two nights whose slot passed more than `grace` ago and that nothing admitted:
    yesterday's and today's for a daily lane, and a weekly lane's night even when it was days ago (until
    the lane's next admission coalesces it). A night whose window a clock change swallowed is left out:
    nothing could be admitted, and no tick could have helped. The shell asks the schedule for their states.

    The nights are the engine's own (`memo.lane_night`, memoised under every value a night depends on), of the
    commission the schedule's reader parsed, and each slot is compared with one instant, `now` less the
    grace: the dashboard checks health on every reading, and resolving every lane's dates in its zone on
    each of them would be most of the check's cost.
    """
    commission = view.parsed_commission()
    lane_states = {lane.lane: lane for lane in view.lanes}
    today = local_date_of(commission.zone, pendulum.instance(now)).toordinal()
    # A slot is past its grace when slot + grace <= now; slots are UTC instants, so that is slot <= now - grace.
    latest_slot = pendulum.instance(now).in_timezone("UTC") - grace
    # A week back, and as many days again as the grace (a slot + grace may fall on a later date than its night).
    look_back = 8 + math.ceil(grace / timedelta(days=1))
    ordinals = range(today, today - look_back, -1)  # the same dates for every lane, newest first
    nights = []
    for lane in commission.lanes:
        state = lane_states.get(lane.lane)
        watermark = state.watermark.date if state is not None and state.watermark is not None else ""
        past = []
        # A weekly lane runs on its weekday alone: the other dates have no occurrence to compute.
        weekday = lane.weekday if lane.weekly else None
        for ordinal in ordinals:
            if weekday is not None and (ordinal - 1) % 7 + 1 != weekday:  # ordinal 1 is a Monday
                continue
            occurrence = lane_night(commission, lane, ordinal)
            if occurrence is not None and occurrence.slot <= latest_slot and occurrence.closes > occurrence.slot:
                past.append(occurrence)
            if len(past) == 2:
                break
        for occurrence in reversed(past):
            if watermark < occurrence.date.isoformat():  # else admitted, or coalesced into a later one
                nights.append(Night(lane.lane, occurrence.id, occurrence.slot,
                                    state.open if state is not None else None))
    return nights


def lane_findings(view: ScheduleView, night_states: Mapping[str, str], now: datetime,
                  grace: timedelta) -> list[Finding]:
    """A night still `due` or `missed` is reported; one whose lane holds an open occurrence is only
    information (`lane-held`): no tick can admit it until that one settles, whose trouble is reported
    elsewhere."""
    findings = []
    for night in nights_to_check(view, now, grace):
        state = night_states.get(night.occurrence_id)
        if state not in ("due", "missed"):
            continue
        evidence: dict[str, Any] = {"lane": night.lane, "occurrence": night.occurrence_id,
                                    "slot": night.slot.isoformat(), "state": state,
                                    "grace_minutes": grace.total_seconds() / 60}
        if night.holding is not None:
            evidence["held_by"] = night.holding.id
            findings.append(Finding(
                "lane-held", "info",
                f"{night.occurrence_id} waits: its lane still holds {night.holding.id} ({night.holding.state}), "
                "and it is admitted or coalesced once that one settles", evidence))
        elif state == "due":
            findings.append(Finding(
                "lane-not-started", "warning",
                f"{night.occurrence_id} was due at {night.slot.isoformat()} and nothing has been admitted: does "
                "something fire the tick (the LaunchAgent loaded, or the crontab line `check` names), and was the "
                "machine awake?", evidence))
        else:
            findings.append(Finding(
                "lane-missed", "warning",
                f"{night.occurrence_id} was never admitted before its window closed; the lane's next admission "
                "coalesces it", evidence))
    return findings


@dataclass(frozen=True)
class FiringRecord:
    """The compact record of a lane's scheduled firing that left no trace in the schedule: a `no-op` (the
    lane still held an earlier occurrence, so nothing could be admitted) or an `error` (nothing was admitted
    though the lane was free: no tick fired, or it failed). Its fields are the journal event's payload."""

    occurrence: str
    lane: str
    slot: str
    kind: Literal["no-op", "error"]
    reason: str

    def doc(self) -> dict[str, str]:
        return {"occurrence": self.occurrence, "lane": self.lane, "slot": self.slot, "kind": self.kind,
                "reason": self.reason}


def firing_records(view: ScheduleView, night_states: Mapping[str, str], now: datetime,
                   grace: timedelta) -> list[FiringRecord]:
    """One compact record per night past its slot and grace that the schedule has no record of (still
    `due` or `missed`): an admitted night has its occurrence, a coalesced one its admission's count."""
    records = []
    for night in nights_to_check(view, now, grace):
        if night_states.get(night.occurrence_id) not in ("due", "missed"):
            continue
        slot = night.slot.isoformat()
        if night.holding is not None:
            records.append(FiringRecord(night.occurrence_id, night.lane, slot, "no-op",
                                        f"the lane still held {night.holding.id} ({night.holding.state})"))
        else:
            records.append(FiringRecord(night.occurrence_id, night.lane, slot, "error",
                                        "nothing was admitted within the grace: no tick fired (nothing "
                                        "scheduled it, or the machine was asleep or off) or it failed before "
                                        "starting the lane"))
    return records


