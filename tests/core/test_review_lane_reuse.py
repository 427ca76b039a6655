"""A review of cf524fb: a new state text keeps the lanes whose bytes this engine already checked.

`StateCodec._read_keeping_lanes` reuses a lane's earlier check when its stored document re-encodes to exactly
the canonical text of a lane the codec checked under the same commission digest at the same or an earlier
version. These tests try to make that reuse stand in for a check the whole parse would make: rules that read
the commission (its zone, its lanes), the version (a restored or rewound row), the order and number of lanes,
the ledger, a decision that was checked and never stored, a read that failed, and random damage compared
against a fresh engine's whole parse. Each test names the rule it holds. Three bugs older than that commit,
found here, are fixed in the commit that follows it (the commission memo, a reconciliation's segment,
nesting too deep to decode).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tests.core.test_corrupt_state as corrupt_state
from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule, ScheduleError
from factory_schedule.core.commission import commission_digest, commission_document, parse_commission
from factory_schedule.core.state import parse_state
from factory_schedule.store import JournalCorruptError, canonical_json, open_journal
from tests.core.engine_helpers import (
    Harness,
    basic_id,
    basic_lane,
    commission,
    confirmation,
    copy_journal,
    make_harness,
    open_harness,
    refused,
    result_report,
    weekly_lane,
)
from tests.store.forgery import reseal_head

ALPHA, BRAVO, FULL = "alpha/basic", "bravo/basic", "alpha/full"
LANES = [basic_lane("alpha"), basic_lane("bravo", time="02:10"), weekly_lane(weekday=1)]

# The corrupt-state suite's template journal and its defects (the fixture is registered here by assignment).
template = corrupt_state.template
DEFECTS = corrupt_state.DEFECTS


# -- helpers ---------------------------------------------------------------------------------------------------------


def row(h: Harness) -> tuple[int, str]:
    with sqlite3.connect(h.path) as db:
        version, text = db.execute("SELECT version, state FROM aggregates WHERE aggregate = ?",
                                   (SCHEDULE_AGGREGATE,)).fetchone()
    return int(version), text


PARKED = "parked/schedule"


def put_row(h: Harness, text: str, version: int | None = None) -> None:
    """Write the stored state row as a forged edit or a restore from a backup would: text and version as given.

    The head's seal is recomputed (`reseal_head`) so that the engine's own checks see the row, and the events
    and receipts beyond the version are parked under another aggregate (a backup would not have them), to come
    back when a later call moves the version forward again. A version no event has is left for the journal to
    refuse."""
    with sqlite3.connect(h.path) as db:
        if version is not None:
            for table, column in (("events", "version"), ("receipts", "last_version")):
                db.execute(f"UPDATE {table} SET aggregate = ? WHERE aggregate = ? AND {column} > ?",
                           (PARKED, SCHEDULE_AGGREGATE, version))
                db.execute(f"UPDATE {table} SET aggregate = ? WHERE aggregate = ? AND {column} <= ?",
                           (SCHEDULE_AGGREGATE, PARKED, version))
            db.execute("UPDATE aggregates SET version = ? WHERE aggregate = ?", (version, SCHEDULE_AGGREGATE))
        db.execute("UPDATE aggregates SET state = ? WHERE aggregate = ?", (text, SCHEDULE_AGGREGATE))
        head = db.execute("SELECT 1 FROM events e JOIN aggregates a ON e.aggregate = a.aggregate "
                          "AND e.version = a.version WHERE a.aggregate = ?", (SCHEDULE_AGGREGATE,)).fetchone()
        if head is not None:
            reseal_head(db, SCHEDULE_AGGREGATE)


def dumped(document: Any) -> str:
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def lane_of(document: dict, lane_id: str) -> dict:
    return next(entry for entry in document["lanes"] if entry["lane"] == lane_id)


def verdict(engine: LifecycleSchedule) -> tuple:
    """What one read answers: the view, the refusal with its message, or any other exception by type."""
    try:
        view = engine.read()
    except ScheduleError as error:
        return ("refused", error.code, error.message)
    except Exception as error:  # anything but a ScheduleError breaks the CORRUPT rule
        return ("raised", type(error).__name__)
    return ("read", view)


def assert_refused_as_a_fresh_engine_refuses(h: Harness, *engines: LifecycleSchedule) -> str:
    """Every engine given refuses the stored text CORRUPT with the message a fresh engine's whole parse gives."""
    fresh = verdict(h.again())
    assert fresh[:2] == ("refused", "CORRUPT"), fresh
    for engine in engines:
        assert verdict(engine) == fresh
    return fresh[2]


