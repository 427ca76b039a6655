"""The README's pipeline example runs as written (on a journal in tmp_path) and prints what it says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_runner_interface_example_runs_and_prints_its_comments(tmp_path):
    text = README.read_text()
    section = text[text.index("### The runner interface"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    code = code.replace("sqlite:////tmp/pipeline.db", f"sqlite:///{tmp_path / 'pipeline.db'}")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().split("\n")[:2] == ["evidence", "idle nothing-to-review"]
