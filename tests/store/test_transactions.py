"""The journal's own transactions (driver connection, PostgreSQL pipeline), under adversarial cases.

Each test names the promise it holds. Real SQLite files, real PostgreSQL databases (when
FACTORY_TEST_POSTGRES_URL is set), real processes and real signals where it matters. The
database is made to refuse a statement or a COMMIT with ordinary triggers, not by mocking
the journal.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from queue import Empty
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy.engine import make_url

from factory_schedule.store import Decision, JournalError, NewEvent, VersionConflictError, open_journal
from factory_schedule.store.errors import JournalUnavailableError
from tests.conftest import POSTGRES_ENV, connect_postgres
from tests.processes import PROCESSES
from tests.store.support import AGGREGATE, bump, wait_for_marker

if TYPE_CHECKING:
    import psycopg


WRITE_LOCK_KEY = int.from_bytes(b"fsjournl", "big")  # store/postgres.py's key, written out on purpose


# -- helpers -------------------------------------------------------------------------------------------------------


def _is_postgres(url: str) -> bool:
    return make_url(url).get_backend_name() == "postgresql"


def _sqlite_path(url: str) -> str:
    path = make_url(url).database
    assert path
    return path


def _run_sql(url: str, sqlite_script: str, postgres_script: str) -> None:
    if _is_postgres(url):
        with connect_postgres(url) as server:
            server.execute(postgres_script)
    else:
        conn = sqlite3.connect(_sqlite_path(url), isolation_level=None)
        try:
            conn.executescript(sqlite_script)
        finally:
            conn.close()


def _assert_write_lock_free(url: str) -> None:
    """Another connection can take the journal's write lock at once: nothing of ours still holds it."""
    if _is_postgres(url):
        with connect_postgres(url) as server:
            taken = server.execute("SELECT pg_try_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,)).fetchone()
            assert taken is not None and taken[0] is True
            left_open = server.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND application_name = 'factory-schedule' AND state LIKE 'idle in transaction%'"
            ).fetchone()
            assert left_open == (0,), "a journal connection sits idle inside a transaction"
    else:
        conn = sqlite3.connect(_sqlite_path(url), timeout=0, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")  # "database is locked" at once if anyone still holds it
            conn.execute("ROLLBACK")
        finally:
            conn.close()


def _assert_only(journal: Any, command_ids: list[str]) -> None:
    events = list(journal.iter_history(AGGREGATE))
    assert [event.command_id for event in events] == command_ids
    assert journal.head(AGGREGATE) == len(events)
    for command_id in set(command_ids):
        assert journal.receipt(command_id) is not None
    journal.verify(AGGREGATE)


# -- a command that fails anywhere leaves nothing behind and holds nothing -----------------------------------------

_REFUSE_SQLITE = {
    "events": "CREATE TRIGGER refuse_poison BEFORE INSERT ON events WHEN NEW.command_id LIKE 'poison%' "
    "BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END;",
    "aggregates": "CREATE TRIGGER refuse_poison BEFORE UPDATE ON aggregates WHEN NEW.state LIKE '%poison%' "
    "BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END;",
    "receipts": "CREATE TRIGGER refuse_poison BEFORE INSERT ON receipts WHEN NEW.command_id LIKE 'poison%' "
    "BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END;",
    # A deferred foreign key fails at COMMIT (and SQLite leaves the transaction open when it does).
    "commit": "CREATE TABLE poison_parent (id INTEGER PRIMARY KEY);"
    "CREATE TABLE poison_child (parent INTEGER REFERENCES poison_parent(id) DEFERRABLE INITIALLY DEFERRED);"
    "CREATE TRIGGER refuse_poison AFTER INSERT ON receipts WHEN NEW.command_id LIKE 'poison%' "
    "BEGIN INSERT INTO poison_child VALUES (42); END;",
}
_REFUSE_FUNCTION = (
    "CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS "
    "$$ BEGIN RAISE EXCEPTION 'refused by the test trigger'; END $$;"
)
_REFUSE_POSTGRES = {
    "events": "CREATE TRIGGER refuse_poison BEFORE INSERT ON events FOR EACH ROW "
    "WHEN (NEW.command_id LIKE 'poison%') EXECUTE FUNCTION refuse_poison();",
    "aggregates": "CREATE TRIGGER refuse_poison BEFORE UPDATE ON aggregates FOR EACH ROW "
    "WHEN (NEW.state LIKE '%poison%') EXECUTE FUNCTION refuse_poison();",
    "receipts": "CREATE TRIGGER refuse_poison BEFORE INSERT ON receipts FOR EACH ROW "
    "WHEN (NEW.command_id LIKE 'poison%') EXECUTE FUNCTION refuse_poison();",
    # A deferred constraint trigger fails at COMMIT, after the pipeline's statements all succeeded.
    "commit": "CREATE CONSTRAINT TRIGGER refuse_poison AFTER INSERT ON receipts DEFERRABLE INITIALLY DEFERRED "
    "FOR EACH ROW WHEN (NEW.command_id LIKE 'poison%') EXECUTE FUNCTION refuse_poison();",
}


def _poisoned(by: str) -> Any:
    """Three events (several rows in one statement) and a state the aggregates trigger recognises."""

    def decide(state: Any, version: int) -> Decision:
        return Decision(
            events=[NewEvent("tick", {"by": by, "n": n}) for n in range(3)],
            state={"count": version + 3, "note": "poison"},
            result={"by": by},
        )

    return decide


@pytest.mark.parametrize("refused_at", ["events", "aggregates", "receipts", "commit"])
def test_a_refused_statement_or_commit_leaves_the_journal_as_it_was_frees_the_lock_and_raises_a_journal_error(
    journal_url, refused_at
):
    journal = open_journal(journal_url)
    journal.execute(AGGREGATE, "before", {"n": 0}, 0, bump("before"))
    _run_sql(journal_url, _REFUSE_SQLITE[refused_at], _REFUSE_FUNCTION + _REFUSE_POSTGRES[refused_at])

    for attempt in range(3):  # the same pooled connection again and again: each time it must start clean
        with pytest.raises(JournalError) as raised:  # a raw SQLAlchemy, sqlite3 or psycopg error would fail this
            journal.execute(AGGREGATE, f"poison-{attempt}", {"n": attempt}, 1, _poisoned(f"poison-{attempt}"))
        assert "refused by the test trigger" in str(raised.value) or "FOREIGN KEY" in str(raised.value)
        assert "\n" not in str(raised.value)
        assert journal.receipt(f"poison-{attempt}") is None
        _assert_only(journal, ["before"])
        _assert_write_lock_free(journal_url)

    outcome = journal.execute(AGGREGATE, "after", {"n": 9}, 1, bump("after"))
    assert (outcome.version, outcome.replayed) == (2, False)
    _assert_only(journal, ["before", "after"])
    _assert_write_lock_free(journal_url)


class _Raised(Exception):
    pass


@pytest.mark.parametrize("raised", [_Raised, KeyboardInterrupt, GeneratorExit, SystemExit])
def test_anything_a_decision_raises_leaves_the_journal_as_it_was_and_holds_no_lock(journal_url, raised):
    journal = open_journal(journal_url)
    journal.execute(AGGREGATE, "before", {"n": 0}, 0, bump("before"))

    def decide(state: Any, version: int) -> Decision:
        raise raised()

    with pytest.raises(raised):
        journal.execute(AGGREGATE, "doomed", {"n": 1}, 1, decide)

    assert journal.receipt("doomed") is None
    _assert_only(journal, ["before"])
    _assert_write_lock_free(journal_url)
    assert journal.execute(AGGREGATE, "after", {"n": 2}, 1, bump("after")).version == 2
    _assert_only(journal, ["before", "after"])


def test_an_exception_in_a_callers_with_body_rolls_the_journals_transaction_back(journal_url):
    """`_transaction` is the journal's one way into the database; a body that fails after writing leaves nothing."""
    journal = open_journal(journal_url)
    journal.execute(AGGREGATE, "before", {"n": 0}, 0, bump("before"))

    ghost = {"command_id": "ghost", "aggregate": AGGREGATE, "digest": "0", "first_version": 2, "last_version": 2,
             "result": "{}"}
    with pytest.raises(_Raised), journal._transaction(write=True) as conn:
        journal._statement(conn, "insert_receipt", ghost)
        raise _Raised()

    assert journal.receipt("ghost") is None
    _assert_write_lock_free(journal_url)
    _assert_only(journal, ["before"])


# -- errors reach callers as SQLAlchemy's types --------------------------------------------------------------------


def test_a_journal_that_cannot_reach_its_database_raises_journal_unavailable_not_a_database_error(journal_url,
                                                                                                 tmp_path):
    """Callers catch the journal's own errors: neither SQLAlchemy's nor the driver's may escape."""
    if _is_postgres(journal_url):
        url = journal_url
        journal = open_journal(url)
        journal.execute(AGGREGATE, "before", {"n": 0}, 0, bump("before"))
        name = make_url(url).database
        with connect_postgres(os.environ[POSTGRES_ENV]) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')  # the server is there, the database gone
    else:
        volume = tmp_path / "volume"
        volume.mkdir()
        url = f"sqlite:///{volume / 'journal.db'}"
        journal = open_journal(url)
        journal.execute(AGGREGATE, "before", {"n": 0}, 0, bump("before"))
        journal.pool.dispose()  # the next use connects afresh, as a new pool or an overflow connection does
        volume.rename(tmp_path / "volume-unmounted")  # the volume went away

    with pytest.raises(JournalUnavailableError, match="cannot be reached"):
        journal.head(AGGREGATE)
    with pytest.raises(JournalUnavailableError):
        journal.load(AGGREGATE)
    with pytest.raises(JournalUnavailableError):
        journal.execute(AGGREGATE, "after", {"n": 1}, 1, bump("after"))


# -- the write lock is held before anything is read ----------------------------------------------------------------


def _commit_when_told(url: str, ready: str, go: str) -> None:
    """Run one command ("contested", expected version 1) and stop just before its COMMIT until `go` exists."""
    journal = open_journal(url)
    commit = journal._commit

    def commit_when_told(driver: Any) -> None:
        Path(ready).write_text(str(os.getpid()))
        deadline = time.monotonic() + 120
        while not os.path.exists(go):
            if time.monotonic() > deadline:
                raise SystemExit("never told to commit")
            time.sleep(0.01)
        commit(driver)

    journal._commit = commit_when_told  # type: ignore[method-assign]
    journal.execute(AGGREGATE, "contested", {"n": 1}, 1, bump("contested"))


def test_writers_waiting_for_the_lock_see_what_its_holder_committed_a_retry_replays_a_rival_conflicts(
    journal_url: str, tmp_path: Path, spawn: Callable[..., Any]
) -> None:
    journal = open_journal(journal_url)
    journal.execute(AGGREGATE, "before", {"n": 0}, 0, bump("before"))
    ready, go = tmp_path / "ready", tmp_path / "go"
    child = spawn(_commit_when_told, journal_url, str(ready), str(go))
    wait_for_marker(ready, child)  # the child holds the write lock, its rows written, its COMMIT not yet sent

    results: dict[str, Any] = {}

    def run(name: str, command_id: str, payload: dict[str, Any]) -> None:
        try:
            results[name] = journal.execute(AGGREGATE, command_id, payload, 1, bump(command_id))
        except BaseException as error:
            results[name] = error

    waiters = [
        threading.Thread(target=run, args=("retry", "contested", {"n": 1}), daemon=True),
        threading.Thread(target=run, args=("rival", "rival", {"n": 2}), daemon=True),
    ]
    for waiter in waiters:
        waiter.start()
    time.sleep(1.5)
    assert all(waiter.is_alive() for waiter in waiters), f"the writers did not wait for the lock: {results}"
    go.write_text("go")
    for waiter in waiters:
        waiter.join(timeout=60)
    child.join(timeout=60)
    assert child.exitcode == 0

    retry, rival = results["retry"], results["rival"]
    assert not isinstance(retry, BaseException), "".join(traceback.format_exception(retry))
    assert (retry.replayed, retry.version) == (True, 2), "a retry never acts twice"
    assert isinstance(rival, VersionConflictError), f"no lost update: got {rival!r}"
    _assert_only(journal, ["before", "contested"])


# -- Ctrl-C while waiting for the lock -----------------------------------------------------------------------------


def _interrupted_while_waiting(url: str, opened: str, go: str, ready: str, queue: Any) -> None:
    journal = open_journal(url)  # opening takes the write lock too (the schema check): before the holder takes it
    Path(opened).write_text(str(os.getpid()))
    deadline = time.monotonic() + 60
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.01)
    Path(ready).write_text(str(os.getpid()))
    try:
        journal.execute(AGGREGATE, "interrupted", {"n": 1}, 1, bump("interrupted"))
        queue.put(("first", "completed"))
    except KeyboardInterrupt:
        queue.put(("first", "interrupted"))
    except BaseException:
        queue.put(("first", traceback.format_exc()))
    try:
        head = journal.head(AGGREGATE)
        outcome = journal.execute(AGGREGATE, "next", {"n": 2}, head, bump("next"))
        queue.put(("second", outcome.version))
    except BaseException:
        queue.put(("second", traceback.format_exc()))


