"""`factory-schedule dashboard`: the owner's live dashboard on a journal (also what no subcommand does).

On first use, with no journal named (no `--journal`, no $FACTORY_JOURNAL), the
dashboard starts the default journal file; a journal the owner names must exist.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from factory_schedule.tui.cli.journal import journal_url_of, missing_journal, named_journal
from factory_schedule.tui.cli.options import seconds
from factory_schedule.tui.cli.output import EXIT_BAD_INPUT, printable

DEFAULT_POLL_SECONDS = 0.5


def open_dashboard(journal_url: str, poll: float = DEFAULT_POLL_SECONDS, owner_minutes: float | None = None) -> int:
    """Run the dashboard until the owner quits; 2 when the journal cannot be opened."""
    from factory_schedule.store import JournalError
    from factory_schedule.tui.dashboard.app import SystemClock, build_app
    from factory_schedule.tui.dashboard.owner_signing import DEFAULT_OWNER_MINUTES, OwnerSigning
    from factory_schedule.tui.host.clock import host_zone

    minutes = DEFAULT_OWNER_MINUTES if owner_minutes is None else owner_minutes
    try:
        app = build_app(journal_url, SystemClock(), poll, host_zone(), owner_signing=OwnerSigning(minutes=minutes))
    except JournalError as error:
        print(f"factory-schedule: {printable(error)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    app.run()
    return 0


def dashboard_command(args: argparse.Namespace) -> int:
    url = journal_url_of(args)
    missing = missing_journal(url) if named_journal(args) else None
    if missing is not None:
        print(f"factory-schedule: {printable(missing)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return open_dashboard(url, getattr(args, "poll", DEFAULT_POLL_SECONDS), getattr(args, "owner_minutes", None))


def _minutes(value: str) -> float:
    """0 to 60 minutes: how long the dashboard keeps the owner key open."""
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0 <= number <= 60:  # NaN fails both comparisons
        raise argparse.ArgumentTypeError(f"expected 0 to 60 minutes, got {value!r}")
    return number


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser("dashboard", help="open the live dashboard (the default with no subcommand)",
                                    description=__doc__)
    parser.add_argument(
        "--poll", type=seconds, default=DEFAULT_POLL_SECONDS, metavar="SECONDS", help="how often to look for commits"
    )
    parser.add_argument(
        "--owner-minutes", type=_minutes, metavar="MINUTES",
        help="how long the owner key stays open in this dashboard after you type its passphrase (default 5; 0: ask "
             "for every owner decision); kept in memory only")
    parser.set_defaults(handler=dashboard_command)
