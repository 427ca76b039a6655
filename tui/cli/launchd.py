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

Exit status: 0 printed; 2 the commission file or an argument was refused (one line on stderr).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from factory_schedule.tui.cli.options import CommandParser
from factory_schedule.tui.cli.options import read_commission_file as read_commission_document
from factory_schedule.tui.cli.output import EXIT_BAD_INPUT, EXIT_OK, BadInput
from factory_schedule.tui.host.clock import host_zone

DEFAULT_LABEL = "com.factory-schedule.tick"


class Refused(Exception):
    """A one-line reason the command cannot print the plist."""


def _executable() -> str:
    import shutil  # here, not at the top: every command builds this module's parser

    found = shutil.which("factory-schedule")
    return os.path.abspath(found) if found else os.path.abspath(sys.argv[0])


def read_commission_file(path: str) -> dict[str, Any]:
    """The commission document at `path` (one reader for every command), refused in one line as a Refused."""
    try:
        document = read_commission_document(path)
    except BadInput as error:
        raise Refused(str(error)) from None
    if not isinstance(document, dict):
        raise Refused(f"{path}: a commission is a JSON object")
    return document


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host-zone", metavar="ZONE", help="this machine's zone (default: $TZ, else /etc/localtime)")
    parser.add_argument("--label", default=DEFAULT_LABEL, help=f"the LaunchAgent label (default {DEFAULT_LABEL})")
    parser.add_argument("--log-dir", metavar="DIR", help="where launchd writes the program's stdout and stderr")


def _split_tail(args: argparse.Namespace) -> list[str]:
    """Options given after COMMISSION.json (argparse leaves them in the remainder), then the program after `--`."""
    tail = list(args.program or [])
    if not tail or not tail[0].startswith("-"):
        return tail  # argparse already took the `--` that introduced the program
    options, program = (tail[: tail.index("--")], tail[tail.index("--") + 1 :]) if "--" in tail else (tail, [])
    if options:
        late = CommandParser(prog="factory-schedule launchd print", add_help=False)
        _add_options(late)
        late.parse_args(options, namespace=args)
    return program


def _program(args: argparse.Namespace, program: list[str]) -> list[str]:
    if program:
        if not os.path.isabs(program[0]):
            raise Refused(f"the program must be an absolute path, got {program[0]!r}")
        return program
    print(
        "factory-schedule launchd print: no program after `--`; the plist runs `factory-schedule tick`, "
        "which needs `-- RUNNER` appended (or use `launchd install`)",
        file=sys.stderr,
    )
    return [_executable(), "tick"]


def render(args: argparse.Namespace) -> str:
    from factory_schedule.core import ScheduleError, launch_intervals, parse_commission, render_launch_agent_plist

    program = _split_tail(args)
    commission = read_commission_file(args.commission)
    try:
        parsed = parse_commission(commission)
    except ScheduleError as error:
        raise Refused(f"{args.commission}: {error.message}") from None
    zone = args.host_zone or host_zone()
    if not zone:
        raise Refused("cannot tell this machine's zone from $TZ or /etc/localtime; pass --host-zone")
    try:
        intervals = launch_intervals(parsed, zone)
    except ScheduleError as error:
        raise Refused(error.message) from None
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
        raise Refused(error.message) from None


def _print(args: argparse.Namespace) -> int:
    try:
        text = render(args)
    except Refused as error:
        print(f"factory-schedule launchd print: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    sys.stdout.write(text)
    return EXIT_OK


def add_print(launchd_commands: Any) -> None:
    """Add `print` to the `launchd` command's subcommands."""
    printer = launchd_commands.add_parser(
        "print",
        help="print the LaunchAgent plist whose intervals fire at every lane time",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    printer.add_argument("commission", metavar="COMMISSION.json", help="the commission JSON file")
    _add_options(printer)
    printer.add_argument("program", nargs=argparse.REMAINDER, metavar="-- PROGRAM [ARGS]")
    printer.set_defaults(handler=_print)


def register(subcommands: Any) -> None:
    from factory_schedule.tui.cli.launchd_install import add_install

    launchd = subcommands.add_parser("launchd", help="the LaunchAgent that fires the tick")
    commands = launchd.add_subparsers(dest="launchd_command", metavar="COMMAND", required=True)
    add_print(commands)
    add_install(commands)
