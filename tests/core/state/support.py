"""The stored schedule's tests' helpers: nights that leave a known document behind, and the assertions that every
engine reads what a fresh one parses whole from the stored text (or refuses it as a fresh one does)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule, ScheduleError
from factory_schedule.core.schedule_checks import dump_state, parse_state
from factory_schedule.store import canonical_json, open_journal
from tests.core.schedule.support import (
    ALPHA,
    BRAVO,
    FULL,
    Harness,
    basic_lane,
    confirmation,
    make_harness,
    result_report,
    weekly_lane,
)

# Two daily lanes ten minutes apart and a weekly one on Mondays: enough lanes for one to change while others stay.
THREE_LANES = [basic_lane("alpha"), basic_lane("bravo", time="02:10"), weekly_lane(weekday=1)]


def lane_of(document: dict[str, Any], lane_id: str) -> dict[str, Any]:
    """A lane's entry in a stored state document (camelCase), by its ID."""
    return next(entry for entry in document["lanes"] if entry["lane"] == lane_id)


def verdict(engine: LifecycleSchedule) -> tuple[Any, ...]:
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
    return str(fresh[2])


def assert_stored_whole(h: Harness, *engines: LifecycleSchedule) -> None:
    """The stored text is the canonical encoding of the whole state it parses to, and every engine (the
    harness's, the long-lived ones given) reads what a fresh one reads, settled records' calls included."""
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


def one_call_night(tmp_path: Path) -> tuple[Harness, str]:
    """THREE_LANES; alpha's night admitted under r1 with one call (w1, 900 tokens) performed and ended."""
    h = make_harness(tmp_path, lanes=THREE_LANES)
    h.owner_record("claude", 1)
    h.at("2026-12-07T02:00:00Z")
    occurrence_id = h.admit(ALPHA, "r1").occurrence.id
    admission = h.call(occurrence_id, runner="r1", work="w1")
    h.schedule.end_call(occurrence_id=occurrence_id, runner="r1", call=admission.call, report=result_report(900))
    return h, occurrence_id


def settled_night(tmp_path: Path) -> tuple[Harness, str]:
    """THREE_LANES; alpha's night: calls 1 and 2 under r1 (900 + 400), a deferral, a resumption under r2 with
    call 3 (300), a reconciliation, a resumption under r3, then the settlement, so its record is kept without
    its calls. bravo runs a call (50) and stays open. The harness's engine holds the final text."""
    h = make_harness(tmp_path, lanes=THREE_LANES)
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


def busy_night(tmp_path: Path) -> tuple[Harness, str]:
    """THREE_LANES at 02:30 on 9 December, every lane holding something: alpha a settled night kept without its
    calls (calls, a deferral, a reconciliation, three segments) and an open one; bravo an open night with a call
    in flight (its ID is returned); the weekly lane a settled night kept without its call."""
    h = make_harness(tmp_path, lanes=THREE_LANES)
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
