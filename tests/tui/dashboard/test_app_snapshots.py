"""Snapshots of every view and every form at 120x40, on the demo journal with the demo's fixed clock.

Deterministic by construction: the demo is seeded and ends at a fixed instant, the
clock is a ManualClock at that instant, the host and the journal's label are fixed,
and there is no polling (the app reads once on mount and after a form).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from factory_schedule.core import SCHEDULE_AGGREGATE, ManualClock
from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.tui.dashboard.app import ScheduleApp, build_app
from factory_schedule.tui.dashboard.screens.base import ScheduleForm
from factory_schedule.tui.host.demo import DEMO_END, DEMO_HOST, DEMO_JOURNAL_LABEL
from factory_schedule.tui.host.demo_lanes import APPROVAL
from tests.store.forgery import reseal_head
from tests.tui.dashboard.test_app_journeys import confirm_write

SIZE = (120, 40)


@pytest.fixture
def demo_app(demo_url: str) -> ScheduleApp:
    return build_app(demo_url, ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label=DEMO_JOURNAL_LABEL)


@pytest.mark.parametrize("view", ["t", "p", "o", "l", "a", "h", "e"])
def test_each_view_renders_the_demo_night(snap_compare, demo_app, view: str) -> None:
    assert snap_compare(demo_app, press=[view], terminal_size=SIZE)


@pytest.mark.parametrize("form", ["s", "r", "c", "v", "d"])
def test_each_form_opens_prefilled(snap_compare, demo_app, form: str) -> None:
    assert snap_compare(demo_app, press=[form], terminal_size=SIZE)


def test_a_refused_sign_in_record_shows_the_code_and_message(snap_compare, demo_app) -> None:
    """Sequence 1 again for chatgpt: the engine refuses it, the form says why and stays open."""

    async def run_before(pilot) -> None:
        await pilot.press("s")
        form = pilot.app.screen
        for selector, value in (("#sequence", "5"), ("#sign-in", "owner@factory.example")):
            field = form.query_one(selector)
            field.value = value
            field.action_end()  # no selection left behind: the picture must not depend on timing
        await pilot.pause()
        form.submit()
        await pilot.pause()
        form.query_one("#sign-in").action_end()
        await pilot.pause()

    assert snap_compare(demo_app, terminal_size=SIZE, run_before=run_before)


def test_a_refused_approval_shows_the_code_and_message(snap_compare, demo_app) -> None:
    """Another writer refused the request while the form was open: the engine refuses the form's approval
    (CONFLICT, nothing written), and the form says so and stays open."""

    async def run_before(pilot) -> None:
        await pilot.press("v")
        other = PipelineLanes(pilot.app.journal, ManualClock(DEMO_END))
        other.decide_approval(approval=APPROVAL, decided_by="owner-phone", approved=False)
        await pilot.press(*"approve")
        await pilot.pause()
        pilot.app.screen.submit()
        await confirm_write(pilot)  # the second look of a public approval, answered yes: the engine refuses
        assert isinstance(pilot.app.screen, ScheduleForm), "the refused form stays open"

    assert snap_compare(demo_app, terminal_size=SIZE, run_before=run_before)


def test_the_occurrence_detail_shows_a_coalesced_range(snap_compare, demo_app) -> None:
    async def run_before(pilot) -> None:
        await pilot.press("o")
        table = pilot.app.query_one("#occurrences-table")
        table.move_cursor(row=table.get_row_index("discovery/alpha/basic/2026-12-19"))
        await pilot.pause()

    assert snap_compare(demo_app, terminal_size=SIZE, run_before=run_before)


def test_an_empty_journal_shows_what_to_do_first(snap_compare, tmp_path: Path) -> None:
    app = build_app(
        f"sqlite:///{tmp_path / 'empty.db'}", ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label="sqlite:///empty.db"
    )
    assert snap_compare(app, terminal_size=SIZE)


def test_a_corrupt_state_shows_a_banner_and_keeps_history(snap_compare, demo_file: Path, tmp_path: Path) -> None:
    copy = tmp_path / "journal.db"
    shutil.copy(demo_file, copy)
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE aggregates SET state = '{\"protocol\": \"sf-lifecycle-schedule/1\"}'")
        db.execute("DELETE FROM state_parts")  # every state whole, as written
        reseal_head(db, SCHEDULE_AGGREGATE)  # past the journal's seal, so the banner shows the engine's own check
    app = build_app(f"sqlite:///{copy}", ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label=DEMO_JOURNAL_LABEL)
    assert snap_compare(app, press=["h"], terminal_size=SIZE)


@pytest.mark.parametrize("form", ["s", "r", "c", "v", "d"])
def test_each_form_opens_with_its_decision_on_screen_at_80x24(snap_compare, demo_app, form: str) -> None:
    assert snap_compare(demo_app, press=[form], terminal_size=(80, 24))


@pytest.mark.parametrize("keys", [
    ("s", "enter"),  # a sign-in record: its values and the difference from the record in force
    ("s", "tab", "tab", "tab", "space", "enter"),  # overage on: the second look, Back focused
    ("r", "enter"),  # a dead runner: the lost call named
    ("d", *"park", "tab", *"no testers", "enter"),  # park: never selected again
    ("v", *"approve", "enter"),  # a public publish: the second look
], ids=["sign-in", "overage-on", "reconcile", "park", "approve"])
def test_each_confirm_step_shows_what_will_be_recorded(snap_compare, demo_app, keys: tuple[str, ...]) -> None:
    assert snap_compare(demo_app, press=list(keys), terminal_size=(80, 24))
