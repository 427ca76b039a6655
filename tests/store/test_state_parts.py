"""A state stored in parts (`store/state_parts.py`): a command writes only the parts it changed, every read
returns the whole text, and the one root its command sealed binds every part.

Each edit below (a part edited, a part from another version, a part missing or added, the manifest or the
sealed root edited) is refused by a fresh journal's read, by the journal that wrote the head (its memo of
checked heads does not hide the edit), by a command, and by `verify`. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from sqlalchemy import text

from factory_schedule.store import Decision, JournalCorruptError, NewEvent, PartedText, open_journal, parted
from factory_schedule.store.records import sha256_text

from .support import database

AGGREGATE = "test/parted"


def _parted_state(lanes: dict[str, int]) -> PartedText:
    """`{"lanes":[...],"total":N}` in parts: each lane a part, the total another."""
    pieces: list[tuple[str | None, str]] = [(None, '{"lanes":[')]
    for index, (lane, count) in enumerate(sorted(lanes.items())):
        if index:
            pieces.append((None, ","))
        pieces.append((f"lanes/{lane}", f'{{"count":{count},"lane":"{lane}"}}'))
    pieces += [(None, '],"total":'), ("total", str(sum(lanes.values()))), (None, "}")]
    return parted(pieces)


def _count_on(lane: str, *, remove: str | None = None) -> Any:
    """A decision that counts one more on `lane` (and drops the lane `remove`), keeping the state in parts."""

    def decide(state: dict[str, Any] | None, version: int) -> Decision:
        lanes = {item["lane"]: item["count"] for item in (state or {"lanes": []})["lanes"]}
        lanes[lane] = lanes.get(lane, 0) + 1
        if remove is not None:
            lanes.pop(remove, None)
        return Decision(events=[NewEvent("counted", {"lane": lane})], state=_parted_state(lanes))

    return decide


def _three_commands(url: str) -> Any:
    journal = open_journal(url)
    journal.execute(AGGREGATE, "c1", {}, 0, _count_on("a"))
    journal.execute(AGGREGATE, "c2", {}, 1, _count_on("b"))
    journal.execute(AGGREGATE, "c3", {}, 2, _count_on("c"))
    return journal


def test_a_parted_state_reads_back_whole_and_verifies(journal_url):
    journal = _three_commands(journal_url)
    whole = '{"lanes":[{"count":1,"lane":"a"},{"count":1,"lane":"b"},{"count":1,"lane":"c"}],"total":3}'
    assert open_journal(journal_url).load_text(AGGREGATE) == (3, whole)
    assert journal.load(AGGREGATE).state["total"] == 3
    assert journal.verify(AGGREGATE).version == 3


def test_a_command_writes_only_the_parts_it_changed_and_deletes_the_ones_its_state_dropped(journal_url):
    journal = _three_commands(journal_url)
    sent: list[tuple[str, Any]] = []
    statement = journal._statement

    def watched(conn: Any, key: str, values: Any) -> Any:
        sent.append((key, values))
        return statement(conn, key, values)

    journal._statement = watched  # type: ignore[method-assign]
    journal.execute(AGGREGATE, "c4", {}, 3, _count_on("b", remove="c"))
    written = [value["name"] for key, values in sent if key == "put_part" for value in values]
    deleted = [value["name"] for key, values in sent if key == "delete_part" for value in values]
    assert written == ["lanes/b"]  # lane a, and the total (3 again), are unchanged: not rewritten
    assert deleted == ["lanes/c"]
    with database(journal_url) as conn:
        names = sorted(row[0] for row in conn.execute(text("SELECT name FROM state_parts WHERE aggregate = :a"),
                                                      {"a": AGGREGATE}))
    assert names == ["lanes/a", "lanes/b", "total"]
    assert open_journal(journal_url).load(AGGREGATE).state["total"] == 3
    journal.verify(AGGREGATE)


def _swap_from_version_2(conn: Any) -> None:
    """The total's part as version 2 left it, put back after version 3 changed it."""
    conn.execute(text("UPDATE state_parts SET text = :old WHERE aggregate = :a AND name = 'total'"),
                 {"old": '],"total":2}', "a": AGGREGATE})


