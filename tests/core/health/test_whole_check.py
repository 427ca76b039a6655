"""Health says when the hash chains were last checked from their first event longer ago than a week and a day,
or never: a check from a checkpoint cannot see an event rewritten before it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from factory_schedule.core.health import WHOLE_CHECK_DAYS, HealthFacts, judge

NOW = datetime(2026, 12, 2, 6, 0, tzinfo=UTC)


def _due(checked_at: datetime | None, known: bool = True) -> list[str]:
    report = judge(HealthFacts(now=NOW, host="h", whole_check_at=checked_at, whole_check_known=known))
    return [finding.kind for finding in report.findings if finding.kind == "verify-due"]


def test_a_whole_check_within_the_week_and_a_day_is_not_due() -> None:
    assert _due(NOW) == []
    assert _due(NOW - timedelta(days=WHOLE_CHECK_DAYS)) == []


def test_a_whole_check_older_than_a_week_and_a_day_is_due() -> None:
    assert _due(NOW - timedelta(days=WHOLE_CHECK_DAYS, seconds=1)) == ["verify-due"]


def test_no_whole_check_ever_is_due() -> None:
    assert _due(None) == ["verify-due"]


def test_a_check_that_did_not_look_at_the_chains_says_nothing_of_them() -> None:
    assert _due(None, known=False) == []
