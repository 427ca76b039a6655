"""The Tonight view lists the staged lanes' runs like every other lane: their slot, their plan and, once a
tick admitted one, its state (Textual's pilot on a real journal file)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from factory_schedule.core import LifecycleSchedule, ManualClock, proposed_commission
from factory_schedule.core.identity import PIPELINE_RHYTHMS
from factory_schedule.store import open_journal
from factory_schedule.tui.dashboard.app import build_app
from factory_schedule.tui.host.demo import DEMO_HOST

from .test_app_journeys import synchronously


@synchronously
async def test_tonight_shows_each_run_with_its_slot_and_the_admitted_ones_state(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    clock = ManualClock("2026-12-06T12:00:00Z")
    journal = open_journal(url)
    schedule = LifecycleSchedule(journal, clock)
    schedule.record_commission(proposed_commission(["alpha"], "2026-12-07", 40_000_000, pipeline=True))
    clock.set("2026-12-07T02:20:30Z")
    assert schedule.start(lane="portfolio/promotion", runner="r-promo").kind == "admitted"
    app = build_app(url, clock, None, journal=journal, host=DEMO_HOST, journal_label="sqlite:///journal.db")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#tonight-table", DataTable)
        rows = {str(table.get_row(key)[0]): [str(cell) for cell in table.get_row(key)] for key in table.rows}
        for run, slot in zip(PIPELINE_RHYTHMS, ("02:20", "02:40", "03:00", "03:20"), strict=True):
            lane = f"portfolio/{run}"
            assert lane in rows, sorted(rows)
            assert rows[lane][3] == slot
            assert rows[lane][4] == "12-07"
        assert rows["portfolio/promotion"][2].startswith("running")
        assert rows["portfolio/maturation"][2] == "scheduled"
