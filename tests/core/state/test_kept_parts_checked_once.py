"""A decision's check runs the own rules (the model validator) of the occurrence it changed, not of those it kept.

A changed lane is validated with its unchanged occurrences passed as the checked, frozen models they are: their
rules held when they were checked and nothing changed them since. Any other occurrence instance handed to a
validation is put through its rules as always; every stored defect is still refused (test_corrupt_state.py,
test_corrupt_state_warm_engine.py).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from pydantic import ValidationError

from factory_schedule.core.results import ScheduleView
from factory_schedule.core.schedule_document import (
    CHECKED_INSTANCES,
    LaneState,
    Occurrence,
    _checked_before,
)
from tests.core.schedule.support import ALPHA, result_report
from tests.core.state.support import busy_night

_RULES = Occurrence.__dict__["_consistent"].__code__
_SKIP = _checked_before.__code__


@contextmanager
def rules_run() -> Iterator[list[int]]:
    """How many times an occurrence's own rules run inside the block: its validator's calls less those that found
    their occurrence named as checked."""
    counted = [0]

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is _RULES:
            counted[0] += 1
        elif event == "return" and frame.f_code is _SKIP and arg is True:
            counted[0] -= 1

    before = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield counted
    finally:
        sys.setprofile(before)


def _alpha(view: ScheduleView | None) -> LaneState:
    assert view is not None
    return next(lane for lane in view.lanes if lane.lane == ALPHA)


def test_a_decision_runs_the_rules_of_the_occurrence_it_changed_and_not_of_those_it_kept(tmp_path):
    h, _bravo = busy_night(tmp_path)
    lane = _alpha(h.schedule.read())
    assert lane.open is not None and len(lane.recent) == 1
    open_id = lane.open.id
    first = h.call(open_id, runner="r1", work="w1")
    h.schedule.end_call(occurrence_id=open_id, runner="r1", call=first.call, report=result_report(100))

    # The lane keeps its settled occurrence; the open one changes (its second call).
    with rules_run() as counted:
        second = h.call(open_id, runner="r1", work="w2")
    assert second.call == 2
    assert counted == [1]


def _inconsistent_settled(tmp_path: Any) -> tuple[LaneState, Occurrence]:
    """A lane with a settled occurrence, and a copy of that occurrence that breaks its own rules (settled with
    no settlement): a copy is a model instance no validation made."""
    h, _bravo = busy_night(tmp_path)
    lane = _alpha(h.schedule.read())
    assert len(lane.recent) == 1
    return lane, lane.recent[0].model_copy(update={"settlement": None})


def _lane_with(lane: LaneState, occurrence: Occurrence) -> dict[str, Any]:
    document = lane.model_dump(by_alias=True, mode="json", exclude_defaults=True)
    document["recent"] = [occurrence]
    return document


@pytest.mark.parametrize("context", [None, {}, {CHECKED_INSTANCES: frozenset()}], ids=["none", "empty", "others"])
def test_a_model_instance_not_named_checked_is_put_through_its_rules(tmp_path, context):
    lane, broken = _inconsistent_settled(tmp_path)
    with pytest.raises(ValidationError, match="settlement: recorded exactly when the occurrence is settled"):
        LaneState.model_validate(_lane_with(lane, broken), context=context)


def test_a_model_instance_named_checked_keeps_its_check(tmp_path):
    lane, broken = _inconsistent_settled(tmp_path)
    validated = LaneState.model_validate(_lane_with(lane, broken), context={CHECKED_INSTANCES: {id(broken)}})
    assert validated.recent[0] is broken
