"""What the journal's callers exchange with it, without the database: its records, its seal and its protocol.

`core` imports this (through `factory_schedule.store`) and never the SQL parts, so that loading the
engine does not load SQLAlchemy. Everything here is plain data, the hash that seals an event, and
`CommandJournal`, the protocol a journal offers (the SQL `Journal` in `journal.py` implements it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any, Protocol

from .canonical import CanonicalText, encoded_as_canonical

GENESIS_HASH = "0" * 64
HISTORY_PAGE = 1000


@dataclass(frozen=True)
class Event:
    aggregate: str
    version: int
    command_id: str
    type: str
    data: dict[str, Any]
    prev_hash: str
    hash: str
    # On a command's last event: the SHA-256 of the state it left and of its receipt (None on other events,
    # and on events written before seals existed).
    state_sha256: str | None = None
    receipt_sha256: str | None = None

    @property
    def seal(self) -> tuple[str, str] | None:
        """What the event's hash covers beyond its content, when it ends its command."""
        if self.state_sha256 is None or self.receipt_sha256 is None:
            return None
        return (self.state_sha256, self.receipt_sha256)


@dataclass(frozen=True)
class NewEvent:
    type: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Decision:
    """What a decision wants recorded: at least one event, the new state, and the caller's result.

    The state is a JSON object, or its `CanonicalText` when the decision already has it (a writer
    that keeps its own parse of a large state joins the texts of the parts it did not change).
    """

    events: Sequence[NewEvent]
    state: dict[str, Any] | CanonicalText
    result: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Receipt:
    command_id: str
    aggregate: str
    digest: str
    first_version: int
    last_version: int
    result: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    """The answer to `execute`: fresh (`replayed=False`) or read back from the receipt."""

    command_id: str
    aggregate: str
    first_version: int
    version: int
    result: dict[str, Any]
    replayed: bool


@dataclass(frozen=True)
class Checkpoint:
    """How far a verify got: the last version checked and its hash.

    `unsealed_through` is the last version written by a build before commands sealed their state
    and receipt (0 when every command is sealed): the events up to it are chained, but the
    receipts of their commands are not covered (see `verify`).
    """

    version: int
    hash: str
    unsealed_through: int = 0


@dataclass(frozen=True)
class Snapshot:
    version: int
    state: dict[str, Any] | None


Decide = Callable[[Any, int], Decision]


def sha256_text(text: str) -> str:
    """SHA-256 (hex) of a text's UTF-8 bytes: how a state and a receipt are sealed."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# The texts the seals are taken over are canonical JSON of a few strings and integers, written here
# key by key (in sorted order) instead of through the encoder: each command seals two of them and
# checks more, and the encoder's call cost as much as the hashing. `encode_basestring` is what the
# canonical encoder (ensure_ascii=False) writes for a string; tests/store/test_seal_texts.py holds
# these texts to `encoded_as_canonical` of the same documents.
_q = encode_basestring


def _integer(value: int) -> str:
    if type(value) is not int:  # a bool or an int subclass: let the encoder write (or refuse) it
        return encoded_as_canonical(value)
    return str(value)


def receipt_text(command_id: str, aggregate: str, digest: str, first_version: int, last_version: int,
                 result_json: str) -> str:
    """The one text a receipt's seal is taken over: every column of its row, the result as stored."""
    return (f'{{"aggregate":{_q(aggregate)},"commandId":{_q(command_id)},"digest":{_q(digest)},'
            f'"firstVersion":{_integer(first_version)},"lastVersion":{_integer(last_version)},'
            f'"result":{_q(result_json)}}}')


def _event_head_text(aggregate: str, command_id: str, type_: str, version: int, seal: tuple[str, str] | None) -> str:
    sealed = "" if seal is None else f'"receiptSha256":{_q(seal[1])},"stateSha256":{_q(seal[0])},'
    return (f'{{"aggregate":{_q(aggregate)},"commandId":{_q(command_id)},{sealed}"type":{_q(type_)},'
            f'"version":{_integer(version)}}}')


def chain_hash(
    prev_hash: str,
    aggregate: str,
    version: int,
    command_id: str,
    type_: str,
    data_json: str,
    seal: tuple[str, str] | None = None,
) -> str:
    """The event's seal: SHA-256 over the previous hash and the event's canonical content.

    The last event of a command also carries `seal`, the SHA-256 of the state text the command
    left and of its receipt, so the chain binds them too. An event without one (not its command's
    last, or written before seals existed) hashes exactly as journals of format 1 did.
    """
    body = _event_head_text(aggregate, command_id, type_, version, seal)
    digest = hashlib.sha256()
    digest.update(prev_hash.encode("ascii"))
    digest.update(b"\n")
    digest.update(body.encode("utf-8"))
    digest.update(b"\n")
    digest.update(data_json.encode("utf-8"))
    return digest.hexdigest()


class CommandJournal(Protocol):
    """The journal as the engine uses it. `open_journal` returns one; tests may pass any implementation."""

    url: str  # the database it writes: two journals on one URL are one journal
    where: str  # the URL as a person may be shown it

    def head(self, aggregate: str) -> int: ...

    def load(self, aggregate: str) -> Snapshot: ...

    def load_text(self, aggregate: str) -> tuple[int, CanonicalText | None]: ...

    def receipt(self, command_id: str) -> Receipt | None: ...

    def history(self, aggregate: str, after: int = 0, limit: int = HISTORY_PAGE) -> list[Event]: ...

    def events_of(self, aggregate: str, command_ids: Sequence[str]) -> dict[str, list[Event]]: ...

    def verify(self, aggregate: str, since: Checkpoint | None = None) -> Checkpoint: ...

    def writing(self) -> AbstractContextManager[None]:
        """Hold the write lock while the caller reads, plans and executes (see `Journal.writing`)."""
        ...

    def execute(
        self,
        aggregate: str,
        command_id: str,
        payload: dict[str, Any],
        expected_version: int,
        decide: Decide,
        *,
        as_text: bool = False,
    ) -> Outcome: ...


__all__ = [
    "GENESIS_HASH",
    "HISTORY_PAGE",
    "Checkpoint",
    "CommandJournal",
    "Decide",
    "Decision",
    "Event",
    "NewEvent",
    "Outcome",
    "Receipt",
    "Snapshot",
    "chain_hash",
    "receipt_text",
    "sha256_text",
]
