"""The stored schedule document, as frozen pydantic models.

The journal keeps one state document for `discovery/schedule`. Every read and
every decision parses it through these models (extra keys forbidden, cross-field
rules as validators), so a defect anywhere is CORRUPT before any rule runs, and
a decision refuses to store a document its own reader would refuse.

Instants are UTC strings with millisecond precision (`2026-12-07T02:00:00.000Z`):
canonical JSON carries no floats, and a fixed form keeps digests stable.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Annotated, Any, Literal, get_args

import pendulum
from pendulum import DateTime
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationInfo,
    model_validator,
)
from pydantic.alias_generators import to_camel

from .limits import SCHEDULE_LIMITS, SCHEDULE_PROTOCOL

_INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_WEEK = re.compile(r"^\d{4}-W\d{2}$")


def _check_instant(value: str) -> str:
    if not _INSTANT.match(value):
        raise ValueError(f"{value!r} is not an instant (YYYY-MM-DDTHH:MM:SS.sssZ)")
    try:
        _dt.datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a real instant") from None
    return value


def _check_date(value: str) -> str:
    if not _DATE.match(value):
        raise ValueError(f"{value!r} is not a date (YYYY-MM-DD)")
    try:
        pendulum.Date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a real date") from None
    return value


def _check_week(value: str) -> str:
    if not _WEEK.match(value):
        raise ValueError(f"{value!r} is not an ISO week (YYYY-Www)")
    return value


Instant = Annotated[str, AfterValidator(_check_instant)]
LocalDate = Annotated[str, AfterValidator(_check_date)]
Week = Annotated[str, AfterValidator(_check_week)]
Count = Annotated[StrictInt, Field(ge=0)]
Positive = Annotated[StrictInt, Field(ge=1)]
Tokens = Annotated[StrictInt, Field(ge=0, le=SCHEDULE_LIMITS.max_usage_tokens)]
Token = Annotated[str, Field(min_length=1, max_length=200)]

Account = Literal["claude", "chatgpt"]
ACCOUNTS: tuple[Account, ...] = ("claude", "chatgpt")
DeferralReason = Literal["usage-limit", "budget-exhausted", "sign-in-needed", "volume-unmounted", "logged-out"]
DEFERRAL_REASONS: tuple[str, ...] = get_args(DeferralReason)
SettlementStatus = Literal["completed", "partial", "deferred", "unavailable"]
SETTLEMENT_STATUSES: tuple[str, ...] = get_args(SettlementStatus)
CallOutcome = Literal["ok", "malformed", "usage-limit", "sign-in-needed", "unreachable", "lost"]


def instant_text(instant: _dt.datetime) -> str:
    """The stored form of an instant (UTC, milliseconds, `Z`); a naive one is read as UTC.

    Formatted field by field: pendulum's `format` would take most of a decision's formatting time. An
    instant in UTC (every one the engine holds) is read as it is; any other goes through pendulum, whose
    reading of a wall time a zone skips differs from the standard library's."""
    utc = instant
    # The engine's clock reads in UTC. A zone's offset of zero is not enough: a wall time it repeats (fold 1)
    # may read as zero here and as the earlier offset in pendulum.
    if instant.tzinfo is not pendulum.UTC and instant.tzinfo is not _dt.UTC:
        utc = pendulum.instance(instant).in_timezone("UTC")
    return (f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}"
            f".{utc.microsecond // 1000:03d}Z")


def at(text: str) -> DateTime:
    """Parse a stored instant back into a UTC DateTime (the stored form is always UTC)."""
    parsed = _dt.datetime.fromisoformat(text)
    if parsed.tzinfo is _dt.UTC:  # the stored form: built directly, not through pendulum's general `instance`
        return DateTime(parsed.year, parsed.month, parsed.day, parsed.hour, parsed.minute, parsed.second,
                        parsed.microsecond, tzinfo=pendulum.UTC)
    return pendulum.instance(parsed, tz=pendulum.UTC)


# The validation context's key for the occurrences a validation is handed that its caller holds as checked (by
# `id`): each passed its own rules when it was validated, and is frozen. Pydantic passes an instance through
# without validating its fields again, but runs its model's rules (`model_validator(mode="after")`) on it every
# time; an occurrence's rules are a lane's costliest, so one named here keeps its check, and every other is put
# through its rules. (A call's or a deferral's rules cost about what asking would.)
CHECKED_INSTANCES = "checkedInstances"


def _checked_before(model: BaseModel, info: ValidationInfo) -> bool:
    """Whether this validation's caller names `model` (the very object) as already checked."""
    context = info.context
    return isinstance(context, dict) and id(model) in context.get(CHECKED_INSTANCES, ())


