"""An editor's type checker resolves `factory_schedule.*` to the code in this checkout.

The editable install maps core/, store/ and tui/ to `factory_schedule.*` with an import hook, which pyright
(and the editors built on it) cannot follow; pyproject's [tool.pyright] points it at the links in
`.typecheck/`. This test runs the pinned pyright (tests/install_pyright.sh puts it in a per-machine cache;
without npm it skips, saying so) over a probe that assigns three of the package's names to `int`: each
assignment is an error only when pyright has resolved the name to its real type, and an unresolved import
would be an error of its own.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
INSTALL = REPO / "tests" / "install_pyright.sh"

PROBE = """\
from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import open_journal
from factory_schedule.tui.cli.main import main

schedule: int = LifecycleSchedule
journal: int = open_journal
command: int = main
"""


def installed_pyright() -> Path:
    """The pinned pyright, installed once per machine; the test skips with the installer's reason without it."""
    installing = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, timeout=600)
    print(installing.stdout + installing.stderr)
    binary = Path(subprocess.run(["bash", str(INSTALL), "--print-bin"], capture_output=True, text=True,
                                 check=True).stdout.strip())
    if not binary.is_file():
        pytest.skip(f"pyright is not installed ({installing.stderr.strip() or 'see tests/install_pyright.sh'})")
    return binary


def test_pyright_resolves_the_package_names_to_the_checkouts_code(tmp_path: Path) -> None:
    pyright = installed_pyright()
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    ran = subprocess.run([str(pyright), "--project", str(REPO), "--outputjson", str(probe)],
                         capture_output=True, text=True, cwd=REPO, timeout=600)
    diagnostics = json.loads(ran.stdout)["generalDiagnostics"]
    found = sorted((item["range"]["start"]["line"] + 1, item.get("rule"), item["message"].splitlines()[0])
                   for item in diagnostics)
    assert [(line, rule) for line, rule, _ in found] == [(5, "reportAssignmentType"), (6, "reportAssignmentType"),
                                                       (7, "reportAssignmentType")], ran.stdout
    resolved = [message for _, _, message in found]
    assert 'Type "type[LifecycleSchedule]"' in resolved[0]
    assert all("Unknown" not in message and ") -> " in message for message in resolved[1:]), resolved
