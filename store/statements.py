"""Every statement the journal and its leases send, as SQL text over the tables `tables.py` declares.

The journal runs these on the driver's own connection (stdlib `sqlite3`, or psycopg), not through
SQLAlchemy: building, compiling and executing SQLAlchemy statements cost about 0.15 ms of Python a
statement and 0.12 ms a transaction, each as much as half a durable commit, and importing SQLAlchemy
and SQLModel cost every command line about 0.35 s. The SQLModel classes in `tables.py` remain the
schema's declaration and are what creates and upgrades a journal (`schema.py`); a test holds these
statements to their columns (tests/store/test_schema_declaration.py).

Written with `:name` parameters (sqlite3's named style); `in_paramstyle` gives psycopg's `%(name)s`.
"""

from __future__ import annotations

import re

# Format 2 seals each command's state and receipt into its last event (`state_sha256`, `receipt_sha256`);
# format 3 may store a state in parts (`state_parts.py`), the head holding their manifest. An older
# journal is upgraded in place when opened where it can be written (`schema.py`): its events keep
# their hashes, a format 1 journal's commands are reported unsealed by `verify`, and a whole state
# stays readable as it is until the next command stores it in parts.
JOURNAL_FORMAT = "factory-schedule-journal/3"
LEGACY_FORMATS = ("factory-schedule-journal/1", "factory-schedule-journal/2")
RECEIPTS_BY_AGGREGATE = "receipts_aggregate_last_version"

# The columns each table has, as the statements below name them.
EVENT_COLUMNS = ("aggregate", "version", "command_id", "type", "data", "prev_hash", "hash", "state_sha256",
                 "receipt_sha256")
RECEIPT_COLUMNS = ("command_id", "aggregate", "digest", "first_version", "last_version", "result")
AGGREGATE_COLUMNS = ("aggregate", "version", "state", "hash")
PART_COLUMNS = ("aggregate", "name", "text")
LEASE_COLUMNS = ("scope", "owner", "ttl_ms", "acquired_ms", "heartbeat_ms", "info")
META_COLUMNS = ("key", "value")
TABLES = {
    "journal_meta": META_COLUMNS,
    "events": ("id", *EVENT_COLUMNS),
    "receipts": RECEIPT_COLUMNS,
    "aggregates": AGGREGATE_COLUMNS,
    "state_parts": PART_COLUMNS,
    "leases": LEASE_COLUMNS,
}

_EVENTS = ", ".join(EVENT_COLUMNS)
_LEASES = ", ".join(LEASE_COLUMNS)

# A receipt is read with the event that sealed it (its command's last), and an ID with no receipt with whether
# any event carries it: a receipt deleted by hand must not let its command run a second time.
_RECEIPT_READ = (
    "SELECT r.command_id, r.aggregate, r.digest, r.first_version, r.last_version, r.result, "
    "e.command_id, e.type, e.data, e.prev_hash, e.hash, e.state_sha256, e.receipt_sha256, "
    "(SELECT x.version FROM events x WHERE x.command_id = q.id LIMIT 1) "
    "FROM (SELECT CAST(:command_id AS TEXT) AS id) q "
    "LEFT JOIN receipts r ON r.command_id = q.id "
    "LEFT JOIN events e ON e.aggregate = r.aggregate AND e.version = r.last_version"
)
# The head is read with the event it names, whether any event lies beyond it and the state's parts (one
# statement, so that they are one snapshot under PostgreSQL's READ COMMITTED too), so that every read of the
# state checks the seal of the command that left it (`Journal._checked_head`). The head's row comes once, its
# part columns empty, and each part a row of its own, its head columns empty: the head's columns (its manifest
# and its event's data, a few KB) are not repeated on every part's row.
_HEAD_COLUMNS_READ = (
    "a.version, a.hash, a.state, e.command_id, e.type, e.data, e.prev_hash, e.hash, e.state_sha256, "
    "e.receipt_sha256, (SELECT n.version FROM events n WHERE n.aggregate = q.name "
    "AND n.version > COALESCE(a.version, 0) ORDER BY n.version LIMIT 1)"
)
_HEAD_FROM = (
    "FROM (SELECT CAST(:aggregate AS TEXT) AS name) q "
    "LEFT JOIN aggregates a ON a.aggregate = q.name "
    "LEFT JOIN events e ON e.aggregate = a.aggregate AND e.version = a.version"
)
_HEAD_READ = (
    f"SELECT {_HEAD_COLUMNS_READ}, NULL, NULL {_HEAD_FROM} "
    "UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, p.name, p.text "
    "FROM state_parts p WHERE p.aggregate = CAST(:aggregate AS TEXT)"
)
# SQLite's reads of a head in two steps (`SqliteJournal._send_head_read`), in one transaction: the head's row
# with the connection's data version (which moves when any other connection commits), then its parts only
# when the row or the data version is not the one this connection last read or wrote.
_HEAD_ROW_READ = f"SELECT {_HEAD_COLUMNS_READ}, (SELECT data_version FROM pragma_data_version) {_HEAD_FROM}"


def _next_names(name: str, table: str) -> str:
    """A recursive query's member naming each distinct aggregate of `table` in order, one index seek each."""
    return (f"{name}(name) AS (SELECT MIN(aggregate) FROM {table} UNION ALL "
            f"SELECT (SELECT MIN(aggregate) FROM {table} WHERE aggregate > {name}.name) FROM {name} "
            f"WHERE {name}.name IS NOT NULL)")


