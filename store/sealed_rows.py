"""The rows a journal reads, held to the seals its chain recorded: the head with its state, a receipt, an event.

Each check is a pure function of the row a statement read (the same bytes always pass or always
fail), which is what lets the journal remember a head row it has already checked (`checked_heads`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .canonical import CanonicalText
from .errors import JournalCorruptError
from .records import GENESIS_HASH, Event, Receipt, chain_hash, receipt_text, sha256_text
from .state_parts import is_manifest, joined_parts

# The columns of a `head` row before its part's name and text (`statements._HEAD_READ`).
HEAD_COLUMNS = 11


@dataclass(frozen=True)
class Head:
    """The head as checked against its seal: its version, its hash and its state's whole text; for a state
    stored in parts, the parts by name as (text, SHA-256), which the next command compares its own with."""

    version: int
    hash: str
    state: CanonicalText | None
    parts: dict[str, tuple[str, str]] = field(default_factory=dict)


def head_key(rows: list[Any]) -> tuple[Any, ...]:
    """The rows a `head` statement read, as one value: the head's columns, then its parts (name, text) by name.

    The head's row is the one with no part's name (a part's name is never empty: NOT NULL); there is one."""
    heads = [tuple(row[:HEAD_COLUMNS]) for row in rows if row[HEAD_COLUMNS] is None]
    if len(heads) != 1:
        raise JournalCorruptError(f"the head was read as {len(heads)} rows, not one")
    parts = sorted((row[HEAD_COLUMNS], row[HEAD_COLUMNS + 1]) for row in rows if row[HEAD_COLUMNS] is not None)
    return (heads[0], tuple(parts))


def parse_json(text: str, what: str) -> Any:
    """The document a stored text holds; JournalCorruptError, naming `what`, when it is not JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the decoder goes
        raise JournalCorruptError(f"{what} is not JSON") from None


def check_head(aggregate: str, key: tuple[Any, ...]) -> Head:
    """The head a `head` statement read (as `head_key` gives it), once it is known to be what the chain's last
    command sealed.

    Refused (JournalCorruptError, saying which) when an event lies beyond the head (a head set back
    or deleted), when the head names no event or not its hash, when that event does not match its
    own hash, when the state (or its manifest) is not the text it sealed, or when a part is not the
    one its manifest names (`state_parts.joined_parts`). A head left by a format 1 build, whose
    event carries no seal, is taken as it is: `verify` reports it as unsealed.
    """
    row, part_rows = key
    (version, head_hash, state, command_id, type_, data, prev_hash, event_hash, state_sha256, receipt_sha256,
     beyond) = row
    version = 0 if version is None else int(version)
    if beyond is not None:
        raise JournalCorruptError(f"{aggregate}: event {int(beyond)} lies beyond the head version {version}")
    if version == 0:
        if state is not None:
            raise JournalCorruptError(f"{aggregate}: the head says version 0 but holds a state")
        if part_rows:
            raise JournalCorruptError(f"{aggregate}: the head says version 0 but parts of a state are stored")
        return Head(0, GENESIS_HASH, None)
    if event_hash is None:
        raise JournalCorruptError(f"{aggregate}: the head says version {version}, but no event {version} exists")
    if head_hash != event_hash:
        raise JournalCorruptError(f"{aggregate}: the head's hash is not the hash of event {version}")
    seal = None if state_sha256 is None or receipt_sha256 is None else (state_sha256, receipt_sha256)
    if chain_hash(prev_hash, aggregate, version, command_id, type_, data, seal) != event_hash:
        raise JournalCorruptError(f"{aggregate}: event {version} does not match its hash")
    if seal is not None and sha256_text(state) != state_sha256:
        raise JournalCorruptError(f"{aggregate}: the stored state is not the state event {version} sealed")
    if is_manifest(state):
        whole, parts = joined_parts(aggregate, version, state, dict(part_rows))
        return Head(version, head_hash, whole, parts)
    if part_rows:
        raise JournalCorruptError(f"{aggregate}: parts of a state are stored, but the state of event {version} "
                                  "is whole")
    return Head(version, head_hash, CanonicalText(state))


def check_receipt(command_id: str, row: Any) -> Receipt | None:
    """The receipt a `receipt` statement read, checked against the event that sealed it; None when the
    command never ran. Refused when its command's events exist without it, when it names an event its
    command did not record, or when it is not the receipt that event sealed."""
    (_id, aggregate, digest, first_version, last_version, result, event_command, type_, data, prev_hash,
     event_hash, state_sha256, receipt_sha256, recorded_at) = row
    if _id is None:
        if recorded_at is not None:
            raise JournalCorruptError(
                f"command {command_id!r} recorded event {int(recorded_at)}, but its receipt is missing"
            )
        return None
    first_version, last_version = int(first_version), int(last_version)
    if event_command != command_id:
        raise JournalCorruptError(
            f"receipt {command_id!r} names event {aggregate}@{last_version}, which that command did not record"
        )
    seal = None if state_sha256 is None or receipt_sha256 is None else (state_sha256, receipt_sha256)
    if chain_hash(prev_hash, aggregate, last_version, command_id, type_, data, seal) != event_hash:
        raise JournalCorruptError(f"{aggregate}: event {last_version} does not match its hash")
    if seal is not None:
        sealed = receipt_text(command_id, aggregate, digest, first_version, last_version, result)
        if sha256_text(sealed) != receipt_sha256:
            raise JournalCorruptError(
                f"receipt {command_id!r} is not the receipt event {aggregate}@{last_version} sealed"
            )
    return Receipt(
        command_id=command_id,
        aggregate=aggregate,
        digest=digest,
        first_version=first_version,
        last_version=last_version,
        result=parse_json(result, f"receipt {command_id}"),
    )


def event_from_row(row: Any) -> Event:
    """An event as a history statement read it (`statements.EVENT_COLUMNS`), its data parsed."""
    aggregate, version, command_id, type_, data, prev_hash, hash_, state_sha256, receipt_sha256 = row
    return Event(
        aggregate=aggregate,
        version=int(version),
        command_id=command_id,
        type=type_,
        data=parse_json(data, f"event {aggregate}@{version}"),
        prev_hash=prev_hash,
        hash=hash_,
        state_sha256=state_sha256,
        receipt_sha256=receipt_sha256,
    )
