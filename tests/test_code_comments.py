"""The code's comments and docstrings say why, in the present tense, to a reader of this repository.

They keep no history (what a line used to do, which round or review changed it, an issue's number) and point
to no document outside the repository (the specification, a contract file the reader does not have): both
are true only on the day they are written. The same words are refused on the documentation site.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from tests.docs.pages import LAB_NOTEBOOK

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "store", "tui")
# Beyond the site's words: the documents and people a reader of the code does not have.
OUTSIDE = re.compile(r"CONTRACT\.md|\bthe spec\b|\bissue \d+|\b(?:seven|eight) engineers\b", re.I)


def history_lines(path: Path, root: Path) -> list[str]:
    """Each comment or docstring line of a module that names history or a document outside the repository."""
    source = path.read_text(encoding="utf-8")
    where = path.relative_to(root)
    texts = [(token.start[0], token.string) for token in tokenize.generate_tokens(io.StringIO(source).readline)
             if token.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                texts += [(first.lineno + offset, line) for offset, line in enumerate(first.value.value.splitlines())]
    return [f"{where}:{number}: {text.strip()}" for number, text in sorted(texts)
            if LAB_NOTEBOOK.search(text) or OUTSIDE.search(text)]


def test_no_comment_or_docstring_keeps_history_or_points_outside_the_repository() -> None:
    found = [line for package in PACKAGES for path in sorted((REPO / package).rglob("*.py"))
             for line in history_lines(path, REPO)]
    assert found == []


def test_the_check_reads_comments_and_docstrings_but_not_code(tmp_path: Path) -> None:
    module = tmp_path / "core" / "m.py"
    module.parent.mkdir()
    module.write_text('"""Rules (see CONTRACT.md)."""\n\n'
                      'def f() -> None:\n    """It used to retry."""\n'
                      '    used_to = "issue 7"  # as the seed says\n'
                      '    return None  # a call that used tokens is paid\n')
    assert history_lines(module, tmp_path) == [
        "core/m.py:1: Rules (see CONTRACT.md).", "core/m.py:4: It used to retry.", "core/m.py:5: # as the seed says"]
