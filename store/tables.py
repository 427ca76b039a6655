"""The journal's tables. Every lookup the journal makes is by a unique key or a
unique index prefix, so its cost does not grow with the number of events."""

from __future__ import annotations

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

JOURNAL_FORMAT = "factory-schedule-journal/1"


class JournalMeta(SQLModel, table=True):
    """Marks a database as a journal, so a stray file is refused instead of written into."""

    __tablename__ = "journal_meta"
    key: str = Field(primary_key=True)
    value: str


class EventRow(SQLModel, table=True):
    """One event: its place in the aggregate's chain and the hash that seals it."""

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


class ReceiptRow(SQLModel, table=True):
    """What a command produced, keyed by its ID, so a retry replays instead of acting twice."""

    __tablename__ = "receipts"
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
