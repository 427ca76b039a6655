"""The shell's layers, read from its source with `ast` so every import counts, including those inside functions.

The host (tui/host/) does the work a command asks for; the command line (tui/cli/) parses arguments and
prints. A host module that imports the command line inverts that: the host would run only as a command.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TUI = Path(__file__).resolve().parents[2] / "tui"
PACKAGE = "factory_schedule.tui"


def _module_name(path: Path) -> str:
    parts = path.relative_to(TUI).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((PACKAGE, *parts))


def imports_in(folder: Path) -> Iterator[tuple[str, int, str]]:
    """(file, line, imported module) for every import under `folder`, relative imports resolved; a
    `from package import name` also yields `package.name`, which may be a module."""
    for path in sorted(folder.rglob("*.py")):
        module = _module_name(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        where = str(path.relative_to(TUI.parent))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield where, node.lineno, alias.name
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    source = f"{base}.{node.module}" if node.module else base
                else:
                    source = node.module or ""
                yield where, node.lineno, source
                for alias in node.names:
                    yield where, node.lineno, f"{source}.{alias.name}"


def test_no_host_module_imports_the_command_line() -> None:
    cli = f"{PACKAGE}.cli"
    offending = sorted({f"{where}:{line} imports {module}" for where, line, module in imports_in(TUI / "host")
                        if module == cli or module.startswith(cli + ".")})
    assert offending == []


def test_the_import_walk_sees_imports_inside_functions() -> None:
    """The rule above holds only if a function-local import is read as any other."""
    found = [module for _where, _line, module in imports_in(TUI / "cli") if module.endswith(".host.health")]
    assert found, "tui/cli imports the host's health check inside its handlers"
