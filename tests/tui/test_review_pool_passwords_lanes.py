"""Review of the commits after 2735c3b: the SQLite pool and pragmas, the masked journal URL, and the lanes check.

Every journal here is a real SQLite file in `tmp_path` (or a PostgreSQL URL that nothing answers, which
is enough to see what a refusal prints). The review found twelve of these rules broken; each was fixed
in the commit that followed it.
"""

from __future__ import annotations

import json
import os
import plistlib
import signal
import socket
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import LifecycleSchedule, ManualClock
from factory_schedule.store import Decision, JournalOpenError, NewEvent, open_journal
from factory_schedule.store.journal import Journal
from factory_schedule.store.postgres import PostgresJournal
from factory_schedule.tui.cli import main as cli
from factory_schedule.tui.host import health

HOST = "test-host"
SECRET = "s3cret-word"
# Nothing listens on port 1 of the loopback: opening fails at once, after the URL has been parsed.
UNREACHABLE = f"postgresql+psycopg://owner:{SECRET}@127.0.0.1:1/journal"
UNREACHABLE_QUERY = f"postgresql+psycopg://owner@127.0.0.1:1/journal?password={SECRET}"
TASKS = [{"task": "scan", "account": "claude", "maxCalls": 4, "callBound": 150000}]


# -- helpers -------------------------------------------------------------------------------


def _lane(name: str, rhythm: str, time: str, closes: str, weekday: int | None = None) -> dict[str, Any]:
    lane: dict[str, Any] = {"lane": name, "product": name.split("/")[0], "rhythm": rhythm}
    if weekday is not None:
        lane["weekday"] = weekday
    return lane | {"time": time, "closes": closes, "deadlineMinutes": 45, "tasks": TASKS}


def _commission(lanes: list[dict[str, Any]], effective_from: str = "2026-12-07", revision: int = 1) -> dict[str, Any]:
    return {"protocol": "sf-schedule-commission/1", "revision": revision, "zone": "Europe/London",
            "effectiveFrom": effective_from, "weeklyTokens": 40_000_000, "recordMaxAgeDays": 30, "lanes": lanes}


@pytest.fixture
def world(tmp_path: Path) -> tuple[Any, Any, ManualClock]:
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    clock = ManualClock("2026-12-05T12:00:00Z")
    yield journal, LifecycleSchedule(journal, clock), clock
    journal.close()


def _lane_findings(world: tuple[Any, Any, ManualClock], grace_minutes: float = 30) -> list[tuple[str, str]]:
    journal, schedule, clock = world
    report = health.check_health(journal, schedule, clock.now(), HOST, alive=lambda _pid: False,
                                 grace_minutes=grace_minutes)
    assert not report.could_not_check, report.could_not_check
    return [(f.kind, f.evidence["occurrence"]) for f in report.findings if f.kind.startswith("lane-")]


def _at(world: tuple[Any, Any, ManualClock], instant: str, grace_minutes: float = 30) -> list[tuple[str, str]]:
    world[2].set(instant)
    return _lane_findings(world, grace_minutes)


def _temp_store(raw: Any) -> int:
    return raw.driver_connection.execute("PRAGMA temp_store").fetchone()[0]


# -- 1. the SQLite pool and its pragmas ------------------------------------------------------


def test_every_sqlite_connection_keeps_temporary_storage_in_memory_after_invalidate_dispose_and_overflow(tmp_path):
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    try:
        first = journal.engine.raw_connection()
        assert _temp_store(first) == 2
        first.invalidate()  # what the pool does with a connection whose driver failed
        first.close()
        again = journal.engine.raw_connection()
        assert _temp_store(again) == 2
        again.close()
        journal.engine.dispose()  # every pooled connection closed; the next are new
        held = [journal.engine.raw_connection() for _ in range(12)]  # past pool_size 5: overflow connections too
        try:
            assert [_temp_store(raw) for raw in held] == [2] * 12
        finally:
            for raw in held:
                raw.close()
    finally:
        journal.close()


def test_a_read_inside_a_decision_sees_the_state_before_the_command_and_a_read_after_sees_its_commit(tmp_path):
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    seen: list[int] = []

    def decide(state: Any, version: int) -> Decision:
        seen.append(journal.head("test/a"))  # a second pooled connection, outside the write transaction
        return Decision(events=[NewEvent("bumped", {"n": version + 1})], state={"n": version + 1}, result={})

    try:
        for version in range(4):
            journal.execute("test/a", f"bump/{version}", {"n": version}, version, decide)
            assert journal.head("test/a") == version + 1  # the connection handed out last sees the commit
        assert seen == [0, 1, 2, 3]
    finally:
        journal.close()


