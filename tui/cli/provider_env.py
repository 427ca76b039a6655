"""`factory-schedule provider-env [--provider P] [--pass NAME]... -- COMMAND ...`: start a provider the way
`factory-schedule run` does, with the allow-listed environment (tui/host/provider_environment.py).

A runner in any language (examples/*.sh) starts its provider through this command, so the provider never
inherits the journal's URL, the runner token or any FACTORY_* variable, and the allow-list is written once.
The command replaces itself with COMMAND (exec): the provider's exit code and output are the command's own.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from factory_schedule.tui.cli.output import BadInput


def _exec(args: argparse.Namespace) -> int:
    from factory_schedule.tui.host.provider_environment import provider_environment, refused_name

    command = list(args.provider_command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise BadInput("COMMAND: the provider command to start is missing (after `--`)")
    passed = [name for words in args.passed for name in words.split()]
    for name in passed:
        problem = refused_name(name)
        if problem is not None:
            raise BadInput(f"--pass: {problem}")
    environment = provider_environment(os.environ, args.provider, passed)
    try:
        os.execvpe(command[0], command, environment)
    except OSError as error:
        raise BadInput(f"COMMAND: {command[0]}: {error.strerror}") from None
    return 0  # not reached: exec replaced this process


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
    parser.set_defaults(handler=_exec)
