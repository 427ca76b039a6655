"""The stored text stays the canonical encoding of the whole state over long runs of commands.

The engine keeps the state it last read or wrote and checks and encodes only the lanes a decision changed
(`core.schedule_codec`). After every command of long sequences (revisions that drop, add and rejoin lanes and change
the zone, ledger pruning, a conflict or a failure after the new state was encoded, two engines alternating on
one file) the stored text must be what a fresh engine's whole parse re-encodes, and every engine must read
what a fresh one reads; a lane's check is made again for an earlier version or a commission it no longer fits.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

import factory_schedule.core.service as service
from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule, ScheduleError
from factory_schedule.core.commission import commission_digest, commission_document, parse_commission
from factory_schedule.core.schedule_codec import StateCodec
from factory_schedule.store import VersionConflictError, canonical_json, open_journal
from tests.core.schedule.support import (
    ALPHA,
    BRAVO,
    CALL_BOUND,
    CHARLIE,
    FULL,
    SIGN_IN,
    FailsAfterDeciding,
    Harness,
    Overtaken,
    basic_lane,
    commission,
    make_harness,
    refused,
    result_report,
    weekly_lane,
    writes_nothing,
)
from tests.core.state.support import THREE_LANES, assert_stored_whole, lane_of


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
        assert tick.occurrence is not None
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


def test_after_every_command_of_revisions_that_drop_add_rejoin_lanes_and_change_the_zone_the_text_is_whole(
        tmp_path, monkeypatch):
    h = make_harness(tmp_path, lanes=THREE_LANES)
    other = h.again()
    nights = Night(h, (other,))
    lanes = {1: THREE_LANES}
    revisions = {  # week -> the lanes (and zone) of the revision recorded the Sunday before
        2: ([basic_lane("alpha"), weekly_lane(weekday=1)], "Europe/London"),  # bravo leaves
        3: ([*THREE_LANES, basic_lane("charlie", time="02:20")], "Europe/London"),  # bravo rejoins, charlie joins
        5: ([*THREE_LANES, basic_lane("charlie", time="02:20")], "Europe/Lisbon"),  # the zone changes
        7: ([basic_lane("alpha"), basic_lane("bravo", time="02:10"), basic_lane("charlie", time="02:20")],
            "Europe/Lisbon"),  # the weekly lane leaves with its settled records
        8: ([*THREE_LANES, basic_lane("charlie", time="02:20")], "Europe/Lisbon"),  # and rejoins
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
            h.schedule.journal = Overtaken(h.schedule.journal, other, times=1)
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
    h = make_harness(tmp_path, lanes=THREE_LANES)
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
    h = make_harness(tmp_path, lanes=THREE_LANES)
    h.owner_record("claude", 1)
    nights = Night(h)
    h.at("2026-12-07T02:00:00Z")
    first = nights.run(ALPHA, "r1", ("w1",))
    h.at("2026-12-07T02:10:00Z")
    bravo = h.admit(BRAVO, "r2").occurrence.id
    admission = h.call(bravo, runner="r2")
    real = h.schedule.journal

    # bravo's call end is decided (its lane, the ledger) and rolled back by a storage error.
    h.schedule.journal = FailsAfterDeciding(real)
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
    h = make_harness(tmp_path, lanes=THREE_LANES)
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
    h = make_harness(tmp_path, lanes=THREE_LANES)
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
    rejoined = commission(THREE_LANES, revision=3)
    document = commission_document(parse_commission(rejoined))
    # The same lane objects (bravo's `since` is not moved to the rejoining, as a revision would move it).
    state = schedule.state.model_copy(update={"commission": document, "commission_digest": commission_digest(document)})

    with pytest.raises(ScheduleError) as caught:
        codec.write(state, version + 1)
    assert caught.value.code == "CORRUPT"
