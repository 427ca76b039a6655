"""The owner's journeys through the dashboard, driven with Textual's pilot on the demo journal.

Each form calls the same core method a runner would; a refusal shows its code and
writes nothing (the journal's head does not move); another process's commit shows
up through the poll worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.coordinate import Coordinate
from textual.widgets import Button, DataTable, Input, Select, Static, TabbedContent
from textual.widgets._footer import FooterKey  # not exported by textual.widgets; the footer's one key

from factory_schedule.core import DEFAULT_ZONE, SCHEDULE_AGGREGATE, LifecycleSchedule, ManualClock
from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.store import JournalUnavailableError, open_journal
from factory_schedule.tui.dashboard.app import ScheduleApp, build_app
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.screens import base
from factory_schedule.tui.dashboard.screens.base import ScheduleForm
from factory_schedule.tui.dashboard.screens.commission import CommissionForm, difference
from factory_schedule.tui.dashboard.screens.confirm import ConfirmStep
from factory_schedule.tui.dashboard.widgets.header import HeaderBar
from factory_schedule.tui.dashboard.widgets.history import summary
from factory_schedule.tui.dashboard.widgets.timeline import GLYPHS
from factory_schedule.tui.host.demo import DEMO_END, DEMO_HOST, DEMO_JOURNAL_LABEL, KILLED, SIGN_IN_401

SIZE = (120, 40)
ROOT = Path(__file__).resolve().parents[3]


def synchronously(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async pilot test on its own event loop (the suite has no async plugin)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


def reading_of(app: ScheduleApp) -> Reading:
    """The app's latest reading, which the test expects it to have taken."""
    assert app.reading is not None, "the app has not read the journal yet"
    return app.reading


def commission_of(app: ScheduleApp) -> dict[str, Any]:
    """The commission in force in the app's latest reading, which the test expects there to be."""
    commission = reading_of(app).commission
    assert commission is not None, "no commission recorded"
    return commission


def make_app(url: str, poll: float | None = None) -> ScheduleApp:
    return build_app(url, ManualClock(DEMO_END), poll, host=DEMO_HOST, journal_label=DEMO_JOURNAL_LABEL)


def settings_revision(app: ScheduleApp) -> int:
    """The commission revision whose settings the staged lanes hold, in the app's latest reading."""
    pipeline = reading_of(app).pipeline
    assert pipeline is not None, "the staged lanes hold no settings"
    return pipeline.settings_revision


def plan_action(app: ScheduleApp, lane: str) -> str:
    return next(plan.action for plan in app.schedule.plan() if plan.lane == lane)


def cell(app: ScheduleApp, table: str, row: str, column: str) -> str:
    value = app.query_one(table, DataTable).get_cell(row, column)
    return getattr(value, "plain", str(value))


def tonight_cell(app: ScheduleApp, lane: str, column: str) -> str:
    return cell(app, "#tonight-table", lane, column)


def form_error(app: ScheduleApp) -> str:
    return str(app.screen.query_one("#form-error", Static).render())


async def confirm_write(pilot: Any) -> ConfirmStep:
    """Answer yes in the confirm step a form's submit shows, by keys: Enter on its focused Record button, or
    (a second look, whose Back button has the focus) Tab to the confirm button, then Enter."""
    await pilot.pause()
    step = pilot.app.screen
    assert isinstance(step, ConfirmStep), f"no confirm step was shown, but {step!r}"
    if step.confirmation.second_look:
        await pilot.press("tab")
    await pilot.press("enter")
    await pilot.pause()
    return step


