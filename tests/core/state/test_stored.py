"""The stored text a command writes: only the lanes it changed are checked and encoded again (`core.schedule_codec`).

The engine keeps the state it last read or wrote; these tests hold that this memory never
stands in for a check a reader of the stored bytes would make.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule, ScheduleError
from factory_schedule.core.schedule_checks import dump_state, parse_state
from factory_schedule.core.schedule_codec import StateCodec
from factory_schedule.core.schedule_document import Watermark
from factory_schedule.store import canonical_json, open_journal, parted
from tests.core.schedule.support import ALPHA, BRAVO, FULL, basic_id, refused, result_report
from tests.core.state.support import THREE_LANES, busy_night, lane_of, one_call_night


def test_the_text_a_command_stores_is_the_canonical_encoding_of_the_whole_state_it_decided(tmp_path):
    h, _ = one_call_night(tmp_path)
    version, text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)

    whole = parse_state(json.loads(text), version)

    assert text == canonical_json(dump_state(whole.state))
    h.assert_what_the_engine_remembers_is_what_is_stored()


def test_a_row_changed_behind_a_running_engine_is_read_whole_and_refused_when_corrupt(tmp_path):
    h, occurrence_id = one_call_night(tmp_path)
    h.schedule.read()  # the engine now remembers this text

    h.tamper_state(lambda document: document["lanes"][0]["open"]["calls"][0].update(debit=-5))

    refused(h, "CORRUPT", lambda: h.schedule.read())
    refused(h, "CORRUPT", lambda: h.schedule.settle(occurrence_id=occurrence_id, settled_by="r1",
                                                    status="completed", reason="done"))


def test_a_changed_lane_that_breaks_a_rule_is_refused_before_anything_is_stored(tmp_path):
    h, _ = one_call_night(tmp_path)
    version, text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)
    codec = StateCodec()
    schedule = codec.read(version, text)
    lane = schedule.state.lane("alpha/basic")
    wrong = lane.model_copy(update={"watermark": Watermark(occurrence=basic_id("alpha", "2026-12-06"),
                                                           date="2026-12-06")})
    broken = schedule.state.model_copy(update={"lanes": [wrong if x is lane else x for x in schedule.state.lanes]})

    with pytest.raises(ScheduleError) as caught:
        codec.write(broken, version + 1)
    assert caught.value.code == "CORRUPT"


def test_a_lane_left_unchanged_keeps_its_text_and_is_not_checked_again(tmp_path):
    h, _ = one_call_night(tmp_path)
    version, text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)
    codec = StateCodec()
    schedule = codec.read(version, text)
    same, again = codec.write(schedule.state, version + 1)

    assert again == text
    assert [a is b for a, b in zip(same.state.lanes, schedule.state.lanes, strict=True)] == [True] * len(THREE_LANES)


def test_a_new_text_keeps_the_lanes_whose_bytes_it_checked_and_checks_the_lanes_that_changed(tmp_path):
    h, occurrence_id = one_call_night(tmp_path)
    before = h.schedule.read()
    other = LifecycleSchedule(open_journal(h.url), h.clock)  # another process's engine commits a change
    other.settle(occurrence_id=occurrence_id, settled_by="r1", status="completed", reason="done")

    after = h.schedule.read()

    kept = {lane.lane: lane for lane in before.lanes}
    assert [lane is kept[lane.lane] for lane in after.lanes] == [lane.lane != "alpha/basic" for lane in after.lanes]
    version, text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)
    assert after.lanes == parse_state(json.loads(text), version).state.lanes, "as a whole parse reads it"


@pytest.mark.parametrize("rewritten", [True, 1.0], ids=["true-for-1", "float-for-1"])
def test_a_checked_lane_whose_integer_is_rewritten_as_an_equal_non_integer_is_checked_again_and_refused(
    tmp_path, rewritten
):
    """In Python 1 == True == 1.0: a lane compared as a dict would pass for the one already checked."""
    h, _ = one_call_night(tmp_path)
    h.schedule.read()  # the engine has checked every lane of this text

    h.tamper_state(lambda document: document["lanes"][0]["open"]["calls"][0].update(k=rewritten))

    refused(h, "CORRUPT", lambda: h.schedule.read())


# -- settled records kept without their calls ------------------------------------------------------------------


def _settled(tmp_path: Path):
    h, occurrence_id = one_call_night(tmp_path)
    second = h.call(occurrence_id, runner="r1", work="w2")
    h.schedule.end_call(occurrence_id=occurrence_id, runner="r1", call=second.call, report=result_report(400))
    h.schedule.settle(occurrence_id=occurrence_id, settled_by="r1", status="completed", reason="done")
    return h, occurrence_id


def test_a_settled_record_in_recent_keeps_its_calls_count_and_debits_and_its_event_keeps_the_calls(tmp_path):
    h, occurrence_id = _settled(tmp_path)
    [kept] = h.lane_state(ALPHA)["recent"]
    settlement = h.events()[-1]

    assert "calls" not in kept
    assert kept["elided"] == {"calls": 2, "debits": {"2026-W50": 1_300}}
    assert [call["debit"] for call in settlement.data["occurrence"]["calls"]] == [900, 400]
    whole = h.schedule.record(occurrence_id)
    assert [call.debit for call in whole.calls] == [900, 400] and whole.elided is None
    listed = next(o for o in h.schedule.read().occurrences if o.id == occurrence_id)
    assert (listed.call_count, listed.debited, listed.calls) == (2, 1_300, [])


def test_a_late_retry_of_a_settled_records_call_still_replays_from_its_whole_record(tmp_path):
    h, occurrence_id = _settled(tmp_path)

    again = h.again()
    replay = again.admit_call(occurrence_id=occurrence_id, runner="r1", task="scan", work="w2", bound=150_000,
                              sign_in="owner@example.com")

    assert (replay.call, replay.replayed, replay.dispatch) == (2, True, False)
    refused(h, "SETTLED", lambda: h.call(occurrence_id, runner="r1", work="w9"))


def test_a_kept_record_that_is_not_its_settlement_events_record_is_corrupt(tmp_path):
    h, occurrence_id = _settled(tmp_path)

    def lie(document: dict) -> None:
        lane = lane_of(document, ALPHA)
        lane["recent"][0]["elided"]["debits"]["2026-W50"] = 1_000  # the ledger still covers it

    h.tamper_state(lie)

    refused(h, "CORRUPT", lambda: h.again().record(occurrence_id))
    refused(h, "CORRUPT", lambda: h.again().settle(occurrence_id=occurrence_id, settled_by="r1",
                                                   status="completed", reason="done"))


def test_calls_elided_from_a_record_that_is_not_settled_is_corrupt(tmp_path):
    h, _occurrence_id = one_call_night(tmp_path)

    def elide(document: dict) -> None:
        lane = lane_of(document, ALPHA)
        lane["open"]["elided"] = {"calls": 1, "debits": {"2026-W50": 900}}
        lane["open"]["calls"] = []

    h.tamper_state(elide)

    refused(h, "CORRUPT", lambda: h.again().read())


# -- a changed lane: the parts it kept keep their check, the parts that changed are checked -------------------------


def test_a_changed_lane_keeps_the_very_records_and_items_it_held_and_stores_the_whole_text(tmp_path):
    h, _bravo = busy_night(tmp_path)
    alpha_open = h.schedule.start(lane=ALPHA, runner="r1").occurrence.id  # the engine holds this state now
    before = {lane.lane: lane for lane in h.schedule.read().lanes}

    admission = h.call(alpha_open, runner="r1", work="w1")
    h.schedule.end_call(occurrence_id=alpha_open, runner="r1", call=admission.call, report=result_report(700))

    after = {lane.lane: lane for lane in h.schedule.read().lanes}
    assert after[ALPHA] is not before[ALPHA]
    assert [a is b for a, b in zip(after[ALPHA].recent, before[ALPHA].recent, strict=True)] == [True]
    assert after[ALPHA].open.segments[0] is before[ALPHA].open.segments[0]
    assert [after[lane] is before[lane] for lane in (BRAVO, FULL)] == [True, True]
    version, text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)
    assert text == canonical_json(dump_state(parse_state(json.loads(text), version).state))
    h.assert_what_the_engine_remembers_is_what_is_stored()


def _broken_open_call(schedule, change):
    lane = schedule.state.lane(BRAVO)
    occurrence = lane.open
    calls = [change(call) if call.in_flight else call for call in occurrence.calls]
    broken = lane.model_copy(update={"open": occurrence.model_copy(update={"calls": calls})})
    return schedule.state.model_copy(update={"lanes": [broken if x is lane else x for x in schedule.state.lanes]})


@pytest.mark.parametrize("change", [
    lambda call: call.model_copy(update={"debit": call.bound - 1}),  # a call in flight is debited at its bound
    lambda call: call.model_copy(update={"week": "2026-W5"}),  # not an ISO week
], ids=["model-rule", "field-rule"])
def test_a_changed_call_that_breaks_a_rule_is_refused_though_its_occurrence_keeps_its_other_parts(tmp_path, change):
    h, _bravo = busy_night(tmp_path)
    version, text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)
    codec = StateCodec()
    schedule = codec.read(version, text)

    with pytest.raises(ScheduleError) as caught:
        codec.write(_broken_open_call(schedule, change), version + 1)
    assert caught.value.code == "CORRUPT"


def test_a_changed_occurrence_whose_transitions_break_the_lanes_rules_is_refused(tmp_path):
    h, _bravo = busy_night(tmp_path)
    version, text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)
    codec = StateCodec()
    schedule = codec.read(version, text)
    lane = schedule.state.lane(BRAVO)
    wrong = lane.open.model_copy(update={"transitions": {**lane.open.transitions, "call/9/end": version}})
    broken = schedule.state.model_copy(update={"lanes": [
        lane.model_copy(update={"open": wrong}) if x is lane else x for x in schedule.state.lanes]})

    with pytest.raises(ScheduleError) as caught:
        codec.write(broken, version + 1)
    assert caught.value.code == "CORRUPT"


def test_a_member_besides_the_lanes_is_kept_while_unchanged_and_checked_with_the_others_when_changed(tmp_path):
    h, _bravo = busy_night(tmp_path)
    version, text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)
    codec = StateCodec()
    schedule = codec.read(version, text)
    first, _ = codec.write(schedule.state, version + 1)
    second, again = codec.write(first.state, version + 2)

    assert (second.state.commission is first.state.commission, second.state.ledger is first.state.ledger) == (
        True, True)
    assert again == text
    [week] = first.state.ledger
    doubled = first.state.model_copy(update={"ledger": [week, week]})  # each entry checked, the list is not
    with pytest.raises(ScheduleError) as caught:
        codec.write(doubled, version + 2)
    assert caught.value.code == "CORRUPT"



def test_a_changed_ledger_keeps_the_weeks_it_held_and_checks_the_week_that_changed(tmp_path):
    h, _bravo = busy_night(tmp_path)
    version, text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)
    codec = StateCodec()
    schedule = codec.read(version, text)
    first, _ = codec.write(schedule.state, version + 1)
    [week] = first.state.ledger
    later = week.model_copy(update={"week": "2026-W51"})
    grown, _ = codec.write(first.state.model_copy(update={"ledger": [week, later]}), version + 2)
    assert grown.state.ledger[0] is week

    overdrawn = later.model_copy(update={"debited": -1})  # each changed week is checked from its dump
    with pytest.raises(ScheduleError) as caught:
        codec.write(grown.state.model_copy(update={"ledger": [week, overdrawn]}), version + 3)
    assert caught.value.code == "CORRUPT"
    misspelt = later.model_copy(update={"week": "2026-W5"})
    with pytest.raises(ScheduleError) as caught:
        codec.write(grown.state.model_copy(update={"ledger": [week, misspelt]}), version + 3)
    assert caught.value.code == "CORRUPT"


def test_a_lane_whose_own_members_changed_after_a_kept_decision_is_checked_from_its_dump(tmp_path):
    h, bravo = busy_night(tmp_path)
    h.schedule.end_call(occurrence_id=bravo, runner="r5", call=1, report=result_report(50))  # bravo written once
    version, _text = open_journal(h.url).load_text(SCHEDULE_AGGREGATE)
    codec = h.schedule._codec
    schedule = codec.read(version, _text)
    lane = schedule.state.lane(BRAVO)
    for wrong in ({"since": "2026-12-07T99:00:00.000Z"}, {"last_week": "2026-W50"},
                  {"watermark": Watermark(occurrence=basic_id("bravo", "2026-12-06"), date="2026-12-06")}):
        broken = schedule.state.model_copy(update={"lanes": [
            x.model_copy(update={"open": x.open.model_copy(update={"state": "running"}), **wrong}) if x is lane else x
            for x in schedule.state.lanes]})
        with pytest.raises(ScheduleError) as caught:
            codec.write(broken, version + 1)
        assert caught.value.code == "CORRUPT", wrong

# -- the parts a command stores ---------------------------------------------------------------------------------------


def _stored_parts(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as db:
        (manifest,) = db.execute("SELECT state FROM aggregates WHERE aggregate = ?", (SCHEDULE_AGGREGATE,)).fetchone()
        texts = dict(db.execute("SELECT name, text FROM state_parts WHERE aggregate = ?", (SCHEDULE_AGGREGATE,)))
    return [(name, texts[name]) for name, _digest in json.loads(manifest)]


def _cut_as_the_journal_cuts(document: dict) -> list[tuple[str, str]]:
    """The state in `store.parted`'s pieces: each member besides the lanes and each lane named, the glue between."""
    pieces: list[tuple[str | None, str]] = []
    for index, key in enumerate(sorted(document)):
        pieces.append((None, ("," if index else "{") + json.dumps(key) + ":"))
        if key != "lanes":
            pieces.append((key, canonical_json(document[key])))
            continue
        pieces.append((None, "["))
        for position, lane in enumerate(document["lanes"]):
            pieces += [(None, ",")] if position else []
            pieces.append((f"lanes/{lane['lane']}", canonical_json(lane)))
        pieces.append((None, "]"))
    pieces.append((None, "}"))
    return list(parted(pieces).parts)


def test_a_commands_state_is_stored_in_the_parts_the_journal_cuts_from_its_members_and_lanes(tmp_path):
    h, bravo = busy_night(tmp_path)
    stored = [_stored_parts(h.path)]
    h.schedule.end_call(occurrence_id=bravo, runner="r5", call=1, report=result_report(50))  # one lane, the ledger
    stored.append(_stored_parts(h.path))
    h.schedule.start(lane=FULL, runner="r9")  # nothing due: no command
    h.schedule.settle(occurrence_id=bravo, settled_by="r5", status="completed", reason="done")  # one lane only
    stored.append(_stored_parts(h.path))

    for parts in stored:
        document = json.loads("".join(text for _name, text in parts))
        assert parts == _cut_as_the_journal_cuts(document)
    assert [name for name, _text in stored[-1]] == [
        "accounts", "commission", "commissionDigest", *(f"lanes/{lane}" for lane in sorted([ALPHA, BRAVO, FULL])),
        "ledger", "protocol", "revisionRecordedAt"]
