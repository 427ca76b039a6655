"""The schedule's commands: one JSON object out, and an exit code per outcome a shell can branch on."""

from __future__ import annotations

import io
import json
import plistlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import SCHEDULE_AGGREGATE, SCHEDULE_ERROR_CODES, launch_intervals
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.cli.main import main
from factory_schedule.tui.cli.output import ERROR_EXIT_CODES, REFUSAL_EXIT_CODES
from tests.store.support import held_lease
from tests.tui.runner_support import CLI, REPO, cli, cli_env, commission_due_now, commission_file

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


@pytest.mark.parametrize("verb", ["release", "heartbeat"])
def test_a_segments_lease_cannot_be_released_or_kept_fresh_by_name_from_the_command_line(
        sqlite_url: str, verb: str) -> None:
    """A segment's lease names its runner, which `lease list` shows anyone: releasing it by that name would let any
    process free a live runner for `reconcile` (a second segment beside it, paid twice), and a heartbeat by name
    would keep a dead one's lease fresh so it is never reconciled. Only its tick holds it."""
    from datetime import UTC, datetime

    journal = open_journal(sqlite_url)
    scope = "segment/discovery/alpha/basic/2026-12-07/1"
    leases.acquire(journal, scope, "r-live", 60, datetime.now(UTC), {})
    before = held_lease(journal, scope)
    code, refused, _ = cli(sqlite_url, "lease", verb, "--scope", scope, "--owner", "r-live")
    assert code == 2 and "held by its tick" in refused["message"], refused
    assert held_lease(journal, scope) == before


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


def _protected(url: str) -> None:
    """An owner key in the journal: without one, health reports owner-key-missing, an error."""
    from factory_schedule.core import ManualClock
    from factory_schedule.store import open_journal
    from tests.owner_support import protect

    protect(open_journal(url), ManualClock("2026-12-01T00:00:00Z"))


def test_health_exits_0_when_it_finds_only_information_and_prints_words(shell: Shell, running: str) -> None:
    _protected(shell.url)
    shell.capsys.readouterr()
    code = main(["--journal", shell.url, "health"])
    lines = shell.capsys.readouterr().out.splitlines()
    assert code == 0, lines
    assert lines[0].startswith("info: [running-without-lease]") and lines[-1].startswith("healthy")


# -- every failure is one JSON line and an exit code -----------------------------------------

# Every subcommand path of the command line (the fuzz test and the --journal tests walk them all).
COMMAND_PATHS = (
    ("call", "admit"), ("call", "end"), ("defer",), ("settle",), ("reconcile",), ("record-account",),
    ("record-commission",), ("start",), ("status",), ("plan",), ("show",), ("lease", "list"),
    ("lease", "heartbeat"), ("lease", "release"), ("tick",), ("tick-segment",), ("health",), ("launchd", "print"),
    ("launchd", "install"), ("dashboard",), ("demo",), ("screenshots",), ("lanes", "top-n"),
    ("lanes", "claim"), ("lanes", "report"), ("lanes", "heartbeat"), ("lanes", "abandon"), ("lanes", "escalation"),
    ("lanes", "approval-request"), ("lanes", "approval-decide"), ("lanes", "approval-use"), ("lanes", "show"),
)


@pytest.mark.parametrize(
    "args",
    [("call", "admit", "--bound", "1.5"), ("no-such-command",), ("status",), ("plan", "--no-such-flag"),
     ("tick", "--ttl", "nan", "--", "/bin/true"), ("tick", "--ttl", "inf", "--", "/bin/true"),
     ("tick", "--ttl", "1e300", "--", "/bin/true"), ("health", "--grace", "nan"), ("lease", "heartbeat")],
    ids=lambda args: " ".join(args),
)
def test_an_argument_argparse_refuses_prints_the_json_error_shape_not_usage(
    args: tuple[str, ...], shell: Shell, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--journal", shell.url, *args])
    captured = capsys.readouterr()
    [line] = captured.out.splitlines()
    error = json.loads(line)
    assert (code, error["error"]) == (2, "INVALID") and error["message"], error
    assert "usage:" not in captured.out + captured.err


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=" ".join)
def test_every_subcommands_help_names_journal_which_may_follow_the_subcommand(
    path: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*path, "--help"]) == 0
    assert "--journal URL" in capsys.readouterr().out