def assert_stored_whole(h: Harness, *engines: LifecycleSchedule) -> None:
    """The stored text is the canonical text of the whole state it parses to, and every engine reads it as a
    fresh one does."""
    version, text = row(h)
    whole = parse_state(json.loads(text), version)
    assert text == canonical_json(whole.state.doc())
    expected = h.again().read()
    for engine in (h.schedule, *engines):
        assert engine.read() == expected
    h.assert_what_the_engine_remembers_is_what_is_stored()


def set_commission(document: dict, recorded: dict) -> None:
    """Replace the stored commission by another, with its own (matching) digest."""
    stored = commission_document(parse_commission(recorded))
    document["commission"] = stored
    document["commissionDigest"] = commission_digest(stored)


def _rich(tmp_path: Path) -> tuple[Harness, str]:
    """alpha: a settled night kept without its calls (calls, a deferral, a reconciliation, three segments) and an
    open one; bravo: an open night with a call in flight; the weekly lane: a settled night kept without its call."""
    h = make_harness(tmp_path, lanes=LANES)
    h.owner_record("claude", 1)
    h.at("2026-12-07T02:00:00Z")
    settled = h.admit(ALPHA, "r1").occurrence.id
    for work, tokens in (("w1", 900), ("w2", 400)):
        admission = h.call(settled, runner="r1", work=work)
        h.schedule.end_call(occurrence_id=settled, runner="r1", call=admission.call, report=result_report(tokens))
    h.at("2026-12-07T02:05:00Z")
    h.schedule.defer(occurrence_id=settled, runner="r1", reason="logged-out")
    h.at("2026-12-07T02:40:00Z")
    weekly = h.admit(FULL, "r4").occurrence.id
    admission = h.call(weekly, runner="r4", work="f1")
    h.schedule.end_call(occurrence_id=weekly, runner="r4", call=admission.call, report=result_report(5_000))
    h.schedule.settle(occurrence_id=weekly, settled_by="r4", status="completed", reason="done")
    h.at("2026-12-08T02:00:00Z")
    assert h.schedule.start(lane=ALPHA, runner="r2").kind == "resumed"
    admission = h.call(settled, runner="r2", work="w3")
    h.schedule.end_call(occurrence_id=settled, runner="r2", call=admission.call, report=result_report(300))
    h.at("2026-12-08T02:05:00Z")
    h.schedule.reconcile(occurrence_id=settled, confirmation=confirmation("r2"))
    h.at("2026-12-08T02:06:00Z")
    assert h.schedule.start(lane=ALPHA, runner="r3").kind == "resumed"
    h.at("2026-12-08T02:10:00Z")
    bravo = h.admit(BRAVO, "r5").occurrence.id
    h.call(bravo, runner="r5", work="b1")  # in flight
    h.at("2026-12-08T02:20:00Z")
    h.schedule.settle(occurrence_id=settled, settled_by="r3", status="completed", reason="done")
    h.at("2026-12-09T02:00:00Z")
    h.admit(ALPHA, "r1")
    h.at("2026-12-09T02:30:00Z")
    return h, bravo


class DecidesThenFails:
    """The real journal, except that its first decision is run (the new state checked and encoded by
    `StateCodec.write`), kept in `decided`, and then the transaction fails as a lost disk would fail it."""

    def __init__(self, journal: Any) -> None:
        self._journal, self.decided = journal, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)

    def execute(self, aggregate: str, command_id: str, payload: Any, version: int, decide: Any, **kwargs: Any):
        def failing(state: Any, at_version: int) -> Any:
            decision = decide(state, at_version)
            if not self.decided:
                self.decided.append((at_version + 1, str(decision.state)))
                raise OSError("the disk went away")
            return decision

        return self._journal.execute(aggregate, command_id, payload, version, failing, **kwargs)


# -- rules a lane's check reads besides its own bytes ----------------------------------------------------------------


