"""Health's LaunchAgent checks: the installed plist against what `launchd install` writes (program
arguments, `--detach`, the journal in EnvironmentVariables, runnable programs), and whether launchd has it
loaded (on a Mac; elsewhere an information finding that says why it cannot be checked).

Each plist is written by the real `launchd install` into tmp_path, then drifted by hand.
"""

from __future__ import annotations

import json
import plistlib
import sys
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import ManualClock
from factory_schedule.tui.host import health
from factory_schedule.tui.host.launch_agent import launchctl_loaded
from tests.owner_support import protect
from tests.tui.runner_support import cli

from .test_health import HOST, _commission, _commissioned

ZONE = "Europe/London"


def _agent_kinds(report: health.HealthReport) -> list[str]:
    return sorted(f.kind for f in report.findings if f.kind.startswith("launch-agent"))


@pytest.fixture
def installed(world: tuple[Any, Any, ManualClock], tmp_path: Path) -> Path:
    """The plist `launchd install` writes for this journal (protected by an owner key), with a runner that exists."""
    _commissioned(world)
    journal = world[0]
    protect(journal, world[2])
    runner = tmp_path / "runner.sh"
    runner.write_text("#!/bin/sh\nexit 0\n")
    runner.chmod(0o755)
    commission = tmp_path / "commission.json"
    commission.write_text(json.dumps(_commission()))
    plist = tmp_path / "agent.plist"
    code, _out, err = cli(journal.url, "launchd", "install", "--commission", str(commission), "--output",
                          str(plist), "--host-zone", ZONE, "--", str(runner))
    assert code == 0, err
    return plist


def _check(world: tuple[Any, Any, ManualClock], plist: Path,
           loaded: Any = lambda _label: (True, None)) -> health.HealthReport:
    journal, schedule, clock = world
    clock.set("2026-12-07T01:00:00Z")
    return health.check_health(journal, schedule, clock.now(), HOST, health.HealthScope(launch_agent=str(plist)),
                               zone=ZONE, alive=lambda _pid: False, loaded=loaded)


def _drift(plist: Path, change: Any) -> None:
    document = plistlib.loads(plist.read_bytes())
    change(document)
    plist.write_bytes(plistlib.dumps(document))


def test_the_agent_launchd_install_writes_is_healthy_when_loaded(world: Any, installed: Path) -> None:
    report = _check(world, installed)
    assert _agent_kinds(report) == [] and report.healthy, report.findings


def test_an_agent_without_detach_is_reported(world: Any, installed: Path) -> None:
    _drift(installed, lambda d: d["ProgramArguments"].remove("--detach"))
    assert _agent_kinds(_check(world, installed)) == ["launch-agent-no-detach"]


def test_an_agent_that_names_another_journal_is_reported_without_its_password(world: Any, installed: Path) -> None:
    other = "postgresql+psycopg://owner:s3cret@db.example/factory"
    _drift(installed, lambda d: d["EnvironmentVariables"].update(FACTORY_JOURNAL=other))
    report = _check(world, installed)
    [finding] = [f for f in report.findings if f.kind == "launch-agent-journal-drift"]
    assert "s3cret" not in repr(finding) and "db.example" in finding.message


def test_the_same_journal_spelled_another_way_is_not_drift(world: Any, installed: Path) -> None:
    path = world[0].url.removeprefix("sqlite:///")
    roundabout = str(Path(path).parent / "." / Path(path).name)
    _drift(installed, lambda d: d["EnvironmentVariables"].update(FACTORY_JOURNAL=f"sqlite:///{roundabout}"))
    assert _agent_kinds(_check(world, installed)) == []


def test_an_agent_with_no_journal_is_reported(world: Any, installed: Path) -> None:
    _drift(installed, lambda d: d["EnvironmentVariables"].pop("FACTORY_JOURNAL"))
    assert _agent_kinds(_check(world, installed)) == ["launch-agent-no-journal"]


def test_an_agent_whose_runner_is_gone_or_that_runs_no_tick_is_reported(world: Any, installed: Path,
                                                                          tmp_path: Path) -> None:
    (tmp_path / "runner.sh").unlink()
    assert _agent_kinds(_check(world, installed)) == ["launch-agent-program-missing"]
    _drift(installed, lambda d: d.update(ProgramArguments=[sys.executable, "-c", "pass"]))
    assert _agent_kinds(_check(world, installed)) == ["launch-agent-not-tick"]


def test_an_agent_launchd_has_not_loaded_is_an_error(world: Any, installed: Path) -> None:
    report = _check(world, installed, loaded=lambda _label: (False, None))
    [finding] = [f for f in report.findings if f.kind == "launch-agent-not-loaded"]
    assert finding.severity == "error" and finding.evidence["label"] == "com.factory-schedule.tick"


def test_where_loading_cannot_be_checked_health_says_why_and_stays_healthy(world: Any, installed: Path) -> None:
    report = _check(world, installed, loaded=launchctl_loaded)
    if sys.platform == "darwin":
        pytest.skip("on a Mac launchctl answers")
    [finding] = [f for f in report.findings if f.kind == "launch-agent-loaded-unchecked"]
    assert finding.severity == "info" and sys.platform in finding.evidence["reason"]
    assert report.healthy


def test_drift_in_intervals_and_program_is_reported_together(world: Any, installed: Path) -> None:
    def change(document: dict[str, Any]) -> None:
        document["StartCalendarInterval"] = [{"Hour": 3, "Minute": 0}]
        document["ProgramArguments"].remove("--detach")

    _drift(installed, change)
    assert _agent_kinds(_check(world, installed)) == ["launch-agent-drift", "launch-agent-no-detach"]