def test_a_writer_interrupted_while_it_waits_for_the_lock_leaves_nothing_and_its_next_command_runs(
    journal_url: str, tmp_path: Path, spawn: Callable[..., Any]
) -> None:
    journal = open_journal(journal_url)
    journal.execute(AGGREGATE, "before", {"n": 0}, 0, bump("before"))
    opened, go, ready = tmp_path / "opened", tmp_path / "go", tmp_path / "ready"
    queue = PROCESSES.Queue()
    child = spawn(_interrupted_while_waiting, journal_url, str(opened), str(go), str(ready), queue)
    wait_for_marker(opened, child)
    # Someone else holds the write lock: SQLite's file lock, or PostgreSQL's advisory lock.
    holder: psycopg.Connection[Any] | sqlite3.Connection
    if _is_postgres(journal_url):
        holder = connect_postgres(journal_url, autocommit=False)
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
    else:
        holder = sqlite3.connect(_sqlite_path(journal_url), isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")
    go.write_text("go")
    wait_for_marker(ready, child)
    time.sleep(1.0)  # the child is now waiting for the lock
    os.kill(child.pid, signal.SIGINT)
    time.sleep(0.5)
    holder.rollback()
    holder.close()

    reports: dict[str, Any] = {}
    deadline = time.monotonic() + 90
    while len(reports) < 2 and time.monotonic() < deadline:
        try:
            key, value = queue.get(timeout=0.1)
            reports[key] = value
        except Empty:
            pass
    child.join(timeout=30)
    assert reports.get("first") == "interrupted", reports
    assert reports.get("second") == 2, reports
    _assert_only(journal, ["before", "next"])
    _assert_write_lock_free(journal_url)


# -- a decision that reads the journal it writes -------------------------------------------------------------------


def _reads_while_deciding(journal: Any, command_id: str) -> Any:
    def decide(state: Any, version: int) -> Decision:
        # core's decisions plan again inside the transaction, and a plan asks the journal for receipts.
        assert journal.receipt(f"{command_id}-not-yet") is None
        assert journal.head(AGGREGATE) == version
        return bump(command_id)(state, version)

    return decide


def test_a_decision_may_read_the_journal_it_is_writing(journal_url):
    journal = open_journal(journal_url)
    journal.execute(AGGREGATE, "c1", {"n": 1}, 0, _reads_while_deciding(journal, "c1"))
    journal.execute(AGGREGATE, "c2", {"n": 2}, 1, _reads_while_deciding(journal, "c2"))
    _assert_only(journal, ["c1", "c2"])


# -- one journal object from two threads (its pool gives each transaction its own connection) ----------------------


def test_one_journal_used_from_two_threads_keeps_every_command_whole_and_raises_nothing(journal_url: str) -> None:
    journal = open_journal(journal_url)
    commands = 150
    errors: list[str] = []
    done = threading.Event()
    recorded: list[str] = []

    def writer() -> None:
        try:
            for index in range(commands):
                command_id = f"w{index}"
                for _ in range(50):
                    try:
                        journal.execute(AGGREGATE, command_id, {"i": index}, journal.head(AGGREGATE), bump(command_id))
                        recorded.append(command_id)
                        break
                    except VersionConflictError:
                        continue
                    except Exception as error:
                        errors.append(f"writer: {error!r}"[:300])
        finally:
            done.set()

    def reader() -> None:
        while not done.is_set():
            try:
                journal.load(AGGREGATE)
                journal.history_desc(AGGREGATE, limit=3)
            except Exception as error:
                errors.append(f"reader: {error!r}"[:300])

    threads = [threading.Thread(target=writer, daemon=True), threading.Thread(target=reader, daemon=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    # Integrity first: every command the writer was told it recorded is whole, and the chain holds.
    events = list(journal.iter_history(AGGREGATE))
    assert journal.head(AGGREGATE) == len(events), "the head and the events disagree: a torn command"
    journal.verify(AGGREGATE)
    assert [event.command_id for event in events] == recorded
    assert errors == [], f"{len(errors)} errors, first: {errors[:3]}"
