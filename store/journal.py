"""The command journal: one transaction per command, append-only, hash-chained.

A command is a caller-chosen ID, a payload and a pure decision. The journal runs
the decision inside a write transaction over the aggregate's current state and
records its events, the new state and a receipt in the same commit. A retry of
a recorded ID is answered from the receipt and writes nothing; that is what lets
a runner that lost its answer simply ask again.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from .canonical import CanonicalJsonError, CanonicalText, canonical_digest, canonical_json
from .errors import CommandConflictError, JournalCorruptError, JournalError, VersionConflictError
from .records import (
    GENESIS_HASH,
    HISTORY_PAGE,
    Checkpoint,
    Decide,
    Event,
    Outcome,
    Receipt,
    Snapshot,
    chain_hash,
)
from .urls import shown_url

_LOCK_RETRY_SECONDS = 120.0
Answer = TypeVar("Answer")  # what a retried read or command returns


def _state_text(state: Any, command_id: str) -> str:
    if isinstance(state, CanonicalText):
        return state
    if not isinstance(state, dict):
        raise CanonicalJsonError(
            f"command {command_id!r}: a state is a JSON object or its canonical text, got {type(state).__name__}"
        )
    return canonical_json(state)


# The journal's SQL, written against the tables of `tables.py` (which `opening` creates).
_EVENT_COLUMNS = "aggregate, version, command_id, type, data, prev_hash, hash"
_STATEMENTS = {
    "receipt": "SELECT command_id, aggregate, digest, first_version, last_version, result "
    "FROM receipts WHERE command_id = :command_id",
    "head": "SELECT version, hash, state FROM aggregates WHERE aggregate = :aggregate",
    "version": "SELECT version FROM aggregates WHERE aggregate = :aggregate",
    "snapshot": "SELECT version, state FROM aggregates WHERE aggregate = :aggregate",
    "chain_head": "SELECT version, hash FROM aggregates WHERE aggregate = :aggregate",
    "history": f"SELECT {_EVENT_COLUMNS} FROM events WHERE aggregate = :aggregate AND version > :after "
    "ORDER BY version LIMIT :limit",
    "history_desc": f"SELECT {_EVENT_COLUMNS} FROM events WHERE aggregate = :aggregate "
    "ORDER BY version DESC LIMIT :limit",
    "history_desc_before": f"SELECT {_EVENT_COLUMNS} FROM events WHERE aggregate = :aggregate AND version < :before "
    "ORDER BY version DESC LIMIT :limit",
    "insert_event": "INSERT INTO events (aggregate, version, command_id, type, data, prev_hash, hash) "
    "VALUES (:aggregate, :version, :command_id, :type, :data, :prev_hash, :hash)",
    # RETURNING, so that whether the head moved is read from a row: a pipelined cursor has no row count yet.
    "update_head": "UPDATE aggregates SET version = :last, state = :state, hash = :hash "
    "WHERE aggregate = :aggregate AND version = :version RETURNING version",
    "insert_head": "INSERT INTO aggregates (aggregate, version, state, hash) "
    "VALUES (:aggregate, :last, :state, :hash) RETURNING version",
    "insert_receipt": "INSERT INTO receipts (command_id, aggregate, digest, first_version, last_version, result) "
    "VALUES (:command_id, :aggregate, :digest, :first_version, :last_version, :result)",
}


def _driver_statements(paramstyle: str) -> dict[str, str]:
    """The command path's SQL in the driver's own parameter style.

    `execute` runs these through `exec_driver_sql`: building and compiling SQLAlchemy
    expressions for every command cost more CPU than the commit itself.
    """
    if paramstyle in ("named", "qmark", "numeric"):  # sqlite3 accepts :name in every style
        return dict(_STATEMENTS)
    if paramstyle == "pyformat":
        return {key: re.sub(r":(\w+)", r"%(\1)s", sql) for key, sql in _STATEMENTS.items()}
    raise JournalError(f"unsupported driver parameter style {paramstyle!r}")


_LOCK_ERRORS = (
    "database is locked",  # SQLite, after the busy timeout
    "database is busy",
    "deadlock detected",  # PostgreSQL
    "lock timeout",  # PostgreSQL, after lock_timeout
    "could not serialize access",  # PostgreSQL, should a caller raise the isolation level
)


def _is_lock_error(error: BaseException) -> bool:
    text = str(error).lower()
    return any(words in text for words in _LOCK_ERRORS)


class Journal:
    """A journal over one SQLAlchemy engine. Build it with `store.open_journal`."""

    def __init__(self, engine: Engine, url: str, *, write_options: dict[str, Any]) -> None:
        self.engine = engine
        self.url = url
        self.where = shown_url(url)  # what a person may be shown: the URL, any password masked
        self._write_options = write_options
        dbapi = engine.dialect.dbapi
        self._sql = _driver_statements(dbapi.paramstyle if dbapi else "named")
        self._pyformat = dbapi is not None and dbapi.paramstyle == "pyformat"
        self._driver_error: type[Exception] = dbapi.Error if dbapi else Exception

    # -- statements ---------------------------------------------------------------------

    def _statement(self, conn: Any, key: str, values: dict[str, Any] | list[dict[str, Any]]) -> Any:
        """Run one of the journal's statements on the driver's own cursor and return the cursor.

        Every prebuilt statement the journal sends goes through here (`events_of` builds its own, for
        its number of IDs, and sends it with `_send`). SQLAlchemy keeps the pool and the
        transaction (begin, commit, rollback and their events), but each statement run through it
        cost about 0.15 ms of Python, as much as the commit it belonged to. A driver error is
        raised as SQLAlchemy's wrapper for it, as `exec_driver_sql` would.
        """
        return self._send(conn, self._sql[key], values)

    def _send(self, conn: Any, statement: str, values: dict[str, Any] | list[dict[str, Any]]) -> Any:
        cursor = conn.cursor()
        try:
            if isinstance(values, list):
                cursor.executemany(statement, values)
            else:
                cursor.execute(statement, values)
        except self._driver_error as error:
            raise DBAPIError.instance(statement, values, error, self._driver_error) from error
        return cursor

    # -- transactions -----------------------------------------------------------------

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Any]:
        """A transaction on a pooled connection, run on the driver itself; yields the driver's connection.

        Every command and read of the journal runs in one of these. SQLAlchemy's `Connection`
        (its begin and commit events, its transaction objects) cost about 0.12 ms of Python per
        transaction, a third of a durable commit on a quiet disk; the pool it keeps is all the
        journal needs from it. A write transaction holds the write lock from its first statement
        (`_begin`). Anything raised inside rolls the transaction back; the connection goes back to
        the pool, which rolls back whatever is still open.
        """
        pooled = None
        try:
            pooled = self.engine.raw_connection()
            driver: Any = pooled.driver_connection  # the DB-API driver's own connection
            with self._batched(driver, write):
                self._begin(driver, write)
                try:
                    yield driver
                    self._commit(driver)
                except BaseException:
                    with suppress(Exception):
                        driver.rollback()
                    raise
        except self._driver_error as error:  # connecting, at BEGIN, at COMMIT, or where a batch's results arrive
            raise DBAPIError.instance("(a journal transaction)", None, error, self._driver_error) from error
        finally:
            if pooled is not None:
                pooled.close()

    def _batched(self, driver: Any, write: bool) -> AbstractContextManager[Any]:
        """Where statements may be sent without waiting for each answer (a server's round trips);
        nowhere on SQLite, whose statements run in this process."""
        return nullcontext()

    def _begin(self, driver: Any, write: bool) -> None:
        """Open the transaction. SQLite's connections run in autocommit mode (`opening`), so the journal
        says when a transaction starts: `BEGIN IMMEDIATE` takes the write lock before anything is read."""
        driver.execute("BEGIN IMMEDIATE" if write else "BEGIN")

    def _commit(self, driver: Any) -> None:
        driver.commit()

    @contextmanager
    def write_transaction(self) -> Iterator[Connection]:
        """A SQLAlchemy write transaction that holds the write lock from its first statement.

        For the store's siblings that share the database and build their statements with
        SQLAlchemy (leases, the schema check at open); they get the same lock discipline as commands.
        """
        with self.engine.connect() as conn:
            conn = conn.execution_options(**self._write_options)
            with conn.begin():
                yield conn

    def _retrying(self, work: Callable[[], Answer]) -> Answer:
        """Run `work`, waiting out lock contention the busy timeout did not absorb."""
        deadline = time.monotonic() + _LOCK_RETRY_SECONDS
        delay = 0.005
        while True:
            try:
                return work()
            except (OperationalError, DBAPIError, self._driver_error) as error:  # the driver's own, from raw work
                if not _is_lock_error(error) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    # -- reads --------------------------------------------------------------------------

    def head(self, aggregate: str) -> int:
        """The aggregate's current version, 0 when it has no events."""

        def read() -> int:
            with self._transaction(write=False) as conn:
                row = self._statement(conn, "version", {"aggregate": aggregate}).fetchone()
                return int(row[0]) if row else 0

        return self._retrying(read)

    def load(self, aggregate: str) -> Snapshot:
        """The aggregate's current state document and version, read together."""

        def read() -> Snapshot:
            with self._transaction(write=False) as conn:
                return self._snapshot(conn, aggregate)

        return self._retrying(read)

    def load_text(self, aggregate: str) -> tuple[int, CanonicalText | None]:
        """The aggregate's version and its state's stored canonical text, read together.

        For a reader that keeps its own parse: when the text is the one it parsed last,
        it need not decode or check it again.
        """

        def read() -> tuple[int, CanonicalText | None]:
            with self._transaction(write=False) as conn:
                row = self._statement(conn, "snapshot", {"aggregate": aggregate}).fetchone()
            return (0, None) if row is None else (int(row[0]), CanonicalText(row[1]))

        return self._retrying(read)

    def receipt(self, command_id: str) -> Receipt | None:
        def read() -> Receipt | None:
            with self._transaction(write=False) as conn:
                return self._receipt(conn, command_id)

        return self._retrying(read)

    def history(self, aggregate: str, after: int = 0, limit: int = HISTORY_PAGE) -> list[Event]:
        """Events with version > `after`, ascending, at most `limit` (capped at a page)."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        limit = min(limit, HISTORY_PAGE)

        def read() -> list[Event]:
            with self._transaction(write=False) as conn:
                rows = self._statement(
                    conn, "history", {"aggregate": aggregate, "after": after, "limit": limit}
                ).fetchall()
            return [self._event(row) for row in rows]

        return self._retrying(read)

    def events_of(self, aggregate: str, command_ids: Sequence[str]) -> dict[str, list[Event]]:
        """The events each of these commands recorded on `aggregate`, in one read (at most a page of IDs).

        For a reader that needs the records several commands wrote, such as every settled record a
        state keeps: one statement instead of a receipt lookup and a history read per command.
        """
        wanted = list(dict.fromkeys(command_ids))
        if len(wanted) > HISTORY_PAGE:
            raise ValueError(f"at most {HISTORY_PAGE} command IDs at once")
        if not wanted:
            return {}
        names = [f"c{index}" for index in range(len(wanted))]
        placeholders = ", ".join((f"%({name})s" if self._pyformat else f":{name}") for name in names)
        # By command ID alone, the index on it: with `aggregate = ...` as well, SQLite chose the
        # (aggregate, version) index and read every event of the aggregate. A command ID is the
        # journal's own (receipts are keyed by it), so the aggregate is checked on the rows found.
        statement = f"SELECT {_EVENT_COLUMNS} FROM events WHERE command_id IN ({placeholders}) ORDER BY version"
        values = dict(zip(names, wanted, strict=True))

        def read() -> dict[str, list[Event]]:
            with self._transaction(write=False) as conn:
                rows = self._send(conn, statement, values).fetchall()
            found: dict[str, list[Event]] = {command_id: [] for command_id in wanted}
            for row in rows:
                event = self._event(row)
                if event.aggregate == aggregate:
                    found[event.command_id].append(event)
            return found

        return self._retrying(read)

    def history_desc(self, aggregate: str, before: int | None = None, limit: int = HISTORY_PAGE) -> list[Event]:
        """Events with version < `before` (or the newest), newest first: the dashboard's history pages."""
        limit = min(max(limit, 1), HISTORY_PAGE)

        def read() -> list[Event]:
            if before is None:
                key, values = "history_desc", {"aggregate": aggregate, "limit": limit}
            else:
                key, values = "history_desc_before", {"aggregate": aggregate, "before": before, "limit": limit}
            with self._transaction(write=False) as conn:
                rows = self._statement(conn, key, values).fetchall()
            return [self._event(row) for row in rows]

        return self._retrying(read)

    def iter_history(self, aggregate: str, after: int = 0, until: int | None = None) -> Iterator[Event]:
        """Every event after `after` (up to `until`), read a page at a time."""
        cursor = after
        while True:
            page = self.history(aggregate, after=cursor)
            for event in page:
                if until is not None and event.version > until:
                    return
                yield event
            if len(page) < HISTORY_PAGE:
                return
            cursor = page[-1].version

    def verify(self, aggregate: str, since: Checkpoint | None = None) -> Checkpoint:
        """Recompute the hash chain; raise JournalCorruptError at the first break.

        The head is read first and the chain checked up to it, so a verify that runs
        while writers append still sees one consistent prefix of an append-only log.
        From the first event by default; from `since` (what an earlier verify returned)
        to check only what was appended after it, as a live dashboard does.
        """

        def read_head() -> Any:
            with self._transaction(write=False) as conn:
                return self._statement(conn, "chain_head", {"aggregate": aggregate}).fetchone()

        row = self._retrying(read_head)
        head_version = int(row[0]) if row else 0
        head_hash = row[1] if row else GENESIS_HASH
        prev = since.hash if since is not None else GENESIS_HASH
        expected_version = since.version if since is not None else 0
        if head_version < expected_version:
            raise JournalCorruptError(f"{aggregate}: the head went back from {expected_version} to {head_version}")
        for event in self.iter_history(aggregate, after=expected_version, until=head_version):
            expected_version += 1
            if event.version != expected_version:
                raise JournalCorruptError(
                    f"{aggregate}: event version {event.version} follows {expected_version - 1}"
                )
            if event.prev_hash != prev:
                raise JournalCorruptError(f"{aggregate}: event {event.version} does not link to its predecessor")
            data_json = canonical_json(event.data)
            sealed = chain_hash(prev, aggregate, event.version, event.command_id, event.type, data_json)
            if sealed != event.hash:
                raise JournalCorruptError(f"{aggregate}: event {event.version} does not match its hash")
            prev = event.hash
        if head_version != expected_version or head_hash != prev:
            raise JournalCorruptError(
                f"{aggregate}: the head says version {head_version}, the chain ends at {expected_version}"
            )
        if self.history(aggregate, after=head_version, limit=1) and self.head(aggregate) == head_version:
            raise JournalCorruptError(f"{aggregate}: events exist beyond the head version {head_version}")
        return Checkpoint(version=head_version, hash=head_hash)

    # -- the command --------------------------------------------------------------------

    def execute(
        self,
        aggregate: str,
        command_id: str,
        payload: dict[str, Any],
        expected_version: int,
        decide: Decide,
        *,
        as_text: bool = False,
    ) -> Outcome:
        """Run one command in one transaction.

        A recorded `command_id` with the same payload replays its receipt (nothing is
        written, `decide` is not called) whatever version the caller read; with another
        payload it raises CommandConflictError when the caller's version is current and
        VersionConflictError when it is stale (the caller re-reads and sees who took the ID).
        Otherwise a head other than `expected_version` raises
        VersionConflictError, and anything `decide` raises leaves the journal as it was.
        `decide` gets the state's parsed document, or with `as_text` its stored text (as
        `load_text` gives it).
        """
        if not command_id:
            raise ValueError("a command needs an ID")
        try:
            digest = canonical_digest(payload)
        except CanonicalJsonError as error:
            raise ValueError(f"command {command_id!r}: payload is not canonical JSON: {error}") from None

        def attempt() -> Outcome:
            with self._transaction(write=True) as conn:
                return self._execute_in(conn, aggregate, command_id, digest, expected_version, decide, as_text)

        try:
            return self._retrying(attempt)
        except IntegrityError:
            # Another writer recorded the same command ID on another aggregate between our
            # receipt lookup and insert (possible only where locks are per aggregate).
            return self._retrying(attempt)

    def _execute_in(
        self,
        conn: Any,
        aggregate: str,
        command_id: str,
        digest: str,
        expected_version: int,
        decide: Decide,
        as_text: bool,
    ) -> Outcome:
        # Both reads are sent before either answer is awaited: one round trip to a server, not two.
        receipt_rows = self._statement(conn, "receipt", {"command_id": command_id})
        head_rows = self._statement(conn, "head", {"aggregate": aggregate})
        found, head = receipt_rows.fetchone(), head_rows.fetchone()
        if found is not None:
            recorded = self._receipt_of(found)
            if recorded.digest != digest or recorded.aggregate != aggregate:
                # A caller whose view is stale has not seen the command that took this ID: it must
                # read again (and will then see it), not be told its request conflicts.
                version = int(head[0]) if head is not None else 0
                if version != expected_version:
                    raise VersionConflictError(aggregate, expected_version, version)
                raise CommandConflictError(command_id)
            return Outcome(
                command_id=command_id,
                aggregate=aggregate,
                first_version=recorded.first_version,
                version=recorded.last_version,
                result=recorded.result,
                replayed=True,
            )
        version = int(head[0]) if head is not None else 0
        if version != expected_version:
            raise VersionConflictError(aggregate, expected_version, version)
        if head is None:
            state = None
        else:
            state = CanonicalText(head[2]) if as_text else self._parse(head[2], f"{aggregate} state")
        decision = decide(state, version)
        if not decision.events:
            raise JournalError(f"command {command_id!r}: a decision must record at least one event")
        prev = head[1] if head is not None else GENESIS_HASH
        rows = []
        for offset, new in enumerate(decision.events, start=1):
            data_json = canonical_json(new.data)
            sealed = chain_hash(prev, aggregate, version + offset, command_id, new.type, data_json)
            rows.append(
                {
                    "aggregate": aggregate,
                    "version": version + offset,
                    "command_id": command_id,
                    "type": new.type,
                    "data": data_json,
                    "prev_hash": prev,
                    "hash": sealed,
                }
            )
            prev = sealed
        last = version + len(rows)
        state_json = _state_text(decision.state, command_id)
        result_json = canonical_json(decision.result)
        self._statement(conn, "insert_event", rows[0] if len(rows) == 1 else rows)
        self._statement(
            conn,
            "insert_receipt",
            {
                "command_id": command_id,
                "aggregate": aggregate,
                "digest": digest,
                "first_version": version + 1,
                "last_version": last,
                "result": result_json,
            },
        )
        # The head last, read at once: the three writes go to a server together, and on SQLite no statement is
        # left unfinished (one would keep every later COMMIT on this pooled connection from succeeding).
        head_values = {"aggregate": aggregate, "version": version, "last": last, "state": state_json, "hash": prev}
        moved = self._statement(conn, "update_head" if head is not None else "insert_head", head_values).fetchall()
        if not moved:  # a miss rolls all three writes back
            raise VersionConflictError(aggregate, expected_version, -1)
        return Outcome(
            command_id=command_id,
            aggregate=aggregate,
            first_version=version + 1,
            version=last,
            result=json.loads(result_json),
            replayed=False,
        )

    # -- row helpers --------------------------------------------------------------------

    @staticmethod
    def _parse(text: str, what: str) -> Any:
        try:
            return json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the decoder goes
            raise JournalCorruptError(f"{what} is not JSON") from None

    def _snapshot(self, conn: Any, aggregate: str) -> Snapshot:
        row = self._statement(conn, "snapshot", {"aggregate": aggregate}).fetchone()
        if row is None:
            return Snapshot(version=0, state=None)
        return Snapshot(version=int(row[0]), state=self._parse(row[1], f"{aggregate} state"))

    def _receipt(self, conn: Any, command_id: str) -> Receipt | None:
        row = self._statement(conn, "receipt", {"command_id": command_id}).fetchone()
        return None if row is None else self._receipt_of(row)

    def _receipt_of(self, row: Any) -> Receipt:
        command_id, aggregate, digest, first_version, last_version, result = row
        return Receipt(
            command_id=command_id,
            aggregate=aggregate,
            digest=digest,
            first_version=int(first_version),
            last_version=int(last_version),
            result=self._parse(result, f"receipt {command_id}"),
        )

    def _event(self, row: Any) -> Event:
        aggregate, version, command_id, type_, data, prev_hash, hash_ = row
        return Event(
            aggregate=aggregate,
            version=int(version),
            command_id=command_id,
            type=type_,
            data=self._parse(data, f"event {aggregate}@{version}"),
            prev_hash=prev_hash,
            hash=hash_,
        )

    def close(self) -> None:
        self.engine.dispose()

    def __repr__(self) -> str:
        return f"Journal({self.where!r})"
