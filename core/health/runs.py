"""Scheduled runs: failed only when exit status, output and the expected record agree.

The shell classifies each line of a runner's output as it reads it (`classify_line`); the tick records the
run's exit and output; health judges it against the schedule's own record of its segment."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from factory_schedule.core.results import ScheduleView

from .report import Finding

LineKind = Literal["error", "warning"]
OutputSignal = Literal["error", "silent", "ordinary"]
SegmentRecord = Literal["deferred", "settled", "reconciled", "running"]
RunVerdict = Literal["ok", "failed", "disagrees"]
RUN_FINDING_DAYS = 7  # a recorded run's failure or disagreement is reported for a week, or until its next run
_ERROR_LINE = re.compile(r"\b(error|errors|fatal|traceback|exception|panic|failed|failure)\b", re.IGNORECASE)
_WARNING_LINE = re.compile(r"\b(warn|warning|warnings|deprecated)\b", re.IGNORECASE)
# A count of none ("0 errors", "no failures", "zero warnings") reports that nothing went wrong: not a marker.
_NONE_COUNTED = re.compile(r"\b(?:0|no|zero)\s+(?:errors?|failures?|warnings?|exceptions?)\b", re.IGNORECASE)


def classify_line(line: str) -> LineKind | None:
    """Whether a line of a runner's output reports an error, only a warning, or neither: the first marker
    decides, so "warning: the retry failed" is a warning and "error: warnings are errors" an error; a count of
    none ("0 errors", "no failures") is no marker at all."""
    line = _NONE_COUNTED.sub(" ", line)
    error = _ERROR_LINE.search(line)
    warning = _WARNING_LINE.search(line)
    if error is not None and (warning is None or error.start() < warning.start()):
        return "error"
    return "warning" if warning is not None else None


def output_signal(error_lines: int, lines: int) -> OutputSignal:
    """What a run's output says: `error` (a line reports one), `silent` (nothing at all: a crash without words
    says nothing against failure) or `ordinary` (it spoke, with no error; warnings are ordinary)."""
    if error_lines:
        return "error"
    return "silent" if lines == 0 else "ordinary"


@dataclass(frozen=True)
class RunOutcome:
    verdict: RunVerdict
    reason: str


def run_outcome(exit_code: int | None, signal: OutputSignal, record: SegmentRecord) -> RunOutcome:
    """A scheduled run failed only when its exit status, its output and its expected record agree: a non-zero
    exit (or none: it could not start), output with an error line or none at all, and no deferral or
    settlement of its segment. It succeeded when it exited 0 with no error line and its segment has its
    record; a warning alone is neither. Anything else is a disagreement, which names its signals."""
    exit_words = "could not start" if exit_code is None else f"exited {exit_code}"
    output_words = {"error": "its output reports an error", "silent": "it printed nothing",
                    "ordinary": "its output reports no error"}[signal]
    recorded = record in ("deferred", "settled")
    record_words = f"its segment was {record}" if recorded else (
        "its segment has no deferral or settlement" + (" (a supervisor reconciled it)" if record == "reconciled"
                                                        else ""))
    words = f"it {exit_words}, {output_words}, and {record_words}"
    if recorded and exit_code == 0 and signal != "error":
        return RunOutcome("ok", words)
    if not recorded and exit_code != 0 and signal != "ordinary":
        return RunOutcome("failed", words)
    return RunOutcome("disagrees", words)


@dataclass(frozen=True)
class RunFact:
    """What the tick recorded when a runner's process ended: its exit status (None: it could not start), the
    first error and warning lines of its output (escaped) with their counts, and where its bounded log is."""

    occurrence: str
    segment: int
    runner: str
    lane: str
    exit: int | None
    error_lines: tuple[str, ...]
    warning_lines: tuple[str, ...]
    errors: int
    warnings: int
    lines: int
    log: str | None
    host: str | None
    finished_at: datetime


def segment_record(view: ScheduleView, occurrence_id: str, segment: int) -> SegmentRecord | None:
    """How the schedule recorded a segment's end (`running` while it has none); None when the journal's
    schedule no longer holds that occurrence or segment."""
    for occurrence in view.occurrences:
        if occurrence.id == occurrence_id:
            for kept in occurrence.segments:
                if kept.n == segment:
                    return kept.ended.how if kept.ended is not None else "running"
    return None


def run_findings(view: ScheduleView, runs: Sequence[RunFact], now: datetime) -> list[Finding]:
    """The latest recorded run of each occurrence, of the last `RUN_FINDING_DAYS`: `run-failed` when its exit
    status, output and the schedule's record agree that it failed; `run-outcome-disagrees` when they do not
    agree either way (the owner looks: the log is named)."""
    latest: dict[str, RunFact] = {}
    for run in runs:
        if now - run.finished_at > timedelta(days=RUN_FINDING_DAYS):
            continue
        kept = latest.get(run.occurrence)
        if kept is None or (run.segment, run.finished_at) >= (kept.segment, kept.finished_at):
            latest[run.occurrence] = run
    findings = []
    for run in latest.values():
        record = segment_record(view, run.occurrence, run.segment)
        if record is None:
            continue
        outcome = run_outcome(run.exit, output_signal(run.errors, run.lines), record)
        if outcome.verdict == "ok":
            continue
        evidence: dict[str, Any] = {"occurrence": run.occurrence, "segment": run.segment, "runner": run.runner,
                                    "lane": run.lane, "exit": run.exit, "record": record, "log": run.log,
                                    "host": run.host, "error_lines": list(run.error_lines),
                                    "warning_lines": list(run.warning_lines)}
        where = f" (log: {run.log})" if run.log else ""
        if outcome.verdict == "failed":
            findings.append(Finding("run-failed", "error",
                                    f"{run.occurrence} segment {run.segment} failed: {outcome.reason}{where}",
                                    evidence))
        else:
            findings.append(Finding("run-outcome-disagrees", "warning",
                                    f"{run.occurrence} segment {run.segment}: its signals disagree, so it is not "
                                    f"called failed: {outcome.reason}{where}", evidence))
    return findings


