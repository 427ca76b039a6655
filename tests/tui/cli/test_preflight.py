"""`factory-schedule check`: whether tonight will run, lane by lane, each problem with the command that fixes it.

Every case runs the real command line as a process, with the stand-in `claude` from tests/fakes on PATH and
a fixed-offset zone in which it is now about 02:00, so the commission `commission new` proposes has its
lanes due tonight (the CLI reads the system clock; no test can set it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from factory_schedule.core import SCHEDULE_AGGREGATE
from factory_schedule.store import open_journal
from tests.tui.provider_support import FAKE_LANE_ENV, fake_path
from tests.tui.runner_support import CLI, REPO, cli_env

from .preflight_support import zone_where_it_is_two_am


class Owner:
    """An owner's shell: HOME in a temporary folder, the stand-in CLIs on PATH, the clock at about 02:00."""

    def __init__(self, home: Path, zone: str | None = None, **env: str) -> None:
        self.home = home
        self.journal = f"sqlite:///{home / 'journal.db'}"
        self.env = cli_env(self.journal, HOME=str(home), TZ=zone or zone_where_it_is_two_am(),
                           FAKE_PROVIDER_LOG=str(home / "provider.log"), **env)
        self.env["PATH"] = fake_path(self.env["PATH"])
        self.env.pop("FACTORY_NOTIFY", None)

    def __call__(self, *args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, *args], input=stdin, capture_output=True, text=True, timeout=120,
                              env={**self.env, **env}, cwd=self.home)

    def set_up(self, weekly_tokens: str = "40000000", account: bool = True) -> None:
        made = self("commission", "new", "--products", "alpha,beta", "--weekly-tokens", weekly_tokens)
        assert made.returncode == 0, made.stderr
        (self.home / "commission.json").write_text(made.stdout)
        assert self("record-commission", "commission.json").returncode == 0
        if account:
            assert self("record-account", "--account", "claude", "--sequence", "1", "--sign-in", "owner@example.com",
                        "--overage", "off", "--recorded-by", "owner").returncode == 0
        assert self("prompts", "new", "prompts", "--sign-in", "owner@example.com").returncode == 0
        for lane_file in (self.home / "prompts").rglob("lane.toml"):  # the stand-in CLI's settings reach it
            lane_file.write_text(lane_file.read_text() + FAKE_LANE_ENV)

    def sent(self) -> int:
        log = self.home / "provider.log"
        return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.fixture(scope="module")
def set_up_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One owner's home, set up once (commission, account record, starter prompts) for the tests to copy."""
    home = tmp_path_factory.mktemp("set-up-home")
    Owner(home).set_up()
    return home


@pytest.fixture
def owner(tmp_path: Path) -> Owner:
    return Owner(tmp_path)


@pytest.fixture
def ready(set_up_home: Path, tmp_path: Path) -> Owner:
    """An owner whose factory is set up (a copy of the module's home: each test changes its own), in the zone
    its commission was made in: the hour may have turned since, and launchd refuses a host in another zone."""
    home = tmp_path / "home"
    shutil.copytree(set_up_home, home)
    return Owner(home, zone=json.loads((home / "commission.json").read_text())["zone"])


def _line(out: str, start: str) -> str:
    found = [line.strip() for line in out.splitlines() if line.strip().startswith(start)]
    assert found, out
    return found[0]


CRON_TICK = "*/10 * * * * /opt/fs/factory-schedule tick -- /opt/fs/factory-schedule run --prompts /p"


