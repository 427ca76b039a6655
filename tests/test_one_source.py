"""Shared names written once, read from the source with `ast`: every exit code is named in tui/cli/output.py
(the one place the command line decides what it returns), and each aggregate's name is written only where
its constant is defined, so no reader can name a neighbouring aggregate by a typo."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "store", "tui")
OUTPUT = Path("tui/cli/output.py")


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT), ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _assigned(tree: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            yield node.target.id, node.value


def test_every_exit_code_is_named_in_the_command_lines_output_module() -> None:
    elsewhere = sorted(f"{path}: {name}" for path, tree in _modules() if path != OUTPUT
                       for name, _value in _assigned(tree) if name.startswith("EXIT_") and name != "EXIT_MEANINGS")
    assert elsewhere == []


def test_each_aggregate_name_is_written_once_where_its_constant_is_defined() -> None:
    modules = list(_modules())
    names = {value.value: f"{path}: {name}" for path, tree in modules for name, value in _assigned(tree)
             if name.endswith("_AGGREGATE") and isinstance(value, ast.Constant) and isinstance(value.value, str)}
    assert {"discovery/schedule", "pipeline/lanes", "owner/key"} <= set(names), names
    written = Counter(node.value for _path, tree in modules for node in ast.walk(tree)
                      if isinstance(node, ast.Constant) and node.value in names)
    assert {name: n for name, n in written.items() if n > 1} == {}