class ScheduleModel(BaseModel):
    """A stored sub-document: frozen, camelCase on disk, nothing unknown allowed."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, alias_generator=to_camel, strict=True
    )

    def doc(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json", exclude_defaults=True)


class Observation(ScheduleModel):
    """The fields of a usage-window event the schedule reads. A report may carry more
    (`ReportedObservation`); only these go into the call-ended event. The state keeps only their
    effect (the segment's window, the account's stops), so no report can grow it."""

    status: Annotated[str, Field(min_length=1, max_length=64)]
    rate_limit_type: Annotated[str, Field(max_length=64)] | None = None
    resets_at: StrictInt | None = None
    is_using_overage: StrictBool | None = None


_OBSERVATION_FIELDS: set[str] = set(Observation.model_fields)  # never changed


class ReportedObservation(Observation):
    """A usage-window event as the provider sent it: unknown fields are accepted and not kept."""

    model_config = ConfigDict(
        frozen=True, extra="ignore", populate_by_name=True, alias_generator=to_camel, strict=True
    )

    def kept_doc(self) -> dict[str, Any]:
        """The observation as the call-ended event keeps it: `Observation`'s fields, dumped as it dumps them."""
        return self.model_dump(by_alias=True, mode="json", exclude_defaults=True, include=_OBSERVATION_FIELDS)


class SegmentWindow(ScheduleModel):
    """This segment's usage window closed: by a refusal (`stopped`) or a performed call's observation."""

    until: Instant
    observed_at: Instant
    stopped: StrictBool


class SegmentEnd(ScheduleModel):
    how: Literal["deferred", "settled", "reconciled"]
    at: Instant


class SegmentRecord(ScheduleModel):
    n: Annotated[StrictInt, Field(ge=1, le=SCHEDULE_LIMITS.max_segments)]
    runner: Token
    kind: Literal["admit", "resume"]
    started_at: Instant
    night: LocalDate
    deadline: Instant
    window: SegmentWindow | None = None
    ended: SegmentEnd | None = None


class Call(ScheduleModel):
    k: Positive
    segment: Annotated[StrictInt, Field(ge=1, le=SCHEDULE_LIMITS.max_segments)]
    task: Token
    work: Token
    bound: Annotated[StrictInt, Field(ge=1, le=SCHEDULE_LIMITS.max_call_bound_tokens)]
    attempt: Positive
    account: Account
    week: Week
    admitted_at: Instant
    debit: Tokens
    ended_at: Instant | None = None
    outcome: CallOutcome | None = None
    tokens: Tokens | None = None
    unknown: StrictBool = False
    unsent: StrictBool = False
    overage: StrictBool = False
    over_bound: StrictBool = False

    @model_validator(mode="after")
    def _consistent(self) -> Call:
        if self.ended_at is None:
            if self.outcome is not None or self.tokens is not None or self.unknown or self.unsent:
                raise ValueError("a call in flight has no outcome")
            if self.debit != self.bound:
                raise ValueError("debit: a call in flight is debited at its bound")
            return self
        if self.outcome is None:
            raise ValueError("outcome: an ended call has one")
        if self.unsent and self.unknown:
            raise ValueError("unsent: a call cannot be both unsent and of unknown effect")
        if self.unsent and (self.tokens != 0 or self.debit != 0):
            raise ValueError("debit: unsent work uses nothing")
        if self.outcome == "lost" and (self.debit != self.bound or not self.unknown):
            raise ValueError("debit: a lost call stays debited at its bound, of unknown effect")
        if self.outcome != "lost" and not self.unsent and self.debit != self.tokens:
            raise ValueError("debit: a call with known usage is debited what it used")
        if self.over_bound != (self.tokens is not None and self.tokens > self.bound):
            raise ValueError("overBound: flags exactly a usage above the bound")
        return self

    @property
    def in_flight(self) -> bool:
        return self.ended_at is None

    @property
    def performed(self) -> bool:
        """Work the provider did and reported: it is never sent again."""
        return self.outcome in ("ok", "malformed")

    @property
    def uses_allowance(self) -> bool:
        return not self.unsent


class Deferral(ScheduleModel):
    segment: Annotated[StrictInt, Field(ge=1, le=SCHEDULE_LIMITS.max_segments)]
    runner: Token
    reason: DeferralReason
    at: Instant
    bound: Positive | None = None
    account: Account | None = None
    resume_at: Instant | None = None
    week: Week | None = None

    @model_validator(mode="after")
    def _bound_only_for_budget(self) -> Deferral:
        if (self.bound is not None) != (self.reason == "budget-exhausted"):
            raise ValueError("bound: only a budget-exhausted deferral names one, and it must")
        return self