def test_a_set_up_factory_passes_every_check_with_the_stand_in_provider(ready: Owner) -> None:
    done = ready("check", "--prompts", "prompts", "--notify", "/bin/true",
                 FAKE_CRONTAB=f"# the owner's table\nFACTORY_JOURNAL=sqlite:////somewhere.db\n{CRON_TICK}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "Tonight will run: every check passed."
    assert f"ok   scheduler: cron fires the tick every few minutes: {CRON_TICK}" in done.stdout
    assert "ok   alpha/basic due now: claude 2.1.197 (Claude Code) at" in done.stdout
    assert "signed in as owner@example.com" in done.stdout
    assert "ok   beta/basic" in done.stdout and "ok   claude: record 1 is current" in done.stdout
    assert "ok   ceiling: tonight's bounds add up to " in done.stdout and "of the 40,000,000 tokens left" in done.stdout
    assert ready.sent() == 0  # the CLI was asked for its sign-in, never sent a prompt


def test_off_a_mac_with_no_tick_in_the_crontab_the_scheduler_is_a_warning_with_the_lines_to_add(
        ready: Owner) -> None:
    done = ready("check", "--prompts", "prompts", "--notify", "/bin/true")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warn scheduler: not a Mac, and no tick in your crontab" in done.stdout
    assert "*/10 * * * * /full/path/factory-schedule tick -- /full/path/factory-schedule run --prompts prompts" in (
        done.stdout)


def test_with_no_journal_the_preflight_names_the_commands_that_start_one_and_creates_nothing(owner: Owner) -> None:
    done = owner("check")
    assert done.returncode == 1
    assert "NO   commission: no commission is recorded" in done.stdout
    assert "factory-schedule record-commission commission.json" in done.stdout
    assert not (owner.home / "journal.db").exists()


def test_a_sign_in_the_runner_will_observe_that_is_not_the_records_names_both_and_the_fix(ready: Owner) -> None:
    done = ready("check", "--prompts", "prompts", FAKE_CLAUDE_EMAIL="someone@example.org")
    assert done.returncode == 1
    line = _line(done.stdout, "NO   alpha/basic")
    assert "'someone@example.org'" in line and "'owner@example.com'" in line and "overage-unverified" in line
    assert ("fix: factory-schedule record-account --account claude --sequence 2 --sign-in someone@example.org "
            "--overage off --recorded-by YOU") in done.stdout


def test_an_account_without_a_record_stops_the_night_and_names_record_account(owner: Owner) -> None:
    owner.set_up(account=False)
    done = owner("check", "--prompts", "prompts")
    assert done.returncode == 1 and "NO   claude: has no owner record" in done.stdout
    assert "factory-schedule record-account --account claude --sequence 1 --sign-in owner@example.com" in done.stdout


def test_a_signed_out_cli_stops_its_lanes_and_names_the_login(ready: Owner) -> None:
    done = ready("check", "--prompts", "prompts", FAKE_CLAUDE_LOGGED_OUT="1")
    assert done.returncode == 1 and "is not signed in" in _line(done.stdout, "NO   alpha/basic")
    assert "fix: claude auth login" in done.stdout


def test_a_lane_whose_prompts_are_missing_is_named_with_its_file(ready: Owner) -> None:
    (ready.home / "prompts" / "beta" / "basic" / "lane.toml").unlink()
    done = ready("check", "--prompts", "prompts")
    assert done.returncode == 1 and "lane.toml: missing" in _line(done.stdout, "NO   beta/basic")
    assert _line(done.stdout, "ok   alpha/basic")


def test_without_a_prompt_folder_the_lanes_are_a_warning_not_a_pass(ready: Owner) -> None:
    done = ready("check")
    assert "warn alpha/basic due now: its prompts, CLI and sign-in were not checked" in done.stdout


def test_a_week_with_too_few_tokens_left_for_any_call_stops_the_night(owner: Owner) -> None:
    owner.set_up(weekly_tokens="100000")
    done = owner("check", "--prompts", "prompts")
    assert done.returncode == 1 and "less than any of tonight's calls may use" in _line(done.stdout, "NO   ceiling")


def test_a_week_whose_tokens_do_not_cover_tonights_bounds_is_a_warning(owner: Owner) -> None:
    owner.set_up(weekly_tokens="1000000")
    done = owner("check", "--prompts", "prompts")
    assert "more than the 1,000,000 left" in _line(done.stdout, "warn ceiling")


def test_an_installed_launch_agent_that_fires_at_the_commissions_times_passes(ready: Owner) -> None:
    plist = ready.home / "agent.plist"
    runner = str(Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "factory-schedule")
    assert ready("launchd", "install", "--commission", "commission.json", "--output", str(plist), "--",
                 runner, "run", "--prompts", "prompts").returncode == 0
    done = ready("check", "--prompts", "prompts", "--plist", str(plist))
    assert f"ok   LaunchAgent: {plist} fires the tick" in done.stdout, done.stdout


def test_a_rehearsal_without_a_yes_sends_nothing(ready: Owner) -> None:
    done = ready("check", "--prompts", "prompts", "--rehearse", "alpha/basic", stdin="")
    assert done.returncode == 2 and "spends real tokens" in done.stdout and "nothing was sent" in done.stdout
    assert ready.sent() == 0


def test_a_rehearsal_of_a_lane_the_commission_does_not_have_is_refused_before_the_preflight_runs(
        ready: Owner) -> None:
    """The preflight asks every lane's CLI (seconds each with a real one): a mistyped lane is said first."""
    done = ready("check", "--prompts", "prompts", "--rehearse", "nope/lane", "--yes")
    assert done.returncode == 2 and "cannot rehearse nope/lane" in done.stdout
    assert "Tonight will" not in done.stdout  # no preflight ran
    assert ready.sent() == 0


def test_a_rehearsal_sends_the_lanes_first_unit_and_leaves_the_owners_journal_as_it_was(ready: Owner) -> None:
    head = open_journal(ready.journal).head(SCHEDULE_AGGREGATE)
    done = ready("check", "--prompts", "prompts", "--rehearse", "alpha/basic", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    ended = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")][-1]
    assert (ended["run"], ended["status"], ended["sent"]) == ("settled", "completed", 1)
    assert ready.sent() == 1 and open_journal(ready.journal).head(SCHEDULE_AGGREGATE) == head


def test_staged_lanes_on_older_settings_than_the_commission_in_force_are_named_with_the_repair(ready: Owner) -> None:
    """Revision 2 carries settings for the staged lanes and its second command, their settings, was lost."""
    import pendulum

    from factory_schedule.core import LifecycleSchedule, ManualClock
    from factory_schedule.store import open_journal

    document = json.loads((ready.home / "commission.json").read_text())
    revised = {**document, "revision": 2, "pipeline": {"threshold": 2}}
    journal = open_journal(ready.journal)
    LifecycleSchedule(journal, ManualClock(pendulum.now("UTC"))).record_commission(revised)
    journal.close()
    done = ready("check", "--prompts", "prompts", "--notify", "/bin/true")
    line = _line(done.stdout, "NO   pipeline-settings-behind")
    assert "commission revision 2 carries settings for the staged lanes, but they hold none" in line
    assert "record-commission FILE" in line
