"""`health` checks each hash chain from the checkpoint its last check left beside the journal, and
`factory-schedule verify` checks every chain from its first event. What the checkpoint skips a whole verify
still finds; a checkpoint that no longer matches the journal fails loudly, in `verify` too, until the owner
accepts the history as it is; one of another journal is ignored; one that cannot be written costs the report
nothing but a finding. Real SQLite files edited behind the
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


def test_a_tampered_checkpoint_file_is_caught_until_the_owner_accepts_the_history(sqlite_url: str) -> None:
    """A checkpoint that no longer fits the journal is a journal set back or a checkpoint file edited: nothing here
    tells which, so `verify` reports it too, and only the owner's `verify --accept-history` starts afresh."""
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
    assert code == 8 and list(report["problems"]) == [AGGREGATE], err
    assert "--accept-history" in report["problems"][AGGREGATE]
    code, report, err = cli(sqlite_url, "verify", "--accept-history", "--json")
    assert code == 0 and report["verified"] is True and report["chains"][AGGREGATE] == 4, err
    assert _broken(sqlite_url) == []


def _backup(source: str, target: str) -> None:
    """Copy one SQLite journal over another through SQLite itself, as a restored backup arrives."""
    with sqlite3.connect(source.removeprefix("sqlite:///")) as src, \
            sqlite3.connect(target.removeprefix("sqlite:///")) as dst:
        src.backup(dst)


def test_a_journal_set_back_to_an_earlier_copy_fails_verify_and_every_check_after_it(tmp_path: Path) -> None:
    """A restored backup (or a cut WAL file) is a consistent journal, and a check from each first event passes it:
    `verify` holds it to what earlier checks saw, says what went back, and keeps the evidence for the next check."""
    url, copy = (f"sqlite:///{tmp_path / name}" for name in ("journal.db", "copy.db"))
    _append(url, 5)
    _backup(url, copy)
    _append(url, 2)
    assert _broken(url) == []  # checked through event 7
    _backup(copy, url)  # the journal as it was at event 5
    code, report, err = cli(url, "verify", "--json")
    assert code == 8 and list(report["problems"]) == [AGGREGATE], err
    assert "went back from 7 to 5" in report["problems"][AGGREGATE]
    for _ in range(2):  # the checkpoint at 7 is kept: health and verify keep saying it
        assert [finding["evidence"]["aggregate"] for finding in _broken(url)] == [AGGREGATE]
        assert cli(url, "verify")[0] == 8
    assert cli(url, "verify", "--accept-history")[0] == 0
    assert _broken(url) == []


def test_a_chain_replaced_from_its_first_event_is_a_break(tmp_path: Path) -> None:
    """Every row of a chain deleted and a new chain written in its place (the owner key's, say) verifies from its
    first event; a check of this journal saw another one, and says so."""
    url, other = (f"sqlite:///{tmp_path / name}" for name in ("journal.db", "other.db"))
    _append(url, 3)
    _append(other, 3, tag="another")
    assert _broken(url) == []
    _backup(other, url)  # the same journal file, another history
    broken = _broken(url)
    assert [finding["evidence"]["aggregate"] for finding in broken] == [AGGREGATE]
    assert cli(url, "verify")[0] == 8
    assert cli(url, "verify", "--accept-history")[0] == 0
    assert _broken(url) == []


def test_a_chain_deleted_whole_is_a_break(sqlite_url: str) -> None:
    _append(sqlite_url, 3)
    assert _broken(sqlite_url) == []
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as db:
        for table in ("events", "receipts", "aggregates", "state_parts"):
            db.execute(f"DELETE FROM {table} WHERE aggregate = ?", (AGGREGATE,))
    broken = _broken(sqlite_url)
    assert [finding["evidence"]["aggregate"] for finding in broken] == [AGGREGATE]
    assert "went back from 3 to 0" in broken[0]["message"]
    code, report, _err = cli(sqlite_url, "verify", "--json")
    assert code == 8 and list(report["problems"]) == [AGGREGATE]


def test_a_checkpoint_of_another_journal_is_ignored(tmp_path: Path) -> None:
    first, second = (f"sqlite:///{tmp_path / name}" for name in ("first.db", "second.db"))
    _append(first, 5)
    _append(second, 5)  # the same commands: the same chain, event for event
    assert _broken(first) == []
    _rewrite(second, 2)
    shutil.copyfile(checkpoint_path(first), checkpoint_path(second))
    assert [finding["evidence"]["aggregate"] for finding in _broken(second)] == [AGGREGATE]


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
