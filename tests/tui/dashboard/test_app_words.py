"""The dashboard's words and layout read as the owner means them: the night the timeline shows, a plan
that no longer waits, the versions a toast names, the host's own name, the gate's counts beside parking."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import pendulum
import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual.widgets import Input, Static

from factory_schedule.core import (
    LifecycleSchedule,
    ManualClock,
    lane_occurrence_on,
    parse_commission,
    proposed_commission,
)
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE
from factory_schedule.store import open_journal
from factory_schedule.tui.dashboard.app import build_app
from factory_schedule.tui.dashboard.reading import take_reading
from factory_schedule.tui.dashboard.widgets.header import header_text
from factory_schedule.tui.dashboard.widgets.lifecycle import flow
from factory_schedule.tui.dashboard.widgets.timeline import night_for, night_of, night_rows
from factory_schedule.tui.host.demo import DEMO_END, DEMO_HOST

from .test_app_journeys import SIZE, confirm_write, make_app, synchronously, tonight_cell


def _evening_lane_reading(tmp_path: Path, now: str):
    """A commission whose one lane's window is 20:00-23:00 London, read at `now`."""
    commission = proposed_commission(["alpha"], "2026-11-30", 5_000_000)
    lane = next(lane for lane in commission["lanes"] if lane["lane"] == "alpha/basic")
    commission["lanes"] = [{**lane, "time": "20:00", "closes": "23:00"}]
    journal = open_journal(f"sqlite:///{tmp_path / 'evening.db'}")
    clock = ManualClock("2026-11-29T12:00:00Z")
    schedule = LifecycleSchedule(journal, clock)
    schedule.record_commission(commission)
    return take_reading(journal, schedule, pendulum.instance(datetime.fromisoformat(now)), None, host=DEMO_HOST)


@pytest.mark.parametrize("now, night", [
    ("2026-12-01T21:00:00Z", "2026-12-01"),  # Tuesday evening, inside the window: Tuesday's night
    ("2026-12-01T10:00:00Z", "2026-12-01"),  # Tuesday morning: the next window to open is Tuesday's
    ("2026-12-01T23:30:00Z", "2026-12-02"),  # after the close: Wednesday's is next
])
def test_the_timeline_shows_the_night_that_holds_now_or_the_next_one(tmp_path: Path, now: str, night: str) -> None:
    shown, _rows = night_rows(_evening_lane_reading(tmp_path, now))
    assert shown.isoformat() == night


WINDOWS = st.tuples(st.integers(0, 22 * 60), st.integers(1, 8 * 60)).map(
    lambda window: (window[0], min(window[0] + window[1], 23 * 60 + 59)))


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


@given(windows=st.lists(WINDOWS, min_size=1, max_size=6), minutes=st.integers(0, 21 * 24 * 60))
def test_the_timeline_shows_the_night_whose_window_holds_now_else_the_night_of_the_next_window(
        windows: list[tuple[int, int]], minutes: int) -> None:
    """Every lane's window tonight and for a week ahead is a candidate: one that holds now wins, else the one
    that opens next; with none at all, the night the clock says."""
    commission = proposed_commission(["alpha", "bravo"], "2026-03-01", 5_000_000)
    commission["lanes"] = [{**lane, "time": _hhmm(opens), "closes": _hhmm(closes)}
                           for lane, (opens, closes) in zip(commission["lanes"], windows, strict=False)]
    parsed = parse_commission(commission)
    now = pendulum.datetime(2026, 3, 20, tz="UTC").add(minutes=minutes)  # London's clocks change on 29 March
    today = now.in_timezone(parsed.zone).date()
    candidates = [window for offset in range(-1, 8) for lane in parsed.lanes
                  if (window := lane_occurrence_on(parsed, lane.lane, today.add(days=offset))) is not None]
    holding = [window.date for window in candidates if window.slot <= now < window.closes]
    upcoming = sorted((window.slot, window.date) for window in candidates if window.slot > now)
    expected = holding[0] if holding else upcoming[0][1] if upcoming else night_of(now, parsed.zone)
    assert night_for(parsed, now, parsed.zone) == expected


