"""Settled records kept without their calls (`elided`): every defect in what stands for the calls is CORRUPT.

A settled record in a lane's `recent` keeps its calls' count and debits, the calls staying in its settlement
event. A kept record that breaks a rule, elided calls on an open occurrence, a settlement event that
disagrees with the kept record, and a ledger week that does not cover the elided debits are each refused
CORRUPT, by the engine that wrote the state as well as by a fresh one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from factory_schedule.core import SCHEDULE_AGGREGATE, ScheduleError
from factory_schedule.core.schedule_codec import StateCodec
from factory_schedule.core.schedule_document import LedgerWeek
from factory_schedule.store import JournalCorruptError, open_journal
from tests.core.schedule.support import (
    ALPHA,
    BRAVO,
    CALL_BOUND,
    FULL,
    SIGN_IN,
    basic_id,
    make_harness,
    refused,
    result_report,
)
from tests.core.state.support import THREE_LANES, assert_stored_whole, lane_of, settled_night

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
    h, occurrence_id = settled_night(tmp_path)
    h.tamper_state(lambda document: ELIDED_DEFECTS[defect](lane_of(document, ALPHA)["recent"][0]))

    refused(h, "CORRUPT", h.schedule.read)
    refused(h, "CORRUPT", lambda: h.schedule.start(lane=FULL, runner="r9"))
    refused(h, "CORRUPT", lambda: h.schedule.record(occurrence_id))


def test_elided_calls_on_an_open_occurrence_are_corrupt_for_the_engine_that_wrote_it(tmp_path):
    h, _occurrence_id = settled_night(tmp_path)

    def elide(document: dict) -> None:
        bravo = lane_of(document, BRAVO)["open"]
        bravo["elided"] = {"calls": 1, "debits": {"2026-W50": 50}}
        bravo["calls"] = []

    h.tamper_state(elide)

    refused(h, "CORRUPT", h.schedule.read)
    refused(h, "CORRUPT", lambda: h.schedule.settle(occurrence_id=basic_id("bravo", "2026-12-08"),
                                                    settled_by="r5", status="completed", reason="done"))


def test_an_elided_record_on_a_settled_occurrence_that_made_no_calls_is_corrupt(tmp_path):
    h, _occurrence_id = settled_night(tmp_path)
    h.at("2026-12-14T02:40:00Z")
    full = h.admit(FULL, "r6").occurrence.id
    h.schedule.settle(occurrence_id=full, settled_by="r6", status="unavailable", reason="nothing to do")
    h.schedule.read()
    h.tamper_state(lambda document: lane_of(document, FULL)["recent"][0].update(
        elided={"calls": 1, "debits": {"2026-W51": 0}}))

    refused(h, "CORRUPT", h.schedule.read)


def test_an_elided_record_whose_debits_disagree_with_its_settlement_event_is_corrupt_on_the_next_read(tmp_path):
    h, occurrence_id = settled_night(tmp_path)
    # 1 600 debited in all; the ledger (1 650 with bravo's call) still covers the lie.
    h.tamper_state(lambda document: lane_of(document, ALPHA)["recent"][0]["elided"].update(
        debits={"2026-W50": 1_000}))

    refused(h, "CORRUPT", lambda: h.schedule.record(occurrence_id))  # what needs the calls compares them
    refused(h, "CORRUPT", h.schedule.read)
    refused(h, "CORRUPT", lambda: h.at("2026-12-09T02:00:00Z").schedule.start(lane=ALPHA, runner="r1"))


def test_an_elided_records_debits_moved_to_a_week_the_ledger_does_not_keep_are_corrupt_on_the_next_read(tmp_path):
    h, _occurrence_id = settled_night(tmp_path)
    h.tamper_state(lambda document: lane_of(document, ALPHA)["recent"][0]["elided"].update(
        debits={"2026-W01": 1_600}))

    refused(h, "CORRUPT", h.schedule.read)


def test_an_elided_record_missing_a_call_end_it_recorded_is_corrupt_on_the_next_read(tmp_path):
    h, occurrence_id = settled_night(tmp_path)
    # Kept whole, call 2's record would require its end; elided, only its settlement event says it ended.
    h.tamper_state(lambda document: lane_of(document, ALPHA)["recent"][0]["transitions"].pop("call/2/end"))

    refused(h, "CORRUPT", lambda: h.schedule.end_call(occurrence_id=occurrence_id, runner="r1", call=2,
                                                      report=result_report(400)))
    refused(h, "CORRUPT", h.schedule.read)


def test_a_settlement_event_that_disagrees_with_the_kept_record_is_corrupt_wherever_the_calls_are_needed(tmp_path):
    h, occurrence_id = settled_night(tmp_path)

    def lower(document: dict) -> None:
        document["occurrence"]["calls"][1].update(debit=300, tokens=300)

    h.tamper_event(f"{occurrence_id}/settle", lower)

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
    h, occurrence_id = settled_night(tmp_path)
    assert [call.debit for call in h.schedule.record(occurrence_id).calls] == [900, 400, 300]

    h.tamper_event(f"{occurrence_id}/settle",
                 lambda document: document["occurrence"]["calls"][1].update(debit=300, tokens=300))

    refused(h, "CORRUPT", lambda: h.again().record(occurrence_id))
    with pytest.raises(JournalCorruptError):
        open_journal(h.url).verify(SCHEDULE_AGGREGATE)


def test_a_settlement_event_that_holds_the_record_without_its_calls_is_corrupt(tmp_path):
    h, occurrence_id = settled_night(tmp_path)
    kept = h.stored(occurrence_id)
    h.tamper_event(f"{occurrence_id}/settle", lambda document: document.update(occurrence=kept))

    fresh = h.again()
    refused(h, "CORRUPT", lambda: fresh.record(occurrence_id))
    refused(h, "CORRUPT", lambda: fresh.admit_call(occurrence_id=occurrence_id, runner="r1", task="scan",
                                                   work="w2", bound=CALL_BOUND, sign_in=SIGN_IN))


# -- the ledger's check with elided records ---------------------------------------------------------------------------


def test_a_ledger_week_debiting_less_than_its_elided_records_is_corrupt_for_the_engine_that_wrote_it(tmp_path):
    h, occurrence_id = settled_night(tmp_path)
    # bravo's open call (50) is in the same week: the ledger covers it and not alpha's elided 1 600.
    h.tamper_state(lambda document: document["ledger"][0].update(debited=1_000))

    refused(h, "CORRUPT", h.schedule.read)
    refused(h, "CORRUPT", lambda: h.schedule.end_call(occurrence_id=basic_id("bravo", "2026-12-08"), runner="r5",
                                                      call=1, report=result_report(50)))
    refused(h, "CORRUPT", lambda: h.again().record(occurrence_id))


def test_a_decision_that_lowers_the_ledger_under_an_unchanged_lanes_elided_records_is_refused(tmp_path):
    h, _occurrence_id = settled_night(tmp_path)
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
    h, _occurrence_id = settled_night(tmp_path)
    h.schedule.settle(occurrence_id=basic_id("bravo", "2026-12-08"), settled_by="r5", status="completed",
                      reason="done")
    assert h.ledger()["2026-W50"]["debited"] == 1_650
    h.schedule.read()
    h.tamper_state(lambda document: document["ledger"][0].update(debited=1_649))

    refused(h, "CORRUPT", h.schedule.read)


def test_a_settlement_whose_calls_debit_more_in_a_week_than_one_call_may_use_is_kept_and_settled(tmp_path):
    # One call may report up to max_usage_tokens; a week's ledger has no such cap, nor may an elided record's
    # debits (they are a sum of calls).
    h = make_harness(tmp_path, lanes=THREE_LANES, weekly_tokens=10_000_000_000)
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
