"""The schedule's fixed limits (`SCHEDULE_LIMITS`) and its protocol and aggregate names, in one place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

SCHEDULE_PROTOCOL: Final = "sf-lifecycle-schedule/1"
COMMISSION_PROTOCOL = "sf-schedule-commission/1"
SCHEDULE_AGGREGATE = "discovery/schedule"


@dataclass(frozen=True)
class ScheduleLimits:
    max_products: int = 9
    max_lanes: int = 48
    max_revision: int = 999_999
    max_segments: int = 8
    max_tasks_per_rhythm: int = 4
    max_calls_per_task: int = 16
    max_calls_per_occurrence: int = 24
    max_call_bound_tokens: int = 2_000_000
    max_weekly_tokens: int = 10_000_000_000
    max_usage_tokens: int = 10_000_000_000
    max_deadline_minutes: int = 180
    min_stagger_minutes: int = 5
    max_stagger_minutes: int = 60
    max_record_age_days: int = 30
    max_reset_horizon_ms: int = 7 * 24 * 60 * 60 * 1000
    recent_per_lane: int = 2
    ledger_weeks: int = 8
    max_rounds: int = 16
    max_state_bytes: int = 786_432


SCHEDULE_LIMITS = ScheduleLimits()