def test_journal_after_the_subcommand_is_the_same_as_before_it(shell: Shell, running: str) -> None:
    _protected(shell.url)
    shell.capsys.readouterr()
    assert main(["plan", "--journal", shell.url]) == 0
    after = shell.capsys.readouterr().out
    assert main(["--journal", shell.url, "plan"]) == 0
    assert shell.capsys.readouterr().out == after and json.loads(after)["plan"][0]["occurrence_id"] == running
    assert main(["health", "--json", "--journal", shell.url]) == 0
    assert json.loads(shell.capsys.readouterr().out)["healthy"] is True


def test_health_json_says_whether_the_chain_verified(shell: Shell, running: str) -> None:
    shell.capsys.readouterr()
    main(["--journal", shell.url, "health", "--json"])
    report = json.loads(shell.capsys.readouterr().out)
    assert report["verified"] is True and report["verified_through"] == shell.head()


# -- a journal that does not exist is refused, not created -----------------------------------

NON_CREATING = [
    ("plan",), ("show",), ("status", "discovery/alpha/basic/2026-12-07"), ("lease", "list"),
    ("start", "--lane", "alpha/basic", "--runner", "r-1"),
    ("record-account", "--account", "claude", "--sequence", "1", "--sign-in", "me", "--overage", "off",
     "--recorded-by", "owner"),
    ("call", "admit", "--occurrence", "discovery/alpha/basic/2026-12-07", "--runner", "r-1", "--task", "scan",
     "--work", "w", "--bound", "1", "--sign-in", "me"),
    ("defer", "--occurrence", "discovery/alpha/basic/2026-12-07", "--runner", "r-1", "--reason", "usage-limit"),
    ("settle", "--occurrence", "discovery/alpha/basic/2026-12-07", "--settled-by", "me", "--status", "completed",
     "--reason", "done"),
    ("lease", "release", "--scope", "worker", "--owner", "me"),
    ("tick", "--", "/bin/true"),
    ("lanes", "claim", "--lane", "promotion", "--run", "promotion", "--runner", "r-1"),
    ("lanes", "show", "--lane", "promotion"),
]


