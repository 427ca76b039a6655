"""`factory-schedule dashboard`: the owner's live dashboard on a journal (also what no subcommand does).

On first use, with no journal named (no `--journal`, no $FACTORY_JOURNAL), the
dashboard starts the default journal file; a journal the owner names must exist.
"""

from __future__ import annotations

import argparse
from typing import Any

from factory_schedule.tui.cli.options import seconds

DEFAULT_POLL_SECONDS = 0.5


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
    parser.set_defaults(handler="factory_schedule.tui.cli.dashboard:dashboard_command")
