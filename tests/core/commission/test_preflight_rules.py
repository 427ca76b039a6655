"""The preflight's rules as pure functions over a real schedule's view and plans (a file journal, a manual
clock): which lanes are tonight's, and an account record that is current now but not at its lane's slot."""

from __future__ import annotations

from dataclasses import replace

import pendulum
import pytest

from factory_schedule.core import LifecycleSchedule, ManualClock, proposed_commission
from factory_schedule.core.preflight import LaneFacts, PreflightFacts, headline, preflight, tonight
from factory_schedule.store import open_journal

# Wednesday 2 December 2026, 15:00 in London: tonight is Thursday's 02:00-05:00.
NOW = pendulum.datetime(2026, 12, 2, 15, 0, tz="UTC")


def _schedule(tmp_path, max_age_days: int = 30, recorded_hours_ago: int = 24) -> LifecycleSchedule:
    clock = ManualClock(NOW.subtract(hours=recorded_hours_ago))  # the records, made before now
    schedule = LifecycleSchedule(open_journal(f"sqlite:///{tmp_path / 'journal.db'}"), clock)
    commission = proposed_commission(["alpha", "beta"], "2026-11-01", 40_000_000)
    commission["recordMaxAgeDays"] = max_age_days
    schedule.record_commission(commission)
    schedule.record_account(account="claude", sequence=1, sign_in="owner@example.com", overage=False,
                            recorded_by="owner")
    clock.set(NOW)
    return schedule


def _facts(schedule: LifecycleSchedule, **lanes: LaneFacts) -> PreflightFacts:
    return PreflightFacts(now=NOW, view=schedule.read(), plans=schedule.plan(), lanes=lanes, prompts=None,
                          findings=(), launch_agent=None, launch_agent_expected=False, notifier="true",
                          notifier_off=None)


def test_tonight_is_the_next_nights_lanes_in_start_order(tmp_path) -> None:
    schedule = _schedule(tmp_path)
    view = schedule.read()
    assert view is not None
    lanes = [plan.lane for plan in tonight(view, schedule.plan(), NOW)]
    assert lanes == ["alpha/basic", "beta/basic", "alpha/full", "beta/full"]  # Thursday: the full night too


def test_a_record_that_stops_being_current_before_tonights_slot_stops_the_night(tmp_path) -> None:
    schedule = _schedule(tmp_path, max_age_days=2, recorded_hours_ago=42)  # current until 21:00 today
    result = preflight(_facts(schedule))
    [claude] = [line for line in result.lines if line.subject == "claude"]
    assert claude.mark == "no" and "before tonight's last lane on it" in claude.text
    assert claude.fix is not None and "--sequence 2 --sign-in owner@example.com" in claude.fix
    assert not result.ready and headline(result).startswith("Tonight will NOT run as it stands: 1 problem")


def test_a_current_record_and_no_prompt_folder_runs_tonight_with_warnings(tmp_path) -> None:
    result = preflight(_facts(_schedule(tmp_path)))
    assert result.ready and headline(result) == "Tonight will run; the warnings below are worth a minute."
    assert {line.subject.split(" ")[0] for line in result.lines if line.mark == "warn"} == {
        "alpha/basic", "beta/basic", "alpha/full", "beta/full", "scheduler"}


def test_off_a_mac_with_no_tick_in_the_crontab_the_scheduler_warns_with_the_line_to_add(tmp_path) -> None:
    """Nothing off a Mac installs the scheduler: not "ok", but a warning whose fix is the crontab line, firing
    every ten minutes all day (cron fires in the host's zone, and not every cron reads CRON_TZ)."""
    facts = _facts(_schedule(tmp_path))
    for prompts, shown in ((None, "DIR"), ("/home/you/factory/prompts", "/home/you/factory/prompts")):
        result = preflight(replace(facts, prompts=prompts))
        [scheduler] = [line for line in result.lines if line.subject == "scheduler"]
        assert scheduler.mark == "warn" and "no tick in your crontab" in scheduler.text
        assert scheduler.fix is not None and "CRON_TZ" not in scheduler.fix
        assert f"*/10 * * * * /full/path/factory-schedule tick -- /full/path/factory-schedule run --prompts {shown}" \
            in scheduler.fix
        assert "RUNNER" not in scheduler.fix


@pytest.mark.parametrize(("ticks", "mark", "words"), [
    (("*/10 * * * * /opt/bin/factory-schedule tick -- /opt/bin/factory-schedule run --prompts /p",), "ok",
     "cron fires the tick every few minutes"),
    (("* * * * * factory-schedule tick -- factory-schedule run",), "ok", "every few minutes"),
    (("*/10 1-8 * * * factory-schedule tick -- factory-schedule run",), "warn", "not every few minutes all day"),
    (("0 12 * * 7 factory-schedule tick --lane alpha/basic -- x",), "warn", "not every few minutes all day"),
    (("@reboot factory-schedule tick -- x",), "warn", "not every few minutes all day"),
    (("*/30 * * * * factory-schedule tick -- x",), "warn", "not every few minutes all day"),
    (None, "warn", "no cron here"),
])
def test_off_a_mac_only_a_crontab_line_firing_the_tick_every_few_minutes_all_day_is_ok(
        tmp_path, ticks: tuple[str, ...] | None, mark: str, words: str) -> None:
    result = preflight(replace(_facts(_schedule(tmp_path)), cron_ticks=ticks))
    [scheduler] = [line for line in result.lines if line.subject == "scheduler"]
    assert scheduler.mark == mark and words in scheduler.text, scheduler
