"""The journal's tables, declared with SQLModel: what creates a journal's schema and upgrades an old one.

Imported only when a journal is created or needs upgrading (`schema.py`); the statements that read
and write these tables every day are SQL text in `statements.py`, run on the driver's connection, and
a test holds the two to the same columns. Every lookup the journal makes is by a key or an index
prefix, so its cost does not grow with the number of events (verify's walk reads receipts a page of
versions at a time by `receipts_aggregate_last_version`)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Table, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from .statements import JOURNAL_FORMAT, LEGACY_FORMATS, RECEIPTS_BY_AGGREGATE

__all__ = [
    "JOURNAL_FORMAT",
    "LEGACY_FORMATS",
    "RECEIPTS_BY_AGGREGATE",
    "AggregateRow",
    "EventRow",
    "JournalMeta",
    "LeaseRow",
    "ReceiptRow",
    "StatePartRow",
    "journal_tables",
]


class JournalMeta(SQLModel, table=True):
    """Marks a database as a journal, so a stray file is refused instead of written into."""

    __tablename__ = "journal_meta"
    key: str = Field(primary_key=True)
    value: str


class EventRow(SQLModel, table=True):
    """One event: its place in the aggregate's chain and the hash that seals it.

    A command's last event also holds the SHA-256 of the state it left and of its receipt, and its
    hash covers them: the chain binds every row a decision depends on, not only the events.
    """

    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("aggregate", "version", name="events_aggregate_version"),)
    id: int | None = Field(default=None, primary_key=True)
    aggregate: str
    version: int
    command_id: str = Field(index=True)
    type: str
    data: str = Field(sa_column=Column(Text, nullable=False))
    prev_hash: str
    hash: str
    state_sha256: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    receipt_sha256: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class ReceiptRow(SQLModel, table=True):
    """What a command produced, keyed by its ID, so a retry replays instead of acting twice."""

    __tablename__ = "receipts"
    __table_args__ = (Index(RECEIPTS_BY_AGGREGATE, "aggregate", "last_version"),)  # verify's walk, page by page
    command_id: str = Field(primary_key=True)
    aggregate: str
    digest: str
    first_version: int
    last_version: int
    result: str = Field(sa_column=Column(Text, nullable=False))


class AggregateRow(SQLModel, table=True):
    """Each aggregate's current state document, version and chain head."""

    __tablename__ = "aggregates"
    aggregate: str = Field(primary_key=True)
    version: int
    state: str = Field(sa_column=Column(Text, nullable=False))
    hash: str


class StatePartRow(SQLModel, table=True):
    """One named part of an aggregate's state stored in parts (`state_parts.py`): its head holds their manifest."""

    __tablename__ = "state_parts"
    aggregate: str = Field(primary_key=True)
    name: str = Field(primary_key=True)
    text: str = Field(sa_column=Column(Text, nullable=False))


class LeaseRow(SQLModel, table=True):
    """One held lease (`leases.py`). Instants are milliseconds since the epoch (UTC), so both backends compare them
    alike."""

    __tablename__ = "leases"
    scope: str = Field(primary_key=True)
    owner: str
    ttl_ms: int = Field(sa_column=Column(BigInteger, nullable=False))
    acquired_ms: int = Field(sa_column=Column(BigInteger, nullable=False))
    heartbeat_ms: int = Field(sa_column=Column(BigInteger, nullable=False))
    info: str = Field(sa_column=Column(Text, nullable=False))


def journal_tables() -> list[Table]:
    """Every table a journal has, in the order they are created."""
    names = ("journal_meta", "events", "receipts", "aggregates", "state_parts", "leases")
    return [SQLModel.metadata.tables[name] for name in names]
