"""Settled records kept without their calls (`elided`): what a settlement answers and keeps, and late retries.

A settlement answers with the whole record and keeps it in `recent` with only its calls' count and debits;
the calls stay in the settlement event. A late retry of any transition the night recorded replays, never
dispatched again, whether the record is kept whole (an earlier release), without its calls, or pruned, and
whether or not its lane is still commissioned; `status`, `record` and the dashboard show its calls.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rich.console import Console

from factory_schedule.core import LifecycleSchedule
from tests.core.schedule.support import (
    ALPHA,
    CALL_BOUND,
    SIGN_IN,
    Harness,
    basic_id,
    basic_lane,
    commission,
    confirmation,
    refused,
    result_report,
    weekly_lane,
    writes_nothing,
)
from tests.core.state.support import assert_stored_whole, lane_of, one_call_night, settled_night


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
    h, occurrence_id = settled_night(tmp_path)
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


def test_a_settlement_answers_with_the_whole_record_and_keeps_it_without_its_calls(tmp_path):
    h, occurrence_id = one_call_night(tmp_path)

    result = h.schedule.settle(occurrence_id=occurrence_id, settled_by="r1", status="completed", reason="done")

    assert not result.replayed and [call.work for call in result.occurrence.calls] == ["w1"]
    assert result.occurrence.without_calls().doc() == h.stored(occurrence_id)
    assert_stored_whole(h)


def test_a_settlement_at_the_segment_limit_answers_with_the_whole_record_and_keeps_it_without_its_calls(tmp_path):
    h, occurrence_id = one_call_night(tmp_path)
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
    h, occurrence_id = settled_night(tmp_path)
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
    h, occurrence_id = settled_night(tmp_path)
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
    h, occurrence_id = settled_night(tmp_path)
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

    h, occurrence_id = settled_night(tmp_path)
    status = h.schedule.status(occurrence_id)
    assert (status.state, status.status) == ("settled", "completed")
    assert [call.work for call in h.again().record(occurrence_id).calls] == ["w1", "w2", "w3"]

    def rendered(complete: bool) -> tuple[str, tuple[str, ...]]:
        reading = take_reading(h.schedule.journal, h.schedule, h.clock.now(), None, host="test-host",
                               complete=complete)
        assert reading.problem is None, reading.problem
        assert reading.view is not None
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
