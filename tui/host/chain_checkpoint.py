"""Where a check of the hash chains starts, and when the whole of them was last checked.

A check from the first event reads every event of history, seconds on a year's journal, and `health`, the
dashboard and the tick check often. Each of them starts where the last check of this owner's processes
ended: the checkpoint file (`<journal file>.chain-checkpoint.json`; for a server's journal,
`chain-checkpoint-<digest>.json` in the user data folder, keyed by its URL without the password) holds, per
aggregate, the version and hash of the head that was checked. A check from
it reads only what was appended since, after proving that the event it names still has the hash it had
(`Journal.verify`): a history rewritten at or before it fails loudly, even when rechained whole.

An edit before the checkpoint that leaves the event it names alone is found only by checking from the first
event: `factory-schedule verify` does that, and so does any check without a checkpoint. Each such whole check
is recorded (`<journal file>.verified.json`): when it ran and what it found, so that health can say when it
is due.

The same file keeps the staged lanes' history as `health` last counted it (`CountedHistory`: the counts up to
a version, with that event's hash), so the next count reads only the events after it; a count whose event
changed hash is not counted on from.

A checkpoint of another journal (another URL or path) or one that does not parse is ignored: that check
starts from the first event, which costs time and never trust. A chain gone or replaced from its first event
is checked from its checkpoint, which says it is not the history verified before. A check that breaks
leaves that aggregate's checkpoint where it was, and a whole check that breaks before it drops it, so every
later check re-finds the break; `verify` also holds the journal to the checkpoints (a journal set back to a
restored copy verifies from its first event) until the owner accepts its history as it is. A file that
cannot be written never costs the report: it is one more finding, `chain-checkpoint-unwritable`.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from factory_schedule.core.health import Finding, HistoryCounts
from factory_schedule.store import Checkpoint, Journal
from factory_schedule.store.urls import shown_url
from factory_schedule.tui.host.files import MIB, read_regular_text
from factory_schedule.tui.host.paths import beside_journal, sqlite_file_of

MAX_FILE_BYTES = 4 * MIB  # a few lines per aggregate, and the staged lanes' task numbers counted


@dataclass(frozen=True)
class WholeCheck:
    """A check of every aggregate from its first event: when it ran, and why each that broke did not verify."""

    at: datetime
    problems: Mapping[str, str]


@dataclass(frozen=True)
class CountedHistory:
    """The staged lanes' events counted up to `version`, whose event's hash is `hash`."""

    version: int
    hash: str
    counts: HistoryCounts


def _counts_document(counts: HistoryCounts) -> dict[str, Any]:
    return {"enqueued": {lane: sorted(numbers) for lane, numbers in counts.enqueued.items()},
            "done": {lane: sorted(numbers) for lane, numbers in counts.done.items()},
            "completed": dict(counts.completed), "parked": dict(counts.parked), "decisions": counts.decisions,
            "undecided": sorted(counts.undecided)}


def _counted_of(entry: object) -> CountedHistory | None:
    """A kept count as written by `_counts_document`; None for anything else."""
    if not isinstance(entry, dict):
        return None
    try:
        version, hash_ = entry["version"], entry["hash"]
        if not (isinstance(version, int) and version > 0 and isinstance(hash_, str)):
            return None
        counts = HistoryCounts()
        for lane in counts.enqueued:
            counts.enqueued[lane] = {int(n) for n in entry["enqueued"][lane]}
            counts.done[lane] = {int(n) for n in entry["done"][lane]}
            counts.completed[lane] = int(entry["completed"][lane])
            counts.parked[lane] = int(entry["parked"][lane])
        counts.decisions = int(entry["decisions"])
        counts.undecided = {str(a) for a in entry["undecided"]}
    except (KeyError, TypeError, ValueError):
        return None
    return CountedHistory(version, hash_, counts)


def event_hash(journal: Journal, aggregate: str, version: int) -> str | None:
    """The hash of the aggregate's event `version`, None when there is none."""
    found = journal.history(aggregate, after=version - 1, limit=1)
    return found[0].hash if found and found[0].version == version else None


def journal_identity(url: str) -> str:
    """What names one journal in its side files: a SQLite file's real path, else the URL without its password."""
    path = sqlite_file_of(url)
    return os.path.realpath(os.path.expanduser(path)) if path is not None else shown_url(url)


def checkpoint_path(url: str) -> Path:
    return beside_journal(shown_url(url), ".chain-checkpoint.json", "chain-checkpoint", ".json")


def whole_check_path(url: str) -> Path:
    return beside_journal(shown_url(url), ".verified.json", "verified", ".json")


def file_stamp(url: str) -> tuple[int, int, int] | None:
    """The checkpoint file's identity now (inode, size, modification time in ns), None when it is not there: every
    write replaces the file (a new inode), so a stamp that changed means some check wrote it since."""
    try:
        found = os.stat(checkpoint_path(url))
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns


def _read_document(path: Path, url: str) -> dict[str, Any] | None:
    """The side file's object when it reads and names this journal; None otherwise (missing, foreign, garbled)."""
    try:
        document = json.loads(read_regular_text(path, MAX_FILE_BYTES))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or document.get("journal") != journal_identity(url):
        return None
    return document


