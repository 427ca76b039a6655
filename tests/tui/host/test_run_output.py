"""A runner's exit status and output, captured by the tick with real processes (fake runners): its output
goes to a bounded, owner-only log file under the state folder and never to the tick's terminal; its exit
status and first error and warning lines are recorded in the journal; and `health` calls a run failed only
when exit status, output and the segment's record agree, names a disagreement, and ignores a warning alone."""

from __future__ import annotations

import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.tui.host.run_output import MAX_LOG_BYTES, OutputCapture, recorded_runs
from tests.tui.runner_support import cli, commissioned_journal

SETTLE = ('$FACTORY_SCHEDULE settle --occurrence "$FACTORY_OCCURRENCE" --settled-by "$FACTORY_RUNNER" '
          '--status unavailable --reason "nothing to do" >/dev/null || exit 90\n')


@pytest.fixture
def journal(sqlite_url: str) -> Any:
    return commissioned_journal(sqlite_url)


def _runner(tmp_path: Path, body: str) -> str:
    script = tmp_path / "runner.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return str(script)


def _tick(url: str, runner: str) -> tuple[dict[str, Any], str]:
    code, answer, err = cli(url, "tick", "--ttl", "1", "--", runner)
    assert "segment_run" in answer, (code, answer, err)
    return answer["segment_run"], err


def _findings(url: str, *kinds: str) -> list[dict[str, Any]]:
    _code, report, _err = cli(url, "health", "--json", "--notify", "")
    return [finding for finding in report["findings"] if finding["kind"] in kinds]


def test_a_run_that_exits_non_zero_with_an_error_line_and_no_settlement_is_failed(
        sqlite_url: str, journal: Any, tmp_path: Path) -> None:
    runner = _runner(tmp_path, "echo 'scanning 3 files'\n"
                               "printf 'error: the provider refused \\033]0;owned\\007 the call\\n' >&2\nexit 3\n")
    run, err = _tick(sqlite_url, runner)
    assert (run["exit"], run["verdict"], run["segment_running"]) == (3, "failed", True)
    assert "provider refused" not in err and "scanning" not in err, "never the tick's terminal"
    log = Path(run["output"]["log"])
    assert "scanning 3 files" in log.read_text() and "\x1b]0;owned" in log.read_text()
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert run["output"]["error_lines"] == ["error: the provider refused \\x1b]0;owned\\x07 the call"]
    [recorded] = recorded_runs(journal)
    assert (recorded.exit, recorded.errors, recorded.log) == (3, 1, str(log))
    [finding] = _findings(sqlite_url, "run-failed", "run-outcome-disagrees")
    assert finding["kind"] == "run-failed" and finding["evidence"]["record"] == "running"
    assert "\x1b" not in finding["message"]


def test_a_warning_on_stderr_with_exit_zero_and_the_settlement_present_is_not_a_failure(
        sqlite_url: str, journal: Any, tmp_path: Path) -> None:
    runner = _runner(tmp_path, "echo 'warning: this terminal does not support colour' >&2\n" + SETTLE + "exit 0\n")
    run, _err = _tick(sqlite_url, runner)
    assert (run["exit"], run["verdict"], run["segment_running"]) == (0, "ended", False)
    assert run["output"]["warning_lines"] == ["warning: this terminal does not support colour"]
    assert _findings(sqlite_url, "run-failed", "run-outcome-disagrees") == []


def test_a_non_zero_exit_after_the_settlement_is_a_disagreement_the_owner_is_shown(
        sqlite_url: str, journal: Any, tmp_path: Path) -> None:
    runner = _runner(tmp_path, SETTLE + "echo 'cleanup: could not remove a temporary file' >&2\nexit 2\n")
    run, _err = _tick(sqlite_url, runner)
    assert (run["exit"], run["verdict"]) == (2, "unclear")
    [finding] = _findings(sqlite_url, "run-failed", "run-outcome-disagrees")
    assert finding["kind"] == "run-outcome-disagrees" and finding["severity"] == "warning"
    assert "exited 2" in finding["message"] and "settled" in finding["message"]


def test_a_runner_that_cannot_start_is_recorded_as_failed(sqlite_url: str, journal: Any, tmp_path: Path) -> None:
    run, _err = _tick(sqlite_url, str(tmp_path / "no-such-runner"))
    assert (run["exit"], run["verdict"]) == (None, "failed")
    [finding] = _findings(sqlite_url, "run-failed")
    assert "could not start" in finding["message"]


def test_a_log_past_its_bound_keeps_its_head_and_its_last_lines(tmp_path: Path) -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfor i in range(40000): print(f'line {i} ' + 'x' * 20)\n"
                               "print('error: the very last line', file=sys.stdout)"],
        stdout=subprocess.PIPE)
    assert writer.stdout is not None
    capture = OutputCapture(writer.stdout, tmp_path / "run.log")
    capture.start()
    writer.wait()
    output = capture.finish()
    text = (tmp_path / "run.log").read_text()
    assert output.cut and output.bytes > MAX_LOG_BYTES and output.lines == 40001
    assert text.startswith("line 0 ") and "more bytes were cut" in text and text.endswith("error: the very last line\n")
    assert len(text.encode()) < MAX_LOG_BYTES + 64 * 1024
    assert output.error_lines == ("error: the very last line",)


def test_a_runners_log_holds_each_line_while_the_runner_still_runs(tmp_path: Path) -> None:
    """`tail -f` on a running segment's log shows what the runner printed so far, line by line."""
    writer = subprocess.Popen(
        [sys.executable, "-c", "import sys\nprint('{\"run\": \"started\"}', flush=True)\nsys.stdin.read()"],
        stdout=subprocess.PIPE, stdin=subprocess.PIPE)
    assert writer.stdout is not None and writer.stdin is not None
    log = tmp_path / "run.log"
    capture = OutputCapture(writer.stdout, log)
    capture.start()
    try:
        for _ in range(500):  # the runner is still running: the line must reach the file, not a buffer
            if log.exists() and log.read_text() == '{"run": "started"}\n':
                break
            time.sleep(0.02)
        assert log.read_text() == '{"run": "started"}\n'
    finally:
        writer.stdin.close()
        writer.wait()
        capture.finish()
