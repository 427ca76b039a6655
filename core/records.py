"""The owner's records: commission revisions and account sign-in records, each in order."""

from __future__ import annotations

from typing import Any

from pendulum import DateTime

from .change import Change, replace
from .commission import Commission, commission_digest, commission_document
from .errors import ScheduleError, invalid
from .limits import SCHEDULE_PROTOCOL
from .schedule_checks import Schedule
from .schedule_document import ACCOUNTS, AccountRecord, AccountState, LaneState, ScheduleState, at, instant_text
from .zones import iso_week_of, local_date_of


def record_commission(schedule: Schedule | None, commission: Commission, now: DateTime) -> Change:
    """The next revision: lanes join (or rejoin) now, removed lanes keep their watermark and open
    occurrence but drop settled records, and every kept week's ceiling is lowered, never raised."""
    expected = 1 if schedule is None else schedule.commission.revision + 1
    if commission.revision != expected:
        raise ScheduleError("REVISION", f"the next revision is {expected}, not {commission.revision}")
    stamp = instant_text(now)
    document = commission_document(commission)
    lanes: list[LaneState]
    if schedule is None:
        lanes = [LaneState(lane=lane.lane, since=stamp) for lane in commission.lanes]
        state = ScheduleState(
            protocol=SCHEDULE_PROTOCOL,
            commission=document,
            commission_digest=commission_digest(document),
            revision_recorded_at=stamp,
            lanes=sorted(lanes, key=lambda lane: lane.lane),
            ledger=[],
            accounts=[AccountState(account=name) for name in ACCOUNTS],
        )
    else:
        if now < at(schedule.state.revision_recorded_at):
            raise invalid("the clock reads earlier than the current revision was recorded; nothing was written")
        before = {lane.lane for lane in schedule.commission.lanes}
        after = {lane.lane for lane in commission.lanes}
        lanes = []
        for lane_state in schedule.state.lanes:
            if lane_state.lane in after:
                joined = lane_state.since if lane_state.lane in before else stamp
                lanes.append(replace(lane_state, since=joined))
            elif lane_state.open is not None or lane_state.watermark is not None:
                lanes.append(replace(lane_state, recent=[]))
        known = {lane.lane for lane in lanes}
        lanes += [LaneState(lane=lane_id, since=stamp) for lane_id in after - known]
        this_week = iso_week_of(local_date_of(commission.zone, now))
        ledger = [
            replace(week, ceiling=min(week.ceiling, commission.weekly_tokens)) if week.week >= this_week else week
            for week in schedule.state.ledger
        ]
        state = replace(
            schedule.state,
            commission=document,
            commission_digest=commission_digest(document),
            revision_recorded_at=stamp,
            lanes=sorted(lanes, key=lambda lane: lane.lane),
            ledger=ledger,
        )
    return Change(
        event_type="commission-recorded",
        event_data={"revision": commission.revision, "digest": commission_digest(document), "at": stamp},
        state=state,
        result={"revision": commission.revision},
        growing=True,
    )


def record_account(schedule: Schedule, request: dict[str, Any], now: DateTime) -> Change:
    account = schedule.state.account(request["account"])
    expected = 1 if account.record is None else account.record.sequence + 1
    if request["sequence"] != expected:
        raise ScheduleError(
            "REVISION", f"the next {request['account']} record is sequence {expected}, not {request['sequence']}"
        )
    if account.record is not None and now < at(account.record.recorded_at):
        raise invalid("the clock reads earlier than the account's current record; nothing was written")
    stamp = instant_text(now)
    record = AccountRecord(
        sequence=request["sequence"],
        sign_in=request["signIn"],
        overage=request["overage"],
        recorded_by=request["recordedBy"],
        recorded_at=stamp,
    )
    updated = replace(account, record=record, version=schedule.version + 1)
    state = replace(
        schedule.state, accounts=[updated if a.account == updated.account else a for a in schedule.state.accounts]
    )
    return Change(
        event_type="account-recorded",
        event_data={**request, "at": stamp},
        state=state,
        result={"account": request["account"], "sequence": request["sequence"]},
    )