def _write_document(path: Path, document: Mapping[str, Any]) -> None:
    """Replace the side file atomically, owner-only (0600) from its first byte. One line, which the C encoder
    writes (an indented file goes through the pure-Python one): the dashboard rewrites the checkpoint after
    every command it sees."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, temporary = tempfile.mkstemp(prefix=path.name, dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(json.dumps(document, sort_keys=True))
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _checkpoint_of(entry: object) -> Checkpoint | None:
    if not isinstance(entry, dict):
        return None
    version, hash_, unsealed = entry.get("version"), entry.get("hash"), entry.get("unsealed_through", 0)
    if not (isinstance(version, int) and isinstance(unsealed, int) and isinstance(hash_, str)):
        return None
    if version < 1 or not 0 <= unsealed <= version:
        return None
    return Checkpoint(version=version, hash=hash_, unsealed_through=unsealed)


def read_checkpoints(journal: Journal, url: str) -> dict[str, Checkpoint]:
    """Where each aggregate's check starts: the checkpoints this journal's side file holds (none for a file of
    another journal, or a garbled one). A checkpoint over a chain that is gone or begins with another first
    event is kept: checking from it says the history is not the one verified before."""
    document = _read_document(checkpoint_path(url), url)
    entries = document.get("chains") if document is not None else None
    if not isinstance(entries, dict):
        return {}
    checkpoints: dict[str, Checkpoint] = {}
    for aggregate, entry in entries.items():
        checkpoint = _checkpoint_of(entry)
        if checkpoint is not None:
            checkpoints[aggregate] = checkpoint
    return checkpoints


def read_counted(url: str) -> CountedHistory | None:
    """The staged lanes' history as last counted for this journal, None when none is kept (or it is garbled)."""
    document = _read_document(checkpoint_path(url), url)
    return _counted_of(document.get("counted")) if document is not None else None


def write_checkpoints(url: str, verified: Mapping[str, Checkpoint],
                      counted: CountedHistory | None = None) -> None:
    """Keep how far each aggregate verified, and the staged lanes' count (without one, the count kept stays);
    OSError when the file cannot be written."""
    chains = {
        aggregate: {"version": point.version, "hash": point.hash, "unsealed_through": point.unsealed_through}
        for aggregate, point in verified.items() if point.version > 0
    }
    document: dict[str, Any] = {"journal": journal_identity(url), "chains": chains}
    if counted is not None:
        document["counted"] = {"version": counted.version, "hash": counted.hash, **_counts_document(counted.counts)}
    else:
        earlier = _read_document(checkpoint_path(url), url)
        if earlier is not None and "counted" in earlier:
            document["counted"] = earlier["counted"]
    _write_document(checkpoint_path(url), document)


def read_whole_check(url: str) -> WholeCheck | None:
    """The last check of every aggregate from its first event, as recorded; None when none is (or it is garbled)."""
    document = _read_document(whole_check_path(url), url)
    if document is None:
        return None
    try:
        at = datetime.fromisoformat(document["at"])
    except (KeyError, TypeError, ValueError):
        return None
    problems = document.get("problems")
    if at.tzinfo is None or not isinstance(problems, dict):
        return None
    return WholeCheck(at, {str(name): str(problem) for name, problem in problems.items()})


def write_whole_check(url: str, check: WholeCheck, verified: Mapping[str, Checkpoint]) -> None:
    """Record a whole check: when, how far each aggregate verified, what broke (OSError when it cannot)."""
    _write_document(whole_check_path(url), {
        "journal": journal_identity(url), "at": check.at.isoformat(), "problems": dict(check.problems),
        "verified": {aggregate: point.version for aggregate, point in verified.items()},
    })


def unwritable_finding(path: Path, error: OSError) -> Finding:
    detail = f"{type(error).__name__}: {error.strerror or error}"
    return Finding(
        "chain-checkpoint-unwritable", "warning",
        f"how far the hash chains were checked could not be kept in {path}: {detail}; each check starts from "
        "the first event until the file can be written",
        {"path": str(path), "detail": detail})


def remember(url: str, since: Mapping[str, Checkpoint], verified: Mapping[str, Checkpoint],
             problems: Mapping[str, str], now: datetime, counted: CountedHistory | None = None,
             counted_before: CountedHistory | None = None, *, whole: bool = False,
             set_back: Collection[str] = ()) -> list[Finding]:
    """After a check that started from `since` (and counted on from `counted_before`): keep where each aggregate
    verified to and what was counted, and record the check when it started from the first event (`whole`, or
    no checkpoint to start from). A broken aggregate keeps its old checkpoint; after a whole check, only one
    that is not the history its checkpoint names (`set_back`): one broken before it keeps none, so that every
    later check reads it from its first event. What could not be written, as findings of the report it
    belongs to."""
    whole = whole or not since
    kept = {aggregate: point for aggregate, point in since.items()
            if aggregate not in verified and (not whole or aggregate in set_back)}
    kept.update(verified)
    findings: list[Finding] = []
    if dict(kept) != dict(since) or whole or (counted is not None and counted != counted_before):
        try:
            write_checkpoints(url, kept, counted)
        except OSError as error:
            findings.append(unwritable_finding(checkpoint_path(url), error))
    if whole:
        try:
            write_whole_check(url, WholeCheck(now, dict(problems)), verified)
        except OSError as error:
            findings.append(unwritable_finding(whole_check_path(url), error))
    return findings