@synchronously
async def test_recording_a_sign_in_turns_the_sign_in_deferred_plan_to_resume(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        assert plan_action(app, "beta/basic") == "wait"
        assert tonight_cell(app, "beta/basic", "plan") == "waits for a sign-in record"
        await pilot.press("s")
        await pilot.pause()
        form = app.screen
        assert form.query_one("#account", Select).value == "chatgpt"  # the account that refused the sign-in
        assert form.query_one("#sequence", Input).value == "2"  # the next sequence, prefilled
        await pilot.press(*"owner@factory.example")
        await pilot.press("enter")
        await confirm_write(pilot)
        assert not isinstance(app.screen, type(form))
        assert plan_action(app, "beta/basic") == "resume"
        assert tonight_cell(app, "beta/basic", "plan").startswith("resumes")
        plan = reading_of(app).plan_for("beta/basic")
        assert plan is not None and plan.occurrence_id == SIGN_IN_401


@synchronously
async def test_confirming_a_dead_runner_reconciles_it(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        assert app.schedule.status(KILLED).state == "running"
        await pilot.press("r")
        await pilot.pause()
        form = app.screen
        assert form.query_one("#runner", Input).value == "r-43"
        assert "4194999" in form.query_one("#evidence", Input).value  # the health check's lease evidence
        await pilot.press("enter")
        await confirm_write(pilot)
        assert app.schedule.status(KILLED).state == "interrupted"
        assert tonight_cell(app, "gamma/basic", "state") == "interrupted"
        view = app.schedule.read()
        assert view is not None
        occurrence = next(o for o in view.occurrences if o.id == KILLED)
        assert occurrence.calls[0].outcome == "lost"  # the call in flight ends as lost, never re-sent


async def _refused(app: ScheduleApp, pilot, key: str, fill: dict[str, str], expected: str) -> None:
    head = app.journal.head(SCHEDULE_AGGREGATE)
    await pilot.press(key)
    await pilot.pause()
    form = app.screen
    assert isinstance(form, ScheduleForm)
    for selector, value in fill.items():
        form.query_one(selector, Input).value = value
    await pilot.pause()
    form.submit()
    await pilot.pause()
    if isinstance(app.screen, ConfirmStep):  # the fields are valid: the engine answers once the owner confirms
        await confirm_write(pilot)
    assert app.screen is form, "a refused form stays open"
    assert expected in form_error(app)
    assert app.journal.head(SCHEDULE_AGGREGATE) == head
    await pilot.press("escape")
    await pilot.pause()
    assert app.journal.head(SCHEDULE_AGGREGATE) == head


@synchronously
async def test_a_bad_input_in_each_form_shows_the_error_and_writes_nothing(demo_url: str, tmp_path: Path) -> None:
    not_json = tmp_path / "commission.txt"
    not_json.write_text("lanes: many")
    bad_zone = tmp_path / "commission.json"
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        document = dict(commission_of(app), revision=3, zone="Mars/Olympus")
        bad_zone.write_text(json.dumps(document))
        await _refused(app, pilot, "s", {"#sign-in": ""}, "sign-in: needed")
        await _refused(app, pilot, "s", {"#sequence": "two"}, "sequence: a whole number is needed")
        await _refused(app, pilot, "s", {"#sequence": "5", "#sign-in": "owner@factory.example"}, "REVISION")
        await _refused(app, pilot, "s", {"#sequence": "1", "#sign-in": "other@factory.example"}, "CONFLICT")
        await _refused(app, pilot, "r", {"#evidence": "  "}, "evidence: needed")
        await _refused(app, pilot, "r", {"#runner": "r-999"}, "NOT_OWNER")

        head = app.journal.head(SCHEDULE_AGGREGATE)
        await pilot.press("c")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, CommissionForm)
        form.query_one("#path", Input).value = str(not_json)
        form.load_file()
        await pilot.pause()
        assert "is not JSON" in form_error(app)
        form.query_one("#path", Input).value = str(bad_zone)
        form.load_file()
        await pilot.pause()
        assert "INVALID" in form_error(app) and "zone" in form_error(app)
        form.submit()  # nothing previewed: nothing to record
        await pilot.pause()
        assert app.screen is form and isinstance(form, CommissionForm)
        form.query_one("#weekly-tokens", Input).value = "lots"
        form.use_proposed()
        await pilot.pause()
        assert "weekly ceiling" in form_error(app)
        await pilot.press("escape")
        assert app.journal.head(SCHEDULE_AGGREGATE) == head


async def _sign_in_to_confirm(pilot: Any) -> ScheduleForm:
    """Open the sign-in form, type a sign-in and press Enter: the form, its confirm step on its way."""
    await pilot.press("s")
    await pilot.pause()
    form = pilot.app.screen
    assert isinstance(form, ScheduleForm)
    await pilot.press(*"owner@factory.example")
    await pilot.press("enter")
    return form


@synchronously
async def test_a_journal_that_refuses_a_confirmed_write_is_said_in_the_form_and_the_dashboard_stays_open(
        demo_url: str) -> None:
    journal_file = Path(demo_url.removeprefix("sqlite:///"))
    journal_file.chmod(0o444)  # read-only: the journal opens, reads, and refuses every write
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        head = app.journal.head(SCHEDULE_AGGREGATE)
        form = await _sign_in_to_confirm(pilot)
        await confirm_write(pilot)
        assert app.screen is form
        assert form_error(app).startswith("The journal failed: ") and "read-only" in form_error(app)
        assert form_error(app).endswith("Enter tries again.")
        assert app.journal.head(SCHEDULE_AGGREGATE) == head
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ScheduleForm)
    assert app.return_code in (None, 0)


