"""A warning alone is never a failure: a line the runner marks as a warning stays a
warning when it mentions what failed ("warning: ... failed, retrying"), so a run that exited non-zero before
its segment's record, having printed only warnings, is a disagreement the owner looks at, never `run-failed`.
The lines come through the tick's real output capture, from a real process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from factory_schedule.core.health import classify_line, output_signal, run_outcome
from factory_schedule.tui.host.run_output import OutputCapture

WARNINGS = (
    "warning: the cache server could not be reached (connection failed); continuing without it",
    "WARN retry 1 of 3 failed, trying again",
    "npm warn deprecated glob@7.2.3: this version has errors fixed in v9",
)


@pytest.mark.parametrize("line", WARNINGS)
def test_a_line_marked_as_a_warning_is_a_warning_whatever_it_mentions(line: str) -> None:
    assert classify_line(line) == "warning"


def test_an_error_line_that_mentions_a_warning_is_still_an_error() -> None:
    assert classify_line("error: warnings are treated as errors") == "error"
    assert classify_line("Traceback (most recent call last): DeprecationWarning") == "error"


def test_a_run_that_printed_only_warnings_is_never_called_failed(tmp_path: Path) -> None:
    script = "\n".join(f"echo '{line}' >&2" for line in WARNINGS) + "\nexit 3\n"
    process = subprocess.Popen(["/bin/sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    capture = OutputCapture(process.stdout, tmp_path / "run.log")
    capture.start()
    exit_code = process.wait()
    output = capture.finish()
    assert (output.errors, output.warnings) == (0, len(WARNINGS))
    outcome = run_outcome(exit_code, output_signal(output.errors, output.lines), "running")
    assert outcome.verdict == "disagrees", outcome.reason
