"""A review of `core.stored` and settled records kept without their calls: each test names the rule it holds.

The engine keeps the state it last read or wrote and checks and encodes only the lanes a decision changed;
settled records in `recent` keep their calls' count and debits (`elided`), the calls staying in the settlement
event. These tests try to make a cached lane, member text, check or whole record stand in for what the stored
bytes say: over long sequences (revisions that drop, add and rejoin lanes and change the zone, ledger pruning,
a conflict or a failure after the new state was encoded, two engines on one file), against rows and events
changed behind a running engine, and through the late retries that need a settled record's calls.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from rich.console import Console

import factory_schedule.core.service as service
from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule, ScheduleError
from factory_schedule.core.commission import commission_digest, commission_document, parse_commission
from factory_schedule.core.model import LedgerWeek
from factory_schedule.core.state import dump_state, parse_state
from factory_schedule.core.stored import StateCodec
from factory_schedule.store import JournalCorruptError, VersionConflictError, canonical_json, open_journal
from tests.core.engine_helpers import (
    CALL_BOUND,
    SIGN_IN,
    Harness,
    basic_id,
    basic_lane,
    commission,
    confirmation,
    expect_refusal,
    make_harness,
    refused,
    result_report,
    weekly_lane,
    writes_nothing,
)

ALPHA, BRAVO, CHARLIE, FULL = "alpha/basic", "bravo/basic", "charlie/basic", "alpha/full"
LANES = [basic_lane("alpha"), basic_lane("bravo", time="02:10"), weekly_lane(weekday=1)]


# -- helpers ---------------------------------------------------------------------------------------------------------


def assert_stored_whole(h: Harness, *engines: LifecycleSchedule) -> None:
    """The stored text is the canonical encoding of the whole state it parses to, and every engine (long-lived
    or not) reads what a fresh one reads, settled records' calls included."""
    reader = open_journal(h.url)
    try:
        version, text = reader.load_text(SCHEDULE_AGGREGATE)
        assert text is not None
        whole = parse_state(json.loads(text), version)
        assert text == canonical_json(dump_state(whole.state))
        fresh = LifecycleSchedule(reader, h.clock)
        view, records = fresh.read(), fresh.settled_records()
        for engine in (h.schedule, *engines):
            assert engine.read() == view
            assert engine.settled_records() == records
    finally:
        reader.close()


