"""The tick and its runners as real processes: leases, heartbeats, a SIGKILL mid-call, and the way back.

Each test opens the journal once in this process (a second open of a SQLite file
in one process drops its locks; see tui/cli/schedule_commands.open_schedule) and
drives everything else through `factory-schedule` processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.process_identity import this_host
from factory_schedule.tui.host.tokens import segment_scope
from tests.tui.runner_support import (
    CLI,
    EXAMPLE_RUNNER,
    FAKE_PROVIDER,
    REPO,
    cli,
    cli_env,
    commission_due_now,
    commissioned_journal,
    json_lines,
    provider_contacts,
    run_logs,
    wait_for,
)

TTL = 1.0


def _tick_process(
    url: str, tmp_path: Path, *command: str, options: tuple[str, ...] = (), **env: str
) -> subprocess.Popen[str]:
    environment = cli_env(url, PROVIDER=f"{sys.executable} {FAKE_PROVIDER}",
                          FAKE_PROVIDER_LOG=str(tmp_path / "provider.log"), **env)
    return subprocess.Popen(
        [*CLI, "--journal", url, "tick", "--ttl", f"{TTL:g}", *options, "--", *command],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, cwd=REPO,
    )


def _finish(process: subprocess.Popen[str], timeout: float = 120) -> tuple[int, list[dict[str, Any]], str]:
    out, err = process.communicate(timeout=timeout)
    lines = json_lines(out)
    return process.returncode, lines, err + run_logs(lines)


@pytest.fixture
def journal(sqlite_url: str) -> Any:
    """The test's one handle on the journal, commissioned (a due-now lane) with a current claude record."""
    return commissioned_journal(sqlite_url)


