"""A row edited by another process between two commands of a long-lived journal is refused by that journal.

The tick, the dashboard and a runner each keep one `Journal` across many commands, and that journal keeps
what it read and wrote (its memo of checked heads, the parts of the state it last stored). Another OS
process (here a second Python interpreter with its own connection) edits a state part, the head's
manifest, an event or a receipt in between; the long-lived journal's next read and next command must
refuse exactly as a journal opened afresh refuses, not decide on the forged row. The forgeries that
hashing alone would catch are made hard to tell apart otherwise: a part byte for byte as an earlier
version or another aggregate stored it, and edits that keep every length. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import text

from factory_schedule.store import Journal, JournalCorruptError, open_journal

from .support import database
from .test_state_parts import _count_on

AGGREGATE = "test/parted"
OTHER = "test/parted-other"

# Applies a list of (SQL, parameters) in one transaction of its own connection, in its own process.
_EDITOR = """
import json, sys
from sqlalchemy import create_engine, text
engine = create_engine(sys.argv[1])
with engine.begin() as conn:
    for statement, values in json.loads(sys.argv[2]):
        assert conn.execute(text(statement), values).rowcount == 1, statement
engine.dispose()
"""


def _edit_from_another_process(url: str, statements: list[tuple[str, dict[str, Any]]]) -> None:
    subprocess.run([sys.executable, "-c", _EDITOR, url, json.dumps(statements)], check=True, timeout=120)


def _rows(url: str, aggregate: str) -> tuple[str, dict[str, str]]:
    """The head's stored text (the manifest) and the state's parts by name, as stored now."""
    with database(url) as conn:
        (manifest,) = conn.execute(text("SELECT state FROM aggregates WHERE aggregate = :a"), {"a": aggregate}).one()
        parts = dict(conn.execute(text("SELECT name, text FROM state_parts WHERE aggregate = :a"),
                                  {"a": aggregate}).all())
    return str(manifest), {str(name): str(part) for name, part in parts.items()}


def _set_part(aggregate: str, name: str, value: str) -> tuple[str, dict[str, Any]]:
    return ("UPDATE state_parts SET text = :t WHERE aggregate = :a AND name = :n", {"t": value, "a": aggregate,
                                                                                     "n": name})


def _same_length(value: str, old: str, new: str) -> str:
    assert len(old) == len(new) and old in value
    return value.replace(old, new, 1)


Edit = Callable[[str, dict[str, Any]], list[tuple[str, dict[str, Any]]]]


def _part_of_another_aggregate(_url: str, seen: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    other = seen["other parts"]["lanes/a"]
    assert other != seen["parts"]["lanes/a"] and len(other) == len(seen["parts"]["lanes/a"])
    return [_set_part(AGGREGATE, "lanes/a", other)]


def _part_as_an_earlier_version_left_it(_url: str, seen: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    earlier = seen["parts at 2"]["lanes/a"]
    assert earlier != seen["parts"]["lanes/a"] and len(earlier) == len(seen["parts"]["lanes/a"])
    return [_set_part(AGGREGATE, "lanes/a", earlier)]


def _part_edited_keeping_its_length(_url: str, seen: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [_set_part(AGGREGATE, "lanes/b", _same_length(seen["parts"]["lanes/b"], '"count":1', '"count":7'))]


def _head_and_parts_as_an_earlier_version_left_them(_url: str,
                                                    seen: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    statements = [("UPDATE aggregates SET state = :s WHERE aggregate = :a", {"s": seen["manifest at 2"],
                                                                             "a": AGGREGATE})]
    return statements + [_set_part(AGGREGATE, name, part) for name, part in seen["parts at 2"].items()]


def _manifest_and_parts_of_another_aggregate(_url: str, seen: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    statements = [("UPDATE aggregates SET state = :s WHERE aggregate = :a", {"s": seen["other manifest"],
                                                                             "a": AGGREGATE})]
    return statements + [_set_part(AGGREGATE, name, part) for name, part in seen["other parts"].items()]


def _head_event_edited_keeping_its_length(_url: str, _seen: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [("UPDATE events SET data = :d WHERE aggregate = :a AND version = 3", {"d": '{"lane":"b"}',
                                                                                 "a": AGGREGATE})]


STATE_EDITS: dict[str, Edit] = {
    "a part of another aggregate": _part_of_another_aggregate,
    "a part as an earlier version left it": _part_as_an_earlier_version_left_it,
    "a part edited keeping its length": _part_edited_keeping_its_length,
    "the manifest and parts as an earlier version left them": _head_and_parts_as_an_earlier_version_left_them,
    "the manifest and parts of another aggregate": _manifest_and_parts_of_another_aggregate,
    "the head event edited keeping its length": _head_event_edited_keeping_its_length,
}


def _long_lived_journal(url: str, last: str = "read") -> tuple[Journal, dict[str, Any]]:
    """A journal that wrote three commands on each of two aggregates with the same part names, its last act
    on `AGGREGATE` a read of its head (`last` "read") or the command that wrote it ("write"), and the rows as
    they stood along the way."""
    journal = open_journal(url)
    journal.execute(AGGREGATE, "c1", {}, 0, _count_on("a"))
    journal.execute(AGGREGATE, "c2", {}, 1, _count_on("b"))
    manifest_at_2, parts_at_2 = _rows(url, AGGREGATE)
    for version, lane in enumerate(["a", "a", "a"]):
        journal.execute(OTHER, f"o{version + 1}", {}, version, _count_on(lane))
    journal.load_text(OTHER)
    journal.execute(AGGREGATE, "c3", {}, 2, _count_on("a"))
    if last == "read":
        journal.load_text(AGGREGATE)
    manifest, parts = _rows(url, AGGREGATE)
    other_manifest, other_parts = _rows(url, OTHER)
    assert manifest_at_2 != manifest and other_manifest != manifest
    return journal, {"manifest at 2": manifest_at_2, "parts at 2": parts_at_2, "parts": parts,
                     "other manifest": other_manifest, "other parts": other_parts}


@pytest.mark.parametrize("last", ["read", "write"])
@pytest.mark.parametrize("edit", sorted(STATE_EDITS))
def test_a_state_or_event_row_edited_by_another_process_is_refused_by_the_long_lived_journals_next_read_and_command(
        journal_url: str, edit: str, last: str) -> None:
    journal, seen = _long_lived_journal(journal_url, last)
    _edit_from_another_process(journal_url, STATE_EDITS[edit](journal_url, seen))
    with pytest.raises(JournalCorruptError) as fresh_refusal:
        open_journal(journal_url).load_text(AGGREGATE)
    reads: list[Callable[[], Any]] = [lambda: journal.load_text(AGGREGATE), lambda: journal.load(AGGREGATE),
                                      lambda: journal.execute(AGGREGATE, "c4", {}, 3, _count_on("b")),
                                      lambda: journal.load_text(AGGREGATE)]
    for read in reads:
        with pytest.raises(JournalCorruptError) as refusal:
            read()
        assert str(refusal.value) == str(fresh_refusal.value)
    assert open_journal(journal_url).head(AGGREGATE) == 3  # the refused command wrote nothing
    assert journal.load_text(OTHER)[0] == 3  # the other aggregate, untouched, still reads


def test_a_receipt_edited_by_another_process_keeping_its_length_is_refused_by_the_long_lived_journal(
        journal_url: str) -> None:
    journal, _seen = _long_lived_journal(journal_url)
    assert journal.receipt("c3") is not None
    with database(journal_url) as conn:
        (digest,) = conn.execute(text("SELECT digest FROM receipts WHERE command_id = 'c3'")).one()
    forged = ("0" if digest[0] != "0" else "1") + digest[1:]
    _edit_from_another_process(journal_url, [("UPDATE receipts SET digest = :d WHERE command_id = 'c3'",
                                              {"d": forged})])
    with pytest.raises(JournalCorruptError) as fresh_refusal:
        open_journal(journal_url).receipt("c3")
    for read in [lambda: journal.receipt("c3"), lambda: journal.execute(AGGREGATE, "c3", {}, 2, _count_on("a"))]:
        with pytest.raises(JournalCorruptError) as refusal:
            read()
        assert str(refusal.value) == str(fresh_refusal.value)
    assert open_journal(journal_url).head(AGGREGATE) == 3