STATEMENTS = {
    "format": "SELECT value FROM journal_meta WHERE key = 'format'",
    "insert_format": "INSERT INTO journal_meta (key, value) VALUES ('format', :value)",
    "update_format": "UPDATE journal_meta SET value = :value WHERE key = 'format'",
    "receipt": _RECEIPT_READ,
    "head": _HEAD_READ,
    "head_row": _HEAD_ROW_READ,
    "parts": "SELECT name, text FROM state_parts WHERE aggregate = :aggregate",
    "data_version": "PRAGMA data_version",
    "version": "SELECT version FROM aggregates WHERE aggregate = :aggregate",
    # Every aggregate any table names: a head, an event or a receipt left without the others is still a chain
    # to verify (and its verify says what is missing). The events', receipts' and parts' names are found by
    # seeking each next name in their indexes (a loose index scan): one seek per aggregate, not a read of history.
    "aggregate_names": f"WITH RECURSIVE {_next_names('event_names', 'events')}, "
    f"{_next_names('receipt_names', 'receipts')}, {_next_names('part_names', 'state_parts')} "
    "SELECT aggregate FROM aggregates UNION SELECT name FROM event_names WHERE name IS NOT NULL "
    "UNION SELECT name FROM receipt_names WHERE name IS NOT NULL "
    "UNION SELECT name FROM part_names WHERE name IS NOT NULL ORDER BY 1",
    "history": f"SELECT {_EVENTS} FROM events WHERE aggregate = :aggregate AND version > :after "
    "ORDER BY version LIMIT :limit",
    "history_desc": f"SELECT {_EVENTS} FROM events WHERE aggregate = :aggregate ORDER BY version DESC LIMIT :limit",
    "history_desc_before": f"SELECT {_EVENTS} FROM events WHERE aggregate = :aggregate AND version < :before "
    "ORDER BY version DESC LIMIT :limit",
    "receipts_between": f"SELECT {', '.join(RECEIPT_COLUMNS)} FROM receipts "
    "WHERE aggregate = :aggregate AND last_version > :after AND last_version <= :until",
    "insert_event": f"INSERT INTO events ({_EVENTS}) VALUES (:aggregate, :version, :command_id, :type, :data, "
    ":prev_hash, :hash, :state_sha256, :receipt_sha256)",
    # RETURNING, so that whether the head moved is read from a row: a pipelined cursor has no row count yet.
    "update_head": "UPDATE aggregates SET version = :last, state = :state, hash = :hash "
    "WHERE aggregate = :aggregate AND version = :version RETURNING version",
    "insert_head": "INSERT INTO aggregates (aggregate, version, state, hash) "
    "VALUES (:aggregate, :last, :state, :hash) RETURNING version",
    "put_part": "INSERT INTO state_parts (aggregate, name, text) VALUES (:aggregate, :name, :text) "
    "ON CONFLICT (aggregate, name) DO UPDATE SET text = excluded.text",
    "delete_part": "DELETE FROM state_parts WHERE aggregate = :aggregate AND name = :name",
    "insert_receipt": f"INSERT INTO receipts ({', '.join(RECEIPT_COLUMNS)}) "
    "VALUES (:command_id, :aggregate, :digest, :first_version, :last_version, :result)",
    # Leases: every write says from its RETURNING rows whether it changed one (as above).
    "lease": f"SELECT {_LEASES} FROM leases WHERE scope = :scope",
    "leases": f"SELECT {_LEASES} FROM leases ORDER BY scope",
    "insert_lease": f"INSERT INTO leases ({_LEASES}) "
    "VALUES (:scope, :owner, :ttl_ms, :acquired_ms, :heartbeat_ms, :info) RETURNING scope",
    "heartbeat_lease": "UPDATE leases SET heartbeat_ms = :heartbeat_ms WHERE scope = :scope AND owner = :owner "
    "RETURNING scope",
    "heartbeat_lease_info": "UPDATE leases SET heartbeat_ms = :heartbeat_ms, info = :info "
    "WHERE scope = :scope AND owner = :owner RETURNING scope",
    "release_lease": "DELETE FROM leases WHERE scope = :scope AND owner = :owner RETURNING scope",
    # Only while it is still stale and still that holder's, at the moment of deletion.
    "remove_stale_lease": "DELETE FROM leases WHERE scope = :scope AND owner = :owner "
    "AND heartbeat_ms = :heartbeat_ms AND heartbeat_ms + :ttls * ttl_ms < :now_ms RETURNING scope",
}


def in_paramstyle(statement: str, paramstyle: str) -> str:
    """`statement` with its `:name` parameters in the driver's style (`named` or `pyformat`)."""
    if paramstyle == "named":
        return statement
    if paramstyle == "pyformat":
        return re.sub(r"(?<!:):(\w+)", r"%(\1)s", statement)
    raise ValueError(f"unsupported driver parameter style {paramstyle!r}")


def statements_for(paramstyle: str) -> dict[str, str]:
    """Every statement above in the driver's parameter style."""
    return {key: in_paramstyle(sql, paramstyle) for key, sql in STATEMENTS.items()}
