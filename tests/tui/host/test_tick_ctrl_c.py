"""A Ctrl-C at a foreground tick says what it gave up and reconciles its own runners at once on the evidence it
has (it ended them: their exit is its own to see, their sessions hold no process), never leaving them for
health's 2 x TTL. Real processes: a tick running `factory-schedule run`, the fake `claude` hung in its call."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.host.clock import SystemClock
from tests.tui.provider_support import FAKE_LANE_ENV, fake_path
from tests.tui.runner_support import CLI, REPO, cli, cli_env, json_lines, wait_for

from .test_provider_call_outlives_no_runner import kill_session, living
from .test_run import claude_lane, lanes_commission, record

TTL = 60.0  # 2 x TTL is two minutes: nothing below may wait for it


def test_a_ctrl_c_at_a_foreground_tick_reconciles_the_runners_it_ended_at_once_and_says_what_it_gave_up(
    sqlite_url: str, tmp_path: Path
) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "hang")
    (prompts / "alpha/basic/lane.toml").write_text(
        'provider = "claude"\nsign_in = "owner@example.com"\nbound = 150000\ntimeout_minutes = 30\n'
        + FAKE_LANE_ENV)
    journal = open_journal(sqlite_url)
    schedule = LifecycleSchedule(journal, SystemClock())
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    log = tmp_path / "contacts.log"
    environment = cli_env(sqlite_url, FAKE_PROVIDER_LOG=str(log))
    environment["PATH"] = fake_path(environment["PATH"])
    tick = subprocess.Popen(
        [*CLI, "--journal", sqlite_url, "tick", "--ttl", f"{TTL:g}", "--", *CLI, "run", "--prompts", str(prompts)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, cwd=REPO)
    runner = None
    try:
        wait_for(log.exists, timeout=120, what="the provider call")
        provider = json.loads(log.read_text().splitlines()[0])["pid"]
        [lease] = leases.list_leases(journal)
        runner = int(lease.info["session"])
        tick.send_signal(signal.SIGINT)  # what a terminal's Ctrl-C sends to its foreground process group
        out, err = tick.communicate(timeout=60)
    finally:
        if tick.poll() is None:
            tick.kill()
        if runner is not None:
            kill_session(runner)  # a runner left behind by a failure here, never by the tick
    assert tick.returncode == 130, err
    [gave_up] = [line["interrupted"] for line in json_lines(out) if "interrupted" in line]
    assert gave_up["outcome"] == "reconciled" and gave_up["calls_lost"] == [1], gave_up
    assert not living(provider), "the call ended with its runner"
    occurrence: Any = schedule.status(gave_up["occurrence"])
    assert occurrence.state == "interrupted"  # its lane resumes on its next tick
    assert leases.list_leases(journal) == []
    _code, report, _err = cli(sqlite_url, "health", "--json")
    kinds = [finding["kind"] for finding in report["findings"]]
    assert not [kind for kind in kinds if "lease" in kind or "runner" in kind], kinds
