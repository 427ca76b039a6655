"""The `factory-schedule` command line.

Each group of subcommands has a parser module (tui/cli/parsers/) that registers
them and names each one's handler as `module:function`; with no subcommand it
opens the dashboard on the default journal. Every failure ends as one line and
an exit code (tui/cli/output.py): argparse's refusals and the handlers' errors
print the JSON error shape, and a reader that goes away (`| head`) ends the
program quietly. Building the parser imports no database, no engine and no
Textual: the one handler module a command needs is imported when it runs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from factory_schedule.tui.cli.options import ArgumentsRefused, CommandParser
from factory_schedule.tui.cli.output import EXIT_BAD_INPUT, EXIT_BROKEN_PIPE, emit_error, failure_of, quiet_stdout
from factory_schedule.tui.host.process_privacy import keep_to_this_process

# The parser modules (tui/cli/parsers/) that register subcommands (each has `register(subcommands)` and names
# `handler` on its parsers as `module:function`), in the order `--help` lists them. One line each.
COMMAND_MODULES = (
    "schedule_commands",
    "commission",
    "run",
    "provider_env",
    "tick",
    "health",
    "verify",
    "check",
    "prompts",
    "launchd",
    "dashboard",
    "demo",
    "screenshots",
    "lanes",
    "owner",
)
# No subcommand: the owner's dashboard on the default journal (or `--journal URL`).
OPEN_DASHBOARD = "factory_schedule.tui.cli.dashboard:dashboard_command"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line's parser; with `only`, one in which just that subcommand's parser is built.

    Building all some forty subcommand parsers took about a tenth of a `plan`'s start-up, so a run that
    names its subcommand builds that one alone (`_command_named`). Every module still registers all of
    its commands: the others go to a stand-in that builds nothing (`_Unbuilt`). A name no module
    registers gets the whole parser, so argparse's refusal lists the commands there are.
    """
    parser = CommandParser(
        prog="factory-schedule",
        description="Run paid, unattended AI discovery work on a nightly schedule, exactly once.",
    )
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
    registrar: Any = subcommands if only is None else _OneCommand(subcommands, only)
    for name in COMMAND_MODULES:
        importlib.import_module(f"factory_schedule.tui.cli.parsers.{name}").register(registrar)
    if only is not None and not registrar.found:
        return build_parser()
    return parser


class _Unbuilt:
    """A subcommand's parser that is not built: every call on it is accepted, builds nothing and returns it."""

    def __getattr__(self, _name: str) -> Callable[..., _Unbuilt]:
        return self._accept

    def _accept(self, *_args: Any, **_kwargs: Any) -> _Unbuilt:
        return self


class _OneCommand:
    """The top-level subcommands, building the parser of `wanted` alone."""

    def __init__(self, subcommands: Any, wanted: str) -> None:
        self._subcommands = subcommands
        self._wanted = wanted
        self.found = False

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name != self._wanted:
            return _Unbuilt()
        self.found = True
        return self._subcommands.add_parser(name, **kwargs)


def _command_named(argv: Sequence[str]) -> str | None:
    """The subcommand `argv` names, past a leading `--journal URL`; None for anything else before it (`--help`,
    an abbreviated flag, no subcommand), which gets the whole parser."""
    position = 0
    while position < len(argv):
        argument = argv[position]
        if argument == "--journal":
            position += 2
        elif argument.startswith("--journal="):
            position += 1
        elif argument.startswith("-"):
            return None
        else:
            return argument
    return None


def handler_named(name: str) -> Callable[[argparse.Namespace], int]:
    """The handler a parser names as `module:function`, imported now that its command runs."""
    module, _, function = name.partition(":")
    handler: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(module), function)
    return handler


def _not_unicode(argv: Sequence[str]) -> str | None:
    """The first argument that was not valid UTF-8 (Python hands such bytes over as lone surrogates)."""
    for position, argument in enumerate(argv, start=1):
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError:
            return f"argument {position} is not valid UTF-8"
    return None


def _errors_to_stderr(parser: argparse.ArgumentParser, argv: list[str]) -> bool:
    """Whether the command named sends its errors to stderr, for a refusal the whole parser made (an argument no
    parser knows): the command's own defaults say, when what it was given parses but for the unknown."""
    try:
        known, _unknown = parser.parse_known_args(argv)
    except ArgumentsRefused:
        return False
    return bool(getattr(known, "errors_to_stderr", False))


def _run(argv: list[str]) -> int:
    problem = _not_unicode(argv)
    if problem is not None:
        emit_error("INVALID", problem)
        return EXIT_BAD_INPUT
    parser = build_parser(_command_named(argv))
    try:
        args = parser.parse_args(argv)
    except ArgumentsRefused as refused:
        emit_error("INVALID", str(refused), to_stderr=refused.to_stderr or _errors_to_stderr(parser, argv))
        return EXIT_BAD_INPUT
    except SystemExit as done:  # --help and --version print, then exit 0
        return done.code if isinstance(done.code, int) else 0
    named: str | None = getattr(args, "handler", None)
    try:
        handler = handler_named(OPEN_DASHBOARD if named is None else named)
        return int(handler(args) or 0)
    except BrokenPipeError:
        raise
    except Exception as error:  # every failure, expected or not, is one JSON line and an exit code
        code, document = failure_of(error)
        emit_error(**document, to_stderr=getattr(args, "errors_to_stderr", False))
        return code


def main(argv: Sequence[str] | None = None) -> int:
    """The `factory-schedule` program. Run as its own process (no `argv` given), it first keeps its environment
    and memory from the providers it may start (tui/host/process_privacy.py); called in-process, it leaves
    the caller's process as it is."""
    if argv is None:
        keep_to_this_process()
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:  # `factory-schedule plan | head`: the reader left; what was committed stays committed
        quiet_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return 130
