"""The README's five commands, run as written from an empty home, reach a preflight that passes and a first
tick that runs the lanes: a new owner needs nothing else (the stand-in `claude` from tests/fakes answers)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.tui.cli.preflight_support import zone_where_it_is_two_am
from tests.tui.provider_support import fake_path
from tests.tui.runner_support import cli_env

from .pages import blocks_named


def _shell(command: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=180, env=env, cwd=cwd)


def test_the_readmes_five_commands_reach_a_passing_preflight_and_a_tick_that_runs_the_lanes(tmp_path: Path) -> None:
    [five] = [block for block in blocks_named("five-commands") if block.page.name == "README.md"]
    [night] = [block for block in blocks_named("first-night") if block.page.name == "README.md"]
    commands = [line for line in five.code.splitlines() if line.strip()]
    assert len(commands) == 5 and all(line.startswith("factory-schedule ") for line in commands)
    (tmp_path / ".claude").mkdir()  # the stand-in claude, signed in as you, as a real one keeps its sign-in
    (tmp_path / ".claude" / "sign-in").write_text("you@example.com\n")
    env = cli_env("", HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "data"), TZ=zone_where_it_is_two_am(),
                  FACTORY_NOTIFY="true")
    del env["FACTORY_JOURNAL"]  # the README names none: the user data file under this home
    env["PATH"] = fake_path(env["PATH"])
    for command in commands:
        done = _shell(command, env, tmp_path)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    # Off a Mac the only warning is the scheduler's: the crontab has no tick until the README's next step adds it.
    lines = done.stdout.splitlines()
    assert lines[0] == "Tonight will run; the warnings below are worth a minute.", done.stdout
    assert [line.split(":")[0].strip() for line in lines if line.strip().startswith(("warn", "NO"))] == [
        "warn scheduler"], lines
    env["FAKE_CRONTAB"] = f"*/10 * * * * {night.code}"
    checked = _shell(commands[-1], env, tmp_path)
    assert checked.stdout.splitlines()[0] == "Tonight will run: every check passed.", checked.stdout
    ticked = _shell(night.code, env, tmp_path)
    assert ticked.returncode == 0, ticked.stdout + ticked.stderr
    runs = [json.loads(line)["segment_run"] for line in ticked.stdout.splitlines()
            if line.startswith("{") and "segment_run" in line]
    assert {run["lane"] for run in runs} >= {"alpha/basic"} and all(run["verdict"] == "ended" for run in runs)
    sent = [json.loads(line)["prompt"] for line in (tmp_path / ".claude" / "contacts.log").read_text().splitlines()]
    assert any("Product alpha" in prompt for prompt in sent)
    assert not os.path.exists(tmp_path / "journal.db")  # the journal is the user data file, not the folder's