def test_threads_sharing_one_journal_with_reads_inside_decisions_record_every_command_once(tmp_path):
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    errors: list[BaseException] = []

    def work(thread: int) -> None:
        aggregate = f"test/thread-{thread}"

        def decide(state: Any, version: int) -> Decision:
            journal.head("test/thread-0")  # a nested read on another pooled connection
            journal.load_text(aggregate)
            return Decision(events=[NewEvent("bumped", {"v": version})], state={"v": version + 1}, result={})

        try:
            for version in range(15):
                journal.execute(aggregate, f"{aggregate}/{version}", {"v": version}, version, decide)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not errors, errors
        for n in range(6):
            assert journal.head(f"test/thread-{n}") == 15
            journal.verify(f"test/thread-{n}")
        pool = journal.engine.pool
        assert pool.checkedout() == 0  # every connection went back, none leaked by the nested reads
    finally:
        journal.close()


# -- 2. where a PostgreSQL password may be shown ----------------------------------------------


def test_a_refused_open_names_the_journal_with_its_password_masked():
    with pytest.raises(JournalOpenError) as refused:
        open_journal(UNREACHABLE)
    assert "owner:***@127.0.0.1" in str(refused.value) and SECRET not in str(refused.value)


def test_health_that_cannot_open_the_journal_prints_no_password(capsys):
    assert cli.main(["--journal", UNREACHABLE, "health", "--json"]) == health.COULD_NOT_CHECK
    out = capsys.readouterr().out
    assert json.loads(out)["healthy"] is False and SECRET not in out


def test_a_password_given_as_a_url_query_parameter_is_masked_in_the_journals_name():
    from sqlalchemy import create_engine

    engine = create_engine(UNREACHABLE_QUERY)  # never connected: the name is made from the URL alone
    journal = PostgresJournal(engine, UNREACHABLE_QUERY, write_options={})
    try:
        assert SECRET not in journal.where and SECRET not in repr(journal)
    finally:
        engine.dispose()


def test_a_refused_open_never_shows_a_password_given_as_a_query_parameter():
    with pytest.raises(JournalOpenError) as refused:
        open_journal(UNREACHABLE_QUERY)
    assert SECRET not in str(refused.value)


def test_a_url_that_does_not_parse_is_refused_without_its_password(capsys):
    typo = f"postgresql+psycopg//owner:{SECRET}@127.0.0.1:1/journal"
    assert cli.main(["--journal", typo, "status", "discovery/alpha/basic/2026-12-07"]) == 3
    out = capsys.readouterr().out
    assert json.loads(out)["error"] == "JOURNAL" and SECRET not in out


def test_a_url_with_a_bad_port_is_refused_in_one_line_and_health_says_it_could_not_check(capsys):
    bad_port = f"postgresql+psycopg://owner:{SECRET}@127.0.0.1:5432x/journal"
    assert cli.main(["--journal", bad_port, "health", "--json"]) == health.COULD_NOT_CHECK
    out = capsys.readouterr().out
    assert json.loads(out)["healthy"] is False and SECRET not in out


def test_the_demo_never_prints_the_journal_password(capsys):
    assert cli.main(["demo", "--journal", UNREACHABLE, "--build-only"]) == 2
    captured = capsys.readouterr()
    assert "***" in captured.err  # the refusal itself is masked ...
    assert SECRET not in captured.err + captured.out  # ... but the line before it is not


def _install_plist(tmp_path: Path, url: str) -> Path:
    commission = tmp_path / "commission.json"
    commission.write_text(json.dumps(_commission([_lane("alpha/basic", "basic", "02:00", "05:00")])))
    output = tmp_path / "agent.plist"
    old = os.umask(0o022)  # the usual umask of a Mac user
    try:
        code = cli.main(["--journal", url, "launchd", "install", "--commission", str(commission),
                         "--host-zone", "Europe/London", "--output", str(output), "--", "/bin/true"])
    finally:
        os.umask(old)
    assert code == 0
    return output


def test_a_launch_agent_carrying_a_journal_password_is_readable_only_by_its_owner(tmp_path):
    output = _install_plist(tmp_path, UNREACHABLE)
    assert SECRET in output.read_text()  # launchd needs it somewhere ...
    assert stat.S_IMODE(output.stat().st_mode) & 0o077 == 0  # ... but only its owner may read it


def test_the_launch_agent_keeps_the_journal_password_off_the_ticks_command_line(tmp_path):
    spec = plistlib.loads(_install_plist(tmp_path, UNREACHABLE).read_bytes())
    assert spec["EnvironmentVariables"]["FACTORY_JOURNAL"] == UNREACHABLE
    assert not [argument for argument in spec["ProgramArguments"] if SECRET in argument]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the keeper's command line from /proc")
