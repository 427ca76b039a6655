"""A run's processes are those of its runner's session and those carrying its call mark, whatever session they
left for; a process of the same user that carries another run's mark, or is a zombie, is not the run's.

Real processes: a stand-in runner leading a session of its own, and a tool started detached (setsid) with the
environment the runner gives its calls, as Claude Code's shell tool starts each command.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from factory_schedule.tui.host.provider_environment import call_mark, marked
from factory_schedule.tui.host.run_processes import carrying_in_ps, run_processes
from tests.tui.runner_support import wait_for

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def _start(session_of_its_own: bool, environment: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(SLEEPER, start_new_session=session_of_its_own, env=environment,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _end(*processes: subprocess.Popen[bytes]) -> None:
    for process in processes:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the /proc process table (Linux)")
def test_a_detached_tool_carrying_the_call_mark_is_the_runs_until_it_ends() -> None:
    runner = _start(session_of_its_own=True)
    session = runner.pid
    tool = _start(session_of_its_own=True, environment=marked(os.environ, session))
    other = _start(session_of_its_own=True, environment=marked(os.environ, session * 10))  # another run's mark
    try:
        wait_for(lambda: run_processes(session) == sorted([runner.pid, tool.pid]), timeout=30,
                 what="the runner and its detached tool")
        _end(runner)
        assert run_processes(session) == [tool.pid]  # the runner is gone; its call's tool still works
        _end(tool)
        assert run_processes(session) == []
        assert run_processes(other.pid) == [other.pid]  # its own session only: the mark names another run
    finally:
        _end(runner, tool, other)


def test_no_session_names_no_process() -> None:
    for session in (None, 0, -1, True, "12"):
        assert run_processes(session) == []


def test_macos_ps_lines_count_only_a_live_process_carrying_the_exact_mark() -> None:
    mark = call_mark(812)
    listing = "\n".join([
        f"  501 S    /bin/sleep 600 PATH=/usr/bin HOME=/Users/owner {mark}",
        f"  502 Z    (sleep) {mark}",                                     # a zombie does no work
        "  503 S    /bin/sleep 600 SCHEDULED_CALL_SESSION=8120 HOME=/Users/owner",  # another run
        f"  504 Ss   /usr/bin/python3 -c x {mark} TERM=xterm",
        "  505 S    /bin/echo SCHEDULED_CALL_SESSION=812x",
        "garbage line",
    ])
    assert carrying_in_ps(listing, mark) == [501, 504]
