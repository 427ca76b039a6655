"""Run one provider call as a process: stream its stdout to a parser, enforce its deadline and bound.

The provider runs in a process group of its own, inside its runner's session: stopping
the group stops everything it started, and whatever kills the runner never leaves the
call running unseen. On Linux the kernel kills the provider when the runner dies
(PR_SET_PDEATHSIG); on any host, what the provider started keeps the runner's session
or, for a tool started in a session of its own, the call mark in its environment
(provider_environment.CALL_MARK); health's probe counts both as the run's
(run_processes.run_processes), so a run is never reconciled while any of its call still
lives. When the call ends, whatever it left running ends with it: its group, and (Linux,
in a runner that adopts orphans) a tool that left the group for a session of its own
(providers/leftovers.py).

The prompt reaches the provider on stdin (a file, so a prompt of any size is written
before the provider starts and no option parser ever reads it). Its stdout is read
line by line, each line at most `MAX_LINE_BYTES` and the whole output at most
`MAX_OUTPUT_BYTES` (past either the provider is stopped and the call's effect is
unknown, so the runner's memory stays bounded whatever the provider prints), handed
to the parser and, when asked, copied byte for byte to a transcript file; its stderr
goes to a temporary file of which only the tail is kept, as data. Nothing the
provider prints reaches the owner's terminal.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from factory_schedule.tui.host.process_privacy import PR_SET_PDEATHSIG, linux_prctl
from factory_schedule.tui.host.provider_environment import marked
from factory_schedule.tui.host.providers.ending import ProcessEnd
from factory_schedule.tui.host.providers.leftovers import adopting, children, stop_adopted

STDERR_TAIL_BYTES = 2000
STOP_GRACE_SECONDS = 3.0
MAX_LINE_BYTES = 8 * 1024 * 1024     # one JSON event; the CLIs' largest (a tool's result) is far smaller
MAX_OUTPUT_BYTES = 64 * 1024 * 1024  # one call's whole stream
QUEUED_LINES = 64                    # lines read ahead of the parser: with the limits above, the memory bound


@dataclass(frozen=True)
class CallRun:
    end: ProcessEnd
    stderr_tail: str
    pid: int | None
    start_error: str | None = None


def _stop_leftovers(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL what is left of an ended provider's process group: a tool it left at work is the call's, and
    the call is over."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the provider's process group, then SIGKILL what is left after a grace period."""
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_SECONDS), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            process.wait(timeout=wait if wait is not None else 10)
            if sig == signal.SIGTERM:
                # The leader is gone; its group may not be: make sure.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
            return
        except subprocess.TimeoutExpired:
            continue


def dies_with_runner() -> Callable[[], None] | None:
    """What the provider's child process runs before exec on Linux: ask the kernel to SIGKILL it when the
    runner that started it dies, then exit at once if the runner died before the request took effect.
    None where there is no such request (macOS): health's session probe alone holds there.

    `prctl` is looked up here, in the runner, so the child between fork and exec only calls it (nothing
    there may import or allocate behind a lock another thread of the runner holds)."""
    prctl = linux_prctl()
    if prctl is None:
        return None
    runner = os.getpid()
    kill = int(signal.SIGKILL)

    def request() -> None:
        prctl(PR_SET_PDEATHSIG, kill, 0, 0, 0)
        if os.getppid() != runner:
            os._exit(125)

    return request


@dataclass(frozen=True)
class _Cut:
    """The reader stopped: the output passed a limit (why, in words)."""

    why: str


def _pump(stream: IO[bytes], lines: queue.Queue[bytes | _Cut | None], done: threading.Event) -> None:
    """Read at most `MAX_LINE_BYTES` of a line at a time and `MAX_OUTPUT_BYTES` in all; a line or an output
    past its limit is never read whole: the reader hands on why it stopped instead."""

    def hand_on(item: bytes | _Cut | None) -> bool:
        while not done.is_set():
            try:
                lines.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    total = 0
    try:
        while not done.is_set():
            line = stream.readline(MAX_LINE_BYTES + 1)
            if not line:
                break
            total += len(line)
            if len(line) > MAX_LINE_BYTES:
                hand_on(_Cut(f"a line of its output passed {MAX_LINE_BYTES} bytes"))
                return
            if total > MAX_OUTPUT_BYTES:
                hand_on(_Cut(f"its output passed {MAX_OUTPUT_BYTES} bytes"))
                return
            if not hand_on(line):
                return
    finally:
        hand_on(None)


def run_call(
    argv: Sequence[str],
    feed: Callable[[str], bool],
    timeout_seconds: float,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    transcript: Path | None = None,
    stdin_text: str | None = None,
) -> CallRun:
    """Run `argv` with `stdin_text` on its stdin, feeding each stdout line to `feed` until it ends, `feed`
    returns False, an output limit is passed, or the deadline passes."""
    deadline = time.monotonic() + timeout_seconds
    before = children() if adopting() else set()
    with tempfile.TemporaryFile() as stderr, tempfile.TemporaryFile() as stdin:
        if stdin_text is not None:
            stdin.write(stdin_text.encode("utf-8"))
            stdin.seek(0)
        try:
            process = subprocess.Popen(
                list(argv), stdin=stdin if stdin_text is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=stderr,
                cwd=cwd, env=marked(os.environ if env is None else env, os.getsid(0)), process_group=0,
                preexec_fn=dies_with_runner(),
            )
        except OSError as error:
            return CallRun(ProcessEnd(exit_code=None), "", None, start_error=f"{argv[0]}: {error.strerror}")
        assert process.stdout is not None
        lines: queue.Queue[bytes | _Cut | None] = queue.Queue(maxsize=QUEUED_LINES)
        done = threading.Event()
        reader = threading.Thread(target=_pump, args=(process.stdout, lines, done), daemon=True,
                                  name="provider stdout")
        reader.start()
        timed_out = stopped = False
        cut: str | None = None
        copy = transcript.open("ab", buffering=0) if transcript is not None else None
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                try:
                    line = lines.get(timeout=left)
                except queue.Empty:
                    timed_out = True
                    break
                if line is None:
                    break
                if isinstance(line, _Cut):
                    cut = line.why
                    break
                if copy is not None:
                    copy.write(line)
                if not feed(line.decode("utf-8", errors="replace")):
                    stopped = True
                    break
            if timed_out or stopped or cut is not None:
                _stop(process)
            else:
                try:
                    process.wait(timeout=max(deadline - time.monotonic(), 0.1))
                    _stop_leftovers(process)
                except subprocess.TimeoutExpired:
                    timed_out = True
                    _stop(process)
        except BaseException:
            # A Ctrl-C (or any error) in the runner ends its call with it: the provider's group never hears
            # the runner's terminal, so only the runner can stop it, and a call left running is a paid call
            # nobody watches.
            _stop(process)
            raise
        finally:
            done.set()
            stop_adopted(before | {process.pid})
            if copy is not None:
                copy.close()
        reader.join(timeout=5)
        code = process.wait()
        stderr.seek(0, os.SEEK_END)
        size = stderr.tell()
        stderr.seek(max(size - STDERR_TAIL_BYTES, 0))
        tail = stderr.read().decode("utf-8", errors="replace")
    exit_code = code if code >= 0 and not timed_out else None
    if stopped or cut is not None:
        exit_code = code if code >= 0 else None
    return CallRun(ProcessEnd(exit_code=exit_code, timed_out=timed_out, stopped=stopped, cut=cut), tail,
                   process.pid)
