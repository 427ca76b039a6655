"""The schedule's tests' harness: a real SQLite journal in tmp_path, a ManualClock, small commission builders.

Everything here goes through the public API (core.LifecycleSchedule over store.open_journal);
the only back door is `tamper_state`, which edits the stored state document with sqlite3 the way
a damaged disk or a careless hand would, so the corrupt-state tests can prove the engine refuses it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pendulum
import pytest
from hypothesis import event
from pendulum import DateTime

from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule, ManualClock, ScheduleError
from factory_schedule.store import canonical_json, open_journal
from tests.store.forgery import put_parted_state, put_whole_state, reseal_head, stored_state

ZONE = "Europe/London"
PARKED = "parked/schedule"  # where put_row keeps the events a restored backup would not have
# December 2026: London is on GMT, so a local wall time reads the same in UTC.
EFFECTIVE = "2026-12-07"  # a Monday, ISO week 2026-W50
RECORDED = "2026-12-06T12:00:00Z"  # the Sunday before: the commission is recorded here
WEEKLY_TOKENS = 40_000_000
CALL_BOUND = 150_000
SIGN_IN = "owner@example.com"
OWNER = "owner"


# -- commissions ---------------------------------------------------------------------------------------------------


def task(name: str = "scan", account: str = "claude", max_calls: int = 4, call_bound: int = CALL_BOUND) -> dict:
    return {"task": name, "account": account, "maxCalls": max_calls, "callBound": call_bound}


def basic_lane(
    product: str = "alpha",
    time: str = "02:00",
    closes: str = "05:00",
    deadline: int = 45,
    tasks: list[dict] | None = None,
) -> dict:
    return {
        "lane": f"{product}/basic",
        "product": product,
        "rhythm": "basic",
        "time": time,
        "closes": closes,
        "deadlineMinutes": deadline,
        "tasks": tasks if tasks is not None else [task()],
    }


def weekly_lane(
    product: str = "alpha",
    rhythm: str = "full",
    weekday: int = 4,
    time: str = "02:40",
    closes: str = "05:00",
    deadline: int = 120,
    tasks: list[dict] | None = None,
) -> dict:
    return {
        "lane": f"{product}/{rhythm}",
        "product": product,
        "rhythm": rhythm,
        "weekday": weekday,
        "time": time,
        "closes": closes,
        "deadlineMinutes": deadline,
        "tasks": tasks if tasks is not None else [task()],
    }


def commission(
    lanes: list[dict] | None = None,
    revision: int = 1,
    effective_from: str = EFFECTIVE,
    weekly_tokens: int = WEEKLY_TOKENS,
    zone: str = ZONE,
    record_max_age_days: int = 30,
) -> dict:
    return {
        "protocol": "sf-schedule-commission/1",
        "revision": revision,
        "zone": zone,
        "effectiveFrom": effective_from,
        "weeklyTokens": weekly_tokens,
        "recordMaxAgeDays": record_max_age_days,
        "lanes": lanes if lanes is not None else [basic_lane()],
    }


def basic_id(product: str, date: str) -> str:
    return f"discovery/{product}/basic/{date}"


def weekly_id(product: str, rhythm: str, week: str) -> str:
    return f"discovery/{product}/{rhythm}/{week}"


# -- runner reports ------------------------------------------------------------------------------------------------


def utc(text: str) -> DateTime:
    """An ISO instant as a DateTime (`pendulum.parse` may also answer a Date, a Time or a Duration)."""
    parsed = pendulum.parse(text)
    assert isinstance(parsed, DateTime), f"{text!r} is not an instant"
    return parsed


def epoch(instant: str | DateTime) -> int:
    moment = utc(instant) if isinstance(instant, str) else instant
    return int(moment.timestamp())


def observation(status: str = "allowed", resets_at: str | DateTime | None = None, overage: bool = False) -> dict:
    event: dict[str, Any] = {"status": status, "rateLimitType": "five_hour", "isUsingOverage": overage}
    if resets_at is not None:
        event["resetsAt"] = epoch(resets_at)
    return event


def result_report(tokens: int = 90_000, output: str = "ok", observed: dict | None = None) -> dict:
    report: dict[str, Any] = {"kind": "result", "tokens": tokens, "output": output}
    if observed is not None:
        report["observation"] = observed
    return report


def usage_limit_report(resets_at: str | DateTime, tokens: int = 0, status: str = "rejected",
                       overage: bool = False) -> dict:
    return {"kind": "usage-limit", "tokens": tokens, "observation": observation(status, resets_at, overage)}


def sign_in_report(http_status: int = 401, tokens: int = 0) -> dict:
    return {"kind": "sign-in-needed", "tokens": tokens, "httpStatus": http_status}


def lost_report(observed: dict | None = None) -> dict:
    report: dict[str, Any] = {"kind": "lost"}
    if observed is not None:
        report["observation"] = observed
    return report


def confirmation(runner: str, by: str = "supervisor") -> dict:
    return {"runner": runner, "confirmedBy": by, "evidence": f"process of {runner} is gone"}


# -- the harness ---------------------------------------------------------------------------------------------------


@dataclass
class Harness:
    """One journal file, one clock, one schedule; `again()` is another process's view of the same file."""

    path: Path
    url: str
    clock: ManualClock
    schedule: LifecycleSchedule

    def again(self) -> LifecycleSchedule:
        """A fresh LifecycleSchedule over a freshly opened journal: what a restarted runner holds."""
        return LifecycleSchedule(open_journal(self.url), self.clock)

    def at(self, instant: str | DateTime) -> Harness:
        self.clock.set(instant)
        return self

    def head(self) -> int:
        return open_journal(self.url).head(SCHEDULE_AGGREGATE)

    def state(self) -> dict[str, Any]:
        """The stored state as it is, read past the journal's seal check (a test may have damaged the chain)."""
        with sqlite3.connect(self.path) as db:
            return json.loads(stored_state(db, SCHEDULE_AGGREGATE))

    def state_bytes(self) -> int:
        return len(canonical_json(self.state()).encode("utf-8"))

    def events(self) -> list:
        return list(open_journal(self.url).iter_history(SCHEDULE_AGGREGATE))

    def assert_what_the_engine_remembers_is_what_is_stored(self) -> None:
        """A command checks and encodes only the lanes it changed (`core.schedule_codec`): the state it keeps in
        memory must be exactly what a fresh process parses whole from the stored text, and that text
        must be the canonical encoding of it."""
        _version, text = open_journal(self.url).load_text(SCHEDULE_AGGREGATE)
        if text is None:
            return
        assert text == canonical_json(json.loads(text))
        assert self.schedule.read() == self.again().read()

    def command_ids(self) -> list[str]:
        return [event.command_id for event in self.events()]

    def tamper_state(self, change: Callable[[dict[str, Any]], None], *, in_parts: bool = False) -> None:
        """Edit the stored state document in place, bypassing the journal, and reseal the head the way a
        forger who knows the chain's rules could: the edit reaches the engine's own checks of the state.
        Stored whole, or `in_parts` as the engine's writer cuts a state (a reader then gets its parts)."""
        with sqlite3.connect(self.path) as db:
            document = json.loads(stored_state(db, SCHEDULE_AGGREGATE))
            change(document)
            (put_parted_state if in_parts else put_whole_state)(db, SCHEDULE_AGGREGATE, dumped(document))
            reseal_head(db, SCHEDULE_AGGREGATE)

    def stored_row(self) -> tuple[int, str]:
        """The state row as stored, read with sqlite3: its version and its text (its parts joined)."""
        with sqlite3.connect(self.path) as db:
            (version,) = db.execute("SELECT version FROM aggregates WHERE aggregate = ?",
                                    (SCHEDULE_AGGREGATE,)).fetchone()
            return int(version), stored_state(db, SCHEDULE_AGGREGATE)

    def put_row(self, text: str, version: int | None = None, *, in_parts: bool = False) -> None:
        """Write the stored state row as a forged edit or a restore from a backup would: text and version as given
        (stored whole, or `in_parts` as `tamper_state` stores them).

        The head's seal is recomputed (`reseal_head`) so that the engine's own checks see the row, and the events
        and receipts beyond the version are parked under another aggregate (a backup would not have them), to come
        back when a later call moves the version forward again. A version no event has is left for the journal to
        refuse."""
        with sqlite3.connect(self.path) as db:
            if version is not None:
                for table, column in (("events", "version"), ("receipts", "last_version")):
                    db.execute(f"UPDATE {table} SET aggregate = ? WHERE aggregate = ? AND {column} > ?",
                               (PARKED, SCHEDULE_AGGREGATE, version))
                    db.execute(f"UPDATE {table} SET aggregate = ? WHERE aggregate = ? AND {column} <= ?",
                               (SCHEDULE_AGGREGATE, PARKED, version))
                db.execute("UPDATE aggregates SET version = ? WHERE aggregate = ?", (version, SCHEDULE_AGGREGATE))
            (put_parted_state if in_parts else put_whole_state)(db, SCHEDULE_AGGREGATE, text)
            head = db.execute("SELECT 1 FROM events e JOIN aggregates a ON e.aggregate = a.aggregate "
                              "AND e.version = a.version WHERE a.aggregate = ?", (SCHEDULE_AGGREGATE,)).fetchone()
            if head is not None:
                reseal_head(db, SCHEDULE_AGGREGATE)

    def tamper_event(self, command_id: str, change: Callable[[dict[str, Any]], None]) -> None:
        """Edit the data of the event a command recorded, bypassing the journal (its hash no longer seals it)."""
        with sqlite3.connect(self.path) as db:
            (data,) = db.execute("SELECT data FROM events WHERE command_id = ?", (command_id,)).fetchone()
            document = json.loads(data)
            change(document)
            db.execute("UPDATE events SET data = ? WHERE command_id = ?", (dumped(document), command_id))

    def delete_receipt(self, command_id: str) -> None:
        with sqlite3.connect(self.path) as db:
            deleted = db.execute("DELETE FROM receipts WHERE command_id = ?", (command_id,)).rowcount
        assert deleted == 1, f"no receipt {command_id!r} to delete"

    # -- common moves ---------------------------------------------------------------------------------------

    def owner_record(self, account: str = "claude", sequence: int = 1, sign_in: str = SIGN_IN, overage: bool = False):
        return self.schedule.record_account(
            account=account, sequence=sequence, sign_in=sign_in, overage=overage, recorded_by=OWNER
        )

    def admit(self, lane: str = "alpha/basic", runner: str = "r1"):
        tick = self.schedule.start(lane=lane, runner=runner)
        assert tick.kind == "admitted", tick
        return tick

    def call(
        self,
        occurrence_id: str,
        runner: str = "r1",
        task: str = "scan",
        work: str = "w1",
        bound: int = CALL_BOUND,
        sign_in: str = SIGN_IN,
        attempt: int = 1,
    ):
        return self.schedule.admit_call(
            occurrence_id=occurrence_id, runner=runner, task=task, work=work, bound=bound, sign_in=sign_in,
            attempt=attempt,
        )

    def lane_state(self, lane: str) -> dict[str, Any]:
        return next(entry for entry in self.state()["lanes"] if entry["lane"] == lane)

    def stored(self, occurrence_id: str) -> dict[str, Any] | None:
        """The occurrence's stored record (camelCase), wherever its lane keeps it, or None once pruned."""
        for lane in self.state()["lanes"]:
            for occurrence in [lane.get("open"), *lane.get("recent", [])]:
                if occurrence is not None and occurrence["id"] == occurrence_id:
                    return occurrence
        return None

    def account_state(self, account: str = "claude") -> dict[str, Any]:
        return next(entry for entry in self.state()["accounts"] if entry["account"] == account)

    def ledger(self) -> dict[str, dict[str, Any]]:
        return {week["week"]: week for week in self.state()["ledger"]}


