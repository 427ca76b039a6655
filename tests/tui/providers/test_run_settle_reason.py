"""A runner's settlement reason is cut to the engine's 200 characters without leaving whitespace at the cut: a
reason whose 200th character is a space (a long prompt-folder path, a long refusal message) must settle the
segment, not be refused INVALID and crash the runner with its segment left running (found while reviewing
the staged lanes' runs, whose claim refusals settle with the engine's message; it also made
test_run.py's unusable-prompts test depend on the length of pytest's temporary path). Real journal file."""

from __future__ import annotations

from typing import Any

import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.tui.host.providers.work import Segment, SegmentWork
from tests.tui.host.test_run import lanes_commission, record, schedule  # noqa: F401 (schedule: the fixture)


@pytest.mark.parametrize("how", ["settle", "settle_as"])
def test_a_reason_cut_at_a_space_still_settles_the_segment(schedule: LifecycleSchedule, how: str) -> None:  # noqa: F811
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    tick = schedule.start(lane="alpha/basic", runner="r-long")
    assert tick.occurrence is not None
    lines: list[dict[str, Any]] = []
    worker = SegmentWork(schedule, None, Segment(occurrence=tick.occurrence.id, runner="r-long", sign_in=""),
                         lines.append)
    why = "prompt folder unusable: " + "x" * 175 + " and more words past the cut"
    assert why[199] == " "
    if how == "settle":
        worker.settle(why)
    else:
        worker.settle_as("unavailable", why)
    settled = schedule.record(tick.occurrence.id)
    assert settled is not None and settled.settlement is not None
    assert settled.settlement.reason == why[:199]
