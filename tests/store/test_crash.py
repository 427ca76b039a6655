"""A writer killed with SIGKILL mid-command leaves a readable, verifiable journal and no partial command."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from store import Journal, open_journal
from tests.store import support

SPAWN = multiprocessing.get_context("spawn")


def _wait_for(path: Path, process: Any, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert process.is_alive(), f"the child died early with exit code {process.exitcode}"
        assert time.monotonic() < deadline, f"the child never reached {path.name}"
        time.sleep(0.01)


def _kill(process: Any) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.join(timeout=30)
    assert process.exitcode == -signal.SIGKILL


def _assert_every_command_is_whole(journal: Journal) -> None:
    """Each receipt covers exactly its command's events, and every event belongs to a receipt."""
    events = list(journal.iter_history(support.AGGREGATE))
    assert [event.version for event in events] == list(range(1, len(events) + 1))
    assert journal.head(support.AGGREGATE) == len(events)
    for event in events:
        receipt = journal.receipt(event.command_id)
        assert receipt is not None, f"event {event.version} has no receipt"
        assert receipt.first_version <= event.version <= receipt.last_version
    journal.verify(support.AGGREGATE)
    if events:
        assert journal.load(support.AGGREGATE).state["count"] == events[-1].data["count"]


@pytest.mark.parametrize("paused_before", ["UPDATE aggregates", "INSERT INTO receipts", "COMMIT"])
def test_a_writer_killed_inside_its_transaction_leaves_no_partial_command(journal_url, tmp_path, paused_before):
    journal = open_journal(journal_url)
    journal.execute(support.AGGREGATE, "before", {"n": 0}, 0, support.bump("before"))
    marker = tmp_path / "inside-transaction"
    child = SPAWN.Process(target=support.block_inside_transaction, args=(journal_url, str(marker), paused_before))
    child.start()
    _wait_for(marker, child)
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


def test_writers_killed_at_arbitrary_moments_leave_only_whole_commands(journal_url, tmp_path):
    journal = open_journal(journal_url)
    for round_ in range(3):
        started = tmp_path / f"started-{round_}"
        children = [
            SPAWN.Process(target=support.execute_forever, args=(journal_url, round_ * 10 + worker, str(started)))
            for worker in range(2)
        ]
        for child in children:
            child.start()
        _wait_for(started, children[0])
        time.sleep(0.05 * (round_ + 1))
        for child in children:
            _kill(child)
        _assert_every_command_is_whole(journal)
    assert journal.head(support.AGGREGATE) > 0
