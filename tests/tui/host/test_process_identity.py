"""Telling a runner's process from one given its recycled pid: start times read the same whatever the
reader's time zone, and only a start strictly after the recorded one proves another process. Real processes."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from factory_schedule.tui.host import process_identity as identity


@pytest.fixture
def child() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


def test_the_ps_start_time_reads_the_same_in_every_time_zone(
    child: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ps -o lstart` prints local time (macOS's probe): the keeper under launchd and the owner's shell may
    have different zones, and the same live runner must not look recycled."""
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    recorded = identity.ps_start_time(child.pid)
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    probed = identity.ps_start_time(child.pid)
    assert recorded is not None and recorded == probed
    assert identity.same_process_alive(child.pid, recorded, started=identity.ps_start_time) == (True, False)


def test_a_pid_is_recycled_only_when_its_process_started_strictly_after_the_recorded_start(
    child: subprocess.Popen[bytes],
) -> None:
    now = identity.ps_start_time(child.pid)
    assert now is not None
    earlier = "ps-lstart-utc:Mon Jan  1 00:00:00 2024"
    later = "ps-lstart-utc:Fri Jan  1 00:00:00 2100"
    assert identity.same_process_alive(child.pid, earlier, started=identity.ps_start_time) == (False, True)
    assert identity.same_process_alive(child.pid, later, started=identity.ps_start_time) == (True, False)
    # Anything that does not parse, or an older local-time record, counts as alive.
    for recorded in ("ps-lstart:Mon Jan  1 00:00:00 2024", "garbage", "linux-ticks:x"):
        assert identity.same_process_alive(child.pid, recorded, started=identity.ps_start_time) == (True, False)
    assert identity.same_process_alive(child.pid, "linux-ticks:1") == (
        (False, True) if os.path.isdir("/proc/self") else (True, False))


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="zombies are told from /proc")
def test_a_dead_runner_not_yet_reaped_is_gone_not_alive() -> None:
    """A runner killed after its tick died waits as a zombie until the system reaps it: it does no work,
    so health must not count it as a live holder."""
    import time

    process = subprocess.Popen(["true"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not identity._zombie(process.pid):
        time.sleep(0.05)
    try:
        assert identity._zombie(process.pid)
        assert not identity.process_alive(process.pid)
    finally:
        process.wait()
