"""The distribution installs one import package, factory_schedule, and nothing generic beside it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("core", "store", "tui")
# What a build from a copy of the checkout does not need: the copy holds the tracked tree and nothing built.
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "build", "site", "*.egg-info", "__pycache__", ".*_cache",
                                    ".hypothesis", "*.db", "*.db-wal", "*.db-shm")


def _declared_packages() -> set[str]:
    with (REPO / "pyproject.toml").open("rb") as handle:
        return set(tomllib.load(handle)["tool"]["setuptools"]["packages"])


def test_every_source_package_is_declared_under_factory_schedule() -> None:
    found = {
        "factory_schedule." + ".".join(init.parent.relative_to(REPO).parts)
        for folder in FOLDERS
        for init in (REPO / folder).rglob("__init__.py")
    }
    assert found == _declared_packages()


def _build_output(folder: Path) -> list[tuple[str, int]]:
    """Each file under a folder's build/ with its modification time: what a build there would change."""
    return sorted((str(path), path.stat().st_mtime_ns) for path in (folder / "build").rglob("*"))


def test_the_wheel_holds_one_top_level_package(tmp_path: Path) -> None:
    """Built from a copy of the checkout: setuptools writes its build/ beside the pyproject it builds, and the
    checkout keeps none."""
    source = tmp_path / "source"
    shutil.copytree(REPO, source, symlinks=True, ignore=NOT_SOURCE)
    before = _build_output(REPO)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--disable-pip-version-check",
         "--wheel-dir", str(tmp_path), str(source)],
        check=True, capture_output=True,
    )  # fmt: skip
    assert _build_output(REPO) == before
    (wheel,) = tmp_path.glob("factory_schedule-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"factory_schedule"}
    assert "factory_schedule/core/commission.schema.json" in names
    assert "factory_schedule/tui/dashboard/app.tcss" in names
    assert "factory_schedule/tui/cli/__main__.py" in names


def test_a_folder_with_its_own_core_store_and_tui_cannot_shadow_the_product(tmp_path: Path) -> None:
    for folder in FOLDERS:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text(f"raise SystemExit('the user folder {folder} was imported')\n")
    probe = (
        "import factory_schedule.core, factory_schedule.store, factory_schedule.tui.cli.main as cli, sys;"
        "print(factory_schedule.core.__file__);"
        "sys.argv = ['factory-schedule', '--help'];"
        "cli.main(['--help'])"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert str(tmp_path) not in done.stdout.splitlines()[0]
    assert "usage: factory-schedule" in done.stdout


def test_the_type_checker_finds_each_folder_under_its_installed_name_in_a_fresh_clone() -> None:
    """mypy reads `factory_schedule.core` through `.typecheck/factory_schedule/core`: the links are in git,
    relative, and lead to the repository's own folders, so `./dev test` type-checks a clone as it stands."""
    tracked = subprocess.run(
        ["git", "ls-files", "--stage", ".typecheck"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.splitlines()
    links = {line.split("\t")[1]: line.split()[0] for line in tracked}
    assert links == {f".typecheck/factory_schedule/{folder}": "120000" for folder in FOLDERS}  # git's symlink mode
    for folder in FOLDERS:
        link = REPO / ".typecheck" / "factory_schedule" / folder
        assert not Path(link.readlink()).is_absolute()
        assert link.resolve() == REPO / folder
    with (REPO / "pyproject.toml").open("rb") as handle:
        mypy = tomllib.load(handle)["tool"]["mypy"]
    assert mypy["mypy_path"] == "$MYPY_CONFIG_FILE_DIR/.typecheck"
    assert set(mypy["packages"]) == {f"factory_schedule.{folder}" for folder in FOLDERS} | {"tests"}
