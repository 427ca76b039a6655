"""The demo: a journal written by the real engine, with every scenario the dashboard guide shows, the same each time."""

from __future__ import annotations

import time
from pathlib import Path

import pendulum

from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule, ManualClock
from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.host.demo import (
    DEMO_END,
    KILLED,
    SIGN_IN_401,
    USAGE_LIMIT,
    DemoDriver,
    LiveSimulation,
    build_demo,
)


def test_the_demo_journal_holds_every_scenario_the_readme_promises(demo_url: str) -> None:
    journal = open_journal(demo_url)
    journal.verify(SCHEDULE_AGGREGATE)
    schedule = LifecycleSchedule(journal, ManualClock(DEMO_END))
    view = schedule.read()
    assert view is not None
    plans = {plan.lane: plan for plan in schedule.plan()}
    occurrences = {o.id: o for o in view.occurrences}

    # a usage limit, deferred to the lane's first slot after the reset (Monday 02:00)
    assert occurrences[USAGE_LIMIT].state == "deferred"
    assert occurrences[USAGE_LIMIT].deferrals[-1].reason == "usage-limit"
    assert plans["alpha/basic"].action == "resume"
    assert plans["alpha/basic"].at == pendulum.datetime(2026, 12, 21, 2, 0, tz="UTC")
    claude = next(a for a in view.accounts if a.account == "claude")
    assert claude.window_closed_until == "2026-12-21T01:00:00.000Z"

    # a 401 waiting for a sign-in record
    assert occurrences[SIGN_IN_401].deferrals[-1].reason == "sign-in-needed"
    assert plans["beta/basic"].action == "wait" and plans["beta/basic"].at is None

    # a killed runner: still running, its call in flight, its lease stale
    killed = occurrences[KILLED]
    assert killed.state == "running" and killed.call_in_flight is not None
    lease = leases.get_lease(journal, f"segment/{KILLED}/1")
    assert lease is not None and leases.stale(lease, DEMO_END)

    # a week near its ceiling
    w50 = next(week for week in view.ledger if week.week == "2026-W50")
    assert 0.9 < w50.debited / w50.ceiling < 1

    # two missed nights coalesced into the next admitted one
    coalesced = occurrences["discovery/alpha/basic/2026-12-19"].coalesced
    assert coalesced is not None and coalesced.count == 2
    assert schedule.status("discovery/alpha/basic/2026-12-17").coalesced_into == "discovery/alpha/basic/2026-12-19"

    # the staged lanes hold the settings of the revision in force, recorded with it as the owner's one step does
    lanes = PipelineLanes(journal, ManualClock(DEMO_END)).state()
    assert lanes is not None and lanes.settings_revision == view.commission["revision"] == 2


def test_the_demo_builder_writes_the_same_journal_every_time(tmp_path: Path) -> None:
    until = pendulum.datetime(2026, 12, 8, 3, 0, tz="UTC")
    chains = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        driver = build_demo(f"sqlite:///{tmp_path / name / 'journal.db'}", until=until)
        events = list(driver.journal.iter_history(SCHEDULE_AGGREGATE))
        chains.append([event.hash for event in events])
        driver.journal.close()
    assert len(chains[0]) > 20
    assert chains[0] == chains[1]


def test_the_live_simulation_moves_the_clock_and_writes_through_the_engine(demo_url: str) -> None:
    journal = open_journal(demo_url)
    clock = ManualClock(DEMO_END)
    driver = DemoDriver(journal, clock)
    driver.go_live()
    head = journal.head(SCHEDULE_AGGREGATE)
    simulation = LiveSimulation(driver, speed=1800)  # half an hour a second: past the 03:00 synthesis slot
    simulation.start()
    try:
        deadline = time.monotonic() + 30
        while journal.head(SCHEDULE_AGGREGATE) == head and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        simulation.stop()
    assert clock.now() > DEMO_END
    assert journal.head(SCHEDULE_AGGREGATE) > head
    assert driver.errors == []
    status = LifecycleSchedule(journal, clock).status("discovery/portfolio/synthesis/2026-W51")
    assert status.state != "scheduled"


def test_the_demo_makes_a_demo_owner_key_whose_passphrase_it_prints(tmp_path: Path, capsys) -> None:
    """Its forms then ask for the passphrase as a real owner's do, and its owner records are signed."""
    import re

    from factory_schedule.core.owner import load_owner
    from factory_schedule.tui.cli import main as cli
    from factory_schedule.tui.host.owner_key import read_key_file, unseal

    url = f"sqlite:///{tmp_path / 'demo.db'}"
    assert cli.main(["demo", "--journal", url, "--build-only"]) == 0
    said = capsys.readouterr().err
    found = re.search(r"The demo's owner key: (\S+); its passphrase \(the forms ask for it\): (.+)", said)
    assert found, said
    signer = unseal(read_key_file(Path(found.group(1))), found.group(2).strip())
    state = load_owner(open_journal(url))[1]
    assert state is not None and state.current.public_key == signer.public_key
