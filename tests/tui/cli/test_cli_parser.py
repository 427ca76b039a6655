"""A run that names its subcommand builds that subcommand's parser alone, and it reads the command line as the
whole parser does (`tui/cli/main.py`: building every parser was a tenth of a `plan`'s start-up)."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from factory_schedule.tui.cli.main import _command_named, build_parser


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    [subcommands] = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return list(subcommands.choices)


def _help(parser: argparse.ArgumentParser, argv: list[str]) -> str:
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), pytest.raises(SystemExit):
        parser.parse_args(argv)
    return shown.getvalue()


def test_each_subcommands_own_parser_is_the_one_the_whole_parser_has() -> None:
    whole = build_parser()
    commands = _commands(whole)
    assert {"plan", "call", "lanes", "tick", "health"} <= set(commands)
    for command in commands:
        alone = build_parser(command)
        assert _commands(alone) == [command]
        assert _help(alone, [command, "--help"]) == _help(whole, [command, "--help"])


def test_a_name_no_module_registers_gets_the_whole_parser_so_the_refusal_lists_every_command() -> None:
    assert _commands(build_parser("no-such-command")) == _commands(build_parser())


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["plan"], "plan"),
        (["--journal", "sqlite:///j.db", "call", "admit"], "call"),
        (["--journal=sqlite:///j.db", "plan"], "plan"),
        (["--help"], None),
        (["--jour", "sqlite:///j.db", "plan"], None),  # an abbreviation argparse accepts: the whole parser reads it
        ([], None),
    ],
)
def test_the_subcommand_is_read_past_a_leading_journal_and_anything_else_gets_the_whole_parser(
    argv: list[str], named: str | None
) -> None:
    assert _command_named(argv) == named