@pytest.mark.parametrize("args", NON_CREATING, ids=lambda args: " ".join(args[:2]))
def test_a_journal_path_that_does_not_exist_is_refused_in_one_line_and_not_created(
    args: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "jornal.db"
    code = main(["--journal", f"sqlite:///{typo}", *args])
    [line] = capsys.readouterr().out.splitlines()
    error = json.loads(line)
    assert (code, error["error"]) == (3, "JOURNAL") and str(typo) in error["message"]
    assert not typo.exists() and list(tmp_path.iterdir()) == []


def test_health_never_calls_a_missing_or_empty_journal_healthy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.db"
    assert main(["--journal", f"sqlite:///{missing}", "health", "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["healthy"] is False and report["verified"] is False and not missing.exists()
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    open_journal(empty)
    assert main(["--journal", empty, "health"]) == 1
    assert "not-commissioned" in capsys.readouterr().out


def test_recording_the_first_commission_starts_a_journal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = tmp_path / "new.db"
    commission = commission_file(tmp_path, commission_due_now())
    assert main(["--journal", f"sqlite:///{new}", "record-commission", str(commission)]) == 0
    assert new.exists() and json.loads(capsys.readouterr().out)["version"] == 1


def test_the_dashboard_refuses_a_named_journal_that_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "jornal.db"
    assert main(["dashboard", "--journal", f"sqlite:///{typo}"]) == 2
    assert str(typo) in capsys.readouterr().err and not typo.exists()


# -- plain text is escaped, suggested command lines are quoted --------------------------------


def test_health_text_escapes_control_characters_from_the_journal(
    shell: Shell, running: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import pendulum

    journal = open_journal(shell.url)
    hostile = "tick-\x1b[2J\x1b[1;1Hall good\x1b[8m"
    leases.acquire(journal, "worker", hostile, 1, pendulum.now("UTC").subtract(hours=1), {"host": "elsewhere"})
    capsys.readouterr()
    assert main(["--journal", shell.url, "health"]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "tick-\\x1b[2J\\x1b[1;1Hall good\\x1b[8m" in out


def test_the_reconcile_line_health_suggests_is_shell_quoted(
    shell: Shell, running: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import shlex

    import pendulum

    from factory_schedule.tui.host.process_identity import this_host
    from factory_schedule.tui.host.tokens import segment_scope

    journal = open_journal(shell.url)
    info = {"pid": 2**22 + 12345, "host": this_host(), "runner": "r-1", "occurrence": running, "segment": 1}
    leases.acquire(journal, segment_scope(running, 1), "r-1", 1, pendulum.now("UTC").subtract(hours=1), info)
    capsys.readouterr()
    assert main(["--journal", shell.url, "health"]) == 1
    [line] = [line for line in capsys.readouterr().out.splitlines() if "to confirm:" in line]
    words = shlex.split(line.split("to confirm: ", 1)[1])
    assert words[:6] == ["factory-schedule", "reconcile", "--occurrence", running, "--runner", "r-1"]
    assert words[8] == "--evidence" and words[9].startswith(f"runner process {info['pid']} on ")
    code, result = shell(*words[1:])  # pasted as printed, it confirms the dead runner
    assert code == 0 and result["occurrence"]["state"] == "interrupted"


# -- the LaunchAgent -------------------------------------------------------------------------


def test_launchd_install_refuses_a_relative_runner_and_its_help_says_where_the_journal_goes(
    shell: Shell, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commission = commission_due_now()
    path = commission_file(tmp_path, commission)
    output = tmp_path / "agent.plist"
    code, refused = shell("launchd", "install", "--commission", str(path), "--host-zone", commission["zone"],
                          "--output", str(output), "--", "runner.sh")
    assert code == 2 and "absolute" in refused["message"] and not output.exists()
    capsys.readouterr()
    assert main(["launchd", "install", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "EnvironmentVariables" in text and "--journal URL tick" not in text


# -- the pipe, and real processes ------------------------------------------------------------


def test_a_reader_that_goes_away_ends_the_command_quietly(shell: Shell, running: str) -> None:
    import subprocess

    from tests.tui.runner_support import cli_env

    process = subprocess.Popen([sys.executable, "-m", "factory_schedule.tui.cli", "show"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(shell.url))
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # `| head -c0`: the reader is gone before the first line
    error = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141 and "Traceback" not in error and error == ""


def test_arguments_that_are_not_utf8_are_refused_in_one_json_line(shell: Shell, running: str) -> None:
    import subprocess

    from tests.tui.runner_support import cli_env

    for argv in ([b"status", b"\xff\xfe"], [b"settle", b"--occurrence", running.encode(), b"--settled-by",
                                            b"me\xed\xa0\x80", b"--status", b"completed", b"--reason", b"x"]):
        done = subprocess.run([sys.executable.encode(), b"-m", b"factory_schedule.tui.cli", *argv],
                              capture_output=True, env=cli_env(shell.url), timeout=60)
        assert done.returncode == 2 and b"Traceback" not in done.stderr
        assert json.loads(done.stdout)["error"] == "INVALID"


def test_a_worker_lease_from_the_future_whose_tick_is_gone_neither_blocks_the_tick_nor_hides_from_health(
    shell: Shell, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pendulum

    from factory_schedule.tui.host.process_identity import this_host


    assert shell("record-commission", str(commission_file(tmp_path, commission_due_now())))[0] == 0
    journal = open_journal(shell.url)
    future = pendulum.now("UTC").add(years=3)  # a clock that was wrong when it heartbeated
    leases.acquire(journal, "worker", "tick-from-the-future", 60, future, {"host": this_host(), "pid": 2**22 + 7})
    capsys.readouterr()
    assert main(["--journal", shell.url, "health", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    [finding] = [f for f in report["findings"] if f["kind"] == "lease-heartbeat-in-future"]
    assert finding["repairable"] and finding["evidence"]["owner"] == "tick-from-the-future"

    code, _, stderr = cli(shell.url, "tick", "--lane", "alpha/basic", "--", "/bin/true")
    assert code != 4 and "Traceback" not in stderr
    assert leases.get_lease(journal, "worker") is None  # released by this tick after its starts


# -- start-up: each command loads only what it uses --------------------------------------------

_LOADED = """
import contextlib, io, json, sys
from factory_schedule.tui.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(json.loads(sys.argv[1]))
heavy = sorted({name.split(".")[0] for name in sys.modules} & {"sqlalchemy", "sqlmodel", "textual", "pydantic"})
print(json.dumps([code, heavy]))
"""


def _heavy_modules_loaded(*argv: str) -> tuple[int, list[str]]:
    import subprocess

    done = subprocess.run([sys.executable, "-c", _LOADED, json.dumps(list(argv))], capture_output=True, text=True,
                          timeout=120, check=True)
    code, heavy = json.loads(done.stdout)
    return code, heavy


def test_help_loads_neither_the_database_nor_textual_nor_pydantic() -> None:
    assert _heavy_modules_loaded("--help") == (0, [])
    assert _heavy_modules_loaded("call", "admit", "--help") == (0, [])
    assert _heavy_modules_loaded("lanes", "claim", "--help") == (0, [])


def test_plan_and_call_admit_on_an_existing_journal_load_neither_textual_nor_sqlalchemy_nor_sqlmodel(
    shell: Shell, running: str
) -> None:
    assert _heavy_modules_loaded("--journal", shell.url, "plan") == (0, ["pydantic"])
    admit = ("call", "admit", "--occurrence", running, "--runner", "r-1", "--task", "scan", "--work", "w1", "--bound",
             "1000", "--sign-in", "me")
    assert _heavy_modules_loaded("--journal", shell.url, *admit) == (0, ["pydantic"])


def test_launchd_print_puts_a_named_journal_in_the_environment_not_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commission = commission_due_now()
    path = commission_file(tmp_path, commission)
    url = "postgresql+psycopg://owner:s3cret@db.example/journal"
    assert main(["launchd", "print", str(path), "--host-zone", commission["zone"], "--journal", url, "--",
                 "/opt/factory-schedule", "tick"]) == 0
    agent = plistlib.loads(capsys.readouterr().out.encode())
    assert agent["EnvironmentVariables"] == {"FACTORY_JOURNAL": url}
    assert agent["ProgramArguments"] == ["/opt/factory-schedule", "tick"]


def test_a_deferral_replayed_for_a_token_that_now_runs_a_later_segment_exits_11_not_0(tmp_path: Path, capsys) -> None:
    """A runner reusing one token over two nights gets the first night's deferral back: the command line
    says so with its own exit code (11) and `still_running`, so a shell runner cannot take it for its own."""
    from factory_schedule.tui.cli.output import EXIT_OK, EXIT_REPLAY_STILL_RUNNING
    from factory_schedule.tui.cli.schedule_commands import _defer
    from tests.core.schedule.support import basic_id, make_harness

    h = make_harness(tmp_path)
    night = basic_id("alpha", "2026-12-07")
    h.at("2026-12-07T02:00:00Z")
    h.schedule.start(lane="alpha/basic", runner="run-7f3a")
    h.at("2026-12-07T02:10:00Z")
    request = {"occurrence": night, "runner": "run-7f3a", "reason": "volume-unmounted"}
    assert _defer(h.schedule, request) == EXIT_OK
    h.at("2026-12-08T02:00:00Z")
    h.schedule.start(lane="alpha/basic", runner="run-7f3a")
    h.at("2026-12-08T02:10:00Z")
    capsys.readouterr()
    assert _defer(h.schedule, request) == EXIT_REPLAY_STILL_RUNNING
    answer = json.loads(capsys.readouterr().out)
    assert (answer["replayed"], answer["still_running"]) == (True, 2)


def test_a_plain_path_for_the_journal_is_refused_naming_where_it_came_from_and_the_url_to_use(
        tmp_path: Path) -> None:
    """A path where a URL belongs is the likeliest first mistake: the answer names the variable (or flag) that
    held it and the URL that would work, and nothing is created."""
    path = tmp_path / "journal.db"
    env = {**cli_env(""), "FACTORY_JOURNAL": str(path)}
    done = subprocess.run([*CLI, "plan"], capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert done.returncode == 3, done
    said = done.stdout + done.stderr
    assert "$FACTORY_JOURNAL" in said and f"sqlite:///{path}" in said, said
    done = subprocess.run([*CLI, "--journal", str(path), "plan"], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=60)
    assert done.returncode == 3 and "--journal" in done.stdout + done.stderr, done
    done = subprocess.run([*CLI, "health", "--json"], capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    report = json.loads(done.stdout)  # health's own shape and exit: it could not check
    assert done.returncode == 2 and "$FACTORY_JOURNAL" in report["could_not_check"][0], done
    assert not path.exists()


@pytest.mark.parametrize("sequence", ["0", "-1"])
def test_an_account_sequence_below_one_is_refused_with_the_range_it_takes(sqlite_url: str, sequence: str) -> None:
    """The range the refusal names is the one the record takes: 0 is no sequence, so the words start at 1."""
    code, refused, _err = cli(sqlite_url, "record-account", "--account", "claude", "--sequence", sequence,
                              "--sign-in", "me", "--overage", "off", "--recorded-by", "owner")
    assert code == 2 and "--sequence: expected an integer from 1 to" in refused["message"], refused
