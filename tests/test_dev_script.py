"""`./dev`: the demo installs the runtime dependencies alone, and pip runs only when pyproject.toml changed.

The script runs as it is, in a copy of the repository's `dev` and `pyproject.toml`, over a `.venv` whose
`python` is a stand-in that records each pip command it is given (and answers as pip does: exit 0) and
whose `factory-schedule` records that it was started: no package is installed and nothing is fetched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
STAND_IN = """#!/bin/sh
echo "$*" >> "$(dirname "$0")/../../calls.log"
"""


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    shutil.copy(REPO / "dev", tmp_path / "dev")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    bin_folder = tmp_path / ".venv" / "bin"
    bin_folder.mkdir(parents=True)
    for name in ("python", "factory-schedule"):
        (bin_folder / name).write_text(STAND_IN)
        (bin_folder / name).chmod(0o755)
    (tmp_path / "tests" / "real_clis").mkdir(parents=True)
    (tmp_path / "tests" / "real_clis" / "install.sh").write_text("exit 0\n")  # the real CLIs' installer: not here
    return tmp_path


def _dev(clone: Path, *args: str) -> list[str]:
    log = clone / "calls.log"
    log.unlink(missing_ok=True)
    done = subprocess.run([str(clone / "dev"), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PATH": os.environ.get("PATH", "")})
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines() if log.exists() else []


def test_the_demo_installs_the_runtime_dependencies_without_the_test_extras(clone: Path) -> None:
    calls = _dev(clone, "demo", "--build-only")
    assert calls == ["-m pip install --quiet --disable-pip-version-check -e .", "demo --build-only"]


def test_a_second_demo_skips_pip_when_pyproject_is_unchanged(clone: Path) -> None:
    _dev(clone, "demo")
    assert _dev(clone, "demo") == ["demo"]


def test_a_changed_pyproject_installs_again(clone: Path) -> None:
    _dev(clone, "demo")
    with (clone / "pyproject.toml").open("a") as handle:
        handle.write("\n# a change\n")
    assert _dev(clone, "demo")[0].startswith("-m pip install")


def test_the_test_extras_are_installed_for_the_tests_and_cover_a_later_demo(clone: Path) -> None:
    (clone / ".venv" / "bin" / "ruff").symlink_to(clone / ".venv" / "bin" / "python")
    for tool in ("mypy", "mkdocs"):
        (clone / ".venv" / "bin" / tool).symlink_to(clone / ".venv" / "bin" / "python")
    calls = _dev(clone, "test", "-k", "nothing")
    assert calls[0] == "-m pip install --quiet --disable-pip-version-check -e .[test,docs]"
    assert _dev(clone, "demo") == ["demo"]
