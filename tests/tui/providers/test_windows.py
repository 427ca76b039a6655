"""A runner's usage-window rule is the schedule's: an observation it reports is never refused for its window."""

from __future__ import annotations

import pendulum
from hypothesis import given
from hypothesis import strategies as st

from factory_schedule.core import SCHEDULE_LIMITS, ScheduleError
from factory_schedule.core.accounts import read_observation
from factory_schedule.core.schedule_document import ReportedObservation
from factory_schedule.tui.host.providers.windows import Window, observation

NOW = pendulum.datetime(2026, 12, 7, 2, 30, tz="UTC")
HORIZON_SECONDS = SCHEDULE_LIMITS.max_reset_horizon_ms // 1000
STATUSES = st.sampled_from(["allowed", "allowed_warning", "rejected", "blocked", "unknown-status"])
# Resets near the edges the rule draws: now, and the horizon after now.
RESETS = st.one_of(st.none(), st.integers(-3, 3).map(lambda d: int(NOW.timestamp()) + d),
                   st.integers(-3, 3).map(lambda d: int(NOW.timestamp()) + HORIZON_SECONDS + d),
                   st.integers(0, 2 * HORIZON_SECONDS).map(lambda d: int(NOW.timestamp()) - HORIZON_SECONDS // 2 + d))


@given(status=STATUSES, resets_at=RESETS, overage=st.sampled_from([None, False, True]),
       fraction=st.sampled_from([0.0, 0.25, 0.9995]))
def test_a_window_the_runner_would_report_is_one_the_schedule_accepts(status, resets_at, overage, fraction):
    now = NOW.add(microseconds=int(fraction * 1_000_000))
    document = observation(status, resets_at, None, overage)
    window = Window.of(document, now.timestamp())
    try:
        read_observation(ReportedObservation.model_validate(document), now)
    except ScheduleError as error:
        assert error.code == "INVALID", error
        accepted = False
    else:
        accepted = True
    assert window.usable == accepted, f"{document} at {now}: the runner and the schedule disagree"
