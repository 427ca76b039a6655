"""The SQL the journal runs every day and the SQLModel declaration that creates its tables agree.

The journal's statements (`store/statements.py`) are text run on the driver's connection, while the
tables are created and upgraded from the SQLModel classes in `store/tables.py`. These tests hold
the two together in both directions: the columns the statements name are the declared columns; a
database made by the declaration alone is a journal the everyday path works on; and a journal made
by `open_journal` has exactly the declared tables and columns.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import create_engine, inspect
from sqlmodel import SQLModel

from factory_schedule.store import leases, open_journal, statements, tables
from tests.store.support import AGGREGATE, bump


def _declared() -> dict[str, set[str]]:
    return {table.name: {column.name for column in table.columns} for table in tables.journal_tables()}


def test_the_statements_name_exactly_the_declared_tables_and_columns() -> None:
    assert {name: set(columns) for name, columns in statements.TABLES.items()} == _declared()


def test_a_database_made_from_the_declaration_alone_is_a_journal_the_everyday_path_runs_on(journal_url) -> None:
    engine = create_engine(journal_url)
    try:
        SQLModel.metadata.create_all(engine, tables=tables.journal_tables())
        with engine.begin() as conn:
            conn.execute(tables.journal_tables()[0].insert().values(key="format", value=tables.JOURNAL_FORMAT))
    finally:
        engine.dispose()
    journal = open_journal(journal_url)
    try:
        for version in range(3):
            journal.execute(AGGREGATE, f"c{version}", {}, version, bump(f"c{version}"))
        lease = leases.acquire(journal, "worker", "me", 60, datetime.now(UTC))
        assert leases.list_leases(journal) == [lease]
        leases.release(journal, "worker", "me")
        assert journal.verify(AGGREGATE).version == 3 and len(journal.history(AGGREGATE)) == 3
    finally:
        journal.close()


def test_a_journal_open_journal_makes_has_exactly_the_declared_tables_columns_and_indexes(journal_url) -> None:
    open_journal(journal_url).close()
    engine = create_engine(journal_url)
    try:
        found = inspect(engine)
        assert {name: {column["name"] for column in found.get_columns(name)} for name in found.get_table_names()} == (
            _declared()
        )
        declared_indexes = {index.name for table in tables.journal_tables() for index in table.indexes}
        # PostgreSQL lists the index behind a unique constraint among the indexes too; SQLite does not.
        unique = {constraint["name"] for name in _declared() for constraint in found.get_unique_constraints(name)}
        assert {index["name"] for name in _declared() for index in found.get_indexes(name)} - unique == declared_indexes
    finally:
        engine.dispose()
