"""`factory-schedule launchd install --commission FILE (--print | --output PATH) [-- RUNNER [ARGS]]`.

Renders the LaunchAgent that fires `factory-schedule tick --detach -- RUNNER` at every lane
time: its StartCalendarInterval comes from `core.launch_intervals` (which refuses
a Mac whose zone is not the commission's), its ProgramArguments are the tick
command and the runner, each program by its absolute path (launchd resolves no
relative one). The journal URL (`--journal URL`, else $FACTORY_JOURNAL, else the
user data file) goes in the agent's EnvironmentVariables as FACTORY_JOURNAL, not on
the command line, where `ps` would show a password to every local user; so
launchd's bare environment cannot point the tick elsewhere. The plist is written
owner-only (0600). It prints the plist, or writes it to the path the owner names;
it never loads it (that is `launchctl bootstrap gui/$(id -u) PATH`, the owner's step).
"""

from __future__ import annotations

import argparse
from typing import Any

from factory_schedule.tui.cli.options import lease_ttl_seconds

DEFAULT_LABEL = "com.factory-schedule.tick"


def add_install(launchd_commands: Any) -> None:
    """Add `install` to the `launchd` command's subcommands."""
    install = launchd_commands.add_parser(
        "install", help="render the LaunchAgent that fires the tick at every lane time",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    install.add_argument("--commission", required=True, metavar="FILE", help="the commission JSON")
    install.add_argument("--print", action="store_true", help="print the plist on stdout")
    install.add_argument("--output", metavar="PATH", help="write the plist to PATH (nothing else is written)")
    install.add_argument("--tick-command", metavar="COMMAND",
                         help="the whole program line instead of `factory-schedule tick --detach -- RUNNER` "
                         "(its first word an absolute path)")
    install.add_argument("--ttl", type=lease_ttl_seconds, help="the tick's lease TTL in seconds")
    install.add_argument("--label", default=DEFAULT_LABEL, help=f"the LaunchAgent label (default {DEFAULT_LABEL})")
    install.add_argument("--log-dir", metavar="DIR", help="where launchd writes the tick's stdout and stderr")
    install.add_argument("--host-zone", metavar="ZONE", help="this Mac's zone (default: $TZ or /etc/localtime)")
    install.add_argument("runner_command", nargs=argparse.REMAINDER, metavar="-- RUNNER [ARGS]",
                         help="the runner the tick fires for each admitted segment (an absolute path)")
    install.set_defaults(handler="factory_schedule.tui.cli.launchd_install:install_launch_agent")
