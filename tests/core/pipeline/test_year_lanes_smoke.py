"""The year benchmark's staged lanes (tests/bench/year_lanes.py) on a few simulated nights, so the hook cannot
rot: the four runs are commission lanes the ticks start, each night's run is admitted once and claims at
most once with its occurrence, and both states stay within their limits."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from factory_schedule.core import SCHEDULE_AGGREGATE
from factory_schedule.core.identity import PIPELINE_RHYTHMS
from factory_schedule.core.limits import SCHEDULE_LIMITS
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE
from factory_schedule.core.pipeline.model import MAX_STATE_BYTES
from factory_schedule.store import open_journal
from tests.core.schedule.test_year_smoke import _year_module

MONDAY = "2026-01-05"


@pytest.fixture(scope="module")
def year() -> ModuleType:
    return _year_module()


def test_the_years_ticks_start_the_four_runs_and_each_nights_run_claims_once(year: ModuleType,
                                                                                tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    simulation = year.Year(url, seed=3, weekly_tokens=900_000_000, rates=year.FaultRates(0, 0, 0, 0),
                           first_day=year.pendulum.parse(MONDAY).date())
    figures = simulation.run(4, progress=False)

    journal = open_journal(url)
    journal.verify(SCHEDULE_AGGREGATE)
    journal.verify(PIPELINE_AGGREGATE)
    assert figures.commands == journal.head(SCHEDULE_AGGREGATE) == simulation.journal.commits
    assert {f"portfolio/{run}" for run in PIPELINE_RHYTHMS} <= set(simulation.lanes)
    claims = [event for event in journal.iter_history(PIPELINE_AGGREGATE) if event.type == "task-claimed"]
    prefix = "claim/occurrence/discovery/portfolio/"
    claimed = [event.command_id.split("claim/occurrence/")[1] for event in claims]
    assert all(prefix in event.command_id for event in claims)  # every claim names its admitted occurrence
    assert len(claimed) == len(set(claimed)) > 0  # one claim per occurrence
    admissions = [event for event in journal.iter_history(SCHEDULE_AGGREGATE)
                  if event.command_id.startswith("discovery/portfolio/") and event.command_id.endswith("/admit")]
    admitted = Counter(event.command_id.removesuffix("/admit") for event in admissions)
    assert set(claimed) <= set(admitted)
    assert set(admitted.values()) == {1}  # admitted exactly once
    assert {o.rsplit("/", 1)[0] for o in admitted if "-W" not in o} == {
        f"discovery/portfolio/{run}" for run in PIPELINE_RHYTHMS}
    staged = simulation.staged.figures
    assert staged.outcomes["promotion:reported select"] == 1
    assert 0 < staged.largest_state < MAX_STATE_BYTES
    assert figures.largest_state < SCHEDULE_LIMITS.max_state_bytes
