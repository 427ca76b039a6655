"""Occurrences of a lane: admit, coalesce, resume, defer, reconcile, settle.

One tick of a lane acts on what it finds. A lane holds at most one open
occurrence; a running segment is never taken over by time; every occurrence that
was due and never admitted coalesces into the next one admitted; a way back to
running never skips a reset, an owner record or the night's deadline.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any

from pendulum import DateTime

from .accounts import sign_in_stopped, window_closed
from .calendar import Night, first_slot_at_or_after, night_containing, nights_from, nights_from_ordinal
from .calls import current_week, remaining
from .change import Change, put_lane, put_open, refuse_backwards, replace
from .commission import Lane
from .errors import ScheduleError, invalid
from .identity import is_weekly
from .limits import SCHEDULE_LIMITS
from .schedule_checks import Schedule
from .schedule_document import (
    Account,
    Coalesced,
    Deferral,
    DeferralReason,
    LaneState,
    LedgerWeek,
    Occurrence,
    Reconciliation,
    ScheduleState,
    SegmentEnd,
    SegmentRecord,
    Settlement,
    SettlementStatus,
    Watermark,
    at,
    instant_text,
)
from .zones import local_date_of, monday_of_week, parse_local_date

MAX_COALESCE_DAYS = 4000


# -- what is due ---------------------------------------------------------------------------


def _effective_from(schedule: Schedule) -> int:
    """The proleptic ordinal of the commission's first date."""
    return parse_local_date(schedule.commission.effective_from).toordinal()


def _day_after_watermark(lane_state: LaneState) -> int | None:
    """The proleptic ordinal of the date after the lane's watermark, if it has one."""
    if lane_state.watermark is None:
        return None
    return parse_local_date(lane_state.watermark.date).toordinal() + 1


def joined_after(lane_state: LaneState, night: Night) -> bool:
    """The night's window closed before the lane joined the commission: it was never the lane's."""
    return night.closes <= at(lane_state.since)


def is_due(schedule: Schedule, lane_state: LaneState, night: Night) -> bool:
    """Due: on or after effectiveFrom, closing after the lane joined, after the watermark and,
    when week-keyed, of a week after the last one the lane admitted or coalesced.

    Dates are compared as their "YYYY-MM-DD" texts (fixed width: their order is the dates' order), which
    is how the commission and the state hold them: a tick asks this of many nights."""
    date = _dt.date.isoformat(night.date)
    if date < schedule.commission.effective_from:
        return False
    if joined_after(lane_state, night):
        return False
    if lane_state.watermark is not None and date <= lane_state.watermark.date:
        return False
    return not (night.key != date and lane_state.last_week is not None and night.key <= lane_state.last_week)


def due_night(schedule: Schedule, lane: Lane, lane_state: LaneState, now: DateTime) -> Night | None:
    night = night_containing(schedule.commission, lane, now)
    if night is not None and is_due(schedule, lane_state, night):
        return night
    return None


def next_due(schedule: Schedule, lane: Lane, lane_state: LaneState, now: DateTime) -> Night | None:
    """The next night whose window is still ahead (or open) and would be due."""
    zone = schedule.commission.zone
    start = max(local_date_of(zone, now).toordinal() - 1, _effective_from(schedule))
    after_watermark = _day_after_watermark(lane_state)
    if after_watermark is not None:
        start = max(start, after_watermark)
    for night in nights_from_ordinal(schedule.commission, lane, start):
        if night.closes > now and is_due(schedule, lane_state, night):
            return night
    return None


def missed_before(schedule: Schedule, lane: Lane, lane_state: LaneState, night: Night) -> list[Night]:
    """Every earlier night of the lane that was due and never admitted: they coalesce into `night`."""
    zone = schedule.commission.zone
    day = max(_effective_from(schedule), local_date_of(zone, at(lane_state.since)).toordinal())
    after_watermark = _day_after_watermark(lane_state)
    if after_watermark is not None:
        day = max(day, after_watermark)
    missed: list[Night] = []
    seen: set[str] = {night.id}
    last = min(night.date.toordinal(), day + MAX_COALESCE_DAYS)
    for candidate in nights_from_ordinal(schedule.commission, lane, day, max(0, last - day)):
        if candidate.id not in seen and is_due(schedule, lane_state, candidate):
            missed.append(candidate)
            seen.add(candidate.id)
    return missed


