"""The lifecycle of a lane's occurrences (seed invariants 1, 3-5, 10, 11, 13, 14 without provider calls).

Each test is named after the rule it holds. The journal is a real SQLite file in tmp_path; time is a
ManualClock. The commission's zone is Europe/London and the dates are in December 2026 (GMT), so a local
wall time reads the same in UTC, except in the DST tests, which cross London's clock changes on purpose.
"""

from __future__ import annotations

import pendulum
import pytest

from factory_schedule.core import LifecycleSchedule, ManualClock, ScheduleError
from factory_schedule.store import open_journal
from tests.core.schedule.support import (
    TheLockMovesTheClock,
    basic_id,
    basic_lane,
    coalesced_of,
    commission,
    confirmation,
    make_harness,
    refused,
    segment_count,
    utc,
    weekly_id,
    weekly_lane,
    writes_nothing,
)

LANE = "alpha/basic"
NIGHT1 = basic_id("alpha", "2026-12-07")


# -- before anything is commissioned -------------------------------------------------------------------------------


def test_read_before_the_first_commission_is_none_and_a_tick_is_not_commissioned(tmp_path):
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    schedule = LifecycleSchedule(open_journal(url), ManualClock("2026-12-07T02:00:00Z"))
    assert schedule.read() is None
    with pytest.raises(ScheduleError) as caught:
        schedule.start(lane=LANE, runner="r1")
    assert caught.value.code == "NOT_COMMISSIONED"
    assert open_journal(url).head("discovery/schedule") == 0


