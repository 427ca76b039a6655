"""The command journal: one transaction per command, append-only, hash-chained.

A command is a caller-chosen ID, a payload and a pure decision. The journal runs
the decision inside a write transaction over the aggregate's current state and
records its events, the new state and a receipt in the same commit. A retry of
a recorded ID is answered from the receipt and writes nothing; that is what lets
a runner that lost its answer simply ask again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from .canonical import CanonicalJsonError, CanonicalText, canonical_digest, canonical_json, canonical_json_parsed
from .checked_heads import CheckedHeads
from .errors import CommandConflictError, JournalError, JournalReadOnlyError, VersionConflictError
from .failures import is_lock_error, named_failure
from .records import (
    HISTORY_PAGE,
    Checkpoint,
    Decide,
    Event,
    Outcome,
    Receipt,
    Snapshot,
    chain_hash,
    receipt_text,
    sha256_text,
)
from .sealed_rows import Head, check_head, check_receipt, event_from_row, head_key, parse_json
from .state_parts import PartedText, stored_form
from .statements import EVENT_COLUMNS, statements_for
from .urls import shown_url
from .verifying import verify_chain

if TYPE_CHECKING:
    from .pool import Pool

_LOCK_RETRY_SECONDS = 120.0
T = TypeVar("T")


@dataclass
class _Held:
    """The write transaction `writing()` holds for its thread, and the heads it has read or written, checked
    (kept only where the dialect's write transaction reads one snapshot: `Journal.snapshot_held`)."""

    driver: Any
    failed: bool = False
    heads: dict[str, Head] = field(default_factory=dict)
    # Command IDs this transaction found without a receipt (kept, like `heads`, only where its snapshot is held):
    # no one else can record one until it ends, and a command it runs takes its ID out when it records it.
    unrecorded: set[str] = field(default_factory=set)
    # What the dialect reads of other connections' commits as the transaction reads (SQLite's data version):
    # under a held snapshot it stays what it was read as until the transaction ends.
    data_version: int | None = None


def _state_text(state: Any, command_id: str) -> str:
    if isinstance(state, CanonicalText):
        return state
    if not isinstance(state, dict):
        raise CanonicalJsonError(
            f"command {command_id!r}: a state is a JSON object or its canonical text, got {type(state).__name__}"
        )
    return canonical_json(state)


_EVENT_COLUMNS = ", ".join(EVENT_COLUMNS)


class Journal:
    """A journal over a pool of the driver's connections. Build it with `store.open_journal`.

    `dialect` subclasses (`sqlite.SqliteJournal`, `postgres.PostgresJournal`) say how a transaction
    starts and takes the write lock, and how the schema is looked at.
    """

    dialect = ""
    # Whether a write transaction reads one snapshot that no one else can change until it ends. Then a head
    # read (or written) inside `writing()` is the head every later read in the same transaction would find,
    # row for row, and is not read again (`_read_head`).
    snapshot_held = False

    def __init__(self, pool: Pool, url: str, *, paramstyle: str, driver: Any, read_only: str | None = None) -> None:
        self.pool = pool
        self.read_only = read_only  # why this journal can only be read, or None
        self.url = url
        self.where = shown_url(url)  # what a person may be shown: the URL, any password masked
        self._sql = statements_for(paramstyle)
        self._pyformat = paramstyle == "pyformat"
        self._driver_error: type[Exception] = driver.Error
        self._integrity_error: type[Exception] = driver.IntegrityError
        self._local = threading.local()  # the write transaction `writing()` holds, per thread
        self._checked_heads: CheckedHeads[Head] = CheckedHeads()

    # -- statements ---------------------------------------------------------------------

    def _statement(self, conn: Any, key: str, values: dict[str, Any] | list[dict[str, Any]]) -> Any:
        """Run one of the journal's statements (`statements.py`) on the driver's own cursor and return the cursor.

        Every prebuilt statement the journal sends goes through here (`events_of` builds its own, for
        its number of IDs, and sends it with `_send`), so a test or a benchmark can watch them all.
        A driver error is raised as the driver raised it; `_retrying` names it.
        """
        if isinstance(values, list):
            cursor = conn.cursor()
            cursor.executemany(self._sql[key], values)
            return cursor
        return conn.execute(self._sql[key], values)

    def _send(self, conn: Any, statement: str, values: dict[str, Any] | list[dict[str, Any]]) -> Any:
        cursor = conn.cursor()
        if isinstance(values, list):
            cursor.executemany(statement, values)
        else:
            cursor.execute(statement, values)
        return cursor

    # -- transactions -----------------------------------------------------------------

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Any]:
        """A transaction on a pooled connection, run on the driver itself; yields the driver's connection.

        Every command and read of the journal, and every lease, runs in one of these. A write
        transaction holds the write lock from its first statement (`_begin`). Anything raised inside
        rolls the transaction back; the connection goes back to the pool, which rolls back whatever is
        still open. Inside `writing()` every read and command of this thread runs in the transaction it
        holds instead.
        """
        held: _Held | None = getattr(self._local, "held", None)
        if held is not None:
            if held.failed:
                raise JournalError("a command in this write transaction failed; nothing more can run in it")
            try:
                yield held.driver
            except BaseException:
                held.failed = True  # a command may have written part of itself: the transaction is rolled back
                raise
            return
        if write:
            self._refuse_if_read_only()
        pooled = self.pool.checkout()
        try:
            driver: Any = pooled.driver_connection
            with self._batched(driver, write):
                self._begin(driver, write)
                try:
                    yield driver
                    self._commit(driver)
                except BaseException:
                    with suppress(Exception):
                        driver.rollback()
                    raise
        finally:
            pooled.close()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the journal's write lock while a caller reads, plans and runs its command.

        Every journal call this thread makes inside runs in one write transaction, committed when
        the block ends (rolled back if it raises, or if a command inside it failed). Other writers
        queue behind it (SQLite's `BEGIN IMMEDIATE`, PostgreSQL's advisory lock) instead of
        committing between the caller's read and its command, so a command planned here never
        meets a version conflict; readers are not blocked. Nested use joins the outer block.
        """
        if getattr(self._local, "held", None) is not None:
            yield
            return
        self._refuse_if_read_only()

        def take() -> tuple[Any, Any]:
            pooled = self.pool.checkout()
            try:
                driver = pooled.driver_connection
                self._begin(driver, True)
            except BaseException:
                pooled.close()
                raise
            return pooled, driver

        pooled, driver = self._retrying(take)
        held = _Held(driver)
        self._local.held = held
        try:
            try:
                yield
            finally:
                self._local.held = None
            if held.failed:
                driver.rollback()
            else:
                self._commit(driver)
        except self._driver_error as error:  # at COMMIT
            with suppress(Exception):
                driver.rollback()
            raise self._failure(error) from error
        except BaseException:
            with suppress(Exception):
                driver.rollback()
            raise
        finally:
            pooled.close()

    def _batched(self, driver: Any, write: bool) -> AbstractContextManager[Any]:
        """Where statements may be sent without waiting for each answer (a server's round trips);
        nowhere on SQLite, whose statements run in this process."""
        return nullcontext()

    def _begin(self, driver: Any, write: bool) -> None:
        """Open the transaction; a write transaction takes the write lock before anything is read."""
        raise NotImplementedError

    def _commit(self, driver: Any) -> None:
        driver.commit()

    def _retrying(self, work: Callable[[], T]) -> T:
        """Run `work`, waiting out lock contention the busy timeout did not absorb.

        Any other database failure, and contention that outlasts the retries, is raised as the
        `JournalError` that names it (`_failure`): callers never see the driver's own errors. The
        driver's IntegrityError passes through for the caller that expects one.
        """
        deadline = time.monotonic() + _LOCK_RETRY_SECONDS
        delay = 0.005
        while True:
            try:
                return work()
            except self._integrity_error:
                raise
            except self._driver_error as error:
                if not is_lock_error(error) or time.monotonic() > deadline:
                    raise self._failure(error) from error
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def _failure(self, error: BaseException) -> JournalError:
        """The named JournalError for a database failure, with a one-line message a person can act on."""
        return named_failure(self.where, error)

    def _refuse_if_read_only(self) -> None:
        if self.read_only is not None:
            raise JournalReadOnlyError(
                f"the journal {self.where} is read-only ({self.read_only}): it can be read but not written"
            )

    # -- reads --------------------------------------------------------------------------

    def head(self, aggregate: str) -> int:
        """The aggregate's current version, 0 when it has no events."""

        def read() -> int:
            with self._transaction(write=False) as conn:
                row = self._statement(conn, "version", {"aggregate": aggregate}).fetchone()
                return int(row[0]) if row else 0

        return self._retrying(read)

    def aggregates(self) -> list[str]:
        """Every aggregate the journal holds anything of, by name: what a whole check verifies."""

        def read() -> list[str]:
            with self._transaction(write=False) as conn:
                return [str(row[0]) for row in self._statement(conn, "aggregate_names", {}).fetchall()]

        return self._retrying(read)

    def load(self, aggregate: str) -> Snapshot:
        """The aggregate's current state document and version, read together (its seal checked)."""
        version, text = self.load_text(aggregate)
        return Snapshot(version=version, state=None if text is None else parse_json(text, f"{aggregate} state"))

    def load_text(self, aggregate: str) -> tuple[int, CanonicalText | None]:
        """The aggregate's version and its state's stored canonical text, read together.

        For a reader that keeps its own parse: when the text is the one it parsed last,
        it need not decode or check it again. A state stored in parts is a `PartedText`, its
        `parts` the checked texts it joins from, so a reader may take only the parts it needs.
        The text is the one the head's command sealed (JournalCorruptError otherwise): an
        edited state row is refused on every read.
        """

        def read() -> tuple[int, CanonicalText | None]:
            with self._transaction(write=False) as conn:
                head = self._read_head(conn, aggregate)
            return head.version, head.state

        return self._retrying(read)

    def receipt(self, command_id: str) -> Receipt | None:
        """The command's receipt, checked against the seal its command recorded; None when it never ran."""

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
            return [event_from_row(row) for row in rows]

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
                event = event_from_row(row)
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
            return [event_from_row(row) for row in rows]

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
        """Recompute the hash chain and every seal; raise JournalCorruptError, saying what, at the first break
        (`verifying.verify_chain`). From the first event, or from `since`, what an earlier verify returned."""
        return verify_chain(self, aggregate, since)

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
        except self._integrity_error:
            # Another writer recorded the same command ID on another aggregate between our
            # receipt lookup and insert (possible only where locks are per aggregate).
            try:
                return self._retrying(attempt)
            except self._integrity_error as error:
                raise self._failure(error) from error

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
        unrecorded = self._held_unrecorded()
        known_missing = unrecorded is not None and command_id in unrecorded
        receipt_rows = None if known_missing else self._statement(conn, "receipt", {"command_id": command_id})
        reading = self._head_reading(conn, aggregate)
        recorded = None if receipt_rows is None else check_receipt(command_id, receipt_rows.fetchone())
        current = reading()
        version = current.version
        if recorded is not None:
            if recorded.digest != digest or recorded.aggregate != aggregate:
                # A caller whose view is stale has not seen the command that took this ID: it must
                # read again (and will then see it), not be told its request conflicts.
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
        if version != expected_version:
            raise VersionConflictError(aggregate, expected_version, version)
        if current.state is None:
            state = None
        else:
            state = current.state if as_text else parse_json(current.state, f"{aggregate} state")
        decision = decide(state, version)
        if not decision.events:
            raise JournalError(f"command {command_id!r}: a decision must record at least one event")
        last = version + len(decision.events)
        # A state given in parts is stored as its manifest and the parts that changed (`state_parts`).
        state_json, parts, written, gone = stored_form(_state_text(decision.state, command_id), current.parts)
        result_json, result = canonical_json_parsed(decision.result)  # `result`: the caller's copy, as a replay's
        receipt = {
            "command_id": command_id,
            "aggregate": aggregate,
            "digest": digest,
            "first_version": version + 1,
            "last_version": last,
            "result": result_json,
        }
        # The command's last event seals the state it leaves and its receipt: see `verify`.
        seal = (sha256_text(state_json), sha256_text(receipt_text(command_id, aggregate, digest, version + 1, last,
                                                                  result_json)))
        prev = current.hash
        rows = []
        for offset, new in enumerate(decision.events, start=1):
            data_json = canonical_json(new.data)
            sealing = seal if offset == len(decision.events) else None
            sealed = chain_hash(prev, aggregate, version + offset, command_id, new.type, data_json, sealing)
            rows.append(
                {
                    "aggregate": aggregate,
                    "version": version + offset,
                    "command_id": command_id,
                    "type": new.type,
                    "data": data_json,
                    "prev_hash": prev,
                    "hash": sealed,
                    "state_sha256": sealing[0] if sealing else None,
                    "receipt_sha256": sealing[1] if sealing else None,
                }
            )
            prev = sealed
        self._statement(conn, "insert_event", rows[0] if len(rows) == 1 else rows)
        self._statement(conn, "insert_receipt", receipt)
        if unrecorded is not None:
            unrecorded.discard(command_id)
        if written:
            self._statement(conn, "put_part", [{"aggregate": aggregate, "name": name, "text": text}
                                               for name, text in written])
        if gone:
            self._statement(conn, "delete_part", [{"aggregate": aggregate, "name": name} for name in gone])
        # The head last, read at once: the three writes go to a server together, and on SQLite no statement is
        # left unfinished (one would keep every later COMMIT on this pooled connection from succeeding).
        head_values = {"aggregate": aggregate, "version": version, "last": last, "state": state_json, "hash": prev}
        moved = self._statement(conn, "update_head" if version else "insert_head", head_values).fetchall()
        if not moved:  # a miss rolls every write back
            raise VersionConflictError(aggregate, expected_version, -1)
        # The head rows as the `head` statement will read them back, sealed by the hashes just computed.
        last_event = rows[-1]
        whole = decision.state if isinstance(decision.state, PartedText) else CanonicalText(state_json)
        written_head = Head(last, prev, whole, parts)
        self._wrote_head(
            conn,
            aggregate,
            ((last, prev, state_json, command_id, last_event["type"], last_event["data"], last_event["prev_hash"],
              prev, seal[0], seal[1], None), tuple(sorted((name, text) for name, (text, _digest) in parts.items()))),
            written_head,
        )
        held = self._held_heads()
        if held is not None:
            held[aggregate] = written_head
        return Outcome(
            command_id=command_id,
            aggregate=aggregate,
            first_version=version + 1,
            version=last,
            result=result,
            replayed=False,
        )

    # -- seals and rows ---------------------------------------------------------------------

    def _read_head(self, conn: Any, aggregate: str) -> Head:
        """The aggregate's head, checked against its seal (`_head_reading`)."""
        return self._head_reading(conn, aggregate)()

    def _head_reading(self, conn: Any, aggregate: str) -> Callable[[], Head]:
        """The aggregate's head, checked against its seal, as a call that answers it: what reads it is sent now,
        its answer awaited when called (a server gets it together with whatever was sent before the call).

        Inside a write transaction whose snapshot no one else can change (`snapshot_held`), the head this
        transaction already read or wrote is the answer: the rows a second statement would read are those same
        rows."""
        held = self._held_heads()
        known = held.get(aggregate) if held is not None else None
        if known is not None:
            return lambda: known
        answer = self._send_head_read(conn, aggregate)

        def checked() -> Head:
            head = answer()
            if held is not None:
                held[aggregate] = head
            return head

        return checked

    def _send_head_read(self, conn: Any, aggregate: str) -> Callable[[], Head]:
        """Send the `head` statement; the call returns its rows' head, checked (`_checked_head`)."""
        rows = self._statement(conn, "head", {"aggregate": aggregate})
        return lambda: self._checked_head(aggregate, head_key(rows.fetchall()))

    def _wrote_head(self, conn: Any, aggregate: str, key: tuple[Any, ...], head: Head) -> None:
        """A command on `conn` wrote this head, whose rows `key` is (as `head_key` gives them): remembered as
        checked, since the command has just computed every hash they hold."""
        self._checked_heads.remember(aggregate, key, head)

    def _held(self) -> _Held | None:
        """The write transaction this thread holds, where its snapshot is held (`snapshot_held`)."""
        held: _Held | None = getattr(self._local, "held", None)
        return held if held is not None and self.snapshot_held else None

    def _held_heads(self) -> dict[str, Head] | None:
        """The heads the write transaction this thread holds has read or written, where its snapshot is held."""
        held = self._held()
        return held.heads if held is not None else None

    def _held_unrecorded(self) -> set[str] | None:
        """The command IDs the write transaction this thread holds found without a receipt, where its snapshot
        is held."""
        held = self._held()
        return held.unrecorded if held is not None else None

    def _checked_head(self, aggregate: str, row: Any) -> Head:
        """`sealed_rows.check_head`, answered from the memo of rows already checked when this row is one of them."""
        head = self._checked_heads.get(aggregate, row)
        if head is None:
            head = check_head(aggregate, row)
            self._checked_heads.remember(aggregate, row, head)
        return head

    def _receipt(self, conn: Any, command_id: str) -> Receipt | None:
        """The command's receipt, checked; inside a write transaction whose snapshot is held, an ID it already
        found without one is answered without reading again (the command that records it takes it out)."""
        unrecorded = self._held_unrecorded()
        if unrecorded is not None and command_id in unrecorded:
            return None
        receipt = check_receipt(command_id, self._statement(conn, "receipt", {"command_id": command_id}).fetchone())
        if receipt is None and unrecorded is not None:
            unrecorded.add(command_id)
        return receipt

    def close(self) -> None:
        """Close the pool's idle connections (a journal used again opens new ones)."""
        self.pool.dispose()

    # -- the schema, as each dialect shows it ----------------------------------------------

    def table_names(self, driver: Any) -> set[str]:
        """The tables the database holds (for the schema check at open)."""
        raise NotImplementedError

    def column_names(self, driver: Any, table: str) -> set[str]:
        """The columns `table` has (for upgrading a journal's format)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"Journal({self.where!r})"
