"""What importing the engine and the journal's plain parts loads: no database library.

Each case runs in a fresh interpreter, so nothing an earlier test imported can hide a load.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

DATABASE_LIBRARIES = ("sqlalchemy", "sqlmodel", "psycopg", "sqlite3", "textual")


def _loaded_after(statement: str) -> list[str]:
    probe = (
        f"{statement}\n"
        "import json, sys\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({DATABASE_LIBRARIES!r}))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    "statement",
    [
        "import factory_schedule.core",
        "from factory_schedule.core import LifecycleSchedule, ManualClock, parse_commission",
        "from factory_schedule.store import canonical_json, Decision, NewEvent, CommandJournal, JournalError",
        "import factory_schedule.store.records, factory_schedule.store.errors, factory_schedule.store.canonical",
    ],
)
def test_importing_the_engine_loads_no_database_library(statement: str) -> None:
    assert _loaded_after(statement) == []


def test_the_database_parts_load_when_first_asked_for_and_need_no_sqlalchemy() -> None:
    loaded = _loaded_after("from factory_schedule.store import open_journal, leases, Journal, shown_url")
    assert loaded == ["sqlite3"]


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import factory_schedule.store as store

    with pytest.raises(AttributeError, match="no_such_name"):
        store.no_such_name  # noqa: B018


_EXISTING_JOURNAL_WORK = """
import sys
from datetime import UTC, datetime
from factory_schedule.store import Decision, NewEvent, leases, open_journal
journal = open_journal(sys.argv[1])
head = journal.head("test/a")
journal.execute("test/a", f"c{head}", {}, head, lambda state, version: Decision([NewEvent("e", {})], {"n": version}))
leases.acquire(journal, "worker", "me", 60, datetime.now(UTC))
leases.release(journal, "worker", "me")
journal.verify("test/a")
"""


def _loaded_running(script: str, *argv: str) -> list[str]:
    probe = (f"{script}\nimport json\n"
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({DATABASE_LIBRARIES!r}))))")
    done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_commands_leases_and_verify_on_an_existing_journal_load_neither_sqlalchemy_nor_sqlmodel(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    assert "sqlmodel" in _loaded_running(_EXISTING_JOURNAL_WORK, url)  # new: its tables made from the declaration
    assert _loaded_running(_EXISTING_JOURNAL_WORK, url) == ["sqlite3"]
