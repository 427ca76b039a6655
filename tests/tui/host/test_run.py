"""`factory-schedule run` under `tick`, over a real journal, against the fake `claude` and `codex` on PATH.

Each test opens the journal once in this process (see tui/cli/schedule_commands.open_schedule)
and drives the tick and the runner as real processes, then reads the journal back:
what each call was debited, how the segment ended, and that no unit of work went
to the provider twice.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.core.health.provider_clis import stopped_by_provider
from factory_schedule.store import open_journal
from factory_schedule.tui.host.clock import SystemClock
from tests.tui.provider_support import FAKE_LANE_ENV, fake_path
from tests.tui.runner_support import CLI, REPO, cli, cli_env, commission_due_now, json_lines, run_logs

CLAUDE_TOKENS = 3000  # what the `normal` Claude transcript reports used
BOUND = 150_000


def write_lane(prompts: Path, lane: str, settings: str, units: dict[str, dict[str, str]]) -> Path:
    folder = prompts / lane
    folder.mkdir(parents=True)
    (folder / "lane.toml").write_text(settings if "\nenv = " in settings else settings + FAKE_LANE_ENV)
    for task, files in units.items():
        (folder / task).mkdir()
        for name, text in files.items():
            (folder / task / name).write_text(text)
    return folder


def claude_lane(prompts: Path, lane: str, *transcripts: str) -> None:
    """A lane with one task, scan, whose units replay the given transcripts in order."""
    write_lane(prompts, lane, f'provider = "claude"\nsign_in = "owner@example.com"\nbound = {BOUND}\n'
               'timeout_minutes = 0.05\n',
               {"scan": {f"{i}0-unit-{i}.md": f"Scan part {i}. [transcript: {name}]\n"
                         for i, name in enumerate(transcripts, start=1)}})


def codex_lane(prompts: Path, lane: str, *transcripts: str) -> None:
    write_lane(prompts, lane, f'provider = "codex"\nsign_in = "owner@example.com"\nbound = {BOUND}\n'
               'timeout_minutes = 0.05\n',
               {"review": {f"{i}0-unit-{i}.md": f"Review part {i}. [transcript: {name}]\n"
                           for i, name in enumerate(transcripts, start=1)}})


def lanes_commission(*lanes: tuple[str, str, str]) -> dict[str, Any]:
    """A due-now commission with one basic lane per (product, task, account)."""
    base = commission_due_now()
    template = base["lanes"][0]
    base["lanes"] = [
        {**template, "lane": f"{product}/basic", "product": product,
         "tasks": [{"task": task, "account": account, "maxCalls": 4, "callBound": BOUND}]}
        for product, task, account in lanes
    ]
    return base


@pytest.fixture
def schedule(sqlite_url: str) -> LifecycleSchedule:
    return LifecycleSchedule(open_journal(sqlite_url), SystemClock())


def record(schedule: LifecycleSchedule, commission: dict[str, Any]) -> None:
    schedule.record_commission(commission)
    for account in ("claude", "chatgpt"):
        schedule.record_account(account=account, sequence=1, sign_in="owner@example.com", overage=False,
                                recorded_by="owner")


def tick(url: str, tmp_path: Path, prompts: Path, **env: str) -> tuple[int, list[dict[str, Any]], str]:
    environment = cli_env(url, FAKE_PROVIDER_LOG=str(tmp_path / "contacts.log"), **env)
    environment["PATH"] = fake_path(environment["PATH"])
    done = subprocess.run([*CLI, "--journal", url, "tick", "--ttl", "1", "--", *CLI, "run", "--prompts",
                           str(prompts)], capture_output=True, text=True, env=environment, cwd=REPO, timeout=180)
    lines = json_lines(done.stdout)
    return done.returncode, lines, done.stderr + run_logs(lines)


def contacts(tmp_path: Path) -> list[str]:
    log = tmp_path / "contacts.log"
    return [json.loads(line)["prompt"] for line in log.read_text().splitlines()] if log.exists() else []


def runner_lines(stderr: str) -> list[dict[str, Any]]:
    return [line for line in json_lines(stderr) if "run" in line]


def occurrence_of(schedule: LifecycleSchedule, lane: str) -> Any:
    """The lane's one occurrence, whole: a settled one from its settled record (the view drops its calls)."""
    view = schedule.read()
    assert view is not None
    [occurrence] = [o for o in view.occurrences if o.lane == lane]
    return schedule.settled_records().get(occurrence.id, occurrence)


