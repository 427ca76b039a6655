"""How a journal names itself (`where`, `repr`, a refusal's message): by its URL, any password masked.

A PostgreSQL URL that nothing answers (port 1 of the loopback) is enough to see what a refusal prints:
opening fails at once, after the URL has been parsed.
"""

from __future__ import annotations

import pytest

from factory_schedule.store import JournalOpenError, open_journal
from factory_schedule.store.journal import Journal
from factory_schedule.store.postgres import PostgresJournal
from factory_schedule.store.urls import parse_url

SECRET = "s3cret-word"
UNREACHABLE = f"postgresql+psycopg://owner:{SECRET}@127.0.0.1:1/journal"
UNREACHABLE_QUERY = f"postgresql+psycopg://owner@127.0.0.1:1/journal?password={SECRET}"


def test_a_refused_open_names_the_journal_with_its_password_masked():
    with pytest.raises(JournalOpenError) as refused:
        open_journal(UNREACHABLE)
    assert "owner:***@127.0.0.1" in str(refused.value) and SECRET not in str(refused.value)


def test_a_password_given_as_a_url_query_parameter_is_masked_in_the_journals_name():
    journal = PostgresJournal(UNREACHABLE_QUERY, parse_url(UNREACHABLE_QUERY))  # never connected: named from the URL
    assert SECRET not in journal.where and SECRET not in repr(journal)


def test_a_refused_open_never_shows_a_password_given_as_a_query_parameter():
    with pytest.raises(JournalOpenError) as refused:
        open_journal(UNREACHABLE_QUERY)
    assert SECRET not in str(refused.value)


def test_a_file_journal_is_named_by_its_url_and_repr_shows_that_name(tmp_path):
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    journal = open_journal(url)
    try:
        assert isinstance(journal, Journal) and journal.where == url and repr(journal) == f"Journal({url!r})"
    finally:
        journal.close()
