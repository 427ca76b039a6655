"""The `factory-schedule` command line.

Each subcommand lives in its own module in this package and registers
itself here; with no subcommand it opens the dashboard on the default journal.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from factory_schedule.tui.cli import (
    dashboard,
    demo,
    health,
    lanes,
    launchd,
    launchd_install,
    runner,
    screenshots,
    tick,
)
from factory_schedule.tui.host.paths import default_journal_url

# Each module has `register(subparsers)` and sets `handler` on its parser.
COMMAND_MODULES = (runner, tick, health, launchd_install, launchd, dashboard, demo, screenshots, lanes)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="factory-schedule",
        description="Run paid, unattended AI discovery work on a nightly schedule, exactly once.",
    )
    parser.add_argument(
        "--journal", metavar="URL", help="journal URL (default: $FACTORY_JOURNAL, else the user data file)"
    )
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(subcommands)
    return parser


def journal_url(args: argparse.Namespace) -> str:
    return args.journal or default_journal_url()


def _open_default(args: argparse.Namespace) -> int:
    """No subcommand: the owner's dashboard on the default journal (or `--journal URL`)."""
    from factory_schedule.tui.cli.dashboard import open_dashboard

    return open_dashboard(journal_url(args))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        return _open_default(args)
    return int(handler(args) or 0)

