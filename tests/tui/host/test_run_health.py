"""A night that a provider CLI holds up is told to the owner: signed out, unreachable, or an account stopped.

Each test runs a real night (the tick and `factory-schedule run` as processes, against the fake CLIs), then
`health` twice with a notifier: the finding is there, names what frees it, and is sent once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import LifecycleSchedule
from tests.tui.runner_support import cli, fake_notifier, notifications

from .test_run import claude_lane, codex_lane, lanes_commission, occurrence_of, record, schedule, tick

__all__ = ["schedule"]  # the fixture, shared with test_run


@pytest.fixture
def notifier(tmp_path: Path) -> tuple[str, Path]:
    return fake_notifier(tmp_path)


def _told_once(url: str, kind: str, notifier: tuple[str, Path]) -> dict[str, Any]:
    command, log = notifier
    code, report, err = cli(url, "health", "--json", "--notify", command, NOTIFY_LOG=str(log))
    assert code == 1, err
    [finding] = [f for f in report["findings"] if f["kind"] == kind]
    assert kind in [notice["kind"] for notice in report["notified"]]
    _code, again, _ = cli(url, "health", "--json", "--notify", command, NOTIFY_LOG=str(log))
    assert kind not in [notice["kind"] for notice in again["notified"]]
    assert sum(finding["message"][:60] in " ".join(call) for call in notifications(log)) == 1
    return finding


def test_a_lane_whose_cli_is_signed_out_is_told_with_the_command_that_signs_it_in(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path, notifier: tuple[str, Path]) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "normal")
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    code, lines, err = tick(sqlite_url, tmp_path, prompts, FAKE_CLAUDE_LOGGED_OUT="1")
    assert code == 0, (lines, err)
    assert occurrence_of(schedule, "alpha/basic").state == "deferred"
    finding = _told_once(sqlite_url, "lane-logged-out", notifier)
    assert "`claude auth login`" in finding["message"] and finding["severity"] == "error"
    assert finding["evidence"]["lane"] == "alpha/basic"
    view = schedule.read()
    assert view is not None
    zone = view.commission["zone"]  # when it resumes, as the owner reads the lane's times: local, with its zone
    assert re.search(rf"resumes at its next slot, \d{{4}}-\d\d-\d\d \d\d:\d\d {re.escape(zone)}",
                     finding["message"]), finding["message"]


def test_an_unreachable_provider_is_told_once(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path, notifier: tuple[str, Path]) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "real-unreachable", "normal")
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    code, lines, err = tick(sqlite_url, tmp_path, prompts)
    assert code == 0, (lines, err)
    finding = _told_once(sqlite_url, "provider-unreachable", notifier)
    assert "ConnectionRefused" in finding["evidence"]["reason"]


def test_an_account_a_providers_message_stopped_is_told_with_that_message(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path, notifier: tuple[str, Path]) -> None:
    prompts = tmp_path / "prompts"
    codex_lane(prompts, "beta/basic", "spend-cap", "normal")
    record(schedule, lanes_commission(("beta", "review", "chatgpt")))
    code, lines, err = tick(sqlite_url, tmp_path, prompts)
    assert code == 0, (lines, err)
    beta = occurrence_of(schedule, "beta/basic")
    assert len(beta.calls) == 1  # the rest of the lane was not sent into the stopped account
    finding = _told_once(sqlite_url, "provider-stopped-account", notifier)
    assert "spend cap" in finding["message"] and finding["evidence"]["accounts"] == ["chatgpt"]


def test_a_sign_in_mismatch_names_both_identities_and_the_command_that_fixes_it(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path, notifier: tuple[str, Path]) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "normal")
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    code, lines, err = tick(sqlite_url, tmp_path, prompts, FAKE_CLAUDE_EMAIL="me@example.org")
    assert code == 0, (lines, err)
    finding = _told_once(sqlite_url, "sign-in-mismatch", notifier)
    assert "observes sign-in me@example.org (its CLI reports it)" in finding["message"]
    assert "the claude record names owner@example.com" in finding["message"]
    assert finding["evidence"]["fix"] == ("factory-schedule record-account --account claude --sequence 2 "
                                          "--sign-in me@example.org --overage off --recorded-by owner")
    assert "`claude auth login`" in finding["message"]
