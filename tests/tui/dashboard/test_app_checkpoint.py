"""The dashboard checks the hash chains from the checkpoint file, as health and the tick do, never from what it
verified itself earlier: after the owner accepts a restored journal's history (`verify --accept-history`), an open
dashboard must not write its older checkpoint back and set every later check, and the nightly tick, broken again.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from factory_schedule.core import LifecycleSchedule, ManualClock
from factory_schedule.core.commission import proposed_commission
from factory_schedule.store import Decision, NewEvent, open_journal
from factory_schedule.tui.dashboard.app import build_app
from factory_schedule.tui.host.demo import DEMO_END, DEMO_HOST
from tests.tui.runner_support import cli

from .test_app_journeys import SIZE, synchronously


def _account(schedule: LifecycleSchedule, sequence: int) -> None:
    schedule.record_account(account="claude", sequence=sequence, sign_in="me@example.com", overage=False,
                            recorded_by="owner")


def _broken(url: str) -> list[str]:
    _code, report, _err = cli(url, "health", "--json")
    return [finding["evidence"]["aggregate"] for finding in report["findings"]
            if finding["kind"] == "journal-chain-broken"]


@synchronously
async def test_an_open_dashboard_keeps_the_history_the_owner_accepted(tmp_path: Path) -> None:
    url, copy = (f"sqlite:///{tmp_path / name}" for name in ("journal.db", "copy.db"))
    schedule = LifecycleSchedule(open_journal(url), ManualClock("2026-12-01T12:00:00Z"))
    schedule.record_commission(proposed_commission(["alpha"], "2026-12-02", 5_000_000))
    _account(schedule, 1)
    with sqlite3.connect(url.removeprefix("sqlite:///")) as live, sqlite3.connect(copy.removeprefix("sqlite:///")) \
            as saved:
        live.backup(saved)
    _account(schedule, 2)
    app = build_app(url, ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label="sqlite:///journal.db")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # its first reading checked the chains: the checkpoint holds the schedule at 3
        with sqlite3.connect(copy.removeprefix("sqlite:///")) as saved, \
                sqlite3.connect(url.removeprefix("sqlite:///")) as live:
            saved.backup(live)  # the owner restores the copy: the schedule goes back to 2
        assert _broken(url) == ["discovery/schedule"]
        assert cli(url, "verify", "--accept-history")[0] == 0
        assert _broken(url) == []
        journal = open_journal(url)  # another chain moves on (its checkpoint then changes)
        journal.execute("other", "other/1", {}, 0, lambda _state, _v: Decision([NewEvent("x", {})], {"n": 1}, {}))
        app.refresh_reading(force=True)
        await pilot.pause()
        assert _broken(url) == []  # the dashboard's own older checkpoint was not written back
