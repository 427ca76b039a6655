"""Creating a journal's schema and upgrading an old one: where the SQLModel declaration (`tables.py`) is used.

`opening` comes here only when a cheap look (the tables present, the format row) finds something to
do: a new database, a missing table, or a journal of format 1. Everything runs in one write
transaction, under the journal's write lock, so several processes may open a new database at once.
The DDL is SQLAlchemy's, compiled for the journal's dialect from the SQLModel tables, and run on the
journal's own connection.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Dialect
from sqlalchemy.schema import CreateIndex, CreateTable

from . import tables
from .errors import JournalOpenError
from .journal import Journal


def _dialect(name: str) -> Dialect:
    if name == "sqlite":
        from sqlalchemy.dialects import sqlite

        return sqlite.dialect()
    from sqlalchemy.dialects import postgresql

    return postgresql.dialect()  # type: ignore[no-untyped-call]


def create_missing(journal: Journal, driver: Any, existing: set[str]) -> None:
    """Create every journal table `existing` lacks, with its indexes, as SQLModel declares them."""
    dialect = _dialect(journal.dialect)
    for table in tables.journal_tables():
        if table.name in existing:
            continue
        driver.execute(str(CreateTable(table).compile(dialect=dialect)))
        for index in sorted(table.indexes, key=lambda index: str(index.name)):
            driver.execute(str(CreateIndex(index).compile(dialect=dialect)))


def _upgrade(journal: Journal, driver: Any) -> None:
    """Format 1 to 2: the seal columns and the receipts' index.

    Nothing already written changes: format 1 events hash as they did, and `verify` reports the
    commands they record as unsealed (`Checkpoint.unsealed_through`). The next command seals the state.
    """
    columns = journal.column_names(driver, tables.EventRow.__tablename__)
    for column in ("state_sha256", "receipt_sha256"):
        if column not in columns:
            driver.execute(f"ALTER TABLE events ADD COLUMN {column} TEXT")
    driver.execute(f"CREATE INDEX IF NOT EXISTS {tables.RECEIPTS_BY_AGGREGATE} ON receipts (aggregate, last_version)")


def create_or_upgrade(journal: Journal, where: str) -> None:
    """Bring a writable database to this build's journal format, or refuse one that holds something else."""

    def work() -> None:
        with journal._transaction(write=True) as driver:
            names = journal.table_names(driver)
            if names and tables.JournalMeta.__tablename__ not in names:
                raise JournalOpenError(
                    f"{where} is a database but not a factory-schedule journal (it has no journal_meta table)"
                )
            create_missing(journal, driver, names)
            row = journal._statement(driver, "format", {}).fetchone()
            if row is None:
                journal._send(driver, journal._sql["insert_format"], {"value": tables.JOURNAL_FORMAT})
            elif row[0] in tables.LEGACY_FORMATS:
                _upgrade(journal, driver)
                journal._send(driver, journal._sql["update_format"], {"value": tables.JOURNAL_FORMAT})
            elif row[0] != tables.JOURNAL_FORMAT:
                raise JournalOpenError(
                    f"{where} is a journal of format {row[0]!r}; this build reads {tables.JOURNAL_FORMAT!r}"
                )

    journal._retrying(work)
