"""Where the shell may show a PostgreSQL journal's password: nowhere but the launch agent only its owner reads.

The command line's refusals, `health`, the demo, the launch agent's command line and a detached tick
keeper's command line all hold the journal URL; none of them may print or expose its password. A
PostgreSQL URL that nothing answers (port 1 of the loopback) is enough to see what a refusal prints.
"""

from __future__ import annotations

import json
import os
import plistlib
import signal
import socket
import stat
import sys
import time
from pathlib import Path

import pytest

from factory_schedule.tui.cli import main as cli
from factory_schedule.tui.host import health
from tests.core.schedule.support import commission
from tests.tui.runner_support import commission_file

SECRET = "s3cret-word"
# Nothing listens on port 1 of the loopback: opening fails at once, after the URL has been parsed.
UNREACHABLE = f"postgresql+psycopg://owner:{SECRET}@127.0.0.1:1/journal"


def test_health_that_cannot_open_the_journal_prints_no_password(capsys):
    assert cli.main(["--journal", UNREACHABLE, "health", "--json"]) == health.COULD_NOT_CHECK
    out = capsys.readouterr().out
    assert json.loads(out)["healthy"] is False and SECRET not in out


def test_a_url_that_does_not_parse_is_refused_without_its_password(capsys):
    typo = f"postgresql+psycopg//owner:{SECRET}@127.0.0.1:1/journal"
    assert cli.main(["--journal", typo, "status", "discovery/alpha/basic/2026-12-07"]) == 3
    out = capsys.readouterr().out
    assert json.loads(out)["error"] == "JOURNAL" and SECRET not in out


def test_a_url_with_a_bad_port_is_refused_in_one_line_and_health_says_it_could_not_check(capsys):
    bad_port = f"postgresql+psycopg://owner:{SECRET}@127.0.0.1:5432x/journal"
    assert cli.main(["--journal", bad_port, "health", "--json"]) == health.COULD_NOT_CHECK
    out = capsys.readouterr().out
    assert json.loads(out)["healthy"] is False and SECRET not in out


def test_the_demo_never_prints_the_journal_password(capsys):
    assert cli.main(["demo", "--journal", UNREACHABLE, "--build-only"]) == 2
    captured = capsys.readouterr()
    assert "***" in captured.err  # the refusal itself is masked ...
    assert SECRET not in captured.err + captured.out  # ... but the line before it is not


def _install_plist(tmp_path: Path, url: str) -> Path:
    recorded = commission_file(tmp_path, commission())
    output = tmp_path / "agent.plist"
    old = os.umask(0o022)  # the usual umask of a Mac user
    try:
        code = cli.main(["--journal", url, "launchd", "install", "--commission", str(recorded),
                         "--host-zone", "Europe/London", "--output", str(output), "--", "/bin/true"])
    finally:
        os.umask(old)
    assert code == 0
    return output


def test_a_launch_agent_carrying_a_journal_password_is_readable_only_by_its_owner(tmp_path):
    output = _install_plist(tmp_path, UNREACHABLE)
    assert SECRET in output.read_text()  # launchd needs it somewhere ...
    assert stat.S_IMODE(output.stat().st_mode) & 0o077 == 0  # ... but only its owner may read it


def test_the_launch_agent_keeps_the_journal_password_off_the_ticks_command_line(tmp_path):
    spec = plistlib.loads(_install_plist(tmp_path, UNREACHABLE).read_bytes())
    assert spec["EnvironmentVariables"]["FACTORY_JOURNAL"] == UNREACHABLE
    assert not [argument for argument in spec["ProgramArguments"] if SECRET in argument]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the keeper's command line from /proc")
def test_a_detached_keeper_is_never_given_the_journal_password_on_its_command_line() -> None:
    from factory_schedule.tui.cli.tick import _spawn_keeper
    from factory_schedule.tui.host.segments import SegmentJob

    job = SegmentJob("alpha/basic", "discovery/alpha/basic/2026-12-07", 1, "r-000000000000")
    # A server that takes the connection and never answers: the keeper waits in open_journal while its
    # command line is read (an exited keeper's /proc cmdline is empty).
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        url = f"postgresql+psycopg://owner:{SECRET}@127.0.0.1:{port}/journal?connect_timeout=30"
        pid = _spawn_keeper(url, job, [sys.executable, "-c", "pass"], 60)
        try:
            argv: list[str] = []
            deadline = time.monotonic() + 20
            while "tick-segment" not in argv and time.monotonic() < deadline:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    argv = handle.read().decode().split("\0")
                time.sleep(0.01)
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    assert "tick-segment" in argv
    assert not [argument for argument in argv if SECRET in argument]
