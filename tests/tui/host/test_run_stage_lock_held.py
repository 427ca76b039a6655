"""`factory-schedule run` for a staged lane's run whose lane lock another run holds (the lane's reviewer run
still working: scheduler and reviewer share the lane's worker singleton) ends its segment like any refused
claim: settled `unavailable`, nothing sent, the task left unclaimed; never an exit with its segment left running
for a supervisor to reconcile (`lanes claim` exits 4 there, and examples/lane_runner.sh settles).
Real processes over a real journal file."""

from __future__ import annotations

import json
from pathlib import Path

import pendulum

from factory_schedule.core import LifecycleSchedule
from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.store import leases

from .test_run_stage import SELECT_REPORT, _contacts, _tick_run, world  # noqa: F401 (world: the fixture)
from .test_tick_lane_runs import _file_journal


def test_a_run_whose_lane_lock_is_held_settles_unavailable_and_sends_nothing(
        sqlite_url: str, world: tuple[LifecycleSchedule, PipelineLanes], tmp_path: Path) -> None:  # noqa: F811
    schedule, lanes = world
    journal = _file_journal(lanes)
    leases.acquire(journal, "pipeline/promotion/worker", "rev-still-working", 600, pendulum.now("UTC"),
                   {"runner": "rev-still-working", "lane": "promotion"})
    code, lines, err = _tick_run(sqlite_url, tmp_path, json.dumps(SELECT_REPORT))
    [started] = [line for line in lines if "tick" in line]
    record = schedule.record(started["tick"]["occurrence"]["id"])
    assert record is not None and record.settlement is not None, (code, lines, err)
    assert record.settlement.status == "unavailable"
    assert _contacts(tmp_path) == []
    view = lanes.lane_view("promotion")
    assert view is not None and all(task.get("claimedBy") is None for task in view.tasks)
