"""`factory-schedule dashboard` before its screen: a journal that does not answer at start-up is said, not silent.

Opening a PostgreSQL journal waits for the server (up to its connect timeout, 10 s) before the dashboard can
draw anything. A terminal that shows nothing for that long looks hung, so after a second the command says which
journal it is waiting for and that Ctrl+C stops. The server here is a real listening socket that accepts the
connection and never answers, as a server behind a dead link or a stopped one does.
"""

from __future__ import annotations

import os
import selectors
import signal
import socket
import subprocess
import time

import pytest

from factory_schedule.store.postgres import CONNECT_TIMEOUT_S
from factory_schedule.tui.cli.dashboard import OPENING_NOTICE_SECONDS, _say_still_opening
from tests.tui.runner_support import CLI, cli_env


def _stderr_until(process: subprocess.Popen[bytes], text: bytes, seconds: float) -> tuple[bytes, float]:
    """What the process wrote to stderr until `text` appeared (or `seconds` passed), and when it appeared."""
    assert process.stderr is not None
    said, started = b"", time.monotonic()
    with selectors.DefaultSelector() as selector:
        selector.register(process.stderr, selectors.EVENT_READ)
        while text not in said and time.monotonic() - started < seconds:
            if selector.select(timeout=0.1):
                chunk = os.read(process.stderr.fileno(), 4096)
                if not chunk:
                    break
                said += chunk
    return said, time.monotonic() - started


def test_a_journal_that_does_not_answer_at_start_is_named_after_a_second_and_ctrl_c_stops_waiting() -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # connections complete in the backlog, never answered
        port = silent.getsockname()[1]
        url = f"postgresql+psycopg://owner:secret@127.0.0.1:{port}/factory"
        process = subprocess.Popen([*CLI, "dashboard"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=cli_env(url), start_new_session=True)
        try:
            said, after = _stderr_until(process, b"Ctrl+C", CONNECT_TIMEOUT_S - 2)
            assert b"Ctrl+C" in said, said
            text = said.decode()
            assert text.startswith(f"factory-schedule: still opening the journal postgresql+psycopg://owner:***@"
                                   f"127.0.0.1:{port}/factory after {OPENING_NOTICE_SECONDS:.0f} s"), text
            assert "secret" not in text
            assert process.poll() is None and after < CONNECT_TIMEOUT_S  # still waiting, said well before giving up
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=5) == 130
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def test_the_notice_promises_ctrl_c_only_for_a_server(capsys: pytest.CaptureFixture[str]) -> None:
    """SQLite's busy wait on a file another process has locked ends only when SQLite gives up, not at Ctrl+C."""
    _say_still_opening("sqlite:////srv/factory/journal.db")
    _say_still_opening("postgresql+psycopg://owner:secret@db.local/factory")
    local, server = capsys.readouterr().err.splitlines()
    assert local == "factory-schedule: still opening the journal sqlite:////srv/factory/journal.db after 1 s"
    assert server == ("factory-schedule: still opening the journal postgresql+psycopg://owner:***@db.local/factory "
                      "after 1 s (Ctrl+C stops waiting)")
