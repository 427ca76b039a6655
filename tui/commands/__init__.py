"""Subcommands of `factory-schedule`: each module has `register(subparsers)` and sets
`handler` on its parser. Add a module to COMMAND_MODULES to expose it."""

from __future__ import annotations

from . import dashboard, demo, health, launchd, launchd_install, runner_cli, screenshots, tick

COMMAND_MODULES: list = [runner_cli, tick, health, launchd_install, launchd, dashboard, demo, screenshots]
