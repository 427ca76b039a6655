"""Health's own records decide the same way whichever shell writes them: `health/repairs` counts its events by
type and names the last command; `health/runs` keeps the latest KEPT_RUNS records, oldest first."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from factory_schedule.core.health.records import (
    FIRING_RECORDED,
    KEPT_RUNS,
    LEASE_REMOVED,
    RUN_RECORDED,
    counted_record,
    kept_run,
)


def test_a_repairs_record_is_one_event_and_the_state_counts_it_by_type_and_names_its_command() -> None:
    state: Any = None
    for n, kind in enumerate([LEASE_REMOVED, FIRING_RECORDED, LEASE_REMOVED], start=1):
        decision = counted_record(kind, {"n": n}, f"health/{n}")(state, n - 1)
        [event] = decision.events
        assert (event.type, event.data) == (kind, {"n": n})
        assert decision.result == {"recorded": f"health/{n}"}
        state = decision.state
    assert state == {"counts": {LEASE_REMOVED: 2, FIRING_RECORDED: 1}, "last": "health/3"}


@given(st.integers(min_value=0, max_value=3 * KEPT_RUNS))
def test_the_runs_state_keeps_the_latest_records_oldest_first(runs: int) -> None:
    state: Any = None
    for n in range(1, runs + 1):
        decision = kept_run({"occurrence": f"o-{n}"}, f"health/run/o-{n}")(state, n - 1)
        assert [event.type for event in decision.events] == [RUN_RECORDED]
        state = decision.state
    kept = [run["occurrence"] for run in state["runs"]] if state is not None else []
    assert kept == [f"o-{n}" for n in range(max(1, runs - KEPT_RUNS + 1), runs + 1)]
