"""A scheduled run counts as failed only when its exit status, its output and its segment's record agree; a
warning alone is no failure, and any disagreement is named, never called a failure. Pure rules."""

from __future__ import annotations

from datetime import timedelta

import pytest

from factory_schedule.core.health import RunFact, classify_line, output_signal, run_findings, run_outcome

from .test_health_rules import NOW, OCCURRENCE, _running, _view


@pytest.mark.parametrize(("line", "kind"), [
    ("error: the provider refused the call", "error"), ("Traceback (most recent call last):", "error"),
    ("FATAL could not open the journal", "error"), ("warning: --foo is deprecated", "warning"),
    ("WARN terminal does not support colour", "warning"), ("scanned 12 files", None), ("", None),
    ("checked 40 files: 0 errors", None), ("No errors, no warnings.", None), ("found 0 errors, 2 warnings", "warning"),
    ("zero failures; error: the report was cut", "error"),
])
def test_a_line_of_output_reports_an_error_a_warning_or_neither(line: str, kind: str | None) -> None:
    assert classify_line(line) == kind


@pytest.mark.parametrize(("exit_code", "signal", "record", "verdict"), [
    (3, "error", "running", "failed"),  # non-zero exit, an error line, no settlement: they agree
    (3, "silent", "running", "failed"),  # a crash without a word says nothing against it
    (None, "error", "running", "failed"),  # could not start
    (1, "error", "reconciled", "failed"),  # a supervisor ended it: still no record of its own
    (0, "ordinary", "settled", "ok"),  # a warning on stderr with the settlement present is no failure
    (0, "silent", "deferred", "ok"),
    (2, "ordinary", "settled", "disagrees"),  # a non-zero exit alone is a host warning
    (0, "error", "settled", "disagrees"),
    (0, "silent", "running", "disagrees"),  # exit 0 leaving its segment with no record
    (1, "ordinary", "running", "disagrees"),  # it spoke, with no error
])
def test_a_run_is_failed_only_when_exit_output_and_record_agree(exit_code, signal, record, verdict) -> None:
    outcome = run_outcome(exit_code, signal, record)
    assert outcome.verdict == verdict
    assert (record if record != "running" else "no deferral or settlement") in outcome.reason


def test_warnings_alone_leave_the_output_ordinary() -> None:
    assert output_signal(0, 4) == "ordinary" and output_signal(1, 4) == "error" and output_signal(0, 0) == "silent"


def _run(exit_code: int | None, errors: int = 1, lines: int = 1, segment: int = 1, ago: timedelta = timedelta(0),
         occurrence: str = OCCURRENCE) -> RunFact:
    return RunFact(occurrence=occurrence, segment=segment, runner="r-1", lane="alpha/basic", exit=exit_code,
                   error_lines=("error: refused",) * min(errors, 1), warning_lines=(), errors=errors, warnings=0,
                   lines=lines, log="/tmp/x.log", host="this-mac", finished_at=NOW - ago)


def test_a_recorded_failed_run_is_an_error_finding_naming_its_log_and_first_error() -> None:
    [finding] = run_findings(_view(_running()), [_run(3)], NOW)
    assert (finding.kind, finding.severity) == ("run-failed", "error")
    assert finding.evidence["error_lines"] == ["error: refused"] and "/tmp/x.log" in finding.message


def test_a_disagreement_is_a_warning_naming_the_signals_never_a_failure() -> None:
    [finding] = run_findings(_view(_running()), [_run(0, errors=0, lines=0)], NOW)
    assert (finding.kind, finding.severity) == ("run-outcome-disagrees", "warning")
    assert "exited 0" in finding.message and "no deferral or settlement" in finding.message


def test_only_each_occurrences_latest_recent_run_is_judged() -> None:
    view = _view(_running())
    assert run_findings(view, [_run(3, ago=timedelta(days=8))], NOW) == []
    assert run_findings(view, [_run(3, occurrence="discovery/alpha/basic/2026-01-01")], NOW) == []  # not held
    assert len(run_findings(view, [_run(3, ago=timedelta(hours=2)), _run(3)], NOW)) == 1
