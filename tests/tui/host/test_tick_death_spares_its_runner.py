"""A tick that dies (its whole session killed) never takes its runner's paid calls down with it: the runner,
in a session of its own, loses only the reader of its progress lines and works its night to the end, each
unit sent once, with nothing left for health to reconcile. Real processes: a tick, `factory-schedule run`,
the fake `claude` whose calls take a moment."""

from __future__ import annotations

import subprocess
from pathlib import Path

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.host.clock import SystemClock
from tests.tui.provider_support import FAKE_LANE_ENV, TRANSCRIPTS, fake_path
from tests.tui.runner_support import CLI, REPO, cli_env, wait_for

from .test_provider_call_outlives_no_runner import kill_session
from .test_run import contacts, lanes_commission, record, write_lane


def test_a_tick_killed_mid_call_leaves_its_runner_to_finish_the_night_sending_each_unit_once(
    sqlite_url: str, tmp_path: Path
) -> None:
    normal = (TRANSCRIPTS / "claude" / "normal.jsonl").read_text().splitlines()
    (tmp_path / "transcripts" / "claude").mkdir(parents=True)
    (tmp_path / "transcripts" / "claude" / "slow.jsonl").write_text("\n".join([*normal[:-1], "#sleep 2", normal[-1]]))
    prompts = tmp_path / "prompts"
    write_lane(prompts, "alpha/basic", 'provider = "claude"\nsign_in = "owner@example.com"\nbound = 150000\n'
               'timeout_minutes = 1\n' + FAKE_LANE_ENV,
               {"scan": {f"{i}0-unit-{i}.md": f"Scan part {i}. [transcript: slow]\n" for i in (1, 2)}})
    journal = open_journal(sqlite_url)
    schedule = LifecycleSchedule(journal, SystemClock())
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    environment = cli_env(sqlite_url, FAKE_PROVIDER_LOG=str(tmp_path / "contacts.log"),
                          FAKE_TRANSCRIPTS=str(tmp_path / "transcripts"))
    environment["PATH"] = fake_path(environment["PATH"])
    tick = subprocess.Popen([*CLI, "--journal", sqlite_url, "tick", "--ttl", "1", "--", *CLI, "run", "--prompts",
                             str(prompts)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment,
                            cwd=REPO, start_new_session=True)
    runner = None
    try:
        wait_for(lambda: contacts(tmp_path), timeout=120, what="the first call")
        [lease] = leases.list_leases(journal)
        runner = int(lease.info["session"])
        kill_session(tick.pid)  # the tick and everything of its session: its runner leads a session of its own
        tick.wait(timeout=30)
        view = schedule.read()
        assert view is not None
        [occurrence] = view.occurrences
        wait_for(lambda: schedule.status(occurrence.id).state == "settled", timeout=120, what="the night to end")
    finally:
        if runner is not None:
            kill_session(runner)
    status = schedule.status(occurrence.id)
    assert status.status == "completed"
    assert contacts(tmp_path) == ["Scan part 1. [transcript: slow]", "Scan part 2. [transcript: slow]"]
