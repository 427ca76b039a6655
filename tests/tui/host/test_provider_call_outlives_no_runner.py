"""A provider call never outlives its runner unseen: whatever kills the runner (its process, its process group,
its session, or the tick's session), the call either stops with it or stays a live process health counts as the
run's, and health reconciles the run only once nothing of it lives.

Real processes throughout: a real tick, `factory-schedule run` as its runner, the fake `claude` on PATH hung in
its call with a tool process of its own, in the call's process group or detached in a session of its own (as
Claude Code's shell tool starts each command), and `health --repair` as a process.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.host.clock import SystemClock
from tests.tui.provider_support import FAKE_LANE_ENV, fake_path
from tests.tui.runner_support import CLI, REPO, cli, cli_env, wait_for

from .test_run import claude_lane, lanes_commission, record

TTL = 1.0
LINUX = sys.platform.startswith("linux")


def living(pid: int) -> bool:
    """Whether a process with this pid exists and is not a zombie (a zombie does no work)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def session_members(session: int) -> list[int]:
    """Every live process of this session (what a `kill` of the session reaches)."""
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if os.getsid(int(entry)) == session and living(int(entry)):
                    found.append(int(entry))
    if not os.path.isdir("/proc"):
        listed = subprocess.run(["pgrep", "-s", str(session)], capture_output=True, text=True).stdout.split()
        found = [int(pid) for pid in listed]
    return found


def kill_session(session: int) -> None:
    for pid in session_members(session):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# The call's tool: in the call's process group (`#spawn`), or in a session of its own (`#detach`).
TRANSCRIPT_OF = {"tool": "hang-with-tool", "detached-tool": "hang-with-detached-tool"}


class Night:
    """A real tick running `factory-schedule run` whose one call hangs with a tool process of its own."""

    def __init__(self, url: str, tmp_path: Path, tool: str = "tool") -> None:
        prompts = tmp_path / "prompts"
        claude_lane(prompts, "alpha/basic", TRANSCRIPT_OF[tool])
        (prompts / "alpha/basic/lane.toml").write_text(
            'provider = "claude"\nsign_in = "owner@example.com"\nbound = 150000\ntimeout_minutes = 30\n'
            + FAKE_LANE_ENV)
        self.journal = open_journal(url)
        schedule = LifecycleSchedule(self.journal, SystemClock())
        record(schedule, lanes_commission(("alpha", "scan", "claude")))
        self.url = url
        self.log = tmp_path / "contacts.log"
        environment = cli_env(url, FAKE_PROVIDER_LOG=str(self.log))
        environment["PATH"] = fake_path(environment["PATH"])
        self.tick = subprocess.Popen(
            [*CLI, "--journal", url, "tick", "--ttl", f"{TTL:g}", "--", *CLI, "run", "--prompts", str(prompts)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment, cwd=REPO,
            start_new_session=True)
        self.tool = int(wait_for(lambda: self._children(), what="the provider's tool process")[0])
        self.provider = json.loads(self.log.read_text().splitlines()[0])["pid"]
        [lease] = [lease for lease in leases.list_leases(self.journal) if lease.scope.startswith("segment/")]
        self.lease = lease
        self.runner = int(lease.info["pid"])

    def _children(self) -> list[str]:
        path = Path(f"{self.log}.children")
        return path.read_text().split() if path.exists() else []

    def pids(self) -> list[int]:
        return [self.tick.pid, self.runner, self.provider, self.tool]

    def end_everything(self) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.tick.wait(timeout=30)

    def stale(self) -> None:
        """Wait until the segment's lease has had no heartbeat for 2 x TTL."""
        wait_for(lambda: (held := leases.get_lease(self.journal, self.lease.scope)) is not None
                 and leases.stale(held, datetime.now(UTC)), timeout=3 * TTL + 30, what="a stale lease")

    def repair(self) -> dict[str, Any]:
        code, report, err = cli(self.url, "health", "--repair", "--json")
        assert isinstance(report, dict), (code, report, err)
        return report


def reconciled(report: dict[str, Any]) -> bool:
    return "reconciled-dead-runner" in [repair["kind"] for repair in report["repairs"]]


def kill_runner(night: Night) -> None:
    os.kill(night.runner, signal.SIGKILL)


def kill_runner_group(night: Night) -> None:
    os.killpg(os.getpgid(night.runner), signal.SIGKILL)


def kill_runner_session(night: Night) -> None:
    kill_session(os.getsid(night.runner))


def kill_tick_session(night: Night) -> None:
    kill_session(os.getsid(night.tick.pid))


def kill_tick_session_and_runner(night: Night) -> None:
    kill_tick_session(night)
    kill_runner(night)


ARRANGEMENTS: dict[str, Callable[[Night], None]] = {
    "runner": kill_runner,
    "runner-group": kill_runner_group,
    "runner-session": kill_runner_session,
    "tick-session": kill_tick_session,
    "tick-session-and-runner": kill_tick_session_and_runner,
}


@pytest.mark.parametrize("tool", TRANSCRIPT_OF)
@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
def test_health_never_reconciles_a_run_while_its_provider_call_or_anything_it_started_lives(
    sqlite_url: str, tmp_path: Path, arrangement: str, tool: str
) -> None:
    night = Night(sqlite_url, tmp_path, tool)
    try:
        ARRANGEMENTS[arrangement](night)
        if arrangement != "tick-session":
            wait_for(lambda: not living(night.runner), timeout=30, what="the runner to die")
            if LINUX:  # the call stops with its runner
                wait_for(lambda: not living(night.provider), timeout=30, what="the call to stop with its runner")
        night.stale()
        report = night.repair()
        left = [pid for pid in (night.runner, night.provider, night.tool) if living(pid)]
        if left:
            assert not reconciled(report), f"reconciled while {left} of its run still live"
            [finding] = [finding for finding in report["findings"] if finding["kind"] == "stale-lease-live-process"]
            assert set(left) <= set(finding["evidence"]["living_pids"]), finding  # it names what still lives
        for pid in (night.runner, night.provider, night.tool):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not any(living(pid) for pid in (night.runner, night.provider, night.tool)), timeout=30,
                 what="the run's processes to end")
        if not reconciled(report):
            night.stale()
            report = night.repair()
        assert reconciled(report), report
        status = LifecycleSchedule(night.journal, SystemClock()).status(night.lease.info["occurrence"])
        assert status.state == "interrupted"
    finally:
        night.end_everything()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_runner_told_to_terminate_stops_its_call_and_everything_it_started(
    sqlite_url: str, tmp_path: Path, sig: signal.Signals
) -> None:
    """A SIGTERM (a service manager stopping the job, `kill PID`) or a SIGHUP (its terminal closed) ends the
    runner as a Ctrl-C does: nothing of its call is left at work behind it."""
    night = Night(sqlite_url, tmp_path)
    try:
        os.kill(night.runner, sig)
        wait_for(lambda: not living(night.runner), timeout=60, what="the runner to end")
        wait_for(lambda: not living(night.provider) and not living(night.tool), timeout=30,
                 what="the call and its tool to end with the runner")
    finally:
        night.end_everything()
