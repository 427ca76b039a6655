"""A journal that stops answering is shown to the owner, and `q` still ends the dashboard.

A PostgreSQL journal behind a dead network link, or a server that stopped answering, leaves a reading waiting
for minutes. The dashboard reads off its UI thread, so the screen still answers; quitting must too, and
must give the terminal back: an owner whose `q` does nothing closes the terminal, and with it whatever else
ran there. Until then the screen keeps its last reading, so the owner is told the journal has not answered.
The server's backends for the test's own database are stopped with SIGSTOP, which is how a link that drops
every packet looks from the client: the connection stays open and nothing comes back.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from factory_schedule.tui.dashboard.app import JOURNAL_QUIET_SECONDS
from tests.conftest import connect_postgres
from tests.tui.dashboard.terminal_support import read_terminal
from tests.tui.runner_support import CLI, cli_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")

QUIT_WITHIN = 10.0  # seconds; the dashboard's own shutdown takes well under one


@contextlib.contextmanager
def _stopped_backends(url: str) -> Iterator[list[int]]:
    """Every server process serving the database `url` names, stopped (SIGSTOP) until the block ends."""
    database = url.rsplit("/", 1)[1].split("?", 1)[0]
    with connect_postgres(url.rsplit("/", 1)[0] + "/postgres") as admin:
        pids = [row[0] for row in admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (database,))]
    stopped = []
    try:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
            except PermissionError:
                pytest.skip("the PostgreSQL server runs as a user this test cannot signal")
            stopped.append(pid)
        yield stopped
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


@pytest.mark.postgres
def test_a_journal_that_stops_answering_is_shown_and_quitting_still_ends_the_dashboard(postgres_url: str,
                                                                                      tmp_path: Path) -> None:
    master, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = cli_env(postgres_url, TERM="xterm-256color", HOME=str(tmp_path))
    dashboard = subprocess.Popen([*CLI, "dashboard", "--poll", "0.2"], stdin=terminal, stdout=terminal,
                                 stderr=terminal, env=env, start_new_session=True)
    os.close(terminal)
    shown = b""
    try:
        started = time.monotonic()
        while b"schedule v0" not in shown and time.monotonic() - started < 60:
            shown += read_terminal(master, 0.2)
        assert b"schedule v0" in shown, shown[-2000:]
        with _stopped_backends(postgres_url) as stopped:
            assert stopped, "the dashboard holds no connection to its journal"
            shown += read_terminal(master, JOURNAL_QUIET_SECONDS + 2)  # the next poll starts and waits for the server
            assert dashboard.poll() is None
            assert b"has not answered" in shown, "the owner was not told that the journal stopped answering"
            os.write(master, b"q")
            asked = time.monotonic()
            while dashboard.poll() is None and time.monotonic() - asked < QUIT_WITHIN:
                shown += read_terminal(master, 0.1)
            assert dashboard.poll() == 0, f"q left the dashboard running for {QUIT_WITHIN} s while a reading hung"
        shown += read_terminal(master, 0.5)
        assert b"\x1b[?1049l" in shown, "the terminal's normal screen was not given back"  # leaves the alternate
    finally:
        if dashboard.poll() is None:
            dashboard.kill()
        dashboard.wait()
        os.close(master)
