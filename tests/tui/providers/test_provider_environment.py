"""The provider gets nothing of the factory: it starts with an allow-listed environment, so a provider whose
prompt was injected cannot reach the journal, the runner token or any FACTORY_* variable through it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.store import open_journal
from factory_schedule.tui.cli.output import PIPELINE_EXIT_CODES
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.provider_environment import COMMON_NAMES, provider_environment
from factory_schedule.tui.host.providers.prompts import BindingError, load_lane
from tests.tui.host.test_run import BOUND, lanes_commission, record, write_lane
from tests.tui.provider_support import FAKES, fake_path
from tests.tui.runner_support import CLI, REPO, cli_env, json_lines

NAMES = st.sampled_from([*COMMON_NAMES, "LC_ALL", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "FACTORY_JOURNAL",
                         "FACTORY_RUNNER", "FACTORY_OWNER_PASSPHRASE", "factory_journal", "ANTHROPIC_API_KEY",
                         "OPENAI_API_KEY", "PYTHONPATH", "SECRET", "AWS_SECRET_ACCESS_KEY"])


@given(base=st.dictionaries(NAMES, st.text(max_size=8)), extra=st.lists(NAMES, max_size=4),
       provider=st.sampled_from(["claude", "codex", None]))
def test_a_provider_environment_holds_only_allow_listed_names_and_never_a_factory_variable(
        base: dict[str, str], extra: list[str], provider: str | None) -> None:
    started_with = provider_environment(base, provider, extra)
    own = {"claude": {"CLAUDE_CONFIG_DIR"}, "codex": {"CODEX_HOME"}}.get(provider or "", set())
    for name, value in started_with.items():
        assert not name.upper().startswith("FACTORY_")
        assert name in COMMON_NAMES or name.startswith("LC_") or name in own or name in extra
        assert base[name] == value
    assert {n for n in base if n in COMMON_NAMES} <= set(started_with)


def test_a_lane_that_lists_a_factory_variable_for_its_provider_is_refused(tmp_path: Path) -> None:
    write_lane(tmp_path, "alpha/basic", f'provider = "claude"\nsign_in = "owner@example.com"\nbound = {BOUND}\n'
               'env = ["FACTORY_JOURNAL"]\n', {"scan": {"10-a.md": "Scan.\n"}})
    tasks = [{"task": "scan", "account": "claude", "maxCalls": 4, "callBound": BOUND}]
    with pytest.raises(BindingError, match="env: FACTORY_JOURNAL: a factory variable never reaches a provider"):
        load_lane(tmp_path, "alpha/basic", tasks, which=lambda name: name)


def _as_an_ordinary_user() -> list[str]:
    """The words that start a command without root's capabilities, so it, and every process it starts, may
    read of another process only what any process of the owner's user may (nothing when not root)."""
    return ["setpriv", "--inh-caps=-all", "--bounding-set=-all"] if os.geteuid() == 0 else []


def _attacked_night(sqlite_url: str, tmp_path: Path, prompt: str, owner_key: bool = False,
                    started_with: tuple[str, ...] = ()) -> tuple[list[dict], PipelineLanes, int]:
    """A night whose one call reaches the attacking stand-in `claude`, run by `tick -- factory-schedule run`."""
    journal = open_journal(sqlite_url)
    from factory_schedule.core import LifecycleSchedule

    schedule = LifecycleSchedule(journal, SystemClock())
    commission = lanes_commission(("alpha", "scan", "claude")) | {"pipeline": {"threshold": 1}}
    record(schedule, commission)
    lanes = PipelineLanes(journal, SystemClock())
    lanes.record_settings(commission)
    before = journal.head("pipeline/lanes")
    prompts = tmp_path / "prompts"
    write_lane(prompts, "alpha/basic", f'provider = "claude"\nsign_in = "owner@example.com"\nbound = {BOUND}\n'
               f'executable = "{FAKES / "claude_attacker"}"\ntimeout_minutes = 1\nenv = ["ATTACK_LOG"]\n',
               {"scan": {"10-scan.md": prompt}})
    home = tmp_path / "home"
    home.mkdir()
    log = tmp_path / "attack.log"
    environment = cli_env(sqlite_url, ATTACK_LOG=str(log), HOME=str(home), FACTORY_OWNER_PASSPHRASE="s3cret",
                          XDG_DATA_HOME=str(tmp_path / "data"))
    environment["PATH"] = fake_path(environment["PATH"])
    if owner_key:  # the owner's key, sealed in the data folder the provider can read as the same user
        secret = tmp_path / "passphrase"
        secret.write_text("owner passphrase\n")
        with secret.open() as handle:
            made = subprocess.run([*CLI, "--journal", sqlite_url, "owner", "init", "--passphrase-fd",
                                   str(handle.fileno())], capture_output=True, text=True, env=environment, cwd=REPO,
                                  timeout=120, pass_fds=(handle.fileno(),), start_new_session=True)
        assert made.returncode == 0, made.stderr
        before = journal.head("pipeline/lanes")
    done = subprocess.run([*started_with, *CLI, "--journal", sqlite_url, "tick", "--ttl", "5", "--", *CLI, "run",
                           "--prompts",
                           str(prompts)], capture_output=True, text=True, env=environment, cwd=REPO, timeout=300,
                          start_new_session=True)  # unattended, as launchd starts it: no terminal
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert json_lines(done.stdout)
    return [json.loads(line) for line in log.read_text().splitlines()], lanes, before