def test_a_kept_lane_is_checked_again_under_a_commission_whose_zone_changed(tmp_path):
    # bravo joined at 23:30 UTC on the 7th and keeps only a watermark for the 8th: in Tokyo it joined on the 8th
    # (nothing admitted since joining), in London on the 7th (the admission its watermark names is missing).
    h = make_harness(tmp_path, lanes=LANES, zone="Asia/Tokyo")

    def rejoined(document: dict) -> None:
        lane_of(document, BRAVO).update(since="2026-12-07T23:30:00.000Z", watermark={
            "occurrence": basic_id("bravo", "2026-12-08"), "date": "2026-12-08"})

    h.tamper_state(rejoined)
    assert h.again().read() is not None, "a valid state in Tokyo"
    assert h.schedule.read() is not None  # the engine has checked bravo's bytes under the Tokyo commission

    h.tamper_state(lambda document: set_commission(document, commission(LANES, zone="Europe/London")))

    message = assert_refused_as_a_fresh_engine_refuses(h, h.schedule)
    assert "bravo/basic" in message
    refused(h, "CORRUPT", lambda: h.schedule.start(lane=ALPHA, runner="r1"))


def test_a_kept_lane_outside_the_commission_is_checked_again_when_the_commission_names_it(tmp_path):
    h = make_harness(tmp_path, lanes=LANES)
    h.owner_record("claude", 1)
    h.at("2026-12-07T02:10:00Z")
    bravo = h.admit(BRAVO, "r2").occurrence.id
    h.schedule.settle(occurrence_id=bravo, settled_by="r2", status="completed", reason="done")
    h.at("2026-12-08T12:00:00Z")
    h.schedule.record_commission(commission([basic_lane("alpha"), weekly_lane(weekday=1)], revision=2))
    assert "recent" not in h.lane_state(BRAVO) and h.lane_state(BRAVO)["watermark"]["date"] == "2026-12-07"
    assert h.schedule.read() is not None  # bravo (a lane that left: watermark only) checked under revision 2

    # The same bytes for bravo under a commission that names it: it must hold the admission its watermark names.
    h.tamper_state(lambda document: set_commission(document, commission(LANES, revision=2)))

    message = assert_refused_as_a_fresh_engine_refuses(h, h.schedule)
    assert "watermark admitted is missing" in message


def test_a_commission_whose_digest_repeats_an_earlier_one_keeps_only_lanes_valid_under_it(tmp_path):
    # Revision 1 names bravo, revision 2 does not; the engine checked bravo's watermark-only lane under 2. A row
    # put back to revision 1 (the digest the engine knew first) must not keep bravo's check from revision 2.
    h = make_harness(tmp_path, lanes=LANES)
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
    h, bravo = _rich(tmp_path)
    reader = h.again()
    assert reader.read() is not None and h.schedule.read() is not None
    version, text = row(h)

    put_row(h, text, version - 1)  # a restored row: the newest text, the version before it

    message = assert_refused_as_a_fresh_engine_refuses(h, h.schedule, reader)
    assert "names a version not yet written" in message
    refused(h, "CORRUPT", lambda: h.schedule.settle(occurrence_id=bravo, settled_by="r5", status="partial",
                                                    reason="x"))


def test_a_lane_checked_for_a_decision_never_stored_is_not_kept_for_its_text_at_the_version_before(tmp_path):
    h, bravo = _rich(tmp_path)
    real = h.schedule.journal
    version, _ = row(h)
    h.schedule.journal = failing = DecidesThenFails(real)
    with pytest.raises(OSError):
        h.schedule.end_call(occurrence_id=bravo, runner="r5", call=1, report=result_report(70))
    h.schedule.journal = real
    [(decided_version, decided_text)] = failing.decided
    assert decided_version == version + 1 and row(h)[0] == version

    # The text the failed decision checked at version + 1, stored at the version it was decided from.
    put_row(h, decided_text, version)

    message = assert_refused_as_a_fresh_engine_refuses(h, h.schedule)
    assert "names a version not yet written" in message


def test_a_lane_checked_for_a_decision_never_stored_is_kept_when_another_engine_stores_the_same_bytes(tmp_path):
    h, bravo = _rich(tmp_path)
    real = h.schedule.journal
    h.schedule.journal = failing = DecidesThenFails(real)
    with pytest.raises(OSError):
        h.schedule.end_call(occurrence_id=bravo, runner="r5", call=1, report=result_report(70))
    h.schedule.journal = real
    [(decided_version, decided_text)] = failing.decided

    h.again().end_call(occurrence_id=bravo, runner="r5", call=1, report=result_report(70))

    assert row(h) == (decided_version, decided_text), "the other engine stored exactly what the failed one decided"
    assert_stored_whole(h)
    h.at("2026-12-09T02:35:00Z")
    h.schedule.settle(occurrence_id=bravo, settled_by="r5", status="completed", reason="done")
    assert_stored_whole(h)


