"""`tick --detach` watches each keeper it starts for a declared window: the same process (pid and start
time) must still hold its segment's lease; only a keeper that exited non-zero leaving its segment running
counts as failed. Real processes over a real SQLite journal."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tui.runner_support import CLI, REPO, cli, cli_env, commissioned_journal, json_lines


@pytest.fixture
def journal(sqlite_url: str) -> Any:
    return commissioned_journal(sqlite_url)


def _detached_tick(url: str, tmp_path: Path, *runner: str, observe: str = "3") -> tuple[int, list[dict[str, Any]]]:
    out = tmp_path / "tick.out"
    with out.open("w") as stdout:
        tick = subprocess.run([*CLI, "--journal", url, "tick", "--detach", "--ttl", "1", "--observe", observe,
                               "--", *runner], stdout=stdout, stderr=subprocess.DEVNULL, env=cli_env(url),
                              cwd=REPO, timeout=120)
    return tick.returncode, json_lines(out.read_text())


def _stop(lines: list[dict[str, Any]]) -> None:
    for line in lines:
        if "detached" in line:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(line["detached"]["keeper_pid"], signal.SIGKILL)


def test_a_keeper_that_stays_the_same_process_and_holds_its_lease_is_observed_holding(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    code, lines = _detached_tick(sqlite_url, tmp_path, sys.executable, "-c", "import time; time.sleep(30)")
    try:
        assert code == 0, lines
        [observed] = [line["keeper_observed"] for line in lines if "keeper_observed" in line]
        [detached] = [line["detached"] for line in lines if "detached" in line]
        assert observed["keeper_pid"] == detached["keeper_pid"]
        assert (observed["verdict"], observed["same_process"], observed["lease_held"]) == ("holding", True, True)
        assert observed["window_seconds"] == 3
    finally:
        _stop(lines)


def test_a_keeper_whose_runner_fails_leaving_its_segment_running_is_observed_failed(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    code, lines = _detached_tick(sqlite_url, tmp_path, "/bin/false", observe="20")
    _stop(lines)
    [observed] = [line["keeper_observed"] for line in lines if "keeper_observed" in line]
    assert (observed["verdict"], observed["segment_running"]) == ("failed", True)
    assert observed["exit"] not in (None, 0)
    assert code == 6


def test_the_observation_window_is_declared_and_bounded(sqlite_url: str, journal: Any) -> None:
    code, answer, _ = cli(sqlite_url, "tick", "--detach", "--observe", "301", "--", "/bin/true")
    assert code == 2 and "--observe" in str(answer)


@pytest.mark.parametrize(("runner", "verdict"), [("/bin/false", "failed"), ("/bin/true", "unclear")])
def test_a_run_counts_as_failed_only_when_its_exit_status_and_its_missing_record_agree(
    sqlite_url: str, journal: Any, runner: str, verdict: str
) -> None:
    _code, answer, err = cli(sqlite_url, "tick", "--ttl", "1", "--", runner)
    assert answer["segment_run"]["segment_running"] is True, err
    assert answer["segment_run"]["verdict"] == verdict


def test_a_non_zero_exit_after_the_segment_ended_is_a_host_warning_not_a_failure() -> None:
    from factory_schedule.tui.host.segments import run_verdict

    assert run_verdict(1, False, "released") == "unclear"  # exit and record disagree: health names it, not failed
    assert run_verdict(0, False, "released", "ordinary") == "ended"
    assert run_verdict(None, True, "left-to-go-stale") == "failed"  # could not be started: nothing recorded
    assert run_verdict(0, True, "left-to-go-stale") == "unclear"
    assert run_verdict(1, False, "lost") == "unclear"


def _runner_pid(path: Path) -> int:
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = path.read_text().strip() if path.exists() else ""
        if text.isdigit():
            return int(text)
        time.sleep(0.05)
    raise AssertionError("the runner never wrote its pid")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _kill_session_of(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(os.getpgid(pid), signal.SIGKILL)


def test_a_runner_whose_keeper_died_at_once_is_never_reconciled_while_it_works(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    """The keeper is killed as soon as its runner starts: the lease must already name the runner (the
    runner waits behind a gate until it does), so `health --repair` sees a live holder and reconciles nothing."""
    import time

    marker = tmp_path / "runner.pid"
    _detached_tick(sqlite_url, tmp_path, "/bin/sh", "-c",
                                 f'echo $$ > {marker}; kill -9 $PPID; exec sleep 300', observe="0")
    runner = _runner_pid(marker)
    try:
        time.sleep(3)  # 2 x TTL without a heartbeat: the lease is stale
        _code, report, err = cli(sqlite_url, "health", "--repair", "--json")
        assert report["repairs"] == [], err
        assert _alive(runner)
        assert "stale-lease-live-process" in [finding["kind"] for finding in report["findings"]]
    finally:
        _kill_session_of(runner)


def test_a_runner_whose_own_process_exited_leaving_work_in_its_session_counts_as_alive(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    """The runner's session is its holder: a process it left behind (still working) keeps it alive, so the
    lease's pid being gone is no evidence that its work stopped."""
    import time

    marker = tmp_path / "worker.pid"
    _detached_tick(sqlite_url, tmp_path, "/bin/sh", "-c",
                                 f'sleep 300 & echo $! > {marker}; kill -9 $PPID; exit 0', observe="0")
    worker = _runner_pid(marker)
    try:
        time.sleep(3)
        _code, report, err = cli(sqlite_url, "health", "--repair", "--json")
        assert report["repairs"] == [], err
        assert _alive(worker)
    finally:
        _kill_session_of(worker)


def test_a_runner_whose_lease_write_fails_is_stopped_at_its_gate_having_run_nothing(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    """The lease is taken from the keeper between its first write and the one naming the runner: the
    runner, still waiting at its gate, is killed and never runs a line of its own."""
    from datetime import UTC, datetime

    from factory_schedule.store import leases
    from factory_schedule.tui.host.segments import SegmentJob, run_segment
    from factory_schedule.tui.host.tokens import segment_scope

    job = SegmentJob(lane="alpha/basic", occurrence_id="alpha/basic/2026-12-01", segment=1, runner="r-gate")
    scope = segment_scope(job.occurrence_id, job.segment)
    calls = 0

    def now() -> datetime:
        nonlocal calls
        calls += 1
        if calls == 3:  # the write that names the runner: another supervisor removed the lease first
            leases.release(journal, scope, job.runner)
        return datetime.now(UTC)

    marker = tmp_path / "ran"
    run = run_segment(journal, sqlite_url, job, ["/bin/sh", "-c", f"touch {marker}"], 60, now, lambda: None)
    assert (run.lease, run.exit) == ("lost", None) and "stopped before it started" in run.detail
    assert run.pid is not None and not _alive(run.pid)
    assert not marker.exists()
