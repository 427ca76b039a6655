"""A staged lane run's locks identify their holder as the tick's segment leases do: the machine it ran on, its
process's start time beside the pid, and its session. Without them, health cannot tell a run on another machine (or a
container) that shares the journal and the hostname from a dead run here, and would confirm a live run gone."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from typing import Any

import pendulum
import pytest

from factory_schedule.core.health import dead_lane_runs
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.cli.main import main
from factory_schedule.tui.host.health import lease_fact
from factory_schedule.tui.host.process_identity import process_start_time, this_host, this_machine
from tests.core.pipeline.pipeline_support import Harness, Runs, drive_promotion

from .test_reconciler_lane_runs import promotion_harness

TTL = 0.2


@pytest.fixture
def harness(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> Harness:
    return promotion_harness(sqlite_url, monkeypatch)


def _claim(url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, pid: int) -> Any:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    capsys.readouterr()
    code = main(["--journal", url, "lanes", "claim", "--lane", "promotion", "--run", "promotion", "--runner",
                 "run-elsewhere", "--ttl", f"{TTL:g}", "--pid", str(pid)])
    assert code == 0
    return json.loads(capsys.readouterr().out.splitlines()[-1])


def test_a_lane_lock_records_its_machine_and_its_process_start_like_a_segment_lease(harness: Harness, capsys,
                                                                                     monkeypatch):
    drive_promotion(harness, Runs(), until="evidence")
    process = subprocess.Popen(["/bin/sh", "-c", "sleep 60"], stdin=subprocess.DEVNULL)
    try:
        claimed = _claim(harness.url, capsys, monkeypatch, process.pid)
        journal = open_journal(harness.url)
        for scope in claimed["leases"]:
            lease = leases.get_lease(journal, scope)
            assert lease is not None, scope
            info = lease.info
            assert info["machine"] == this_machine(), scope
            assert info["pid_started"] == process_start_time(process.pid), scope
    finally:
        process.kill()
        process.wait()


def test_a_lane_run_on_another_machine_with_this_hostname_is_never_confirmed_gone(harness: Harness, capsys,
                                                                                   monkeypatch):
    """The run's process is not in this machine's process table (here: it exited), but its locks were taken on
    another machine sharing the journal and the hostname: its death is not provable from here."""
    drive_promotion(harness, Runs(), until="evidence")
    process = subprocess.Popen(["/bin/sh", "-c", "exit 0"], stdin=subprocess.DEVNULL)
    process.wait()
    time.sleep(0.05)
    # The claim is made here, so the lock names this machine; health then looks from another machine (a
    # container or a second Mac with the same hostname), which is what `machine` tells lease_fact.
    _claim(harness.url, capsys, monkeypatch, process.pid)
    journal = open_journal(harness.url)
    later = pendulum.now("UTC") + timedelta(seconds=10 * TTL)
    facts = [lease_fact(lease, this_host(), machine="linux:another-machine/another-boot/pid:[1]")
             for lease in leases.list_leases(journal)]
    assert facts and all(fact.process_alive is None for fact in facts), [f.info for f in facts]
    state = harness.lanes.state()
    assert dead_lane_runs(facts, state, later) == []


def test_a_lane_run_whose_recorded_process_died_but_whose_session_still_works_is_never_confirmed_gone(
        harness: Harness, capsys, monkeypatch):
    """As for a segment's runner: work the run left behind in its session (a provider call still running) keeps
    the run alive, so its task is not handed to another run while that work may still act."""
    drive_promotion(harness, Runs(), until="evidence")
    leader = subprocess.Popen(["/bin/sh", "-c", "sleep 60 & wait"], stdin=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        time.sleep(0.2)  # its child is started
        _claim(harness.url, capsys, monkeypatch, leader.pid)
        leader.kill()  # the run's recorded process dies; the sleep it started lives on in its session
        leader.wait()
        time.sleep(2 * TTL + 0.3)
        journal = open_journal(harness.url)
        facts = [lease_fact(lease, this_host()) for lease in leases.list_leases(journal)]
        assert facts and all(fact.process_alive for fact in facts), [f.info for f in facts]
        assert dead_lane_runs(facts, harness.lanes.state(), pendulum.now("UTC")) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(leader.pid, signal.SIGKILL)