def make_harness(
    tmp_path: Path,
    lanes: list[dict] | None = None,
    start: str = RECORDED,
    recorded: dict | None = None,
    **commission_fields: Any,
) -> Harness:
    """A journal with one commission (`recorded`, or one built from `lanes`) recorded at `start`."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "journal.db"
    url = f"sqlite:///{path}"
    clock = ManualClock(start)
    harness = Harness(path=path, url=url, clock=clock, schedule=LifecycleSchedule(open_journal(url), clock))
    harness.schedule.record_commission(recorded if recorded is not None else commission(lanes, **commission_fields))
    return harness


def open_harness(path: Path, now: str) -> Harness:
    """A harness over an existing journal file (a copy made by `copy_journal`)."""
    url = f"sqlite:///{path}"
    clock = ManualClock(now)
    return Harness(path=path, url=url, clock=clock, schedule=LifecycleSchedule(open_journal(url), clock))


def copy_journal(source: Path, target: Path) -> None:
    """A consistent copy of a (WAL-mode) journal file, through SQLite's backup API."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def segment_count(occurrence: Any) -> int:
    segments = occurrence.segments
    return segments if isinstance(segments, int) else len(segments)


def coalesced_of(occurrence: Any) -> tuple[int, str, str] | None:
    """The {count, first, last} an admitted occurrence recorded, from a result's occurrence or a stored dict."""
    coalesced = occurrence.get("coalesced") if isinstance(occurrence, dict) else occurrence.coalesced
    if coalesced is None:
        return None
    if isinstance(coalesced, dict):
        return coalesced["count"], coalesced["first"], coalesced["last"]
    return coalesced.count, coalesced.first, coalesced.last


