"""Decisions and child-process entry points shared by the journal tests.

The entry points run in real OS processes started with the `spawn` method, so they
live in an importable module and take only picklable arguments.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from factory_schedule.store import Decision, Journal, NewEvent, VersionConflictError, leases, open_journal

AGGREGATE = "test/counter"


def sent_statements(journal: Any) -> list[tuple[str, Any]]:
    """Every prebuilt statement the journal sends from now on, as (its key, its values), watched at `_statement`,
    where every one of them goes."""
    sent: list[tuple[str, Any]] = []
    statement = journal._statement

    def watched(conn: Any, key: str, values: Any) -> Any:
        sent.append((key, values))
        return statement(conn, key, values)

    journal._statement = watched
    return sent


def bump(by: str) -> Any:
    """A decision that adds one to a counter and records who did it."""

    def decide(state: dict[str, Any] | None, version: int) -> Decision:
        count = (state or {}).get("count", 0) + 1
        return Decision(
            events=[NewEvent("bumped", {"by": by, "count": count})],
            state={"count": count, "last": by},
            result={"count": count},
        )

    return decide


def burst(by: str, events: int) -> Any:
    """A decision that records `events` events at once (for paging tests)."""

    def decide(state: dict[str, Any] | None, version: int) -> Decision:
        return Decision(
            events=[NewEvent("tick", {"by": by, "n": version + n}) for n in range(1, events + 1)],
            state={"count": version + events},
        )

    return decide


def held_lease(journal: Journal, scope: str) -> leases.Lease:
    """The lease on `scope`, which the test expects someone to hold."""
    lease = leases.get_lease(journal, scope)
    assert lease is not None, f"nobody holds {scope}"
    return lease


def wait_for_marker(path: Path, process: Any, seconds: float = 60) -> None:
    """Wait until a child process writes its marker file (it reached the point the test wants), failing at once
    if the child dies first."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert process.is_alive(), f"the child died early with exit code {process.exitcode}"
        assert time.monotonic() < deadline, f"the child never reached {path.name}"
        time.sleep(0.01)


def _report(queue: Any, record: dict[str, Any]) -> None:
    record["pid"] = os.getpid()
    queue.put(record)


def race_same_command(url: str, command_id: str, barrier: Any, queue: Any) -> None:
    """Send one command ID with one payload, at the same moment as the other racers."""
    try:
        journal = open_journal(url)
        barrier.wait(timeout=60)
        outcome = journal.execute(AGGREGATE, command_id, {"n": 1}, 0, bump(command_id))
        _report(queue, {"ok": True, "replayed": outcome.replayed, "version": outcome.version,
                        "result": outcome.result})
    except BaseException:
        _report(queue, {"ok": False, "error": traceback.format_exc()})


def race_distinct_commands(url: str, worker: int, commands: int, barrier: Any, queue: Any) -> None:
    """Send `commands` distinct commands, each re-reading head and retrying on a version conflict."""
    try:
        journal = open_journal(url)
        barrier.wait(timeout=60)
        conflicts = 0
        versions = []
        for index in range(commands):
            command_id = f"w{worker}-c{index}"
            while True:
                head = journal.head(AGGREGATE)
                try:
                    outcome = journal.execute(AGGREGATE, command_id, {"w": worker, "i": index}, head, bump(command_id))
                except VersionConflictError:
                    conflicts += 1
                    continue
                versions.append(outcome.version)
                break
        _report(queue, {"ok": True, "versions": versions, "conflicts": conflicts})
    except BaseException:
        _report(queue, {"ok": False, "error": traceback.format_exc()})


@contextmanager
def database(url: str) -> Iterator[Any]:
    """A SQLAlchemy connection to a journal's database, in one transaction committed at the end: how a test
    reads or edits rows behind the journal's back (the tests use SQLAlchemy; the journal itself does not)."""
    from sqlalchemy import create_engine

    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            yield conn
    finally:
        engine.dispose()


@contextmanager
def pooled_driver(journal: Journal) -> Iterator[Any]:
    """One of the journal's own pooled driver connections (for a PRAGMA or a query plan), returned at the end."""
    pooled = journal.pool.checkout()
    try:
        yield pooled.driver_connection
    finally:
        pooled.close()