# -- resuming ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResumeCheck:
    night: Night | None  # the night it may resume on now, if any
    until: DateTime | None  # when it may next, or None when no time will do (an owner record)
    reason: str


def _segment_stop(schedule: Schedule, occurrence: Occurrence) -> tuple[DateTime | None, str | None]:
    """What the last segment's end requires before running again: (earliest slot, blocking account)."""
    last = occurrence.segments[-1]
    if occurrence.state == "deferred":
        deferral = occurrence.deferrals[-1]
        earliest = at(deferral.resume_at) if deferral.resume_at else None
        account = deferral.account if deferral.reason == "sign-in-needed" else None
        return earliest, account
    # interrupted: what a deferral of that segment would have enforced
    earliest = None
    if last.window is not None:
        lane = schedule.lane_config(occurrence.lane)
        assert lane is not None  # callers resume only a lane of the current commission
        earliest = first_slot_at_or_after(schedule.commission, lane, at(last.window.until)).slot
    refused = [c for c in occurrence.calls if c.segment == last.n and c.outcome == "sign-in-needed"]
    return earliest, (refused[-1].account if refused else None)


def night_deadline(occurrence: Occurrence, night: Night) -> DateTime | None:
    """The deadline a segment of this night already set: it holds for every segment that night."""
    for segment in occurrence.segments:
        if segment.night == night.date.isoformat():
            return at(segment.deadline)
    return None


def resume_check(schedule: Schedule, occurrence: Occurrence, now: DateTime) -> ResumeCheck:
    lane = schedule.lane_config(occurrence.lane)
    assert lane is not None  # callers resume only a lane of the current commission
    zone = schedule.commission.zone
    earliest, account = _segment_stop(schedule, occurrence)
    if account is not None and sign_in_stopped(schedule.state.account(account)):
        return ResumeCheck(None, None, f"waits for a newer {account} sign-in record")

    def opening(night: Night) -> DateTime | None:
        """The first instant in this night's window it may resume, or None."""
        if earliest is not None and night.slot < earliest:
            return None
        start = max(night.slot, now)
        end = night.closes
        deadline = night_deadline(occurrence, night)
        if deadline is not None:
            end = min(end, deadline)
        return start if start < end else None

    for night in nights_from_ordinal(schedule.commission, lane, local_date_of(zone, now).toordinal() - 1):
        start = opening(night)
        if start is None:
            continue
        if start <= now:
            return ResumeCheck(night, now, "resumes now")
        return ResumeCheck(None, start, "resumes at the lane's slot")
    return ResumeCheck(None, None, "no slot within the search horizon")  # pragma: no cover


# -- the tick ------------------------------------------------------------------------------


def _deadline(lane: Lane, night: Night, now: DateTime) -> DateTime:
    return min(now.add(minutes=lane.deadline_minutes), night.closes)


def admit(schedule: Schedule, lane: Lane, lane_state: LaneState, night: Night, runner: str, now: DateTime) -> Change:
    missed = missed_before(schedule, lane, lane_state, night)
    stamp = instant_text(now)
    version = schedule.version + 1
    occurrence = Occurrence(
        id=night.id,
        lane=lane.lane,
        key=night.key,
        date=night.date.isoformat(),
        slot=instant_text(night.slot),
        state="running",
        admitted_at=stamp,
        coalesced=Coalesced(count=len(missed), first=missed[0].id, last=missed[-1].id) if missed else None,
        segments=[
            SegmentRecord(
                n=1,
                runner=runner,
                kind="admit",
                started_at=stamp,
                night=night.date.isoformat(),
                deadline=instant_text(_deadline(lane, night, now)),
            )
        ],
        transitions={"admit": version},
    )
    weekly = is_weekly(lane.rhythm)
    new_lane = replace(
        lane_state,
        open=occurrence,
        watermark=Watermark(occurrence=night.id, date=night.date.isoformat()),
        last_week=night.key if weekly else lane_state.last_week,
    )
    data: dict[str, Any] = {"occurrence": night.id, "lane": lane.lane, "runner": runner, "at": stamp,
            "deadline": occurrence.segments[0].deadline}
    if occurrence.coalesced is not None:
        data["coalesced"] = occurrence.coalesced.doc()
    return Change(
        event_type="occurrence-admitted",
        event_data=data,
        state=put_lane(schedule.state, new_lane),
        result={"kind": "admitted", "occurrenceId": night.id},
        growing=True,
    )


