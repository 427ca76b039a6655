"""Plans, states and instants in the owner's words.

The engine answers in actions and instants (`resume`, 2026-12-14T02:00Z); the
owner reads "resumes Monday 02:00 after the usage reset". Everything here is a
pure function of what the engine returned, the clock reading and the zone.
"""

from __future__ import annotations

from datetime import datetime
from typing import overload

import pendulum
from pendulum import DateTime

from factory_schedule.core import Call, Deferral, LanePlan, Occurrence, parse_instant

DEFERRAL_WORDS = {
    "usage-limit": "after the usage reset",
    "budget-exhausted": "when the week's ceiling allows",
    "sign-in-needed": "(the new sign-in record is in)",
    "volume-unmounted": "after the volume was unmounted",
    "logged-out": "after the log-out",
}


@overload
def instant(value: datetime | str) -> DateTime: ...
@overload
def instant(value: datetime | str | None) -> DateTime | None: ...


def instant(value: datetime | str | None) -> DateTime | None:
    if value is None:
        return None
    if isinstance(value, str):
        return parse_instant(value)
    return pendulum.instance(value).in_timezone("UTC")


def clock_time(value: datetime | str | None, zone: str) -> str:
    moment = instant(value)
    return "—" if moment is None else moment.in_timezone(zone).format("HH:mm")


def when(value: datetime | str | None, now: DateTime, zone: str) -> str:
    """A local time as the owner says it: "02:20", "tomorrow 02:00", "Monday 02:00", "Mon 21 Dec 02:00"."""
    moment = instant(value)
    if moment is None:
        return "—"
    local = moment.in_timezone(zone)
    today = now.in_timezone(zone).date()
    days = (local.date() - today).days
    hhmm = local.format("HH:mm")
    if days == 0:
        return hhmm
    if days == 1:
        return f"tomorrow {hhmm}"
    if days == -1:
        return f"yesterday {hhmm}"
    if 1 < days < 7:
        return f"{local.format('dddd')} {hhmm}"
    return local.format("ddd D MMM HH:mm")


def at_when(value: datetime | str | None, now: DateTime, zone: str) -> str:
    """`when`, with "at" before a bare time of today: "at 02:20", "Thursday 02:40"."""
    said = when(value, now, zone)
    return f"at {said}" if ":" in said and " " not in said else said


IN_THE_FUTURE = "in the future"  # the age of a time after now (a clock behind the journal's)


def age(value: datetime | str | None, now: DateTime) -> str:
    """How long ago, coarsely: "12 min", "5 h", "3 d"."""
    moment = instant(value)
    if moment is None:
        return "—"
    minutes = int((now - moment).total_seconds() // 60)
    if minutes < 0:
        return IN_THE_FUTURE
    if minutes < 120:
        return f"{minutes} min"
    hours = minutes // 60
    if hours < 48:
        return f"{hours} h"
    return f"{hours // 24} d"


def ago(value: datetime | str | None, now: DateTime) -> str:
    """How long ago, in a sentence: "12 min ago", or "in the future" for a time after now (a clock behind the
    journal's), never "in the future ago"."""
    words = age(value, now)
    return words if words in ("—", IN_THE_FUTURE) else f"{words} ago"


def tokens(value: int | None) -> str:
    return "—" if value is None else f"{value:,}".replace(",", " ")


def last_deferral(occurrence: Occurrence | None) -> Deferral | None:
    if occurrence is None or not occurrence.deferrals:
        return None
    return occurrence.deferrals[-1]


def running_words(occurrence: Occurrence, zone: str) -> str:
    segment = occurrence.segments[-1]
    return (
        f"running, runner {segment.runner} since {clock_time(segment.started_at, zone)}, "
        f"deadline {clock_time(segment.deadline, zone)}"
    )


def _why_waiting(occurrence: Occurrence | None) -> str:
    """The reason an open, not running occurrence is held, for a resume or wait plan."""
    if occurrence is None:
        return ""
    if occurrence.state == "interrupted":
        return "after the confirmed interruption"
    deferral = last_deferral(occurrence)
    if deferral is None:
        return ""
    return DEFERRAL_WORDS.get(deferral.reason, f"after {deferral.reason}")


def plan_words(plan: LanePlan | None, occurrence: Occurrence | None, now: DateTime, zone: str) -> str:
    """The lane's plan as a sentence: what happens next and when."""
    if plan is None:
        return "not in the current commission"
    action = plan.action
    moment = plan.at
    if action == "running" or (occurrence is not None and occurrence.state == "running"):
        return running_words(occurrence, zone) if occurrence is not None else "running"
    if action == "admit":
        if moment is None:
            return "admits when due"
        return "admits now" if instant(moment) <= now else f"admits {at_when(moment, now, zone)}"
    if action == "resume":
        why = _why_waiting(occurrence)
        if moment is None:
            return _waits_for(occurrence)
        head = "resumes now" if instant(moment) <= now else f"resumes {at_when(moment, now, zone)}"
        return f"{head} {why}".strip()
    if action == "settle":
        if moment is None or instant(moment) <= now:
            return "settles at the next tick"
        return f"settles {at_when(moment, now, zone)}"
    if moment is None:
        return _waits_for(occurrence) if occurrence is not None else "nothing due"
    return f"nothing due until {when(moment, now, zone)}"


def call_brief(call: Call, zone: str) -> str:
    return f"{call.task} #{call.k} since {clock_time(call.admitted_at, zone)}"


def _waits_for(occurrence: Occurrence | None) -> str:
    deferral = last_deferral(occurrence)
    if deferral is not None and deferral.reason == "sign-in-needed":
        return "waits for a sign-in record"
    if occurrence is not None and occurrence.state == "interrupted":
        return "waits: interrupted, no slot left"
    if deferral is not None:
        return f"waits ({deferral.reason})"
    return "waits"


def call_words(call: Call, zone: str) -> str:
    return (
        f"call {call.k} {call.task} ({call.work}) on {call.account}, "
        f"since {clock_time(call.admitted_at, zone)}, bound {tokens(call.bound)}"
    )


def state_words(occurrence: Occurrence | None) -> str:
    if occurrence is None:
        return "—"
    if occurrence.state == "settled" and occurrence.settlement is not None:
        return f"settled {occurrence.settlement.status}"
    if occurrence.state == "deferred":
        deferral = last_deferral(occurrence)
        return f"deferred ({deferral.reason})" if deferral is not None else "deferred"
    return occurrence.state
