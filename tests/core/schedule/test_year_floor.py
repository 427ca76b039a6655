"""The floor the year benchmark prints (tests/bench/floor.py): the journal's own statements for a span's commands,
replayed on a bare sqlite3 connection over a copy of the journal taken when the span began. A floor is only
a floor when the replay writes what the journal wrote: after it, the copy's every row equals the journal's."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import ModuleType

import pytest

from factory_schedule.core import SCHEDULE_AGGREGATE
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE
from tests.bench import floor as command_floor
from tests.core.schedule.test_year_smoke import _year_module

MONDAY = "2026-01-05"
TABLES = ("journal_meta", "events", "receipts", "aggregates", "state_parts", "leases")


@pytest.fixture(scope="module")
def year() -> ModuleType:
    return _year_module()


def _rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    connection = sqlite3.connect(path)
    try:
        return {table: sorted(connection.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
                for table in TABLES}
    finally:
        connection.close()


def _year(year: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, days: int, span: int):
    monkeypatch.setattr(year, "FLOOR_DAYS", span)
    simulation = year.Year(f"sqlite:///{tmp_path / 'journal.db'}", seed=3, weekly_tokens=900_000_000,
                           tick_minutes=30, rates=year.FaultRates(0.05, 0.05, 0.05, 0.2),
                           first_day=year.pendulum.parse(MONDAY).date())
    simulation.floor_copy = tmp_path / "floor.db"
    return simulation


def test_every_command_the_span_committed_is_one_replayed_transaction(year, tmp_path, monkeypatch):
    simulation = _year(year, tmp_path, monkeypatch, days=2, span=1)
    simulation.setup()
    simulation.day(simulation.first_day)
    commits = simulation.journal.commits
    simulation.start_capture()
    at_start = _rows(simulation.floor_copy)
    simulation.day(simulation.first_day.add(days=1))  # each command's transactions replayed right after it
    floor = simulation.replayed_floor()
    simulation.capture.stop()

    assert floor is not None and floor.count(SCHEDULE_AGGREGATE) == simulation.journal.commits - commits > 0
    assert floor.count(PIPELINE_AGGREGATE) > 0, "the staged lanes' commands are captured too"
    assert floor.mean_ms(SCHEDULE_AGGREGATE) > 0
    assert at_start != _rows(tmp_path / "journal.db")


def test_a_year_replays_its_last_days_commands_on_the_copy_which_then_equals_the_journal(year, tmp_path,
                                                                                         monkeypatch):
    simulation = _year(year, tmp_path, monkeypatch, days=2, span=1)
    simulation.run(2, progress=False)

    assert simulation.capture.transactions
    assert len(simulation.replaying.seconds) == len(simulation.capture.transactions)
    assert _rows(simulation.floor_copy) == _rows(tmp_path / "journal.db")


def test_replaying_captured_transactions_on_a_copy_taken_before_them_reproduces_every_row(year, tmp_path,
                                                                                          monkeypatch):
    simulation = _year(year, tmp_path, monkeypatch, days=2, span=1)
    simulation.setup()
    simulation.day(simulation.first_day)
    command_floor.snapshot(tmp_path / "journal.db", tmp_path / "copy.db")
    capture = command_floor.Capture(simulation.journal._journal)
    simulation.day(simulation.first_day.add(days=1))
    capture.stop()
    assert _rows(tmp_path / "copy.db") != _rows(tmp_path / "journal.db")

    seconds = command_floor.replay(tmp_path / "copy.db", capture.transactions)

    assert _rows(tmp_path / "copy.db") == _rows(tmp_path / "journal.db")
    assert len(seconds) == len(capture.transactions) and all(spent > 0 for spent in seconds)


def test_a_transaction_rolled_back_is_not_captured_and_the_seams_come_back(year, tmp_path, monkeypatch):
    simulation = _year(year, tmp_path, monkeypatch, days=1, span=1)
    simulation.setup()
    journal = simulation.journal._journal
    seams = {name: getattr(journal, name) for name in ("_begin", "_statement", "_send", "_commit")}
    capture = command_floor.Capture(journal)
    with pytest.raises(RuntimeError), journal.writing():
        journal.head(SCHEDULE_AGGREGATE)
        raise RuntimeError("the caller gives up: the transaction rolls back")
    capture.stop()

    assert capture.transactions == []
    assert {name: getattr(journal, name) for name in seams} == seams
