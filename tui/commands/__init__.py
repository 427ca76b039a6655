"""Subcommands of `factory-schedule`: each module has `register(subparsers)` and sets
`handler` on its parser. Add a module to COMMAND_MODULES to expose it."""

from __future__ import annotations

from . import runner_cli

COMMAND_MODULES: list = [runner_cli]
