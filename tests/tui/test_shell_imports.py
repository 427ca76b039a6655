"""The shell's layers, read from its source with `ast` so every import counts, including those inside functions.

The host (tui/host/) does the work a command asks for; the command line (tui/cli/) parses arguments and
prints. A host module that imports the command line inverts that: the host would run only as a command.
"""

from __future__ import annotations

import ast
import importlib
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


def test_the_core_import_walk_sees_imports_under_type_checking() -> None:
    """The dashboard names some of core's types only for the type checker; those imports are read too."""
    under_type_checking = {(str(path.relative_to(TUI.parent)), node.lineno)
                           for path in (TUI / "dashboard").rglob("*.py")
                           for block in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                           if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
                           for node in ast.walk(block)
                           if isinstance(node, ast.ImportFrom)
                           and (node.module or "").startswith("factory_schedule.core")}
    seen = {(where, line) for where, line, _module, _names in shell_imports_of_core(("dashboard",))}
    assert under_type_checking, "the dashboard names core's types under TYPE_CHECKING"
    assert under_type_checking <= seen


# Core's public surface is what these packages export (their `__all__`, or for a package without one, the
# names its `__init__` binds): the schedule, the staged lanes and health.
CORE_SURFACES = ("factory_schedule.core", "factory_schedule.core.pipeline", "factory_schedule.core.health")

# Core modules the shell imports by their own name, each whole: one feature's rules, loaded only by the
# command that needs them so that `import factory_schedule.core` stays light for `plan` and `call admit`.
SHELL_FACING_CORE_MODULES = {
    "factory_schedule.core.health.bindings": "the lane binding rule, for the host's binding check",
    "factory_schedule.core.bottleneck": "what holds the factory up, for the dashboard and `status`",
    "factory_schedule.core.night_outline": "tonight's outline of a commission, for `commission check`",
    "factory_schedule.core.owner_commission": "recording a commission with its pipeline settings, signed",
    "factory_schedule.core.preflight": "the preflight's judgement of tonight, for `check`",
    "factory_schedule.core.pipeline.lock_scopes": "the staged lanes' lock scopes, for the runs that take them",
    "factory_schedule.core.records": "the commission rule asked on no state, before a first journal exists",
    "factory_schedule.core.health.provider_clis": "what a runner concludes from a provider's refusals",
}


def _exported(package: str) -> frozenset[str]:
    module = importlib.import_module(package)
    names = getattr(module, "__all__", None)
    return frozenset(names if names is not None else (name for name in vars(module) if not name.startswith("_")))


def shell_imports_of_core(folders: tuple[str, ...]) -> Iterator[tuple[str, int, str, tuple[str, ...]]]:
    """(file, line, core module, names) for every `from factory_schedule.core... import names` in `folders`."""
    for folder in folders:
        for path in sorted((TUI / folder).rglob("*.py")):
            where = str(path.relative_to(TUI.parent))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
                if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith(
                        "factory_schedule.core"):
                    yield where, node.lineno, node.module or "", tuple(alias.name for alias in node.names)
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name.startswith("factory_schedule.core"):
                            yield where, node.lineno, alias.name, ()


def test_the_command_line_the_host_and_the_dashboard_import_only_cores_exported_names_or_its_shell_facing_modules(
) -> None:
    """Every import counts: top-level, inside a function, and under `TYPE_CHECKING`, which names a type the
    shell depends on as surely as a runtime import does."""
    exported = {package: _exported(package) for package in CORE_SURFACES}
    offending = []
    for where, line, module, names in shell_imports_of_core(("cli", "host", "dashboard")):
        if module in SHELL_FACING_CORE_MODULES:
            continue
        missing = [name for name in names if name not in exported.get(module, ())] if names else [module]
        if module not in exported or missing:
            offending.append(f"{where}:{line} from {module} import {', '.join(missing or names)}")
    assert offending == []


def test_every_shell_facing_core_module_exists_and_is_not_already_exported() -> None:
    """A listed module that was renamed or folded into an export would let the rule above pass vacuously."""
    for module in SHELL_FACING_CORE_MODULES:
        importlib.import_module(module)
        assert module not in CORE_SURFACES
