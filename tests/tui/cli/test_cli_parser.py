"""A run that names its subcommand builds that subcommand's parser alone, and it reads the command line as the
whole parser does (`tui/cli/main.py`: building every parser was a tenth of a `plan`'s start-up)."""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from factory_schedule.tui.cli.main import _command_named, build_parser, handler_named


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


def _leaf_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, object]]:
    """(command path, its `handler` default) for every parser that runs something."""
    subcommands = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if not subcommands:
        return [(" ".join(path), parser.get_default("handler"))]
    return [leaf for name, child in subcommands[0].choices.items() for leaf in _leaf_parsers(child, (*path, name))]


def test_every_subcommand_names_its_handler_as_module_colon_function_and_the_name_resolves() -> None:
    leaves = _leaf_parsers(build_parser())
    assert len(leaves) > 30
    for command, named in leaves:
        assert isinstance(named, str) and named.count(":") == 1, command
        assert callable(handler_named(named)), command


_BUILD_ONLY = """
import json, sys
from factory_schedule.tui.cli.main import build_parser
build_parser()
print(json.dumps(sorted(sys.modules)))
"""


def test_building_the_whole_parser_imports_no_handler_module_and_no_engine() -> None:
    """The parsers name their handlers: a command imports only its own handler module, when it runs."""
    handlers = {named.partition(":")[0] for _command, named in _leaf_parsers(build_parser()) if isinstance(named, str)}
    done = subprocess.run([sys.executable, "-c", _BUILD_ONLY], capture_output=True, text=True, timeout=120,
                          check=True)
    loaded = set(json.loads(done.stdout))
    assert loaded & handlers == set()
    assert {name for name in loaded if name.startswith(("factory_schedule.core", "factory_schedule.store"))} == set()


def test_the_command_lines_modules_import_at_their_top() -> None:
    """A handler module is imported only when its command runs, so it has no reason to import inside a function."""
    cli = Path(__file__).resolve().parents[3] / "tui" / "cli"
    inside = []
    for path in sorted(cli.rglob("*.py")):
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inside += [f"{path.name}:{node.lineno}" for node in ast.walk(function)
                           if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert inside == []