def expect_refusal(action: Callable[[], Any], allowed: set[str]) -> Any:
    """For random command sequences: the answer, or None when refused with one of the `allowed` codes (any
    other refusal fails the test); each outcome is a hypothesis `event`, so the statistics show what ran."""
    try:
        answer = action()
    except ScheduleError as error:
        assert error.code in allowed, f"unexpected {error.code}: {error}"
        event(f"refused {error.code}")
        return None
    event(f"answered {type(answer).__name__} {getattr(answer, 'kind', '')}".rstrip())
    return answer


@contextmanager
def writes_nothing(harness: Harness) -> Iterator[None]:
    """The block may refuse or answer, but the journal's head and state are exactly as before."""
    head, state = harness.head(), harness.state()
    yield
    assert harness.head() == head, "the journal was written"
    assert harness.state() == state, "the stored state changed"


def refused(harness: Harness, code: str, action: Callable[[], Any]) -> ScheduleError:
    """`action` raises ScheduleError `code` and writes nothing."""
    with writes_nothing(harness), pytest.raises(ScheduleError) as caught:
        action()
    assert caught.value.code == code, caught.value
    return caught.value


# -- the stored state: documents, verdicts, scenarios ---------------------------------------------------------------

ALPHA, BRAVO, CHARLIE, FULL = "alpha/basic", "bravo/basic", "charlie/basic", "alpha/full"
def dumped(document: Any) -> str:
    """A document as compact, key-sorted JSON: what a hand edit writes back (not necessarily canonical)."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


class TheLockMovesTheClock:
    """The real journal, except that taking its write lock sets `clock` to `then`: a reading taken before the
    lock is the earlier time, a reading taken with the lock held the later one."""

    def __init__(self, journal: Any, clock: ManualClock, then: str) -> None:
        self._journal = journal
        self._clock = clock
        self._then = then

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._journal.writing():
            self._clock.set(self._then)
            yield


class PlannedTogether:
    """The real journal, except that each handle's first `execute` waits until every racer has planned.

    Nothing about the journal is faked: it only makes the race the OS may or may not produce certain, so
    every racer's command is planned at the same version before any of them commits.
    """

    def __init__(self, journal: Any, barrier: Any) -> None:
        self._journal = journal
        self._barrier = barrier
        self._waited = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)

    def writing(self) -> Any:
        """No write lock around the plan, as a journal without one would: the race this makes certain reaches
        the engine's re-plan guard, which the lock otherwise leaves unreachable."""
        return nullcontext()

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        if not self._waited:
            self._waited = True
            self._barrier.wait(timeout=30)
        return self._journal.execute(*args, **kwargs)


