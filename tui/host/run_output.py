"""A runner's output, captured: a bounded log file per run under the state folder, and the facts health judges.

A night's output must not go wherever launchd sends the tick's stderr, nor be ignored by the verdict: each
runner's stdout and stderr go to one pipe that a thread drains into
`<journal file>.runs/<occurrence>.<segment>.<runner>.log` (for a server journal, under the user data
folder): owner-only, the first `MAX_LOG_BYTES` kept and, past them, a marker and the last lines. Nothing of
it reaches a terminal raw; the tick's JSON line and health show only the first error and warning lines,
escaped by the one printable rule (tui/terminal_text.py).

When the runner's process ends, its exit status and those lines are recorded in the journal (`run-recorded`
on the `health/runs` aggregate, whose state keeps the latest `KEPT_RUNS`), so `health` on any later run can
judge it with core.health.run_outcome against the schedule's own record of the segment.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from factory_schedule.core.health import RUNS_AGGREGATE, RunFact, classify_line, kept_run
from factory_schedule.store import Journal
from factory_schedule.tui.host.health_records import append_once
from factory_schedule.tui.host.paths import beside_journal
from factory_schedule.tui.terminal_text import printable

MAX_LOG_BYTES = 256 * 1024
TAIL_LINES = 40  # kept in memory, written after the cut marker when the log outgrows MAX_LOG_BYTES
KEPT_LINES = 5  # error and warning lines recorded in the journal, each
MAX_LINE_CHARS = 200
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def log_folder(journal_url: str) -> Path:
    """Beside a SQLite journal (`<file>.runs`); for a server journal, `runs-<digest>` in the user data folder."""
    return beside_journal(journal_url, ".runs", "runs")


def log_path(folder: Path, occurrence: str, segment: int, runner: str) -> Path:
    name = _UNSAFE_NAME.sub("_", f"{occurrence}.{segment}.{runner}")[:200]
    return folder / f"{name}.log"


def _line(text: str) -> str:
    shown = printable(text.strip())
    return shown if len(shown) <= MAX_LINE_CHARS else shown[: MAX_LINE_CHARS - 1] + "…"


@dataclass(frozen=True)
class RunOutput:
    """What a runner printed, as the tick reports it: where its log is, how much it wrote, and its first
    error and warning lines (escaped) with their counts."""

    log: str | None
    bytes: int
    cut: bool
    lines: int  # non-blank lines
    errors: int
    warnings: int
    error_lines: tuple[str, ...] = ()
    warning_lines: tuple[str, ...] = ()


@dataclass
class _Tally:
    total: int = 0
    written: int = 0
    lines: int = 0
    errors: int = 0
    warnings: int = 0
    error_lines: list[str] = field(default_factory=list)
    warning_lines: list[str] = field(default_factory=list)
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))

    def line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", errors="replace")[:4096]
        if not text.strip():
            return
        self.lines += 1
        self.tail.append(text.rstrip("\n"))
        kind = classify_line(text)
        if kind == "error":
            self.errors += 1
            if len(self.error_lines) < KEPT_LINES:
                self.error_lines.append(_line(text))
        elif kind == "warning":
            self.warnings += 1
            if len(self.warning_lines) < KEPT_LINES:
                self.warning_lines.append(_line(text))


class OutputCapture(threading.Thread):
    """Drains a runner's output pipe into its bounded log file, tallying error and warning lines."""

    def __init__(self, stream: IO[bytes], path: Path | None) -> None:
        super().__init__(name=f"output {path}", daemon=True)
        self.stream = stream
        self.path = path
        self.tally = _Tally()
        self.problem: str | None = None

    def _open(self) -> IO[bytes] | None:
        if self.path is None:
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            return os.fdopen(handle, "wb", buffering=0)  # each chunk reaches the file as read: `tail -f` sees it
        except OSError as error:
            self.problem = f"cannot write {self.path}: {error.strerror}"
            return None

    def run(self) -> None:
        log = self._open()
        pending = b""
        tally = self.tally
        try:
            while chunk := self.stream.read1(65536):  # type: ignore[attr-defined]
                tally.total += len(chunk)
                if log is not None and tally.written < MAX_LOG_BYTES:
                    kept = chunk[: MAX_LOG_BYTES - tally.written]
                    log.write(kept)
                    tally.written += len(kept)
                pending += chunk
                *complete, pending = pending.split(b"\n")
                for raw in complete:
                    tally.line(raw)
                pending = pending[-65536:]  # a line without end is judged by its last 64 KiB
            tally.line(pending)
            if log is not None and tally.total > tally.written:
                log.write(f"\n[factory-schedule: {tally.total - tally.written} more bytes were cut; the last "
                          f"{len(tally.tail)} lines follow]\n".encode())
                log.write(("\n".join(tally.tail) + "\n").encode("utf-8", errors="replace"))
        except OSError as error:
            self.problem = f"reading the runner's output: {error.strerror}"
        finally:
            if log is not None:
                log.close()
            self.stream.close()

    def finish(self, timeout: float = 10) -> RunOutput:
        """The output once the pipe closed (every process holding it exited), or as far as read by `timeout`
        (a runner may leave a process behind that keeps the pipe open)."""
        self.join(timeout)
        tally = self.tally
        return RunOutput(str(self.path) if self.path is not None and self.problem is None else None, tally.total,
                         tally.total > tally.written, tally.lines, tally.errors, tally.warnings,
                         tuple(tally.error_lines), tuple(tally.warning_lines))