def resume(schedule: Schedule, occurrence: Occurrence, night: Night, runner: str, now: DateTime) -> Change:
    refuse_backwards(occurrence, now)
    lane = schedule.lane_config(occurrence.lane)
    assert lane is not None  # the tick resumes only a lane of the current commission
    n = len(occurrence.segments) + 1
    deadline = night_deadline(occurrence, night) or _deadline(lane, night, now)
    stamp = instant_text(now)
    segment = SegmentRecord(
        n=n, runner=runner, kind="resume", started_at=stamp, night=night.date.isoformat(),
        deadline=instant_text(deadline),
    )
    updated = replace(
        occurrence,
        state="running",
        segments=[*occurrence.segments, segment],
        transitions={**occurrence.transitions, f"resume/{n}": schedule.version + 1},
    )
    return Change(
        event_type="occurrence-resumed",
        event_data={"occurrence": occurrence.id, "segment": n, "runner": runner, "at": stamp,
                    "deadline": segment.deadline},
        state=put_open(schedule.state, updated),
        result={"kind": "resumed", "occurrenceId": occurrence.id},
        growing=True,
    )


# -- settlement ----------------------------------------------------------------------------


def close_occurrence(schedule: Schedule, occurrence: Occurrence, settlement: Settlement, end_segment: bool,
                     event_extra: dict[str, Any], result: dict[str, Any]) -> Change:
    """Settle: the record leaves `open` for `recent` (two kept, without their calls), and the event
    carries it whole."""
    segments = occurrence.segments
    if end_segment:
        segments = [*segments[:-1], replace(segments[-1], ended=SegmentEnd(how="settled", at=settlement.at))]
    settled = replace(
        occurrence,
        state="settled",
        segments=segments,
        settlement=settlement,
        transitions={**occurrence.transitions, "settle": schedule.version + 1},
    )
    lane_state = schedule.state.lane(occurrence.lane)
    assert lane_state is not None
    in_commission = schedule.lane_config(occurrence.lane) is not None
    kept = settled.without_calls()
    recent = [kept, *lane_state.recent][: SCHEDULE_LIMITS.recent_per_lane] if in_commission else []
    state = put_lane(schedule.state, replace(lane_state, open=None, recent=recent))
    state = prune_ledger(state)
    return Change(
        event_type="occurrence-settled",
        event_data={"occurrence": settled.doc(), **event_extra},
        state=state,
        result=result,
    )


def prune_ledger(state: ScheduleState) -> ScheduleState:
    """Keep the eight latest weeks and any week a call in flight debits."""
    in_flight = {
        call.week
        for lane in state.lanes
        if lane.open is not None
        for call in lane.open.calls
        if call.in_flight
    }
    latest = {week.week for week in state.ledger[-SCHEDULE_LIMITS.ledger_weeks:]}
    kept: list[LedgerWeek] = [week for week in state.ledger if week.week in latest or week.week in in_flight]
    return replace(state, ledger=kept) if len(kept) != len(state.ledger) else state


def settle_segment_limit(schedule: Schedule, occurrence: Occurrence, runner: str, now: DateTime) -> Change:
    refuse_backwards(occurrence, now)
    worked = any(call.performed for call in occurrence.calls)
    settlement = Settlement(
        status="partial" if worked else "unavailable", reason="segment-limit", by=runner, at=instant_text(now)
    )
    return close_occurrence(
        schedule, occurrence, settlement, end_segment=False, event_extra={"reason": "segment-limit"},
        result={"kind": "settled", "occurrenceId": occurrence.id},
    )


