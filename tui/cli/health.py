"""What `health` does: the supervisor's check over a journal, with `--repair` the reconciler's repairs."""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factory_schedule.core import SCHEDULE_AGGREGATE
from factory_schedule.core.health import ProviderReach, provider_write_findings
from factory_schedule.store import JournalError, open_journal
from factory_schedule.tui.cli.journal import journal_url_of, missing_journal, schedule_over
from factory_schedule.tui.cli.output import JournalRefused, emit, printable, say, shell_command, to_jsonable
from factory_schedule.tui.cli.parsers.launchd_install import DEFAULT_LABEL
from factory_schedule.tui.cli.run import _stages
from factory_schedule.tui.host import bindings, health
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.environment import ENV_PROMPTS
from factory_schedule.tui.host.notify import notify_owner, state_path
from factory_schedule.tui.host.paths import sqlite_file_of
from factory_schedule.tui.host.process_identity import this_host
from factory_schedule.tui.host.providers.prompts import BindingError, lane_tasks, load_lane

if TYPE_CHECKING:
    from factory_schedule.core import Clock, LifecycleSchedule
    from factory_schedule.core.health import Finding, HealthReport, Repair
    from factory_schedule.store import Journal

COULD_NOT_CHECK = 2


def _print_text(report: HealthReport) -> None:
    for repair in report.repairs:
        say(f"repaired: {printable(repair.message)}")
    for problem in report.could_not_check:
        say(f"could not check: {printable(problem)}")
    for finding in report.findings:
        say(f"{finding.severity}: [{printable(finding.kind)}] {printable(finding.message)}")
        if finding.kind == "dead-runner":
            confirmation = finding.evidence.get("confirmation", {})
            command = shell_command(
                "factory-schedule", "reconcile", "--occurrence", finding.evidence.get("occurrence"),
                "--runner", confirmation.get("runner"), "--confirmed-by", "YOU",
                "--evidence", confirmation.get("evidence"))
            say(f"  to confirm: {command}")
    if report.healthy:
        say(f"healthy ({report.checked_at.isoformat()}, {printable(report.host)})")


def _as_json(report: HealthReport) -> dict[str, Any]:
    """The report as one object; `verified` says whether every aggregate's whole hash chain checked out,
    `verified_through` how far the schedule's did, and `verified_chains` how far each aggregate's did."""
    document = to_jsonable(report)
    chains = report.verified
    document["verified"] = chains is not None
    document["verified_through"] = chains[SCHEDULE_AGGREGATE].version if chains else None
    document["verified_chains"] = {name: point.version for name, point in chains.items()} if chains else {}
    return {**document, "healthy": report.healthy, "exit": report.exit_code}


def _could_not_check(args: argparse.Namespace, problem: str) -> int:
    if args.json:
        emit({"healthy": False, "verified": False, "could_not_check": [problem], "findings": [], "repairs": [],
              "exit": COULD_NOT_CHECK})
    else:
        say(f"could not check: {printable(problem)}")
    return COULD_NOT_CHECK


def check_health_command(args: argparse.Namespace) -> int:
    try:
        url = journal_url_of(args)
    except JournalRefused as refused:  # a path where the URL belongs: health could not check, as it says of any
        return _could_not_check(args, str(refused))
    missing = missing_journal(url)
    if missing is not None:
        return _could_not_check(args, missing)
    clock = SystemClock()
    try:
        journal = open_journal(url)
    except JournalError as error:
        return _could_not_check(args, str(error))
    schedule = schedule_over(journal, clock)
    host = this_host()
    repairs: list[Repair] = []
    if args.repair:
        try:
            repairs = health.repair(journal, schedule, clock.now(), host)
        except Exception as error:
            return _could_not_check(args, f"repair: {error}")
    prompts = args.prompts if args.prompts is not None else os.environ.get(ENV_PROMPTS) or None
    if args.repair and prompts:
        try:
            repairs += _repair_bindings(journal, schedule, prompts, clock, host)
        except Exception as error:
            return _could_not_check(args, f"repairing prompt bindings: {error}")
    scope = health.HealthScope(chains=health.ChainCheck(keep=True), count_history=True,
                               launch_agent=args.plist or installed_agent(), grace_minutes=args.grace)
    report = health.check_health(journal, schedule, clock.now(), host, scope)
    findings = list(report.findings)
    could_not = list(report.could_not_check)
    if prompts:
        try:
            findings += _binding_findings(journal, schedule, prompts)
        except Exception as error:
            could_not.append(f"prompt bindings: {type(error).__name__}: {error}")
        try:
            findings += _provider_write_findings(url, schedule, prompts)
        except Exception as error:
            could_not.append(f"providers' write access: {type(error).__name__}: {error}")
    report = health.HealthReport(report.checked_at, report.host, tuple(findings), tuple(repairs),
                                 tuple(could_not), report.verified)
    told = notify_owner(report.findings, url, clock.now(), args.notify)
    if told.unremembered is not None:
        report = replace(report, findings=(*report.findings, *told.findings(state_path(url))))
    if args.json:
        emit({**_as_json(report), "notified": [to_jsonable(notice) for notice in told.sent],
              "notify_failed": list(told.failed), "notifier": list(told.notifier) if told.notifier else None,
              "notifier_off": told.why_none})
    else:
        _print_text(report)
        for notice in told.sent:
            say(f"notified: [{printable(notice.kind)}] {printable(notice.text)}")
        for problem in told.failed:
            say(f"could not notify: {printable(problem)}")
    return report.exit_code


def _provider_write_findings(url: str, schedule: LifecycleSchedule, prompts: str) -> list[Finding]:
    """Each lane whose provider may write the journal's folder (its lane.toml's arguments and workdir)."""

    view = schedule.read()
    if view is None:
        return []
    journal_file = sqlite_file_of(url)
    folder = Path(journal_file).resolve().parent if journal_file else None
    reaches = []
    for lane in sorted({entry["lane"] for entry in view.commission.get("lanes", [])}):
        try:
            binding = load_lane(Path(prompts).expanduser(), lane, lane_tasks(view.commission, lane),
                                stages=_stages(lane))
        except BindingError:
            continue  # an unusable binding is its own finding
        workdir = binding.workdir.resolve()
        holds = folder is not None and (folder == workdir or workdir in folder.parents)
        args = tuple(arg for task in binding.tasks for arg in task.args)
        reaches.append(ProviderReach(lane, binding.provider, args, holds))
    return provider_write_findings(reaches)


def _repair_bindings(journal: Journal, schedule: LifecycleSchedule, prompts: str, clock: Clock, host: str
                     ) -> list[Repair]:
    lanes = bindings.commission_lanes(schedule.read())
    return bindings.repair_bindings(journal, lanes, prompts, f"health-reconciler@{host}", clock.now())


def _binding_findings(journal: Journal, schedule: LifecycleSchedule, prompts: str) -> list[Finding]:
    lanes = bindings.commission_lanes(schedule.read())
    return bindings.binding_findings(bindings.check_bindings(journal, lanes, prompts))


def installed_agent() -> str | None:
    """The LaunchAgent `launchd install` suggests, when it is installed in the usual place."""
    path = os.path.expanduser(f"~/Library/LaunchAgents/{DEFAULT_LABEL}.plist")
    return path if os.path.exists(path) else None
