"""Shared fixtures: a fresh journal URL per test, on SQLite and (when a server is named) PostgreSQL,
a schedule over a fresh SQLite journal with a manual clock (`world`), and the demo's journal (`demo_file`,
`demo_url` a copy of it).

`journal_url` runs a test once per backend. The PostgreSQL case needs an admin URL in
FACTORY_TEST_POSTGRES_URL (e.g. postgresql+psycopg://postgres@127.0.0.1:5432/postgres);
each test then gets a database of its own, dropped afterwards, so tests never share rows.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings

from factory_schedule.core import LifecycleSchedule, ManualClock
from factory_schedule.store import Journal, open_journal

if TYPE_CHECKING:
    import psycopg

# The benchmarks are scripts run by hand, not tests.
collect_ignore = ["bench"]

# Hypothesis times its examples: a `deadline` per example and a "too slow" health check on generating
# them. On a busy 2-core machine (other work beside `-n 2`) both fail tests that are correct, so the suite
# turns off exactly the two checks that read the wall clock and keeps every other health check. A test's
# own `@settings` builds on this profile, so it applies everywhere unless a test says otherwise.
settings.register_profile(
    "factory-schedule",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("factory-schedule")

POSTGRES_ENV = "FACTORY_TEST_POSTGRES_URL"
POSTGRES_SKIP_REASON = (
    f"PostgreSQL case skipped: set {POSTGRES_ENV} to an admin URL "
    "(e.g. postgresql+psycopg://postgres@127.0.0.1:5432/postgres); .ci/run starts a throwaway cluster"
)


def connect_postgres(url: str, *, autocommit: bool = True) -> psycopg.Connection[Any]:
    """A plain psycopg connection to the database a SQLAlchemy URL names: for setting up and inspecting a
    PostgreSQL journal from outside it (creating test databases, triggers, holding its lock)."""
    import psycopg
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    options: dict[str, Any] = {str(key): str(value) for key, value in parsed.query.items()}
    return psycopg.connect(
        host=parsed.host,
        port=parsed.port,
        user=parsed.username,
        password=parsed.password,
        dbname=parsed.database or "postgres",
        autocommit=autocommit,
        **options,
    )


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A journal URL naming a file that does not exist yet."""
    return f"sqlite:///{tmp_path / 'journal.db'}"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A URL naming a new, empty PostgreSQL database, dropped after the test."""
    admin_url = os.environ.get(POSTGRES_ENV)
    if not admin_url:
        pytest.skip(POSTGRES_SKIP_REASON)
    with postgres_database(admin_url, f"fs_test_{uuid.uuid4().hex[:16]}") as url:
        yield url


@contextlib.contextmanager
def postgres_database(admin_url: str, name: str) -> Iterator[str]:
    """A new, empty database named `name` on the server `admin_url` reaches, dropped after: its journal URL."""
    from sqlalchemy.engine import make_url

    with connect_postgres(admin_url) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with connect_postgres(admin_url) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def journal_url(request: pytest.FixtureRequest) -> str:
    """A fresh journal URL, once per backend; the PostgreSQL case (marked `postgres`) skips without a server."""
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_url")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Journal, LifecycleSchedule, ManualClock]]:
    """A journal file in tmp_path, a schedule over it and its clock, at noon on Saturday 5 December 2026
    (before the commissions the tests record take effect); the journal is closed after the test."""
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    clock = ManualClock("2026-12-05T12:00:00Z")
    yield journal, LifecycleSchedule(journal, clock), clock
    journal.close()


@pytest.fixture
def demo_file() -> Path:
    """The demo journal, built once per test process; tests copy it before they touch it."""
    from factory_schedule.tui.host.demo import demo_template  # only the dashboard's tests build the demo

    return Path(demo_template())


@pytest.fixture
def demo_url(demo_file: Path, tmp_path: Path) -> str:
    """A copy of the demo journal in tmp_path, for a test that writes to it or reads it in another thread."""
    copy = tmp_path / "journal.db"
    shutil.copy(demo_file, copy)
    return f"sqlite:///{copy}"
