"""`health` checks each hash chain from the checkpoint its last check left beside the journal, and
`factory-schedule verify` checks every chain from its first event. What the checkpoint skips a whole verify
still finds; a checkpoint that no longer matches the journal fails loudly; one of another journal is ignored;
one that cannot be written costs the report nothing but a finding. Real SQLite files edited behind the
store's back, and the real command line."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
from pathlib import Path
from typing import Any

from factory_schedule.store import Decision, NewEvent, open_journal
from factory_schedule.tui.host.chain_checkpoint import checkpoint_path, whole_check_path
from tests.tui.runner_support import cli

AGGREGATE = "agg"


def _append(url: str, count: int, tag: str = "") -> None:
    journal = open_journal(url)
    for _ in range(count):
        version = journal.head(AGGREGATE)
        journal.execute(AGGREGATE, f"c{version}", {}, version,
                        lambda _state, v: Decision([NewEvent("x", {"v": v, "tag": tag})], {"v": v + 1}, {}))


def _rewrite(url: str, version: int) -> None:
    with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
        db.execute("UPDATE events SET data = '{\"v\":99}' WHERE aggregate = ? AND version = ?", (AGGREGATE, version))


def _broken(url: str) -> list[dict[str, Any]]:
    _code, report, err = cli(url, "health", "--json")
    assert isinstance(report, dict), err
    return [finding for finding in report["findings"] if finding["kind"] == "journal-chain-broken"]


def test_an_event_rewritten_before_the_checkpoint_passes_the_checked_health_but_fails_verify(sqlite_url: str) -> None:
    _append(sqlite_url, 5)
    assert _broken(sqlite_url) == []  # the first check: from the first event, leaving a checkpoint at 5
    _rewrite(sqlite_url, 2)
    _append(sqlite_url, 1)
    assert _broken(sqlite_url) == []  # event 2 lies before the checkpoint: not read again
    code, report, err = cli(sqlite_url, "verify", "--json")
    assert code == 8 and report["verified"] is False, err
    assert list(report["problems"]) == [AGGREGATE] and "event 2" in report["problems"][AGGREGATE]
    # The whole check dropped the broken chain's checkpoint: every health after it finds the break itself.
    assert [finding["evidence"]["aggregate"] for finding in _broken(sqlite_url)] == [AGGREGATE]


def test_an_event_rewritten_after_the_checkpoint_fails_health(sqlite_url: str) -> None:
    _append(sqlite_url, 4)
    assert _broken(sqlite_url) == []
    _append(sqlite_url, 3)
    _rewrite(sqlite_url, 6)
    broken = _broken(sqlite_url)
    assert [finding["evidence"]["aggregate"] for finding in broken] == [AGGREGATE]
    assert "event 6" in broken[0]["message"]


def test_a_tampered_checkpoint_file_is_caught_and_verify_starts_it_afresh(sqlite_url: str) -> None:
    _append(sqlite_url, 4)
    assert _broken(sqlite_url) == []
    path = checkpoint_path(sqlite_url)
    document = json.loads(path.read_text())
    original = dict(document["chains"][AGGREGATE])
    for tampered in ({"hash": "f" * 64}, {"version": 3}, {"version": 9}):
        document["chains"][AGGREGATE] = {**original, **tampered}
        path.write_text(json.dumps(document))
        broken = _broken(sqlite_url)
        assert [finding["evidence"]["aggregate"] for finding in broken] == [AGGREGATE], tampered
    code, report, err = cli(sqlite_url, "verify", "--json")
    assert code == 0 and report["verified"] is True and report["chains"][AGGREGATE] == 4, err
    assert _broken(sqlite_url) == []


def test_a_checkpoint_of_another_journal_is_ignored(tmp_path: Path) -> None:
    first, second = (f"sqlite:///{tmp_path / name}" for name in ("first.db", "second.db"))
    _append(first, 5)
    _append(second, 5)  # the same commands: the same chain, event for event
    assert _broken(first) == []
    _rewrite(second, 2)
    shutil.copyfile(checkpoint_path(first), checkpoint_path(second))
    assert [finding["evidence"]["aggregate"] for finding in _broken(second)] == [AGGREGATE]


def test_a_checkpoint_over_another_first_event_is_ignored(tmp_path: Path) -> None:
    first, second = (f"sqlite:///{tmp_path / name}" for name in ("first.db", "second.db"))
    _append(first, 5)
    _append(second, 5, tag="another")
    assert _broken(first) == []
    document = json.loads(checkpoint_path(first).read_text())
    document["journal"] = str((tmp_path / "second.db").resolve())
    checkpoint_path(second).write_text(json.dumps(document))
    assert _broken(second) == []  # checked from its own first event, not held to the other's hashes
    assert json.loads(checkpoint_path(second).read_text())["chains"][AGGREGATE]["hash"] != (
        document["chains"][AGGREGATE]["hash"])


def test_the_side_files_are_the_owners_alone(sqlite_url: str) -> None:
    _append(sqlite_url, 2)
    assert _broken(sqlite_url) == []
    for path in (checkpoint_path(sqlite_url), whole_check_path(sqlite_url)):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path


def test_a_checkpoint_that_cannot_be_written_costs_only_a_finding(sqlite_url: str) -> None:
    _append(sqlite_url, 3)
    checkpoint_path(sqlite_url).mkdir()  # a folder where the file goes
    _code, report, err = cli(sqlite_url, "health", "--json")
    assert isinstance(report, dict), err
    kinds = [finding["kind"] for finding in report["findings"]]
    assert "chain-checkpoint-unwritable" in kinds and "journal-chain-broken" not in kinds
    assert report["verified_chains"][AGGREGATE] == 3


def test_health_from_a_checkpoint_with_no_whole_check_recorded_says_verify_is_due(sqlite_url: str) -> None:
    _append(sqlite_url, 3)
    _code, report, _err = cli(sqlite_url, "health", "--json")
    assert "verify-due" not in [finding["kind"] for finding in report["findings"]]  # it was a whole check
    whole_check_path(sqlite_url).unlink()
    _code, report, _err = cli(sqlite_url, "health", "--json")
    due = [finding for finding in report["findings"] if finding["kind"] == "verify-due"]
    assert len(due) == 1 and due[0]["evidence"]["lastWholeCheck"] is None
    assert cli(sqlite_url, "verify")[0] == 0
    _code, report, _err = cli(sqlite_url, "health", "--json")
    assert "verify-due" not in [finding["kind"] for finding in report["findings"]]
