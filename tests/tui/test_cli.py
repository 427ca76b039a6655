"""The runner's command line: one JSON object out, and an exit code per outcome a shell can branch on."""

from __future__ import annotations

import io
import json
import plistlib
import sys
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import SCHEDULE_AGGREGATE, SCHEDULE_ERROR_CODES, launch_intervals
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.cli.main import main
from factory_schedule.tui.cli.runner import ERROR_EXIT_CODES, REFUSAL_EXIT_CODES
from tests.store.support import held_lease

from .runner_support import cli, commission_due_now, commission_file

REFUSAL_REASONS = ("limited", "call-open", "deadline", "call-bound", "unknown-effect", "duplicate-work",
                   "sign-in-needed", "overage-unverified", "budget-exhausted")


class Shell:
    """`factory-schedule` run in this process against one journal file, with stdin and stdout captured."""

    def __init__(self, url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        self.url = url
        self.capsys = capsys
        self.monkeypatch = monkeypatch

    def __call__(self, *args: str, stdin: str = "") -> tuple[int, Any]:
        self.monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        self.capsys.readouterr()
        code = main(["--journal", self.url, *args])
        lines = [line for line in self.capsys.readouterr().out.splitlines() if line.strip()]
        return code, json.loads(lines[-1]) if lines else None

    def head(self) -> int:
        return open_journal(self.url).head(SCHEDULE_AGGREGATE)


@pytest.fixture
def shell(sqlite_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Shell:
    return Shell(sqlite_url, capsys, monkeypatch)


@pytest.fixture
def running(shell: Shell, tmp_path: Path) -> str:
    """A commissioned journal whose alpha/basic occurrence is admitted to runner r-1; its ID."""
    assert shell("record-commission", str(commission_file(tmp_path, commission_due_now())))[0] == 0
    assert shell("record-account", "--account", "claude", "--sequence", "1", "--sign-in", "me",
                 "--overage", "off", "--recorded-by", "owner")[0] == 0
    code, tick = shell("start", "--lane", "alpha/basic", "--runner", "r-1")
    assert code == 0 and tick["kind"] == "admitted", tick
    return tick["occurrence"]["id"]


def _admit(shell: Shell, occurrence: str, work: str = "w1", runner: str = "r-1") -> tuple[int, Any]:
    return shell("call", "admit", "--occurrence", occurrence, "--runner", runner, "--task", "scan",
                 "--work", work, "--bound", "1000", "--sign-in", "me")


def test_every_refusal_reason_and_error_code_has_its_own_documented_exit_code() -> None:
    assert set(REFUSAL_EXIT_CODES) == set(REFUSAL_REASONS)
    assert set(ERROR_EXIT_CODES) == set(SCHEDULE_ERROR_CODES)
    codes = [*REFUSAL_EXIT_CODES.values(), *(c for k, c in ERROR_EXIT_CODES.items() if k != "INVALID"), 0, 1, 2, 10]
    assert len(codes) == len(set(codes))
    assert all(0 <= code < 126 for code in codes)


def test_a_fresh_admission_exits_0_and_its_replay_exits_10_licensing_no_contact(shell: Shell, running: str) -> None:
    code, admission = _admit(shell, running)
    assert code == 0 and admission["admitted"] and admission["dispatch"] and admission["call"] == 1
    code, replay = _admit(shell, running)
    assert code == 10 and replay["replayed"] and not replay["dispatch"] and replay["in_flight"]


def test_a_refusal_exits_with_its_reasons_code_and_writes_nothing(shell: Shell, running: str) -> None:
    assert _admit(shell, running)[0] == 0
    version = shell.head()
    code, refusal = _admit(shell, running, work="w2")
    assert (code, refusal["admitted"], refusal["reason"]) == (21, False, "call-open")
    assert shell.head() == version


def test_a_report_on_stdin_ends_the_call_and_instants_print_as_iso_strings(shell: Shell, running: str) -> None:
    assert _admit(shell, running)[0] == 0
    report = json.dumps({"kind": "result", "tokens": 900, "output": "ok"})
    code, end = shell("call", "end", "--occurrence", running, "--runner", "r-1", "--call", "1", stdin=report)
    assert code == 0 and end["outcome"] == "ok" and end["debit"] == 900
    assert end["occurrence"]["calls"][0]["ended_at"].endswith("Z")
    code, plan = shell("plan")
    assert code == 0 and plan["plan"][0]["lane"] == "alpha/basic"


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (("call", "admit", "--occurrence", "X", "--runner", "r-1", "--task", "scan", "--work", "w1",
          "--sign-in", "me"), ""),
        (("call", "end", "--occurrence", "OCC", "--runner", "r-1", "--call", "1"), "not json"),
        (("call", "admit", "--stdin"), '{"occurrence": "OCC", "bound": "many"}'),
        (("reconcile", "--occurrence", "OCC", "--runner", "r-1"), ""),
    ],
    ids=["missing-bound", "report-not-json", "stdin-bound-not-a-number", "half-a-confirmation"],
)
def test_bad_input_exits_2_with_an_error_object_and_writes_nothing(
    shell: Shell, running: str, args: tuple[str, ...], stdin: str
) -> None:
    version = shell.head()
    code, error = shell(*(running if arg == "OCC" else arg for arg in args), stdin=stdin)
    assert code == 2 and error["error"] == "INVALID" and error["message"]
    assert shell.head() == version


