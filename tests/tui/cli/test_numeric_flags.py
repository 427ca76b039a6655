"""Every numeric flag is range-checked before anything is opened: a pid a lock could never be proven gone by
(0, negative, past any pid), a number the journal could not store, or a lock TTL the store rounds to nothing is
refused with exit 2, and nothing is written. Real CLI processes over a real SQLite journal."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.store import open_journal
from factory_schedule.tui.host.clock import SystemClock
from tests.core.pipeline.pipeline_support import adopt
from tests.core.pipeline.pipeline_support import commission as pipeline_commission
from tests.tui.runner_support import cli

OUT_OF_RANGE = ["0", "-5", "99999999999999999999", "4194305", "1" + "0" * 5000]


@pytest.fixture
def journal(sqlite_url: str) -> Path:
    adopt(PipelineLanes(open_journal(sqlite_url), SystemClock()), pipeline_commission())
    return Path(sqlite_url.removeprefix("sqlite:///"))


def _written(path: Path) -> tuple[Any, ...]:
    with sqlite3.connect(path) as conn:
        return (conn.execute("SELECT count(*) FROM events").fetchone(),
                conn.execute("SELECT count(*) FROM leases").fetchone())


def _refused(url: str, journal: Path, *args: str, stdin: str | None = None) -> dict[str, Any]:
    before = _written(journal)
    code, line, err = cli(url, *args, stdin=stdin)
    assert code == 2 and isinstance(line, dict) and line["error"] == "INVALID", (code, line, err)
    assert _written(journal) == before
    return line


@pytest.mark.parametrize("pid", OUT_OF_RANGE)
def test_a_lock_pid_that_no_process_can_have_is_refused_and_nothing_is_written(
    sqlite_url: str, journal: Path, pid: str
) -> None:
    line = _refused(sqlite_url, journal, "lanes", "claim", "--lane", "promotion", "--run", "promotion",
                    "--runner", "r-1", f"--pid={pid}")
    assert "--pid" in line["message"]


@pytest.mark.parametrize("pid", [0, -5, 99999999999999999999])
def test_a_lock_pid_given_on_stdin_is_range_checked_as_the_flag_is(sqlite_url: str, journal: Path, pid: int) -> None:
    arguments = json.dumps({"lane": "promotion", "run": "promotion", "runner": "r-1", "pid": pid})
    _refused(sqlite_url, journal, "lanes", "claim", "--stdin", stdin=arguments)


@pytest.mark.parametrize("ttl", ["0.0001", "0", "-1", "86401", "nan"])
def test_a_lock_ttl_shorter_than_a_millisecond_or_longer_than_a_day_is_refused(
    sqlite_url: str, journal: Path, ttl: str
) -> None:
    _refused(sqlite_url, journal, "lanes", "claim", "--lane", "promotion", "--run", "promotion", "--runner", "r-1",
             f"--ttl={ttl}")


@pytest.mark.parametrize("task", ["0", "-1", "99999999999999999999"])
def test_a_task_number_out_of_range_is_refused(sqlite_url: str, journal: Path, task: str) -> None:
    _refused(sqlite_url, journal, "lanes", "report", "--lane", "promotion", f"--task={task}", "--runner", "r-1",
             "--report", "{}")


@pytest.mark.parametrize("call", ["-1", "99999999999999999999"])
def test_a_call_number_the_journal_could_not_store_is_refused(sqlite_url: str, journal: Path, call: str) -> None:
    _refused(sqlite_url, journal, "call", "end", "--occurrence", "o", "--runner", "r-1", f"--call={call}",
             "--report", '{"kind": "lost"}')


def test_a_pid_in_range_is_taken_and_recorded_on_the_locks(sqlite_url: str, journal: Path) -> None:
    code, line, err = cli(sqlite_url, "lanes", "claim", "--lane", "promotion", "--run", "promotion",
                          "--runner", "r-1", "--pid=4194304")
    assert code in (0, 50), (line, err)
