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


def test_the_database_parts_load_when_first_asked_for() -> None:
    loaded = _loaded_after("from factory_schedule.store import open_journal, leases, Journal, shown_url")
    assert "sqlalchemy" in loaded and "sqlmodel" in loaded


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import factory_schedule.store as store

    with pytest.raises(AttributeError, match="no_such_name"):
        store.no_such_name  # noqa: B018
