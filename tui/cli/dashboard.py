"""`factory-schedule dashboard`: the owner's live dashboard on a journal (also what no subcommand does)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from factory_schedule.store import JournalError
from factory_schedule.tui.host.paths import default_journal_url

DEFAULT_POLL_SECONDS = 0.5


def open_dashboard(journal_url: str, poll: float = DEFAULT_POLL_SECONDS) -> int:
    """Run the dashboard until the owner quits; 2 when the journal cannot be opened."""
    from factory_schedule.tui.dashboard.app import SystemClock, build_app
    from factory_schedule.tui.host.health import host_zone

    try:
        app = build_app(journal_url, SystemClock(), poll, host_zone())
    except JournalError as error:
        print(f"factory-schedule: {error}", file=sys.stderr)
        return 2
    app.run()
    return 0


def _dashboard(args: argparse.Namespace) -> int:
    return open_dashboard(getattr(args, "journal", None) or default_journal_url(), args.poll)


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser("dashboard", help="open the live dashboard (the default with no subcommand)")
    parser.add_argument("--journal", metavar="URL", default=argparse.SUPPRESS, help="journal URL")
    parser.add_argument(
        "--poll", type=float, default=DEFAULT_POLL_SECONDS, metavar="SECONDS", help="how often to look for commits"
    )
    parser.set_defaults(handler=_dashboard)
