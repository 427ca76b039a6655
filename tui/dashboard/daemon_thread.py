"""Blocking journal calls awaited from the UI's event loop on a daemon thread that the process never waits for.

A journal call can wait for minutes: a PostgreSQL server behind a dead link keeps the connection open and
never answers. Run on the event loop's default executor, such a call holds the loop's shutdown (`asyncio.run`
joins the executor's threads) and then the interpreter's exit (it joins them again), so the owner could not
quit the dashboard. A daemon thread is left behind at exit instead. Abandoning it is safe: a reading only
reads (its checkpoint file is replaced whole or not at all), and a form's write is one or two commands (a
commission revision and then its settings for the staged lanes), each one transaction that the database
rolls back when the process ends before it commits; a command that did commit is replayed, not made again,
by the next try with the same values (its command ID depends only on what it records)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# A journal reading or write takes milliseconds, and the first whole chain check of a long history a few seconds;
# past this the owner is told the journal has not answered, and the notice counts on until it does.
JOURNAL_QUIET_SECONDS = 10.0


async def in_daemon_thread(work: Callable[[], T], name: str) -> T:
    """`work()` on a new daemon thread, awaited: its result, or what it raised. Cancelling the await leaves
    the thread to finish on its own, and its outcome is dropped."""
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if outcome.done():  # the await was cancelled
            return
        if error is not None:
            outcome.set_exception(error)
        else:
            outcome.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = work()
        except BaseException as raised:  # handed to the awaiting task as it is
            error = raised
        with contextlib.suppress(RuntimeError):  # the loop closed while the work ran: nobody waits for it
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name=name, daemon=True).start()
    return await outcome
