"""Every code block a page marks runnable runs as written and does what its text says.

A page's example may name a journal in /tmp; the tests point it at the test's own folder and change nothing
else. The real CLIs guide's shell blocks run in test_real_clis_page.py.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from factory_schedule.core import LifecycleSchedule
from factory_schedule.tui.host.clock import SystemClock
from tests.tui.runner_support import CLI, FAKE_PROVIDER, REPO, cli_env, commissioned_journal, json_lines

from .pages import Block, blocks_named, runnable_blocks

# The marked blocks the tests in this folder run, by name.
RUN_BY_THESE_TESTS = {"python-runner", "journal", "pipeline-runner", "shell-runner", "real-clis-setup",
                      "real-clis-launchd", "five-commands", "first-night"}


def run_python(block: Block, tmp_path: Path) -> tuple[dict[str, Any], str]:
    """Run a Python block with its /tmp journal moved into tmp_path: (its globals, what it printed)."""
    code = block.code.replace("sqlite:////tmp/", f"sqlite:///{tmp_path}/")
    namespace: dict[str, Any] = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(block.page), "exec"), namespace)
    return namespace, printed.getvalue()


def test_every_block_marked_runnable_is_run_by_a_test() -> None:
    marked = {block.name for block in runnable_blocks()}
    assert marked == RUN_BY_THESE_TESTS, f"marked but run by no test: {marked - RUN_BY_THESE_TESTS}; " \
                                         f"run but no longer marked: {RUN_BY_THESE_TESTS - marked}"


def test_the_python_runner_completes_its_occurrence_wherever_it_is_printed(tmp_path: Path) -> None:
    blocks = blocks_named("python-runner")
    assert {block.page.name for block in blocks} == {"README.md", "runner.md"}
    for number, block in enumerate(blocks):
        folder = tmp_path / str(number)
        folder.mkdir()
        namespace, _ = run_python(block, folder)
        record = namespace["schedule"].status(namespace["occurrence"])
        assert (record.state, record.status) == ("settled", "completed")


def test_the_python_runner_in_the_readme_is_at_most_25_lines() -> None:
    [readme] = [block for block in blocks_named("python-runner") if block.page.name == "README.md"]
    assert len(readme.code.splitlines()) <= 25


def test_the_journal_example_replays_a_retry_as_its_comment_says(tmp_path: Path) -> None:
    [block] = blocks_named("journal")
    _, printed = run_python(block, tmp_path)
    assert printed.split("\n")[0] == "False True"


def test_the_staged_lanes_runner_interface_example_prints_its_comments(tmp_path: Path) -> None:
    [block] = blocks_named("pipeline-runner")
    _, printed = run_python(block, tmp_path)
    assert printed.split("\n")[:2] == ["evidence", "idle nothing-to-review"]


def test_the_shell_runner_completes_a_night_through_tick(sqlite_url: str, tmp_path: Path) -> None:
    [block] = blocks_named("shell-runner")
    assert len(block.code.splitlines()) <= 12
    journal = commissioned_journal(sqlite_url)
    runner = tmp_path / "runner.sh"
    runner.write_text("#!/usr/bin/env bash\n" + block.code)
    runner.chmod(runner.stat().st_mode | stat.S_IXUSR)
    environment = cli_env(sqlite_url, FAKE_PROVIDER_LOG=str(tmp_path / "provider.log"))
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    done = subprocess.run([*CLI, "tick", "--", str(runner)], capture_output=True, text=True, env=environment,
                          cwd=REPO, timeout=120)
    lines = json_lines(done.stdout)
    assert done.returncode == 0, (done.stdout, done.stderr)
    [started, ran] = lines
    assert ran["segment_run"]["exit"] == 0
    record = LifecycleSchedule(journal, SystemClock()).status(started["tick"]["occurrence"]["id"])
    assert (record.state, record.status) == ("settled", "completed")
    assert (tmp_path / "provider.log").read_text().count("repo-scan") == 1
    assert FAKE_PROVIDER.name in block.code