def test_the_example_runner_completes_an_occurrence_end_to_end_through_the_cli(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    code, lines, err = _finish(_tick_process(sqlite_url, tmp_path, str(EXAMPLE_RUNNER)))
    assert code == 0, (lines, err)
    [started, ran] = lines
    assert started["tick"]["kind"] == "admitted"
    occurrence = started["tick"]["occurrence"]["id"]
    assert ran["segment_run"] == {**ran["segment_run"], "exit": 0, "lease": "released", "segment_running": False}
    status = LifecycleSchedule(journal, SystemClock()).status(occurrence)
    assert (status.state, status.status) == ("settled", "completed")
    assert provider_contacts(tmp_path) == ["item-1", "item-2"]
    assert leases.list_leases(journal) == []


def test_the_example_runner_defers_on_a_usage_limit_without_resending(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    code, lines, err = _finish(_tick_process(sqlite_url, tmp_path, str(EXAMPLE_RUNNER),
                                             FAKE_PROVIDER_MODE="limit:item-2", RUNNER_WORK="item-1 item-2 item-3"))
    assert code == 0, (lines, err)
    occurrence = lines[0]["tick"]["occurrence"]["id"]
    assert LifecycleSchedule(journal, SystemClock()).status(occurrence).state == "deferred"
    assert provider_contacts(tmp_path) == ["item-1", "item-2"]
    assert leases.list_leases(journal) == []
    # The tick's own line says how the segment ended, so an owner reading it sees why the night stopped.
    ended = lines[-1]["segment_run"]["ended"]  # in the commission's zone, as the dashboard says it
    zone = LifecycleSchedule(journal, SystemClock()).read().commission["zone"]  # type: ignore[union-attr]
    assert ended.startswith("deferred usage-limit, resumes at ") and ended.endswith(f" {zone}"), ended


def test_the_example_runner_retries_a_failed_call_report_instead_of_leaving_the_call_unreported(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    # The first `call end` fails as a locked or unreachable journal would fail it; the retry reports the contact.
    failed_once = tmp_path / "call-end-failed"
    flaky = tmp_path / "flaky-factory-schedule"
    flaky.write_text(
        "#!/usr/bin/env bash\n"
        f'if [ "$1 $2" = "call end" ] && [ ! -e {failed_once} ]; then\n'
        f"  touch {failed_once}; cat >/dev/null; echo '{{\"error\": \"the journal is locked\"}}'; exit 3\n"
        "fi\n"
        f'exec {sys.executable} -m factory_schedule.tui.cli "$@"\n'
    )
    flaky.chmod(0o755)
    code, lines, err = _finish(_tick_process(sqlite_url, tmp_path, str(EXAMPLE_RUNNER), FACTORY_SCHEDULE=str(flaky)))
    assert code == 0, (lines, err)
    assert failed_once.exists() and "trying again" in err
    occurrence = lines[0]["tick"]["occurrence"]["id"]
    status = LifecycleSchedule(journal, SystemClock()).status(occurrence)
    assert (status.state, status.status) == ("settled", "completed")
    assert provider_contacts(tmp_path) == ["item-1", "item-2"]


def test_a_runner_killed_mid_call_leaves_one_occurrence_that_a_supervisor_reconciles_and_resumes(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    schedule = LifecycleSchedule(journal, SystemClock())
    tick = _tick_process(sqlite_url, tmp_path, str(EXAMPLE_RUNNER), FAKE_PROVIDER_MODE="hang:item-1")
    wait_for(lambda: "item-1" in provider_contacts(tmp_path), what="the runner's first contact")
    [lease] = [lease for lease in leases.list_leases(journal) if lease.scope.startswith("segment/")]
    runner_pid = lease.info["pid"]
    provider_pid = json.loads((tmp_path / "provider.log").read_text().splitlines()[0])["pid"]
    os.kill(runner_pid, signal.SIGKILL)
    os.kill(provider_pid, signal.SIGKILL)

    code, lines, _err = _finish(tick)
    occurrence = lines[0]["tick"]["occurrence"]["id"]
    assert code == 6
    assert lines[-1]["segment_run"]["lease"] == "left-to-go-stale" and lines[-1]["segment_run"]["exit"] == -9
    # One logical occurrence, still running under the dead runner: nothing ends it by time.
    view = schedule.read()
    assert view is not None and [o.id for o in view.occurrences] == [occurrence]
    assert schedule.status(occurrence).state == "running"
    held = leases.get_lease(journal, segment_scope(occurrence, 1))
    assert held is not None and held.owner == lease.owner

    wait_for(lambda: leases.stale(held, datetime.now(UTC)), timeout=3 * TTL + 5, what="2 x TTL")
    code, report, _ = cli(sqlite_url, "health", "--json")
    assert code == 1
    [dead] = [finding for finding in report["findings"] if finding["kind"] == "dead-runner"]
    evidence = dead["evidence"]
    assert (evidence["runner"], evidence["pid"], evidence["host"]) == (lease.owner, runner_pid, this_host())
    assert (evidence["occurrence"], evidence["segment"]) == (occurrence, 1)
    assert evidence["last_heartbeat"] == held.heartbeat_at.isoformat()
    assert schedule.status(occurrence).state == "running"  # health never reconciles

    confirmation = {**evidence["confirmation"], "confirmedBy": "supervisor"}
    code, result, _ = cli(sqlite_url, "reconcile", "--occurrence", occurrence, stdin=json.dumps(confirmation))
    assert code == 0, result
    [call] = result["occurrence"]["calls"]
    assert (call["work"], call["outcome"], call["unknown"]) == ("item-1", "lost", True)

    # The next tick resumes the same occurrence (same night, inside its deadline) as segment 2; the lost
    # call's work is refused as unknown-effect and never sent again.
    code, lines, err = _finish(_tick_process(sqlite_url, tmp_path, str(EXAMPLE_RUNNER)))
    assert code == 0, (lines, err)
    # Its repair pass first removes the dead runner's lease, which now guards nothing running.
    [repaired] = [line for line in lines if "repaired" in line]
    assert (repaired["repaired"], repaired["repair"]["scope"]) == ("removed-stale-lease", segment_scope(occurrence, 1))
    lines = [line for line in lines if "repaired" not in line]
    assert lines[0]["tick"]["kind"] == "resumed"
    assert lines[0]["tick"]["occurrence"]["id"] == occurrence
    assert lines[-1]["segment_run"]["segment"] == 2
    assert provider_contacts(tmp_path) == ["item-1", "item-2"]
    status = schedule.status(occurrence)
    assert (status.state, status.status) == ("settled", "partial")
    view = schedule.read()
    assert view is not None and [o.id for o in view.occurrences] == [occurrence]

    code, report, _ = cli(sqlite_url, "health", "--repair", "--json")
    assert report["repairs"] == []
    assert leases.list_leases(journal) == []


def test_a_live_runner_whose_segment_lease_is_fresh_cannot_be_reconciled_as_dead(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    """`reconcile` confirms a runner dead; while its segment's lease heartbeats, it is not: the call it has in
    flight would be marked lost and the next tick would start a second segment beside it, paying twice."""
    schedule = LifecycleSchedule(journal, SystemClock())
    tick = _tick_process(sqlite_url, tmp_path, str(EXAMPLE_RUNNER), FAKE_PROVIDER_MODE="hang:item-1")
    try:
        wait_for(lambda: "item-1" in provider_contacts(tmp_path), what="the runner's first contact")
        [lease] = [lease for lease in leases.list_leases(journal) if lease.scope.startswith("segment/")]
        occurrence = lease.info["occurrence"]
        before = journal.head("discovery/schedule")
        code, result, _ = cli(sqlite_url, "reconcile", "--occurrence", occurrence, "--runner", lease.owner,
                              "--confirmed-by", "someone", "--evidence", "pid gone")
        assert code == 4 and result["error"] == "LEASE_HELD", result
        assert "heartbeat" in result["message"] and result["holder"]["owner"] == lease.owner
        assert journal.head("discovery/schedule") == before
        assert schedule.status(occurrence).state == "running"
    finally:
        for line in (tmp_path / "provider.log").read_text().splitlines():
            with contextlib.suppress(ProcessLookupError):
                os.kill(json.loads(line)["pid"], signal.SIGKILL)
        for lease in leases.list_leases(journal):
            with contextlib.suppress(ProcessLookupError, KeyError):
                os.kill(lease.info["pid"], signal.SIGKILL)
        tick.kill()
        tick.communicate()


def test_a_tick_that_finds_the_worker_lease_held_starts_nothing(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    leases.acquire(journal, "worker", "tick-other", 600, datetime.now(UTC), {"pid": os.getpid(), "host": this_host()})
    code, lines, _ = _finish(_tick_process(sqlite_url, tmp_path, "true"))
    assert code == 4
    assert lines[-1]["error"] == "LEASE_HELD" and lines[-1]["holder"]["owner"] == "tick-other"
    view = LifecycleSchedule(journal, SystemClock()).read()
    assert view is not None and view.occurrences == []


def test_a_tick_on_a_journal_set_back_since_the_last_check_starts_and_repairs_nothing(
    sqlite_url: str, tmp_path: Path
) -> None:
    """A journal restored to an earlier copy no longer holds decisions made since (a call admitted, tokens
    debited): acting on it would make them again. The tick checks the chains from where the last check ended
    before it repairs or starts anything, and exits 8 naming the break."""
    journal = open_journal(sqlite_url)
    schedule = LifecycleSchedule(journal, SystemClock())
    schedule.record_commission(commission_due_now())
    copy = tmp_path / "copy.db"
    path = sqlite_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as live, sqlite3.connect(copy) as saved:
        live.backup(saved)
    schedule.record_account(account="claude", sequence=1, sign_in="owner@example.com", overage=False,
                            recorded_by="owner")
    assert cli(sqlite_url, "health")[0] in (0, 1)  # checked through the account record
    with sqlite3.connect(copy) as saved, sqlite3.connect(path) as live:
        saved.backup(live)  # the journal as it was before the account record
    head = journal.head("discovery/schedule")
    code, lines, err = _finish(_tick_process(sqlite_url, tmp_path, "true"))
    assert code == 8, (lines, err)
    assert [line["chain_broken"] for line in lines if "chain_broken" in line] == ["discovery/schedule"]
    assert not [line for line in lines if "tick" in line or "repaired" in line], lines
    assert journal.head("discovery/schedule") == head
    assert leases.list_leases(journal) == []


def test_ticks_racing_take_one_worker_lease_at_a_time_and_admit_one_occurrence(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    env_file = tmp_path / "runner-env.json"
    runner = [sys.executable, "-c",
              f"import json, os; json.dump({{k: v for k, v in os.environ.items() if k.startswith('FACTORY_')}}, "
              f"open({str(env_file)!r}, 'x'))"]
    ticks = [_tick_process(sqlite_url, tmp_path, *runner) for _ in range(3)]
    results = [_finish(tick) for tick in ticks]
    kinds = [line["tick"]["kind"] for _code, lines, _err in results for line in lines if "tick" in line]
    assert kinds.count("admitted") == 1, results
    assert {code for code, _lines, _err in results} <= {0, 4, 6}
    assert {line["error"] for _c, lines, _e in results for line in lines if "error" in line} <= {"LEASE_HELD"}

    environment = json.loads(env_file.read_text())
    [admitted] = [line for _c, lines, _e in results for line in lines if line.get("tick", {}).get("kind") == "admitted"]
    assert environment["FACTORY_OCCURRENCE"] == admitted["tick"]["occurrence"]["id"]
    assert environment["FACTORY_RUNNER"] == admitted["runner"]
    assert environment["FACTORY_SEGMENT"] == "1"
    assert environment["FACTORY_JOURNAL"] == sqlite_url
    assert leases.get_lease(journal, "worker") is None


def test_a_stale_worker_lease_of_a_tick_gone_from_this_host_is_cleared_by_the_next_tick(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(gone.stdout)
    long_ago = datetime.now(UTC) - timedelta(minutes=10)
    leases.acquire(journal, "worker", "tick-crashed", 60, long_ago, {"pid": dead_pid, "host": this_host()})
    code, lines, err = _finish(_tick_process(sqlite_url, tmp_path, "true"))
    assert code == 6, (lines, err)  # `true` leaves its segment running: the lease is left to go stale
    assert lines[0]["repaired"] == "stale-worker-lease" and lines[0]["lease"]["owner"] == "tick-crashed"
    assert lines[1]["tick"]["kind"] == "admitted"


def test_a_detached_tick_returns_at_once_and_its_keeper_runs_the_segment_to_the_end(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    out = tmp_path / "tick.out"
    environment = cli_env(sqlite_url, PROVIDER=f"{sys.executable} {FAKE_PROVIDER}",
                          FAKE_PROVIDER_LOG=str(tmp_path / "provider.log"))
    with out.open("w") as stdout:
        tick = subprocess.Popen(
            [*CLI, "--journal", sqlite_url, "tick", "--detach", "--ttl", f"{TTL:g}",
             "--", str(EXAMPLE_RUNNER)],
            stdout=stdout, stderr=subprocess.DEVNULL, env=environment, cwd=REPO,
        )
        assert tick.wait(timeout=120) == 0
    # The tick has returned; its keeper (which shares its stdout, as launchd's log would) works on.
    started, detached = json_lines(out.read_text())[:2]
    occurrence = started["tick"]["occurrence"]["id"]
    assert detached["detached"]["occurrence"] == occurrence and detached["detached"]["segment"] == 1
    schedule = LifecycleSchedule(journal, SystemClock())
    wait_for(lambda: schedule.status(occurrence).state == "settled", timeout=180, what="the keeper's runner")
    wait_for(lambda: leases.list_leases(journal) == [], timeout=30, what="the keeper's release")
    assert schedule.status(occurrence).status == "completed"
    assert provider_contacts(tmp_path) == ["item-1", "item-2"]


def test_a_ctrl_c_at_a_foreground_tick_reaches_its_runners_sessions_and_stops_the_tick(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    ready, interrupted = tmp_path / "ready", tmp_path / "interrupted"
    runner = (f"trap 'echo interrupted > {interrupted}; exit 130' INT; echo ready > {ready}; "
              "while :; do sleep 0.1; done")
    tick = _tick_process(sqlite_url, tmp_path, "/bin/sh", "-c", runner)
    try:
        wait_for(ready.exists, timeout=120, what="the runner to start")
        tick.send_signal(signal.SIGINT)  # what a terminal's Ctrl-C sends to its foreground process group
        code, _lines, err = _finish(tick, timeout=60)
    finally:
        if tick.poll() is None:
            tick.kill()
    assert interrupted.read_text() == "interrupted\n", err  # the runner's own session heard it
    assert code == 130, err


def test_a_tick_refuses_a_lease_ttl_under_one_second_before_touching_the_journal(
    sqlite_url: str, journal: Any
) -> None:
    before = journal.head("discovery/schedule")
    for ttl in ("0.0004", "0.5"):
        code, answer, err = cli(sqlite_url, "tick", "--ttl", ttl, "--", "/bin/true")
        assert code == 2 and "--ttl" in str(answer) + err
    assert journal.head("discovery/schedule") == before and leases.list_leases(journal) == []
