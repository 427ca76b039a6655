"""The real CLIs guide's setup works as written, against the fake `claude` on PATH.

Its two runnable shell blocks (`real-clis-setup`, `real-clis-launchd`) run verbatim under bash in a fresh
HOME, in a folder holding a commission whose lane is due now (the page's `commission.json` is the owner's).
"""

from __future__ import annotations

import json
import os
import plistlib
import subprocess
import sys
from pathlib import Path

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import open_journal
from factory_schedule.tui.host.clock import SystemClock
from tests.tui.provider_support import FAKES
from tests.tui.runner_support import REPO, commission_due_now

from .pages import blocks_named


def shell(script: str, cwd: Path, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("FACTORY_")}
    environment.update(HOME=str(home), PATH=os.pathsep.join([str(FAKES), str(Path(sys.executable).parent),
                                                             "/usr/bin", "/bin"]),
                       CLAUDE_CONFIG_DIR=str(cwd), **env)  # the fake logs its contacts in its config folder
    environment["PYTHONPATH"] = str(REPO)
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=180)


def test_the_real_clis_guide_sets_up_a_lane_and_runs_a_night_as_written(tmp_path: Path) -> None:
    [setup] = [block.code for block in blocks_named("real-clis-setup")]
    [install] = [block.code for block in blocks_named("real-clis-launchd")]
    home = tmp_path / "home"
    home.mkdir()
    commission = commission_due_now()
    (tmp_path / "commission.json").write_text(json.dumps(commission))

    done = shell(setup, tmp_path, home)
    assert done.returncode == 0, (done.stdout, done.stderr)
    check = [json.loads(line) for line in done.stdout.splitlines() if '"ok"' in line]
    assert check == [{**check[0], "lane": "alpha/basic", "ok": True}]
    schedule = LifecycleSchedule(open_journal(f"sqlite:///{home}/factory/journal.db"), SystemClock())
    view = schedule.read()
    assert view is not None
    [occurrence] = view.occurrences
    assert schedule.status(occurrence.id).status == "completed"
    assert [json.loads(line)["prompt"] for line in (tmp_path / "contacts.log").read_text().splitlines()] == [
        "Scan the repository for unused code.", "List outdated dependencies."]

    # The owner goes on in the same shell, where the first block exported FACTORY_JOURNAL.
    done = shell(setup.split("factory-schedule record-commission")[0] + install, tmp_path, home,
                 TZ=commission["zone"])
    assert done.returncode == 0, (done.stdout, done.stderr)
    plist = home / "Library" / "LaunchAgents" / "com.factory-schedule.tick.plist"
    agent = plistlib.loads(plist.read_bytes())
    assert agent["ProgramArguments"][-4:] == [str(Path(sys.executable).parent / "factory-schedule"), "run", "--prompts",
                                              f"{home}/factory/prompts"]
    assert agent["EnvironmentVariables"]["FACTORY_JOURNAL"] == f"sqlite:///{home}/factory/journal.db"
    assert plist.stat().st_mode & 0o777 == 0o600
