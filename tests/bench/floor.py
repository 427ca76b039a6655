"""The floor of a command: the journal's own statements for it, replayed on a bare sqlite3 connection.

What a command could at best cost is what its statements cost with nothing above the driver: no
pool, no seals, no JSON, no engine. `Capture` records every statement (and its parameters) the
journal sends in each write transaction it commits, at the journal's two seams (`Journal._statement`
and `Journal._send`, through which every statement goes) and its `_begin` and `_commit`; `snapshot`
copies the journal file as it is when the capture starts; `Replay` then runs the captured
transactions on that copy, in order, each as `BEGIN IMMEDIATE`, its statements exactly as sent
(every answer fetched), `COMMIT`, on a connection with the journal's settings (WAL,
synchronous=FULL), and times each. Since the copy is the journal as the first captured transaction
found it and the statements are the journal's own, the replay leaves the copy's rows equal to the
journal's (tests/core/schedule/test_year_floor.py holds that): a replay that wrote something else
would not be a floor.

Each transaction is classed by the aggregate whose receipt it inserted (a schedule command, a
pipeline command); one that inserted none (a lease, a read under the write lock) is replayed too,
so that the copy follows the journal, but counts for no class.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory_schedule.store import statements as store_statements

_INSERT_RECEIPT = store_statements.STATEMENTS["insert_receipt"]
_SEAMS = ("_begin", "_statement", "_send", "_commit")


@dataclass(frozen=True)
class Transaction:
    """One committed write transaction: its statements with their parameters, in the order sent, and the
    aggregates whose receipts it inserted."""

    statements: tuple[tuple[str, Any], ...]
    receipts: tuple[str, ...]


class Capture:
    """The write transactions a journal commits while installed, statement by statement.

    Installed on the journal object's own seams (as `tests/bench/year.py`'s `StatementTimes`), keyed by
    the driver's connection, so that reads on other connections and transactions rolled back are left out:
    a connection's statements are kept only once its `_commit` returns."""

    def __init__(self, journal: Any) -> None:
        self.journal = journal
        self.transactions: list[Transaction] = []
        self._open: dict[int, list[tuple[str, Any]]] = {}
        self._seams = {name: journal.__dict__.get(name) for name in _SEAMS}  # any wrapper installed before
        sql = journal._sql
        begin, statement, send, commit = (getattr(journal, name) for name in _SEAMS)
        opened = self._open

        def captured_begin(driver: Any, write: bool) -> None:
            opened.pop(id(driver), None)  # a transaction rolled back on this connection is not kept
            begin(driver, write)
            if write:
                opened[id(driver)] = []

        def captured_statement(conn: Any, key: str, values: Any) -> Any:
            sent = opened.get(id(conn))
            if sent is not None:
                sent.append((sql[key], values))
            return statement(conn, key, values)

        def captured_send(conn: Any, text: str, values: Any) -> Any:
            sent = opened.get(id(conn))
            if sent is not None:
                sent.append((text, values))
            return send(conn, text, values)

        def captured_commit(driver: Any) -> None:
            sent = opened.pop(id(driver), None)
            commit(driver)
            if sent:
                self.transactions.append(Transaction(tuple(sent), tuple(
                    values["aggregate"] for text, values in sent if text == _INSERT_RECEIPT)))

        for name, seam in zip(_SEAMS, (captured_begin, captured_statement, captured_send, captured_commit),
                              strict=True):
            setattr(journal, name, seam)

    def stop(self) -> None:
        """Give the journal its seams back (as they were when the capture was installed)."""
        for name, seam in self._seams.items():
            if seam is None:
                delattr(self.journal, name)
            else:
                setattr(self.journal, name, seam)


def snapshot(path: Path, copy: Path) -> None:
    """A consistent copy of the SQLite file at `path` (its WAL's committed pages included), by SQLite's backup."""
    source, target = sqlite3.connect(path), sqlite3.connect(copy)
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()


def connect_bare(path: Path) -> sqlite3.Connection:
    """A bare sqlite3 connection with the journal's settings (`store/sqlite.py`'s `connector`), in WAL mode."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    for pragma in ("busy_timeout=30000", "synchronous=FULL", "foreign_keys=ON", "temp_store=MEMORY"):
        connection.execute(f"PRAGMA {pragma}")
    return connection


class Replay:
    """A bare connection on the copy that replays captured transactions as they come, in order, timing each.

    The year replays each command's transactions right after the command (`Year.timed`), so that the
    journal's command and its floor are timed within milliseconds of each other: this machine's disk moves a
    commit's time several times over within minutes, and a floor timed after the run would not be timed
    under the load its commands met."""

    def __init__(self, copy: Path, clock: Callable[[], float] = time.perf_counter) -> None:
        self.connection = connect_bare(copy)
        self.clock = clock
        self.seconds: list[float] = []  # of each transaction replayed, in order
        self.cpu_seconds: list[float] = []  # the CPU time of each: the floor with the wait on the disk taken out

    def catch_up(self, transactions: list[Transaction]) -> None:
        """Replay every transaction of `transactions` (the capture's list so far) not yet replayed."""
        connection, clock = self.connection, self.clock
        for transaction in transactions[len(self.seconds):]:
            cpu = time.process_time()
            started = clock()
            connection.execute("BEGIN IMMEDIATE")
            for text, values in transaction.statements:
                if isinstance(values, list):
                    connection.executemany(text, values)
                else:
                    connection.execute(text, values).fetchall()
            connection.execute("COMMIT")
            self.seconds.append(clock() - started)
            self.cpu_seconds.append(time.process_time() - cpu)

    def close(self) -> None:
        self.connection.close()


def replay(copy: Path, transactions: list[Transaction], clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Each transaction run on `copy` as the journal sent it, in order; the seconds each took, BEGIN to COMMIT."""
    replaying = Replay(copy, clock)
    try:
        replaying.catch_up(transactions)
    finally:
        replaying.close()
    return replaying.seconds


@dataclass
class Floor:
    """The replay's seconds per transaction, by the aggregate whose command it committed."""

    seconds: dict[str, list[float]] = field(default_factory=dict)
    cpu_seconds: dict[str, list[float]] = field(default_factory=dict)
    transactions: int = 0

    @classmethod
    def of(cls, transactions: list[Transaction], seconds: list[float], cpu_seconds: list[float] | None = None) -> Floor:
        floor = cls(transactions=len(transactions))
        cpu = cpu_seconds if cpu_seconds is not None else [0.0] * len(seconds)
        for transaction, spent, used in zip(transactions, seconds, cpu, strict=True):
            if len(transaction.receipts) == 1:  # one command: the unit a command's own figure counts
                floor.seconds.setdefault(transaction.receipts[0], []).append(spent)
                floor.cpu_seconds.setdefault(transaction.receipts[0], []).append(used)
        return floor

    def mean_ms(self, aggregate: str) -> float | None:
        spent = self.seconds.get(aggregate)
        return 1000 * statistics.fmean(spent) if spent else None

    def cpu_mean_ms(self, aggregate: str) -> float | None:
        used = self.cpu_seconds.get(aggregate)
        return 1000 * statistics.fmean(used) if used else None

    def count(self, aggregate: str) -> int:
        return len(self.seconds.get(aggregate, []))