def tamper_event(h: Harness, command_id: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit the data of the event a command recorded, bypassing the journal (its hash no longer seals it)."""
    with sqlite3.connect(h.path) as db:
        (data,) = db.execute("SELECT data FROM events WHERE command_id = ?", (command_id,)).fetchone()
        document = json.loads(data)
        change(document)
        db.execute("UPDATE events SET data = ? WHERE command_id = ?",
                   (json.dumps(document, sort_keys=True, separators=(",", ":")), command_id))


def lane_of(document: dict, lane_id: str) -> dict:
    return next(entry for entry in document["lanes"] if entry["lane"] == lane_id)


class OvertakenOnce:
    """The real journal, except that before its first `execute` another engine commits an owner record."""

    def __init__(self, journal: Any, other: LifecycleSchedule, sequence: int) -> None:
        self._journal, self._other, self._sequence, self.overtaken = journal, other, sequence, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)

    def writing(self) -> Any:
        """No write lock around the plan, so that the other engine can commit between plan and execute."""
        return nullcontext()

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        if not self.overtaken:
            self.overtaken += 1
            self._other.record_account(account="chatgpt", sequence=self._sequence, sign_in=SIGN_IN, overage=False,
                                       recorded_by="the other writer")
        return self._journal.execute(*args, **kwargs)


class FailsAfterDeciding:
    """The real journal, except that the first decision it runs raises `error` once it has decided (the new
    state checked and encoded by `StateCodec.write`): the transaction rolls back."""

    def __init__(self, journal: Any, error: Exception) -> None:
        self._journal, self._error, self.failed = journal, error, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)

    def execute(self, aggregate: str, command_id: str, payload: Any, version: int, decide: Any, **kwargs: Any):
        def failing(state: Any, at_version: int) -> Any:
            decision = decide(state, at_version)
            if not self.failed:
                self.failed += 1
                raise self._error
            return decision

        return self._journal.execute(aggregate, command_id, payload, version, failing, **kwargs)


class Night:
    """Drives lanes through nights with one or more engines and checks the stored text after every command."""

    def __init__(self, h: Harness, others: tuple[LifecycleSchedule, ...] = ()) -> None:
        self.h = h
        self.engines = (h.schedule, *others)
        self.turn = 0
        self.settled: dict[str, list[dict[str, Any]]] = {}  # occurrence -> its calls' admission requests

    def engine(self, alternate: bool) -> LifecycleSchedule:
        if not alternate:
            return self.h.schedule
        self.turn += 1
        return self.engines[self.turn % len(self.engines)]

    def check(self) -> None:
        assert_stored_whole(self.h, *self.engines[1:])

    def run(self, lane: str, runner: str, works: tuple[str, ...] = ("w1",), alternate: bool = False,
            tokens: int = 1_000) -> str:
        tick = self.engine(alternate).start(lane=lane, runner=runner)
        assert tick.kind == "admitted", tick
        self.check()
        occurrence_id = tick.occurrence.id
        requests = []
        for work in works:
            request = {"occurrence_id": occurrence_id, "runner": runner, "task": "scan", "work": work,
                       "bound": CALL_BOUND, "sign_in": SIGN_IN}
            admission = self.engine(alternate).admit_call(**request)
            assert admission.admitted and admission.dispatch, admission
            self.check()
            self.engine(alternate).end_call(occurrence_id=occurrence_id, runner=runner, call=admission.call,
                                            report=result_report(tokens))
            self.check()
            requests.append(request)
        self.engine(alternate).settle(occurrence_id=occurrence_id, settled_by=runner, status="completed",
                                      reason="done")
        self.check()
        self.settled[occurrence_id] = requests
        return occurrence_id


# -- the stored text after any sequence ------------------------------------------------------------------------------


def test_after_every_command_of_revisions_that_drop_add_rejoin_lanes_and_change_the_zone_the_text_is_whole(
        tmp_path, monkeypatch):
    h = make_harness(tmp_path, lanes=LANES)
    other = h.again()
    nights = Night(h, (other,))
    lanes = {1: LANES}
    revisions = {  # week -> the lanes (and zone) of the revision recorded the Sunday before
        2: ([basic_lane("alpha"), weekly_lane(weekday=1)], "Europe/London"),  # bravo leaves
        3: ([*LANES, basic_lane("charlie", time="02:20")], "Europe/London"),  # bravo rejoins, charlie joins
        5: ([*LANES, basic_lane("charlie", time="02:20")], "Europe/Lisbon"),  # the zone changes
        7: ([basic_lane("alpha"), basic_lane("bravo", time="02:10"), basic_lane("charlie", time="02:20")],
            "Europe/Lisbon"),  # the weekly lane leaves with its settled records
        8: ([*LANES, basic_lane("charlie", time="02:20")], "Europe/Lisbon"),  # and rejoins
    }
    monday = h.clock.now().start_of("day").add(days=1)  # 2026-12-07
    sequence = limited = 0
    for week in range(11):
        sunday = monday.subtract(hours=12)
        h.at(sunday)
        if week % 3 == 0:
            sequence += 1
            h.owner_record("claude", sequence)
            nights.check()
        if week in revisions:
            lane_list, zone = revisions[week]
            revision = len(lanes) + 1
            lanes[revision] = lane_list
            nights.engine(week % 2 == 1).record_commission(commission(lane_list, revision=revision, zone=zone))
            nights.check()
        ids = {entry["lane"] for entry in lanes[max(lanes)]}
        alternate = week % 3 == 1
        if week == 4:  # a conflict: the other engine commits before this one's first command is stored
            h.schedule.journal = OvertakenOnce(h.schedule.journal, other, sequence=1)
        if week == 6:  # a decision that is checked and encoded, then rolled back
            h.schedule.journal = FailsAfterDeciding(h.schedule.journal, VersionConflictError(SCHEDULE_AGGREGATE, 0, 1))
        h.at(monday.add(hours=2))
        nights.run(ALPHA, "r1", ("w1", "w2"), alternate=alternate)
        wrapper = h.schedule.journal
        if week in (4, 6):
            assert (wrapper.overtaken if week == 4 else wrapper.failed) == 1
            h.schedule.journal = wrapper._journal
        if BRAVO in ids:
            h.at(monday.add(hours=2, minutes=10))
            nights.run(BRAVO, "r2", ("w1",), alternate=alternate, tokens=2_000 + week)
        if CHARLIE in ids:
            h.at(monday.add(hours=2, minutes=20))
            if week == 9:  # the new state is over the size limit: refused after it was encoded
                limited += 1
                size = len(canonical_json(h.state()).encode("utf-8"))
                monkeypatch.setattr(service, "SCHEDULE_LIMITS",
                                    dataclasses.replace(service.SCHEDULE_LIMITS, max_state_bytes=size))
                refused(h, "LIMIT", lambda: h.schedule.start(lane=CHARLIE, runner="r3"))
                monkeypatch.undo()
                nights.check()
            nights.run(CHARLIE, "r3", ("w1", "w2", "w3"), alternate=alternate)
        if FULL in ids:
            h.at(monday.add(hours=2, minutes=40))
            nights.run(FULL, "r4", ("w1",), alternate=alternate, tokens=5_000)
        h.at(monday.add(days=3, hours=2))
        nights.run(ALPHA, "r1", ("w3",), alternate=not alternate)
        monday = monday.add(weeks=1)

    assert limited == 1
    state = h.state()
    assert len(state["ledger"]) == 8, "eleven weeks were debited and the ledger kept the latest eight"
    assert all("calls" not in kept and kept["elided"]["calls"] >= 1
               for entry in state["lanes"] for kept in entry.get("recent", []))
    # Every settled occurrence the state keeps is read whole, by the long-lived engine and by a fresh one.
    for engine in (h.schedule, other, h.again()):
        for occurrence_id, records in engine.settled_records().items():
            assert [call.work for call in records.calls] == [r["work"] for r in nights.settled[occurrence_id]]


def test_two_engines_alternating_on_one_file_store_the_whole_text_and_read_alike(tmp_path):
    h = make_harness(tmp_path, lanes=LANES)
    h.owner_record("claude", 1)
    nights = Night(h, (h.again(), h.again()))
    for day in range(10):
        h.at(f"2026-12-{7 + day:02d}T02:00:00Z")
        nights.run(ALPHA, "r1", ("w1", "w2", "w3")[: 1 + day % 3], alternate=True)
        h.at(f"2026-12-{7 + day:02d}T02:10:00Z")
        nights.run(BRAVO, "r2", ("w1",), alternate=True)
    h.at("2026-12-21T02:40:00Z")
    nights.run(FULL, "r3", ("w1", "w2"), alternate=True)


def test_a_decision_that_fails_after_encoding_its_state_leaves_no_text_or_check_for_the_next_one_to_reuse(tmp_path):
    h = make_harness(tmp_path, lanes=LANES)
    h.owner_record("claude", 1)
    nights = Night(h)
    h.at("2026-12-07T02:00:00Z")
    first = nights.run(ALPHA, "r1", ("w1",))
    h.at("2026-12-07T02:10:00Z")
    bravo = h.admit(BRAVO, "r2").occurrence.id
    admission = h.call(bravo, runner="r2")
    real = h.schedule.journal

    # bravo's call end is decided (its lane, the ledger) and rolled back by a storage error.
    h.schedule.journal = FailsAfterDeciding(real, OSError("the disk went away"))
    with writes_nothing(h), pytest.raises(OSError):
        h.schedule.end_call(occurrence_id=bravo, runner="r2", call=admission.call, report=result_report(7_000))
    h.schedule.journal = real
    nights.check()

    # The same command again, then others on the lanes the failed decision changed and on those it did not.
    end = h.schedule.end_call(occurrence_id=bravo, runner="r2", call=admission.call, report=result_report(7_000))
    assert not end.replayed and end.debit == 7_000
    nights.check()
    h.schedule.settle(occurrence_id=bravo, settled_by="r2", status="completed", reason="done")
    nights.check()
    h.at("2026-12-08T02:00:00Z")
    nights.run(ALPHA, "r1", ("w2",))
    assert h.ledger()["2026-W50"]["debited"] == 1_000 + 7_000 + 1_000
    assert [call.debit for call in h.schedule.record(first).calls] == [1_000]


def test_a_lane_checked_at_a_version_is_checked_again_for_an_earlier_one(tmp_path):
    h = make_harness(tmp_path, lanes=LANES)
    h.owner_record("claude", 1)
    h.at("2026-12-07T02:00:00Z")
    Night(h).run(ALPHA, "r1", ("w1",))
    version, text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)
    codec = StateCodec()
    schedule = codec.read(version, text)

    with pytest.raises(ScheduleError) as caught:
        codec.write(schedule.state, 3)  # alpha's transitions name versions after 3
    assert caught.value.code == "CORRUPT"


def test_an_unchanged_lane_is_checked_again_under_a_commission_it_no_longer_fits(tmp_path):
    h = make_harness(tmp_path, lanes=LANES)
    h.owner_record("claude", 1)
    h.at("2026-12-07T02:10:00Z")
    Night(h).run(BRAVO, "r2", ("w1",))
    h.at("2026-12-08T12:00:00Z")
    h.schedule.record_commission(commission([basic_lane("alpha"), weekly_lane(weekday=1)], revision=2))
    # bravo left: it keeps its watermark and no settled record, which only a lane outside the commission may.
    version, text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)
    codec = StateCodec()
    schedule = codec.read(version, text)
    assert lane_of(json.loads(text), BRAVO).get("recent") is None
    rejoined = commission(LANES, revision=3)
    document = commission_document(parse_commission(rejoined))
    # The same lane objects (bravo's `since` is not moved to the rejoining, as a revision would move it).
    state = schedule.state.model_copy(update={"commission": document, "commission_digest": commission_digest(document)})

    with pytest.raises(ScheduleError) as caught:
        codec.write(state, version + 1)
    assert caught.value.code == "CORRUPT"


# -- stored defects, for an engine that holds the state in memory ----------------------------------------------------


def _settled(tmp_path: Path) -> tuple[Harness, str]:
    """alpha's night: calls 1 and 2 under r1 (900 + 400), a deferral, a resumption under r2 with call 3 (300),
    a reconciliation, a resumption under r3, then the settlement. bravo runs a call and stays open."""
    h = make_harness(tmp_path, lanes=LANES)
    h.owner_record("claude", 1)
    h.at("2026-12-07T02:00:00Z")
    occurrence_id = h.admit(ALPHA, "r1").occurrence.id
    for work, tokens in (("w1", 900), ("w2", 400)):
        admission = h.call(occurrence_id, runner="r1", work=work)
        h.schedule.end_call(occurrence_id=occurrence_id, runner="r1", call=admission.call,
                            report=result_report(tokens))
    h.at("2026-12-07T02:05:00Z")
    h.schedule.defer(occurrence_id=occurrence_id, runner="r1", reason="logged-out")
    h.at("2026-12-08T02:00:00Z")
    assert h.schedule.start(lane=ALPHA, runner="r2").kind == "resumed"
    admission = h.call(occurrence_id, runner="r2", work="w3")
    h.schedule.end_call(occurrence_id=occurrence_id, runner="r2", call=admission.call, report=result_report(300))
    h.at("2026-12-08T02:05:00Z")
    h.schedule.reconcile(occurrence_id=occurrence_id, confirmation=confirmation("r2"))
    h.at("2026-12-08T02:06:00Z")
    assert h.schedule.start(lane=ALPHA, runner="r3").kind == "resumed"
    h.at("2026-12-08T02:10:00Z")
    bravo = h.admit(BRAVO, "r5").occurrence.id
    admission = h.call(bravo, runner="r5", work="b1")
    h.schedule.end_call(occurrence_id=bravo, runner="r5", call=admission.call, report=result_report(50))
    h.at("2026-12-08T02:20:00Z")
    h.schedule.settle(occurrence_id=occurrence_id, settled_by="r3", status="completed", reason="done")
    h.schedule.read()  # the long-lived engine holds this text
    return h, occurrence_id


ELIDED_DEFECTS: dict[str, Callable[[dict], None]] = {
    "count-one-more": lambda kept: kept["elided"].update(calls=4),
    "count-one-less": lambda kept: kept["elided"].update(calls=2),
    "count-zero": lambda kept: kept["elided"].update(calls=0),
    "debits-empty": lambda kept: kept["elided"].update(debits={}),
    "debits-negative": lambda kept: kept["elided"].update(debits={"2026-W50": -1}),
    "debits-not-a-week": lambda kept: kept["elided"].update(debits={"W50": 1_600}),
    "debits-above-the-ledger": lambda kept: kept["elided"].update(debits={"2026-W50": 1_000_000}),
    "calls-kept-as-well": lambda kept: kept.update(calls=[{
        "k": 1, "segment": 1, "task": "scan", "work": "w1", "bound": CALL_BOUND, "attempt": 1, "account": "claude",
        "week": "2026-W50", "admittedAt": "2026-12-07T02:00:00.000Z", "debit": 900, "endedAt":
        "2026-12-07T02:00:00.000Z", "outcome": "ok", "tokens": 900}]),
    "an-unknown-key": lambda kept: kept["elided"].update(colour="red"),
}


@pytest.mark.parametrize("defect", sorted(ELIDED_DEFECTS))
def test_an_elided_record_that_breaks_a_rule_is_corrupt_for_the_engine_that_wrote_it(tmp_path, defect):
    h, occurrence_id = _settled(tmp_path)
    h.tamper_state(lambda document: ELIDED_DEFECTS[defect](lane_of(document, ALPHA)["recent"][0]))

    refused(h, "CORRUPT", h.schedule.read)
    refused(h, "CORRUPT", lambda: h.schedule.start(lane=FULL, runner="r9"))
    refused(h, "CORRUPT", lambda: h.schedule.record(occurrence_id))


def test_elided_calls_on_an_open_occurrence_are_corrupt_for_the_engine_that_wrote_it(tmp_path):
    h, _occurrence_id = _settled(tmp_path)

    def elide(document: dict) -> None:
        bravo = lane_of(document, BRAVO)["open"]
        bravo["elided"] = {"calls": 1, "debits": {"2026-W50": 50}}
        bravo["calls"] = []

    h.tamper_state(elide)

    refused(h, "CORRUPT", h.schedule.read)
    refused(h, "CORRUPT", lambda: h.schedule.settle(occurrence_id=basic_id("bravo", "2026-12-08"),
                                                    settled_by="r5", status="completed", reason="done"))


def test_an_elided_record_on_a_settled_occurrence_that_made_no_calls_is_corrupt(tmp_path):
    h, _occurrence_id = _settled(tmp_path)
    h.at("2026-12-14T02:40:00Z")
    full = h.admit(FULL, "r6").occurrence.id
    h.schedule.settle(occurrence_id=full, settled_by="r6", status="unavailable", reason="nothing to do")
    h.schedule.read()
    h.tamper_state(lambda document: lane_of(document, FULL)["recent"][0].update(
        elided={"calls": 1, "debits": {"2026-W51": 0}}))

    refused(h, "CORRUPT", h.schedule.read)


def test_an_elided_record_whose_debits_disagree_with_its_settlement_event_is_corrupt_on_the_next_read(tmp_path):
    h, occurrence_id = _settled(tmp_path)
    # 1 600 debited in all; the ledger (1 650 with bravo's call) still covers the lie.
    h.tamper_state(lambda document: lane_of(document, ALPHA)["recent"][0]["elided"].update(
        debits={"2026-W50": 1_000}))

    refused(h, "CORRUPT", lambda: h.schedule.record(occurrence_id))  # what needs the calls compares them
    refused(h, "CORRUPT", h.schedule.read)
    refused(h, "CORRUPT", lambda: h.at("2026-12-09T02:00:00Z").schedule.start(lane=ALPHA, runner="r1"))


def test_an_elided_records_debits_moved_to_a_week_the_ledger_does_not_keep_are_corrupt_on_the_next_read(tmp_path):
    h, _occurrence_id = _settled(tmp_path)
    h.tamper_state(lambda document: lane_of(document, ALPHA)["recent"][0]["elided"].update(
        debits={"2026-W01": 1_600}))

    refused(h, "CORRUPT", h.schedule.read)


def test_an_elided_record_missing_a_call_end_it_recorded_is_corrupt_on_the_next_read(tmp_path):
    h, occurrence_id = _settled(tmp_path)
    # Kept whole, call 2's record would require its end; elided, only its settlement event says it ended.
    h.tamper_state(lambda document: lane_of(document, ALPHA)["recent"][0]["transitions"].pop("call/2/end"))

    refused(h, "CORRUPT", lambda: h.schedule.end_call(occurrence_id=occurrence_id, runner="r1", call=2,
                                                      report=result_report(400)))
    refused(h, "CORRUPT", h.schedule.read)


def test_a_settlement_event_that_disagrees_with_the_kept_record_is_corrupt_wherever_the_calls_are_needed(tmp_path):
    h, occurrence_id = _settled(tmp_path)

    def lower(document: dict) -> None:
        document["occurrence"]["calls"][1].update(debit=300, tokens=300)

    tamper_event(h, f"{occurrence_id}/settle", lower)

    fresh = h.again()
    refused(h, "CORRUPT", lambda: fresh.record(occurrence_id))
    refused(h, "CORRUPT", fresh.settled_records)
    refused(h, "CORRUPT", lambda: fresh.admit_call(occurrence_id=occurrence_id, runner="r1", task="scan",
                                                   work="w2", bound=CALL_BOUND, sign_in=SIGN_IN))
    refused(h, "CORRUPT", lambda: fresh.settle(occurrence_id=occurrence_id, settled_by="r3", status="completed",
                                               reason="done"))


def test_a_settlement_event_changed_behind_an_engine_is_caught_by_the_hash_chain_and_by_a_fresh_reader(tmp_path):
    # An engine that already read a settled record keeps it (a settled record never changes); an event edited
    # later is the hash chain's to catch, which the dashboard and `health` check, and any new reader refuses it.
    h, occurrence_id = _settled(tmp_path)
    assert [call.debit for call in h.schedule.record(occurrence_id).calls] == [900, 400, 300]

    tamper_event(h, f"{occurrence_id}/settle",
                 lambda document: document["occurrence"]["calls"][1].update(debit=300, tokens=300))

    refused(h, "CORRUPT", lambda: h.again().record(occurrence_id))
    with pytest.raises(JournalCorruptError):
        open_journal(h.url).verify(SCHEDULE_AGGREGATE)


def test_a_settlement_event_that_holds_the_record_without_its_calls_is_corrupt(tmp_path):
    h, occurrence_id = _settled(tmp_path)
    kept = h.stored(occurrence_id)
    tamper_event(h, f"{occurrence_id}/settle", lambda document: document.update(occurrence=kept))

    fresh = h.again()
    refused(h, "CORRUPT", lambda: fresh.record(occurrence_id))
    refused(h, "CORRUPT", lambda: fresh.admit_call(occurrence_id=occurrence_id, runner="r1", task="scan",
                                                   work="w2", bound=CALL_BOUND, sign_in=SIGN_IN))


# -- the ledger's check with elided records ---------------------------------------------------------------------------


def test_a_ledger_week_debiting_less_than_its_elided_records_is_corrupt_for_the_engine_that_wrote_it(tmp_path):
    h, occurrence_id = _settled(tmp_path)
    # bravo's open call (50) is in the same week: the ledger covers it and not alpha's elided 1 600.
    h.tamper_state(lambda document: document["ledger"][0].update(debited=1_000))

    refused(h, "CORRUPT", h.schedule.read)
    refused(h, "CORRUPT", lambda: h.schedule.end_call(occurrence_id=basic_id("bravo", "2026-12-08"), runner="r5",
                                                      call=1, report=result_report(50)))
    refused(h, "CORRUPT", lambda: h.again().record(occurrence_id))


def test_a_decision_that_lowers_the_ledger_under_an_unchanged_lanes_elided_records_is_refused(tmp_path):
    h, _occurrence_id = _settled(tmp_path)
    version, text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)
    codec = StateCodec()
    schedule = codec.read(version, text)
    codec.write(schedule.state, version + 1)  # every lane now checked and cached
    [week] = schedule.state.ledger
    lowered = schedule.state.model_copy(update={"ledger": [LedgerWeek(week=week.week, ceiling=week.ceiling,
                                                                      debited=1_649)]})

    with pytest.raises(ScheduleError) as caught:
        codec.write(lowered, version + 1)
    assert caught.value.code == "CORRUPT"


def test_the_ledger_check_holds_once_every_calls_record_is_elided(tmp_path):
    h, _occurrence_id = _settled(tmp_path)
    h.schedule.settle(occurrence_id=basic_id("bravo", "2026-12-08"), settled_by="r5", status="completed",
                      reason="done")
    assert h.ledger()["2026-W50"]["debited"] == 1_650
    h.schedule.read()
    h.tamper_state(lambda document: document["ledger"][0].update(debited=1_649))

    refused(h, "CORRUPT", h.schedule.read)


def test_a_settlement_whose_calls_debit_more_in_a_week_than_one_call_may_use_is_kept_and_settled(tmp_path):
    # One call may report up to max_usage_tokens; a week's ledger has no such cap, nor may an elided record's
    # debits (they are a sum of calls).
    h = make_harness(tmp_path, lanes=LANES, weekly_tokens=10_000_000_000)
    h.owner_record("claude", 1)
    h.at("2026-12-07T02:00:00Z")
    occurrence_id = h.admit(ALPHA, "r1").occurrence.id
    for work in ("w1", "w2"):
        admission = h.call(occurrence_id, runner="r1", work=work)
        h.schedule.end_call(occurrence_id=occurrence_id, runner="r1", call=admission.call,
                            report=result_report(6_000_000_000))

    h.schedule.settle(occurrence_id=occurrence_id, settled_by="r1", status="completed", reason="done")

    assert h.stored(occurrence_id)["elided"] == {"calls": 2, "debits": {"2026-W50": 12_000_000_000}}
    assert_stored_whole(h)


# -- late retries on records kept without their calls ----------------------------------------------------------------


def _retries(h: Harness, engine: LifecycleSchedule, occurrence_id: str) -> dict[str, Any]:
    """Every retry of every transition alpha's night recorded, as its runner would send it again."""
    answers: dict[str, Any] = {}
    for k, (runner, work) in enumerate((("r1", "w1"), ("r1", "w2"), ("r2", "w3")), start=1):
        answers[f"call/{k}"] = engine.admit_call(occurrence_id=occurrence_id, runner=runner, task="scan", work=work,
                                                 bound=CALL_BOUND, sign_in=SIGN_IN)
        answers[f"call/{k}/end"] = engine.end_call(occurrence_id=occurrence_id, runner=runner, call=k,
                                                   report=result_report((900, 400, 300)[k - 1]))
    answers["defer/1"] = engine.defer(occurrence_id=occurrence_id, runner="r1", reason="logged-out")
    answers["reconcile/2"] = engine.reconcile(occurrence_id=occurrence_id, confirmation=confirmation("r2"))
    answers["settle"] = engine.settle(occurrence_id=occurrence_id, settled_by="r3", status="completed",
                                      reason="done")
    return answers


def _comparable(answer: Any) -> Any:
    """An answer without its occurrence (the record it carries is compared on its own)."""
    fields = dataclasses.asdict(answer)
    fields.pop("occurrence", None)
    return fields


def test_late_retries_on_a_record_kept_without_its_calls_replay_as_they_do_from_its_settlement_event(tmp_path):
    h, occurrence_id = _settled(tmp_path)
    whole = h.schedule.record(occurrence_id)
    assert whole is not None and [call.work for call in whole.calls] == ["w1", "w2", "w3"]

    kept_answers = {}
    for engine in (h.schedule, h.again()):
        with writes_nothing(h):
            kept_answers[engine] = answers = _retries(h, engine, occurrence_id)
        for name, answer in answers.items():
            assert answer.replayed, name
            if name.startswith("call/") and not name.endswith("/end"):
                assert (answer.dispatch, answer.in_flight) == (False, False), name
            if getattr(answer, "occurrence", None) is not None:
                assert answer.occurrence == whole, f"{name} answers with the whole record"
    first, second = kept_answers.values()
    assert {n: _comparable(a) for n, a in first.items()} == {n: _comparable(a) for n, a in second.items()}

    # Two later settlements push the record out of `recent`: its retries are answered from its event alone.
    h.at("2026-12-08T02:30:00Z")
    h.schedule.settle(occurrence_id=basic_id("bravo", "2026-12-08"), settled_by="r5", status="completed",
                      reason="done")
    for day in ("2026-12-09", "2026-12-10"):
        h.at(f"{day}T02:00:00Z")
        later = h.admit(ALPHA, "r1").occurrence.id
        h.schedule.settle(occurrence_id=later, settled_by="r1", status="completed", reason="done")
    assert h.stored(occurrence_id) is None
    with writes_nothing(h):
        pruned = _retries(h, h.again(), occurrence_id)
    assert {n: _comparable(a) for n, a in pruned.items()} == {n: _comparable(a) for n, a in first.items()}


def _one_call(tmp_path: Path) -> tuple[Harness, str]:
    """alpha's night, admitted under r1, with one call (w1, 900 tokens) performed and ended."""
    h = make_harness(tmp_path, lanes=LANES)
    h.owner_record("claude", 1)
    h.at("2026-12-07T02:00:00Z")
    occurrence_id = h.admit(ALPHA, "r1").occurrence.id
    admission = h.call(occurrence_id, runner="r1", work="w1")
    h.schedule.end_call(occurrence_id=occurrence_id, runner="r1", call=admission.call, report=result_report(900))
    return h, occurrence_id


def test_a_settlement_answers_with_the_whole_record_and_keeps_it_without_its_calls(tmp_path):
    h, occurrence_id = _one_call(tmp_path)

    result = h.schedule.settle(occurrence_id=occurrence_id, settled_by="r1", status="completed", reason="done")

    assert not result.replayed and [call.work for call in result.occurrence.calls] == ["w1"]
    assert result.occurrence.without_calls().doc() == h.stored(occurrence_id)
    assert_stored_whole(h)


def test_a_settlement_at_the_segment_limit_answers_with_the_whole_record_and_keeps_it_without_its_calls(tmp_path):
    h, occurrence_id = _one_call(tmp_path)
    for n in range(1, 9):
        h.clock.advance(minutes=1)
        h.schedule.reconcile(occurrence_id=occurrence_id, confirmation=confirmation(f"r{n}"))
        h.clock.advance(minutes=1)
        tick = h.schedule.start(lane=ALPHA, runner=f"r{n + 1}")
        assert tick.kind == ("resumed" if n < 8 else "settled"), tick

    assert [call.work for call in tick.occurrence.calls] == ["w1"]
    assert h.stored(occurrence_id)["elided"] == {"calls": 1, "debits": {"2026-W50": 900}}
    assert_stored_whole(h)
    again = h.again().admit_call(occurrence_id=occurrence_id, runner="r1", task="scan", work="w1",
                                 bound=CALL_BOUND, sign_in=SIGN_IN)
    assert (again.call, again.replayed, again.dispatch) == (1, True, False)


def test_a_record_kept_whole_by_an_earlier_release_still_reads_replays_and_stays_whole(tmp_path):
    h, occurrence_id = _settled(tmp_path)
    whole = h.schedule.record(occurrence_id)
    # A state written before records were kept without their calls: the record in `recent` is whole.
    h.tamper_state(lambda document: lane_of(document, ALPHA)["recent"].__setitem__(0, whole.doc()))
    assert "elided" not in h.stored(occurrence_id)

    assert_stored_whole(h)
    with writes_nothing(h):
        replay = h.schedule.admit_call(occurrence_id=occurrence_id, runner="r2", task="scan", work="w3",
                                       bound=CALL_BOUND, sign_in=SIGN_IN)
    assert (replay.call, replay.replayed, replay.dispatch) == (3, True, False)
    h.at("2026-12-09T02:00:00Z")
    later = h.admit(ALPHA, "r1").occurrence.id
    admission = h.call(later, runner="r1", work="w1")
    h.schedule.end_call(occurrence_id=later, runner="r1", call=admission.call, report=result_report(10))
    h.schedule.settle(occurrence_id=later, settled_by="r1", status="completed", reason="done")

    recent = h.lane_state(ALPHA)["recent"]
    assert [("elided" in kept, len(kept.get("calls", []))) for kept in recent] == [(True, 0), (False, 3)]
    assert_stored_whole(h)


def test_late_retries_on_a_settled_record_whose_lane_left_the_commission_replay_from_its_event(tmp_path):
    h, occurrence_id = _settled(tmp_path)
    with writes_nothing(h):
        before = _retries(h, h.schedule, occurrence_id)
    h.at("2026-12-08T12:00:00Z")
    h.schedule.record_commission(commission([basic_lane("bravo", time="02:10"), weekly_lane(weekday=1)],
                                            revision=2))
    assert h.stored(occurrence_id) is None
    assert_stored_whole(h)

    for engine in (h.schedule, h.again()):
        with writes_nothing(h):
            after = _retries(h, engine, occurrence_id)
        assert {n: _comparable(a) for n, a in after.items()} == {n: _comparable(a) for n, a in before.items()}
        assert engine.record(occurrence_id) == before["settle"].occurrence


def test_a_new_call_or_transition_on_a_record_kept_without_its_calls_is_settled_and_never_dispatched(tmp_path):
    h, occurrence_id = _settled(tmp_path)
    for engine in (h.schedule, h.again()):
        refused(h, "SETTLED", lambda e=engine: e.admit_call(occurrence_id=occurrence_id, runner="r3", task="scan",
                                                            work="w9", bound=CALL_BOUND, sign_in=SIGN_IN))
        refused(h, "SETTLED", lambda e=engine: e.admit_call(occurrence_id=occurrence_id, runner="r1", task="scan",
                                                            work="w1", bound=CALL_BOUND, sign_in=SIGN_IN,
                                                            attempt=2))
        refused(h, "SETTLED", lambda e=engine: e.end_call(occurrence_id=occurrence_id, runner="r3", call=4,
                                                          report=result_report(1)))
        refused(h, "SETTLED", lambda e=engine: e.defer(occurrence_id=occurrence_id, runner="r3",
                                                       reason="logged-out"))


def test_status_record_and_the_dashboards_detail_show_a_kept_records_calls(tmp_path):
    from factory_schedule.tui.dashboard.reading import take_reading
    from factory_schedule.tui.dashboard.widgets.occurrences import occurrence_detail, occurrence_rows

    h, occurrence_id = _settled(tmp_path)
    status = h.schedule.status(occurrence_id)
    assert (status.state, status.status) == ("settled", "completed")
    assert [call.work for call in h.again().record(occurrence_id).calls] == ["w1", "w2", "w3"]

    def rendered(complete: bool) -> tuple[str, tuple[str, ...]]:
        reading = take_reading(h.schedule.journal, h.schedule, h.clock.now(), None, host="review",
                               complete=complete)
        assert reading.problem is None, reading.problem
        kept = next(o for o in reading.view.occurrences if o.id == occurrence_id)
        console = Console(width=160, record=True)
        console.print(occurrence_detail(reading, kept))
        return console.export_text(), tuple(str(cell) for cell in occurrence_rows(reading)[occurrence_id])

    detail, row = rendered(True)
    for work in ("w1", "w2", "w3"):
        assert work in detail
    assert "reading them" not in detail
    assert row[3:5] == ("3", "1 600")
    assert "3 calls, 1 600 debited" in rendered(False)[0]


# -- random commands by two engines on one file -----------------------------------------------------------------------

REFUSALS = {"NOT_OWNER", "NOT_RUNNING", "SETTLED", "STALE", "RULE", "UNKNOWN_OCCURRENCE", "CONFLICT", "NOT_A_LANE",
            "CALL_OPEN"}
REVISIONS = {
    "all": LANES,
    "no-bravo": [basic_lane("alpha"), weekly_lane(weekday=1)],
    "no-weekly": [basic_lane("alpha"), basic_lane("bravo", time="02:10")],
    "only-bravo": [basic_lane("bravo", time="02:10")],
}


class TwoEnginesMachine(RuleBasedStateMachine):
    """Random commands, each by one of two long-lived engines on one file; after every step the stored text is
    the whole state's canonical text, both engines read what a fresh one reads, and every call admitted so far
    replays, never dispatched again, from either engine."""

    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="stored-review-"))
        self.h = make_harness(self.directory, lanes=LANES)
        self.engines = (self.h.schedule, self.h.again())
        self.h.owner_record("claude", 1)
        self.sequence = 1
        self.revision = 1
        self.h.at("2026-12-07T02:00:00Z")
        self.admitted: list[dict[str, Any]] = []

    def teardown(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def _open(self) -> list[dict]:
        return [lane["open"] for lane in self.h.state()["lanes"] if lane.get("open") is not None]

    @rule(days=st.integers(1, 4), engines=st.lists(st.integers(0, 1), min_size=3, max_size=3),
          runner=st.sampled_from(["r1", "r2"]))
    def a_later_night_every_lane_ticks(self, days: int, engines: list[int], runner: str) -> None:
        night = self.h.clock.now().add(days=days).start_of("day")
        for (lane, minutes), which in zip(((ALPHA, 0), (BRAVO, 10), (FULL, 40)), engines, strict=True):
            self.h.at(night.add(hours=2, minutes=minutes))
            expect_refusal(lambda w=which, lane=lane: self.engines[w].start(lane=lane, runner=runner), REFUSALS)

    @rule(minutes=st.sampled_from([1, 5, 30]))
    def later(self, minutes: int) -> None:
        self.h.clock.advance(minutes=minutes)

    @rule(lane=st.sampled_from([ALPHA, BRAVO, FULL]), runner=st.sampled_from(["r1", "r2"]), which=st.integers(0, 1))
    def tick(self, lane: str, runner: str, which: int) -> None:
        expect_refusal(lambda: self.engines[which].start(lane=lane, runner=runner), REFUSALS)

    @rule(data=st.data(), which=st.integers(0, 1), tokens=st.sampled_from([None, 0, 700, 90_000]))
    def admit_call(self, data: st.DataObject, which: int, tokens: int | None) -> None:
        running = [o for o in self._open() if o["state"] == "running"]
        if not running:
            return
        occurrence = data.draw(st.sampled_from(sorted(running, key=lambda o: o["id"])))
        runner = occurrence["segments"][-1]["runner"]
        request = {"occurrence_id": occurrence["id"], "runner": runner, "task": "scan",
                   "work": f"w{len(self.admitted)}", "bound": CALL_BOUND, "sign_in": SIGN_IN}
        # INVALID: the lane left the commission while its occurrence runs, so it has no tasks any more.
        answer = expect_refusal(lambda: self.engines[which].admit_call(**request), REFUSALS | {"INVALID"})
        if answer is None or not answer.admitted:
            return
        assert answer.dispatch and not answer.replayed
        self.admitted.append(request)
        if tokens is not None:
            self.engines[1 - which].end_call(occurrence_id=occurrence["id"], runner=runner, call=answer.call,
                                             report=result_report(tokens))

    @rule(data=st.data(), tokens=st.sampled_from([0, 500, 90_000]), which=st.integers(0, 1))
    def end_call(self, data: st.DataObject, tokens: int, which: int) -> None:
        flights = [(o, c) for o in self._open() for c in o.get("calls", []) if "endedAt" not in c]
        if not flights:
            return
        occurrence, call = data.draw(st.sampled_from(sorted(flights, key=lambda pair: pair[0]["id"])))
        runner = occurrence["segments"][call["segment"] - 1]["runner"]
        expect_refusal(lambda: self.engines[which].end_call(occurrence_id=occurrence["id"], runner=runner,
                                                           call=call["k"], report=result_report(tokens)), REFUSALS)

    @rule(data=st.data(), which=st.integers(0, 1), how=st.sampled_from(["defer", "reconcile", "settle", "settle"]))
    def transition(self, data: st.DataObject, which: int, how: str) -> None:
        candidates = self._open()
        if not candidates:
            return
        occurrence = data.draw(st.sampled_from(sorted(candidates, key=lambda o: o["id"])))
        engine, runner, oid = self.engines[which], occurrence["segments"][-1]["runner"], occurrence["id"]
        action = {
            "defer": lambda: engine.defer(occurrence_id=oid, runner=runner, reason="logged-out"),
            "reconcile": lambda: engine.reconcile(occurrence_id=oid, confirmation=confirmation(runner)),
            "settle": lambda: engine.settle(occurrence_id=oid, settled_by=runner, status="partial", reason="r"),
        }[how]
        expect_refusal(action, REFUSALS)

    @rule(which=st.integers(0, 1))
    def owner_record(self, which: int) -> None:
        self.sequence += 1
        self.engines[which].record_account(account="claude", sequence=self.sequence, sign_in=SIGN_IN,
                                           overage=False, recorded_by="owner")

    @rule(lanes=st.sampled_from(sorted(REVISIONS)), zone=st.sampled_from(["Europe/London", "Europe/Lisbon"]),
          which=st.integers(0, 1))
    def revision(self, lanes: str, zone: str, which: int) -> None:
        self.revision += 1
        self.engines[which].record_commission(commission(REVISIONS[lanes], revision=self.revision, zone=zone))

    @rule(data=st.data(), which=st.integers(0, 1))
    def late_retry(self, data: st.DataObject, which: int) -> None:
        if not self.admitted:
            return
        request = data.draw(st.sampled_from(self.admitted))
        with writes_nothing(self.h):
            answer = self.engines[which].admit_call(**request)
        assert answer.admitted and answer.replayed and not answer.dispatch, answer
        kept = self.h.stored(request["occurrence_id"])
        event("late retry: " + ("pruned" if kept is None else "elided" if "elided" in kept else kept["state"]))

    @invariant()
    def the_stored_text_is_whole_and_every_engine_reads_it_alike(self) -> None:
        assert_stored_whole(self.h, self.engines[1])


TestTwoEnginesMachine = TwoEnginesMachine.TestCase
TestTwoEnginesMachine.settings = settings(
    max_examples=20, stateful_step_count=50, deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
