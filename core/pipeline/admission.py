"""The schedule as a staged lane's claim reads it: the recorded commission and the one lane the claim names.

A claim decides on one occurrence (is it its lane's open one, running for this runner token?) or, for a
run the commission does not schedule, on the commission alone. Building the schedule's whole view for
that checks every lane and every settled record the state keeps, about four times the claim's own work
on a 25-lane schedule (and three times more in a fresh process, which also reads the settled records'
events). This reads the state the journal hands over (sealed: the journal refuses any other text) and
checks, by the schedule's own rules, all that a claim reads: every member besides the lanes as the
schedule's reader validates them, the commission against its digest, the lane IDs one per lane, sorted
and covering the commission's, and the claimed lane's document as the reader validates a lane
(`LaneState`, then `check_lane` under that commission at that version). It leaves out what the claim
reads nothing of: the other lanes' documents, the ledger's sums over every lane's calls and the settled
records kept without their calls; any schedule command and any whole read still check those.

Anything the narrow read refuses or does not expect is read whole (`LifecycleSchedule.read`), which
answers the schedule's own CORRUPT, naming the defect, or, should it accept the state, the lane it
holds: never less checked than the whole read.

Pure over the journal handed in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from factory_schedule.store import CommandJournal as Journal  # the protocol: no database library loads
from factory_schedule.store import JournalCorruptError

from ..commission import Commission, parse_commission
from ..errors import ScheduleError, corrupt
from ..limits import SCHEDULE_AGGREGATE
from ..schedule_checks import check_lane, checked_commission
from ..schedule_document import LaneState, ScheduleState, lane_order_problem
from ..service import LifecycleSchedule


@dataclass(frozen=True)
class ClaimedSchedule:
    """What of the recorded schedule a claim reads: its version, its commission, and the lane asked for
    (None when the state holds no such lane)."""

    version: int
    commission: Commission
    lane: LaneState | None


class _ReadWhole(Exception):
    """The narrow read met something it does not judge: the whole read says what it is."""


def read_for_claim(journal: Journal, schedule: LifecycleSchedule, lane_id: str | None) -> ClaimedSchedule | None:
    """The recorded schedule's commission and its lane `lane_id` (none asked: None), checked as above; None
    before any commission is recorded. CORRUPT (ScheduleError) on any defect of what it reads."""
    try:
        version, text = journal.load_text(SCHEDULE_AGGREGATE)
    except JournalCorruptError as error:  # the state is not the one its command sealed
        raise corrupt(str(error)) from None
    if text is None:
        return None
    try:
        return _narrow(text, version, lane_id)
    except (_ReadWhole, ValidationError, ScheduleError):
        return _whole(schedule, lane_id)


def _narrow(text: str, version: int, lane_id: str | None) -> ClaimedSchedule:
    try:
        document: Any = json.loads(text)
    except (ValueError, RecursionError):
        raise _ReadWhole() from None
    lanes = document.get("lanes") if isinstance(document, dict) else None
    if not isinstance(lanes, list) or not all(isinstance(lane, dict) for lane in lanes):
        raise _ReadWhole()
    ids = [lane.get("lane") for lane in lanes]
    if not all(isinstance(lane, str) for lane in ids) or lane_order_problem(ids):
        raise _ReadWhole()
    head = ScheduleState.model_validate({**document, "lanes": []})
    commission = checked_commission(head.commission, head.commission_digest)
    if not {lane.lane for lane in commission.lanes} <= set(ids):
        raise _ReadWhole()
    if lane_id is None or lane_id not in ids:
        return ClaimedSchedule(version, commission, None)
    lane = LaneState.model_validate(lanes[ids.index(lane_id)])
    check_lane(lane, commission, version)
    return ClaimedSchedule(version, commission, lane)


def _whole(schedule: LifecycleSchedule, lane_id: str | None) -> ClaimedSchedule | None:
    view = schedule.read()  # CORRUPT, naming the defect, for a state the whole read refuses
    if view is None:
        return None
    lane = next((lane for lane in view.lanes if lane.lane == lane_id), None)
    return ClaimedSchedule(view.version, parse_commission(view.commission), lane)  # checked by the read