def block_inside_transaction(url: str, marker: str, pause_before: str) -> None:
    """Execute a command but stop for good just before `pause_before` (a statement prefix, or "COMMIT").

    The journal is the real one; a hook only pauses this process mid-transaction, after some
    of the command's rows are written and while the write lock is held, so the parent can kill
    it there. Statements are caught where the journal sends every one of them to the driver
    (`Journal._statement`), the commit where it commits (`Journal._commit`).
    """
    journal = open_journal(url)
    wrote_receipt = False
    send = journal._statement

    def pause() -> None:
        with open(marker, "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(3600)

    def paused_statement(conn: Any, key: str, values: Any) -> Any:
        nonlocal wrote_receipt
        text = journal._sql[key].lstrip().upper()
        if text.startswith(pause_before.upper()):
            pause()
        wrote_receipt = wrote_receipt or text.startswith("INSERT INTO RECEIPTS")
        return send(conn, key, values)

    journal._statement = paused_statement  # type: ignore[method-assign]

    commit = journal._commit

    def paused_commit(driver: Any) -> None:
        if pause_before == "COMMIT" and wrote_receipt:
            pause()
        commit(driver)

    journal._commit = paused_commit  # type: ignore[method-assign]

    head = journal.head(AGGREGATE)
    journal.execute(AGGREGATE, "doomed", {"n": 1}, head, bump("doomed"))


def execute_forever(url: str, worker: int, started: str) -> None:
    """Execute commands back to back until killed."""
    journal = open_journal(url)
    index = 0
    while True:
        command_id = f"loop{worker}-{index}"
        try:
            journal.execute(AGGREGATE, command_id, {"i": index}, journal.head(AGGREGATE), bump(command_id))
        except VersionConflictError:
            continue
        if index == 5:
            with open(started, "w") as handle:
                handle.write("started")
        index += 1


def open_only(url: str, barrier: Any, queue: Any) -> None:
    """Open (and so create) the journal at the same moment as the other openers."""
    try:
        barrier.wait(timeout=60)
        journal = open_journal(url)
        _report(queue, {"ok": True, "head": journal.head(AGGREGATE)})
    except BaseException:
        _report(queue, {"ok": False, "error": traceback.format_exc()})


def record_accounts(url: str, worker: int, commands: int, instant: str, barrier: Any, queue: Any) -> None:
    """Record the next account record `commands` times through the engine, flat out, and report every answer.

    Every writer sends the same request for a sequence (so a writer that finds its sequence taken replays it),
    half of them on each account: the journal's write lock is all that orders them.
    """
    from factory_schedule.core import LifecycleSchedule, ManualClock, ScheduleError

    try:
        schedule = LifecycleSchedule(open_journal(url), ManualClock(instant))
        account = ("claude", "chatgpt")[worker % 2]
        answers: list[str] = []
        barrier.wait(timeout=120)
        for _ in range(commands):
            view = schedule.read()
            assert view is not None
            record = next(entry.record for entry in view.accounts if entry.account == account)
            sequence = 1 if record is None else record.sequence + 1
            try:
                result = schedule.record_account(account=account, sequence=sequence, sign_in="owner@example.com",
                                                 overage=False, recorded_by="the owner")
            except ScheduleError as error:
                answers.append(error.code)
            else:
                answers.append("replayed" if result.replayed else "recorded")
        _report(queue, {"ok": True, "answers": answers})
    except BaseException:
        _report(queue, {"ok": False, "error": traceback.format_exc()})


LANE_RUNNERS = 9  # one per product: the most a commission has
CALLS_EACH = 6


def run_lane_or_record(url: str, worker: int, instant: str, barrier: Any, queue: Any) -> None:
    """The first nine writers each run their own lane flat out (admit it, then admit and end calls); the rest
    record account records. Every command is fresh and commits at once: only the write lock orders them."""
    from factory_schedule.core import CallAdmission, LifecycleSchedule, ManualClock, ScheduleError

    if worker >= LANE_RUNNERS:
        record_accounts(url, worker, CALLS_EACH, instant, barrier, queue)
        return
    try:
        schedule = LifecycleSchedule(open_journal(url), ManualClock(instant))
        runner = f"runner-{worker}"
        answers: list[str] = []
        barrier.wait(timeout=120)
        try:
            tick = schedule.start(lane=f"p{worker}/basic", runner=runner)
            answers.append(tick.kind)
            assert tick.occurrence is not None, tick
            for index in range(CALLS_EACH):
                admission = schedule.admit_call(occurrence_id=tick.occurrence.id, runner=runner, task="scan",
                                                work=f"w{index}", bound=1000, sign_in="owner@example.com")
                answers.append("admitted" if admission.admitted else admission.reason)
                assert isinstance(admission, CallAdmission), admission  # each call is within the lane's bounds
                end = schedule.end_call(occurrence_id=tick.occurrence.id, runner=runner, call=admission.call,
                                        report={"kind": "result", "tokens": 10, "output": "ok"})
                answers.append("replayed" if end.replayed else "ended")
        except ScheduleError as error:
            answers.append(error.code)
        _report(queue, {"ok": True, "answers": answers})
    except BaseException:
        _report(queue, {"ok": False, "error": traceback.format_exc()})
