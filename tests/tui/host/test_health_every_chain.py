"""`health` verifies every aggregate's hash chain the journal holds (the schedule's, the staged lanes', health's
own records of runs and repairs) and names the one that breaks: an event rewritten in any of them is an error
finding naming that aggregate, and `verified` is false. A real SQLite journal, edited behind the store's back."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from typing import Any

import pytest

from factory_schedule.core import SCHEDULE_AGGREGATE, ManualClock
from factory_schedule.core.health.records import HEALTH_AGGREGATE, RUNS_AGGREGATE
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineLanes
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.host import reconciler
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.run_output import not_started, record_run, run_record
from tests.core.pipeline.pipeline_support import adopt
from tests.core.pipeline.pipeline_support import commission as pipeline_commission
from tests.tui.runner_support import cli

EVERY_CHAIN = (SCHEDULE_AGGREGATE, PIPELINE_AGGREGATE, RUNS_AGGREGATE, HEALTH_AGGREGATE)


@pytest.fixture
def journal(sqlite_url: str) -> Any:
    """A journal with events on every aggregate: a commission, the staged lanes' settings, a recorded run and a
    recorded lease removal."""
    journal = open_journal(sqlite_url)
    now = SystemClock().now()
    adopt(PipelineLanes(journal, ManualClock(now - timedelta(hours=1))), pipeline_commission())
    record_run(journal, run_record("discovery/alpha/basic/2026-12-01", 1, "r-1", "alpha/basic", None,
                                   not_started("cannot run 'x'"), "host", now))
    lease = leases.Lease("segment/discovery/alpha/basic/2026-12-01/1", "r-1", 1.0, now, now, {"pid": 1})
    reconciler.record_lease_removal(journal, lease, "its process is gone", "health-reconciler@host", now)
    return journal


def _rewrite_first_event(path: str, aggregate: str) -> None:
    with sqlite3.connect(path) as conn:
        (data,) = conn.execute("SELECT data FROM events WHERE aggregate = ? AND version = 1", (aggregate,)).fetchone()
        forged = data.replace('"', '"forged', 1) if "forged" not in data else data + " "
        conn.execute("UPDATE events SET data = ? WHERE aggregate = ? AND version = 1", (forged, aggregate))


def test_health_verifies_every_aggregates_chain_when_none_is_broken(sqlite_url: str, journal: Any) -> None:
    _code, report, err = cli(sqlite_url, "health", "--json")
    assert report["verified"] is True, err
    assert set(EVERY_CHAIN) <= set(report["verified_chains"]), report["verified_chains"]
    assert "journal-chain-broken" not in [finding["kind"] for finding in report["findings"]]


@pytest.mark.parametrize("aggregate", EVERY_CHAIN)
def test_an_event_rewritten_in_any_aggregate_breaks_verification_and_names_that_aggregate(
    sqlite_url: str, journal: Any, aggregate: str
) -> None:
    _rewrite_first_event(sqlite_url.removeprefix("sqlite:///"), aggregate)
    code, report, err = cli(sqlite_url, "health", "--json")
    assert code in (1, 2) and report["verified"] is False, err  # 2: its state did not read either
    broken = [finding for finding in report["findings"] if finding["kind"] == "journal-chain-broken"]
    assert [finding["evidence"]["aggregate"] for finding in broken] == [aggregate], broken
    assert aggregate in broken[0]["message"] and broken[0]["severity"] == "error"
