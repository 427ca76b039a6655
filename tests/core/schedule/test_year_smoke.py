"""The year benchmark (tests/bench/year.py) on two simulated days, so that the script cannot rot.

The fault rates are turned up and the weekly ceiling down, so that every fault path the year
injects (usage limits, 401s and their new records, killed runners and their reconciles, budget
exhaustion, lost calls) runs through the real engine within two nights.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from factory_schedule.core import SCHEDULE_AGGREGATE
from factory_schedule.store import open_journal

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "year.py"
ROOT = SCRIPT.parents[2]


def _year_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_year", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_year", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def year() -> ModuleType:
    return _year_module()


THURSDAY = "2026-01-07"  # its two nights are Thursday's and Friday's: every basic and full lane runs


def _run(year: ModuleType, path: Path, rates, weekly_tokens: int = 900_000_000, seed: int = 1, days: int = 2):
    simulation = year.Year(f"sqlite:///{path}", seed=seed, weekly_tokens=weekly_tokens, tick_minutes=20,
                           rates=rates, first_day=year.pendulum.parse(THURSDAY).date())
    return simulation, simulation.run(days, progress=False)


def _sound(path: Path, figures, simulation) -> None:
    journal = open_journal(f"sqlite:///{path}")
    journal.verify(SCHEDULE_AGGREGATE)
    assert figures.commands == journal.head(SCHEDULE_AGGREGATE) == simulation.journal.commits
    assert sum(period.commands for period in figures.periods) + 3 == figures.commands  # + commission, 2 records
    assert set(figures.errors) <= {"runner NOT_RUNNING", "runner NOT_OWNER", "runner SETTLED", "runner STALE"}


def test_usage_limits_401s_killed_runners_and_lost_calls_run_through_the_engine(year, tmp_path):
    rates = year.FaultRates(usage_limit=0.1, sign_in=0.1, lost=0.1, killed=0.3)
    simulation, figures = _run(year, tmp_path / "journal.db", rates)

    _sound(tmp_path / "journal.db", figures, simulation)
    for fault in ("usage limit", "401", "lost call", "killed runner"):
        assert figures.faults[fault] > 0, f"no {fault} in two days: {figures.faults}"
    for outcome in ("defer usage-limit", "defer sign-in-needed", "reconcile", "start resumed", "settle partial"):
        assert figures.outcomes[outcome] > 0, f"no {outcome!r}: {figures.outcomes}"
    assert 0 < figures.largest_state < year.STATE_TARGET


def test_a_small_ceiling_makes_runners_defer_budget_exhausted(year, tmp_path):
    simulation, figures = _run(year, tmp_path / "journal.db", year.FaultRates(0, 0, 0, 0), weekly_tokens=1_500_000)

    _sound(tmp_path / "journal.db", figures, simulation)
    assert figures.outcomes["refused budget-exhausted"] == figures.outcomes["defer budget-exhausted"] > 0
    assert figures.outcomes["settle completed"] > 0
    assert not figures.faults


def test_the_same_seed_writes_the_same_journal(year, tmp_path):
    rates = year.FaultRates(usage_limit=0.1, sign_in=0.1, lost=0.1, killed=0.3)
    _run(year, tmp_path / "a.db", rates, days=1)
    _run(year, tmp_path / "b.db", rates, days=1)

    def commands(name: str) -> list[tuple[str, str]]:
        events = open_journal(f"sqlite:///{tmp_path / name}").iter_history(SCHEDULE_AGGREGATE)
        return [(event.command_id, event.type) for event in events]

    assert commands("a.db") == commands("b.db")


def test_the_script_prints_every_figure_and_the_table(tmp_path):
    printed = subprocess.run(
        [sys.executable, str(SCRIPT), "--days", "1", "--raw-commits", "50"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=True,
    ).stdout
    for figure in ("commands executed (journal head):", "wall time (simulation):", "first / last:",
                   "command / raw commit:", "of a command: the journal's own calls", "largest state:",
                   "journal size:", "dashboard", "host: a pure-Python reference loop"):
        assert figure in printed, printed
    for headline in (r"command / raw commit: \d+\.\d\dx", r"pipeline command / raw commit: \d+\.\d\dx",
                     r"health \(chain checked\) on the year's journal / on a young journal: \d+\.\d\d",
                     r"command floor \(the journal's statements, bare sqlite3\) / raw commit: \d+\.\d\dx",
                     r"command / its floor: \d+\.\d\dx"):
        assert re.search(f"^{headline}$", printed, re.MULTILINE), (headline, printed)
    table = [line for line in printed.splitlines() if line.startswith("| ")]
    assert len(table) == 13, printed  # header, rule, eleven figures
    assert not list(tmp_path.iterdir()), "the script left files behind"


def test_statement_times_cover_every_statement_a_command_sends_and_start_afresh_each_period(year, tmp_path):
    simulation = year.Year(f"sqlite:///{tmp_path / 'journal.db'}", seed=1, weekly_tokens=900_000_000)
    times = year.StatementTimes(simulation.journal._journal)
    simulation.setup()  # the commission and two account records: three commands

    line = times.line()
    for statement in ("receipt", "head_row", "parts", "insert_event", "insert_head", "update_head", "insert_receipt",
                      "COMMIT"):
        assert f" {statement} " in line, line
    assert times.counts["insert_receipt"] == 0 and times.line() == "    ms per statement: "


def test_sqlite_pages_per_statement_are_sqlite_s_own_count_for_the_journal_file(year, tmp_path):
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    simulation = year.Year(url, seed=1, weekly_tokens=900_000_000)
    pages = year.SqlitePages.of(url)
    if pages is None:
        pytest.skip("this Python's sqlite3 does not expose its library's sqlite3_db_status")
    times = year.StatementTimes(simulation.journal._journal, pages)
    simulation.setup()  # three commands: the commission's state is new, the account records update it

    line = times.line()
    assert "pages per statement:" in line, line
    assert times.pages_per_command and times.pages_per_command[0] > 3, "a command touches pages in every table"
    pooled = simulation.journal._journal.pool.checkout()
    try:
        other = year.SqlitePages.of(f"sqlite:///{tmp_path / 'other.db'}")
        assert other.touched(pooled.driver_connection) is None, "another file's count is not the journal's"
    finally:
        pooled.close()
