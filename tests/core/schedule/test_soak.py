"""Bounded state (seed invariant 14): three weeks of every lane of six Products across the autumn clock change.

Every occurrence of the proposed commission from Monday 19 October to Sunday 8 November 2026 (London goes
back an hour on 25 October) is admitted at its slot, makes a provider call that reports its usage and an
open usage window, and settles completed. The state must stay at or below 96 KiB all the way through.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pendulum
import pytest

from factory_schedule.core import SCHEDULE_LIMITS, lane_occurrence_on, lanes_of, proposed_commission
from tests.core.schedule.support import SIGN_IN, make_harness, observation, result_report

PRODUCTS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
FIRST, LAST = pendulum.date(2026, 10, 19), pendulum.date(2026, 11, 8)
STATE_BOUND = 96 * 1024


@pytest.mark.slow
def test_state_stays_bounded_over_three_weeks_of_six_products_across_the_autumn_clock_change(
    tmp_path: Path
) -> None:
    proposal = proposed_commission(products=PRODUCTS, effective_from=FIRST.to_date_string(),
                                   weekly_tokens=5_000_000_000)
    h = make_harness(tmp_path, start="2026-10-18T12:00:00Z", recorded=proposal)
    h.owner_record("claude", 1)
    h.owner_record("chatgpt", 1)
    lanes = {lane.lane: lane for lane in lanes_of(proposal)}

    steps: list[tuple[pendulum.DateTime, int, Callable[[], None]]] = []
    expected: list[str] = []
    day = FIRST
    while day <= LAST:
        for lane_id, lane in lanes.items():
            occurrence = lane_occurrence_on(proposal, lane_id, day)
            if occurrence is None:
                continue
            expected.append(occurrence.id)
            task = lane.tasks[0]
            steps.extend(_night(h, lane_id, occurrence.id, occurrence.slot, task.task, task.call_bound))
        day = day.add(days=1)
    steps.sort(key=lambda step: (step[0], step[1]))

    largest = 0
    for index, (instant, _order, action) in enumerate(steps):
        h.at(instant)
        action()
        if index % 25 == 0:
            largest = max(largest, h.state_bytes())
    final = h.state_bytes()
    largest = max(largest, final)
    print(f"\nsoak: {len(expected)} occurrences, {len(steps)} commands, head {h.head()}, "
          f"state {final} bytes at the end, {largest} bytes at most (bound {STATE_BOUND})")

    assert largest <= STATE_BOUND
    assert final <= SCHEDULE_LIMITS.max_state_bytes
    settled = [cid for cid in h.command_ids() if cid.endswith("/settle")]
    assert sorted(settled) == sorted(f"{occurrence_id}/settle" for occurrence_id in expected)
    assert len(set(settled)) == len(settled), "each occurrence settles once"
    admitted = [cid for cid in h.command_ids() if cid.endswith("/admit")]
    assert sorted(admitted) == sorted(f"{occurrence_id}/admit" for occurrence_id in expected)
    for lane_state in h.state()["lanes"]:
        assert lane_state.get("open") is None
        assert len(lane_state.get("recent", [])) <= SCHEDULE_LIMITS.recent_per_lane
    assert len(h.state()["ledger"]) <= SCHEDULE_LIMITS.ledger_weeks
    for occurrence_id in expected[:3]:
        assert h.schedule.status(occurrence_id).state in ("pruned", "settled")


def _night(h, lane_id: str, occurrence_id: str, slot: pendulum.DateTime, task: str, bound: int):
    runner = f"runner-{lane_id.replace('/', '-')}-{slot.format('YYYYMMDD')}"

    def start() -> None:
        tick = h.schedule.start(lane=lane_id, runner=runner)
        assert (tick.kind, tick.occurrence.id) == ("admitted", occurrence_id), tick

    calls: dict[str, int] = {}

    def call(work: str) -> Callable[[], None]:
        def admit() -> None:
            admission = h.schedule.admit_call(occurrence_id=occurrence_id, runner=runner, task=task, work=work,
                                              bound=bound, sign_in=SIGN_IN)
            assert admission.admitted and admission.dispatch, admission
            calls[work] = admission.call

        return admit

    def end(work: str) -> Callable[[], None]:
        def report() -> None:
            window = observation("allowed", resets_at=slot.add(hours=4).to_iso8601_string())
            h.schedule.end_call(occurrence_id=occurrence_id, runner=runner, call=calls[work],
                                report=result_report(bound // 2, observed=window))

        return report

    def settle() -> None:
        h.schedule.settle(occurrence_id=occurrence_id, settled_by=runner, status="completed", reason="scanned")

    return [
        (slot, 0, start),
        (slot.add(minutes=1), 1, call("part-1")),
        (slot.add(minutes=2), 2, end("part-1")),
        (slot.add(minutes=3), 3, settle),
    ]
