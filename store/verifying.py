"""The whole check of one aggregate's chain: every event's hash and link, every seal, every receipt.

It trusts nothing a journal remembers (`checked_heads`): every hash is computed again from the
rows, which is what makes it the check that catches a rewrite anywhere in history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .canonical import canonical_json
from .errors import JournalCorruptError, JournalSetBackError
from .records import GENESIS_HASH, Checkpoint, Event, chain_hash, receipt_text, sha256_text
from .sealed_rows import check_head, head_key

if TYPE_CHECKING:
    from .journal import Journal


def _check_checkpoint(journal: Journal, aggregate: str, since: Checkpoint) -> None:
    """The event a checkpoint names is still the one verified: a history rewritten at or before it, even one
    rechained whole (which a check from the first event cannot tell from the original), fails here."""
    found = journal.history(aggregate, after=since.version - 1, limit=1)
    if not found or found[0].version != since.version or found[0].hash != since.hash:
        raise JournalSetBackError(
            f"{aggregate}: event {since.version} is not the one verified before (its hash changed): "
            "the history was rewritten at or before it"
        )


def verify_chain(journal: Journal, aggregate: str, since: Checkpoint | None = None) -> Checkpoint:
    """Recompute the hash chain and every seal; raise JournalCorruptError, saying what, at the first break.

    Checked: every event's hash and link; that the head names the chain's last event and
    holds the state that event sealed; that each command's last event is sealed and its
    receipt is the one sealed (none missing, none edited, none added). Commands written
    by a build before seals existed are chained but their receipts cannot be checked
    beyond their versions: the checkpoint's `unsealed_through` says up to where.

    The head is read first and the chain checked up to it, so a verify that runs
    while writers append still sees one consistent prefix of an append-only log.
    From the first event by default; from `since` (what an earlier verify returned)
    to check only what was appended after it, as a live dashboard does.
    """

    def read_head() -> Any:
        with journal._transaction(write=False) as conn:
            return head_key(journal._statement(conn, "head", {"aggregate": aggregate}).fetchall())

    head = check_head(aggregate, journal._retrying(read_head))  # in full: verify trusts no memo
    prev = since.hash if since is not None else GENESIS_HASH
    checked = since.version if since is not None else 0
    unsealed_through = since.unsealed_through if since is not None else 0
    if head.version < checked:
        raise JournalSetBackError(f"{aggregate}: the head went back from {checked} to {head.version}")
    if since is not None and checked > 0:
        _check_checkpoint(journal, aggregate, since)
    # Before the first sealed command, commands may end unsealed (a journal upgraded from format 1).
    legacy = unsealed_through == checked
    command: list[Event] = []  # the events of the command being walked, until its last
    ended: list[tuple[list[Event], bool]] = []  # commands walked to their end whose receipts are unchecked
    receipts_checked = checked
    while checked < head.version:
        page = [event for event in journal.history(aggregate, after=checked) if event.version <= head.version]
        if not page:
            raise JournalCorruptError(
                f"{aggregate}: the head says version {head.version}, but the chain ends at {checked}"
            )
        for event in page:
            if event.version != checked + 1:
                raise JournalCorruptError(f"{aggregate}: event {event.version} follows event {checked}")
            if event.prev_hash != prev:
                raise JournalCorruptError(f"{aggregate}: event {event.version} does not link to its predecessor")
            if command and event.command_id != command[0].command_id:  # an unsealed command ended
                if not legacy:
                    raise JournalCorruptError(
                        f"{aggregate}: event {checked}, the last of command {command[0].command_id!r}, "
                        "is not sealed"
                    )
                ended.append((command, False))
                unsealed_through, command = checked, []
            data_json = canonical_json(event.data)
            sealed = chain_hash(prev, aggregate, event.version, event.command_id, event.type, data_json,
                                event.seal)
            if sealed != event.hash:
                raise JournalCorruptError(f"{aggregate}: event {event.version} does not match its hash")
            command.append(event)
            if event.seal is not None:
                legacy = False
                ended.append((command, True))
                command = []
            prev, checked = event.hash, event.version
        if command and checked == head.version:  # the head's own command, unsealed
            if not legacy:
                raise JournalCorruptError(f"{aggregate}: the head's event {checked} is not sealed")
            ended.append((command, False))
            unsealed_through, command = checked, []
        if ended:
            until = ended[-1][0][-1].version
            _verify_receipts(journal, aggregate, ended, receipts_checked, until)
            receipts_checked, ended = until, []
    if prev != head.hash:  # `_checked_head` holds the head to its event; this holds the event to the chain
        raise JournalCorruptError(f"{aggregate}: the head's hash is not the hash of event {head.version}")
    return Checkpoint(version=head.version, hash=head.hash, unsealed_through=unsealed_through)

def _verify_receipts(journal: Journal, aggregate: str, ended: list[tuple[list[Event], bool]], after: int,
                     until: int) -> None:
    """The receipts of the commands whose last event lies in (after, until]: exactly one each, as sealed."""

    def read() -> list[Any]:
        with journal._transaction(write=False) as conn:
            values = {"aggregate": aggregate, "after": after, "until": until}
            return list(journal._statement(conn, "receipts_between", values).fetchall())

    receipts = {row[0]: row for row in journal._retrying(read)}  # a receipt's command ID is its key
    for events, sealed in ended:
        first, last = events[0], events[-1]
        row = receipts.pop(first.command_id, None)
        if row is None:
            raise JournalCorruptError(
                f"{aggregate}: command {first.command_id!r} (events {first.version}-{last.version}) "
                "has no receipt"
            )
        if (int(row[3]), int(row[4])) != (first.version, last.version):
            raise JournalCorruptError(
                f"{aggregate}: receipt {first.command_id!r} does not name its command's events "
                f"{first.version}-{last.version}"
            )
        if sealed and sha256_text(receipt_text(row[0], row[1], row[2], int(row[3]), int(row[4]), row[5])) != (
            last.receipt_sha256
        ):
            raise JournalCorruptError(
                f"{aggregate}: receipt {first.command_id!r} is not the receipt event {last.version} sealed"
            )
    for row in receipts.values():
        raise JournalCorruptError(
            f"{aggregate}: receipt {row[0]!r} names event {row[4]}, which ends no command of that ID"
        )
