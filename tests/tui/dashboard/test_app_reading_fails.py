"""A journal whose reads keep failing is said in one notice at a time, and in the header until a read succeeds.

While a server is away every poll's read fails. A notice per poll stacked a new toast every poll interval over the
screen; after the first notice's few seconds nothing at all said the views were stale. The failure is now said in
one notice at a time, again once it is gone (a form covers the header, not the notices), and the header says for
how long reading has failed, until a read answers again.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from factory_schedule.tui.dashboard import app as dashboard_app
from factory_schedule.tui.dashboard.app import ScheduleApp
from factory_schedule.tui.dashboard.widgets.header import HeaderBar

from .test_app_journeys import SIZE, make_app, synchronously
from .test_app_own_writes import first_whole_reading

FAILED = "Reading the journal failed"


def failure_notices(app: ScheduleApp) -> int:
    """The notices on screen now that say reading failed (an expired one is gone from the app's own list)."""
    return sum(1 for notification in app._notifications if str(notification.message).startswith(FAILED))


def header(app: ScheduleApp) -> str:
    return str(app.query_one(HeaderBar).render())


def rename(url: str, table: str, to: str) -> None:
    """Another connection renames a journal table: every read of it on the dashboard's connection then fails."""
    with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
        db.execute(f"ALTER TABLE {table} RENAME TO {to}")


async def polls(pilot: Any, seconds: float) -> None:
    for _ in range(int(seconds / 0.1)):
        await pilot.pause(0.1)


@synchronously
async def test_reads_that_keep_failing_are_said_in_one_notice_and_in_the_header_until_one_answers(
        demo_url: str) -> None:
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        rename(demo_url, "aggregates", "aggregates_away")
        await polls(pilot, 1.5)  # about a dozen polls, each failing
        assert failure_notices(app) == 1
        assert "reading the journal has failed for" in header(app), header(app)
        assert "the views show its last reading" in header(app)

        rename(demo_url, "aggregates_away", "aggregates")
        await polls(pilot, 0.5)
        assert "has failed" not in header(app), header(app)

        rename(demo_url, "aggregates", "aggregates_away")  # a new outage is said again
        await polls(pilot, 0.5)
        assert failure_notices(app) == 2


@synchronously
async def test_reads_that_keep_failing_are_said_again_once_their_notice_is_gone_never_two_at_once(
        demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A form covers the header: the notices, which show over it, keep saying it, one at a time."""
    monkeypatch.setattr(dashboard_app, "READ_FAILURE_NOTICE_SECONDS", 0.5)
    app = make_app(demo_url, poll=0.1)
    said: list[str] = []
    notify = app.notify

    def kept(message: str, **kwargs: Any) -> None:
        said.append(message)
        notify(message, **kwargs)

    monkeypatch.setattr(app, "notify", kept)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        await pilot.press("s")
        await pilot.pause()
        rename(demo_url, "aggregates", "aggregates_away")
        most = 0
        for _ in range(25):  # 2.5 s of failing polls, every 0.1 s
            await pilot.pause(0.1)
            most = max(most, failure_notices(app))
        failures = [message for message in said if message.startswith(FAILED)]
        assert most == 1 and 4 <= len(failures) <= 6, failures
        assert failures[0].startswith(f"{FAILED}: ") and "(for " in failures[-1], failures


@synchronously
async def test_reads_that_fail_under_an_open_form_are_said_in_the_header_beneath_it(demo_url: str) -> None:
    app = make_app(demo_url, poll=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await first_whole_reading(app, pilot)
        await pilot.press("s")  # the sign-in form covers the first screen, not its header
        await pilot.pause()
        form = app.screen
        rename(demo_url, "aggregates", "aggregates_away")
        await polls(pilot, 1.0)
        assert app.screen is form and failure_notices(app) == 1
        shown = str(app.screen_stack[0].query_one(HeaderBar).render())
        assert "reading the journal has failed for" in shown, shown
