"""The owner is told once per finding that needs them, through the notifier they configure: a fake
notifier script records its arguments. `factory-schedule health` runs as a real process over a real
SQLite journal; a runner alive without heartbeats (this test's own process) is the inconclusive case."""

from __future__ import annotations

import json
import os
import stat
import sys
import unicodedata
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.notify import notifier_command, safe_text, state_path
from factory_schedule.tui.host.process_identity import process_start_time, this_host
from factory_schedule.tui.host.tokens import segment_scope
from tests.tui.runner_support import cli, commission_due_now, fake_notifier, notifications

RUNNER = "r-$(touch pwned)"
HOSTILE_RUNNER = RUNNER + "\x1b]0;all good\x07"  # the engine refuses it; a lease row written by hand holds it


@pytest.fixture
def journal(sqlite_url: str) -> Any:
    """Commissioned, with no owner record for its account (a finding that needs the owner), and a running
    segment whose runner lives (this process) but has not heartbeated for an hour (another one)."""
    journal = open_journal(sqlite_url)
    schedule = LifecycleSchedule(journal, SystemClock())
    schedule.record_commission(commission_due_now())
    [plan] = schedule.plan()
    started = schedule.start(lane=plan.lane, runner=RUNNER)
    assert started.occurrence is not None
    info = {"pid": os.getpid(), "pid_started": process_start_time(os.getpid()), "host": this_host(),
            "runner": HOSTILE_RUNNER, "occurrence": started.occurrence.id, "segment": 1}
    leases.acquire(journal, segment_scope(started.occurrence.id, 1), HOSTILE_RUNNER, 60,
                   datetime.now(UTC) - timedelta(hours=1), info)
    return journal


@pytest.fixture
def notifier(tmp_path: Path) -> tuple[str, Path]:
    return fake_notifier(tmp_path)


def test_each_finding_that_needs_the_owner_is_notified_once_as_one_escaped_argument(
    sqlite_url: str, journal: Any, notifier: tuple[str, Path], tmp_path: Path
) -> None:
    command, log = notifier
    code, report, err = cli(sqlite_url, "health", "--json", "--notify", command, NOTIFY_LOG=str(log))
    assert code == 1, err
    kinds = sorted(notice["kind"] for notice in report["notified"])
    assert kinds == ["account-no-record", "stale-lease-live-process"], report
    sent = notifications(log)
    assert len(sent) == 2 and all(len(arguments) == 1 for arguments in sent)
    for [text] in sent:
        assert all(unicodedata.category(ch)[0] != "C" for ch in text), text
    [live] = [text for [text] in sent if "alive" in text]
    assert "\\x1b]0;all good\\x07" in live
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()  # never through a shell

    # Once per finding: the next run sends nothing, and the state file beside the journal says why.
    code, report, _ = cli(sqlite_url, "health", "--json", "--notify", command, NOTIFY_LOG=str(log))
    assert report["notified"] == [] and len(notifications(log)) == 2
    state = state_path(sqlite_url)
    assert state.parent == Path(sqlite_url.removeprefix("sqlite:///")).parent
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert sorted(entry["kind"] for entry in json.loads(state.read_text())["notified"].values()) == kinds


def test_a_failed_send_is_not_remembered_and_is_tried_again(
    sqlite_url: str, journal: Any, notifier: tuple[str, Path]
) -> None:
    command, log = notifier
    _code, report, _ = cli(sqlite_url, "health", "--json", "--notify", command, NOTIFY_LOG=str(log), NOTIFY_EXIT="3")
    assert report["notified"] == [] and len(report["notify_failed"]) == 2
    assert "exited 3" in report["notify_failed"][0]
    _code, report, _ = cli(sqlite_url, "health", "--json", NOTIFY_LOG=str(log), FACTORY_NOTIFY=command)
    assert len(report["notified"]) == 2


def test_the_tick_tells_the_owner_on_a_night_nobody_watches(
    sqlite_url: str, journal: Any, notifier: tuple[str, Path]
) -> None:
    command, log = notifier
    _code, _answer, err = cli(sqlite_url, "tick", "--", "/bin/true", NOTIFY_LOG=str(log), FACTORY_NOTIFY=command)
    assert sorted(text.split(":")[0] for [text] in notifications(log)) == ["factory-schedule"] * 2, err


def test_without_a_notifier_nothing_is_sent_and_health_says_why(sqlite_url: str, journal: Any) -> None:
    if sys.platform == "darwin":
        pytest.skip("a Mac notifies through osascript by default")
    _code, report, _ = cli(sqlite_url, "health", "--json")
    assert report["notifier"] is None and report["notified"] == []
    assert "FACTORY_NOTIFY" in report["notifier_off"]


def test_the_notifier_command_is_split_into_words_and_a_mac_passes_the_text_as_an_argument() -> None:
    assert notifier_command("/usr/bin/notify-send --app 'factory schedule'")[0] == (
        "/usr/bin/notify-send", "--app", "factory schedule")
    assert notifier_command("")[0] is None
    mac, _ = notifier_command(None, platform="darwin")
    assert mac is not None and mac[0] == "osascript" and "item 1 of argv" in " ".join(mac)
    assert notifier_command(None, platform="linux")[0] is None
    assert safe_text("a\nb\x1b") == "a\\x0ab\\x1b" and len(safe_text("x" * 1000)) == 400


def test_a_journals_own_files_sit_beside_its_sqlite_file_or_apart_per_server_journal(tmp_path: Path) -> None:
    from factory_schedule.tui.host.run_output import log_folder

    sqlite_url = f"sqlite:///{tmp_path / 'journal.db'}"
    assert state_path(sqlite_url) == tmp_path / "journal.db.notified.json"
    assert log_folder(sqlite_url) == tmp_path / "journal.db.runs"
    one, two = "postgresql+psycopg://owner@db/one", "postgresql+psycopg://owner@db/two"
    assert state_path(one).name.startswith("notified-") and state_path(one).suffix == ".json"
    assert log_folder(one).name.startswith("runs-") and log_folder(one).parent == state_path(one).parent
    assert state_path(one) != state_path(two) and log_folder(one) != log_folder(two)  # never shared


def test_a_notified_state_that_cannot_be_written_never_costs_the_report_and_is_one_more_finding(
    sqlite_url: str, tmp_path: Path
) -> None:
    """`<journal>.notified.json` is a folder: the findings still print, the notice still goes out, and the state
    that could not be remembered is itself a finding."""
    journal = open_journal(sqlite_url)
    LifecycleSchedule(journal, SystemClock()).record_commission(commission_due_now())  # no owner record: a finding
    state_path(sqlite_url).mkdir()
    command, log = fake_notifier(tmp_path)
    code, report, err = cli(sqlite_url, "health", "--json", "--notify", command, NOTIFY_LOG=str(log))
    assert code == 1 and isinstance(report, dict), (code, report, err)
    kinds = [finding["kind"] for finding in report["findings"]]
    assert "account-no-record" in kinds and kinds[-1] == "notify-state-unwritable", kinds
    assert report["notified"] and len(notifications(log)) == len(report["notified"])
    assert str(state_path(sqlite_url)) in report["findings"][-1]["evidence"]["path"]
