"""Every file the runner or health reads is a regular file of bounded size before it is read: a FIFO (whose read
waits forever), a link to /dev/zero (which reads forever) or a file past its bound is refused in one line naming
it, and never hangs `run --check`, `health --prompts`, `health --notify`, `health --plist` or
`record-commission`. Real files and real processes (a hang would time the process out)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import open_journal
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.files import UnusableFile, read_regular
from factory_schedule.tui.host.notify import state_path
from tests.tui.provider_support import fake_path
from tests.tui.runner_support import cli, cli_env, fake_notifier

from .test_run import claude_lane, lanes_commission, record

DEADLINE = 60  # seconds: a process that reads a FIFO or /dev/zero never ends by itself


def make_fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def link_to_dev_zero(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.symlink_to("/dev/zero")


NOT_FILES: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (make_fifo, "FIFO"),
    "dev-zero": (link_to_dev_zero, "character device"),
}


@pytest.fixture
def prompts(sqlite_url: str, tmp_path: Path) -> Path:
    record(LifecycleSchedule(open_journal(sqlite_url), SystemClock()), lanes_commission(("alpha", "scan", "claude")))
    folder = tmp_path / "prompts"
    claude_lane(folder, "alpha/basic", "normal")
    return folder


def _path_env() -> dict[str, str]:
    return {"PATH": fake_path(cli_env("")["PATH"])}


@pytest.mark.parametrize("what", NOT_FILES)
@pytest.mark.parametrize("which", ["lane.toml", "scan/10-unit-1.md"])
def test_run_check_refuses_a_lane_file_that_is_not_a_regular_file_in_one_line(
    sqlite_url: str, prompts: Path, what: str, which: str
) -> None:
    make, words = NOT_FILES[what]
    make(prompts / "alpha/basic" / which)
    code, line, err = cli(sqlite_url, "run", "--check", "--prompts", str(prompts), timeout=DEADLINE, **_path_env())
    assert code == 2, (line, err)
    assert line["ok"] is False and which.split("/")[-1] in line["error"] and words in line["error"], line


@pytest.mark.parametrize("what", NOT_FILES)
def test_health_reads_a_prompt_binding_whose_lane_file_is_not_a_regular_file_without_hanging(
    sqlite_url: str, prompts: Path, what: str
) -> None:
    make, words = NOT_FILES[what]
    make(prompts / "alpha/basic/lane.toml")
    code, report, err = cli(sqlite_url, "health", "--json", "--prompts", str(prompts), timeout=DEADLINE,
                            **_path_env())
    assert code in (1, 2) and isinstance(report, dict), (code, report, err)
    assert words in str(report["findings"]) + str(report["could_not_check"]), report


@pytest.mark.parametrize("what", NOT_FILES)
def test_health_notifies_past_a_notified_state_that_is_not_a_regular_file(
    sqlite_url: str, tmp_path: Path, what: str
) -> None:
    make, _words = NOT_FILES[what]
    make(state_path(sqlite_url))
    command, log = fake_notifier(tmp_path)
    code, report, err = cli(sqlite_url, "health", "--json", "--notify", command, timeout=DEADLINE,
                            NOTIFY_LOG=str(log))
    assert isinstance(report, dict) and report["exit"] == code, (code, report, err)


@pytest.mark.parametrize("what", NOT_FILES)
def test_health_says_a_launch_agent_that_is_not_a_regular_file_cannot_be_read(
    sqlite_url: str, prompts: Path, tmp_path: Path, what: str
) -> None:
    make, words = NOT_FILES[what]
    plist = tmp_path / "agent.plist"
    make(plist)
    code, report, err = cli(sqlite_url, "health", "--json", "--plist", str(plist), timeout=DEADLINE)
    assert code == 1 and isinstance(report, dict), (code, report, err)
    assert words in str(report["findings"]), report


@pytest.mark.parametrize("what", NOT_FILES)
def test_record_commission_refuses_a_commission_file_that_is_not_a_regular_file(
    sqlite_url: str, tmp_path: Path, what: str
) -> None:
    make, words = NOT_FILES[what]
    commission = tmp_path / "commission.json"
    make(commission)
    code, line, err = cli(sqlite_url, "record-commission", str(commission), timeout=DEADLINE)
    assert code == 2 and words in str(line), (code, line, err)
    assert not Path(sqlite_url.removeprefix("sqlite:///")).exists()


def test_a_file_past_its_bound_is_refused_and_one_at_its_bound_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 100)
    assert read_regular(path, 100) == b"x" * 100
    with pytest.raises(UnusableFile, match="larger than 99 bytes"):
        read_regular(path, 99)


def test_a_folder_is_refused_as_a_folder(tmp_path: Path) -> None:
    with pytest.raises(UnusableFile, match="a folder, not a regular file"):
        read_regular(tmp_path, 100)
