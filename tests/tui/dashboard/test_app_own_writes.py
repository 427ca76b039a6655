"""A form's own write is never called another writer's.

A write can land and its answer still be lost (the server gone after the commit): the form shows the journal's
failure and stays open, and the next reading shows what it recorded. Each form knows what its write asked, so it
says that its own write landed, keeps what it showed, and Enter replays the write (nothing is recorded twice)
and closes it. Before, the sign-in form moved on to the next sequence and said another writer had recorded the
owner's own record, and the approval form said another writer had decided the owner's own approval.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Select

from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineLanes
from factory_schedule.store import JournalUnavailableError
from factory_schedule.tui.dashboard.app import ScheduleApp
from factory_schedule.tui.dashboard.screens.base import ScheduleForm
from factory_schedule.tui.dashboard.screens.confirm import ConfirmStep

from .test_app_journeys import SIZE, confirm_write, form_error, make_app, synchronously
from .test_app_lifecycle import type_into


@dataclass(frozen=True)
class OwnWrite:
    """A form and the core call its write makes, with what the owner types and what the form then says."""

    key: str  # opens the form
    typed: tuple[tuple[str, str], ...]  # (field, text) typed in before Enter
    owner: type  # the core class whose method the write calls
    method: str
    aggregate: str
    landed: str  # how the form's notice starts once the reading shows the write landed


CASES = {
    "sign-in": OwnWrite("s", (("#sign-in", "owner@factory.example"),), LifecycleSchedule, "record_account",
                        SCHEDULE_AGGREGATE, "chatgpt record #2 is recorded: this form's write landed before it"),
    "reconcile": OwnWrite("r", (), LifecycleSchedule, "reconcile", SCHEDULE_AGGREGATE,
                          "The confirmation that runner r-43 is gone is recorded: this form's write landed"),
    "approval": OwnWrite("v", (("#decision", "approve"),), PipelineLanes, "decide_approval", PIPELINE_AGGREGATE,
                         "The decision on publish-moss-garden (approved by owner) is recorded: this form's write"),
    # A task's done record does not keep the reason: the form cannot tell its own park from another writer's.
    "escalation": OwnWrite("d", (("#decision", "park"), ("#reason", "no testers")), PipelineLanes,
                           "decide_escalation", PIPELINE_AGGREGATE,
                           "promotion task 20 (pocket-farm) was decided park by owner, as this form's write asked, "
                           "after it failed: if that write landed, Enter replays it"),
}


def answered_late(monkeypatch: pytest.MonkeyPatch, case: OwnWrite, *, lost: bool = True,
                  held: threading.Event | None = None, committed: threading.Event | None = None) -> None:
    """The form's write lands; its answer is lost the first time (`lost`), as when the server goes away after the
    commit, and with `held` it waits until that is set (`committed` set as it starts waiting)."""
    real = getattr(case.owner, case.method)
    losing = [lost]

    def landed(self: Any, *args: Any, **kwargs: Any) -> Any:
        answer = real(self, *args, **kwargs)
        if committed is not None:
            committed.set()
        if held is not None:
            held.wait(20)
        if losing[0]:
            losing[0] = False
            raise JournalUnavailableError("the journal cannot be reached: the server closed the connection.")
        return answer

    monkeypatch.setattr(case.owner, case.method, landed)


async def sign_in_sent(app: ScheduleApp, pilot: Any) -> ScheduleForm:
    """The sign-in form, filled in and confirmed by keys with no pause after (a pause would wait for its write)."""
    await pilot.press("s")
    await pilot.pause()
    form = app.screen
    assert isinstance(form, ScheduleForm)
    await type_into(pilot, "#sign-in", "owner@factory.example")
    form.submit()
    await pilot.pause()
    await pilot.press("enter")  # the confirm step's Record
    return form


@asynccontextmanager
async def sign_in_on_its_way(demo_url: str, monkeypatch: pytest.MonkeyPatch
                             ) -> AsyncIterator[tuple[ScheduleApp, Any, ScheduleForm, Callable[[], Awaitable[None]]]]:
    """The polling dashboard with the sign-in form's write landed and its answer held back: (the app, its pilot, the
    form, and `lose_answer`, which lets the answer come back lost and waits until the form says its write landed).
    The answer is let go when the block ends, whatever happened in it."""
    held, committed = threading.Event(), threading.Event()
    answered_late(monkeypatch, CASES["sign-in"], held=held, committed=committed)
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        form = await sign_in_sent(app, pilot)
        while not committed.is_set():
            await asyncio.sleep(0.02)

        async def lose_answer() -> None:
            held.set()
            assert (await notice_within(pilot, form, 3.0)).startswith(CASES["sign-in"].landed), form.notice

        try:
            yield app, pilot, form, lose_answer
        finally:
            held.set()


async def read_while_on_its_way(app: ScheduleApp, head: int) -> None:
    """Wait (asyncio's own sleep: the screen runs, the write waits) until the poll has read the write; a form
    being open, the reading is held back for it."""
    for _ in range(100):
        await asyncio.sleep(0.05)
        if app._pending is not None and app._pending.head > head:
            return
    raise AssertionError("the poll did not read the write")


async def notice_within(pilot: Any, form: ScheduleForm, seconds: float = 5.0) -> str:
    for _ in range(int(seconds / 0.1)):
        await pilot.pause(0.1)
        if form.notice:
            break
    return form.notice


async def first_whole_reading(app: ScheduleApp, pilot: Any) -> None:
    while app.reading is None or app.reading.health is None:
        await pilot.pause(0.1)


async def open_and_confirm(app: ScheduleApp, pilot: Any, case: OwnWrite) -> ScheduleForm:
    await pilot.press(case.key)
    await pilot.pause()
    form = app.screen
    assert isinstance(form, ScheduleForm)
    for selector, text in case.typed:
        await type_into(pilot, selector, text)
    form.submit()
    await confirm_write(pilot)
    return form


@pytest.mark.parametrize("name", list(CASES))
@synchronously
async def test_a_forms_write_that_landed_but_lost_its_answer_is_said_as_its_own_and_enter_replays_it(
        demo_url: str, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    case = CASES[name]
    answered_late(monkeypatch, case)
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        head = app.journal.head(case.aggregate)
        form = await open_and_confirm(app, pilot, case)
        assert app.screen is form and form_error(app).startswith("The journal failed: the journal cannot be reached")
        assert app.journal.head(case.aggregate) == head + 1  # it landed
        for _ in range(50):  # the next poll reads what it recorded
            await pilot.pause(0.1)
            if form.notice:
                break
        assert form.notice.startswith(case.landed), form.notice
        assert "Another writer" not in form.notice and "Enter replays it" in form.notice
        assert not form.query_one("#submit", Button).disabled
        form.submit()
        await confirm_write(pilot)
        assert app.screen is not form
        assert app.journal.head(case.aggregate) == head + 1  # replayed: nothing recorded twice
        said = [str(notification.message) for notification in app._notifications]
        assert said and "already" in said[-1].lower(), said  # the toast says the write was a replay


@pytest.mark.parametrize("lost", [False, True], ids=["answered", "lost"])
@synchronously
async def test_a_reading_of_a_write_on_its_way_says_nothing_until_its_answer_comes_or_is_lost(
        demo_url: str, monkeypatch: pytest.MonkeyPatch, lost: bool) -> None:
    """While the write's answer is on its way, the poll may already read what it recorded: the form says nothing
    (its answer closes it), rather than that another writer recorded it or that its answer was lost. An answer
    then lost makes the form read again, so it says its write landed without waiting for another commit or the
    next minute."""
    held = threading.Event()
    answered_late(monkeypatch, CASES["sign-in"], lost=lost, held=held)
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        head = app.journal.head(SCHEDULE_AGGREGATE)
        try:
            form = await sign_in_sent(app, pilot)
            await read_while_on_its_way(app, head)
            await asyncio.sleep(0.3)
            assert form.in_flight and form.notice == ""
            assert app.screen is form
        finally:
            held.set()
        if lost:
            assert (await notice_within(pilot, form, 3.0)).startswith(CASES["sign-in"].landed), form.notice
        else:
            await pilot.pause()
            assert app.screen is not form


@synchronously
async def test_a_writes_answer_that_arrives_as_the_dashboard_quits_ends_in_no_traceback(
        demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The form's write answers while the dashboard is closing: there is no screen left to show it on, and the
    answer is dropped (it landed; the journal keeps it), not raised."""
    held, committed = threading.Event(), threading.Event()
    answered_late(monkeypatch, CASES["sign-in"], lost=False, held=held, committed=committed)
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await sign_in_sent(app, pilot)
        while not committed.is_set():
            await asyncio.sleep(0.02)
        held.set()  # the answer is on its way back as the test's block ends, which closes the dashboard
    assert app._exception is None, app._exception


CHANGED = {  # a form, what the owner changes after its write landed unanswered, and what the form then says
    "sign-in": (CASES["sign-in"], ("#sign-in", "someone-else@factory.example"),
                "This form's earlier write (its answer lost) recorded chatgpt record #2 (by owner) while this form "
                "was open: the form now starts from it (sequence 3)."),
    "approval": (CASES["approval"], ("#decision", "deny"),
                 "This form's earlier write (its answer lost) approved publish-moss-garden while this form was open"),
    "reconcile": (CASES["reconcile"], ("#evidence", "the host was rebooted"),
                  "This form's earlier write (its answer lost) moved discovery/gamma/basic/2026-12-20"),
}


@pytest.mark.parametrize("name", list(CHANGED))
@synchronously
async def test_a_form_changed_after_its_write_landed_names_that_write_its_own_earlier_one(
        demo_url: str, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The owner changes a field after the form said its write landed, and tries again: the journal refuses the
    changed request under the same command (CONFLICT). The next reading is not another writer's record."""
    case, (selector, text), said = CHANGED[name]
    answered_late(monkeypatch, case)
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        form = await open_and_confirm(app, pilot, case)
        assert (await notice_within(pilot, form)).startswith(case.landed)
        await type_into(pilot, selector, text)
        form.submit()
        await confirm_write(pilot)
        assert form_error(app).startswith("CONFLICT"), form_error(app)
        assert form.notice.startswith(case.landed)  # the refusal does not take back what the form knew was its own
        app.clock.advance(minutes=1)  # type: ignore[attr-defined]  # the minute turns: the dashboard reads again
        for _ in range(50):
            await pilot.pause(0.1)
            if form.notice.startswith("This form's earlier write"):
                break
        assert form.notice.startswith(said), form.notice
        assert "Another writer" not in form.notice


@synchronously
async def test_an_escalation_another_writer_decided_alike_is_never_called_this_forms_write(
        demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The form's park never lands; another writer parks the task with another reason. The done record keeps no
    reason, so the form says it cannot tell, and Enter is refused (CONFLICT) with nothing written; the refusal then
    takes back what the form could not tell."""

    def never_lands(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise JournalUnavailableError("the journal cannot be reached: connection refused")

    monkeypatch.setattr(PipelineLanes, "decide_escalation", never_lands)
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        form = await open_and_confirm(app, pilot, CASES["escalation"])
        assert app.screen is form and form_error(app).startswith("The journal failed")
        monkeypatch.undo()
        PipelineLanes(app.journal, app.clock).decide_escalation(
            lane="promotion", task=20, decided_by="owner", decision="park", reason="another writer's reason")
        head = app.journal.head(PIPELINE_AGGREGATE)
        notice = await notice_within(pilot, form)
        assert notice.startswith(CASES["escalation"].landed) and "if another writer's landed first" in notice, notice
        assert "this form's write landed" not in notice
        form.submit()
        await confirm_write(pilot)
        assert form_error(app).startswith("CONFLICT") and app.journal.head(PIPELINE_AGGREGATE) == head
        assert form.notice == ""  # the refusal says the park was another writer's: "if that write landed" goes


@synchronously
async def test_switching_the_account_takes_back_the_notice_about_the_other_accounts_record(
        demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    answered_late(monkeypatch, CASES["sign-in"])
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        form = await open_and_confirm(app, pilot, CASES["sign-in"])
        assert (await notice_within(pilot, form)).startswith(CASES["sign-in"].landed)
        form.query_one("#account", Select).value = "claude"
        await pilot.pause()
        assert form.notice == ""


@synchronously
async def test_a_write_that_answers_under_the_command_palette_closes_its_form_when_the_palette_closes(
        demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dismissing the form while the palette is over it would close the palette and leave the form open, its
    write forever 'on its way'."""
    held = threading.Event()
    answered_late(monkeypatch, CASES["sign-in"], lost=False, held=held)
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        try:
            form = await sign_in_sent(app, pilot)
            await asyncio.sleep(0.2)
            await pilot.press("ctrl+p")
            await asyncio.sleep(0.3)
            assert isinstance(app.screen, CommandPalette)
        finally:
            held.set()
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette) and form in app.screen_stack
        await pilot.press("escape")
        await pilot.pause()
        assert form not in app.screen_stack and not isinstance(app.screen, CommandPalette)
        assert any("Recorded: chatgpt record #2" in str(n.message) for n in app._notifications)


@synchronously
async def test_a_forms_fields_cannot_change_while_its_write_is_on_its_way(
        demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the form shows is what its write asked until the write answers: an account switched meanwhile would hide
    the record that write made, should its answer be lost. When it fails the fields take keys again."""
    async with sign_in_on_its_way(demo_url, monkeypatch) as (app, pilot, form, lose_answer):
        assert form.in_flight and app.screen is form
        fields = [*form.query(Input), *form.query(Select)]
        assert fields and all(field.is_disabled for field in fields)
        before = {id(field): field.value for field in fields}
        await pilot.press("shift+tab", "x", "down", "enter")
        assert {id(field): field.value for field in fields} == before
        await lose_answer()
        assert not any(field.is_disabled for field in fields)


@synchronously
async def test_a_form_opened_from_the_palette_over_another_form_starts_from_the_newest_reading(
        demo_url: str) -> None:
    """While a form is open the dashboard holds a newer reading back from its views; a form opened over it (from the
    command palette) starts from that reading, not the older one the views still show: it would offer a sequence
    another writer has taken."""
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        await pilot.press("c")
        await pilot.pause()
        head = app.journal.head(SCHEDULE_AGGREGATE)
        LifecycleSchedule(app.journal, app.clock).record_account(
            account="chatgpt", sequence=2, sign_in="other@factory.example", overage=False, recorded_by="deputy")
        await read_while_on_its_way(app, head)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"sign-in record", "enter")
        for _ in range(20):
            await pilot.pause(0.1)
            if isinstance(app.screen, ScheduleForm) and app.screen.query("#sign-in"):
                break
        form = app.screen
        assert isinstance(form, ScheduleForm) and form.query("#sign-in")
        assert form.reading.head == head + 1, (form.reading.head, head)  # type: ignore[attr-defined]
        assert form.query_one("#sequence", Input).value == "3"


@synchronously
async def test_no_form_opens_from_the_palette_over_a_form_whose_write_is_on_its_way(
        demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A form opened over one whose write is on its way would read that write's record, once its answer is lost, as
    another writer's, and offer the next sequence: the palette's forms wait until the write answers."""
    async with sign_in_on_its_way(demo_url, monkeypatch) as (app, pilot, form, lose_answer):
        for command in ("sign-in record", "commission revision"):
            await pilot.press("ctrl+p")  # asyncio's sleeps, not the pilot's pauses: those wait for the write
            await asyncio.sleep(0.3)
            assert isinstance(app.screen, CommandPalette)
            await pilot.press(*command)
            await asyncio.sleep(0.5)
            await pilot.press("enter")
            await asyncio.sleep(0.3)
            assert app.screen is form, app.screen_stack
            assert [screen for screen in app.screen_stack if isinstance(screen, ScheduleForm)] == [form]
        said = [str(notification.message) for notification in app._notifications]
        assert any(message.startswith("A write is on its way") for message in said), said
        await lose_answer()


@synchronously
async def test_a_view_shown_from_the_palette_under_a_form_leaves_the_keys_with_the_form(demo_url: str) -> None:
    """The palette's "Show <view>" under a form switches the tab behind it; the keys stay with the form, never the
    views it covers (a key there would open another form over it, or type into a field no one sees)."""
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        await pilot.press("s")
        await pilot.pause()
        form = app.screen
        for view in ("health", "occurrences"):
            await app.action_show_view(view)
            await pilot.pause()
            assert app.screen.focused is None or app.screen.focused.screen is form, app.screen.focused
            await pilot.press("c")
            await pilot.pause()
            assert app.screen is form and [s for s in app.screen_stack if isinstance(s, ScheduleForm)] == [form]
        await pilot.press("escape")  # the form closes: the view shown last takes the keys
        await pilot.pause()
        assert app.screen.focused is not None and app.screen.focused.id == "status-id", app.screen.focused


@synchronously
async def test_no_form_opens_while_healths_repairs_are_on_their_way(
        demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Health's `x` repairs write as a form does: while they wait for the journal, no form (nor a second `x`) opens."""
    app = make_app(demo_url, poll=0.1)
    held = threading.Event()
    real = app.make_health_repairs

    def slow() -> list[str]:
        held.wait(20)
        return real()

    monkeypatch.setattr(app, "make_health_repairs", slow)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        assert app.reading is not None and app.reading.health is not None
        assert any(getattr(finding, "repairable", False) for finding in app.reading.health.findings)  # r-43 is gone
        try:
            await app.action_show_view("health")
            await pilot.press("x")
            await asyncio.sleep(0.2)
            assert isinstance(app.screen, ConfirmStep)
            await pilot.press("enter")  # its Repair button; asyncio's sleeps, as the pilot's pauses wait for the write
            await asyncio.sleep(0.3)
            assert held.is_set() is False and not isinstance(app.screen, ModalScreen)
            for key in ("s", "x"):  # a form, and the repairs again
                await pilot.press(key)
                await asyncio.sleep(0.2)
                assert not isinstance(app.screen, ModalScreen), app.screen_stack
            said = [str(notification.message) for notification in app._notifications]
            assert any(message.startswith("A write is on its way") for message in said), said
        finally:
            held.set()