def not_started(detail: str) -> RunOutput:
    """A runner that could not be started printed nothing; why it could not is its one error line."""
    return RunOutput(None, 0, False, 1, 1, 0, (_line(f"error: {detail}"),), ())


def run_record(occurrence: str, segment: int, runner: str, lane: str, exit_code: int | None, output: RunOutput,
               host: str, now: datetime) -> dict[str, Any]:
    """The journal event's data (canonical JSON: no floats)."""
    return {"occurrence": occurrence, "segment": segment, "runner": runner, "lane": lane, "exit": exit_code,
            "errors": output.errors, "warnings": output.warnings, "lines": output.lines, "bytes": output.bytes,
            "errorLines": list(output.error_lines), "warningLines": list(output.warning_lines),
            "log": output.log, "host": host, "finishedAt": now.isoformat()}


def record_run(journal: Journal, record: dict[str, Any]) -> str:
    """Append the run's record to `health/runs` once (its command ID names the occurrence, segment and runner);
    the aggregate's state keeps the latest KEPT_RUNS for health to read in one row."""
    command_id = f"health/run/{record['occurrence']}/{record['segment']}/{record['runner']}"
    append_once(journal, RUNS_AGGREGATE, command_id, record, kept_run(record, command_id))
    return command_id  # recorded now or before: the first record of this run stands


def recorded_runs(journal: Journal) -> tuple[RunFact, ...]:
    """The latest recorded runs as health's facts; a record that does not read is skipped."""
    _version, text = journal.load_text(RUNS_AGGREGATE)
    if text is None:
        return ()
    document = json.loads(text)
    facts = []
    for run in document.get("runs", []) if isinstance(document, dict) else []:
        try:
            facts.append(RunFact(
                occurrence=str(run["occurrence"]), segment=int(run["segment"]), runner=str(run["runner"]),
                lane=str(run["lane"]), exit=run["exit"] if isinstance(run["exit"], int) else None,
                error_lines=tuple(str(line) for line in run["errorLines"]),
                warning_lines=tuple(str(line) for line in run["warningLines"]), errors=int(run["errors"]),
                warnings=int(run["warnings"]), lines=int(run["lines"]),
                log=run["log"] if isinstance(run["log"], str) else None,
                host=run["host"] if isinstance(run["host"], str) else None,
                finished_at=datetime.fromisoformat(run["finishedAt"])))
        except (KeyError, TypeError, ValueError):
            continue
    return tuple(facts)