@synchronously
async def test_after_a_sign_in_record_the_plan_no_longer_reads_as_waiting_for_one(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        await pilot.pause()
        await pilot.press("enter")
        await confirm_write(pilot)
        plan = tonight_cell(app, "beta/basic", "plan")
        assert plan.startswith("resumes") and "the new sign-in record is in" in plan, plan
        assert "after a new sign-in record" not in plan


@synchronously
async def test_a_decisions_toast_names_the_version_the_header_shows(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("v")
        await pilot.pause()
        app.screen.query_one("#decision", Input).value = "deny"
        await pilot.press("enter")
        await confirm_write(pilot)
        head = app.journal.head(PIPELINE_AGGREGATE)
        toast = [n.message for n in app._notifications][-1]
        assert f"lanes v{head}" in toast, toast
        assert f"lanes v{head}" in str(app.query_one("#header", Static).render())


@pytest.mark.skipif(sys.platform == "darwin", reason="a Mac is named a Mac")
def test_the_header_names_a_host_that_is_not_a_mac_this_host(demo_url: str) -> None:
    journal = open_journal(demo_url)
    reading = take_reading(journal, LifecycleSchedule(journal, ManualClock(DEMO_END)), DEMO_END, None, host=DEMO_HOST)
    text = header_text("journal.db", reading, "America/New_York").plain
    assert "(this host: America/New_York)" in text and "Mac" not in text


def test_the_gate_counts_say_apart_what_the_owner_parked(demo_url: str) -> None:
    from factory_schedule.core.pipeline import PipelineLanes

    journal = open_journal(demo_url)
    lanes = PipelineLanes(journal, ManualClock(DEMO_END))
    lanes.decide_escalation(lane="promotion", task=20, decided_by="owner", decision="park", reason="no testers")
    reading = take_reading(journal, LifecycleSchedule(journal, ManualClock(DEMO_END)), DEMO_END, None, host=DEMO_HOST)
    words = flow(reading).plain
    assert "PARK 0; 1 parked by the owner on an escalation" in words, words


@synchronously
async def test_the_ledger_shows_the_share_and_the_calls_in_flight_at_80_columns(demo_url: str) -> None:
    from .test_app_journeys import _screen_text

    app = make_app(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("l")
        await pilot.pause()
        screen = _screen_text(app)
        assert "in flight" in screen and "43.5%" in screen and "1 (150 000)" in screen, screen


@synchronously
async def test_at_80x24_tonight_shows_its_timeline_and_the_lanes_scroll_above_it(demo_url: str) -> None:
    """Nine lanes fill a 24-row terminal: the lanes' table keeps a few rows and scrolls, so the night's
    timeline (its heading and its first lanes) is on screen when Tonight opens, and the cursor still
    reaches the last lane."""
    from textual.widgets import DataTable

    from .test_app_journeys import _screen_text

    app = make_app(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lines = _screen_text(app).splitlines()
        heading = next((n for n, line in enumerate(lines) if "night of" in line), None)
        assert heading is not None, "\n".join(lines)
        below = [line for line in lines[heading + 1:-1] if "02:00" not in line and line.strip()]
        assert len(below) >= 3, "\n".join(lines)  # at least three of the timeline's lanes are on screen
        await pilot.press(*["down"] * 8)
        await pilot.pause()
        screen = _screen_text(app)
        assert "portfolio/bundle:" in screen, screen  # the selected lane's line
        assert " portfolio/bundle " in screen.split("portfolio/bundle:")[0], screen  # its row is in view
        assert app.query_one("#tonight-table", DataTable).cursor_row == 8


@synchronously
async def test_a_record_made_after_the_dashboards_now_reads_in_the_future_never_in_the_future_ago(
        demo_url: str) -> None:
    """The demo journal read at a moment before its records (a clock behind the journal's)."""
    app = build_app(demo_url, ManualClock(DEMO_END.subtract(days=30)), None, host=DEMO_HOST)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        await pilot.pause()
        record = str(app.screen.query_one("#current-record", Static).render())
        assert "recorded by" in record and record.endswith("in the future")
        assert "ago" not in record
