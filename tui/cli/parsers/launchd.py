"""`factory-schedule launchd print COMMISSION.json [--host-zone ZONE] [--label L] [--log-dir DIR] [-- PROGRAM ...]`.

Prints the LaunchAgent plist whose StartCalendarInterval fires at every lane time of
the commission (`core.launch_intervals`), as text on stdout. Nothing is written or
loaded: reading it, diffing it against an installed agent, or piping it to a file is
the owner's choice. (`launchd install`, in tui/cli/launchd_install.py, renders the
complete agent for the tick with its runner and can write it.)

The host zone is this machine's ($TZ, else the zone /etc/localtime links to), never
silently the commission's: launchd fires in the host's zone, so a Mac in another zone
is refused (exit 2) unless --host-zone says otherwise, and --host-zone is required
when the machine's zone cannot be read.

ProgramArguments are PROGRAM and its arguments after `--` (the first an absolute path);
without them, `<factory-schedule> tick`, which still needs its runner command appended
before the agent can run (a note on stderr says so). A journal named with `--journal`
goes in the agent's EnvironmentVariables as FACTORY_JOURNAL, never on the command line
(where `ps` shows a password), as `launchd install` does.

Exit status: 0 printed; 2 the commission file or an argument was refused (the JSON error document on stdout,
as every command answers a refusal).
"""

from __future__ import annotations

import argparse
from typing import Any

from factory_schedule.tui.cli.parsers.launchd_install import DEFAULT_LABEL, add_install


def add_print_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host-zone", metavar="ZONE", help="this machine's zone (default: $TZ, else /etc/localtime)")
    parser.add_argument("--label", default=DEFAULT_LABEL, help=f"the LaunchAgent label (default {DEFAULT_LABEL})")
    parser.add_argument("--log-dir", metavar="DIR", help="where launchd writes the program's stdout and stderr")


def add_print(launchd_commands: Any) -> None:
    """Add `print` to the `launchd` command's subcommands."""
    printer = launchd_commands.add_parser(
        "print",
        help="print the LaunchAgent plist whose intervals fire at every lane time",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    printer.add_argument("commission", metavar="COMMISSION.json", help="the commission JSON file")
    add_print_options(printer)
    printer.add_argument("program", nargs=argparse.REMAINDER, metavar="-- PROGRAM [ARGS]")
    printer.set_defaults(handler="factory_schedule.tui.cli.launchd:print_launch_agent")


def register(subcommands: Any) -> None:
    launchd = subcommands.add_parser("launchd", help="the LaunchAgent that fires the tick")
    commands = launchd.add_subparsers(dest="launchd_command", metavar="COMMAND", required=True)
    add_print(commands)
    add_install(commands)