def week_debited(schedule: LifecycleSchedule) -> int:
    view = schedule.read()
    assert view is not None
    return sum(week.debited for week in view.ledger)


def test_a_night_through_a_crash_and_a_usage_limit_debits_each_call_right_and_sends_nothing_twice(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "normal", "crash", "normal")
    codex_lane(prompts, "beta/basic", "normal", "usage-limit", "normal")
    record(schedule, lanes_commission(("alpha", "scan", "claude"), ("beta", "review", "chatgpt")))

    code, lines, err = tick(sqlite_url, tmp_path, prompts)
    assert code == 0, (lines, err)
    assert [line["segment_run"]["lease"] for line in lines if "segment_run" in line] == ["released", "released"]

    alpha = occurrence_of(schedule, "alpha/basic")
    assert [(c.work, c.outcome, c.debit) for c in alpha.calls] == [
        ("10-unit-1", "ok", CLAUDE_TOKENS), ("20-unit-2", "lost", BOUND), ("30-unit-3", "ok", CLAUDE_TOKENS)]
    assert (alpha.state, alpha.settlement.status) == ("settled", "partial")  # the crashed unit's effect is unknown

    beta = occurrence_of(schedule, "beta/basic")
    assert [(c.work, c.outcome, c.debit, c.unsent) for c in beta.calls] == [
        ("10-unit-1", "ok", 24_885, False), ("20-unit-2", "usage-limit", 0, True)]
    assert beta.state == "deferred"
    assert beta.deferrals[-1].reason == "usage-limit"
    view = schedule.read()
    assert view is not None
    [chatgpt] = [a for a in view.accounts if a.account == "chatgpt"]
    assert chatgpt.window_closed_until is not None

    assert week_debited(schedule) == 2 * CLAUDE_TOKENS + BOUND + 24_885
    sent = contacts(tmp_path)
    assert sorted(sent) == sorted(["Scan part 1. [transcript: normal]", "Scan part 2. [transcript: crash]",
                                   "Scan part 3. [transcript: normal]", "Review part 1. [transcript: normal]",
                                   "Review part 2. [transcript: usage-limit]"])

    # The same night ticks again: nothing is due, nothing is sent again.
    code, lines, err = tick(sqlite_url, tmp_path, prompts)
    assert code == 0, (lines, err)
    assert len(contacts(tmp_path)) == len(sent)


def test_a_refused_sign_in_defers_the_segment_and_stops_the_account_until_the_owner_records_it(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "unauthorized-401", "normal")
    record(schedule, lanes_commission(("alpha", "scan", "claude")))

    code, lines, err = tick(sqlite_url, tmp_path, prompts)
    assert code == 0, (lines, err)
    alpha = occurrence_of(schedule, "alpha/basic")
    assert [(c.work, c.outcome, c.debit) for c in alpha.calls] == [("10-unit-1", "sign-in-needed", 0)]
    assert (alpha.state, alpha.deferrals[-1].reason) == ("deferred", "sign-in-needed")
    view = schedule.read()
    assert view is not None
    [account] = [a for a in view.accounts if a.account == "claude"]
    assert account.sign_in_refused_at is not None
    assert week_debited(schedule) == 0
    assert contacts(tmp_path) == ["Scan part 1. [transcript: unauthorized-401]"]
    ended = runner_lines(err)[-1]
    assert ended["run"] == "deferred" and ended["reason"] == "sign-in-needed"


def test_the_runner_prints_json_only_and_provider_text_only_as_data(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "crash")
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    code, _lines, err = tick(sqlite_url, tmp_path, prompts)
    assert code == 0
    runner_output = [line for line in err.splitlines() if line.strip()]
    assert all(line.startswith("{") for line in runner_output), err  # every line the runner printed is JSON
    [call] = [line for line in runner_lines(err) if line["run"] == "call"]
    assert "something went wrong" in call["provider_stderr_tail"]
    assert "Scanning the repository" not in err  # the provider's own text stays out of the output


def test_a_signed_out_cli_defers_logged_out_before_anything_is_asked(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "normal")
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    code, lines, err = tick(sqlite_url, tmp_path, prompts, FAKE_CLAUDE_LOGGED_OUT="1")
    assert code == 0, (lines, err)
    alpha = occurrence_of(schedule, "alpha/basic")
    assert alpha.calls == [] and alpha.deferrals[-1].reason == "logged-out"
    assert contacts(tmp_path) == []