def check_settle(occurrence: Occurrence, settled_by: str, status: str) -> None:
    """The settlement rules; raise the refusal's code."""
    segment = occurrence.running_segment
    if segment is not None:
        if segment.runner != settled_by:
            raise ScheduleError("NOT_OWNER", f"{occurrence.id} is running under another runner")
        if occurrence.call_in_flight is not None:
            raise ScheduleError("CALL_OPEN", f"call {occurrence.call_in_flight.k} is in flight; end it first")
        if segment.window is not None and segment.window.stopped:
            raise ScheduleError(
                "RULE", "a usage limit stopped this segment: it defers usage-limit, it does not settle while running"
            )
    if status == "completed":
        if segment is None:
            raise ScheduleError("RULE", "completed needs a running occurrence")
        unknown = [c.k for c in occurrence.calls if c.unknown or c.overage]
        if unknown:
            raise ScheduleError("RULE", f"calls {unknown} are of unknown effect: not completed")
        malformed = [c.k for c in occurrence.calls if c.outcome == "malformed"]
        if malformed:
            raise ScheduleError("RULE", f"calls {malformed} returned malformed output: not completed")
        unsent = unsent_work(occurrence)
        if unsent:
            raise ScheduleError("RULE", f"work {sorted(unsent)} was never sent: not completed")
    if status == "unavailable" and any(call.performed for call in occurrence.calls):
        raise ScheduleError("RULE", "work completed: the occurrence is not unavailable")


def unsent_work(occurrence: Occurrence) -> set[tuple[str, str]]:
    """Work whose only calls were refused before the provider did anything."""
    latest: dict[tuple[str, str], bool] = {}
    for call in occurrence.calls:
        key = (call.task, call.work)
        latest[key] = latest.get(key, False) or not call.unsent
    return {key for key, sent in latest.items() if not sent}


def settle(schedule: Schedule, occurrence: Occurrence, settled_by: str, status: SettlementStatus, reason: str,
           now: DateTime) -> Change:
    check_settle(occurrence, settled_by, status)
    refuse_backwards(occurrence, now)
    settlement = Settlement(status=status, reason=reason, by=settled_by, at=instant_text(now))
    return close_occurrence(
        schedule, occurrence, settlement, end_segment=occurrence.state == "running",
        event_extra={}, result={"occurrenceId": occurrence.id},
    )


# -- deferral and reconciliation -----------------------------------------------------------


def overage_seen(occurrence: Occurrence) -> bool:
    return any(call.overage for call in occurrence.calls)


def lane_accounts(schedule: Schedule, occurrence: Occurrence) -> list[Account]:
    lane = schedule.lane_config(occurrence.lane)
    names = {task.account for task in lane.tasks} if lane is not None else set()
    names |= {call.account for call in occurrence.calls}
    return [name for name in ("claude", "chatgpt") if name in names]


