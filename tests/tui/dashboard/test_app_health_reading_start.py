"""The polling dashboard draws health before it mounts the views behind the other tabs.

The first reading (no health) is painted at once; the reading with the chain check and health starts as soon as
that paint is on screen. Mounting the views behind the tabs holds the UI thread for a while (a few hundred
milliseconds on a slow host); a health reading drawn on the same thread while they mount would show Health that
much later. So they mount once the first poll's readings are on screen, or at once when the owner clicks one of
their tabs, and a poll that fails still leaves them mounted. A view that comes up under the command palette shows
the reading the others show, and a reading held back while the palette was open is shown once it closes (at the
next poll's end, or as a form opens on it).
"""

from __future__ import annotations

import time
from typing import Any

from textual.screen import ModalScreen
from textual.widgets import DataTable, TabbedContent

from factory_schedule.core import SCHEDULE_AGGREGATE
from factory_schedule.tui.dashboard.app import HIDDEN_VIEWS
from factory_schedule.tui.dashboard.screens.account import RecordAccountForm
from tests.tui.dashboard.test_app_journeys import SIZE, make_app, synchronously

MOUNTING = 1.0  # seconds the views' mount holds the UI thread here
TABLES_BEHIND_THE_TABS = ("#ledger-table", "#accounts-table", "#occurrences-table", "#history-table", "#health-table")


def _slowed_mount(app: Any, started: dict[str, float]) -> None:
    """Time the views' mount, and make it hold the UI thread as composing and styling five views does."""
    mount = app._mount_hidden_views

    async def slow_mount() -> None:
        started["mounting"] = time.monotonic()
        time.sleep(MOUNTING)
        started["mounted"] = time.monotonic()
        await mount()

    app._mount_hidden_views = slow_mount


async def _until(pilot: Any, done: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        await pilot.pause(0.05)


@synchronously
async def test_the_views_behind_the_tabs_mount_after_the_health_reading_is_drawn(demo_url: str) -> None:
    app = make_app(demo_url, poll=30)
    started: dict[str, float] = {}
    read_now, apply_reading = app.read_now, app.apply_reading

    def timed_read(complete: bool = True) -> Any:
        started.setdefault("complete" if complete else "first", time.monotonic())
        return read_now(complete)

    def timed_apply(reading: Any) -> None:
        apply_reading(reading)
        if reading.health is not None:
            started.setdefault("health drawn", time.monotonic())

    app.read_now = timed_read  # type: ignore[method-assign]
    app.apply_reading = timed_apply  # type: ignore[method-assign]
    _slowed_mount(app, started)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: "mounted" in started)
        assert "mounted" in started, "the views behind the tabs did not start mounting on their own"
        assert app.reading is not None and app.reading.health is not None
        await app.views_up()
        assert app._views_up, "the views behind the tabs never came up"
    assert started["first"] < started["complete"] < started["health drawn"] < started["mounting"], started


@synchronously
async def test_a_poll_whose_reading_fails_still_mounts_the_views_behind_the_tabs(demo_url: str) -> None:
    app = make_app(demo_url, poll=30)
    read_now = app.read_now

    def failing(complete: bool = True) -> Any:
        if complete:
            raise RuntimeError("the journal went away")
        return read_now(complete)

    app.read_now = failing  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: len(app._views_up) == len(HIDDEN_VIEWS))
        assert len(app._views_up) == len(HIDDEN_VIEWS), app._views_up
        assert app.reading is not None and app.reading.health is None  # only the first reading was drawn


@synchronously
async def test_a_tab_clicked_before_the_health_reading_is_drawn_mounts_the_views_at_once(demo_url: str) -> None:
    app = make_app(demo_url, poll=30)
    read_now = app.read_now
    health_read = {"released": False}

    def slow_health(complete: bool = True) -> Any:
        while complete and not health_read["released"]:  # health's reading, on the poll worker, takes its time
            time.sleep(0.01)
        return read_now(complete)

    app.read_now = slow_health  # type: ignore[method-assign]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, lambda: app.reading is not None)
            assert not app._views_up and app._hidden_views is None
            await pilot.click("#--content-tab-health")
            await _until(pilot, lambda: len(app._views_up) == len(HIDDEN_VIEWS))
            assert app.query_one(TabbedContent).active == "health"
            assert len(app._views_up) == len(HIDDEN_VIEWS) and app.reading is not None and app.reading.health is None
            health_read["released"] = True
    finally:
        health_read["released"] = True


@synchronously
async def test_the_views_mounted_under_the_palette_are_filled_and_show_the_newest_reading_once_it_closes(
        demo_url: str) -> None:
    app = make_app(demo_url, poll=0.5)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")  # at once: the views mount, and the first poll's readings arrive, under it
        await _until(pilot, lambda: len(app._views_up) == len(HIDDEN_VIEWS) and app._pending is not None)
        assert len(app._views_up) == len(HIDDEN_VIEWS) and app._pending is not None
        await pilot.press("escape")
        await _until(pilot, lambda: app._pending is None, seconds=5)
        assert app._pending is None and app.reading is not None and app.reading.health is not None
        for table in TABLES_BEHIND_THE_TABS:
            assert app.query_one(table, DataTable).row_count > 0, table


@synchronously
async def test_a_view_mounted_while_the_palette_is_open_shows_the_reading_the_others_show(demo_url: str) -> None:
    app = make_app(demo_url, poll=30)  # no later reading: only the mount can fill the views
    started: dict[str, float] = {}
    _slowed_mount(app, started)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: "mounting" in started)
        await pilot.press("ctrl+p")
        await _until(pilot, lambda: len(app._views_up) == len(HIDDEN_VIEWS))
        assert isinstance(app.screen, ModalScreen) and app._pending is None
        await pilot.press("escape")
        await pilot.pause()
        for table in TABLES_BEHIND_THE_TABS:
            assert app.query_one(table, DataTable).row_count > 0, table


@synchronously
async def test_a_form_opened_right_after_the_palette_closes_is_built_on_the_reading_held_back_under_it(
        demo_url: str) -> None:
    app = make_app(demo_url, poll=30)  # no poll ends meanwhile: only opening the form can show the held reading
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: len(app._views_up) == len(HIDDEN_VIEWS))
        await pilot.press("ctrl+p")
        await pilot.pause()
        app.schedule.record_account(account="chatgpt", sequence=2, sign_in="owner@factory.example", overage=False,
                                    recorded_by="another writer")
        app.apply_reading(app.read_now())  # what the poll worker does when it sees the new head
        assert app._pending is not None
        await pilot.press("escape")
        await pilot.press("s")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, RecordAccountForm), form
        assert form.reading is not None and form.reading.head == app.journal.head(SCHEDULE_AGGREGATE)
        assert app._pending is None
