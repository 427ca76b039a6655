"""A class name means one thing: no two modules of core/, store/ or tui/ define a class of the same name.

Two `Segment`s or two `Task`s make every import a question of which one, and a reader of a traceback or a
type error cannot tell them apart; a name that says what the class is answers both.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "store", "tui")


def class_definitions(root: Path) -> dict[str, list[str]]:
    """Every class defined anywhere in a module (nested ones too), by name: where each is defined."""
    found: dict[str, list[str]] = defaultdict(list)
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
                if isinstance(node, ast.ClassDef):
                    found[node.name].append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_no_class_name_is_defined_in_two_modules() -> None:
    twice = {name: places for name, places in class_definitions(REPO).items() if len(places) > 1}
    assert twice == {}, "rename each class for what it is:\n" + "\n".join(
        f"  {name}: {', '.join(places)}" for name, places in sorted(twice.items()))


def test_a_class_defined_twice_is_found(tmp_path: Path) -> None:
    for package, body in (("core", "class Segment:\n    pass\n"), ("tui", "def f():\n    class Segment: ...\n")):
        (tmp_path / package).mkdir()
        (tmp_path / package / "a.py").write_text(body)
    (tmp_path / "store").mkdir()
    assert class_definitions(tmp_path) == {"Segment": ["core/a.py:1", "tui/a.py:2"]}