def defer(schedule: Schedule, occurrence: Occurrence, runner: str, reason: DeferralReason, bound: int | None,
          now: DateTime) -> Change:
    segment = occurrence.running_segment
    assert segment is not None
    if segment.runner != runner:
        raise ScheduleError("NOT_OWNER", f"segment {segment.n} of {occurrence.id} runs under another runner")
    if occurrence.call_in_flight is not None:
        raise ScheduleError("CALL_OPEN", f"call {occurrence.call_in_flight.k} is in flight; end it first")
    if overage_seen(occurrence):
        raise ScheduleError("RULE", "this occurrence saw paid overage: it cannot defer")
    if (bound is not None) != (reason == "budget-exhausted"):
        raise invalid("bound: a budget-exhausted deferral names the bound that did not fit, no other does")
    refuse_backwards(occurrence, now)
    lane = schedule.lane_config(occurrence.lane)
    if lane is None:
        raise ScheduleError("NOT_A_LANE", f"{occurrence.lane} is not a lane of the current commission")
    window_shut = segment.window is not None and (segment.window.stopped or now < at(segment.window.until))
    if window_shut and reason != "usage-limit":
        raise ScheduleError("RULE", "this segment's usage window is closed: it defers usage-limit")
    account: Account | None = None
    resume_at: DateTime | None = None
    week: str | None = None
    if reason == "usage-limit":
        resets = [at(segment.window.until)] if window_shut and segment.window is not None else []
        for name in lane_accounts(schedule, occurrence):
            state = schedule.state.account(name)
            if window_closed(state, now):
                resets.append(at(state.window_closed_until))  # type: ignore[arg-type]
        if not resets:
            raise ScheduleError("RULE", "no usage window is closed for this occurrence's accounts")
        resume_at = first_slot_at_or_after(schedule.commission, lane, max(resets)).slot
    elif reason == "budget-exhausted":
        week = current_week(schedule, now)
        left = remaining(schedule, week)
        if bound is not None and bound <= left:
            raise ScheduleError("RULE", f"a bound of {bound} fits the {left} tokens left in {week}")
        next_monday = monday_of_week(week).add(days=7)
        resume_at = next(n for n in nights_from(schedule.commission, lane, next_monday)).slot
    elif reason == "sign-in-needed":
        refused = [c for c in occurrence.calls if c.segment == segment.n and c.outcome == "sign-in-needed"]
        if refused:
            account = refused[-1].account
        else:
            stopped = [n for n in lane_accounts(schedule, occurrence) if sign_in_stopped(schedule.state.account(n))]
            if not stopped:
                raise ScheduleError("RULE", "no sign-in was refused on this occurrence's accounts")
            account = stopped[0]
    else:  # volume-unmounted, logged-out: the next slot
        resume_at = first_slot_at_or_after(schedule.commission, lane, now, strictly=True).slot
    stamp = instant_text(now)
    deferral = Deferral(
        segment=segment.n, runner=runner, reason=reason, at=stamp, bound=bound, account=account,
        resume_at=instant_text(resume_at) if resume_at else None, week=week,
    )
    updated = replace(
        occurrence,
        state="deferred",
        segments=[*occurrence.segments[:-1], replace(segment, ended=SegmentEnd(how="deferred", at=stamp))],
        deferrals=[*occurrence.deferrals, deferral],
        transitions={**occurrence.transitions, f"defer/{segment.n}": schedule.version + 1},
    )
    return Change(
        event_type="occurrence-deferred",
        event_data={"occurrence": occurrence.id, "deferral": deferral.doc()},
        state=put_open(schedule.state, updated),
        result={"occurrenceId": occurrence.id},
    )


def reconcile(schedule: Schedule, occurrence: Occurrence, runner: str, confirmed_by: str, evidence: str,
              now: DateTime) -> Change:
    segment = occurrence.running_segment
    assert segment is not None
    if segment.runner != runner:
        raise ScheduleError("NOT_OWNER", f"segment {segment.n} of {occurrence.id} runs under {segment.runner!r}")
    refuse_backwards(occurrence, now)
    stamp = instant_text(now)
    calls = [
        replace(call, ended_at=stamp, outcome="lost", unknown=True) if call.in_flight else call
        for call in occurrence.calls
    ]
    reconciliation = Reconciliation(
        segment=segment.n, runner=runner, confirmed_by=confirmed_by, evidence=evidence, at=stamp
    )
    updated = replace(
        occurrence,
        state="interrupted",
        calls=calls,
        segments=[*occurrence.segments[:-1], replace(segment, ended=SegmentEnd(how="reconciled", at=stamp))],
        reconciliations=[*occurrence.reconciliations, reconciliation],
        transitions={**occurrence.transitions, f"reconcile/{segment.n}": schedule.version + 1},
    )
    lost = [call.k for call in occurrence.calls if call.in_flight]
    return Change(
        event_type="occurrence-reconciled",
        event_data={"occurrence": occurrence.id, "reconciliation": reconciliation.doc(), "lostCalls": lost},
        state=put_open(schedule.state, updated),
        result={"occurrenceId": occurrence.id},
    )