def test_the_sign_in_claude_reports_for_its_session_is_the_one_admitted(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "normal")
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    code, lines, err = tick(sqlite_url, tmp_path, prompts, FAKE_CLAUDE_EMAIL="someone-else@example.com")
    assert code == 0, (lines, err)
    started = next(line for line in runner_lines(err) if line["run"] == "started")
    assert (started["sign_in"], started["sign_in_from"]) == ("someone-else@example.com", "cli")
    # Not the owner's record: the runner asks for no call at all (each would be refused overage-unverified).
    assert [line for line in runner_lines(err) if line["run"] == "refused"] == []
    assert contacts(tmp_path) == []
    alpha = occurrence_of(schedule, "alpha/basic")
    assert (alpha.state, alpha.calls) == ("settled", [])
    assert alpha.settlement.reason == ("sign-in mismatch: the CLI is signed in as someone-else@example.com (its CLI "
                                       "reports it), the claude record names owner@example.com")


def test_paid_overage_ends_the_night_and_marks_the_work_of_unknown_effect(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "overage", "normal")
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    code, lines, err = tick(sqlite_url, tmp_path, prompts)
    assert code == 0, (lines, err)
    alpha = occurrence_of(schedule, "alpha/basic")
    assert [(c.work, c.overage, c.debit) for c in alpha.calls] == [("10-unit-1", True, CLAUDE_TOKENS)]
    assert (alpha.state, alpha.settlement.status) == ("settled", "partial")
    assert len(contacts(tmp_path)) == 1


def test_run_check_names_each_lanes_problem_in_one_line(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "normal")
    write_lane(prompts, "beta/basic", 'provider = "claude"\nsign_in = "owner@example.com"\nbound = "lots"\n',
               {"review": {"a.md": "x"}})
    record(schedule, lanes_commission(("alpha", "scan", "claude"), ("beta", "review", "claude")))
    done = subprocess.run([*CLI, "--journal", sqlite_url, "run", "--check", "--prompts", str(prompts)],
                          capture_output=True, text=True, env={**cli_env(sqlite_url), "PATH": fake_path()},
                          cwd=REPO, timeout=60)
    assert done.returncode == 2
    alpha, beta = json_lines(done.stdout)
    assert alpha["ok"] and alpha["tasks"] == {"scan": {"bound": BOUND, "work": ["10-unit-1"]}}
    assert alpha["warning"].endswith(f'set executable = "{alpha["executable"]}" in lane.toml')  # found on PATH
    assert not beta["ok"] and beta["error"].endswith("lane.toml: bound: Input should be a valid integer, got 'lots'")


def test_run_outside_a_tick_is_refused_before_anything_is_written(sqlite_url: str, tmp_path: Path) -> None:
    code, answer, _err = cli(sqlite_url, "run", "--prompts", str(tmp_path))
    assert code == 2 and answer["error"] == "INVALID"


def test_run_help_documents_the_prompt_folder() -> None:
    done = subprocess.run([*CLI, "run", "--help"], capture_output=True, text=True, cwd=REPO, timeout=60)
    for words in ("lane.toml", "provider = ", "sign_in = ", "bound = ", "timeout_minutes", "--check", "[tasks.scan]"):
        assert words in done.stdout


