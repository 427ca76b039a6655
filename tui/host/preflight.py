"""The preflight's probes: what tonight depends on, gathered from this host for `core.preflight` to judge.

It reads the journal (never writes it), asks health for its findings over the same journal and
LaunchAgent, reads each due lane's prompt binding as `run` will, asks each lane's CLI what `run --check`
asks it (`cli_probe.check_cli`: its version, the options a call uses, whether it is signed in) and for
its sign-in as `run` does before its first call (`session.probe`). No prompt is sent, nothing is spent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from factory_schedule.core import LanePlan, LifecycleSchedule, ScheduleView
from factory_schedule.core.health import Finding
from factory_schedule.core.preflight import LaneFacts, PreflightFacts, tonight
from factory_schedule.store import Journal
from factory_schedule.tui.host import health
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.notify import ENV_NOTIFY, notifier_command
from factory_schedule.tui.host.providers import prompts, session, stage_run
from factory_schedule.tui.host.providers.cli_probe import check_cli
from factory_schedule.tui.terminal_text import printable


def lane_facts(folder: Path, commission: dict[str, object], lane: str) -> LaneFacts:
    """The lane's binding, CLI and observed sign-in, as `factory-schedule run` would find them."""
    try:
        binding = prompts.load_lane(folder, lane, prompts.lane_tasks(commission, lane),
                                    stages=stage_run.lane_stages(lane))
    except prompts.BindingError as error:
        return LaneFacts(lane, binding_problem=str(error))
    cli = check_cli(binding.provider, binding.executable, [arg for task in binding.tasks for arg in task.args],
                    binding.workdir)
    status = session.probe(binding.provider, binding.executable, binding.workdir, passed=binding.env)
    return LaneFacts(lane, provider=binding.provider, executable=binding.executable, executable_found=True,
                     units=sum(len(task.units) for task in binding.tasks), logged_in=status.logged_in,
                     sign_in=session.observed_sign_in(status, binding.sign_in),
                     sign_in_from="cli" if status.sign_in else "lane.toml", from_path=binding.executable_from_path,
                     cli_version=cli.version, cli_problem=cli.problem, cli_warning=cli.warning)


def gather(journal: Journal | None, now: datetime, host: str, prompts: str | None, plist: str | None,
           notify: str | None) -> PreflightFacts:
    """Every fact the preflight judges; `journal` None when there is none at the path."""
    view: ScheduleView | None = None
    plans: list[LanePlan] = []
    findings: tuple[Finding, ...] = ()
    lanes: dict[str, LaneFacts] = {}
    if journal is not None:
        schedule = LifecycleSchedule(journal, SystemClock())
        report = health.check_health(journal, schedule, now, host, health.HealthScope(launch_agent=plist))
        findings = report.findings
        view = schedule.read()
        plans = schedule.plan()
        if view is not None and prompts is not None:
            folder = Path(os.path.expanduser(prompts))
            commission = dict(view.commission)
            lanes = {plan.lane: lane_facts(folder, commission, plan.lane) for plan in tonight(view, plans, now)}
    command, off = notifier_command(notify if notify is not None else os.environ.get(ENV_NOTIFY))
    mac = sys.platform == "darwin"
    return PreflightFacts(
        now=now, view=view, plans=plans, lanes=lanes, prompts=prompts, findings=findings, launch_agent=plist,
        launch_agent_expected=mac, notifier=" ".join(command) if command else None,
        notifier_off=off, cron_ticks=() if mac else cron_ticks())


def cron_ticks() -> tuple[str, ...] | None:
    """The lines of the owner's crontab (`crontab -l`) that run factory-schedule's tick, each as it is written; None
    when this host has no `crontab` to ask, () when there is no crontab or no such line. Off a Mac, what fires
    the night."""
    crontab = shutil.which("crontab")
    if crontab is None:
        return None
    try:
        listed = subprocess.run([crontab, "-l"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return ()
    if listed.returncode != 0:
        return ()
    ticks = []
    for line in listed.stdout.splitlines():
        words = line.split(" #", 1)[0].split()  # a comment after the command is not the command
        if words and not words[0].startswith("#") and "tick" in words and any(
                word.endswith("factory-schedule") for word in words):
            ticks.append(printable(line.strip()))
    return tuple(ticks)
