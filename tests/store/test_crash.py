"""A writer killed with SIGKILL mid-command leaves a readable, verifiable journal and no partial command."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.store import Journal, open_journal
from tests.store import support


def _kill(process: Any) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.join(timeout=30)
    assert process.exitcode == -signal.SIGKILL


def _assert_every_command_is_whole(journal: Journal) -> None:
    """Each receipt covers exactly its command's events, and every event belongs to a receipt.

    Read under the write lock: on PostgreSQL a killed client's COMMIT may still be carried out by its
    server process after the client is gone, and it holds the lock until it is, so the reads below all
    see the journal after it and none between.
    """
    with journal.writing():
        _assert_whole(journal)


def _assert_whole(journal: Journal) -> None:
    events = list(journal.iter_history(support.AGGREGATE))
    assert [event.version for event in events] == list(range(1, len(events) + 1))
    assert journal.head(support.AGGREGATE) == len(events)
    for event in events:
        receipt = journal.receipt(event.command_id)
        assert receipt is not None, f"event {event.version} has no receipt"
        assert receipt.first_version <= event.version <= receipt.last_version
    journal.verify(support.AGGREGATE)
    if events:
        state = journal.load(support.AGGREGATE).state
        assert state is not None and state["count"] == events[-1].data["count"]


@pytest.mark.parametrize("paused_before", ["UPDATE aggregates", "INSERT INTO receipts", "COMMIT"])
def test_a_writer_killed_inside_its_transaction_leaves_no_partial_command(journal_url, tmp_path, paused_before, spawn):
    journal = open_journal(journal_url)
    journal.execute(support.AGGREGATE, "before", {"n": 0}, 0, support.bump("before"))
    marker = tmp_path / "inside-transaction"
    child = spawn(support.block_inside_transaction, journal_url, str(marker), paused_before)
    support.wait_for_marker(marker, child)
    assert journal.head(support.AGGREGATE) == 1, "a reader is not blocked by the stalled writer"

    _kill(child)

    assert journal.head(support.AGGREGATE) == 1
    assert journal.receipt("doomed") is None
    assert [event.command_id for event in journal.history(support.AGGREGATE)] == ["before"]
    _assert_every_command_is_whole(journal)
    started = time.monotonic()
    outcome = journal.execute(support.AGGREGATE, "after", {"n": 2}, 1, support.bump("after"))
    assert outcome.version == 2
    assert time.monotonic() - started < 10, "the dead writer's lock was released"
    journal.verify(support.AGGREGATE)


def test_writers_killed_at_arbitrary_moments_leave_only_whole_commands(journal_url, tmp_path, spawn):
    journal = open_journal(journal_url)
    for round_ in range(3):
        started = tmp_path / f"started-{round_}"
        children = [spawn(support.execute_forever, journal_url, round_ * 10 + n, str(started)) for n in range(2)]
        support.wait_for_marker(started, children[0])
        time.sleep(0.05 * (round_ + 1))
        for child in children:
            _kill(child)
        _assert_every_command_is_whole(journal)
    assert journal.head(support.AGGREGATE) > 0


def test_a_second_writer_waits_for_a_stalled_writer_then_proceeds_without_a_lock_error(
    journal_url: str, tmp_path: Path, spawn: Callable[..., Any]
) -> None:
    journal = open_journal(journal_url)
    journal.execute(support.AGGREGATE, "before", {"n": 0}, 0, support.bump("before"))
    marker = tmp_path / "inside-transaction"
    # Paused before its first write, the child holds nothing but the write lock itself.
    child = spawn(support.block_inside_transaction, journal_url, str(marker), "INSERT INTO events")
    support.wait_for_marker(marker, child)
    outcome: list[Any] = []
    waiter = threading.Thread(
        target=lambda: outcome.append(
            journal.execute(support.AGGREGATE, "waiting", {"n": 2}, 1, support.bump("waiting"))
        ),
        daemon=True,
    )
    waiter.start()

    waiter.join(timeout=1.5)
    assert waiter.is_alive() and outcome == [], "the second writer waited for the write lock"
    _kill(child)
    waiter.join(timeout=30)

    assert [result.version for result in outcome] == [2]
    _assert_every_command_is_whole(journal)
