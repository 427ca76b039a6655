"""Corrupt state for an engine that already holds the good state's checked lanes: refused as a fresh one refuses it.

A long-lived engine keeps the lanes it checked (`core.schedule_codec`); a state changed behind it must be refused
CORRUPT on every read and command with the message a fresh engine's whole parse gives: lanes moved, doubled,
renamed or dropped, a ledger missing the week a call in flight debits, each of the corrupt-state suite's
defects, an integer rewritten as an equal non-integer, a reconciliation naming a segment that never started,
and a document nested too deep to decode.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import tests.core.state.test_corrupt_state as corrupt_state
from factory_schedule.core import SCHEDULE_AGGREGATE, ScheduleError
from factory_schedule.store import JournalCorruptError, open_journal
from tests.core.schedule.support import ALPHA, Harness, copy_journal, open_harness, refused, result_report
from tests.core.state.support import assert_refused_as_a_fresh_engine_refuses, busy_night, lane_of

# The corrupt-state suite's template journal and its defects (the fixture is registered here by assignment).
template = corrupt_state.template
DEFECTS = corrupt_state.DEFECTS


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


@pytest.fixture(params=["stored-whole", "stored-in-parts"])
def in_parts(request: pytest.FixtureRequest) -> bool:
    """Whether the forged state is stored in parts, as the engine's writer cuts a state (its reader then gets
    the parts, and may keep those it checked), or whole."""
    return bool(request.param == "stored-in-parts")


def _damaged_after_a_read(template: Path, tmp_path: Path, change: Callable[[dict], None], in_parts: bool) -> Harness:
    """The template's good state read by an engine (which keeps the lanes it checked), then damaged."""
    path = tmp_path / "journal.db"
    copy_journal(template, path)
    h = open_harness(path, corrupt_state.NOW)
    assert h.schedule.read() is not None
    h.tamper_state(change, in_parts=in_parts)
    return h


@pytest.mark.parametrize("defect", sorted(LANE_DEFECTS))
def test_lanes_moved_doubled_renamed_or_unbalanced_are_corrupt_for_an_engine_holding_their_checks(
        template, tmp_path, defect, in_parts):
    h = _damaged_after_a_read(template, tmp_path, LANE_DEFECTS[defect], in_parts)

    assert_refused_as_a_fresh_engine_refuses(h, h.schedule)
    corrupt_state.assert_corrupt_everywhere(h)


def test_a_ledger_without_the_week_a_kept_lanes_call_in_flight_debits_is_corrupt(tmp_path, in_parts):
    h, bravo = busy_night(tmp_path)
    assert h.schedule.read() is not None
    h.tamper_state(lambda document: document.update(ledger=[]), in_parts=in_parts)

    message = assert_refused_as_a_fresh_engine_refuses(h, h.schedule)
    assert "ledger" in message
    refused(h, "CORRUPT", lambda: h.schedule.end_call(occurrence_id=bravo, runner="r5", call=1,
                                                      report=result_report(70)))


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_every_stored_defect_is_corrupt_everywhere_with_a_fresh_engines_message_for_an_engine_holding_checks(
        template, tmp_path, defect, in_parts):
    h = _damaged_after_a_read(template, tmp_path, DEFECTS[defect], in_parts)

    assert_refused_as_a_fresh_engine_refuses(h, h.schedule)
    corrupt_state.assert_corrupt_everywhere(h)


# -- defects both a whole parse and kept lanes must catch --------------------------------------------------------------


@pytest.mark.parametrize("rewritten", [True, 1.0], ids=["true-for-1", "float-for-1"])
def test_a_stored_commission_whose_integer_is_rewritten_as_an_equal_non_integer_is_corrupt(tmp_path, rewritten,
                                                                                          in_parts):
    h, _bravo = busy_night(tmp_path)
    assert h.schedule.read() is not None
    h.tamper_state(lambda document: document["commission"].update(revision=rewritten), in_parts=in_parts)

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
def test_a_reconciliation_naming_a_segment_that_never_started_is_corrupt_everywhere(template, tmp_path, engine,
                                                                                     in_parts):
    path = tmp_path / "journal.db"
    copy_journal(template, path)
    h = open_harness(path, corrupt_state.NOW)
    if engine != "fresh":
        assert h.schedule.read() is not None
    h.tamper_state(_reconciled_segment_never_started, in_parts=in_parts)

    corrupt_state.assert_corrupt_everywhere(h)


def test_a_stored_state_nested_too_deep_to_decode_is_corrupt(tmp_path):
    h, _bravo = busy_night(tmp_path)
    assert h.schedule.read() is not None
    _version, text = h.stored_row()
    since = json.dumps(lane_of(json.loads(text), ALPHA)["since"])
    h.put_row(text.replace(f'"since":{since}', '"since":' + "[" * 100_000 + "]" * 100_000, 1))
    damaged = h.stored_row()

    with pytest.raises(ScheduleError) as raised:
        h.schedule.read()
    assert raised.value.code == "CORRUPT"
    with pytest.raises(JournalCorruptError):  # the journal's own reader refuses it in its words
        open_journal(h.url).load(SCHEDULE_AGGREGATE)
    assert h.stored_row() == damaged