def test_a_detached_keeper_is_never_given_the_journal_password_on_its_command_line():
    from factory_schedule.tui.cli.tick import _spawn_keeper
    from factory_schedule.tui.host.segments import SegmentJob

    job = SegmentJob("alpha/basic", "discovery/alpha/basic/2026-12-07", 1, "r-000000000000")
    # A server that takes the connection and never answers: the keeper waits in open_journal while its
    # command line is read (an exited keeper's /proc cmdline is empty).
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        url = f"postgresql+psycopg://owner:{SECRET}@127.0.0.1:{port}/journal?connect_timeout=30"
        pid = _spawn_keeper(url, job, [sys.executable, "-c", "pass"], 60)
        try:
            argv: list[str] = []
            deadline = time.monotonic() + 20
            while "tick-segment" not in argv and time.monotonic() < deadline:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    argv = handle.read().decode().split("\0")
                time.sleep(0.01)
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    assert "tick-segment" in argv
    assert not [argument for argument in argv if SECRET in argument]


def test_a_file_journal_is_named_by_its_url_and_repr_shows_that_name(tmp_path):
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    journal = open_journal(url)
    try:
        assert isinstance(journal, Journal) and journal.where == url and repr(journal) == f"Journal({url!r})"
    finally:
        journal.close()


# -- 3. the lanes check --------------------------------------------------------------------


def _record(world: tuple[Any, Any, ManualClock], commission: dict[str, Any]) -> None:
    schedule = world[1]
    schedule.record_commission(commission)
    if commission["revision"] == 1:
        schedule.record_account(account="claude", sequence=1, sign_in="me", overage=False, recorded_by="owner")


def test_a_slot_moved_by_the_spring_forward_gap_is_reported_only_after_its_moved_slot_and_grace(world):
    world[2].set("2026-03-20T12:00:00Z")
    _record(world, _commission([_lane("alpha/full", "full", "01:30", "04:00", 7)], "2026-03-23"))
    # Sunday 29 March 2026: 01:30 does not exist in London; the slot is 02:30 BST = 01:30Z, grace ends 02:00Z.
    assert _at(world, "2026-03-29T01:59:00Z") == []
    assert _at(world, "2026-03-29T02:01:00Z") == [("lane-not-started", "discovery/alpha/full/2026-W13")]
    assert _at(world, "2026-04-04T23:59:00Z") == [("lane-missed", "discovery/alpha/full/2026-W13")]


def test_a_slot_repeated_by_the_autumn_change_is_reported_after_its_first_instant_and_grace(world):
    world[2].set("2026-10-20T12:00:00Z")
    _record(world, _commission([_lane("alpha/full", "full", "01:30", "04:00", 7)], "2026-10-21"))
    # Sunday 25 October 2026: 01:30 happens twice; the slot is the BST one (00:30Z), grace ends 01:00Z.
    assert _at(world, "2026-10-25T00:59:00Z") == []
    assert _at(world, "2026-10-25T01:01:00Z") == [("lane-not-started", "discovery/alpha/full/2026-W43")]
    assert _at(world, "2026-10-31T12:00:00Z") == [("lane-missed", "discovery/alpha/full/2026-W43")]


def test_no_night_before_a_future_effective_from_is_reported(world):
    _record(world, _commission([_lane("alpha/basic", "basic", "02:00", "05:00"),
                                _lane("alpha/full", "full", "03:00", "05:00", 1)], "2026-12-10"))
    assert _at(world, "2026-12-09T23:59:00Z") == []  # Monday 7 December is before effectiveFrom
    assert _at(world, "2026-12-10T02:31:00Z") == [("lane-not-started", "discovery/alpha/basic/2026-12-10")]


def test_no_night_that_closed_before_the_commission_was_recorded_is_reported(world):
    world[2].set("2026-12-09T12:00:00Z")  # recorded Wednesday, effective from the Saturday before
    _record(world, _commission([_lane("alpha/basic", "basic", "02:00", "05:00"),
                                _lane("alpha/full", "full", "03:00", "05:00", 1)], "2026-12-05"))
    assert _lane_findings(world) == []
    assert _at(world, "2026-12-10T02:31:00Z") == [("lane-not-started", "discovery/alpha/basic/2026-12-10")]


def test_a_lane_a_revision_adds_mid_week_reports_no_night_before_it_joined(world):
    _record(world, _commission([_lane("alpha/basic", "basic", "02:00", "05:00")]))
    world[2].set("2026-12-09T12:00:00Z")
    _record(world, _commission([_lane("alpha/basic", "basic", "02:00", "05:00"),
                                _lane("beta/full", "full", "03:00", "05:00", 1),
                                _lane("beta/basic", "basic", "02:20", "05:00")], revision=2))
    assert [f for f in _lane_findings(world) if "/beta/" in f[1]] == []
    assert [f for f in _at(world, "2026-12-14T03:31:00Z") if "/beta/" in f[1]] == [
        ("lane-not-started", "discovery/beta/full/2026-W51"),
        ("lane-missed", "discovery/beta/basic/2026-12-13"),
        ("lane-not-started", "discovery/beta/basic/2026-12-14"),
    ]