def test_a_lane_whose_prompts_cannot_be_used_is_settled_unavailable_and_nothing_is_sent(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    write_lane(prompts, "alpha/basic", 'provider = "codex"\nsign_in = "owner@example.com"\nbound = 1000\n',
               {"scan": {"a.md": "x"}})
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    code, lines, _err = tick(sqlite_url, tmp_path, prompts)
    assert code == 6  # the runner exited 2: the tick says a runner failed
    [segment_run] = [line["segment_run"] for line in lines if "segment_run" in line]
    assert (segment_run["exit"], segment_run["lease"]) == (2, "released")
    alpha = occurrence_of(schedule, "alpha/basic")
    assert (alpha.settlement.status, alpha.calls) == ("unavailable", [])
    assert "provider: codex does not run task scan" in alpha.settlement.reason
    assert contacts(tmp_path) == []


def test_an_unreachable_provider_costs_one_call_debits_nothing_and_ends_the_segment(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "real-unreachable", "real-unreachable", "real-unreachable")
    codex_lane(prompts, "beta/basic", "real-offline", "real-offline")
    record(schedule, lanes_commission(("alpha", "scan", "claude"), ("beta", "review", "chatgpt")))
    code, lines, err = tick(sqlite_url, tmp_path, prompts)
    assert code == 0, (lines, err)
    for lane in ("alpha/basic", "beta/basic"):
        occurrence = occurrence_of(schedule, lane)
        assert [(c.outcome, c.debit, c.unsent) for c in occurrence.calls] == [("unreachable", 0, True)]
        assert occurrence.settlement.status == "unavailable"
        assert occurrence.settlement.reason.startswith("provider unreachable: ")
    assert week_debited(schedule) == 0
    assert len(contacts(tmp_path)) == 2  # one call a segment, then nothing more into a dead line


def test_a_clean_call_whose_provider_logged_errors_on_stderr_leaves_no_error_line(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "normal-with-stderr")
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    code, lines, err = tick(sqlite_url, tmp_path, prompts)
    assert code == 0, (lines, err)
    [segment_run] = [line["segment_run"] for line in lines if "segment_run" in line]
    assert segment_run["verdict"] == "ended", segment_run
    [call] = [line for line in runner_lines(err) if line["run"] == "call"]
    assert "provider_stderr_tail" not in call


def test_run_check_asks_the_cli_and_fails_in_one_line_when_it_is_signed_out(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    claude_lane(prompts, "alpha/basic", "normal")
    codex_lane(prompts, "beta/basic", "normal")
    record(schedule, lanes_commission(("alpha", "scan", "claude"), ("beta", "review", "chatgpt")))
    done = subprocess.run([*CLI, "--journal", sqlite_url, "run", "--check", "--prompts", str(prompts)],
                          capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={**cli_env(sqlite_url), "PATH": fake_path(), "FAKE_CODEX_LOGGED_OUT": "1"})
    assert done.returncode == 2, done.stderr
    alpha, beta = json_lines(done.stdout)
    assert alpha["ok"] and alpha["version"] == "2.1.197 (Claude Code)"
    assert not beta["ok"] and beta["error"].startswith("codex is not signed in: run `codex login`")


def test_run_check_warns_of_an_option_the_clis_help_does_not_name(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    write_lane(prompts, "alpha/basic", f'provider = "claude"\nsign_in = "owner@example.com"\nbound = {BOUND}\n'
               'args = ["--model", "sonnet", "--no-such-option"]\n', {"scan": {"a.md": "x"}})
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    done = subprocess.run([*CLI, "--journal", sqlite_url, "run", "--check", "--prompts", str(prompts)],
                          capture_output=True, text=True, env={**cli_env(sqlite_url), "PATH": fake_path()},
                          cwd=REPO, timeout=60)
    [alpha] = json_lines(done.stdout)
    assert alpha["ok"] and "does not name --no-such-option (from args in lane.toml)" in alpha["warning"]
    assert "--model" not in alpha["warning"]


def test_an_account_a_providers_message_stopped_holds_its_other_lanes_tonight_with_nothing_sent(
        sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    codex_lane(prompts, "beta/basic", "spend-cap", "normal")
    codex_lane(prompts, "gamma/basic", "normal")
    record(schedule, lanes_commission(("beta", "review", "chatgpt"), ("gamma", "review", "chatgpt")))
    environment = cli_env(sqlite_url, FAKE_PROVIDER_LOG=str(tmp_path / "contacts.log"))
    environment["PATH"] = fake_path(environment["PATH"])
    for lane in ("beta/basic", "gamma/basic"):  # one after the other, as a night's slots come
        done = subprocess.run([*CLI, "--journal", sqlite_url, "tick", "--ttl", "1", "--lane", lane, "--", *CLI,
                               "run", "--prompts", str(prompts)], capture_output=True, text=True,
                              env=environment, cwd=REPO, timeout=180)
        assert done.returncode == 0, (done.stdout, done.stderr)
    assert contacts(tmp_path) == ["Review part 1. [transcript: spend-cap]"]  # gamma sent nothing
    gamma = occurrence_of(schedule, "gamma/basic")
    assert (gamma.calls, gamma.settlement.status) == ([], "unavailable")
    assert gamma.settlement.reason.startswith("held: the provider stopped the chatgpt account on discovery/beta/")
    assert "spend cap" in gamma.settlement.reason
    # The owner records the account again (the plan or spend cap fixed): the stop no longer holds.
    view = schedule.read()
    assert view is not None
    assert stopped_by_provider(view, {"chatgpt"}, SystemClock().now()) is not None
    schedule.record_account(account="chatgpt", sequence=2, sign_in="owner@example.com", overage=False,
                            recorded_by="owner")
    view = schedule.read()
    assert view is not None and stopped_by_provider(view, {"chatgpt"}, SystemClock().now()) is None