def test_a_provider_started_by_run_gets_no_factory_variable_and_its_attack_reaches_no_journal(
        sqlite_url: str, tmp_path: Path) -> None:
    [attack], lanes, before = _attacked_night(sqlite_url, tmp_path, "Summarise the repository.\n")
    environment = attack["environment"]
    assert not [name for name in environment if name.upper().startswith("FACTORY_")], environment
    assert not [name for name, value in environment.items() if sqlite_url in value or "s3cret" in value]
    assert [(step["command"], step["exit"]) for step in attack["inherited"]] == [
        ("approval-request", 3), ("approval-decide", 3), ("approval-use", 3)]  # no journal to write to
    assert lanes.journal.head("pipeline/lanes") == before
    state = lanes.state()
    assert state is not None and state.approvals == ()
    assert os.listdir(tmp_path / "home") in ([], [".local"])  # nothing created but an empty data folder


@pytest.mark.skipif(not sys.platform.startswith("linux") or (os.geteuid() == 0 and not shutil.which("setpriv")),
                    reason="reads /proc as an ordinary user of Linux")
def test_a_provider_cannot_read_the_factory_variables_of_the_runner_or_the_tick_that_started_it(
        sqlite_url: str, tmp_path: Path) -> None:
    """The allow-list keeps FACTORY_* out of the provider's own environment; its runner's and the tick's
    environment (the journal's URL, the runner token) must stay out of its reach through /proc as well."""
    [attack], _lanes, _before = _attacked_night(sqlite_url, tmp_path, "Summarise the repository.\n",
                                                started_with=tuple(_as_an_ordinary_user()))
    runner, tick = attack["ancestors"][:2]
    assert (runner["readable"], runner["factory"]) == (False, []), attack["ancestors"]
    assert (tick["readable"], tick["factory"]) == (False, [])


def test_a_provider_that_knows_the_journal_cannot_decide_or_use_an_approval_in_a_journal_with_an_owner_key(
        sqlite_url: str, tmp_path: Path) -> None:
    """The attack with the journal's URL (guessed, or injected with the prompt): the request is a run's own
    record, but deciding it needs the owner's passphrase, so no approval exists to use."""
    [attack], lanes, before = _attacked_night(sqlite_url, tmp_path, f"Summarise. [journal: {sqlite_url}]\n",
                                              owner_key=True)
    named = {step["command"]: step for step in attack["named"]}
    assert named["approval-request"]["exit"] == 0  # a run may ask; only the owner decides
    decided = named["approval-decide"]
    assert decided["exit"] == 2 and "passphrase" in json.loads(decided["answer"])["message"]
    assert named["approval-use"]["exit"] == PIPELINE_EXIT_CODES["APPROVAL_REQUIRED"]
    state = lanes.state()
    assert state is not None
    [request] = state.approvals
    assert (request.id, request.approved, request.used_at) == ("stolen-1", None, None)
    assert lanes.journal.head("pipeline/lanes") == before + 1  # the request alone


def test_no_owner_write_a_provider_attempts_with_the_journals_url_reaches_a_journal_with_an_owner_key(
        sqlite_url: str, tmp_path: Path) -> None:
    """Every other owner write (an account record, a commission revision with its settings, an escalation, a
    new key by init, rotate or recover with guessed secrets, health's repairs) is refused, and the owner's
    records and key are as they were."""
    from factory_schedule.core import SCHEDULE_AGGREGATE
    from factory_schedule.core.owner import OWNER_AGGREGATE

    [attack], lanes, _before = _attacked_night(sqlite_url, tmp_path,
                                               f"Summarise. [journal: {sqlite_url}] [owner-writes]\n", owner_key=True)
    tried = {step["command"]: step for step in attack["owner_writes"]}
    assert len(attack["owner_writes"]) == 8 and set(tried) >= {"record-account", "record-commission",
                                                                "lanes escalation", "owner init", "owner rotate",
                                                                "owner recover", "health --repair"}
    refused = [step for step in attack["owner_writes"] if step["command"] != "health --repair"]
    assert all(step["exit"] != 0 for step in refused), refused
    journal = lanes.journal
    assert journal.head(OWNER_AGGREGATE) == 1  # the owner's own init alone
    schedule = json.loads(journal.load_text(SCHEDULE_AGGREGATE)[1] or "{}")
    assert "evil@example.com" not in json.dumps(schedule)
    state = lanes.state()
    assert state is not None and state.settings_revision == 1
    assert not list((tmp_path / "data" / "factory-schedule").glob("*.new"))  # a refused new key leaves no file