def test_a_schedule_error_prints_its_code_and_exits_with_its_number(shell: Shell, running: str) -> None:
    code, error = shell("settle", "--occurrence", running, "--settled-by", "r-other", "--status", "completed",
                        "--reason", "done")
    assert (code, error["error"]) == (ERROR_EXIT_CODES["NOT_OWNER"], "NOT_OWNER")
    code, error = shell("status", "not/an/occurrence")
    assert (code, error["error"]) == (2, "INVALID")


def test_arguments_may_come_as_a_json_object_on_stdin(shell: Shell, running: str) -> None:
    request = {"occurrence": running, "runner": "r-1", "task": "scan", "work": "w1", "bound": 1000, "sign-in": "me"}
    code, admission = shell("call", "admit", "--stdin", stdin=json.dumps(request))
    assert code == 0 and admission["dispatch"]


def test_a_reconcile_confirmation_on_stdin_ends_the_dead_runners_call_as_lost(shell: Shell, running: str) -> None:
    assert _admit(shell, running)[0] == 0
    confirmation = {"runner": "r-1", "confirmedBy": "supervisor", "evidence": "pid 1 gone"}
    code, result = shell("reconcile", "--occurrence", running, stdin=json.dumps(confirmation))
    assert code == 0 and result["occurrence"]["calls"][0]["outcome"] == "lost"
    assert shell("status", running)[1]["state"] == "interrupted"


def test_a_release_whose_owner_check_fails_exits_non_zero_and_keeps_the_lease(sqlite_url: str) -> None:
    from datetime import UTC, datetime

    journal = open_journal(sqlite_url)
    leases.acquire(journal, "worker", "tick-a", 60, datetime.now(UTC), {})
    code, error, _ = cli(sqlite_url, "lease", "release", "--scope", "worker", "--owner", "tick-b")
    assert code == 5 and error["error"] == "NOT_LEASE_OWNER" and error["holder"]["owner"] == "tick-a"
    assert held_lease(journal, "worker").owner == "tick-a"
    code, released, _ = cli(sqlite_url, "lease", "release", "--scope", "worker", "--owner", "tick-a")
    assert code == 0 and released == {"released": "worker", "owner": "tick-a"}


def test_a_heartbeat_from_a_non_owner_is_refused_by_the_cli(sqlite_url: str) -> None:
    from datetime import UTC, datetime

    journal = open_journal(sqlite_url)
    leases.acquire(journal, "worker", "tick-a", 60, datetime.now(UTC), {})
    before = held_lease(journal, "worker").heartbeat_at
    code, error, _ = cli(sqlite_url, "lease", "heartbeat", "--scope", "worker", "--owner", "tick-b")
    assert code == 5 and error["error"] == "NOT_LEASE_OWNER"
    assert held_lease(journal, "worker").heartbeat_at == before


def test_launchd_install_renders_the_tick_at_the_commissions_intervals(
    shell: Shell, tmp_path: Path
) -> None:
    commission = commission_due_now()
    path = commission_file(tmp_path, commission)
    code, _ = shell("launchd", "install", "--commission", str(path), "--host-zone", commission["zone"])
    assert code == 2  # neither --print nor --output: nowhere to put it

    output = tmp_path / "agent.plist"
    code = main(["--journal", shell.url, "launchd", "install", "--commission", str(path), "--host-zone",
                 commission["zone"], "--output", str(output), "--", "/opt/runner.sh", "--night"])
    assert code == 0
    agent = plistlib.loads(output.read_bytes())
    assert agent["StartCalendarInterval"] == launch_intervals(commission, commission["zone"])
    arguments = agent["ProgramArguments"]
    assert Path(arguments[0]).is_absolute()
    assert arguments[1:] == ["tick", "--detach", "--", "/opt/runner.sh", "--night"]
    assert agent["EnvironmentVariables"]["FACTORY_JOURNAL"] == shell.url  # the journal, off the command line
    assert output.stat().st_mode & 0o077 == 0, "owner-only: the journal URL may carry a password"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.plist", "commission.json"]

    code, refused = shell("launchd", "install", "--commission", str(path), "--host-zone", "Asia/Tokyo", "--print",
                          "--", "/opt/runner.sh")
    assert code == 2 and "zone" in refused["message"]


def test_health_exits_2_when_it_cannot_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_a_journal = tmp_path / "notes.txt"
    not_a_journal.write_text("hello")
    assert main(["--journal", f"sqlite:///{not_a_journal}", "health", "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["healthy"] is False and "not a factory-schedule journal" in report["could_not_check"][0]
    assert not_a_journal.read_text() == "hello"


def test_health_exits_0_when_it_finds_only_information_and_prints_words(shell: Shell, running: str) -> None:
    shell.capsys.readouterr()
    code = main(["--journal", shell.url, "health"])
    lines = shell.capsys.readouterr().out.splitlines()
    assert code == 0, lines
    assert lines[0].startswith("info: [running-without-lease]") and lines[-1].startswith("healthy")