class Reconciliation(ScheduleModel):
    segment: Annotated[StrictInt, Field(ge=1, le=SCHEDULE_LIMITS.max_segments)]
    runner: Token
    confirmed_by: Token
    evidence: Annotated[str, Field(min_length=1, max_length=500)]
    at: Instant


class Coalesced(ScheduleModel):
    count: Positive
    first: Token
    last: Token


class Settlement(ScheduleModel):
    status: SettlementStatus
    reason: Annotated[str, Field(min_length=1, max_length=200)]
    by: Token
    at: Instant


class Elided(ScheduleModel):
    """What a settled record in `recent` keeps of its calls: the whole calls are in its settlement event.

    Settled records are kept for the dashboard and for replies to late retries; their calls were
    most of the state's bytes, and nothing decides on them any more."""

    calls: Annotated[StrictInt, Field(ge=1, le=64)]
    debits: Annotated[dict[Week, Annotated[StrictInt, Field(ge=0)]], Field(min_length=1)]  # sums, as the ledger's


class Occurrence(ScheduleModel):
    id: Token
    lane: Token
    key: Token
    date: LocalDate
    slot: Instant
    state: Literal["running", "deferred", "interrupted", "settled"]
    admitted_at: Instant
    coalesced: Coalesced | None = None
    segments: Annotated[list[SegmentRecord], Field(min_length=1, max_length=SCHEDULE_LIMITS.max_segments)]
    calls: Annotated[list[Call], Field(max_length=64)] = []
    deferrals: list[Deferral] = []
    reconciliations: list[Reconciliation] = []
    settlement: Settlement | None = None
    elided: Elided | None = None
    transitions: dict[str, StrictInt]

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> Occurrence:
        if _checked_before(self, info):
            return self
        for index, segment in enumerate(self.segments, start=1):
            if segment.n != index:
                raise ValueError(f"segments[{index - 1}].n: segments are numbered in order")
            if index < len(self.segments) and segment.ended is None:
                raise ValueError(f"segments[{index - 1}].ended: only the last segment may still run")
        for index, call in enumerate(self.calls, start=1):
            if call.k != index:
                raise ValueError(f"calls[{index - 1}].k: calls are numbered in order")
            if call.segment > len(self.segments):
                raise ValueError(f"calls[{index - 1}].segment: names a segment that never started")
        in_flight = [call for call in self.calls if call.in_flight]
        if len(in_flight) > 1:
            raise ValueError("calls: at most one call is in flight")
        last = self.segments[-1]
        if self.state == "running":
            if last.ended is not None or self.settlement is not None:
                raise ValueError("state: a running occurrence has a running segment and no settlement")
        else:
            if last.ended is None:
                raise ValueError("state: only a running occurrence has a running segment")
            if in_flight:
                raise ValueError("calls: a call in flight needs a running segment")
        if (self.state == "settled") != (self.settlement is not None):
            raise ValueError("settlement: recorded exactly when the occurrence is settled")
        if self.elided is not None and (self.state != "settled" or self.calls):
            raise ValueError("elided: only a settled record's calls are elided, and then none are kept")
        if in_flight and in_flight[0].segment != last.n:
            raise ValueError("calls: the call in flight belongs to the running segment")
        previous = 0
        for deferral in self.deferrals:
            if deferral.segment <= previous:
                raise ValueError("deferrals: one per segment, in order")
            previous = deferral.segment
            if deferral.segment > len(self.segments) or self.segments[deferral.segment - 1].ended is None:
                raise ValueError("deferrals: a deferral ends its segment")
        previous = 0
        for reconciliation in self.reconciliations:
            if reconciliation.segment <= previous:
                raise ValueError("reconciliations: one per segment, in order")
            previous = reconciliation.segment
            if reconciliation.segment > len(self.segments):
                raise ValueError("reconciliations: names a segment that never started")
        if self.state == "deferred" and (not self.deferrals or self.deferrals[-1].segment != last.n):
            raise ValueError("deferrals: a deferred occurrence's last segment was deferred")
        if self.state == "interrupted" and (not self.reconciliations or self.reconciliations[-1].segment != last.n):
            raise ValueError("reconciliations: an interrupted occurrence's last segment was reconciled")
        if "admit" not in self.transitions:
            raise ValueError("transitions: the admission is recorded")
        versions = list(self.transitions.values())
        if any(v < 1 for v in versions):
            raise ValueError("transitions: versions are positive")
        return self

    @property
    def running_segment(self) -> SegmentRecord | None:
        return self.segments[-1] if self.state == "running" else None

    @property
    def call_count(self) -> int:
        return self.elided.calls if self.elided is not None else len(self.calls)

    @property
    def debited(self) -> int:
        """Tokens its calls debit, kept or elided."""
        if self.elided is not None:
            return sum(self.elided.debits.values())
        return sum(call.debit for call in self.calls)

    def without_calls(self) -> Occurrence:
        """The record `recent` keeps of a settled occurrence: its calls reduced to their count and debits."""
        if self.state != "settled" or not self.calls:
            return self
        debits: dict[str, int] = {}
        for call in self.calls:
            debits[call.week] = debits.get(call.week, 0) + call.debit
        return self.model_copy(update={"calls": [], "elided": Elided(calls=len(self.calls), debits=debits)})

    def runner_of(self, call: Call) -> str:
        """A call belongs to the runner of the segment that admitted it."""
        return self.segments[call.segment - 1].runner

    @property
    def call_in_flight(self) -> Call | None:
        return next((call for call in self.calls if call.in_flight), None)


