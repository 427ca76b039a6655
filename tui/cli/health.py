"""`factory-schedule health [--repair] [--json] [--plist PATH] [--grace MINUTES]`.

Exit status: 0 healthy, 1 findings, 2 could not check (the journal would not
open, or a check failed to run). `--repair` first removes stale leases that guard
nothing running any more and lists each removal; it changes no decision.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from factory_schedule.store import JournalError, open_journal
from factory_schedule.tui.cli.launchd_install import DEFAULT_LABEL
from factory_schedule.tui.cli.runner import SystemClock, emit, journal_url_of, open_schedule, to_jsonable
from factory_schedule.tui.host import health
from factory_schedule.tui.host.segments import this_host


def _print_text(report: health.HealthReport) -> None:
    for repair in report.repairs:
        print(f"repaired: {repair.message}")
    for problem in report.could_not_check:
        print(f"could not check: {problem}")
    for finding in report.findings:
        print(f"{finding.severity}: [{finding.kind}] {finding.message}")
        if finding.kind == "dead-runner":
            confirmation = finding.evidence.get("confirmation", {})
            print(
                f"  to confirm: factory-schedule reconcile --occurrence {finding.evidence.get('occurrence')} "
                f"--runner {confirmation.get('runner')} --confirmed-by YOU --evidence '{confirmation.get('evidence')}'"
            )
    if report.healthy:
        print(f"healthy ({report.checked_at.isoformat()}, {report.host})")


def _health(args: argparse.Namespace) -> int:
    clock = SystemClock()
    try:
        url = journal_url_of(args)
        journal = open_journal(url)
        schedule = open_schedule(url, clock, journal)
    except JournalError as error:
        if args.json:
            emit({"healthy": False, "could_not_check": [str(error)], "findings": [], "repairs": []})
        else:
            print(f"could not check: {error}")
        return health.COULD_NOT_CHECK
    host = this_host()
    repairs: list[health.Repair] = []
    if args.repair:
        try:
            repairs = health.repair_stale_leases(journal, schedule, clock.now(), host)
        except Exception as error:
            report = health.HealthReport(clock.now(), host, (), (), (f"repair: {error}",))
            emit(_as_json(report)) if args.json else _print_text(report)
            return health.COULD_NOT_CHECK
    report = health.check_health(journal, schedule, clock.now(), host, args.plist or _installed_agent(), args.grace)
    report = health.HealthReport(report.checked_at, report.host, report.findings, tuple(repairs),
                                 report.could_not_check)
    if args.json:
        emit(_as_json(report))
    else:
        _print_text(report)
    return report.exit_code


def _installed_agent() -> str | None:
    """The LaunchAgent `launchd install` suggests, when it is installed in the usual place."""
    path = os.path.expanduser(f"~/Library/LaunchAgents/{DEFAULT_LABEL}.plist")
    return path if os.path.exists(path) else None


def _as_json(report: health.HealthReport) -> dict[str, Any]:
    return {**to_jsonable(report), "healthy": report.healthy, "exit": report.exit_code}


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser("health", help="the supervisor's check (exit 0 healthy, 1 findings, 2 could not)")
    parser.add_argument("--repair", action="store_true",
                        help="remove stale leases whose segment is no longer running (changes no decision)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    parser.add_argument("--plist", metavar="PATH",
                        help="the installed LaunchAgent to compare with the commission "
                        f"(default: ~/Library/LaunchAgents/{DEFAULT_LABEL}.plist when it exists)")
    parser.add_argument("--grace", type=float, default=health.DEFAULT_GRACE_MINUTES, metavar="MINUTES",
                        help="how late a lane may start before it is reported "
                        f"(default {health.DEFAULT_GRACE_MINUTES})")
    parser.set_defaults(handler=_health)
