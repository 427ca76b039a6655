"""Account stops: a closed usage window, a refused sign-in, paid overage.

A stop belongs to the account (the owner's sessions and every Product share it),
not to the occurrence that saw it, and it only ever moves forward: a report that
lands late never moves a stop back before a newer one.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

import pendulum
from pendulum import DateTime

from .errors import invalid
from .limits import SCHEDULE_LIMITS
from .schedule_document import AccountState, Observation, at, instant_text

OPEN_STATUSES = ("allowed", "allowed_warning")


def window_closes(status: object) -> bool:
    """Any status but the open ones closes the window: an unknown one fails closed."""
    return status not in OPEN_STATUSES


def reset_accepted(resets_at: int, now_ms: int) -> bool:
    """Whether a closed window's reset (epoch seconds) is one the schedule accepts: after the observation
    (`now_ms`, epoch milliseconds) and within the reset horizon. A runner checks it before it reports one."""
    reset_ms = resets_at * 1000
    return now_ms < reset_ms <= now_ms + SCHEDULE_LIMITS.max_reset_horizon_ms


def later(current: str | None, candidate: DateTime) -> str:
    """The later of a stored stop and a new one: stops only move forward."""
    text = instant_text(candidate)
    if current is None or at(current) < candidate:
        return text
    return current


def window_closed(account: AccountState, now: DateTime) -> bool:
    return account.window_closed_until is not None and now < at(account.window_closed_until)


def sign_in_stopped(account: AccountState) -> bool:
    """A refusal since the account's current record, which only a newer record lifts."""
    if account.sign_in_refused_at is None:
        return False
    return account.record is None or at(account.record.recorded_at) <= at(account.sign_in_refused_at)


def overage_stopped(account: AccountState) -> bool:
    if account.overage_observed_at is None:
        return False
    return account.record is None or at(account.record.recorded_at) <= at(account.overage_observed_at)


def record_unverified(account: AccountState, sign_in: str, now: DateTime, max_age_days: int) -> str | None:
    """Why paid overage cannot be ruled out for this call, or None when the record vouches for it."""
    record = account.record
    if record is None:
        return f"{account.account} has no owner record"
    recorded = at(record.recorded_at)
    if recorded > now:
        return f"{account.account}'s record is dated after the clock"
    # Both are UTC, where a day is 24 hours: the standard library's exact difference, not pendulum's calendar
    # arithmetic, which a call's admission would pay for on every command.
    if _dt.datetime.__sub__(now, recorded) > _dt.timedelta(days=max_age_days):
        return f"{account.account}'s record is older than {max_age_days} days"
    if record.overage:
        return f"{account.account}'s record has paid overage on"
    if record.sign_in != sign_in:
        return f"the runner observes sign-in {sign_in!r}, the record names {record.sign_in!r}"
    if overage_stopped(account):
        return f"paid overage was observed on {account.account} since its record"
    return None


@dataclass(frozen=True)
class WindowReading:
    """What one usage-window observation means for the schedule."""

    closes: bool
    reset: DateTime | None
    overage: bool


def read_observation(observation: Observation | None, now: DateTime) -> WindowReading:
    """Interpret an observation: any status but the open ones closes the window (an unknown one
    fails closed), with a reset that must fall after the observation and within seven days.
    Overage is overage whatever else the report says; an unusable reset is then simply ignored."""
    if observation is None:
        return WindowReading(closes=False, reset=None, overage=False)
    overage = observation.is_using_overage is True
    closes = window_closes(observation.status)
    if not closes:
        return WindowReading(closes=False, reset=None, overage=overage)
    reset = _checked_reset(observation, now)
    if reset is None:
        if overage:
            return WindowReading(closes=False, reset=None, overage=True)
        raise invalid(
            f"observation.resetsAt: a closed window ({observation.status!r}) needs a reset after the "
            "observation and within seven days"
        )
    return WindowReading(closes=True, reset=reset, overage=overage)


def _checked_reset(observation: Observation, now: DateTime) -> DateTime | None:
    if observation.resets_at is None:
        return None
    if not reset_accepted(observation.resets_at, int(now.timestamp() * 1000)):
        return None
    return pendulum.from_timestamp(observation.resets_at, tz="UTC")