EDITS = {
    "a part edited": lambda conn: conn.execute(
        text("UPDATE state_parts SET text = '9' WHERE aggregate = :a AND name = 'total'"), {"a": AGGREGATE}),
    "a part from another version": _swap_from_version_2,
    "a part missing": lambda conn: conn.execute(
        text("DELETE FROM state_parts WHERE aggregate = :a AND name = 'lanes/a'"), {"a": AGGREGATE}),
    "a part added": lambda conn: conn.execute(
        text("INSERT INTO state_parts (aggregate, name, text) VALUES (:a, 'lanes/z', ',{}')"), {"a": AGGREGATE}),
    "the manifest edited": lambda conn: conn.execute(
        text("UPDATE aggregates SET state = replace(state, 'lanes/a', 'lanes/x') WHERE aggregate = :a"),
        {"a": AGGREGATE}),
    "the sealed root edited": lambda conn: conn.execute(
        text("UPDATE events SET state_sha256 = :root WHERE aggregate = :a AND version = 3"),
        {"a": AGGREGATE, "root": sha256_text("[]")}),
    "the state put back whole": lambda conn: (
        conn.execute(text("DELETE FROM state_parts WHERE aggregate = :a"), {"a": AGGREGATE}),
        conn.execute(text("UPDATE aggregates SET state = :whole WHERE aggregate = :a"),
                     {"a": AGGREGATE, "whole": '{"lanes":[],"total":3}'})),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_of_a_parted_state_is_refused_by_every_read_and_by_verify(journal_url, edit):
    journal = _three_commands(journal_url)
    journal.load_text(AGGREGATE)  # the head it wrote, remembered as checked
    with database(journal_url) as conn:
        EDITS[edit](conn)
    with pytest.raises(JournalCorruptError) as fresh_refusal:
        open_journal(journal_url).load_text(AGGREGATE)
    reads: list[Any] = [lambda: journal.load_text(AGGREGATE), lambda: journal.load(AGGREGATE),
                        lambda: journal.execute(AGGREGATE, "c4", {}, 3, _count_on("a"))]
    for read in reads:
        with pytest.raises(JournalCorruptError) as refusal:
            read()
        assert str(refusal.value) == str(fresh_refusal.value)
    with pytest.raises(JournalCorruptError):
        open_journal(journal_url).verify(AGGREGATE)
    assert open_journal(journal_url).head(AGGREGATE) == 3  # the refused command wrote nothing


def test_a_whole_state_and_a_parted_one_follow_each_other_in_one_chain(journal_url):
    journal = open_journal(journal_url)
    journal.execute(AGGREGATE, "c1", {}, 0, _count_on("a"))

    def whole(state: dict[str, Any] | None, version: int) -> Decision:
        return Decision(events=[NewEvent("whole", {})], state={"lanes": [], "total": 0})

    journal.execute(AGGREGATE, "c2", {}, 1, whole)
    with database(journal_url) as conn:
        assert conn.execute(text("SELECT count(*) FROM state_parts WHERE aggregate = :a"),
                            {"a": AGGREGATE}).scalar() == 0
    journal.execute(AGGREGATE, "c3", {}, 2, _count_on("b"))
    assert open_journal(journal_url).load(AGGREGATE).state == {"lanes": [{"count": 1, "lane": "b"}], "total": 1}
    assert open_journal(journal_url).verify(AGGREGATE).version == 3


def test_the_glue_between_named_pieces_joins_the_piece_after_it():
    state = parted([(None, "{"), ("a", '"a":1'), (None, ","), ("b", '"b":2'), (None, "}")])
    assert state == '{"a":1,"b":2}'
    assert state.parts == (("a", '{"a":1'), ("b", ',"b":2}'))
    with pytest.raises(ValueError, match="distinct names"):
        parted([("a", "{"), ("a", "}")])


def _part_reads(journal: Any) -> list[str]:
    """The statements that read a state's parts on their own (SQLite's `parts`) the journal sends from now on."""
    sent: list[str] = []
    statement = journal._statement

    def counting(conn: Any, key: str, values: Any) -> Any:
        if key == "parts":
            sent.append(values["aggregate"])
        return statement(conn, key, values)

    journal._statement = counting
    return sent


def test_on_sqlite_a_head_read_again_with_nothing_committed_by_another_connection_reads_no_parts(sqlite_url):
    journal = _three_commands(sqlite_url)
    reads = _part_reads(journal)
    whole = journal.load_text(AGGREGATE)
    assert journal.load_text(AGGREGATE) == whole and journal.load(AGGREGATE).version == 3
    assert reads == [], "the parts this connection wrote, at the same data version, are not read again"

    other = open_journal(sqlite_url)  # another connection commits, here to another aggregate
    other.execute("test/elsewhere", "e1", {}, 0, _count_on("z"))
    assert journal.load_text(AGGREGATE) == whole
    assert reads == [AGGREGATE], "a commit by another connection moves the data version: the parts are read"
    assert journal.load_text(AGGREGATE) == whole and reads == [AGGREGATE]


_EDIT_PART = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
statements = {
    "a part edited, same length": "UPDATE state_parts SET text = replace(text, '1', '7') WHERE aggregate = ? "
                                  "AND name = 'lanes/b'",
    "a part deleted": "DELETE FROM state_parts WHERE aggregate = ? AND name = 'lanes/b'",
    "a part added": "INSERT INTO state_parts (aggregate, name, text) VALUES (?, 'lanes/z', ',{}')",
}
assert connection.execute(statements[sys.argv[3]], (sys.argv[2],)).rowcount == 1
"""


@pytest.mark.parametrize("edit", ["a part edited, same length", "a part deleted", "a part added"])
def test_a_part_edited_by_another_process_after_the_journal_read_it_is_refused_by_its_next_read(sqlite_url, edit):
    journal = _three_commands(sqlite_url)
    journal.load_text(AGGREGATE)  # the parts this connection wrote and read, at its data version
    subprocess.run([sys.executable, "-c", _EDIT_PART, sqlite_url.removeprefix("sqlite:///"), AGGREGATE, edit],
                   check=True, timeout=120)

    reads: list[Any] = [lambda: journal.load_text(AGGREGATE), lambda: journal.load(AGGREGATE),
                        lambda: journal.execute(AGGREGATE, "c4", {}, 3, _count_on("a"))]
    for read in reads:
        with pytest.raises(JournalCorruptError, match="part"):
            read()
    with pytest.raises(JournalCorruptError, match="part"), journal.writing():
        journal.load_text(AGGREGATE)


def test_a_parted_state_is_read_with_its_checked_parts_and_a_whole_state_as_plain_text(journal_url):
    journal = _three_commands(journal_url)
    expected = (("lanes/a", '{"lanes":[{"count":1,"lane":"a"}'), ("lanes/b", ',{"count":1,"lane":"b"}'),
                ("lanes/c", ',{"count":1,"lane":"c"}'), ("total", '],"total":3}'))
    _version, remembered = journal.load_text(AGGREGATE)  # the head this journal wrote
    _version, fresh = open_journal(journal_url).load_text(AGGREGATE)  # read and checked from the rows
    with journal.writing():
        journal.execute(AGGREGATE, "c4", {}, 3, _count_on("a"))
        _version, held = journal.load_text(AGGREGATE)  # inside the transaction that wrote it

    for read in (remembered, fresh):
        assert isinstance(read, PartedText) and read.parts == expected
    assert isinstance(held, PartedText) and held.parts[0] == ("lanes/a", '{"lanes":[{"count":2,"lane":"a"}')
    journal.execute("test/whole", "w1", {}, 0, lambda state, version: Decision([NewEvent("set", {})], {"n": 1}))
    assert not isinstance(open_journal(journal_url).load_text("test/whole")[1], PartedText)
    assert not isinstance(journal.load_text("test/whole")[1], PartedText)