@synchronously
async def test_a_confirm_step_that_no_longer_holds_under_the_palette_records_nothing(demo_url: str) -> None:
    """Another writer records the account's next record while the command palette is over the confirm step, so the
    step is not taken back and the form moves to the record after it. Confirming the step records nothing: the
    owner never saw what the form would now record (an owner record would be signed with it)."""
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        while app.reading is None or app.reading.health is None:
            await pilot.pause(0.1)
        form = await _sign_in_to_confirm(pilot)
        await pilot.pause()
        assert isinstance(app.screen, ConfirmStep)
        await pilot.press("ctrl+p")
        await pilot.pause()
        other = LifecycleSchedule(open_journal(demo_url), ManualClock(DEMO_END))
        other.record_account(account="chatgpt", sequence=2, sign_in="other@factory.example", overage=False,
                             recorded_by="deputy")
        head = app.journal.head(SCHEDULE_AGGREGATE)
        for _ in range(50):
            await pilot.pause(0.1)
            if form.notice:
                break
        assert form.notice.startswith("Another writer recorded chatgpt record #2"), form.notice
        await pilot.press("escape")  # the palette closes: the confirm step that no longer holds is on top again
        await confirm_write(pilot)
        assert app.screen is form and form_error(app).startswith("What this form records changed"), form_error(app)
        assert app.journal.head(SCHEDULE_AGGREGATE) == head


@contextlib.contextmanager
def _write_lock_held(journal_file: Path) -> Iterator[None]:
    """Another connection holds the SQLite journal's write lock: a write waits for it (the journal's busy timeout
    is 30 s) until the block ends."""
    other_writer = sqlite3.connect(journal_file, isolation_level=None)
    other_writer.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other_writer.execute("ROLLBACK")
        other_writer.close()


@synchronously
async def test_a_form_whose_write_waits_stays_open_on_cancel_says_it_waits_and_keeps_another_writers_notice(
        demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "JOURNAL_QUIET_SECONDS", 0.2)  # the wait is said after 10 s; here sooner
    journal_file = Path(demo_url.removeprefix("sqlite:///"))
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        head = app.journal.head(SCHEDULE_AGGREGATE)
        form = await _sign_in_to_confirm(pilot)
        await pilot.pause()
        assert isinstance(app.screen, ConfirmStep)
        with _write_lock_held(journal_file):
            await pilot.press("enter")  # confirmed: the write starts and waits
            assert form.in_flight and app.screen is form
            form.query_one("#cancel", Button).focus()
            await pilot.press("enter")
            await asyncio.sleep(0.2)
            assert app.screen is form and not form.closed, "Cancel closed a form whose write was on its way"
            assert any(str(n.message).startswith("The write is on its way") for n in app._notifications)
            await asyncio.sleep(0.3)
            assert form.notice.startswith("Recording: the journal has not answered for "), form.notice
            form.show_notice("Another writer recorded chatgpt record #2")  # what `reading_moved` says
            await asyncio.sleep(0.5)
            assert form.notice == "Another writer recorded chatgpt record #2"
        await pilot.pause()  # the write lands; the form closes with what it recorded
        assert app.screen is not form
        assert app.journal.head(SCHEDULE_AGGREGATE) > head
        assert any(str(n.message).startswith("Recorded: chatgpt record #2") for n in app._notifications)


async def _proposed_for(app: ScheduleApp, pilot: Any, products: str) -> CommissionForm:
    """Open the commission form, type the Products and press Proposed: the form with its candidate."""
    await pilot.press("c")
    await pilot.pause()
    form = app.screen
    assert isinstance(form, CommissionForm)
    form.query_one("#products", Input).value = products
    form.use_proposed()
    await pilot.pause()
    return form


