"""The journal's hash chains: a check from a checkpoint reads only what was appended since it, so a whole check
from each chain's first event is due once a week."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from .report import Finding

WHOLE_CHECK_DAYS = 8  # a weekly `verify` with a day to spare


def chain_findings(problems: Mapping[str, str]) -> list[Finding]:
    """Each aggregate whose hash chain did not verify, named, with why."""
    return [Finding("journal-chain-broken", "error", f"the journal's hash chain of {aggregate} is broken: {problem}",
                    {"aggregate": aggregate, "detail": problem})
            for aggregate, problem in sorted(problems.items())]


def whole_check_findings(checked_at: datetime | None, now: datetime) -> list[Finding]:
    """A check from a checkpoint reads only what was appended since it; an event rewritten before it, the
    rest of its chain left as it was, is found only from the first event. Once a week is enough for that:
    a finding when the last whole check is older than `WHOLE_CHECK_DAYS` days, or there was none."""
    if checked_at is not None and now - checked_at <= timedelta(days=WHOLE_CHECK_DAYS):
        return []
    when = "never" if checked_at is None else f"last on {checked_at.isoformat()}"
    return [Finding("verify-due", "warning",
                    f"the hash chains were checked from their first event {when}: run `factory-schedule verify` "
                    f"(once a week; it reads the whole history)",
                    {"lastWholeCheck": None if checked_at is None else checked_at.isoformat(),
                     "days": WHOLE_CHECK_DAYS})]
