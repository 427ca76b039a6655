"""Provider calls: admitted before contact against the week's ceiling, reported after.

A refusal records nothing. Only a fresh admission licenses a contact; the journal
cannot tell a call never dispatched from one whose answer was lost, so a call of
uncertain dispatch ends `lost`, stays debited at its bound and is never sent again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pendulum import DateTime
from pydantic import BaseModel, ConfigDict, Field, StrictInt, TypeAdapter, ValidationError

from .accounts import later, read_observation, record_unverified, sign_in_stopped, window_closed
from .change import Change, put_open, refuse_backwards, replace
from .commission import CommissionTask
from .errors import invalid
from .limits import SCHEDULE_LIMITS
from .refusal_words import refusal_in_words
from .schedule_checks import Schedule
from .schedule_document import (
    Call,
    LedgerWeek,
    Occurrence,
    ReportedObservation,
    ScheduleState,
    SegmentWindow,
    at,
    instant_text,
)
from .zones import iso_week_of, local_date_of

Tokens = Annotated[StrictInt, Field(ge=0, le=SCHEDULE_LIMITS.max_usage_tokens)]


class _CallReport(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class ResultReport(_CallReport):
    kind: Literal["result"]
    tokens: Tokens
    output: Literal["ok", "malformed"]
    observation: ReportedObservation | None = None


class UsageLimitReport(_CallReport):
    kind: Literal["usage-limit"]
    tokens: Tokens
    observation: ReportedObservation


class SignInReport(_CallReport):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, populate_by_name=True)
    kind: Literal["sign-in-needed"]
    tokens: Tokens
    http_status: Literal[401, 403] = Field(alias="httpStatus")
    observation: ReportedObservation | None = None


class UnreachableReport(_CallReport):
    """The provider could not be reached: the runner's evidence (a refused connection, a failed name lookup)
    shows that no request left the machine, so the work was not sent and uses nothing."""

    kind: Literal["unreachable"]


class LostReport(_CallReport):
    kind: Literal["lost"]
    observation: ReportedObservation | None = None


Report = Annotated[ResultReport | UsageLimitReport | SignInReport | UnreachableReport | LostReport,
                   Field(discriminator="kind")]
_REPORT = TypeAdapter(Report)


def parse_report(report: Any) -> ResultReport | UsageLimitReport | SignInReport | UnreachableReport | LostReport:
    try:
        return _REPORT.validate_python(report)
    except ValidationError as error:
        raise invalid(refusal_in_words(error, {}, root="report", limit=1)) from None


@dataclass(frozen=True)
class RefusalReason:
    reason: str
    detail: str


def current_week(schedule: Schedule, now: DateTime) -> str:
    return iso_week_of(local_date_of(schedule.commission.zone, now))


def remaining(schedule: Schedule, week: str) -> int:
    entry = schedule.state.week(week)
    if entry is None:
        return schedule.commission.weekly_tokens
    return entry.ceiling - entry.debited


def refusal(schedule: Schedule, occurrence: Occurrence, task: CommissionTask, work: str, bound: int, sign_in: str,
            now: DateTime) -> RefusalReason | None:
    """The first rule that refuses this call, in the order the "Calls" rule lists; None admits it."""
    segment = occurrence.running_segment
    assert segment is not None
    window = segment.window
    if window is not None and (window.stopped or now < at(window.until)):
        return RefusalReason("limited", f"this segment's usage window is closed until {window.until}")
    if occurrence.call_in_flight is not None:
        return RefusalReason("call-open", f"call {occurrence.call_in_flight.k} is still in flight")
    if now >= at(segment.deadline):
        return RefusalReason("deadline", f"the segment's deadline {segment.deadline} has passed")
    if bound > task.call_bound:
        return RefusalReason("call-bound", f"bound {bound} is above the task's call bound {task.call_bound}")
    used = [c for c in occurrence.calls if c.uses_allowance]
    if sum(1 for c in used if c.task == task.task) >= task.max_calls:
        return RefusalReason("call-bound", f"task {task.task} has used its {task.max_calls} calls")
    if len(used) >= SCHEDULE_LIMITS.max_calls_per_occurrence:
        return RefusalReason("call-bound",
                             f"the occurrence has used its {SCHEDULE_LIMITS.max_calls_per_occurrence} calls")
    same_work = [c for c in occurrence.calls if c.task == task.task and c.work == work]
    if any(c.unknown or c.overage for c in same_work):
        return RefusalReason("unknown-effect", f"work {work!r} went out with unknown effect: it is never sent again")
    if any(c.performed for c in same_work):
        return RefusalReason("duplicate-work", f"work {work!r} of task {task.task} was already performed")
    account = schedule.state.account(task.account)
    if window_closed(account, now):
        return RefusalReason("limited", f"{task.account}'s usage window is closed until {account.window_closed_until}")
    if sign_in_stopped(account):
        return RefusalReason("sign-in-needed", f"{task.account} refused its sign-in; the owner must record a newer one")
    why = record_unverified(account, sign_in, now, schedule.commission.record_max_age_days)
    if why is not None:
        return RefusalReason("overage-unverified", why)
    week = current_week(schedule, now)
    left = remaining(schedule, week)
    if bound > left:
        return RefusalReason("budget-exhausted", f"bound {bound} does not fit the {left} tokens left in {week}")
    return None


def _ledger_with(state: ScheduleState, week: str, ceiling: int, delta: int) -> list[LedgerWeek]:
    """The ledger with `delta` more debited in `week` (a new entry at `ceiling` when the week has none)."""
    entry = state.week(week)
    if entry is None:
        return sorted([*state.ledger, LedgerWeek(week=week, ceiling=ceiling, debited=delta)], key=lambda w: w.week)
    return [replace(w, debited=w.debited + delta) if w.week == week else w for w in state.ledger]


def admit(schedule: Schedule, occurrence: Occurrence, runner: str, task: CommissionTask, work: str, bound: int,
          sign_in: str, attempt: int, now: DateTime) -> Change:
    refuse_backwards(occurrence, now)
    segment = occurrence.running_segment
    assert segment is not None
    k = len(occurrence.calls) + 1
    week = current_week(schedule, now)
    stamp = instant_text(now)
    call = Call(
        k=k, segment=segment.n, task=task.task, work=work, bound=bound, attempt=attempt,
        account=task.account, week=week, admitted_at=stamp, debit=bound,
    )
    updated = replace(
        occurrence,
        calls=[*occurrence.calls, call],
        transitions={**occurrence.transitions, f"call/{k}": schedule.version + 1},
    )
    ledger = _ledger_with(schedule.state, week, schedule.commission.weekly_tokens, bound)
    state = put_open(schedule.state, updated, ledger=ledger)
    return Change(
        event_type="call-admitted",
        event_data={"occurrence": occurrence.id, "call": k, "runner": runner, "task": task.task, "work": work,
                    "bound": bound, "account": task.account, "signIn": sign_in, "week": week, "at": stamp},
        state=state,
        result={"occurrenceId": occurrence.id, "call": k, "week": week},
        growing=True,
    )


def end(schedule: Schedule, occurrence: Occurrence, call: Call, report: Any, now: DateTime) -> Change:
    """Record what became of a call: its debit, its effect, and any stop it reports."""
    parsed = parse_report(report)
    refuse_backwards(occurrence, now)
    observation = None if isinstance(parsed, UnreachableReport) else parsed.observation
    reading = read_observation(observation, now)
    stamp = instant_text(now)
    tokens: int | None
    if isinstance(parsed, LostReport):
        outcome, tokens, debit, unknown, unsent = "lost", None, call.bound, True, False
    elif isinstance(parsed, UnreachableReport):
        outcome, tokens, debit, unknown, unsent = "unreachable", 0, 0, False, True
    else:
        tokens = parsed.tokens
        if isinstance(parsed, ResultReport):
            outcome, unknown, unsent = parsed.output, False, False
        else:
            outcome = parsed.kind
            unknown, unsent = tokens > 0, tokens == 0
        debit = tokens
    if isinstance(parsed, UsageLimitReport) and not reading.closes and not reading.overage:
        raise invalid("observation.status: a usage-limit report carries a closed window")
    overage = reading.overage
    ended = replace(
        call, ended_at=stamp, outcome=outcome, tokens=tokens, debit=debit, unknown=unknown or overage,
        unsent=unsent and not overage, overage=overage,
        over_bound=tokens is not None and tokens > call.bound,
    )
    if ended.overage and ended.unsent:  # pragma: no cover - excluded above
        raise AssertionError
    segment = occurrence.segments[-1]
    stopped_by_limit = isinstance(parsed, UsageLimitReport) or (isinstance(parsed, LostReport) and reading.closes)
    if reading.closes and reading.reset is not None:
        until = reading.reset
        if segment.window is not None and at(segment.window.until) > until:
            until = at(segment.window.until)
        stopped = stopped_by_limit or (segment.window is not None and segment.window.stopped)
        segment = replace(segment, window=SegmentWindow(until=instant_text(until), observed_at=stamp, stopped=stopped))
    account = schedule.state.account(call.account)
    if reading.closes and reading.reset is not None:
        account = replace(account, window_closed_until=later(account.window_closed_until, reading.reset))
    if isinstance(parsed, SignInReport):
        account = replace(account, sign_in_refused_at=later(account.sign_in_refused_at, now))
    if overage:
        account = replace(account, overage_observed_at=later(account.overage_observed_at, now))
    accounts = [account if a.account == account.account else a for a in schedule.state.accounts]
    updated = replace(
        occurrence,
        calls=[ended if c.k == call.k else c for c in occurrence.calls],
        segments=[*occurrence.segments[:-1], segment],
        transitions={**occurrence.transitions, f"call/{call.k}/end": schedule.version + 1},
    )
    ledger = _ledger_with(schedule.state, call.week, schedule.commission.weekly_tokens, debit - call.bound)
    state = put_open(schedule.state, updated, accounts=accounts, ledger=ledger)
    return Change(
        event_type="call-ended",
        event_data={"occurrence": occurrence.id, "call": call.k, "outcome": outcome, "debit": debit,
                    "unknown": ended.unknown, "overage": overage, "at": stamp,
                    **({"observation": observation.kept_doc()} if observation else {})},
        state=state,
        result={"occurrenceId": occurrence.id, "call": call.k, "outcome": outcome, "debit": debit},
    )
