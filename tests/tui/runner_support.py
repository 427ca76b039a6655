"""Shared by the CLI, tick and health tests: a commission whose lane is due now, and the CLI as a process.

The CLI reads the system clock, so no test can set it. Instead each commission
uses a fixed-offset zone chosen so the local time is early morning: the lane's
slot is this very minute, its window closes hours later on the same local date,
and no test runs near local midnight whatever the UTC time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pendulum

from .provider_support import FAKE_SETTINGS

REPO = Path(__file__).resolve().parents[2]
FAKE_PROVIDER = REPO / "examples" / "fake_provider.py"
EXAMPLE_RUNNER = REPO / "examples" / "example_runner.sh"
LOCAL_HOUR_TARGET = 6


# The command line as a process, from this interpreter: what `factory-schedule` runs.
CLI = (sys.executable, "-m", "factory_schedule.tui.cli")


def zone_for_early_morning(now: pendulum.DateTime) -> str:
    """An Etc/GMT zone in which it is about 06:00 now (Etc/GMT-8 is UTC+8: the sign is POSIX's)."""
    offset = (LOCAL_HOUR_TARGET - now.hour) % 24
    if offset > 14:
        offset -= 24
    return "Etc/UTC" if offset == 0 else f"Etc/GMT{-offset:+d}"


def commission_due_now(
    product: str = "alpha",
    tasks: list[dict[str, Any]] | None = None,
    deadline_minutes: int = 120,
    weekly_tokens: int = 40_000_000,
    revision: int = 1,
) -> dict[str, Any]:
    """A one-lane commission (alpha/basic) whose slot is the current minute."""
    now = pendulum.now("UTC")
    zone = zone_for_early_morning(now)
    local = now.in_timezone(zone)
    return {
        "protocol": "sf-schedule-commission/1",
        "revision": revision,
        "zone": zone,
        "effectiveFrom": local.to_date_string(),
        "weeklyTokens": weekly_tokens,
        "recordMaxAgeDays": 30,
        "lanes": [
            {
                "lane": f"{product}/basic",
                "product": product,
                "rhythm": "basic",
                "time": local.format("HH:mm"),
                "closes": "16:00",
                "deadlineMinutes": deadline_minutes,
                "tasks": tasks
                or [{"task": "scan", "account": "claude", "maxCalls": 4, "callBound": 150000}],
            }
        ],
    }


def cli_env(journal_url: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["FACTORY_JOURNAL"] = journal_url
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["FACTORY_SCHEDULE"] = f"{sys.executable} -m factory_schedule.tui.cli"
    env["PROVIDER_ENV"] = " ".join(FAKE_SETTINGS)  # the example runners pass the fake provider its settings
    env.update(extra)
    return env


def cli(
    journal_url: str, *args: str, stdin: str | None = None, timeout: float = 60, **env: str
) -> tuple[int, Any, str]:
    """Run `factory-schedule ARGS` as a process; (exit code, the last stdout line as JSON or text, stderr)."""
    completed = subprocess.run(
        [*CLI, "--journal", journal_url, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=cli_env(journal_url, **env),
        cwd=REPO,
    )
    lines = [line for line in completed.stdout.splitlines() if line.strip()]
    try:
        document: Any = json.loads(lines[-1]) if lines else None
    except ValueError:
        document = completed.stdout
    return completed.returncode, document, completed.stderr


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]


def run_logs(lines: list[dict[str, Any]]) -> str:
    """What the tick's runners printed: their bounded log files, which each `segment_run` line names (a
    runner's output never reaches the tick's own stdout or stderr)."""
    logs = [line["segment_run"]["output"]["log"] for line in lines
            if "segment_run" in line and (line["segment_run"].get("output") or {}).get("log")]
    return "".join(Path(log).read_text(encoding="utf-8", errors="replace") for log in logs)


def commission_file(tmp_path: Path, commission: dict[str, Any]) -> Path:
    path = tmp_path / "commission.json"
    path.write_text(json.dumps(commission))
    return path


def provider_contacts(tmp_path: Path) -> list[str]:
    """The work keys the example runner's stand-in provider was contacted for, in order (its log)."""
    log = tmp_path / "provider.log"
    if not log.exists():
        return []
    return [json.loads(line)["work"] for line in log.read_text().splitlines() if line.strip()]


def wait_for(condition: Any, timeout: float = 90, what: str = "condition") -> Any:
    """Poll `condition` until it returns something true (returned), or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def commissioned_journal(url: str) -> Any:
    """A journal commissioned with a lane due now and a current claude record: what a night's runner meets."""
    from factory_schedule.core import LifecycleSchedule
    from factory_schedule.store import open_journal
    from factory_schedule.tui.host.clock import SystemClock

    journal = open_journal(url)
    schedule = LifecycleSchedule(journal, SystemClock())
    schedule.record_commission(commission_due_now())
    schedule.record_account(account="claude", sequence=1, sign_in="owner@example.com", overage=False,
                            recorded_by="owner")
    return journal


FAKE_NOTIFIER = """\
import json, os, sys
with open(os.environ["NOTIFY_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
sys.exit(int(os.environ.get("NOTIFY_EXIT", "0")))
"""


def fake_notifier(folder: Path) -> tuple[str, Path]:
    """A notification command that logs its arguments (to `NOTIFY_LOG`), and the log it writes."""
    script = folder / "notifier.py"
    script.write_text(FAKE_NOTIFIER)
    return f"{sys.executable} {script}", folder / "notified.log"


def notifications(log: Path) -> list[list[str]]:
    """What the fake notifier was called with, one argument list a call."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
