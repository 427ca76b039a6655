"""The reference cannot go stale: the generated pages match the code, and nothing a user meets is left out.

The command line page and the commission page are generated (`./dev docs-gen`); these tests fail when either
differs from what the parsers, the exit codes and the JSON Schema render now, when a subcommand or an exit
code is missing, and when a health finding kind the code can report is not in the health guide's table.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from factory_schedule.tui.cli import reference

from .pages import DOCS, REPO

CLI_PAGE = DOCS / "reference" / "cli.md"
HEALTH_PAGE = DOCS / "guides" / "health.md"


def test_the_generated_reference_pages_are_current() -> None:
    stale = [str(path.relative_to(REPO)) for path, text in reference.rendered_pages().items()
             if path.read_text() != text]
    assert stale == [], f"stale generated pages (run ./dev docs-gen): {stale}"


def test_every_subcommand_has_its_section_in_the_command_line_reference() -> None:
    page = CLI_PAGE.read_text()
    words = [" ".join(command.words) for command in reference.commands()]
    assert "call admit" in words and "lanes claim" in words
    assert [name for name in words if f"\n### {name} {{#" not in page] == []


def test_every_flag_of_every_subcommand_is_in_the_command_line_reference() -> None:
    page = CLI_PAGE.read_text()
    for command in reference.commands():
        section = page.split(f"\n### {' '.join(command.words)} {{#", 1)[1].split("\n### ", 1)[0]
        flags = [flag for action in command.parser._actions for flag in action.option_strings
                 if flag.startswith("--") and action.dest not in ("help", "journal")]
        assert [flag for flag in flags if f"`{flag}`" not in section] == [], command.words


def test_every_exit_code_is_described_in_the_command_line_reference() -> None:
    exit_table = CLI_PAGE.read_text().split("\n## Exit codes\n", 1)[1]
    codes = reference.defined_exit_codes()
    assert {0, 2, 3, 7, 20, 50, 67, 141} <= codes
    described = {int(code) for code in re.findall(r"^\| (\d+) \| (?!UNDESCRIBED)", exit_table, re.M)}
    assert sorted(codes - described) == []
    assert "UNDESCRIBED" not in exit_table


def test_an_exit_code_without_a_meaning_is_named_undescribed(tmp_path: Path) -> None:
    module = tmp_path / "tui" / "new_command.py"
    module.parent.mkdir()
    module.write_text("EXIT_SOMETHING_NEW = 99\n")
    assert 99 in reference.defined_exit_codes(tmp_path)
    assert [entry.meaning for entry in reference.exit_codes(tmp_path) if entry.code == 99] == ["UNDESCRIBED"]


def test_a_page_without_its_generated_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="generated:cli"):
        reference.replace_generated("# The command line\n", "cli", "| a |")
    page = "before\n<!-- generated:cli -->\nold\n<!-- end generated:cli -->\nafter\n"
    assert reference.replace_generated(page, "cli", "new") == \
        "before\n<!-- generated:cli -->\nnew\n<!-- end generated:cli -->\nafter\n"


def finding_kinds_in_code() -> dict[str, set[str]]:
    """Every finding kind a `Finding(...)` in core/ or tui/ can report, with the severities it is given."""
    kinds: dict[str, set[str]] = {}
    for path in sorted([*(REPO / "core").rglob("*.py"), *(REPO / "tui").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Finding" and len(node.args) > 1):
                continue
            kind, severity = node.args[0], node.args[1]
            names = [kind] if not isinstance(kind, ast.IfExp) else [kind.body, kind.orelse]
            for name in names:
                assert isinstance(name, ast.Constant), f"{path}:{node.lineno}: a finding kind that is not a literal"
                assert isinstance(severity, ast.Constant), f"{path}:{node.lineno}: a severity that is not a literal"
                kinds.setdefault(str(name.value), set()).add(str(severity.value))
    return kinds


def finding_kinds_in_the_health_guide() -> dict[str, str]:
    table = HEALTH_PAGE.read_text().split("\n## Finding kinds", 1)[1].split("\n## ", 1)[0]
    return {kind: severity for kind, severity in re.findall(r"^\| `([a-z-]+)`[^|]* \| (\w+) \|", table, re.M)}


def test_every_health_finding_kind_is_in_the_health_guide_with_its_severity() -> None:
    in_code = finding_kinds_in_code()
    assert {"dead-runner", "binding-blocked", "stale-worker-lease"} <= set(in_code)
    documented = finding_kinds_in_the_health_guide()
    assert sorted(set(in_code) - set(documented)) == []
    assert {kind: documented[kind] for kind in in_code if documented[kind] not in in_code[kind]} == {}
    assert sorted(set(documented) - set(in_code)) == [], "documented kinds the code no longer reports"


def test_the_health_guide_marks_with_a_bell_exactly_the_findings_the_owner_is_notified_of() -> None:
    from factory_schedule.tui.host.notify import NEEDS_OWNER

    table = HEALTH_PAGE.read_text().split("\n## Finding kinds", 1)[1].split("\n## ", 1)[0]
    belled = set(re.findall(r"^\| `([a-z-]+)` 🔔 \|", table, re.M))
    assert "pipeline-settings-behind" in belled
    assert sorted(belled - NEEDS_OWNER) == [] and sorted(NEEDS_OWNER - belled) == []
