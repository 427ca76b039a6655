"""A forger's edit: rewrite the head command's seal to match whatever its state and receipt now hold.

The seals make a hand edit of the state, a receipt or the head evident, but someone who can write
the file and knows the chain's rules can recompute the last command's seal (or the whole chain)
after editing. Tests of the engine's own checks of a stored state (its second line of defence)
call this after their edit, so that the edit reaches the engine instead of the journal's seal check.
"""

from __future__ import annotations

import json
import sqlite3

from factory_schedule.store import parted
from factory_schedule.store.records import chain_hash, receipt_text, sha256_text
from factory_schedule.store.state_parts import manifest_text


def reseal_head(db: sqlite3.Connection, aggregate: str) -> None:
    """Recompute the head event's seal and hash (and the head's hash) from the rows as they now are."""
    version, state = db.execute("SELECT version, state FROM aggregates WHERE aggregate = ?", (aggregate,)).fetchone()
    command_id, type_, data, prev_hash = db.execute(
        "SELECT command_id, type, data, prev_hash FROM events WHERE aggregate = ? AND version = ?", (aggregate, version)
    ).fetchone()
    receipt = db.execute(
        "SELECT command_id, aggregate, digest, first_version, last_version, result FROM receipts WHERE command_id = ?",
        (command_id,),
    ).fetchone()
    seal = (sha256_text(state), sha256_text(receipt_text(*receipt)))
    forged = chain_hash(prev_hash, aggregate, version, command_id, type_, data, seal)
    db.execute(
        "UPDATE events SET state_sha256 = ?, receipt_sha256 = ?, hash = ? WHERE aggregate = ? AND version = ?",
        (*seal, forged, aggregate, version),
    )
    db.execute("UPDATE aggregates SET hash = ? WHERE aggregate = ?", (forged, aggregate))


def stored_state(db: sqlite3.Connection, aggregate: str) -> str:
    """The aggregate's state text as stored, read past every check: its parts joined in its manifest's order,
    or the head's text when the state is stored whole."""
    (text,) = db.execute("SELECT state FROM aggregates WHERE aggregate = ?", (aggregate,)).fetchone()
    if not text.startswith("["):
        return str(text)
    parts = dict(db.execute("SELECT name, text FROM state_parts WHERE aggregate = ?", (aggregate,)).fetchall())
    return "".join(parts[name] for name, _digest in json.loads(text))


def put_whole_state(db: sqlite3.Connection, aggregate: str, text: str) -> None:
    """Store `text` as the aggregate's whole state (as a journal written before parts existed holds it), its
    parts deleted; the head is not resealed (`reseal_head` does that)."""
    db.execute("DELETE FROM state_parts WHERE aggregate = ?", (aggregate,))
    db.execute("UPDATE aggregates SET state = ? WHERE aggregate = ?", (text, aggregate))


def put_parted_state(db: sqlite3.Connection, aggregate: str, text: str) -> None:
    """Store `text` (a JSON object's text, keys sorted, no whitespace: as `json.dumps(..., sort_keys=True,
    separators=(",", ":"))` writes it) as the aggregate's state in parts, cut as the engines' writers cut a
    state: each member a part named by its key, and each item of a member that is a list of lanes (objects
    with a string "lane") a part of its own, `<key>/<lane>` (a second item of one lane `<key>/<lane>#2`); the
    glue between parts goes with the part after it. The head's manifest names them; the head is not resealed
    (`reseal_head` does that). A reader of the parts reads exactly `text`."""
    document = json.loads(text)
    pieces: list[tuple[str | None, str]] = []
    for index, (key, value) in enumerate(document.items()):
        pieces.append((None, ("{" if index == 0 else ",") + _encoded(key) + ":"))
        lanes = isinstance(value, list) and value and all(
            isinstance(item, dict) and isinstance(item.get("lane"), str) for item in value)
        if not lanes:
            pieces.append((key, _encoded(value)))
            continue
        pieces.append((None, "["))
        named: dict[str, int] = {}
        for position, item in enumerate(value):
            if position:
                pieces.append((None, ","))
            name = f"{key}/{item['lane']}"
            named[name] = named.get(name, 0) + 1
            pieces.append((name if named[name] == 1 else f"{name}#{named[name]}", _encoded(item)))
        pieces.append((None, "]"))
    pieces.append((None, "}"))
    parts = parted(pieces).parts
    assert "".join(part for _name, part in parts) == text, "the text is not in the form the parts are cut from"
    db.execute("DELETE FROM state_parts WHERE aggregate = ?", (aggregate,))
    db.executemany("INSERT INTO state_parts (aggregate, name, text) VALUES (?, ?, ?)",
                   [(aggregate, name, part) for name, part in parts])
    db.execute("UPDATE aggregates SET state = ? WHERE aggregate = ?",
               (manifest_text((name, sha256_text(part)) for name, part in parts), aggregate))


def _encoded(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