def test_a_lane_the_commission_does_not_name_is_not_a_lane(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    refused(h, "NOT_A_LANE", lambda: h.schedule.start(lane="beta/basic", runner="r1"))


# -- invariant 1 and 4: one occurrence per night, exactly once -----------------------------------------------------


def test_a_basic_occurrence_waits_for_its_local_slot_and_is_admitted_there_under_its_admit_command(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T01:59:00Z")
    with writes_nothing(h):
        tick = h.schedule.start(lane=LANE, runner="r1")
    assert tick.kind == "waiting"
    assert tick.until == utc("2026-12-07T02:00:00Z")

    h.at("2026-12-07T02:00:00Z")
    tick = h.schedule.start(lane=LANE, runner="r1")
    assert tick.kind == "admitted"
    assert tick.replayed is False
    assert tick.occurrence.id == NIGHT1
    assert tick.command_id == f"{NIGHT1}/admit"
    assert tick.occurrence.state == "running"
    assert segment_count(tick.occurrence) == 1


def test_a_restart_gives_exactly_one_occurrence(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    first = h.admit(LANE, "r1")

    # The same runner restarts (a new process, a new journal handle) and asks again: its receipt replays.
    h.at("2026-12-07T02:07:00Z")
    with writes_nothing(h):
        again = h.again().start(lane=LANE, runner="r1")
    assert again.kind == "admitted"
    assert again.replayed is True
    assert again.command_id == first.command_id
    assert again.occurrence.id == NIGHT1

    # Another runner finds it running and admits nothing.
    with writes_nothing(h):
        other = h.again().start(lane=LANE, runner="r2")
    assert other.kind == "running"
    assert [cid for cid in h.command_ids() if cid.endswith("/admit")] == [f"{NIGHT1}/admit"]
    assert h.lane_state(LANE)["open"]["id"] == NIGHT1


def test_a_running_segment_is_never_taken_over_by_time_and_resumes_as_itself_only_after_reconcile(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")

    # The next night's slot comes; r1 never ended its segment. Nobody else may take the lane.
    h.at("2026-12-08T02:00:00Z")
    with writes_nothing(h):
        tick = h.schedule.start(lane=LANE, runner="r2")
    assert tick.kind == "running"
    assert h.schedule.status(basic_id("alpha", "2026-12-08")).state != "running"

    result = h.schedule.reconcile(occurrence_id=NIGHT1, confirmation=confirmation("r1"))
    assert result.command_id == f"{NIGHT1}/reconcile/1"
    assert h.schedule.status(NIGHT1).state == "interrupted"

    h.at("2026-12-08T02:01:00Z")
    tick = h.schedule.start(lane=LANE, runner="r2")
    assert tick.kind == "resumed"
    assert tick.occurrence.id == NIGHT1, "the same occurrence resumes, not the next night's"
    assert tick.command_id == f"{NIGHT1}/resume/2"
    assert segment_count(tick.occurrence) == 2


def test_reconcile_must_name_the_running_segments_runner(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:10:00Z")
    refused(h, "NOT_OWNER", lambda: h.schedule.reconcile(occurrence_id=NIGHT1, confirmation=confirmation("r2")))


def test_a_running_segment_answers_only_to_its_runner(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:10:00Z")

    refused(h, "NOT_OWNER", lambda: h.schedule.defer(occurrence_id=NIGHT1, runner="r2", reason="volume-unmounted"))
    refused(
        h,
        "NOT_OWNER",
        lambda: h.schedule.settle(occurrence_id=NIGHT1, settled_by="r2", status="completed", reason="done"),
    )

    settled = h.schedule.settle(occurrence_id=NIGHT1, settled_by="r1", status="completed", reason="done")
    assert settled.command_id == f"{NIGHT1}/settle"
    assert h.schedule.status(NIGHT1).state == "settled"
    assert h.schedule.status(NIGHT1).status == "completed"


def test_a_deferred_occurrence_can_be_settled_by_any_named_caller(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:10:00Z")
    h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="volume-unmounted")
    h.at("2026-12-07T09:00:00Z")
    h.schedule.settle(occurrence_id=NIGHT1, settled_by="owner", status="deferred", reason="volume gone for good")
    assert h.schedule.status(NIGHT1).status == "deferred"


def test_a_settled_occurrence_is_settled_once(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:10:00Z")
    h.schedule.settle(occurrence_id=NIGHT1, settled_by="r1", status="completed", reason="done")
    refused(h, "SETTLED", lambda: h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="logged-out"))
    h.at("2026-12-07T03:00:00Z")
    with writes_nothing(h):
        tick = h.schedule.start(lane=LANE, runner="r2")
    assert tick.kind == "waiting"
    assert tick.until == utc("2026-12-08T02:00:00Z"), "a night admits nothing twice"


def test_a_late_start_is_admitted_until_the_window_closes_and_not_after(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T05:00:00Z")
    with writes_nothing(h):
        tick = h.schedule.start(lane=LANE, runner="r1")
    assert tick.kind == "waiting"
    assert tick.until == utc("2026-12-08T02:00:00Z")
    assert h.schedule.status(NIGHT1).state == "missed"

    h.at("2026-12-08T04:59:00Z")
    tick = h.schedule.start(lane=LANE, runner="r1")
    assert tick.kind == "admitted"
    assert tick.occurrence.id == basic_id("alpha", "2026-12-08")


def test_a_late_starts_deadline_is_capped_at_the_windows_close(tmp_path):
    h = make_harness(tmp_path)  # 02:00-05:00, deadline 45 minutes
    h.at("2026-12-07T04:30:00Z")
    h.admit(LANE, "r1")
    segment = h.stored(NIGHT1)["segments"][0]
    assert segment["deadline"] == "2026-12-07T05:00:00.000Z"
    assert segment["night"] == "2026-12-07"


def test_an_on_time_starts_deadline_is_the_rhythms(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:05:00Z")
    h.admit(LANE, "r1")
    assert h.stored(NIGHT1)["segments"][0]["deadline"] == "2026-12-07T02:50:00.000Z"


def test_the_rhythms_deadline_is_per_night_and_reconciling_past_it_waits_for_the_next_night(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")

    # r1 dies; reconciled within tonight's deadline, the occurrence resumes tonight, keeping tonight's deadline.
    h.at("2026-12-07T02:10:00Z")
    h.schedule.reconcile(occurrence_id=NIGHT1, confirmation=confirmation("r1"))
    h.at("2026-12-07T02:20:00Z")
    tick = h.schedule.start(lane=LANE, runner="r2")
    assert tick.kind == "resumed"
    assert h.stored(NIGHT1)["segments"][1]["deadline"] == "2026-12-07T02:45:00.000Z"

    # r2 dies too; reconciled after tonight's deadline, nothing resumes tonight.
    h.at("2026-12-07T02:50:00Z")
    h.schedule.reconcile(occurrence_id=NIGHT1, confirmation=confirmation("r2"))
    h.at("2026-12-07T02:55:00Z")
    with writes_nothing(h):
        tick = h.schedule.start(lane=LANE, runner="r3")
    assert tick.kind == "waiting"
    assert tick.until == utc("2026-12-08T02:00:00Z")

    h.at("2026-12-08T02:00:00Z")
    tick = h.schedule.start(lane=LANE, runner="r3")
    assert tick.kind == "resumed"
    assert tick.occurrence.id == NIGHT1
    assert h.stored(NIGHT1)["segments"][2]["deadline"] == "2026-12-08T02:45:00.000Z"
    assert h.stored(NIGHT1)["segments"][2]["night"] == "2026-12-08"


def test_a_deferral_for_the_volume_or_a_log_out_waits_for_the_next_slot(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:05:00Z")
    h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="logged-out")
    h.at("2026-12-07T02:06:00Z")
    with writes_nothing(h):
        tick = h.schedule.start(lane=LANE, runner="r1")
    assert tick.kind == "waiting"
    assert tick.until == utc("2026-12-08T02:00:00Z")
    h.at("2026-12-08T02:00:00Z")
    assert h.schedule.start(lane=LANE, runner="r1").kind == "resumed"


# -- invariant 5: coalescing ---------------------------------------------------------------------------------------


def test_missed_occurrences_coalesce_into_the_next_one_admitted(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-09T12:00:00Z")
    missed = h.schedule.status(basic_id("alpha", "2026-12-08"))
    assert missed.state == "missed"
    assert missed.status is None

    h.at("2026-12-10T02:00:00Z")
    tick = h.admit(LANE, "r1")
    tonight = basic_id("alpha", "2026-12-10")
    assert tick.occurrence.id == tonight
    assert coalesced_of(h.stored(tonight)) == (3, basic_id("alpha", "2026-12-07"), basic_id("alpha", "2026-12-09"))
    for date in ("2026-12-07", "2026-12-08", "2026-12-09"):
        view = h.schedule.status(basic_id("alpha", date))
        assert (view.state, view.status, view.coalesced_into) == ("coalesced", "unavailable", tonight)

    # No backlog is replayed: after tonight settles, the next thing due is tomorrow's slot.
    h.at("2026-12-10T02:30:00Z")
    h.schedule.settle(occurrence_id=tonight, settled_by="r1", status="completed", reason="done")
    with writes_nothing(h):
        tick = h.schedule.start(lane=LANE, runner="r1")
    assert tick.kind == "waiting"
    assert tick.until == utc("2026-12-11T02:00:00Z")


def test_nights_an_open_occurrence_held_the_lane_coalesce_into_the_next_one_admitted(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:05:00Z")
    h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="volume-unmounted")
    h.at("2026-12-08T02:00:00Z")
    assert h.schedule.start(lane=LANE, runner="r1").occurrence.id == NIGHT1
    h.at("2026-12-09T12:00:00Z")
    h.schedule.settle(occurrence_id=NIGHT1, settled_by="r1", status="partial", reason="half of it")

    h.at("2026-12-10T02:00:00Z")
    tick = h.admit(LANE, "r2")
    tonight = basic_id("alpha", "2026-12-10")
    assert tick.occurrence.id == tonight
    assert coalesced_of(h.stored(tonight)) == (2, basic_id("alpha", "2026-12-08"), basic_id("alpha", "2026-12-09"))
    assert h.schedule.status(basic_id("alpha", "2026-12-08")).coalesced_into == tonight
    assert h.schedule.status(NIGHT1).state == "settled"


def test_a_revision_moving_a_full_night_later_in_its_iso_week_leaves_nothing_due_that_week(tmp_path):
    monday = weekly_lane(weekday=1)  # alpha/full on Mondays 02:40-05:00
    h = make_harness(tmp_path, lanes=[monday])
    week50 = weekly_id("alpha", "full", "2026-W50")
    h.at("2026-12-07T02:40:00Z")
    assert h.admit("alpha/full", "r1").occurrence.id == week50
    h.at("2026-12-07T03:00:00Z")
    h.schedule.settle(occurrence_id=week50, settled_by="r1", status="completed", reason="done")

    h.at("2026-12-07T12:00:00Z")
    h.schedule.record_commission(commission([weekly_lane(weekday=4)], revision=2))

    h.at("2026-12-10T02:40:00Z")  # Thursday of the same ISO week
    with writes_nothing(h):
        tick = h.schedule.start(lane="alpha/full", runner="r1")
    assert tick.kind == "waiting"
    assert tick.until == utc("2026-12-17T02:40:00Z")
    assert h.schedule.status(week50).state == "settled"
    plan = {entry.lane: entry for entry in h.schedule.plan()}
    # The plan names the next thing to do for the lane and when: admit next week's occurrence at its slot.
    assert (plan["alpha/full"].action, plan["alpha/full"].at) == ("admit", utc("2026-12-17T02:40:00Z"))
    assert plan["alpha/full"].occurrence_id == weekly_id("alpha", "full", "2026-W51")

    h.at("2026-12-17T02:40:00Z")
    tick = h.admit("alpha/full", "r1")
    assert tick.occurrence.id == weekly_id("alpha", "full", "2026-W51")
    assert coalesced_of(h.stored(tick.occurrence.id)) is None, "the week that ran is not counted in a later range"


def test_a_weekly_occurrence_that_was_coalesced_is_never_admitted_later(tmp_path):
    h = make_harness(tmp_path, lanes=[weekly_lane(weekday=4)])
    week50, week51 = weekly_id("alpha", "full", "2026-W50"), weekly_id("alpha", "full", "2026-W51")

    # Week 50's Thursday passes with no runner; week 51's admission coalesces it.
    h.at("2026-12-17T02:40:00Z")
    assert h.admit("alpha/full", "r1").occurrence.id == week51
    assert coalesced_of(h.stored(week51)) == (1, week50, week50)
    h.at("2026-12-17T03:00:00Z")
    h.schedule.settle(occurrence_id=week51, settled_by="r1", status="completed", reason="done")

    # A revision puts the night on Saturday; no later tick of any week admits week 50 or week 51 again.
    h.at("2026-12-17T12:00:00Z")
    h.schedule.record_commission(commission([weekly_lane(weekday=6)], revision=2))
    h.at("2026-12-19T02:40:00Z")
    with writes_nothing(h):
        assert h.schedule.start(lane="alpha/full", runner="r1").kind == "waiting"
    view = h.schedule.status(week50)
    assert (view.state, view.status, view.coalesced_into) == ("coalesced", "unavailable", week51)

    # Week 52 passes unattended; week 53's range holds week 52 alone.
    h.at("2027-01-02T02:40:00Z")  # Saturday of 2026-W53
    tick = h.admit("alpha/full", "r1")
    assert tick.occurrence.id == weekly_id("alpha", "full", "2026-W53")
    assert coalesced_of(h.stored(tick.occurrence.id)) == (
        1,
        weekly_id("alpha", "full", "2026-W52"),
        weekly_id("alpha", "full", "2026-W52"),
    )
    admitted = [cid for cid in h.command_ids() if cid.endswith("/admit")]
    assert admitted == [f"{week51}/admit", f"{weekly_id('alpha', 'full', '2026-W53')}/admit"]


def test_a_product_added_by_a_later_revision_has_nothing_missed_before_it(tmp_path):
    h = make_harness(tmp_path)  # alpha only, effective 2026-12-07
    h.at("2026-12-10T12:00:00Z")
    h.schedule.record_commission(commission([basic_lane("alpha"), basic_lane("beta", time="02:20")], revision=2))

    for date in ("2026-12-07", "2026-12-09", "2026-12-10"):
        assert h.schedule.status(basic_id("beta", date)).state == "not-commissioned"

    h.at("2026-12-11T02:20:00Z")
    tick = h.admit("beta/basic", "r1")
    assert tick.occurrence.id == basic_id("beta", "2026-12-11")
    assert coalesced_of(h.stored(tick.occurrence.id)) is None
    # alpha, commissioned from the start, did miss its nights.
    tick = h.admit("alpha/basic", "r2")
    assert coalesced_of(h.stored(tick.occurrence.id)) == (
        4,
        basic_id("alpha", "2026-12-07"),
        basic_id("alpha", "2026-12-10"),
    )


# -- invariant 10: journal-backed transitions ----------------------------------------------------------------------


def test_a_deferral_is_for_one_segment_and_its_retries_replay_also_after_the_occurrence_resumed(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:10:00Z")
    deferral = h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="volume-unmounted")
    assert deferral.command_id == f"{NIGHT1}/defer/1"
    assert deferral.replayed is False

    h.at("2026-12-07T02:11:00Z")
    with writes_nothing(h):
        retry = h.again().defer(occurrence_id=NIGHT1, runner="r1", reason="volume-unmounted")
    assert retry.replayed is True
    assert (retry.command_id, retry.version) == (deferral.command_id, deferral.version)

    h.at("2026-12-08T02:00:00Z")
    assert h.schedule.start(lane=LANE, runner="r2").kind == "resumed"

    # The first segment's deferral, retried after the occurrence resumed, replays: it does not defer segment 2.
    with writes_nothing(h):
        late = h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="volume-unmounted")
    assert late.replayed is True
    assert late.command_id == f"{NIGHT1}/defer/1"
    assert late.still_running is None, "r1 runs nothing now: a plain retry"
    assert h.schedule.status(NIGHT1).state == "running"

    # Anything else under that command is a conflict; a segment that is neither running nor deferred is stale.
    refused(
        h, "CONFLICT",
        lambda: h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="logged-out", segment=1),
    )
    refused(
        h, "CONFLICT",
        lambda: h.schedule.defer(occurrence_id=NIGHT1, runner="r2", reason="volume-unmounted", segment=1),
    )
    refused(
        h, "STALE",
        lambda: h.schedule.defer(occurrence_id=NIGHT1, runner="r2", reason="volume-unmounted", segment=3),
    )

    h.at("2026-12-08T02:05:00Z")
    second = h.schedule.defer(occurrence_id=NIGHT1, runner="r2", reason="volume-unmounted")
    assert second.command_id == f"{NIGHT1}/defer/2"
    assert second.replayed is False


def test_a_reused_runner_token_replays_its_earlier_deferral_and_names_the_segment_to_defer_a_later_one(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:10:00Z")
    h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="logged-out")
    h.at("2026-12-08T02:00:00Z")
    assert h.schedule.start(lane=LANE, runner="r1").kind == "resumed"

    with writes_nothing(h):
        retry = h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="logged-out")
    assert (retry.replayed, retry.command_id) == (True, f"{NIGHT1}/defer/1")
    assert retry.still_running == 2, "the answer says the token's segment 2 was not ended"

    second = h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="logged-out", segment=2)
    assert (second.replayed, second.command_id) == (False, f"{NIGHT1}/defer/2")
    assert h.schedule.status(NIGHT1).state == "deferred"


def test_a_token_reused_over_two_nights_gets_its_first_nights_deferral_back_marked_as_not_ending_tonights(tmp_path):
    """The documented runner with one fixed token, two nights running: the second night's deferral is the same
    request as the first night's, so it replays that record and writes nothing, and the answer says that the
    segment the token runs tonight is still running, so the runner cannot take it for its own deferral."""
    h = make_harness(tmp_path)
    token = "run-7f3a"
    h.at("2026-12-07T02:00:00Z")
    assert h.schedule.start(lane=LANE, runner=token).kind == "admitted"
    h.at("2026-12-07T02:10:00Z")
    first = h.schedule.defer(occurrence_id=NIGHT1, runner=token, reason="volume-unmounted")
    assert (first.replayed, first.still_running) == (False, None)

    h.at("2026-12-08T02:00:00Z")
    assert h.schedule.start(lane=LANE, runner=token).kind == "resumed"
    h.at("2026-12-08T02:10:00Z")
    with writes_nothing(h):
        second = h.again().defer(occurrence_id=NIGHT1, runner=token, reason="volume-unmounted")
    assert (second.replayed, second.command_id) == (True, f"{NIGHT1}/defer/1")
    assert second.still_running == 2
    assert second.occurrence is not None and second.occurrence.state == "running"
    assert h.schedule.status(NIGHT1).state == "running"

    # A fresh token per segment, as `tick` and the documented examples use, never meets this.
    h.at("2026-12-08T02:15:00Z")
    assert h.schedule.defer(occurrence_id=NIGHT1, runner=token, reason="volume-unmounted", segment=2).replayed is False
    h.at("2026-12-09T02:00:00Z")
    assert h.schedule.start(lane=LANE, runner="run-9c21").kind == "resumed"
    h.at("2026-12-09T02:10:00Z")
    third = h.schedule.defer(occurrence_id=NIGHT1, runner="run-9c21", reason="volume-unmounted")
    assert (third.replayed, third.command_id, third.still_running) == (False, f"{NIGHT1}/defer/3", None)


def test_identical_retries_replay_and_a_different_payload_under_a_recorded_id_is_conflict(tmp_path):
    h = make_harness(tmp_path)
    first = commission()
    with writes_nothing(h):
        again = h.schedule.record_commission(first)
    assert again.replayed is True
    assert again.command_id == "discovery/commission/1"
    refused(h, "CONFLICT", lambda: h.schedule.record_commission(commission(weekly_tokens=1_000_000)))
    refused(h, "REVISION", lambda: h.schedule.record_commission(commission(revision=3)))

    record = h.owner_record(sequence=1)
    assert record.command_id == "discovery/account/claude/1"
    with writes_nothing(h):
        assert h.owner_record(sequence=1).replayed is True
    refused(h, "CONFLICT", lambda: h.owner_record(sequence=1, sign_in="someone-else@example.com"))
    refused(h, "REVISION", lambda: h.owner_record(sequence=3))

    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:10:00Z")
    settled = h.schedule.settle(occurrence_id=NIGHT1, settled_by="r1", status="completed", reason="done")
    h.at("2026-12-07T02:20:00Z")
    with writes_nothing(h):
        retry = h.schedule.settle(occurrence_id=NIGHT1, settled_by="r1", status="completed", reason="done")
    assert (retry.replayed, retry.version) == (True, settled.version)
    refused(
        h, "CONFLICT",
        lambda: h.schedule.settle(occurrence_id=NIGHT1, settled_by="r1", status="partial", reason="done"),
    )


def test_a_retry_of_an_earlier_commission_revision_replays_after_a_later_one(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T12:00:00Z")
    h.schedule.record_commission(commission(revision=2, weekly_tokens=30_000_000))
    h.at("2026-12-08T12:00:00Z")
    with writes_nothing(h):
        assert h.schedule.record_commission(commission()).replayed is True


def test_an_unknown_occurrence_is_refused(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    refused(h, "UNKNOWN_OCCURRENCE", lambda: h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="logged-out"))
    refused(h, "INVALID", lambda: h.schedule.status("discovery/alpha/basic/not-a-date"))


# -- invariant 11: the segment limit -------------------------------------------------------------------------------


def test_the_tick_that_would_start_a_ninth_segment_settles_the_occurrence_segment_limit(tmp_path):
    h = make_harness(tmp_path)
    night = pendulum.date(2026, 12, 7)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    for segment in range(1, 9):
        h.at(f"{night.to_date_string()}T02:10:00Z")
        h.schedule.defer(occurrence_id=NIGHT1, runner=f"r{segment}", reason="volume-unmounted")
        night = night.add(days=1)
        h.at(f"{night.to_date_string()}T02:00:00Z")
        tick = h.schedule.start(lane=LANE, runner=f"r{segment + 1}")
        if segment < 8:
            assert (tick.kind, tick.occurrence.id, segment_count(tick.occurrence)) == (
                "resumed", NIGHT1, segment + 1
            )
    assert night.to_date_string() == "2026-12-15"
    assert tick.kind == "settled"
    assert tick.occurrence.id == NIGHT1
    recent = h.lane_state(LANE)["recent"]
    settled = next(occurrence for occurrence in recent if occurrence["id"] == NIGHT1)
    assert len(settled["segments"]) == 8
    assert settled["settlement"]["reason"] == "segment-limit"

    # The next tick admits tonight's occurrence; the nights the deferred one held coalesce into it.
    tick = h.schedule.start(lane=LANE, runner="r10")
    assert tick.kind == "admitted"
    assert tick.occurrence.id == basic_id("alpha", "2026-12-15")
    assert coalesced_of(h.stored(tick.occurrence.id)) == (
        7, basic_id("alpha", "2026-12-08"), basic_id("alpha", "2026-12-14")
    )


# -- invariant 13: the clock never runs backwards in the record ----------------------------------------------------


def test_a_clock_running_backwards_is_invalid_writes_nothing_and_succeeds_once_past(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:10:00Z")
    h.admit(LANE, "r1")

    h.at("2026-12-07T02:05:00Z")
    refused(h, "INVALID", lambda: h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="volume-unmounted"))
    refused(
        h, "INVALID",
        lambda: h.schedule.settle(occurrence_id=NIGHT1, settled_by="r1", status="completed", reason="done"),
    )
    refused(h, "INVALID", lambda: h.schedule.reconcile(occurrence_id=NIGHT1, confirmation=confirmation("r1")))

    h.at("2026-12-07T02:11:00Z")
    deferral = h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="volume-unmounted")
    assert deferral.replayed is False
    assert h.schedule.status(NIGHT1).state == "deferred"


def test_a_decision_reads_the_clock_inside_the_journal_transaction(tmp_path):
    h = make_harness(tmp_path)
    # 04:59 (inside the window) until the write lock is taken, 05:01 (closed) once it is held: nothing is admitted.
    clock = ManualClock("2026-12-07T04:59:00Z")
    schedule = LifecycleSchedule(TheLockMovesTheClock(open_journal(h.url), clock, "2026-12-07T05:01:00Z"), clock)
    with writes_nothing(h):
        tick = schedule.start(lane=LANE, runner="r1")
    assert tick.kind == "waiting"


# -- invariant 14: pruning -----------------------------------------------------------------------------------------


def test_pruning_keeps_the_open_occurrence_and_the_two_latest_settled_per_lane(tmp_path):
    h = make_harness(tmp_path)
    settles = {}
    for day in range(7, 12):
        date = f"2026-12-{day:02d}"
        h.at(f"{date}T02:00:00Z")
        h.admit(LANE, "r1")
        h.at(f"{date}T02:10:00Z")
        settles[date] = h.schedule.settle(
            occurrence_id=basic_id("alpha", date), settled_by="r1", status="completed", reason="done"
        )
    h.at("2026-12-12T02:00:00Z")
    h.admit(LANE, "r1")

    lane = h.lane_state(LANE)
    assert lane["open"]["id"] == basic_id("alpha", "2026-12-12")
    assert [o["id"] for o in lane["recent"]] in (
        [basic_id("alpha", "2026-12-10"), basic_id("alpha", "2026-12-11")],
        [basic_id("alpha", "2026-12-11"), basic_id("alpha", "2026-12-10")],
    )
    assert h.schedule.status(basic_id("alpha", "2026-12-07")).state == "pruned"
    assert h.schedule.status(basic_id("alpha", "2026-12-10")).state == "settled"
    view = h.schedule.read()
    assert {o.id for o in view.occurrences} >= {basic_id("alpha", "2026-12-12"), basic_id("alpha", "2026-12-11")}
    assert basic_id("alpha", "2026-12-07") not in {o.id for o in view.occurrences}

    # A retry of a pruned occurrence's transition replays from history; anything new on it is SETTLED.
    h.at("2026-12-12T02:05:00Z")
    with writes_nothing(h):
        retry = h.schedule.settle(
            occurrence_id=basic_id("alpha", "2026-12-07"), settled_by="r1", status="completed", reason="done"
        )
    assert retry.replayed is True
    assert retry.version == settles["2026-12-07"].version
    refused(
        h, "SETTLED",
        lambda: h.schedule.defer(occurrence_id=basic_id("alpha", "2026-12-07"), runner="r1", reason="logged-out"),
    )


# -- invariant 3: DST ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("effective", "slots"),
    [
        pytest.param(
            "2026-10-22",
            {
                "2026-10-22": "2026-10-22T01:00:00Z",  # BST
                "2026-10-23": "2026-10-23T01:00:00Z",
                "2026-10-24": "2026-10-24T01:00:00Z",
                "2026-10-25": "2026-10-25T02:00:00Z",  # the 25-hour day: 02:00 is after the change, GMT
                "2026-10-26": "2026-10-26T02:00:00Z",
                "2026-10-27": "2026-10-27T02:00:00Z",
            },
            id="autumn",
        ),
        pytest.param(
            "2026-03-26",
            {
                "2026-03-26": "2026-03-26T02:00:00Z",  # GMT
                "2026-03-27": "2026-03-27T02:00:00Z",
                "2026-03-28": "2026-03-28T02:00:00Z",
                "2026-03-29": "2026-03-29T01:00:00Z",  # the 23-hour day: 02:00 BST is the change's first instant
                "2026-03-30": "2026-03-30T01:00:00Z",
                "2026-03-31": "2026-03-31T01:00:00Z",
            },
            id="spring",
        ),
    ],
)
def test_one_occurrence_per_local_night_at_its_local_slot_across_londons_clock_changes(tmp_path, effective, slots):
    recorded = pendulum.parse(effective).subtract(hours=12).to_iso8601_string()  # type: ignore[union-attr]
    h = make_harness(tmp_path, effective_from=effective, start=recorded)
    for date, slot in slots.items():
        slot_at = utc(slot)
        # The instant an hour either side of the true offset is not this night's slot.
        h.at(slot_at.subtract(hours=1))
        with writes_nothing(h):
            early = h.schedule.start(lane=LANE, runner="r1")
        assert early.kind == "waiting", date
        assert early.until == slot_at, date
        h.at(slot_at)
        tick = h.admit(LANE, "r1")
        assert tick.occurrence.id == basic_id("alpha", date)
        assert coalesced_of(h.stored(tick.occurrence.id)) is None
        h.at(slot_at.add(minutes=10))
        h.schedule.settle(occurrence_id=tick.occurrence.id, settled_by="r1", status="completed", reason="done")
        h.at(slot_at.add(hours=1, minutes=30))
        with writes_nothing(h):
            assert h.schedule.start(lane=LANE, runner="r1").kind == "waiting", f"{date} admitted twice"
    admitted = [cid for cid in h.command_ids() if cid.endswith("/admit")]
    assert admitted == [f"{basic_id('alpha', date)}/admit" for date in slots]


def test_a_wall_time_in_the_spring_gap_moves_forward_and_a_repeated_one_admits_once(tmp_path):
    gap_lane = basic_lane(time="01:30", closes="05:00")
    h = make_harness(tmp_path, lanes=[gap_lane], effective_from="2026-03-28", start="2026-03-27T12:00:00Z")
    h.at("2026-03-29T01:29:00Z")  # 01:30 does not exist on 29 March: it becomes 02:30 BST, 01:30 UTC
    with writes_nothing(h):
        tick = h.schedule.start(lane=LANE, runner="r1")
    assert tick.kind == "waiting"
    assert tick.until == utc("2026-03-29T01:30:00Z")

    h2 = make_harness(tmp_path / "autumn", lanes=[gap_lane], effective_from="2026-10-25", start="2026-10-24T12:00:00Z")
    # 01:30 happens twice on 25 October: the earlier instant (BST, 00:30 UTC) is the slot.
    h2.at("2026-10-25T00:30:00Z")
    tick = h2.admit(LANE, "r1")
    assert tick.occurrence.id == basic_id("alpha", "2026-10-25")
    h2.at("2026-10-25T00:40:00Z")
    h2.schedule.settle(occurrence_id=tick.occurrence.id, settled_by="r1", status="completed", reason="done")
    h2.at("2026-10-25T01:30:00Z")  # the second 01:30
    with writes_nothing(h2):
        assert h2.schedule.start(lane=LANE, runner="r1").kind == "waiting"


# -- the views -----------------------------------------------------------------------------------------------------


def test_status_and_plan_name_an_occurrence_through_its_life(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T01:00:00Z")
    assert h.schedule.status(NIGHT1).state == "scheduled"
    plan = {entry.lane: entry for entry in h.schedule.plan()}
    assert (plan[LANE].action, plan[LANE].at, plan[LANE].occurrence_id) == (
        "admit", utc("2026-12-07T02:00:00Z"), NIGHT1
    )

    h.at("2026-12-07T02:01:00Z")
    assert h.schedule.status(NIGHT1).state == "due"
    plan = {entry.lane: entry for entry in h.schedule.plan()}
    assert plan[LANE].action == "admit"
    assert plan[LANE].occurrence_id == NIGHT1

    h.admit(LANE, "r1")
    assert h.schedule.status(NIGHT1).state == "running"
    assert {entry.lane: entry for entry in h.schedule.plan()}[LANE].action == "running"

    h.at("2026-12-07T02:05:00Z")
    h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="volume-unmounted")
    assert h.schedule.status(NIGHT1).state == "deferred"
    plan = {entry.lane: entry for entry in h.schedule.plan()}
    assert (plan[LANE].action, plan[LANE].at) == ("resume", utc("2026-12-08T02:00:00Z"))

    view = h.schedule.read()
    assert view.version == h.head()
    assert NIGHT1 in {occurrence.id for occurrence in view.occurrences}


# -- zones and weeks the rules name ----------------------------------------------------------------------------------


def test_dst_in_berlin_a_slot_in_the_gap_moves_forward_and_the_repeated_hour_admits_once(tmp_path):
    lane = basic_lane(time="02:30", closes="05:00")
    spring = make_harness(tmp_path / "spring", lanes=[lane], zone="Europe/Berlin", effective_from="2026-03-29",
                          start="2026-03-28T12:00:00Z")
    spring.at("2026-03-29T01:29:00Z")  # 02:30 does not exist on 29 March in Berlin: it becomes 03:30 CEST
    with writes_nothing(spring):
        tick = spring.schedule.start(lane=LANE, runner="r1")
    assert (tick.kind, tick.until) == ("waiting", utc("2026-03-29T01:30:00Z"))
    spring.at("2026-03-29T01:30:00Z")
    assert spring.admit(LANE, "r1").occurrence.id == basic_id("alpha", "2026-03-29")

    autumn = make_harness(tmp_path / "autumn", lanes=[lane], zone="Europe/Berlin", effective_from="2026-10-25",
                          start="2026-10-24T12:00:00Z")
    autumn.at("2026-10-25T00:30:00Z")  # the first 02:30 (CEST)
    assert autumn.admit(LANE, "r1").occurrence.id == basic_id("alpha", "2026-10-25")
    autumn.at("2026-10-25T00:40:00Z")
    autumn.schedule.settle(occurrence_id=basic_id("alpha", "2026-10-25"), settled_by="r1", status="completed",
                           reason="done")
    autumn.at("2026-10-25T01:30:00Z")  # the second 02:30 (CET)
    with writes_nothing(autumn):
        assert autumn.schedule.start(lane=LANE, runner="r2").kind == "waiting"


def test_day_boundary_in_tokyo_a_basic_occurrence_takes_its_local_date(tmp_path):
    h = make_harness(tmp_path, zone="Asia/Tokyo", start="2026-12-06T00:00:00Z")
    h.at("2026-12-06T17:00:00Z")  # 02:00 on 7 December in Tokyo
    assert h.admit(LANE, "r1").occurrence.id == basic_id("alpha", "2026-12-07")


def test_week_boundary_the_53_week_year_names_its_weeks(tmp_path):
    h = make_harness(tmp_path, lanes=[weekly_lane(weekday=4)])
    h.at("2026-12-31T02:40:00Z")  # Thursday 31 December 2026 is in 2026-W53
    tick = h.admit("alpha/full", "r1")
    assert tick.occurrence.id == weekly_id("alpha", "full", "2026-W53")
    h.at("2026-12-31T03:00:00Z")
    h.schedule.settle(occurrence_id=tick.occurrence.id, settled_by="r1", status="completed", reason="done")
    h.at("2027-01-07T02:40:00Z")
    assert h.admit("alpha/full", "r1").occurrence.id == weekly_id("alpha", "full", "2027-W01")


def test_a_product_added_by_a_later_revision_reads_not_commissioned_before_it_joined_also_after_it_admitted(
    tmp_path,
):
    """Seed rule 5: nothing is due before a lane joined, so those dates read not-commissioned; the lane's
    first admission (its watermark) and later settled, pruned nights do not turn them into `pruned`."""
    h = make_harness(tmp_path)  # alpha only, effective 2026-12-07
    h.at("2026-12-10T12:00:00Z")  # the revision: beta's first night is the first whose window closes after it
    h.schedule.record_commission(commission([basic_lane("alpha"), basic_lane("beta", time="02:20")], revision=2))
    before_joining = [basic_id("beta", date) for date in ("2026-12-07", "2026-12-09", "2026-12-10")]
    first = basic_id("beta", "2026-12-11")

    def states() -> list[str]:
        return [view.state for view in h.schedule.statuses(before_joining)]

    assert states() == ["not-commissioned"] * 3
    assert h.schedule.status(first).state == "scheduled"

    h.at("2026-12-11T02:20:00Z")
    assert h.admit("beta/basic", "r1").occurrence.id == first
    assert states() == ["not-commissioned"] * 3
    assert [v.state for v in h.again().statuses(before_joining)] == ["not-commissioned"] * 3

    # Three more nights run and settle, so the first leaves the state (two settled records are kept).
    h.schedule.settle(occurrence_id=first, settled_by="r1", status="completed", reason="done")
    for day in ("12", "13", "14"):
        h.at(f"2026-12-{day}T02:20:00Z")
        night = h.admit("beta/basic", f"r-{day}").occurrence.id
        h.schedule.settle(occurrence_id=night, settled_by=f"r-{day}", status="completed", reason="done")
    assert h.stored(first) is None
    assert h.schedule.status(first).state == "pruned"
    assert states() == ["not-commissioned"] * 3


def test_a_revision_that_removes_a_product_keeps_its_open_occurrence_and_one_that_names_it_again_rejoins_then(
    tmp_path,
):
    both = [basic_lane("alpha"), basic_lane("beta", time="02:20")]
    h = make_harness(tmp_path, lanes=both)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T12:00:00Z")
    h.schedule.record_commission(commission([basic_lane("beta", time="02:20")], revision=2))
    refused(h, "NOT_A_LANE", lambda: h.schedule.start(lane=LANE, runner="r1"))
    # The open occurrence of the removed lane is still there to settle.
    assert h.schedule.status(NIGHT1).state == "running"
    h.schedule.settle(occurrence_id=NIGHT1, settled_by="r1", status="partial", reason="product removed")

    h.at("2026-12-10T12:00:00Z")
    h.schedule.record_commission(commission(both, revision=3))
    assert h.schedule.status(basic_id("alpha", "2026-12-09")).state == "not-commissioned"
    h.at("2026-12-11T02:00:00Z")
    tick = h.admit(LANE, "r1")
    assert tick.occurrence.id == basic_id("alpha", "2026-12-11")
    assert coalesced_of(h.stored(tick.occurrence.id)) is None, "nothing is due while the lane was out"
    assert h.schedule.status(basic_id("alpha", "2026-12-09")).state == "not-commissioned"


# -- input defects are INVALID and write nothing -----------------------------------------------------------------------


def _running_night(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:05:00Z")
    return h


@pytest.mark.parametrize(
    ("name", "action"),
    [
        ("unknown deferral reason", lambda s: s.defer(occurrence_id=NIGHT1, runner="r1", reason="holiday")),
        ("unknown settlement status", lambda s: s.settle(occurrence_id=NIGHT1, settled_by="r1", status="great",
                                                         reason="done")),
        ("settlement reason over 200 characters",
         lambda s: s.settle(occurrence_id=NIGHT1, settled_by="r1", status="completed", reason="x" * 201)),
        ("empty runner", lambda s: s.defer(occurrence_id=NIGHT1, runner="", reason="logged-out")),
        ("confirmation without evidence",
         lambda s: s.reconcile(occurrence_id=NIGHT1, confirmation={"runner": "r1", "confirmedBy": "me"})),
        ("confirmation with an unknown field",
         lambda s: s.reconcile(occurrence_id=NIGHT1, confirmation={**confirmation("r1"), "mood": "sad"})),
        ("an occurrence ID of no form", lambda s: s.defer(occurrence_id="alpha/2026-12-07", runner="r1",
                                                          reason="logged-out")),
        ("portfolio as a Product", lambda s: s.status("discovery/portfolio/basic/2026-12-07")),
        ("an unknown account", lambda s: s.record_account(account="gemini", sequence=1, sign_in="x", overage=False,
                                                          recorded_by="owner")),
        ("a commission without its ceiling",
         lambda s: s.record_commission({k: v for k, v in commission(revision=2).items() if k != "weeklyTokens"})),
        ("a call bound of zero", lambda s: s.admit_call(occurrence_id=NIGHT1, runner="r1", task="scan", work="w1",
                                                        bound=0, sign_in="owner@example.com")),
        ("an attempt of zero", lambda s: s.admit_call(occurrence_id=NIGHT1, runner="r1", task="scan", work="w1",
                                                      bound=10, sign_in="owner@example.com", attempt=0)),
    ],
)
def test_an_input_defect_is_invalid_and_writes_nothing(tmp_path, name, action):
    h = _running_night(tmp_path)
    refused(h, "INVALID", lambda: action(h.schedule))


def test_a_reconciliation_and_a_resumption_replay_to_their_retries(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:10:00Z")
    first = h.schedule.reconcile(occurrence_id=NIGHT1, confirmation=confirmation("r1"))
    h.at("2026-12-07T02:11:00Z")
    with writes_nothing(h):
        again = h.schedule.reconcile(occurrence_id=NIGHT1, confirmation=confirmation("r1"))
    assert (again.replayed, again.command_id, again.version) == (True, first.command_id, first.version)

    resumed = h.schedule.start(lane=LANE, runner="r2")
    assert resumed.kind == "resumed"
    h.at("2026-12-07T02:12:00Z")
    with writes_nothing(h):
        retry = h.again().start(lane=LANE, runner="r2")
    assert (retry.kind, retry.replayed, retry.command_id) == ("resumed", True, resumed.command_id)
    with writes_nothing(h):
        late = h.schedule.reconcile(occurrence_id=NIGHT1, confirmation=confirmation("r1"))
    assert (late.replayed, late.command_id) == (True, f"{NIGHT1}/reconcile/1")
    assert h.schedule.status(NIGHT1).state == "running"


def test_another_confirmation_of_a_runner_already_reconciled_is_conflict(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:10:00Z")
    h.schedule.reconcile(occurrence_id=NIGHT1, confirmation=confirmation("r1"))
    h.at("2026-12-07T02:11:00Z")
    refused(h, "CONFLICT",
            lambda: h.schedule.reconcile(occurrence_id=NIGHT1, confirmation=confirmation("r1", by="someone-else")))


def test_a_retry_of_an_earlier_owner_record_replays_after_a_later_one(tmp_path):
    h = make_harness(tmp_path)
    h.owner_record("claude", 1)
    h.at("2026-12-06T13:00:00Z")
    h.owner_record("claude", 2)
    h.at("2026-12-06T14:00:00Z")
    with writes_nothing(h):
        assert h.owner_record("claude", 1).replayed is True
    assert h.schedule.read().accounts[0].record.sequence == 2


def test_status_answers_for_any_occurrence_of_the_current_commission(tmp_path):
    h = make_harness(tmp_path, lanes=[basic_lane(), weekly_lane(weekday=4)])
    h.at("2026-12-07T01:00:00Z")
    assert h.schedule.status(basic_id("alpha", "2027-03-01")).state == "scheduled"
    assert h.schedule.status(weekly_id("alpha", "full", "2026-W52")).state == "scheduled"
    assert h.schedule.status(basic_id("alpha", "2026-12-01")).state == "not-commissioned"


def test_a_weekly_occurrence_that_ran_is_not_counted_in_a_later_range(tmp_path):
    h = make_harness(tmp_path, lanes=[weekly_lane(weekday=1)])
    week = {key: weekly_id("alpha", "full", key) for key in ("2026-W50", "2026-W51", "2026-W52")}
    h.at("2026-12-07T02:40:00Z")
    h.admit("alpha/full", "r1")
    h.at("2026-12-07T03:00:00Z")
    h.schedule.settle(occurrence_id=week["2026-W50"], settled_by="r1", status="completed", reason="done")
    # Moved to Sundays: week 50's Sunday comes after the watermark's date, but week 50 ran.
    h.at("2026-12-07T12:00:00Z")
    h.schedule.record_commission(commission([weekly_lane(weekday=7)], revision=2))
    h.at("2026-12-13T02:40:00Z")
    with writes_nothing(h):
        assert h.schedule.start(lane="alpha/full", runner="r1").kind == "waiting"
    h.at("2026-12-27T02:40:00Z")  # week 51's Sunday passed unattended
    tick = h.admit("alpha/full", "r1")
    assert tick.occurrence.id == week["2026-W52"]
    assert coalesced_of(h.stored(tick.occurrence.id)) == (1, week["2026-W51"], week["2026-W51"])
    assert h.schedule.status(week["2026-W50"]).state == "settled"


def test_a_coalesced_occurrence_reads_coalesced_into_its_holder_after_the_holder_is_pruned(tmp_path):
    h = make_harness(tmp_path)
    for day in range(8, 12):  # 7 December is missed; 8 December's admission holds it
        date = f"2026-12-{day:02d}"
        h.at(f"{date}T02:00:00Z")
        h.admit(LANE, "r1")
        h.at(f"{date}T02:10:00Z")
        h.schedule.settle(occurrence_id=basic_id("alpha", date), settled_by="r1", status="partial", reason="x")
    holder = basic_id("alpha", "2026-12-08")
    assert h.schedule.status(holder).state == "pruned"
    assert h.schedule.status(holder).status == "partial", "a pruned occurrence's record comes from its settlement"
    view = h.schedule.status(NIGHT1)
    assert (view.state, view.status, view.coalesced_into) == ("coalesced", "unavailable", holder)


def test_a_revision_that_changes_the_zone_keeps_recorded_occurrences_and_re_plans_the_next_slot(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    h.at("2026-12-07T02:05:00Z")
    h.schedule.defer(occurrence_id=NIGHT1, runner="r1", reason="logged-out")
    assert h.stored(NIGHT1)["deferrals"][0]["resumeAt"] == "2026-12-08T02:00:00.000Z"
    h.at("2026-12-07T12:00:00Z")
    h.schedule.record_commission(commission(revision=2, zone="Asia/Tokyo"))
    # The deferral keeps the resume instant it recorded (London's next slot); the lane's slots are Tokyo's
    # from now on, so it resumes at Tokyo's first slot at or after that instant: 02:00 on 9 December JST.
    with writes_nothing(h):
        tick = h.schedule.start(lane=LANE, runner="r2")
    assert (tick.kind, tick.until) == ("waiting", utc("2026-12-08T17:00:00Z"))
    h.at("2026-12-08T17:00:00Z")
    tick = h.schedule.start(lane=LANE, runner="r2")
    assert (tick.kind, tick.occurrence.id) == ("resumed", NIGHT1), "the recorded occurrence keeps its London date"
    assert h.stored(NIGHT1)["segments"][1]["night"] == "2026-12-09"


def test_reconciled_segments_count_toward_the_limit_and_the_plan_names_the_settlement(tmp_path):
    h = make_harness(tmp_path)
    night = pendulum.date(2026, 12, 7)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    for segment in range(1, 9):
        h.at(f"{night.to_date_string()}T02:10:00Z")
        h.schedule.reconcile(occurrence_id=NIGHT1, confirmation=confirmation(f"r{segment}"))
        night = night.add(days=1)
        h.at(f"{night.to_date_string()}T02:00:00Z")
        if segment < 8:
            assert h.schedule.start(lane=LANE, runner=f"r{segment + 1}").kind == "resumed"
    plan = {entry.lane: entry for entry in h.schedule.plan()}
    assert (plan[LANE].action, plan[LANE].occurrence_id) == ("settle", NIGHT1)
    tick = h.schedule.start(lane=LANE, runner="r9")
    assert (tick.kind, tick.occurrence.id) == ("settled", NIGHT1)
    assert h.schedule.status(NIGHT1).state == "settled"