def test_a_sunday_lanes_missed_night_is_reported_through_the_next_iso_week_until_the_next_sunday(world):
    _record(world, _commission([_lane("portfolio/audit", "audit", "02:30", "05:00", 7)]))
    expected = [("lane-missed", "discovery/portfolio/audit/2026-W50")]
    assert _at(world, "2026-12-14T00:01:00Z") == expected  # Monday: a new ISO week, the same missed night
    assert _at(world, "2026-12-20T02:59:00Z") == expected  # Sunday, before this night's slot and grace
    assert _at(world, "2026-12-20T03:01:00Z") == [*expected, ("lane-not-started", "discovery/portfolio/audit/2026-W51")]


def test_a_night_at_or_before_the_lanes_watermark_is_never_reported(world):
    _record(world, _commission([_lane("alpha/basic", "basic", "02:00", "05:00")]))
    world[2].set("2026-12-10T02:05:00Z")  # 7 to 9 December missed; Thursday's admission coalesces them
    assert world[1].start(lane="alpha/basic", runner="r-1").kind == "admitted"
    assert _at(world, "2026-12-10T23:00:00Z") == []
    # Thursday's occurrence is still open: Friday's cannot be admitted, which is information, not a dead tick.
    assert _at(world, "2026-12-11T02:31:00Z") == [("lane-held", "discovery/alpha/basic/2026-12-11")]


def test_a_daily_lanes_last_two_nights_are_reported_when_grace_is_longer_than_a_day(world):
    _record(world, _commission([_lane("alpha/basic", "basic", "02:00", "05:00")]))
    assert _at(world, "2026-12-09T12:00:00Z", grace_minutes=25 * 60) == [
        ("lane-missed", "discovery/alpha/basic/2026-12-07"),
        ("lane-missed", "discovery/alpha/basic/2026-12-08"),
    ]


def test_a_weekly_lanes_missed_night_is_reported_without_a_gap_when_grace_is_longer_than_a_day(world):
    _record(world, _commission([_lane("alpha/full", "full", "03:00", "05:00", 1)]))
    grace = 2 * 24 * 60
    assert _at(world, "2026-12-14T12:00:00Z", grace) == [("lane-missed", "discovery/alpha/full/2026-W50")]
    # Tuesday: last Monday is 8 days back, this Monday's slot + 2 days is tomorrow 03:00. Both were missed.
    assert _at(world, "2026-12-15T12:00:00Z", grace) != []


def test_a_late_weekly_slot_whose_grace_crosses_midnight_stays_reported_across_midnight(world):
    _record(world, _commission([_lane("alpha/full", "full", "23:00", "23:50", 7)]))
    assert _at(world, "2026-12-20T23:59:00Z", 90) == [("lane-missed", "discovery/alpha/full/2026-W50")]
    assert _at(world, "2026-12-21T00:10:00Z", 90) != []  # both Sundays missed; nothing is reported


def test_a_night_on_which_the_tick_resumed_the_lanes_open_occurrence_is_not_reported_as_not_started(world):
    _journal, schedule, clock = world
    _record(world, _commission([_lane("alpha/basic", "basic", "02:00", "05:00")]))
    clock.set("2026-12-07T02:00:00Z")
    assert schedule.start(lane="alpha/basic", runner="r-1").kind == "admitted"
    clock.set("2026-12-07T02:10:00Z")
    schedule.defer(occurrence_id="discovery/alpha/basic/2026-12-07", runner="r-1", reason="volume-unmounted")
    clock.set("2026-12-08T02:00:00Z")
    assert schedule.start(lane="alpha/basic", runner="r-2").kind == "resumed"
    assert _at(world, "2026-12-08T02:31:00Z") == [("lane-held", "discovery/alpha/basic/2026-12-08")]


def test_a_night_whose_window_a_dst_gap_swallowed_is_not_reported_as_missed(world):
    world[2].set("2026-03-20T12:00:00Z")
    _record(world, _commission([_lane("alpha/full", "full", "01:10", "02:00", 7)], "2026-03-23"))
    world[2].set("2026-03-29T01:20:00Z")
    assert world[1].start(lane="alpha/full", runner="r-1").kind == "waiting"  # the empty window admits nothing
    assert _at(world, "2026-04-02T12:00:00Z") == []
