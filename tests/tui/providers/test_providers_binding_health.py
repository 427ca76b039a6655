"""Health's verdict on a lane's prompt binding: drift reported, a repair only on a whole, stable reading."""

from __future__ import annotations

from pathlib import Path

from factory_schedule.core.health.bindings import (
    BindingRead,
    judge_binding,
    normalized,
    snapshot_of,
)
from factory_schedule.tui.host.providers.prompts import read_binding

FILES = {"lane.toml": b'provider = "claude"\n', "scan/10-repo.md": b"Scan the repository.\n"}
NOW = BindingRead("alpha/basic", "~/factory/prompts", "/Users/o/factory/prompts/alpha/basic", snapshot_of(FILES))


def test_a_bom_crlf_or_missing_trailing_newline_is_not_drift() -> None:
    resaved = {"lane.toml": b'\xef\xbb\xbfprovider = "claude"\r\n', "scan/10-repo.md": b"Scan the repository."}
    assert normalized(b"\xef\xbb\xbfa\r\nb\rc\n\n\n") == b"a\nb\nc\n"
    assert snapshot_of(resaved) == snapshot_of(FILES)


def test_a_changed_prompt_or_a_moved_folder_is_drift_that_may_be_recorded() -> None:
    edited = BindingRead(NOW.lane, NOW.source, NOW.resolved, snapshot_of({**FILES, "scan/10-repo.md": b"Other.\n"}))
    finding = judge_binding(NOW, edited, edited)
    assert (finding.verdict, finding.repair, finding.drifted) == ("drift", "record", ("snapshot",))
    moved = BindingRead(NOW.lane, NOW.source, "/Volumes/old/alpha/basic", NOW.snapshot)
    assert judge_binding(moved, NOW, NOW).drifted == ("resolved",)


def test_the_recorded_binding_read_back_is_healthy_and_needs_nothing() -> None:
    assert judge_binding(NOW, NOW, NOW).repair is None


def test_a_reading_that_changes_is_re_read_once_then_left_to_the_owner() -> None:
    other = BindingRead(NOW.lane, NOW.source, NOW.resolved, "0" * 64)
    assert judge_binding(NOW, NOW, other).repair == "re-read"
    assert judge_binding(NOW, NOW, other, retried=True).repair == "blocker"


def test_a_binding_that_cannot_be_read_whole_is_a_blocker_never_a_repair() -> None:
    missing = BindingRead(NOW.lane, NOW.source, error="no such folder")
    assert judge_binding(NOW, missing, missing).repair == "blocker"
    partial = BindingRead(NOW.lane, NOW.source, NOW.resolved, None)
    assert judge_binding(None, partial, partial).verdict == "unreadable"


def test_reading_a_lane_folder_gives_its_resolved_path_and_snapshot(tmp_path: Path) -> None:
    folder = tmp_path / "real" / "alpha" / "basic"
    (folder / "scan").mkdir(parents=True)
    (folder / "lane.toml").write_bytes(FILES["lane.toml"])
    (folder / "scan" / "10-repo.md").write_bytes(b"Scan the repository.\r\n")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    reading = read_binding(str(tmp_path / "link"), "alpha/basic")
    assert (reading.resolved, reading.snapshot) == (str(folder), snapshot_of(FILES))
    assert read_binding(str(tmp_path / "nowhere"), "alpha/basic").error is not None
