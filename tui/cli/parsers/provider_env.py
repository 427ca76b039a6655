"""`factory-schedule provider-env [--provider P] [--pass NAME]... -- COMMAND ...`: start a provider the way
`factory-schedule run` does, with the allow-listed environment (tui/host/provider_environment.py).

A runner in any language (examples/*.sh) starts its provider through this command, so the provider never
inherits the journal's URL, the runner token or any FACTORY_* variable, and the allow-list is written once.
The command replaces itself with COMMAND (exec): the provider's exit code and output are the command's own.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "provider-env", help="start a provider command with the allow-listed environment (no FACTORY_* variable)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--provider", choices=("claude", "codex"),
                        help="pass this CLI's own configuration folder variable too")
    parser.add_argument("--pass", dest="passed", action="append", default=[], metavar="NAME",
                        help="also pass this variable (space-separated names allowed; never FACTORY_*)")
    parser.add_argument("provider_command", nargs=argparse.REMAINDER, metavar="COMMAND",
                        help="the provider command and its arguments")
    parser.set_defaults(handler="factory_schedule.tui.cli.provider_env:exec_provider")
