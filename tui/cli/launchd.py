"""What `launchd print` does: render the LaunchAgent plist whose intervals fire at every lane time."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from typing import Any

from factory_schedule.core import ScheduleError, launch_intervals, parse_commission, render_launch_agent_plist
from factory_schedule.tui.cli.options import CommandParser
from factory_schedule.tui.cli.options import read_commission_file as read_commission_document
from factory_schedule.tui.cli.output import EXIT_OK, BadInput
from factory_schedule.tui.cli.parsers.launchd import add_print_options
from factory_schedule.tui.host.clock import host_zone


def _executable() -> str:
    found = shutil.which("factory-schedule")
    return os.path.abspath(found) if found else os.path.abspath(sys.argv[0])


def read_commission_file(path: str) -> dict[str, Any]:
    """The commission document at `path` (one reader for every command); anything else is refused as BadInput."""
    document = read_commission_document(path)
    if not isinstance(document, dict):
        raise BadInput(f"{path}: a commission is a JSON object")
    return document


def _split_tail(args: argparse.Namespace) -> list[str]:
    """Options given after COMMISSION.json (argparse leaves them in the remainder), then the program after `--`."""
    tail = list(args.program or [])
    if not tail or not tail[0].startswith("-"):
        return tail  # argparse already took the `--` that introduced the program
    options, program = (tail[: tail.index("--")], tail[tail.index("--") + 1 :]) if "--" in tail else (tail, [])
    if options:
        late = CommandParser(prog="factory-schedule launchd print", add_help=False)
        add_print_options(late)
        late.parse_args(options, namespace=args)
    return program


def _program(args: argparse.Namespace, program: list[str]) -> list[str]:
    if program:
        if not os.path.isabs(program[0]):
            raise BadInput(f"the program must be an absolute path, got {program[0]!r}")
        return program
    print(
        "factory-schedule launchd print: no program after `--`; the plist runs `factory-schedule tick`, "
        "which needs `-- RUNNER` appended (or use `launchd install`)",
        file=sys.stderr,
    )
    return [_executable(), "tick"]


def render(args: argparse.Namespace) -> str:
    program = _split_tail(args)
    commission = read_commission_file(args.commission)
    try:
        parsed = parse_commission(commission)
    except ScheduleError as error:
        raise BadInput(f"{args.commission}: {error.message}") from None
    zone = args.host_zone or host_zone()
    if not zone:
        raise BadInput("cannot tell this machine's zone from $TZ or /etc/localtime; pass --host-zone")
    try:
        intervals = launch_intervals(parsed, zone)
    except ScheduleError as error:
        raise BadInput(error.message) from None
    spec: dict[str, Any] = {"label": args.label, "program_arguments": _program(args, program)}
    spec["start_calendar_interval"] = intervals
    journal = getattr(args, "journal", None)
    if journal:  # as `launchd install` does: in the environment, never on a command line `ps` shows
        spec["environment_variables"] = {"FACTORY_JOURNAL": journal}
    if args.log_dir:
        log_dir = os.path.abspath(args.log_dir)
        spec["standard_out_path"] = os.path.join(log_dir, "tick.out.log")
        spec["standard_error_path"] = os.path.join(log_dir, "tick.err.log")
    try:
        return render_launch_agent_plist(spec)
    except ScheduleError as error:
        raise BadInput(error.message) from None


def print_launch_agent(args: argparse.Namespace) -> int:
    """The plist as text on stdout; a refusal is raised, so it answers as every command does (JSON, exit 2)."""
    text = render(args)
    sys.stdout.write(text)
    return EXIT_OK