# -- lanes moved, doubled, renamed, dropped; the ledger ----------------------------------------------------------------


def _swap_lanes(document: dict) -> None:
    document["lanes"][0], document["lanes"][1] = document["lanes"][1], document["lanes"][0]


def _double_lane(document: dict) -> None:
    document["lanes"].insert(0, document["lanes"][0])


def _rename_lane_to_the_next(document: dict) -> None:
    # alpha/full (settled weekly record) renamed alpha/basic and alpha/basic dropped: every byte of the lane is
    # one the engine checked, except its ID.
    full = lane_of(document, corrupt_state.WEEKLY)
    document["lanes"] = [dict(full, lane=corrupt_state.DAILY), full]


LANE_DEFECTS: dict[str, Callable[[dict], None]] = {
    "lanes-swapped": _swap_lanes,
    "a-lane-twice": _double_lane,
    "a-lane-renamed-to-another-commission-lane": _rename_lane_to_the_next,
    "lanes-empty": lambda document: document.update(lanes=[]),
}


def _damaged_after_a_read(template: Path, tmp_path: Path, change: Callable[[dict], None]) -> Harness:
    """The template's good state read by an engine (which keeps the lanes it checked), then damaged."""
    path = tmp_path / "journal.db"
    copy_journal(template, path)
    h = open_harness(path, corrupt_state.NOW)
    assert h.schedule.read() is not None
    h.tamper_state(change)
    return h


@pytest.mark.parametrize("defect", sorted(LANE_DEFECTS))
def test_lanes_moved_doubled_renamed_or_unbalanced_are_corrupt_for_an_engine_holding_their_checks(
        template, tmp_path, defect):
    h = _damaged_after_a_read(template, tmp_path, LANE_DEFECTS[defect])

    assert_refused_as_a_fresh_engine_refuses(h, h.schedule)
    corrupt_state.assert_corrupt_everywhere(h)


def test_a_ledger_without_the_week_a_kept_lanes_call_in_flight_debits_is_corrupt(tmp_path):
    h, bravo = _rich(tmp_path)
    assert h.schedule.read() is not None
    h.tamper_state(lambda document: document.update(ledger=[]))

    message = assert_refused_as_a_fresh_engine_refuses(h, h.schedule)
    assert "ledger" in message
    refused(h, "CORRUPT", lambda: h.schedule.end_call(occurrence_id=bravo, runner="r5", call=1,
                                                      report=result_report(70)))


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_every_stored_defect_is_corrupt_everywhere_with_a_fresh_engines_message_for_an_engine_holding_checks(
        template, tmp_path, defect):
    h = _damaged_after_a_read(template, tmp_path, DEFECTS[defect])

    assert_refused_as_a_fresh_engine_refuses(h, h.schedule)
    corrupt_state.assert_corrupt_everywhere(h)


# -- what the engine keeps after a failed read, and what it writes after a read that kept lanes -------------------


def test_a_read_that_failed_leaves_nothing_a_later_read_or_command_trusts(tmp_path):
    h, bravo = _rich(tmp_path)
    assert h.schedule.read() is not None
    version, good = row(h)
    document = json.loads(good)

    broken = json.loads(good)
    lane_of(broken, BRAVO)["open"]["calls"][0]["debit"] = 7
    put_row(h, dumped(broken))
    refused(h, "CORRUPT", h.schedule.read)

    # Another good text: only the ledger differs (debited one more).
    document["ledger"][0]["debited"] += 1
    put_row(h, dumped(document))
    assert verdict(h.schedule) == verdict(h.again())
    assert h.schedule.read().ledger[0].debited == json.loads(good)["ledger"][0]["debited"] + 1

    # The damage again, then the first text back: refused, then read as a fresh engine reads it.
    put_row(h, dumped(broken))
    refused(h, "CORRUPT", lambda: h.schedule.end_call(occurrence_id=bravo, runner="r5", call=1,
                                                      report=result_report(70)))
    put_row(h, good)
    assert verdict(h.schedule) == verdict(h.again())
    h.schedule.end_call(occurrence_id=bravo, runner="r5", call=1, report=result_report(70))
    assert row(h)[0] == version + 1
    assert_stored_whole(h)


