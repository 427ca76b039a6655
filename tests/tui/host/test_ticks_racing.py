"""Two ticks racing on one journal: exactly one of them starts the lane's runner, and nothing is sent or paid
twice. Real processes: two `factory-schedule tick` processes started together, each with `run` as its runner and
the fake `claude` answering after a moment with a tool of its own."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import open_journal
from factory_schedule.tui.host.clock import SystemClock
from tests.loops.kill_runs import UNITS, _calls, _night, _sent, _tick


def _race(url: str) -> None:
    folder = Path(tempfile.mkdtemp(prefix="ticks-racing-"))
    prompts, env = _night(folder, url, "detach")
    ticks = [_tick(url, prompts, env), _tick(url, prompts, env)]
    for tick in ticks:
        tick.wait(timeout=300)
    journal = open_journal(url)
    view = LifecycleSchedule(journal, SystemClock()).read()
    assert view is not None
    [occurrence] = view.occurrences
    assert occurrence.state == "settled", occurrence
    assert len(occurrence.segments) == 1, occurrence.segments  # one runner started, by one tick
    sent = _sent(folder)
    assert len(sent) == UNITS and len(set(sent)) == UNITS, sent
    calls, debits = _calls(journal)
    assert sorted(Counter(calls.values()).values()) == [1] * UNITS, calls
    assert all(debits.get(k, 1) > 0 for k in calls), debits


def test_two_ticks_racing_on_sqlite_start_one_runner_and_send_each_unit_once(sqlite_url: str) -> None:
    _race(sqlite_url)


@pytest.mark.postgres
def test_two_ticks_racing_on_postgresql_start_one_runner_and_send_each_unit_once(postgres_url: str) -> None:
    _race(postgres_url)
