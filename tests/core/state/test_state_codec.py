"""StateCodec keeps, across reads, the lanes whose bytes it already checked; a kept check never stands in for one.

A new state text keeps a lane's earlier check when its stored document re-encodes to exactly the text of a lane
the codec checked (its canonical text, or for a lane it read, the encoding of the document it read) under the
same commission digest at the same or an earlier version. These
tests try to make that reuse stand in for a check the whole parse would make: rules that read the commission
(its zone, its lanes), the version (a restored or rewound row), a decision that was checked and never stored,
a read that failed, and random damage compared against a fresh engine's whole parse. Stored defects refused
by an engine holding kept lanes are in test_corrupt_state_warm_engine.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factory_schedule.core import SCHEDULE_AGGREGATE
from factory_schedule.core.commission import commission_digest, commission_document, parse_commission
from factory_schedule.core.schedule_checks import parse_state
from factory_schedule.core.schedule_document import LaneState
from factory_schedule.store import open_journal
from tests.core.schedule.support import (
    ALPHA,
    BRAVO,
    FailsAfterDeciding,
    basic_id,
    basic_lane,
    commission,
    copy_journal,
    dumped,
    make_harness,
    open_harness,
    refused,
    result_report,
    weekly_lane,
)
from tests.core.state.support import (
    THREE_LANES,
    assert_refused_as_a_fresh_engine_refuses,
    assert_stored_whole,
    busy_night,
    lane_of,
    verdict,
)


def set_commission(document: dict, recorded: dict) -> None:
    """Replace the stored commission by another, with its own (matching) digest."""
    stored = commission_document(parse_commission(recorded))
    document["commission"] = stored
    document["commissionDigest"] = commission_digest(stored)


# -- rules a lane's check reads besides its own bytes ----------------------------------------------------------------


def test_a_kept_lane_is_checked_again_under_a_commission_whose_zone_changed(tmp_path):
    # bravo joined at 23:30 UTC on the 7th and keeps only a watermark for the 8th: in Tokyo it joined on the 8th
    # (nothing admitted since joining), in London on the 7th (the admission its watermark names is missing).
    h = make_harness(tmp_path, lanes=THREE_LANES, zone="Asia/Tokyo")

    def rejoined(document: dict) -> None:
        lane_of(document, BRAVO).update(since="2026-12-07T23:30:00.000Z", watermark={
            "occurrence": basic_id("bravo", "2026-12-08"), "date": "2026-12-08"})

    h.tamper_state(rejoined)
    assert h.again().read() is not None, "a valid state in Tokyo"
    assert h.schedule.read() is not None  # the engine has checked bravo's bytes under the Tokyo commission

    h.tamper_state(lambda document: set_commission(document, commission(THREE_LANES, zone="Europe/London")))

    message = assert_refused_as_a_fresh_engine_refuses(h, h.schedule)
    assert "bravo/basic" in message
    refused(h, "CORRUPT", lambda: h.schedule.start(lane=ALPHA, runner="r1"))


def test_a_kept_lane_outside_the_commission_is_checked_again_when_the_commission_names_it(tmp_path):
    h = make_harness(tmp_path, lanes=THREE_LANES)
    h.owner_record("claude", 1)
    h.at("2026-12-07T02:10:00Z")
    bravo = h.admit(BRAVO, "r2").occurrence.id
    h.schedule.settle(occurrence_id=bravo, settled_by="r2", status="completed", reason="done")
    h.at("2026-12-08T12:00:00Z")
    h.schedule.record_commission(commission([basic_lane("alpha"), weekly_lane(weekday=1)], revision=2))
    assert "recent" not in h.lane_state(BRAVO) and h.lane_state(BRAVO)["watermark"]["date"] == "2026-12-07"
    assert h.schedule.read() is not None  # bravo (a lane that left: watermark only) checked under revision 2

    # The same bytes for bravo under a commission that names it: it must hold the admission its watermark names.
    h.tamper_state(lambda document: set_commission(document, commission(THREE_LANES, revision=2)))

    message = assert_refused_as_a_fresh_engine_refuses(h, h.schedule)
    assert "watermark admitted is missing" in message


def test_a_commission_whose_digest_repeats_an_earlier_one_keeps_only_lanes_valid_under_it(tmp_path):
    # Revision 1 names bravo, revision 2 does not; the engine checked bravo's watermark-only lane under 2. A row
    # put back to revision 1 (the digest the engine knew first) must not keep bravo's check from revision 2.
    h = make_harness(tmp_path, lanes=THREE_LANES)
    h.owner_record("claude", 1)
    h.at("2026-12-07T02:10:00Z")
    bravo = h.admit(BRAVO, "r2").occurrence.id
    h.schedule.settle(occurrence_id=bravo, settled_by="r2", status="completed", reason="done")
    first = h.state()
    h.at("2026-12-08T12:00:00Z")
    h.schedule.record_commission(commission([basic_lane("alpha"), weekly_lane(weekday=1)], revision=2))
    assert h.schedule.read() is not None

    h.tamper_state(lambda document: document.update(commission=first["commission"],
                                                    commissionDigest=first["commissionDigest"]))

    assert_refused_as_a_fresh_engine_refuses(h, h.schedule)


# -- the version ------------------------------------------------------------------------------------------------------


def test_a_kept_lane_is_checked_again_when_the_same_text_comes_back_at_an_earlier_version(tmp_path):
    h, bravo = busy_night(tmp_path)
    reader = h.again()
    assert reader.read() is not None and h.schedule.read() is not None
    version, text = h.stored_row()

    h.put_row(text, version - 1)  # a restored row: the newest text, the version before it

    message = assert_refused_as_a_fresh_engine_refuses(h, h.schedule, reader)
    assert "names a version not yet written" in message
    refused(h, "CORRUPT", lambda: h.schedule.settle(occurrence_id=bravo, settled_by="r5", status="partial",
                                                    reason="x"))


def test_a_lane_checked_for_a_decision_never_stored_is_not_kept_for_its_text_at_the_version_before(tmp_path):
    h, bravo = busy_night(tmp_path)
    real = h.schedule.journal
    version, _ = h.stored_row()
    h.schedule.journal = failing = FailsAfterDeciding(real)
    with pytest.raises(OSError):
        h.schedule.end_call(occurrence_id=bravo, runner="r5", call=1, report=result_report(70))
    h.schedule.journal = real
    [(decided_version, decided_text)] = failing.decided
    assert decided_version == version + 1 and h.stored_row()[0] == version

    # The text the failed decision checked at version + 1, stored at the version it was decided from.
    h.put_row(decided_text, version)

    message = assert_refused_as_a_fresh_engine_refuses(h, h.schedule)
    assert "names a version not yet written" in message


def test_a_lane_checked_for_a_decision_never_stored_is_kept_when_another_engine_stores_the_same_bytes(tmp_path):
    h, bravo = busy_night(tmp_path)
    real = h.schedule.journal
    h.schedule.journal = failing = FailsAfterDeciding(real)
    with pytest.raises(OSError):
        h.schedule.end_call(occurrence_id=bravo, runner="r5", call=1, report=result_report(70))
    h.schedule.journal = real
    [(decided_version, decided_text)] = failing.decided

    h.again().end_call(occurrence_id=bravo, runner="r5", call=1, report=result_report(70))

    stored = h.stored_row()
    assert stored == (decided_version, decided_text), "the other engine stored exactly what the failed one decided"
    assert_stored_whole(h)
    h.at("2026-12-09T02:35:00Z")
    h.schedule.settle(occurrence_id=bravo, settled_by="r5", status="completed", reason="done")
    assert_stored_whole(h)


# -- what the engine keeps after a failed read, and what it writes after a read that kept lanes -------------------


def test_a_read_that_failed_leaves_nothing_a_later_read_or_command_trusts(tmp_path):
    h, bravo = busy_night(tmp_path)
    assert h.schedule.read() is not None
    version, good = h.stored_row()
    document = json.loads(good)

    broken = json.loads(good)
    lane_of(broken, BRAVO)["open"]["calls"][0]["debit"] = 7
    h.put_row(dumped(broken))
    refused(h, "CORRUPT", h.schedule.read)

    # Another good text: only the ledger differs (debited one more).
    document["ledger"][0]["debited"] += 1
    h.put_row(dumped(document))
    assert verdict(h.schedule) == verdict(h.again())
    assert h.schedule.read().ledger[0].debited == json.loads(good)["ledger"][0]["debited"] + 1

    # The damage again, then the first text back: refused, then read as a fresh engine reads it.
    h.put_row(dumped(broken))
    refused(h, "CORRUPT", lambda: h.schedule.end_call(occurrence_id=bravo, runner="r5", call=1,
                                                      report=result_report(70)))
    h.put_row(good)
    assert verdict(h.schedule) == verdict(h.again())
    h.schedule.end_call(occurrence_id=bravo, runner="r5", call=1, report=result_report(70))
    assert h.stored_row()[0] == version + 1
    assert_stored_whole(h)


def test_a_command_after_a_read_that_kept_lanes_stores_the_canonical_text_of_the_whole_state(tmp_path):
    h, bravo = busy_night(tmp_path)
    other = h.again()
    before = {lane.lane: lane for lane in h.schedule.read().lanes}
    assert other.read() is not None

    # The other engine changes bravo and the ledger; this one reads that text keeping alpha and the weekly lane.
    other.end_call(occurrence_id=bravo, runner="r5", call=1, report=result_report(70))
    after = h.schedule.read().lanes
    assert [lane is before[lane.lane] for lane in after] == [lane.lane != BRAVO for lane in after]

    # Then this engine decides on that state: a change to alpha, one to bravo, and a revision.
    h.schedule.defer(occurrence_id=basic_id("alpha", "2026-12-09"), runner="r1", reason="logged-out")
    assert_stored_whole(h, other)
    other.settle(occurrence_id=bravo, settled_by="r5", status="completed", reason="done")
    h.schedule.record_account(account="claude", sequence=2, sign_in="owner@example.com", overage=False,
                              recorded_by="owner")
    assert_stored_whole(h, other)
    h.at("2026-12-13T12:00:00Z")
    other.record_commission(commission(THREE_LANES, revision=2, zone="Europe/Lisbon"))
    h.schedule.record_account(account="claude", sequence=3, sign_in="owner@example.com", overage=False,
                              recorded_by="owner")
    assert_stored_whole(h, other)


# -- random damage: an engine holding checked lanes answers exactly as a fresh engine's whole parse -----------------


@pytest.fixture(scope="module")
def busy_journal(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    h, _bravo = busy_night(tmp_path_factory.mktemp("busy"))
    return h.path, h.clock.now().isoformat()


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, item in node.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found += _paths(item, (*prefix, index))
    return found


def _at(document: Any, path: tuple) -> Any:
    for part in path:
        document = document[part]
    return document


def _replacements(value: Any) -> list[Any]:
    common: list[Any] = [None, True, False, 0, 1, -1, "", "x", [], {}]
    if isinstance(value, bool):
        return [*common, int(value), not value]
    if isinstance(value, int):
        return [*common, value + 1, value - 1, float(value), value == 1, str(value)]
    if isinstance(value, str):
        return [*common, value + "x", value[:-1], value.upper(), f" {value}"]
    if isinstance(value, list) and value:
        return [*common, value[:-1], [*value, value[-1]], list(reversed(value))]
    return common


@st.composite
def damage(draw: st.DrawFn, document: dict, version: int) -> tuple[str, int]:
    """One random change to the stored row: a value replaced, a key dropped or added, lanes moved, doubled,
    renamed or dropped, or the version moved."""
    document = json.loads(json.dumps(document))
    kind = draw(st.sampled_from(["replace", "replace", "replace", "drop", "extra", "lanes", "version"]))
    if kind == "version":
        return dumped(document), draw(st.sampled_from([version - 5, version - 1, version + 1, version + 40]))
    if kind == "lanes":
        lanes = document["lanes"]
        how = draw(st.sampled_from(["swap", "double", "drop", "rename", "reverse"]))
        i = draw(st.integers(0, len(lanes) - 1))
        j = draw(st.integers(0, len(lanes) - 1))
        if how == "swap":
            lanes[i], lanes[j] = lanes[j], lanes[i]
        elif how == "double":
            lanes.insert(i, lanes[j])
        elif how == "drop":
            lanes.pop(i)
        elif how == "rename":
            lanes[i] = dict(lanes[i], lane=lanes[j]["lane"])
        else:
            lanes.reverse()
        return dumped(document), version
    path = draw(st.sampled_from(_paths(document)))
    parent, key = _at(document, path[:-1]), path[-1]
    if kind == "drop":
        del parent[key]
    elif kind == "extra":
        target = parent[key] if isinstance(parent[key], dict) else parent
        target["colour"] = "red"
    else:
        parent[key] = draw(st.sampled_from(_replacements(parent[key])))
    return dumped(document), version


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_any_damage_reads_for_an_engine_holding_checked_lanes_as_a_fresh_engine_reads_it(busy_journal, tmp_path,
                                                                                         data):
    source, now = busy_journal
    path = tmp_path / "journal.db"
    if not path.exists():
        copy_journal(source, path)
    h = open_harness(path, now)
    version, good = h.stored_row()
    document = json.loads(good)
    holding = h.again()
    assert holding.read() is not None  # it has checked every lane of the good text
    text, damaged_version = data.draw(damage(document, version))
    in_parts = data.draw(st.booleans(), label="stored in parts")  # as the engine's writer cuts a state, or whole

    h.put_row(text, damaged_version, in_parts=in_parts)
    try:
        fresh, held = verdict(h.again()), verdict(holding)
    finally:
        h.put_row(good, version, in_parts=True)
    assert held == fresh
    if fresh[0] == "read":
        assert held[1].lanes == parse_state(json.loads(text), damaged_version).state.lanes


def test_a_fresh_engine_holds_no_checked_lane_so_its_read_is_the_whole_parse(tmp_path):
    # The helpers above read "fresh" through a new LifecycleSchedule on a new handle: it has no kept lanes.
    h, _bravo = busy_night(tmp_path)
    fresh = h.again()
    assert fresh._codec._lanes == {}
    assert verdict(fresh)[0] == "read"
    assert open_journal(h.url).load_text(SCHEDULE_AGGREGATE)[0] == h.stored_row()[0]


def test_an_engine_that_only_read_a_lane_recognises_its_bytes_without_dumping_it(tmp_path, monkeypatch):
    # A reader that writes nothing (the dashboard) knows each lane by the stored bytes it checked: another engine's
    # command that leaves the lanes as they were is read with no lane dumped to compare, and reads as a fresh one.
    h, _bravo = busy_night(tmp_path)
    reader = h.again()
    assert reader.read() is not None
    h.again().record_account(account="claude", sequence=2, sign_in="owner@example.com", overage=False,
                             recorded_by="owner")
    dumped_lanes: list[object] = []
    dump = LaneState.model_dump

    def counted(self: LaneState, *args: Any, **kwargs: Any) -> Any:
        dumped_lanes.append(self.lane)
        return dump(self, *args, **kwargs)

    monkeypatch.setattr(LaneState, "model_dump", counted)
    after = reader.read()
    assert dumped_lanes == []
    assert after == h.again().read() and after is not None and after.accounts[0].record.sequence == 2
    # and the next new state too: the bytes' text, once made, is what every later comparison takes
    h.again().record_account(account="claude", sequence=3, sign_in="owner@example.com", overage=False,
                             recorded_by="owner")
    dumped_lanes.clear()  # the writer's own dumps
    again = reader.read()
    assert dumped_lanes == []
    assert again == h.again().read() and again is not None and again.accounts[0].record.sequence == 3