class Overtaken:
    """The real journal, except that just before each `execute` (only the first `times`, when given) another
    writer (a second schedule on its own handle) commits an owner record, so the command this handle planned
    is overtaken; `overtaken` counts how often."""

    def __init__(self, journal: Any, other: LifecycleSchedule, account: str = "chatgpt",
                 times: int | None = None) -> None:
        self._journal = journal
        self._other = other
        self._account = account
        self._times = times
        self.overtaken = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)

    def writing(self) -> Any:
        """No write lock around the plan (see `PlannedTogether.writing`): the other writer commits in between."""
        return nullcontext()

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        if self._times is None or self.overtaken < self._times:
            self.overtaken += 1
            self._other.record_account(account=self._account, sequence=self.overtaken, sign_in=SIGN_IN,
                                       overage=False, recorded_by="the other writer")
        return self._journal.execute(*args, **kwargs)


class FailsAfterDeciding:
    """The real journal, except that the first decision it runs raises `error` once it has decided (the new
    state checked and encoded by `StateCodec.write`), as a lost disk or a late conflict would fail it: the
    transaction rolls back. `decided` keeps that decision's (version, state text); `failed` counts failures."""

    def __init__(self, journal: Any, error: BaseException | None = None) -> None:
        self._journal = journal
        self._error = error if error is not None else OSError("the disk went away")
        self.decided: list[tuple[int, str]] = []
        self.failed = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)

    def execute(self, aggregate: str, command_id: str, payload: Any, version: int, decide: Any,
                **kwargs: Any) -> Any:
        def failing(state: Any, at_version: int) -> Any:
            decision = decide(state, at_version)
            if not self.failed:
                self.failed += 1
                self.decided.append((at_version + 1, str(decision.state)))
                raise self._error
            return decision

        return self._journal.execute(aggregate, command_id, payload, version, failing, **kwargs)
