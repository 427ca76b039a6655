"""What `provider-env` does: replace itself with a provider command under the allow-listed environment."""

from __future__ import annotations

import argparse
import os

from factory_schedule.tui.cli.output import BadInput
from factory_schedule.tui.host.provider_environment import provider_environment, refused_name


def exec_provider(args: argparse.Namespace) -> int:
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
