"""A health check covers what its scope says, on a real SQLite journal: the hash chains from their first event
unless told otherwise, none when its scope leaves them out (then no whole check is reported due either), and
the schedule's view the caller already read, judged as it was read."""

from __future__ import annotations

import sqlite3
from typing import Any

from factory_schedule.core import SCHEDULE_AGGREGATE, ManualClock
from factory_schedule.tui.host import health

from .test_health import HOST, _commissioned


def _forge_first_event(journal: Any) -> None:
    with sqlite3.connect(journal.url.removeprefix("sqlite:///")) as conn:
        (data,) = conn.execute("SELECT data FROM events WHERE aggregate = ? AND version = 1",
                               (SCHEDULE_AGGREGATE,)).fetchone()
        conn.execute("UPDATE events SET data = ? WHERE aggregate = ? AND version = 1",
                     (data.replace('"', '"forged', 1), SCHEDULE_AGGREGATE))


def _kinds(report: health.HealthReport) -> list[str]:
    return [finding.kind for finding in report.findings]


def test_a_check_verifies_every_chain_from_its_first_event_unless_its_scope_says_otherwise(
        world: tuple[Any, Any, ManualClock]) -> None:
    journal, schedule, clock = world
    _commissioned(world)
    _forge_first_event(journal)
    report = health.check_health(journal, schedule, clock.now(), HOST, health.HealthScope())
    assert "journal-chain-broken" in _kinds(report) and report.verified is None


def test_a_check_whose_scope_leaves_the_chains_out_verifies_none_and_reports_no_whole_check_due(
        world: tuple[Any, Any, ManualClock]) -> None:
    journal, schedule, clock = world
    _commissioned(world)
    _forge_first_event(journal)
    report = health.check_health(journal, schedule, clock.now(), HOST, health.HealthScope(chains=None))
    assert not {"journal-chain-broken", "verify-due"} & set(_kinds(report))
    assert report.verified is None


def test_a_check_judges_the_view_its_caller_already_read_instead_of_reading_it_again(
        world: tuple[Any, Any, ManualClock]) -> None:
    journal, schedule, clock = world
    _commissioned(world)
    nothing_read = health.AlreadyRead(view=None, pipeline=None, pipeline_problem=None)
    report = health.check_health(journal, schedule, clock.now(), HOST, health.HealthScope(already_read=nothing_read))
    assert "not-commissioned" in _kinds(report)
    assert "not-commissioned" not in _kinds(health.check_health(journal, schedule, clock.now(), HOST,
                                                                health.HealthScope()))