@synchronously
async def test_a_commission_revision_is_previewed_with_its_difference_then_recorded(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await _proposed_for(app, pilot, "alpha, beta, gamma, delta")
        candidate = form.candidate
        assert candidate is not None and candidate["revision"] == 3
        assert "+ lane delta/basic" in difference(commission_of(app), candidate)
        form.submit()
        await confirm_write(pilot)
        assert commission_of(app)["revision"] == 3
        assert "delta/basic" in app.query_one("#tonight-table", DataTable).rows



@synchronously
async def test_a_commission_write_that_fails_after_its_revision_landed_is_tried_again_as_the_same_revision(
        demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commission is two commands (the revision, then its settings for the staged lanes); the server lost
    between them leaves the revision recorded and the settings not. The form's own revision is not taken for
    another writer's: trying again replays it and records the settings, not a revision after it."""
    record_settings = PipelineLanes.record_settings
    lost: list[str] = []

    def lost_once(lanes: PipelineLanes, *args: Any, **kwargs: Any) -> Any:
        if not lost:
            lost.append("the server")
            raise JournalUnavailableError("the journal cannot be reached: the server closed the connection.")
        return record_settings(lanes, *args, **kwargs)

    monkeypatch.setattr(PipelineLanes, "record_settings", lost_once)
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        while app.reading is None or app.reading.health is None:  # the polling dashboard's first whole reading
            await pilot.pause(0.1)
        settings_before = settings_revision(app)
        form = await _proposed_for(app, pilot, "alpha, beta, gamma, delta")
        assert form.candidate is not None and form.candidate["revision"] == 3
        form.submit()
        await confirm_write(pilot)
        assert app.screen is form and form_error(app).startswith(
            "The journal failed: commission revision 3 is recorded; its settings for the staged lanes may not be")
        for _ in range(50):  # the next poll reads revision 3
            await pilot.pause(0.1)
            if commission_of(app)["revision"] == 3 and form.notice:
                break
        landed = "Commission revision 3 is recorded: this form's write landed before it failed."
        assert form.notice.startswith(landed), form.notice
        assert form.candidate["revision"] == 3 and form_error(app).startswith("The journal failed")
        form.submit()
        await confirm_write(pilot)
        assert app.screen is not form
        assert commission_of(app)["revision"] == 3
        assert settings_revision(app) == 3 != settings_before
        assert any("Recorded commission revision 3" in str(n.message) for n in app._notifications)


WRITER = """
import sys
from factory_schedule.core import LifecycleSchedule, ManualClock
from factory_schedule.store import open_journal
from factory_schedule.tui.dashboard.screens.commission import difference
from factory_schedule.tui.host.demo import DEMO_END
schedule = LifecycleSchedule(open_journal(sys.argv[1]), ManualClock(DEMO_END))
schedule.record_account(account="chatgpt", sequence=2, sign_in="second@factory.example", overage=False,
                        recorded_by="another process")
"""


@synchronously
async def test_a_commit_by_another_process_appears_in_the_view(demo_url: str) -> None:
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        for _ in range(100):
            await pilot.pause(0.05)
            if app.reading is not None:
                break
        before = reading_of(app).head
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        subprocess.run([sys.executable, "-c", WRITER, demo_url], check=True, env=env, cwd=ROOT, timeout=60)
        started = time.monotonic()
        while reading_of(app).head == before and time.monotonic() - started < 10:
            await pilot.pause(0.05)
        assert reading_of(app).head > before
        assert time.monotonic() - started < 5
        assert cell(app, "#accounts-table", "chatgpt", "sequence") == "#2"
        assert cell(app, "#accounts-table", "chatgpt", "by") == "another process"
        history = app.query_one("#history-table", DataTable)
        newest = history.coordinate_to_cell_key(Coordinate(0, 0)).row_key.value
        assert newest is not None and int(newest) == reading_of(app).head


@synchronously
async def test_the_cursor_stays_on_its_row_when_the_view_refreshes(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        table = app.query_one("#occurrences-table", DataTable)
        table.move_cursor(row=table.get_row_index("discovery/beta/basic/2026-12-16"))
        app.schedule.record_account(
            account="chatgpt", sequence=2, sign_in="x@factory.example", overage=False, recorded_by="owner"
        )
        app.refresh_reading(force=True)
        await pilot.pause()
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        assert key == "discovery/beta/basic/2026-12-16"


@synchronously
async def test_a_corrupt_state_shows_its_code_and_history_still_reads(demo_file: Path, tmp_path: Path) -> None:
    import sqlite3

    copy = tmp_path / "journal.db"
    shutil.copy(demo_file, copy)
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE aggregates SET state = '{\"protocol\": \"sf-lifecycle-schedule/1\"}'")
        db.execute("DELETE FROM state_parts")  # every state whole, as written
    app = make_app(f"sqlite:///{copy}")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h")
        banner = str(app.query_one("#banner", Static).render())
        assert "CORRUPT" in banner
        assert app.query_one("#history-table", DataTable).row_count > 0


@synchronously
async def test_status_answers_for_any_occurrence_id_typed_in(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        app.query_one("#status-id").focus()
        await pilot.press(*"alpha/basic/2026-12-17", "enter")
        await pilot.pause()
        answer = str(app.query_one("#status-answer", Static).render())
        assert "state coalesced" in answer and "coalesced into discovery/alpha/basic/2026-12-19" in answer
        app.query_one("#status-id", Input).focus()
        app.query_one("#status-id", Input).value = "discovery/nope"
        await pilot.press("enter")
        await pilot.pause()
        assert "INVALID" in str(app.query_one("#status-answer", Static).render())


@synchronously
async def test_history_pages_back_and_returns_to_the_live_page(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h")
        table = app.query_one("#history-table", DataTable)
        assert table.coordinate_to_cell_key(Coordinate(0, 0)).row_key.value == "315"
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert table.coordinate_to_cell_key(Coordinate(0, 0)).row_key.value == "265"
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert table.coordinate_to_cell_key(Coordinate(0, 0)).row_key.value == "315"
        assert app.history_before is None


@pytest.mark.parametrize("view_key", ["t", "p", "o", "l", "a", "h", "e"])
@synchronously
async def test_every_footer_key_fits_at_120_columns_in_each_view(demo_url: str, view_key: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(view_key, *(["escape"] if view_key == "o" else []))  # Occurrences opens in its ID box
        await pilot.pause()
        keys = {key.key: key.region for key in app.query(FooterKey)}
        assert {"t", "p", "o", "l", "a", "h", "e", "s", "question_mark"} <= set(keys)
        for key, region in keys.items():
            assert region.right <= SIZE[0], f"{key} ends at column {region.right}"
        await pilot.press("question_mark")
        await pilot.pause()
        console = Console(width=80, record=True, file=io.StringIO())
        for widget in app.query("KeyPanel *"):
            console.print(widget.render())
        assert "palette" in console.export_text()


def test_the_history_summary_leaves_out_what_the_command_id_already_shows() -> None:
    command = "discovery/alpha/basic/2026-12-20/call/4/end"
    data = {"occurrence": "discovery/alpha/basic/2026-12-20", "outcome": "lost", "runner": "r-1"}
    assert summary(data, command) == "runner=r-1 outcome=lost"
    assert summary(data) == "occurrence=discovery/alpha/basic/2026-12-20 runner=r-1 outcome=lost"


@synchronously
async def test_the_command_palette_opens_views_and_forms_by_name(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Show Ledger")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one("#views", TabbedContent).active == "ledger"
        await pilot.press("ctrl+p")
        await pilot.press(*"Record a sign-in")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert type(app.screen).__name__ == "RecordAccountForm"


@synchronously
async def test_nothing_repaints_while_a_form_is_open(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        shown = reading_of(app).head
        await pilot.press("s")
        app.schedule.record_account(  # as if another process committed while the owner types
            account="chatgpt", sequence=2, sign_in="x@factory.example", overage=False, recorded_by="owner"
        )
        app.refresh_reading(force=True)
        await pilot.pause()
        assert reading_of(app).head == shown
        await pilot.press("escape")
        await pilot.pause()
        assert reading_of(app).head > shown
        assert cell(app, "#accounts-table", "chatgpt", "sequence") == "#2"


@synchronously
async def test_the_polling_dashboard_paints_a_quick_reading_first_then_health_and_the_settled_calls(
        demo_url: str) -> None:
    app = make_app(demo_url, poll=30)
    applied: list[Any] = []
    apply = app.apply_reading

    def recording(reading: Any) -> None:
        applied.append(reading)
        apply(reading)

    app.apply_reading = recording  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        started = time.monotonic()
        while (not applied or applied[-1].health is None) and time.monotonic() - started < 20:
            await pilot.pause(0.05)
        first, last = applied[0], applied[-1]
        assert (first.health, first.records) == (None, {}), "the first paint waits for neither"
        assert last.health is not None and last.health.verified is not None
        settled = "discovery/alpha/basic/2026-12-16"
        assert [call.k for call in last.records[settled].calls] == [1, 2, 3]
        await pilot.press("o")
        table = app.query_one("#occurrences-table", DataTable)
        table.move_cursor(row=table.get_row_index(settled))
        await pilot.pause()
        console = Console(width=120, record=True)
        console.print(app.query_one("#occurrence-detail", Static).content)
        detail = console.export_text()
        assert "scan-1" in detail and "reading them" not in detail


@pytest.mark.postgres
@synchronously
async def test_the_header_never_shows_the_journal_password(postgres_url: str) -> None:
    from sqlalchemy.engine import make_url

    with_password = make_url(postgres_url).set(password="s3cret-word").render_as_string(hide_password=False)
    app = build_app(with_password, ManualClock(DEMO_END), None, host=DEMO_HOST)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        header = str(app.query_one(HeaderBar).render())
        assert "***" in header and "s3cret-word" not in header


def _record_sign_in(app: ScheduleApp, sequence: int) -> None:
    """A command as another process would commit it while the dashboard is open, then a poll's read."""
    app.schedule.record_account(account="chatgpt", sequence=sequence, sign_in="owner@factory.example",
                                overage=False, recorded_by="owner")
    app.refresh_reading(force=True)


@synchronously
async def test_history_keeps_the_newest_events_in_view_as_they_arrive(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h")
        await pilot.pause()
        _record_sign_in(app, 2)
        await pilot.pause()
        await pilot.press("t")
        _record_sign_in(app, 3)  # and one while another view is in front
        await pilot.pause()
        await pilot.press("h")
        await pilot.pause()
        table = app.query_one("#history-table", DataTable)
        head = app.journal.head(SCHEDULE_AGGREGATE)
        assert table.coordinate_to_cell_key(Coordinate(0, 0)).row_key.value == str(head)
        assert table.scroll_y == 0, "the newest rows are scrolled out of view"
        assert table.cursor_row == 0, "the cursor follows the newest event"
        caption = str(app.query_one("#history-where", Static).render())
        assert caption.startswith(f"Events {head}–")


@synchronously
async def test_readings_that_arrive_while_the_views_behind_the_tabs_mount_show_in_each_once_it_is_up(
        demo_url: str) -> None:
    """The views behind the tabs mount after the first paint, while readings keep arriving (the chain check's,
    another process's commits): a reading never reaches a view whose table is not up yet, and each view shows
    the newest reading once it is up."""
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        mounting = asyncio.ensure_future(app.views_up())
        sequence = 1
        while not mounting.done():
            sequence += 1
            _record_sign_in(app, sequence)
            await asyncio.sleep(0)
        await mounting
        await pilot.pause()
        assert sequence > 2, "every view was up before the first reading after the first paint"
        table = app.query_one("#accounts-table", DataTable)
        shown = [str(value) for key in table.rows for value in table.get_row(key)]
        assert any(f"#{sequence}" in value for value in shown), shown


@synchronously
async def test_occurrences_opened_after_the_dashboard_started_appear_in_order(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.clock, ManualClock)
        app.clock.set("2026-12-20T04:00:00Z")  # the bundle's slot: portfolio/bundle/2026-W51 opens
        tick = app.schedule.start(lane="portfolio/bundle", runner="r-bundle")
        assert tick.kind == "admitted"
        app.refresh_reading(force=True)
        await pilot.pause()
        table = app.query_one("#occurrences-table", DataTable)
        shown = [table.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value for row in range(table.row_count)]
        from factory_schedule.tui.dashboard.widgets.occurrences import occurrence_rows

        assert shown == list(occurrence_rows(reading_of(app)))
        assert tick.occurrence is not None
        assert shown.index(tick.occurrence.id) < shown.index("discovery/alpha/basic/2026-12-16")  # open before settled


def _screen_text(app: ScheduleApp) -> str:
    """What the terminal shows, line by line (the app's own screenshot, as text)."""
    console = Console(width=app.size.width, height=app.size.height, record=True, file=io.StringIO())
    console.print(app.screen._compositor.render_update(full=True))  # the composed screen, as the terminal gets it
    return console.export_text()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@synchronously
async def test_each_lanes_reason_to_wait_reads_in_full(demo_url: str, size: tuple[int, int]) -> None:
    from factory_schedule.tui.dashboard.words import plan_words

    app = make_app(demo_url)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        # the longest reasons: a sign-in recorded after a 401, a dead runner confirmed
        _record_sign_in(app, 2)
        app.schedule.reconcile(occurrence_id=KILLED, confirmation={
            "runner": "r-43", "confirmedBy": "supervisor", "evidence": "its process is gone"})
        app.refresh_reading(force=True)
        await pilot.pause()
        table = app.query_one("#tonight-table", DataTable)
        reading = reading_of(app)
        assert "after the confirmed interruption" in tonight_cell(app, "gamma/basic", "plan")
        for row, lane in enumerate(lane.lane for lane in reading.lanes):
            table.move_cursor(row=row)
            await pilot.pause()
            state = reading.lane_state(lane)
            words = plan_words(reading.plan_for(lane), state.open if state else None, reading.now,
                               reading.zone or "UTC")  # the zone the view uses
            screen = " ".join(_screen_text(app).split())
            assert words in screen, f"{lane}: {words!r} is not on screen"


@synchronously
async def test_the_header_shows_the_whole_journal_path_at_80_columns(demo_url: str) -> None:
    label = "sqlite:////Users/owner/Library/Application Support/factory-schedule/journal.db"
    app = build_app(demo_url, ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label=label)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = " ".join(_screen_text(app).split())
        assert " ".join(label.split()) in screen


@synchronously
async def test_the_selected_health_finding_reads_in_full_at_80_columns(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("e")
        await pilot.pause()
        table = app.query_one("#health-table", DataTable)
        health = reading_of(app).health
        assert health is not None
        for row, finding in enumerate(health.findings):
            table.move_cursor(row=row)
            await pilot.pause()
            screen = " ".join(_screen_text(app).split())
            words = finding.message.split()
            assert " ".join(words[:12]) in screen, f"{finding.kind}: its finding is cut"


@synchronously
async def test_the_sign_in_form_shows_the_current_sign_in_and_warns_on_another_identity(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        await pilot.pause()
        form = app.screen
        current = str(form.query_one("#current-record", Static).render())
        assert "owner@factory.example" in current and "#1" in current
        assert form.query_one("#sign-in", Input).value == "owner@factory.example"
        assert "example.com" not in form.query_one("#sign-in", Input).placeholder
        assert str(form.query_one("#sign-in-warning", Static).render()).strip() == ""
        await pilot.press(*"someone@else.example")
        await pilot.pause()
        warning = str(form.query_one("#sign-in-warning", Static).render())
        assert "differs" in warning and "owner@factory.example" in warning
        await pilot.press("enter")
        step = await confirm_write(pilot)
        assert "sign-in owner@factory.example → someone@else.example" in " ".join(step.confirmation.changes)
        view = reading_of(app).view
        assert view is not None
        record = view.accounts[1].record
        assert record is not None and record.sign_in == "someone@else.example"


@synchronously
async def test_the_sign_in_form_of_a_new_journal_suggests_no_made_up_address(tmp_path: Path) -> None:
    app = build_app(f"sqlite:///{tmp_path / 'empty.db'}", ManualClock(DEMO_END), None, host=DEMO_HOST)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        await pilot.pause()
        form = app.screen
        assert "@" not in form.query_one("#sign-in", Input).placeholder
        assert "no record yet" in str(form.query_one("#current-record", Static).render())


def _keys_shown(app: ScheduleApp) -> bool:
    return bool(app.screen.query("HelpPanel"))


@synchronously
async def test_f1_and_question_mark_show_the_keys_and_escape_hides_them(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        for key in ("f1", "question_mark"):
            await pilot.press(key)
            await pilot.pause()
            assert _keys_shown(app), f"{key} shows no keys"
            await pilot.press("escape")
            await pilot.pause()
            assert not _keys_shown(app), "escape leaves the keys panel open"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Keys")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert _keys_shown(app)
        await pilot.press("escape")
        await pilot.pause()
        assert not _keys_shown(app), "the palette's Keys panel does not close with escape"


@synchronously
async def test_the_palette_shows_each_commands_key(demo_url: str) -> None:
    from factory_schedule.tui.dashboard.palette import DashboardCommands

    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        provider = DashboardCommands(app.screen)
        hits = [hit async for hit in provider.discover()]
        said = {hit.text: hit.help or "" for hit in hits}
        assert said["Show Ledger"].startswith("key l ·")
        assert said["Record a sign-in record"].startswith("key s ·")
        assert said["Confirm an interrupted runner"].startswith("key r ·")


@synchronously
async def test_q_quits(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
        await pilot.pause()
        assert app._exit, "q did not quit"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@synchronously
async def test_the_commission_forms_buttons_are_on_screen(demo_url: str, size: tuple[int, int]) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=size) as pilot:
        await pilot.press("c")
        await pilot.pause()
        screen = _screen_text(app)
        assert "Cancel (Esc)" in screen and "Record this revision" in screen


@synchronously
async def test_the_first_commission_has_no_ceiling_until_the_owner_types_one(tmp_path: Path) -> None:
    app = build_app(f"sqlite:///{tmp_path / 'empty.db'}", ManualClock(DEMO_END), None, host=DEMO_HOST)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, CommissionForm)
        assert form.query_one("#weekly-tokens", Input).value == ""
        assert form.candidate is None
        assert form_error(app).strip() == "", "the form opens without an error"
        form.query_one("#weekly-tokens", Input).value = "12 000 000"
        form.use_proposed()
        await pilot.pause()
        assert form.candidate is not None and form.candidate["weeklyTokens"] == 12_000_000


@pytest.mark.parametrize(("host_zone", "proposed"), [("America/Chicago", "America/Chicago"), (None, DEFAULT_ZONE)])
@synchronously
async def test_the_first_commission_is_proposed_in_this_machines_zone(tmp_path: Path, host_zone: str | None,
                                                                     proposed: str) -> None:
    """As `commission new` proposes it: an owner in Chicago gets lanes from 02:00 in Chicago, not London's; a
    machine whose zone is unknown gets the proposal's default."""
    app = build_app(f"sqlite:///{tmp_path / 'empty.db'}", ManualClock(DEMO_END), None, host_zone, host=DEMO_HOST)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, CommissionForm)
        form.query_one("#weekly-tokens", Input).value = "12000000"
        form.use_proposed()
        await pilot.pause()
        assert form.candidate is not None and form.candidate["zone"] == proposed


@synchronously
async def test_the_timeline_tells_done_deferred_and_interrupted_apart_by_glyph(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        app.schedule.reconcile(occurrence_id=KILLED, confirmation={
            "runner": "r-43", "confirmedBy": "supervisor", "evidence": "its process is gone"})
        app.refresh_reading(force=True)
        await pilot.pause()
        lines = str(app.query_one("#timeline").render()).splitlines()
        legend = lines[-1]
        glyph = {kind: _legend_glyph(legend, kind) for kind in ("running", "done", "deferred", "interrupted")}
        assert len(set(glyph.values())) == 4, f"the legend shares glyphs: {glyph}"
        rows = {line.split()[0]: line for line in lines[1:-1] if line.split()}
        assert glyph["deferred"] in rows["alpha/basic"]  # hit the usage limit tonight
        assert glyph["interrupted"] in rows["gamma/basic"]  # its runner confirmed dead
        assert glyph["done"] in rows["portfolio/audit"]  # settled tonight


@synchronously
async def test_the_timeline_on_screen_follows_a_command_that_changes_tonights_segments(demo_url: str) -> None:
    """The chart is drawn again when a reading changes what it shows (and only then): a runner confirmed dead
    turns its segment interrupted on screen, not only in a fresh render."""
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()

        def gamma_on_the_chart() -> str:
            return next(line for line in _screen_text(app).splitlines()
                        if line.strip().startswith("gamma/basic") and ("─" in line or "█" in line))

        interrupted = GLYPHS["interrupted"]
        assert interrupted not in gamma_on_the_chart()
        _record_sign_in(app, 2)  # a command that leaves the chart as it is
        await pilot.pause()
        app.schedule.reconcile(occurrence_id=KILLED, confirmation={
            "runner": "r-43", "confirmedBy": "supervisor", "evidence": "its process is gone"})
        app.refresh_reading(force=True)
        await pilot.pause()
        assert interrupted in gamma_on_the_chart()


def _legend_glyph(legend: str, kind: str) -> str:
    """The glyph the timeline's legend gives `kind`."""
    found = re.search(rf"(\S) {kind}\b", legend)
    assert found is not None, f"the legend has no {kind}: {legend!r}"
    return found.group(1)


def _finding_kinds(app: ScheduleApp) -> list[str]:
    health = reading_of(app).health
    assert health is not None
    return [finding.kind for finding in health.findings]


@synchronously
async def test_confirming_a_dead_runner_also_removes_its_released_lease(demo_url: str) -> None:
    from factory_schedule.store import leases

    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        assert "dead-runner" in _finding_kinds(app)
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("enter")
        await confirm_write(pilot)
        assert app.schedule.status(KILLED).state == "interrupted"
        assert "stale-lease-segment-ended" not in _finding_kinds(app)
        assert "dead-runner" not in _finding_kinds(app)
        assert not [lease for lease in leases.list_leases(app.journal) if KILLED in lease.scope]


@synchronously
async def test_healths_x_makes_the_repairs_of_health_repair_and_is_offered_only_while_one_is_due(
        demo_url: str) -> None:
    """The demo's killed runner is provably gone on this host (no such process, no heartbeat for 2 x TTL):
    x reconciles it as health --repair would, journaled, removes its lease, and is then no longer offered."""
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        await pilot.pause()
        assert "x" in app.screen.active_bindings, "a conclusive dead runner is a repair x can make"
        await pilot.press("x")
        await pilot.pause()
        assert app.schedule.status(KILLED).state == "running", "nothing is repaired before the owner confirms"
        await confirm_write(pilot)
        await pilot.pause()
        assert app.schedule.status(KILLED).state == "interrupted"
        assert not [kind for kind in _finding_kinds(app) if kind.startswith("stale-lease")]
        assert "x" not in app.screen.active_bindings, "x is offered with nothing left to repair"


@synchronously
async def test_healths_repairs_wait_for_the_journal_off_the_ui_thread(demo_url: str) -> None:
    """A repair whose journal write waits leaves the screen answering the owner's keys; it lands afterwards."""
    journal_file = Path(demo_url.removeprefix("sqlite:///"))
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmStep)
        with _write_lock_held(journal_file):
            await pilot.press("enter")  # confirmed: the repairs start and wait
            await pilot.press("l")
            assert app.query_one(TabbedContent).active == "ledger", "the screen did not answer while a repair waited"
            assert app.schedule.status(KILLED).state == "running"
        await pilot.pause()
        assert app.schedule.status(KILLED).state == "interrupted"


@synchronously
async def test_the_arrow_keys_move_through_tonights_lanes_from_the_start(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("down")
        await pilot.pause()
        assert str(app.query_one("#tonight-why", Static).render()).startswith("alpha/full:")


@synchronously
async def test_a_proposed_revision_keeps_the_current_lanes_of_the_products_it_keeps(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await _proposed_for(app, pilot, "alpha, beta, gamma, delta")
        assert form.candidate is not None
        changes = difference(commission_of(app), form.candidate)
        assert "+ lane delta/basic" in changes
        assert not [line for line in changes if line.startswith("~ lane")], changes  # beta stays on chatgpt
