"""`open_journal` creates a private journal file, and refuses what is not a journal in plain words."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from factory_schedule.store import JournalOpenError, open_journal
from tests.store.support import AGGREGATE, bump, pooled_driver


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _refusal(url: str) -> str:
    with pytest.raises(JournalOpenError) as raised:
        open_journal(url)
    message = str(raised.value)
    assert "Traceback" not in message and "\n" not in message
    return message


def test_a_new_journal_file_is_created_with_mode_0600_even_under_a_permissive_umask(tmp_path):
    path = tmp_path / "journal.db"
    previous = os.umask(0)
    try:
        journal = open_journal(f"sqlite:///{path}")
        journal.execute(AGGREGATE, "c1", {}, 0, bump("c1"))
    finally:
        os.umask(previous)

    assert _mode(path) == 0o600
    for sidecar in tmp_path.glob("journal.db-*"):
        assert _mode(sidecar) & 0o077 == 0, f"{sidecar.name} is readable by others"


def test_a_new_journal_file_uses_wal_and_full_synchronous_writes(tmp_path):
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    with pooled_driver(journal) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_an_existing_journal_keeps_its_own_mode(tmp_path):
    path = tmp_path / "journal.db"
    open_journal(f"sqlite:///{path}").close()
    path.chmod(0o640)

    open_journal(f"sqlite:///{path}").close()

    assert _mode(path) == 0o640


def test_a_relative_sqlite_path_is_a_file_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    open_journal("sqlite:///relative.db").close()
    assert (tmp_path / "relative.db").exists()


@pytest.mark.parametrize(
    "url",
    ["mysql://user@host/db", "http://example.com/journal", "oracle+cx_oracle://scott@host/db"],
)
def test_an_unknown_url_scheme_is_refused_with_the_schemes_that_work(url):
    message = _refusal(url)
    assert "sqlite:///" in message and "postgresql+psycopg://" in message


@pytest.mark.parametrize("url", ["", "just some words", "/path/without/scheme.db"])
def test_something_that_is_not_a_url_is_refused(url):
    assert "sqlite:///" in _refusal(url)


def test_a_plain_text_file_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("my shopping list\n")

    message = _refusal(f"sqlite:///{path}")

    assert str(path) in message and "not a factory-schedule journal" in message
    assert path.read_text() == "my shopping list\n"


def test_an_sqlite_database_with_other_tables_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    before = path.read_bytes()

    message = _refusal(f"sqlite:///{path}")

    assert "not a factory-schedule journal" in message
    with sqlite3.connect(path) as conn:
        assert [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["customers"]
    assert path.read_bytes() == before


def test_any_database_with_other_tables_but_no_journal_meta_is_refused(journal_url):
    engine = create_engine(journal_url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)"))
    engine.dispose()

    assert "not a factory-schedule journal" in _refusal(journal_url)


def test_a_journal_of_another_format_is_refused(journal_url):
    open_journal(journal_url).close()
    engine = create_engine(journal_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE journal_meta SET value = 'factory-schedule-journal/99' WHERE key = 'format'"))
    engine.dispose()

    assert "factory-schedule-journal/99" in _refusal(journal_url)


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_journal_is_refused_naming_the_file_form(url):
    """One in-memory connection would be shared by every thread and every nested read: refused, not torn."""
    message = _refusal(url)
    assert "names no journal file" in message and "sqlite:///path/to/journal.db" in message


def test_a_folder_is_refused(tmp_path):
    assert "folder" in _refusal(f"sqlite:///{tmp_path}")


def test_a_journal_in_a_missing_folder_is_refused_without_creating_it(tmp_path):
    message = _refusal(f"sqlite:///{tmp_path / 'missing' / 'journal.db'}")
    assert "does not exist" in message
    assert not (tmp_path / "missing").exists()


def test_an_unreachable_postgres_server_is_refused_with_a_readable_message():
    message = _refusal("postgresql+psycopg://nobody:secret@127.0.0.1:1/none?connect_timeout=2")
    assert "cannot open the journal" in message
    assert "127.0.0.1" in message
    assert "secret" not in message, "the password is not echoed"


@pytest.mark.parametrize("url", ["postgresql+psycopg2://user@host/db", "postgresql+asyncpg://user@host/db"])
def test_a_postgres_url_without_the_psycopg_driver_is_refused_naming_the_right_form(url):
    assert "postgresql+psycopg://" in _refusal(url)


def test_an_empty_existing_file_becomes_a_journal(tmp_path):
    path = tmp_path / "empty.db"
    path.touch()
    journal = open_journal(f"sqlite:///{path}")
    assert journal.head(AGGREGATE) == 0


@pytest.mark.postgres
def test_a_journal_names_itself_with_its_password_masked(postgres_url):
    from sqlalchemy.engine import make_url

    with_password = make_url(postgres_url).set(password="s3cret-word").render_as_string(hide_password=False)
    journal = open_journal(with_password)  # the test server trusts loopback: the password is carried, not checked
    try:
        assert journal.head(AGGREGATE) == 0
        assert "s3cret-word" not in journal.where and "s3cret-word" not in repr(journal)
        assert journal.where == make_url(with_password).render_as_string(hide_password=True)
    finally:
        journal.close()


def test_a_file_journal_is_named_by_its_url(tmp_path):
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    assert open_journal(url).where == url


def test_an_sqlite_older_than_update_returning_is_refused_before_the_file_is_made(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 34, 1))
    monkeypatch.setattr(sqlite3, "sqlite_version", "3.34.1")
    message = _refusal(f"sqlite:///{tmp_path / 'journal.db'}")
    assert "3.34.1" in message and "3.35.0 or newer" in message
    assert not (tmp_path / "journal.db").exists()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql+psycopg://owner:pw@db.local/journal", "postgresql+psycopg://owner:***@db.local/journal"),
        ("postgresql+psycopg://owner@db.local/journal?password=pw&sslmode=require",
         "postgresql+psycopg://owner@db.local/journal?password=***&sslmode=require"),
        ("postgresql+psycopg//owner:pw@db.local/journal", "postgresql+psycopg//owner:***@db.local/journal"),
        ("postgresql+psycopg://owner:pw@db.local:54x/journal", "postgresql+psycopg://owner:***@db.local:54x/journal"),
        ("sqlite:////Users/owner/factory/journal.db", "sqlite:////Users/owner/factory/journal.db"),
        # A password with a raw `/`, `:` or `@` (unencoded, as people type them) is masked whole.
        ("postgresql+psycopg://owner:my/secret@127.0.0.1:5432/factory",
         "postgresql+psycopg://owner:***@127.0.0.1:5432/factory"),
        ("postgresql+psycopg://owner:pa:ss@db.local/journal", "postgresql+psycopg://owner:***@db.local/journal"),
        ("postgresql+psycopg://owner:p@ss@db.local/journal", "postgresql+psycopg://owner:***@db.local/journal"),
        ("postgresql+psycopg://owner@db.local/journal?options=a@b", "postgresql+psycopg://owner@db.local/journal?options=a@b"),
        ("postgresql+psycopg://owner:p/a?ss@db.local/journal", "postgresql+psycopg://owner:***@db.local/journal"),
        ("postgresql+psycopg://owner:my?secret/x@db.local/journal", "postgresql+psycopg://owner:***@db.local/journal"),
        ("postgresql+psycopg:/owner:my/secret@db.local/journal", "postgresql+psycopg:/owner:***@db.local/journal"),
        # Only the password: a database name with `@` and a SQLite path with `:` and `@` are shown as they are.
        ("postgresql+psycopg://owner:pw@db.local/jour@nal", "postgresql+psycopg://owner:***@db.local/jour@nal"),
        ("sqlite:////srv/we:ird/x@y/journal.db", "sqlite:////srv/we:ird/x@y/journal.db"),
    ],
)
def test_a_journal_url_is_shown_with_any_password_masked_parsed_or_not(url, shown):
    from factory_schedule.store import shown_url

    assert shown_url(url) == shown
