"""A journal that stops answering is shown to the owner, and quitting still ends the dashboard.

A PostgreSQL journal behind a dead network link, or a server that stopped answering, leaves a reading waiting
for minutes. The dashboard reads and writes off its UI thread, so the screen still answers; quitting must too, and
must give the terminal back: an owner whose `q` does nothing closes the terminal, and with it whatever else
ran there. Until then the screen keeps its last reading, so the owner is told the journal has not answered.
The server's backends for the test's own database are stopped with SIGSTOP, which is how a link that drops
every packet looks from the client: the connection stays open and nothing comes back.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from factory_schedule.tui.dashboard.daemon_thread import JOURNAL_QUIET_SECONDS
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


class TerminalDashboard:
    """`factory-schedule dashboard` on a pseudo-terminal of 120x40, as a real process: what it has drawn so far,
    and the keys typed into it."""

    def __init__(self, journal_url: str, home: Path) -> None:
        self.master, terminal = os.openpty()
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        env = cli_env(journal_url, TERM="xterm-256color", HOME=str(home))
        self.process = subprocess.Popen([*CLI, "dashboard", "--poll", "0.2"], stdin=terminal, stdout=terminal,
                                        stderr=terminal, env=env, start_new_session=True)
        os.close(terminal)
        self.shown = b""

    def wait_for(self, text: bytes, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while text not in self.shown and time.monotonic() < deadline:
            self.shown += read_terminal(self.master, 0.1)
        assert text in self.shown, self.shown[-2000:]

    def type(self, *keys: bytes) -> None:
        """Type each key, and read what the screen drew after it (with no key: what it drew so far)."""
        for key in keys:
            os.write(self.master, key)
            self.shown += read_terminal(self.master, 0.3)
        self.shown += read_terminal(self.master, 0.3)

    def quiet_seconds_shown(self) -> int:
        """How long the header last said the journal has not answered."""
        said = re.findall(rb"has not answered for (\d+) s", self.shown)
        assert said, self.shown[-2000:]
        return int(said[-1])

    def quit_with(self, key: bytes) -> int | None:
        """Type `key` and wait up to QUIT_WITHIN seconds for the process to end: its exit code, or None."""
        os.write(self.master, key)
        asked = time.monotonic()
        while self.process.poll() is None and time.monotonic() - asked < QUIT_WITHIN:
            self.shown += read_terminal(self.master, 0.1)
        self.shown += read_terminal(self.master, 0.5)
        return self.process.poll()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        os.close(self.master)


@pytest.fixture
def terminal_dashboard(postgres_url: str, tmp_path: Path) -> Iterator[TerminalDashboard]:
    dashboard = TerminalDashboard(postgres_url, tmp_path)
    try:
        yield dashboard
    finally:
        dashboard.close()


NORMAL_SCREEN = b"\x1b[?1049l"  # what leaving the alternate screen writes: the terminal is given back


@pytest.mark.postgres
def test_a_journal_that_stops_answering_is_shown_counting_on_and_quitting_still_ends_the_dashboard(
        postgres_url: str, terminal_dashboard: TerminalDashboard) -> None:
    dashboard = terminal_dashboard
    dashboard.wait_for(b"schedule v0")
    with _stopped_backends(postgres_url) as stopped:
        assert stopped, "the dashboard holds no connection to its journal"
        dashboard.wait_for(b"has not answered", JOURNAL_QUIET_SECONDS + 3)  # the next poll waits for the server
        assert dashboard.process.poll() is None
        # A form opened and closed reads again; that read waits for the one in flight, and the count goes on.
        before = dashboard.quiet_seconds_shown()
        dashboard.type(b"s")
        dashboard.wait_for(b"Record a sign-in record")
        dashboard.type(b"\x1b")
        time.sleep(JOURNAL_QUIET_SECONDS + 1)
        dashboard.type()
        assert dashboard.quiet_seconds_shown() >= before + JOURNAL_QUIET_SECONDS, dashboard.shown[-2000:]
        assert dashboard.quit_with(b"q") == 0, f"q left the dashboard running for {QUIT_WITHIN} s while a read hung"
    assert NORMAL_SCREEN in dashboard.shown, "the terminal's normal screen was not given back"


@pytest.mark.postgres
def test_a_form_whose_write_hangs_leaves_the_screen_answering_and_ctrl_q_ends_the_dashboard(
        postgres_url: str, tmp_path: Path, terminal_dashboard: TerminalDashboard) -> None:
    made = subprocess.run([*CLI, "commission", "new", "--products", "alpha", "--weekly-tokens", "40000000"],
                          capture_output=True, text=True, env=cli_env(postgres_url), timeout=60, check=True)
    (tmp_path / "commission.json").write_text(made.stdout)
    subprocess.run([*CLI, "record-commission", str(tmp_path / "commission.json")], capture_output=True,
                   env=cli_env(postgres_url), timeout=60, check=True)
    dashboard = terminal_dashboard
    dashboard.wait_for(b"schedule v1")
    dashboard.type(b"s")
    dashboard.wait_for(b"Record a sign-in record")
    dashboard.type(b"owner@example.com", b"\t", b"\t", b"owner", b"\r")  # sign-in, sequence 1, recorded by
    dashboard.wait_for(b"Back (Esc)")  # the confirm step
    with _stopped_backends(postgres_url) as stopped:
        assert stopped, "the dashboard holds no connection to its journal"
        dashboard.type(b"\r")  # Record: the write waits for the server
        dashboard.wait_for(b"has not answered", JOURNAL_QUIET_SECONDS + 3)
        assert dashboard.process.poll() is None
        # In a form, q is typed into its field; Ctrl+Q quits everywhere.
        assert dashboard.quit_with(b"\x11") == 0, (
            f"Ctrl+Q left the dashboard running for {QUIT_WITHIN} s while a form's write hung")
    assert NORMAL_SCREEN in dashboard.shown, "the terminal's normal screen was not given back"
