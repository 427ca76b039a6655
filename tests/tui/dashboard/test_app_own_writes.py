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
from dataclasses import dataclass
from typing import Any

import pytest
from textual.widgets import Button

from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineLanes
from factory_schedule.store import JournalUnavailableError
from factory_schedule.tui.dashboard.app import ScheduleApp
from factory_schedule.tui.dashboard.screens.base import ScheduleForm

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
                         "The decision on "),
    "escalation": OwnWrite("d", (("#decision", "park"), ("#reason", "no testers")), PipelineLanes,
                           "decide_escalation", PIPELINE_AGGREGATE,
                           "The decision park on promotion task 20 (pocket-farm) is recorded: this form's write"),
}


def answer_lost_once(monkeypatch: pytest.MonkeyPatch, case: OwnWrite) -> None:
    """The form's first write lands and its answer is lost, as when the server goes away after the commit."""
    real = getattr(case.owner, case.method)
    lost: list[str] = []

    def landed_then_lost(self: Any, *args: Any, **kwargs: Any) -> Any:
        answer = real(self, *args, **kwargs)
        if not lost:
            lost.append("the answer")
            raise JournalUnavailableError("the journal cannot be reached: the server closed the connection.")
        return answer

    monkeypatch.setattr(case.owner, case.method, landed_then_lost)


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
    answer_lost_once(monkeypatch, case)
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


@synchronously
async def test_a_reading_that_shows_a_write_still_on_its_way_says_nothing(
        demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the write's answer is on its way, the poll may already read what it recorded: the form says nothing
    (its answer closes it), rather than that another writer recorded it or that its answer was lost."""
    real = LifecycleSchedule.record_account
    answered = threading.Event()

    def slow_answer(self: Any, *args: Any, **kwargs: Any) -> Any:
        answer = real(self, *args, **kwargs)
        answered.wait(20)
        return answer

    monkeypatch.setattr(LifecycleSchedule, "record_account", slow_answer)
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        head = app.journal.head(SCHEDULE_AGGREGATE)
        await pilot.press("s")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, ScheduleForm)
        await type_into(pilot, "#sign-in", "owner@factory.example")
        form.submit()
        await pilot.pause()
        try:
            await pilot.press("enter")  # the confirm step's Record; no pause, which would wait for the write
            for _ in range(100):  # asyncio's own sleep: the screen runs, the write waits
                await asyncio.sleep(0.05)
                if app._pending is not None and app._pending.head > head:  # held back while the form is open
                    break
            await asyncio.sleep(0.3)
            assert app._pending is not None and app._pending.head > head, "the poll did not read the write"
            assert form.in_flight and form.notice == ""
            assert app.screen is form
        finally:
            answered.set()
        await pilot.pause()
        assert app.screen is not form


@synchronously
async def test_a_writes_answer_that_arrives_as_the_dashboard_quits_ends_in_no_traceback(
        demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The form's write answers while the dashboard is closing: there is no screen left to show it on, and the
    answer is dropped (it landed; the journal keeps it), not raised."""
    real = LifecycleSchedule.record_account
    committed, answered = threading.Event(), threading.Event()

    def slow_answer(self: Any, *args: Any, **kwargs: Any) -> Any:
        answer = real(self, *args, **kwargs)
        committed.set()
        answered.wait(20)
        return answer

    monkeypatch.setattr(LifecycleSchedule, "record_account", slow_answer)
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        await pilot.pause()
        await type_into(pilot, "#sign-in", "owner@factory.example")
        assert isinstance(app.screen, ScheduleForm)
        app.screen.submit()
        await pilot.pause()
        await pilot.press("enter")  # the confirm step's Record; no pause, which would wait for the write
        while not committed.is_set():
            await asyncio.sleep(0.02)
        answered.set()  # the answer is on its way back as the test's block ends, which closes the dashboard
    assert app._exception is None, app._exception