class Watermark(ScheduleModel):
    occurrence: Token
    date: LocalDate


class LaneState(ScheduleModel):
    lane: Token
    since: Instant
    watermark: Watermark | None = None
    last_week: Week | None = None
    open: Occurrence | None = None
    recent: Annotated[list[Occurrence], Field(max_length=SCHEDULE_LIMITS.recent_per_lane)] = []

    @model_validator(mode="after")
    def _consistent(self) -> LaneState:
        if self.open is not None:
            if self.open.state == "settled":
                raise ValueError(f"{self.lane}.open: the open occurrence is not settled")
            if self.open.lane != self.lane:
                raise ValueError(f"{self.lane}.open: belongs to another lane")
        for occurrence in self.recent:
            if occurrence.state != "settled":
                raise ValueError(f"{self.lane}.recent: holds settled occurrences only")
            if occurrence.lane != self.lane:
                raise ValueError(f"{self.lane}.recent: belongs to another lane")
        admitted = [o for o in (self.open, *self.recent) if o is not None]
        if admitted and self.watermark is None:
            raise ValueError(f"{self.lane}.watermark: a lane that admitted has one")
        if self.watermark is not None and admitted:
            latest = max(admitted, key=lambda o: o.date)
            if latest.id != self.watermark.occurrence or latest.date != self.watermark.date:
                raise ValueError(f"{self.lane}.watermark: is not the lane's latest admission")
        return self


class LedgerWeek(ScheduleModel):
    week: Week
    ceiling: Annotated[StrictInt, Field(ge=1, le=SCHEDULE_LIMITS.max_weekly_tokens)]
    debited: Annotated[StrictInt, Field(ge=0)]


class AccountRecord(ScheduleModel):
    sequence: Positive
    sign_in: Token
    overage: StrictBool
    recorded_by: Token
    recorded_at: Instant


class AccountState(ScheduleModel):
    account: Account
    record: AccountRecord | None = None
    version: Count = 0
    window_closed_until: Instant | None = None
    sign_in_refused_at: Instant | None = None
    overage_observed_at: Instant | None = None


def lane_order_problem(lane_ids: list[str]) -> str | None:
    return None if lane_ids == sorted(set(lane_ids)) else "lanes: one per lane ID, sorted"


class ScheduleState(ScheduleModel):
    protocol: Literal["sf-lifecycle-schedule/1"]
    commission: dict[str, Any]  # JSON: the commission document, checked against its digest
    commission_digest: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    revision_recorded_at: Instant
    lanes: list[LaneState]
    ledger: Annotated[list[LedgerWeek], Field(max_length=64)]
    accounts: Annotated[list[AccountState], Field(min_length=2, max_length=2)]

    @model_validator(mode="after")
    def _consistent(self) -> ScheduleState:
        problem = lane_order_problem([lane.lane for lane in self.lanes])
        if problem:
            raise ValueError(problem)
        weeks = [week.week for week in self.ledger]
        if weeks != sorted(set(weeks)):
            raise ValueError("ledger: one entry per week, sorted")
        if [a.account for a in self.accounts] != list(ACCOUNTS):
            raise ValueError("accounts: claude then chatgpt")
        return self

    def lane(self, lane_id: str) -> LaneState | None:
        return next((lane for lane in self.lanes if lane.lane == lane_id), None)

    def account(self, name: str) -> AccountState:
        return next(a for a in self.accounts if a.account == name)

    def week(self, week: str) -> LedgerWeek | None:
        return next((w for w in self.ledger if w.week == week), None)


assert SCHEDULE_PROTOCOL == "sf-lifecycle-schedule/1"