def test_a_command_after_a_read_that_kept_lanes_stores_the_canonical_text_of_the_whole_state(tmp_path):
    h, bravo = _rich(tmp_path)
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
    other.record_commission(commission(LANES, revision=2, zone="Europe/Lisbon"))
    h.schedule.record_account(account="claude", sequence=3, sign_in="owner@example.com", overage=False,
                              recorded_by="owner")
    assert_stored_whole(h, other)


# -- bugs the review found besides the lane reuse (both the whole parse and the kept lanes share them) ---------------


@pytest.mark.parametrize("rewritten", [True, 1.0], ids=["true-for-1", "float-for-1"])
def test_a_stored_commission_whose_integer_is_rewritten_as_an_equal_non_integer_is_corrupt(tmp_path, rewritten):
    h, _bravo = _rich(tmp_path)
    assert h.schedule.read() is not None
    h.tamper_state(lambda document: document["commission"].update(revision=rewritten))

    refused(h, "CORRUPT", h.schedule.read)
    refused(h, "CORRUPT", lambda: h.again().read())
    refused(h, "CORRUPT", lambda: h.schedule.record_account(account="claude", sequence=2, sign_in="owner@example.com",
                                                            overage=False, recorded_by="owner"))


def _reconciled_segment_never_started(document: dict) -> None:
    occurrence = corrupt_state.open_occurrence(document)  # deferred, one segment
    occurrence["reconciliations"] = [{"segment": 2, "runner": "r3", "confirmedBy": "supervisor",
                                      "evidence": "gone", "at": "2026-12-08T02:07:00.000Z"}]
    occurrence["transitions"]["reconcile/2"] = 1


@pytest.mark.parametrize("engine", ["fresh", "holding-the-good-state"])
def test_a_reconciliation_naming_a_segment_that_never_started_is_corrupt_everywhere(template, tmp_path, engine):
    path = tmp_path / "journal.db"
    copy_journal(template, path)
    h = open_harness(path, corrupt_state.NOW)
    if engine != "fresh":
        assert h.schedule.read() is not None
    h.tamper_state(_reconciled_segment_never_started)

    corrupt_state.assert_corrupt_everywhere(h)


def test_a_stored_state_nested_too_deep_to_decode_is_corrupt(tmp_path):
    h, _bravo = _rich(tmp_path)
    assert h.schedule.read() is not None
    _version, text = row(h)
    since = json.dumps(lane_of(json.loads(text), ALPHA)["since"])
    put_row(h, text.replace(f'"since":{since}', '"since":' + "[" * 100_000 + "]" * 100_000, 1))
    damaged = row(h)

    with pytest.raises(ScheduleError) as raised:
        h.schedule.read()
    assert raised.value.code == "CORRUPT"
    with pytest.raises(JournalCorruptError):  # the journal's own reader refuses it in its words
        open_journal(h.url).load(SCHEDULE_AGGREGATE)
    assert row(h) == damaged


# -- random damage: an engine holding checked lanes answers exactly as a fresh engine's whole parse -----------------


@pytest.fixture(scope="module")
def rich_journal(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    h, _bravo = _rich(tmp_path_factory.mktemp("rich"))
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
def test_any_damage_reads_for_an_engine_holding_checked_lanes_as_a_fresh_engine_reads_it(rich_journal, tmp_path,
                                                                                         data):
    source, now = rich_journal
    path = tmp_path / "journal.db"
    if not path.exists():
        copy_journal(source, path)
    h = open_harness(path, now)
    version, good = row(h)
    document = json.loads(good)
    holding = h.again()
    assert holding.read() is not None  # it has checked every lane of the good text
    text, damaged_version = data.draw(damage(document, version))

    put_row(h, text, damaged_version)
    try:
        fresh, held = verdict(h.again()), verdict(holding)
    finally:
        put_row(h, good, version)
    assert held == fresh
    if fresh[0] == "read":
        assert held[1].lanes == parse_state(json.loads(text), damaged_version).state.lanes


def test_a_fresh_engine_holds_no_checked_lane_so_its_read_is_the_whole_parse(tmp_path):
    # The helpers above read "fresh" through a new LifecycleSchedule on a new handle: it has no kept lanes.
    h, _bravo = _rich(tmp_path)
    fresh = h.again()
    assert fresh._codec._lanes == {}
    assert verdict(fresh)[0] == "read"
    assert open_journal(h.url).load_text(SCHEDULE_AGGREGATE)[0] == row(h)[0]
