"""`factory-schedule health [--repair] [--json] [--plist PATH] [--grace MINUTES]`.

Exit status: 0 healthy, 1 findings, 2 could not check (no journal at the path,
the journal would not open, or a check failed to run). A journal with no
commission is never healthy: it is most often a mistyped path. `--repair` first
reconciles each dead runner whose process is provably gone from this host and
whose lease had no heartbeat for 2 x TTL (the engine's `reconcile`, confirmed by
health-reconciler@HOST), confirms each staged lane run gone on the same evidence
(`lanes abandon`: an interrupted revision counts as a failed start of its round),
removes leases that guard nothing running any more, and
writes the compact record of each scheduled firing that left none; each is
journaled and listed. It changes no decision a person made. Findings that need
the owner are sent once each to the notifier (`--notify`, $FACTORY_NOTIFY, or a
Mac's notification centre). With a prompt folder (`--prompts` or
$FACTORY_PROMPTS) each lane's prompt binding is checked too: drift is a warning,
and `--repair` records the binding now read only when it reads back whole and
stable; otherwise it records a blocker for the owner. Text output escapes whatever it shows from the journal, and
the `reconcile` line it suggests is shell-quoted.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from factory_schedule.tui.cli.journal import journal_url_of, missing_journal
from factory_schedule.tui.cli.options import minutes
from factory_schedule.tui.cli.output import emit, printable, say, shell_command, to_jsonable

if TYPE_CHECKING:
    from factory_schedule.core import Clock, LifecycleSchedule
    from factory_schedule.core.health import Finding, HealthReport, Repair
    from factory_schedule.store import Journal

DEFAULT_LABEL = "com.factory-schedule.tick"
ENV_PROMPTS = "FACTORY_PROMPTS"  # tui.host.bindings.ENV_PROMPTS (not imported: `--help` stays light)
DEFAULT_GRACE_MINUTES = 30  # core.health.DEFAULT_GRACE_MINUTES (not imported: `--help` stays light)
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
    from factory_schedule.core import SCHEDULE_AGGREGATE

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


def _health(args: argparse.Namespace) -> int:
    from factory_schedule.store import JournalError, open_journal
    from factory_schedule.tui.cli.journal import schedule_over
    from factory_schedule.tui.host import health
    from factory_schedule.tui.host.clock import SystemClock
    from factory_schedule.tui.host.process_identity import this_host

    url = journal_url_of(args)
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
    report = health.check_health(journal, schedule, clock.now(), host, args.plist or installed_agent(), args.grace,
                                 count_history=True, keep_checkpoint=True)
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
    from factory_schedule.tui.host.notify import notify_owner, state_path

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
    from pathlib import Path

    from factory_schedule.core.health import ProviderReach, provider_write_findings
    from factory_schedule.tui.cli.run import _stages
    from factory_schedule.tui.host.paths import sqlite_file_of
    from factory_schedule.tui.host.providers.prompts import BindingError, lane_tasks, load_lane

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
    from factory_schedule.tui.host import bindings

    lanes = bindings.commission_lanes(schedule.read())
    return bindings.repair_bindings(journal, lanes, prompts, f"health-reconciler@{host}", clock.now())


def _binding_findings(journal: Journal, schedule: LifecycleSchedule, prompts: str) -> list[Finding]:
    from factory_schedule.tui.host import bindings

    lanes = bindings.commission_lanes(schedule.read())
    return bindings.binding_findings(bindings.check_bindings(journal, lanes, prompts))


def installed_agent() -> str | None:
    """The LaunchAgent `launchd install` suggests, when it is installed in the usual place."""
    path = os.path.expanduser(f"~/Library/LaunchAgents/{DEFAULT_LABEL}.plist")
    return path if os.path.exists(path) else None


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "health", help="the supervisor's check (exit 0 healthy, 1 findings, 2 could not)", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repair", action="store_true",
                        help="reconcile dead runners on conclusive evidence, remove leases that guard nothing, "
                        "record missed firings; each journaled (changes no decision)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    parser.add_argument("--notify", metavar="COMMAND",
                        help="tell the owner of each finding that needs them, once, by running COMMAND with the "
                        "text as its last argument (default: $FACTORY_NOTIFY, else osascript on a Mac, else "
                        "none; an empty COMMAND turns it off)")
    parser.add_argument("--plist", metavar="PATH",
                        help="the installed LaunchAgent to compare with the commission "
                        f"(default: ~/Library/LaunchAgents/{DEFAULT_LABEL}.plist when it exists)")
    parser.add_argument("--prompts", metavar="FOLDER",
                        help="the owner's prompt folder: check each lane's prompt binding (source, resolved "
                        "path, normalized snapshot) against the one recorded; --repair records it when read back "
                        f"whole (default: ${ENV_PROMPTS}; none: not checked)")
    parser.add_argument("--grace", type=minutes, default=DEFAULT_GRACE_MINUTES, metavar="MINUTES",
                        help=f"how late a lane may start before it is reported (default {DEFAULT_GRACE_MINUTES})")
    parser.set_defaults(handler=_health)
