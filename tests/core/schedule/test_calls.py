"""Provider calls, the weekly ledger and account stops (seed invariants 6-9, the call parts of 4, 10 and 11).

Three Products run at 02:00 London (GMT in December): alpha and beta on the claude account, gamma on
chatgpt, so an account-wide stop can be told from an occurrence's own. Each call is bounded at 150 000
tokens; the week's ceiling is 40 million unless a test says otherwise.
"""

from __future__ import annotations

from pathlib import Path

import pendulum
import pytest

from factory_schedule.core import SCHEDULE_LIMITS, ScheduleError
from tests.core.schedule.support import (
    CALL_BOUND,
    RECORDED,
    SIGN_IN,
    Harness,
    basic_id,
    basic_lane,
    commission,
    confirmation,
    lost_report,
    make_harness,
    observation,
    refused,
    result_report,
    sign_in_report,
    task,
    usage_limit_report,
    utc,
    weekly_id,
    weekly_lane,
    writes_nothing,
)

ALPHA, BETA, GAMMA = (basic_id(product, "2026-12-07") for product in ("alpha", "beta", "gamma"))
ALPHA2 = basic_id("alpha", "2026-12-08")


def three_lanes(**alpha_task) -> list[dict]:
    return [
        basic_lane("alpha", tasks=[task(**alpha_task)]),
        basic_lane("beta"),
        basic_lane("gamma", tasks=[task(account="chatgpt")]),
    ]


def calls_harness(tmp_path: Path, lanes: list[dict] | None = None, records: bool = True, **fields) -> Harness:
    h = make_harness(tmp_path, lanes=lanes if lanes is not None else three_lanes(), **fields)
    if records:
        h.at(RECORDED)
        h.owner_record("claude", 1)
        h.owner_record("chatgpt", 1)
    return h


def running(h: Harness, *lanes: str, at: str = "2026-12-07T02:00:00Z") -> None:
    h.at(at)
    for lane in lanes:
        h.admit(f"{lane}/basic", f"r-{lane}")


def performed(h: Harness, occurrence_id: str, runner: str, work: str, tokens: int = 90_000, **report) -> int:
    admission = h.call(occurrence_id, runner=runner, work=work)
    assert admission.admitted and admission.dispatch, admission
    h.schedule.end_call(occurrence_id=occurrence_id, runner=runner, call=admission.call,
                        report=result_report(tokens, **report))
    return admission.call


def refusal(h: Harness, reason: str, occurrence_id: str, **request) -> None:
    """admit_call refuses for `reason` and writes nothing."""
    with writes_nothing(h):
        answer = h.call(occurrence_id, **request)
    assert answer.admitted is False, answer
    assert answer.reason == reason, answer


def stored_call(h: Harness, occurrence_id: str, k: int) -> dict:
    occurrence = h.stored(occurrence_id)
    assert occurrence is not None
    return occurrence["calls"][k - 1]


def refused_rule(h: Harness, action) -> None:
    with writes_nothing(h), pytest.raises(ScheduleError) as caught:
        action()
    assert caught.value.code in ("RULE", "NOT_RUNNING"), caught.value


# -- admission and dispatch ----------------------------------------------------------------------------------------


def test_a_fresh_admission_alone_dispatches_and_a_replay_licenses_no_contact_even_in_flight(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    first = h.call(ALPHA, runner="r-alpha", work="w1")
    assert first.admitted is True
    assert (first.dispatch, first.in_flight, first.replayed) == (True, True, False)
    assert first.week == "2026-W50"
    assert first.command_id == f"{ALPHA}/call/{first.call}"

    h.at("2026-12-07T02:06:00Z")
    with writes_nothing(h):
        again = h.again().admit_call(
            occurrence_id=ALPHA, runner="r-alpha", task="scan", work="w1", bound=CALL_BOUND, sign_in=SIGN_IN
        )
    assert again.admitted is True
    assert (again.dispatch, again.in_flight, again.replayed) == (False, True, True)
    assert (again.call, again.command_id) == (first.call, first.command_id)

    end = h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=first.call, report=result_report(90_000))
    assert (end.outcome, end.debit, end.replayed) == ("ok", 90_000, False)
    assert end.command_id == f"{ALPHA}/call/{first.call}/end"
    with writes_nothing(h):
        end_again = h.schedule.end_call(
            occurrence_id=ALPHA, runner="r-alpha", call=first.call, report=result_report(90_000)
        )
        after = h.call(ALPHA, runner="r-alpha", work="w1")
    assert end_again.replayed is True
    assert (after.admitted, after.dispatch, after.in_flight, after.replayed) == (True, False, False, True)
    refused(
        h, "CONFLICT",
        lambda: h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=first.call,
                                    report=result_report(1)),
    )


def test_a_call_admission_is_identified_by_its_request_and_replays_after_the_occurrence_resumed(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    first = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=first.call, report=result_report(10))
    h.at("2026-12-07T02:06:00Z")
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="volume-unmounted")
    h.at("2026-12-08T02:00:00Z")
    assert h.schedule.start(lane="alpha/basic", runner="r-next").kind == "resumed"

    with writes_nothing(h):
        again = h.call(ALPHA, runner="r-alpha", work="w1")
    assert (again.admitted, again.replayed, again.dispatch, again.call) == (True, True, False, first.call)
    # The same work asked for by the new segment's runner is not a replay: its work was done.
    refusal(h, "duplicate-work", ALPHA, runner="r-next", work="w1")


def test_only_the_running_segments_runner_may_admit_or_end_a_call(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    refused(h, "NOT_OWNER", lambda: h.schedule.end_call(
        occurrence_id=ALPHA, runner="r-other", call=admission.call, report=result_report(5)))
    with writes_nothing(h):
        try:
            answer = h.call(ALPHA, runner="r-other", work="w2")
        except ScheduleError as error:
            assert error.code == "NOT_OWNER"
        else:
            pytest.fail(f"another runner was answered {answer}")
    refused(h, "UNKNOWN_CALL", lambda: h.schedule.end_call(
        occurrence_id=ALPHA, runner="r-alpha", call=admission.call + 1, report=result_report(5)))


# -- the refusal reasons, each recording nothing, in the rules' order ---------------------------------------------


def test_a_segment_holds_one_call_in_flight(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    h.call(ALPHA, runner="r-alpha", work="w1")
    refusal(h, "call-open", ALPHA, runner="r-alpha", work="w2")


def test_calls_are_admitted_until_the_segments_deadline_and_not_after(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")  # deadline 02:45
    h.at("2026-12-07T02:44:00Z")
    assert h.call(ALPHA, runner="r-alpha", work="w1").admitted is True
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=1, report=result_report(5))
    h.at("2026-12-07T02:46:00Z")
    refusal(h, "deadline", ALPHA, runner="r-alpha", work="w2")


def test_a_late_starts_calls_stop_at_the_windows_close(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", at="2026-12-07T04:30:00Z")  # 45 minutes would run to 05:15; the window closes at 05:00
    h.at("2026-12-07T04:59:00Z")
    assert h.call(ALPHA, runner="r-alpha", work="w1").admitted is True
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=1, report=result_report(5))
    h.at("2026-12-07T05:01:00Z")
    refusal(h, "deadline", ALPHA, runner="r-alpha", work="w2")


def test_a_call_above_its_tasks_bound_is_refused(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    refusal(h, "call-bound", ALPHA, runner="r-alpha", work="w1", bound=CALL_BOUND + 1)


def test_refusal_reasons_are_checked_in_the_seeds_order(tmp_path):
    h = calls_harness(tmp_path, weekly_tokens=200_000)
    running(h, "alpha", "beta")
    h.at("2026-12-07T02:05:00Z")
    h.call(ALPHA, runner="r-alpha", work="w1")

    # beta: call-bound before unknown-effect (work whose effect is unknown).
    h.at("2026-12-07T02:06:00Z")
    a = h.call(BETA, runner="r-beta", work="lost-work", bound=10)
    h.schedule.end_call(occurrence_id=BETA, runner="r-beta", call=a.call, report=lost_report())
    b = h.call(BETA, runner="r-beta", work="done-work", bound=10)
    h.schedule.end_call(occurrence_id=BETA, runner="r-beta", call=b.call, report=result_report(10))
    refusal(h, "call-bound", BETA, runner="r-beta", work="lost-work", bound=CALL_BOUND + 1)
    refusal(h, "unknown-effect", BETA, runner="r-beta", work="lost-work", attempt=2)
    refusal(h, "duplicate-work", BETA, runner="r-beta", work="done-work", attempt=2)

    # A usage limit closes beta's segment: its own "limited" comes before everything else.
    c = h.call(BETA, runner="r-beta", work="limit-work", bound=10)
    h.schedule.end_call(occurrence_id=BETA, runner="r-beta", call=c.call,
                        report=usage_limit_report("2026-12-07T09:00:00Z"))
    h.at("2026-12-07T02:07:00Z")
    refusal(h, "limited", BETA, runner="r-beta", work="new-work")
    refusal(h, "limited", BETA, runner="r-beta", work="lost-work", bound=CALL_BOUND + 1)
    h.schedule.defer(occurrence_id=BETA, runner="r-beta", reason="usage-limit")

    # alpha: call-open before deadline (a call still in flight past the deadline) ...
    h.at("2026-12-07T02:50:00Z")
    refusal(h, "call-open", ALPHA, runner="r-alpha", work="w2", bound=CALL_BOUND + 1)
    # ... and, once it is lost, deadline before call-bound before unknown-effect.
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=1, report=lost_report())
    refusal(h, "deadline", ALPHA, runner="r-alpha", work="w1", bound=CALL_BOUND + 1)


def test_the_accounts_stop_is_checked_before_the_owner_record_and_the_record_before_the_budget(tmp_path):
    lanes = three_lanes()
    h = calls_harness(tmp_path, lanes=lanes, weekly_tokens=100_000)
    running(h, "alpha", "beta")
    h.at("2026-12-07T02:05:00Z")
    a = h.call(ALPHA, runner="r-alpha", work="w1", bound=10)
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=a.call, report=result_report(10))
    # duplicate-work before an account stop
    b = h.call(BETA, runner="r-beta", work="w1", bound=10)
    h.schedule.end_call(occurrence_id=BETA, runner="r-beta", call=b.call,
                        report=usage_limit_report("2026-12-07T09:00:00Z"))
    refusal(h, "duplicate-work", ALPHA, runner="r-alpha", work="w1")
    # limited (the account's window) before overage-unverified (a sign-in the record does not name) and the budget
    refusal(h, "limited", ALPHA, runner="r-alpha", work="w2", sign_in="stranger@example.com")

    h2 = calls_harness(tmp_path / "two", weekly_tokens=100_000)
    running(h2, "alpha")
    h2.at("2026-12-07T02:05:00Z")
    a = h2.call(ALPHA, runner="r-alpha", work="w1", bound=10)
    h2.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=a.call, report=sign_in_report(401))
    # sign-in-needed before overage-unverified and budget-exhausted
    refusal(h2, "sign-in-needed", ALPHA, runner="r-alpha", work="w2", sign_in="stranger@example.com")
    h2.at("2026-12-07T02:06:00Z")
    h2.owner_record("claude", 2)
    # overage-unverified before budget-exhausted
    refusal(h2, "overage-unverified", ALPHA, runner="r-alpha", work="w2", bound=CALL_BOUND,
            sign_in="stranger@example.com")
    refusal(h2, "budget-exhausted", ALPHA, runner="r-alpha", work="w2", bound=CALL_BOUND)


# -- the ledger ----------------------------------------------------------------------------------------------------


def test_a_weeks_ceiling_is_set_by_its_first_call_and_a_call_debits_its_bound(tmp_path):
    h = calls_harness(tmp_path, weekly_tokens=400_000)
    assert "2026-W50" not in h.ledger()
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    h.call(ALPHA, runner="r-alpha", work="w1")
    week = h.ledger()["2026-W50"]
    assert (week["ceiling"], week["debited"]) == (400_000, CALL_BOUND)
    view = {entry.week: entry for entry in h.schedule.read().ledger}
    assert (view["2026-W50"].ceiling, view["2026-W50"].debited) == (400_000, CALL_BOUND)


def test_a_known_usage_replaces_the_debit(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    performed(h, ALPHA, "r-alpha", "w1", tokens=91_234)
    assert h.ledger()["2026-W50"]["debited"] == 91_234
    assert stored_call(h, ALPHA, 1)["debit"] == 91_234


def test_a_usage_above_its_bound_is_debited_as_observed_and_flagged(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    end = h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                              report=result_report(CALL_BOUND + 50_000))
    assert end.debit == CALL_BOUND + 50_000
    assert h.ledger()["2026-W50"]["debited"] == CALL_BOUND + 50_000
    assert stored_call(h, ALPHA, 1)["overBound"] is True


def test_an_unknown_call_stays_debited_at_its_bound(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    end = h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call, report=lost_report())
    assert (end.outcome, end.debit) == ("lost", CALL_BOUND)
    assert h.ledger()["2026-W50"]["debited"] == CALL_BOUND


def test_a_later_revision_lowers_a_weeks_ceiling_at_once_and_never_raises_it(tmp_path):
    h = calls_harness(tmp_path, weekly_tokens=400_000)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    performed(h, ALPHA, "r-alpha", "w1", tokens=100_000)
    h.at("2026-12-07T02:10:00Z")
    h.schedule.record_commission(commission(three_lanes(), revision=2, weekly_tokens=200_000))
    assert h.ledger()["2026-W50"]["ceiling"] == 200_000
    refusal(h, "budget-exhausted", ALPHA, runner="r-alpha", work="w2", bound=CALL_BOUND)
    h.at("2026-12-07T02:11:00Z")
    h.schedule.record_commission(commission(three_lanes(), revision=3, weekly_tokens=900_000))
    assert h.ledger()["2026-W50"]["ceiling"] == 200_000
    refusal(h, "budget-exhausted", ALPHA, runner="r-alpha", work="w2", bound=CALL_BOUND)
    assert h.call(ALPHA, runner="r-alpha", work="w2", bound=100_000).admitted is True

    # The next week opens at the current revision's ceiling.
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=2, report=result_report(5))
    h.at("2026-12-07T02:20:00Z")
    h.schedule.settle(occurrence_id=ALPHA, settled_by="r-alpha", status="completed", reason="done")
    h.at("2026-12-14T02:00:00Z")
    monday = h.admit("alpha/basic", "r-alpha").occurrence.id
    h.at("2026-12-14T02:05:00Z")
    h.call(monday, runner="r-alpha", work="w1")
    assert h.ledger()["2026-W51"]["ceiling"] == 900_000


def test_the_ceiling_refuses_a_call_it_cannot_fit_and_the_budget_deferral_goes_to_next_iso_weeks_first_slot(tmp_path):
    h = calls_harness(tmp_path, weekly_tokens=200_000)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    performed(h, ALPHA, "r-alpha", "w1", tokens=CALL_BOUND)
    refusal(h, "budget-exhausted", ALPHA, runner="r-alpha", work="w2", bound=100_000)

    refused_rule(h, lambda: h.schedule.defer(
        occurrence_id=ALPHA, runner="r-alpha", reason="budget-exhausted", bound=50_000))
    refused(h, "INVALID", lambda: h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="budget-exhausted"))
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="budget-exhausted", bound=100_000)
    deferral = h.stored(ALPHA)["deferrals"][0]
    assert deferral["bound"] == 100_000

    h.at("2026-12-08T02:00:00Z")
    with writes_nothing(h):
        tick = h.schedule.start(lane="alpha/basic", runner="r-alpha")
    assert tick.kind == "waiting"
    assert tick.until == utc("2026-12-14T02:00:00Z")
    h.at("2026-12-14T02:00:00Z")
    tick = h.schedule.start(lane="alpha/basic", runner="r-alpha")
    assert (tick.kind, tick.occurrence.id) == ("resumed", ALPHA)


def test_the_ledger_keeps_its_eight_latest_weeks_and_a_pruned_occurrences_admission_still_replays(tmp_path):
    h = calls_harness(tmp_path, lanes=[weekly_lane(weekday=1, time="02:00")])
    first_week = None
    monday = pendulum.date(2026, 12, 7)
    for week in range(10):
        day = monday.add(weeks=week).to_date_string()
        h.at(f"{day}T01:00:00Z")
        h.owner_record("claude", week + 2)
        h.at(f"{day}T02:00:00Z")
        occurrence_id = h.admit("alpha/full", "r1").occurrence.id
        h.at(f"{day}T02:05:00Z")
        performed(h, occurrence_id, "r1", "w1", tokens=1_000)
        h.at(f"{day}T02:10:00Z")
        h.schedule.settle(occurrence_id=occurrence_id, settled_by="r1", status="completed", reason="done")
        if first_week is None:
            first_week = occurrence_id
    weeks = sorted(h.ledger())
    assert weeks == ["2026-W52", "2026-W53", "2027-W01", "2027-W02", "2027-W03", "2027-W04", "2027-W05", "2027-W06"]
    assert h.stored(first_week) is None

    with writes_nothing(h):
        replay = h.call(first_week, runner="r1", work="w1")
    assert (replay.admitted, replay.replayed, replay.dispatch) == (True, True, False)
    refused(h, "SETTLED", lambda: h.call(first_week, runner="r1", work="w9"))


# -- usage windows (F1-F3) -----------------------------------------------------------------------------------------


def test_an_injected_usage_limit_defers_the_occurrence_and_later_resumes_the_same_one(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    end = h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                              report=usage_limit_report("2026-12-08T10:00:00Z"))
    assert end.outcome == "usage-limit"
    refusal(h, "limited", ALPHA, runner="r-alpha", work="w2")
    # It may not settle while running, and the deferral must say usage-limit.
    refused_rule(h, lambda: h.schedule.settle(occurrence_id=ALPHA, settled_by="r-alpha", status="partial",
                                              reason="stopped"))
    refused_rule(h, lambda: h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="logged-out"))

    h.at("2026-12-07T02:06:00Z")
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="usage-limit")
    assert h.stored(ALPHA)["deferrals"][0]["resumeAt"] == "2026-12-09T02:00:00.000Z"
    h.at("2026-12-08T02:00:00Z")
    with writes_nothing(h):
        tick = h.schedule.start(lane="alpha/basic", runner="r-alpha")
    assert (tick.kind, tick.until) == ("waiting", utc("2026-12-09T02:00:00Z"))
    h.at("2026-12-09T02:00:00Z")
    tick = h.schedule.start(lane="alpha/basic", runner="r-alpha")
    assert (tick.kind, tick.occurrence.id, tick.command_id) == ("resumed", ALPHA, f"{ALPHA}/resume/2")


def test_a_usage_limit_deferral_goes_to_the_first_slot_at_or_after_the_reset(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                        report=usage_limit_report("2026-12-08T02:00:00Z"))
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="usage-limit")
    h.at("2026-12-08T02:00:00Z")
    assert h.schedule.start(lane="alpha/basic", runner="r-alpha").kind == "resumed"


def test_a_usage_limit_that_refused_the_call_leaves_its_work_unsent_and_uses_no_allowance(tmp_path):
    h = calls_harness(tmp_path, lanes=three_lanes(max_calls=1))
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    end = h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                              report=usage_limit_report("2026-12-07T20:00:00Z", tokens=0))
    assert end.debit == 0
    assert h.ledger()["2026-W50"]["debited"] == 0
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="usage-limit")
    h.at("2026-12-08T02:00:00Z")
    h.schedule.start(lane="alpha/basic", runner="r-alpha")

    # The same runner token re-sends the refused work with the next attempt: a new call, freshly dispatched,
    # although the task allows one call (the refused one used none of the allowance).
    with writes_nothing(h):
        replay = h.call(ALPHA, runner="r-alpha", work="w1")
    assert (replay.replayed, replay.dispatch, replay.call) == (True, False, admission.call)
    again = h.call(ALPHA, runner="r-alpha", work="w1", attempt=2)
    assert (again.admitted, again.replayed, again.dispatch) == (True, False, True)
    assert again.call != admission.call


def test_an_unreachable_provider_leaves_its_work_unsent_debits_nothing_and_touches_no_account(tmp_path):
    h = calls_harness(tmp_path, lanes=three_lanes(max_calls=1))
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    end = h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                              report={"kind": "unreachable"})
    assert (end.outcome, end.debit) == ("unreachable", 0)
    assert h.ledger()["2026-W50"]["debited"] == 0
    call = stored_call(h, ALPHA, admission.call)
    assert (call["unsent"], call.get("unknown", False), call["tokens"]) == (True, False, 0)
    view = h.schedule.read()
    assert view is not None
    claude = next(a for a in view.accounts if a.account == "claude")
    assert (claude.window_closed_until, claude.sign_in_refused_at) == (None, None)
    # The work was never sent: it may go out again, and the task's one call was not used.
    again = h.call(ALPHA, runner="r-alpha", work="w1", attempt=2)
    assert (again.admitted, again.dispatch) == (True, True)


@pytest.mark.parametrize("report", [{"kind": "unreachable", "tokens": 0}, {"kind": "unreachable",
                                                                           "observation": {"status": "allowed"}}])
def test_an_unreachable_report_carries_nothing_but_its_kind(tmp_path, report):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    with writes_nothing(h), pytest.raises(ScheduleError) as caught:
        h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call, report=report)
    assert caught.value.code == "INVALID"


def test_a_usage_limit_report_that_shows_the_provider_consumed_tokens_is_unknown_and_never_resent(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    end = h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                              report=usage_limit_report("2026-12-07T20:00:00Z", tokens=4_000))
    assert end.debit >= 4_000, "it counts against the allowance"
    assert stored_call(h, ALPHA, admission.call)["unknown"] is True
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="usage-limit")
    h.at("2026-12-08T02:00:00Z")
    h.schedule.start(lane="alpha/basic", runner="r-next")
    refusal(h, "unknown-effect", ALPHA, runner="r-next", work="w1")
    refusal(h, "unknown-effect", ALPHA, runner="r-next", work="w1", attempt=2)
    refused_rule(h, lambda: h.schedule.settle(occurrence_id=ALPHA, settled_by="r-next", status="completed",
                                              reason="done"))
    h.schedule.settle(occurrence_id=ALPHA, settled_by="r-next", status="partial", reason="w1 unknown")


def test_a_sign_in_refusal_that_shows_the_provider_consumed_tokens_is_unknown_and_never_resent(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                        report=sign_in_report(401, tokens=12))
    assert stored_call(h, ALPHA, admission.call)["unknown"] is True
    h.at("2026-12-07T02:06:00Z")
    h.owner_record("claude", 2)
    h.at("2026-12-07T02:07:00Z")
    refusal(h, "unknown-effect", ALPHA, runner="r-alpha", work="w1", attempt=2)
    refused_rule(h, lambda: h.schedule.settle(occurrence_id=ALPHA, settled_by="r-alpha", status="completed",
                                              reason="done"))


def test_a_call_reported_with_a_rejected_usage_limit_observation_closes_the_segment_until_its_reset(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta")
    h.at("2026-12-07T02:05:00Z")
    performed(h, ALPHA, "r-alpha", "w1", tokens=1_000,
              observed=observation("rejected", resets_at="2026-12-08T10:00:00Z"))
    refusal(h, "limited", ALPHA, runner="r-alpha", work="w2")
    refusal(h, "limited", BETA, runner="r-beta", work="w1")
    refused_rule(h, lambda: h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="volume-unmounted"))
    # Its completed work may still settle.
    h.schedule.settle(occurrence_id=ALPHA, settled_by="r-alpha", status="completed", reason="w1 done")
    assert h.schedule.status(ALPHA).status == "completed"


@pytest.mark.parametrize("status", ["allowed", "allowed_warning"])
def test_an_open_usage_window_observation_leaves_the_segment_open(tmp_path, status):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    performed(h, ALPHA, "r-alpha", "w1", observed=observation(status, resets_at="2026-12-07T06:00:00Z"))
    assert h.call(ALPHA, runner="r-alpha", work="w2").admitted is True


def test_an_unrecognised_usage_window_status_fails_closed(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    performed(h, ALPHA, "r-alpha", "w1", observed=observation("throttled_maybe", resets_at="2026-12-07T06:00:00Z"))
    refusal(h, "limited", ALPHA, runner="r-alpha", work="w2")


def test_a_lost_call_that_saw_a_limit_event_is_unknown_and_stops_the_segment(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                        report=lost_report(observation("rejected", resets_at="2026-12-08T10:00:00Z")))
    assert stored_call(h, ALPHA, admission.call)["unknown"] is True
    refusal(h, "limited", ALPHA, runner="r-alpha", work="w2")
    refused_rule(h, lambda: h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="logged-out"))
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="usage-limit")
    assert h.stored(ALPHA)["deferrals"][0]["resumeAt"] == "2026-12-09T02:00:00.000Z"


@pytest.mark.parametrize(
    "resets_at",
    [
        pytest.param("2026-12-07T02:04:00Z", id="before-the-observation"),
        pytest.param("2026-12-14T02:06:00Z", id="beyond-seven-days"),
    ],
)
def test_a_usage_limits_reset_is_checked(tmp_path, resets_at):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    refused(h, "INVALID", lambda: h.schedule.end_call(
        occurrence_id=ALPHA, runner="r-alpha", call=admission.call, report=usage_limit_report(resets_at)))


def test_a_usage_window_belongs_to_the_account(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta", "gamma")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                        report=usage_limit_report("2026-12-08T10:00:00Z"))
    assert h.schedule.read().accounts[0].window_closed_until is not None

    refusal(h, "limited", BETA, runner="r-beta", work="w1")
    assert h.call(GAMMA, runner="r-gamma", work="w1").admitted is True, "the other account is open"

    # alpha leaves the state's foreground; beta is still refused, and may defer for the stop without contact.
    h.at("2026-12-07T02:06:00Z")
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="usage-limit")
    refusal(h, "limited", BETA, runner="r-beta", work="w1")
    h.schedule.defer(occurrence_id=BETA, runner="r-beta", reason="usage-limit")
    assert h.stored(BETA)["deferrals"][0]["resumeAt"] == "2026-12-09T02:00:00.000Z"
    assert h.stored(BETA).get("calls", []) == [], "beta deferred without contacting the provider"


def test_a_usage_limit_deferral_needs_a_closed_window(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    refused_rule(h, lambda: h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="usage-limit"))


def test_an_account_stop_only_moves_forward_whatever_order_reports_land_in(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta")
    h.at("2026-12-07T02:05:00Z")
    a = h.call(ALPHA, runner="r-alpha", work="w1")
    b = h.call(BETA, runner="r-beta", work="w1")
    h.at("2026-12-07T02:20:00Z")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=a.call,
                        report=usage_limit_report("2026-12-09T10:00:00Z"))
    before = h.account_state("claude")["windowClosedUntil"]
    h.at("2026-12-07T02:10:00Z")  # beta's report lands later, though its clock reads earlier, with an earlier reset
    h.schedule.end_call(occurrence_id=BETA, runner="r-beta", call=b.call,
                        report=usage_limit_report("2026-12-08T10:00:00Z"))
    assert h.account_state("claude")["windowClosedUntil"] == before == "2026-12-09T10:00:00.000Z"


def test_a_sign_in_stop_only_moves_forward_whatever_order_reports_land_in(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta")
    h.at("2026-12-07T02:05:00Z")
    a = h.call(ALPHA, runner="r-alpha", work="w1")
    b = h.call(BETA, runner="r-beta", work="w1")
    h.at("2026-12-07T02:20:00Z")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=a.call, report=sign_in_report(401))
    h.at("2026-12-07T02:10:00Z")
    h.schedule.end_call(occurrence_id=BETA, runner="r-beta", call=b.call, report=sign_in_report(403))
    assert h.account_state("claude")["signInRefusedAt"] == "2026-12-07T02:20:00.000Z"


# -- sign-in (F5) --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("http_status", [401, 403])
def test_a_sign_in_failure_waits_with_no_resume_time_until_a_newer_owner_record(tmp_path, http_status):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    end = h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                              report=sign_in_report(http_status))
    assert end.outcome == "sign-in-needed"
    refusal(h, "sign-in-needed", ALPHA, runner="r-alpha", work="w2")
    h.at("2026-12-07T02:06:00Z")
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="sign-in-needed")
    assert h.stored(ALPHA)["deferrals"][0].get("resumeAt") is None

    for instant in ("2026-12-07T02:07:00Z", "2026-12-08T02:00:00Z", "2026-12-09T02:10:00Z"):
        h.at(instant)
        with writes_nothing(h):
            tick = h.schedule.start(lane="alpha/basic", runner="r-alpha")
        assert (tick.kind, tick.until) == ("waiting", None), instant

    h.at("2026-12-09T06:00:00Z")  # after tonight's window closed: the next slot
    h.owner_record("claude", 2)
    h.at("2026-12-09T06:01:00Z")
    with writes_nothing(h):
        tick = h.schedule.start(lane="alpha/basic", runner="r-alpha")
    assert (tick.kind, tick.until) == ("waiting", utc("2026-12-10T02:00:00Z"))
    h.at("2026-12-10T02:00:00Z")
    tick = h.schedule.start(lane="alpha/basic", runner="r-alpha")
    assert (tick.kind, tick.occurrence.id) == ("resumed", ALPHA)
    assert h.call(ALPHA, runner="r-alpha", work="w1", attempt=2).dispatch is True


def test_a_sign_in_repaired_after_tonights_deadline_resumes_at_the_next_slot(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")  # tonight's deadline is 02:45; the window closes at 05:00
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call, report=sign_in_report(401))
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="sign-in-needed")
    h.at("2026-12-07T03:00:00Z")
    h.owner_record("claude", 2)
    h.at("2026-12-07T03:01:00Z")
    with writes_nothing(h):
        tick = h.schedule.start(lane="alpha/basic", runner="r-alpha")
    assert (tick.kind, tick.until) == ("waiting", utc("2026-12-08T02:00:00Z"))
    h.at("2026-12-08T02:00:00Z")
    assert h.schedule.start(lane="alpha/basic", runner="r-alpha").kind == "resumed"


def test_a_sign_in_repaired_tonight_resumes_tonight_within_tonights_deadline(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call, report=sign_in_report(401))
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="sign-in-needed")
    h.at("2026-12-07T02:20:00Z")
    h.owner_record("claude", 2)
    h.at("2026-12-07T02:25:00Z")
    tick = h.schedule.start(lane="alpha/basic", runner="r-alpha")
    assert (tick.kind, tick.occurrence.id) == ("resumed", ALPHA)
    assert h.stored(ALPHA)["segments"][1]["deadline"] == "2026-12-07T02:45:00.000Z"
    h.at("2026-12-07T02:46:00Z")
    refusal(h, "deadline", ALPHA, runner="r-alpha", work="w1", attempt=2)


def test_an_owner_record_made_between_a_sign_in_refusal_and_its_deferral_releases_it(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call, report=sign_in_report(401))
    h.at("2026-12-07T02:10:00Z")
    h.owner_record("claude", 2)
    h.at("2026-12-07T02:15:00Z")
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="sign-in-needed")
    h.at("2026-12-07T02:20:00Z")
    tick = h.schedule.start(lane="alpha/basic", runner="r-alpha")
    assert (tick.kind, tick.occurrence.id) == ("resumed", ALPHA)


def test_a_sign_in_refusal_belongs_to_the_account(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta", "gamma")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call, report=sign_in_report(403))
    refusal(h, "sign-in-needed", BETA, runner="r-beta", work="w1")
    assert h.call(GAMMA, runner="r-gamma", work="w1").admitted is True
    h.schedule.defer(occurrence_id=BETA, runner="r-beta", reason="sign-in-needed")  # without contact
    assert h.stored(BETA).get("calls", []) == []


# -- paid overage (F4) ---------------------------------------------------------------------------------------------


def test_no_call_is_admitted_without_the_owners_record_of_that_account(tmp_path):
    h = calls_harness(tmp_path, records=False)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    refusal(h, "overage-unverified", ALPHA, runner="r-alpha", work="w1")


def test_no_call_is_admitted_while_the_owners_record_has_overage_on(tmp_path):
    h = calls_harness(tmp_path, records=False)
    h.at(RECORDED)
    h.owner_record("claude", 1, overage=True)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    refusal(h, "overage-unverified", ALPHA, runner="r-alpha", work="w1")


def test_no_call_is_admitted_for_a_sign_in_the_record_does_not_name(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    refusal(h, "overage-unverified", ALPHA, runner="r-alpha", work="w1", sign_in="someone-else@example.com")


def test_the_owners_record_is_current_for_its_maximum_age_and_no_longer(tmp_path):
    h = calls_harness(tmp_path, records=False, record_max_age_days=1)
    h.at("2026-12-06T02:30:00Z")
    h.owner_record("claude", 1)
    running(h, "alpha")
    h.at("2026-12-07T02:30:00Z")  # exactly one day old
    performed(h, ALPHA, "r-alpha", "w1")
    h.at("2026-12-07T02:31:00Z")
    refusal(h, "overage-unverified", ALPHA, runner="r-alpha", work="w2")


def test_an_owner_record_dated_after_the_clock_is_not_current(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T03:00:00Z")
    h.owner_record("claude", 2)
    h.at("2026-12-07T02:10:00Z")
    refusal(h, "overage-unverified", ALPHA, runner="r-alpha", work="w1")


def test_paid_overage_stops_that_account_only_for_every_product_and_its_occurrence_cannot_defer_or_complete(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta", "gamma")
    h.at("2026-12-07T02:05:00Z")
    performed(h, ALPHA, "r-alpha", "w1", observed=observation("allowed", overage=True))
    assert h.account_state("claude").get("overageObservedAt") is not None
    refusal(h, "overage-unverified", ALPHA, runner="r-alpha", work="w2")
    refusal(h, "overage-unverified", BETA, runner="r-beta", work="w1")
    assert h.call(GAMMA, runner="r-gamma", work="w1").admitted is True

    refused_rule(h, lambda: h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="logged-out"))
    refused_rule(h, lambda: h.schedule.settle(occurrence_id=ALPHA, settled_by="r-alpha", status="completed",
                                              reason="done"))

    h.at("2026-12-07T02:10:00Z")
    h.owner_record("claude", 2)
    assert h.call(BETA, runner="r-beta", work="w1").admitted is True, "a newer record lifts the stop"


def test_paid_overage_takes_precedence_over_an_unusable_reset(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                        report=usage_limit_report("2026-12-01T00:00:00Z", overage=True))
    assert h.account_state("claude").get("overageObservedAt") is not None
    refusal(h, "overage-unverified", BETA, runner="r-beta", work="w1")


def test_paid_overage_whose_observation_also_closes_the_window_leaves_the_window_after_a_newer_record(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                        report=usage_limit_report("2026-12-08T10:00:00Z", overage=True))
    h.at("2026-12-07T02:10:00Z")
    h.owner_record("claude", 2)
    refusal(h, "limited", BETA, runner="r-beta", work="w1")


# -- reconcile -----------------------------------------------------------------------------------------------------


def test_reconcile_ends_an_in_flight_call_as_lost_and_its_work_is_never_sent_again(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.at("2026-12-07T02:10:00Z")
    h.schedule.reconcile(occurrence_id=ALPHA, confirmation=confirmation("r-alpha"))
    call = stored_call(h, ALPHA, admission.call)
    assert (call["outcome"], call["unknown"], call["debit"]) == ("lost", True, CALL_BOUND)

    h.at("2026-12-07T02:11:00Z")
    assert h.schedule.start(lane="alpha/basic", runner="r-new").kind == "resumed"
    with writes_nothing(h):
        replay = h.call(ALPHA, runner="r-alpha", work="w1")
    assert (replay.replayed, replay.dispatch) == (True, False)
    refusal(h, "unknown-effect", ALPHA, runner="r-new", work="w1")
    assert h.call(ALPHA, runner="r-new", work="w2").dispatch is True


def test_a_runner_that_dies_after_a_usage_limit_once_reconciled_resumes_only_at_the_lanes_first_slot_after_the_reset(
    tmp_path,
):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                        report=usage_limit_report("2026-12-08T10:00:00Z"))
    h.at("2026-12-07T02:10:00Z")
    h.schedule.reconcile(occurrence_id=ALPHA, confirmation=confirmation("r-alpha"))
    for instant in ("2026-12-07T02:11:00Z", "2026-12-08T02:00:00Z"):
        h.at(instant)
        with writes_nothing(h):
            tick = h.schedule.start(lane="alpha/basic", runner="r-new")
        assert (tick.kind, tick.until) == ("waiting", utc("2026-12-09T02:00:00Z")), instant
    h.at("2026-12-09T02:00:00Z")
    assert h.schedule.start(lane="alpha/basic", runner="r-new").kind == "resumed"


def test_a_runner_that_dies_after_a_401_once_reconciled_waits_for_a_newer_owner_record(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call, report=sign_in_report(401))
    h.at("2026-12-07T02:10:00Z")
    h.schedule.reconcile(occurrence_id=ALPHA, confirmation=confirmation("r-alpha"))
    for instant in ("2026-12-07T02:11:00Z", "2026-12-08T02:00:00Z"):
        h.at(instant)
        with writes_nothing(h):
            tick = h.schedule.start(lane="alpha/basic", runner="r-new")
        assert (tick.kind, tick.until) == ("waiting", None), instant
    h.at("2026-12-08T02:05:00Z")
    h.owner_record("claude", 2)
    h.at("2026-12-08T02:06:00Z")
    assert h.schedule.start(lane="alpha/basic", runner="r-new").kind == "resumed"


def test_reconciling_a_segment_past_its_deadline_resumes_only_at_the_next_nights_slot(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    h.call(ALPHA, runner="r-alpha", work="w1")
    h.at("2026-12-07T03:00:00Z")
    h.schedule.reconcile(occurrence_id=ALPHA, confirmation=confirmation("r-alpha"))
    h.at("2026-12-07T03:01:00Z")
    with writes_nothing(h):
        tick = h.schedule.start(lane="alpha/basic", runner="r-new")
    assert (tick.kind, tick.until) == ("waiting", utc("2026-12-08T02:00:00Z"))
    h.at("2026-12-08T02:00:00Z")
    assert h.schedule.start(lane="alpha/basic", runner="r-new").kind == "resumed"


# -- settlement rules that depend on calls -------------------------------------------------------------------------


def test_a_malformed_output_keeps_the_occurrence_from_completing(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    performed(h, ALPHA, "r-alpha", "w1", output="malformed")
    refused_rule(h, lambda: h.schedule.settle(occurrence_id=ALPHA, settled_by="r-alpha", status="completed",
                                              reason="done"))


def test_unavailable_is_refused_once_work_completed(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    performed(h, ALPHA, "r-alpha", "w1")
    refused_rule(h, lambda: h.schedule.settle(occurrence_id=ALPHA, settled_by="r-alpha", status="unavailable",
                                              reason="nothing"))
    h.schedule.settle(occurrence_id=ALPHA, settled_by="r-alpha", status="completed", reason="done")


def test_a_refused_call_with_its_work_unsent_keeps_the_occurrence_from_completing(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call, report=sign_in_report(401))
    h.at("2026-12-07T02:06:00Z")
    h.owner_record("claude", 2)
    h.at("2026-12-07T02:07:00Z")
    refused_rule(h, lambda: h.schedule.settle(occurrence_id=ALPHA, settled_by="r-alpha", status="completed",
                                              reason="done"))


# -- report and request defects -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "report",
    [
        pytest.param({"kind": "maybe", "tokens": 0}, id="no-known-kind"),
        pytest.param({"kind": "result", "tokens": -1, "output": "ok"}, id="negative-tokens"),
        pytest.param({"kind": "result", "tokens": 1.5, "output": "ok"}, id="fractional-tokens"),
        pytest.param({"kind": "result", "tokens": 10, "output": "great"}, id="unknown-output"),
        pytest.param({"kind": "usage-limit", "tokens": 0}, id="usage-limit-without-observation"),
        pytest.param({"kind": "sign-in-needed", "tokens": 0, "httpStatus": 500}, id="sign-in-not-401-or-403"),
        pytest.param({"kind": "result", "tokens": 10, "output": "ok", "extra": 1}, id="unknown-field"),
    ],
)
def test_a_malformed_report_is_invalid_and_leaves_the_call_in_flight(tmp_path, report):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    refused(h, "INVALID", lambda: h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                                                      report=report))
    assert "endedAt" not in stored_call(h, ALPHA, admission.call)


def test_a_task_the_lane_does_not_name_is_refused_and_writes_nothing(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    with writes_nothing(h):
        try:
            answer = h.call(ALPHA, runner="r-alpha", task="poetry", work="w1")
        except ScheduleError as error:
            assert error.code in ("INVALID", "RULE"), error
        else:
            assert answer.admitted is False, answer


def test_a_deferral_or_settlement_with_a_call_in_flight_is_call_open_and_reconcile_ends_it(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    h.call(ALPHA, runner="r-alpha", work="w1")
    h.at("2026-12-07T02:06:00Z")
    refused(h, "CALL_OPEN", lambda: h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="logged-out"))
    refused(h, "CALL_OPEN", lambda: h.schedule.settle(occurrence_id=ALPHA, settled_by="r-alpha", status="partial",
                                                      reason="half"))


def test_a_call_admitted_or_ended_with_the_clock_behind_its_occurrence_is_invalid(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:10:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.at("2026-12-07T02:05:00Z")
    refused(h, "INVALID", lambda: h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                                                      report=result_report(10)))
    h.at("2026-12-07T02:11:00Z")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call, report=result_report(10))
    h.at("2026-12-07T02:06:00Z")
    refused(h, "INVALID", lambda: h.call(ALPHA, runner="r-alpha", work="w2"))


# -- more edges of the rules ----------------------------------------------------------------------------------------


def test_a_limit_that_resets_inside_tonights_window_still_waits_for_the_next_nights_slot(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                        report=usage_limit_report("2026-12-07T02:20:00Z"))
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="usage-limit")
    h.at("2026-12-07T02:25:00Z")  # the window has reset, and tonight's deadline (02:45) is still ahead
    with writes_nothing(h):
        tick = h.schedule.start(lane="alpha/basic", runner="r-alpha")
    assert (tick.kind, tick.until) == ("waiting", utc("2026-12-08T02:00:00Z"))


def test_the_window_of_an_account_reopens_after_its_reset(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                        report=usage_limit_report("2026-12-07T02:20:00Z"))
    h.at("2026-12-07T02:19:00Z")
    refusal(h, "limited", BETA, runner="r-beta", work="w1")
    h.at("2026-12-07T02:21:00Z")
    assert h.call(BETA, runner="r-beta", work="w1").dispatch is True
    refusal(h, "limited", ALPHA, runner="r-alpha", work="w2")  # alpha's own segment stays closed


def test_a_budget_deferral_of_a_weekly_lane_goes_to_its_night_of_the_next_iso_week(tmp_path):
    h = calls_harness(tmp_path, lanes=[weekly_lane(weekday=4)], weekly_tokens=200_000)
    week50 = weekly_id("alpha", "full", "2026-W50")
    h.at("2026-12-10T02:40:00Z")
    h.admit("alpha/full", "r1")
    h.at("2026-12-10T02:45:00Z")
    performed(h, week50, "r1", "w1", tokens=CALL_BOUND)
    refusal(h, "budget-exhausted", week50, runner="r1", work="w2")
    h.schedule.defer(occurrence_id=week50, runner="r1", reason="budget-exhausted", bound=CALL_BOUND)
    h.at("2026-12-14T02:40:00Z")  # Monday of the next ISO week: not this lane's night
    with writes_nothing(h):
        tick = h.schedule.start(lane="alpha/full", runner="r1")
    assert (tick.kind, tick.until) == ("waiting", utc("2026-12-17T02:40:00Z"))
    h.at("2026-12-17T02:40:00Z")
    tick = h.schedule.start(lane="alpha/full", runner="r1")
    assert (tick.kind, tick.occurrence.id) == ("resumed", week50)
    assert h.call(week50, runner="r1", work="w2").admitted is True, "the new week has room"


def test_a_call_in_flight_counts_at_its_bound_against_another_occurrences_room(tmp_path):
    h = calls_harness(tmp_path, weekly_tokens=200_000)
    running(h, "alpha", "beta")
    h.at("2026-12-07T02:05:00Z")
    assert h.call(ALPHA, runner="r-alpha", work="w1").admitted is True
    refusal(h, "budget-exhausted", BETA, runner="r-beta", work="w1")
    assert h.call(BETA, runner="r-beta", work="w1", bound=50_000).admitted is True


def test_the_ledger_week_is_the_commissions_local_iso_week(tmp_path):
    h = calls_harness(tmp_path, zone="Asia/Tokyo")
    # Monday 14 December, 02:00 in Tokyo, is still Sunday (ISO week 50) in UTC.
    h.at("2026-12-13T17:00:00Z")
    occurrence_id = h.admit("alpha/basic", "r-alpha").occurrence.id
    assert occurrence_id == basic_id("alpha", "2026-12-14")
    h.at("2026-12-13T17:05:00Z")
    admission = h.call(occurrence_id, runner="r-alpha", work="w1")
    assert admission.week == "2026-W51"
    assert "2026-W51" in h.ledger() and "2026-W50" not in h.ledger()


def test_a_closed_window_outlives_the_occurrence_that_observed_it(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                        report=usage_limit_report("2026-12-09T10:00:00Z"))
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="usage-limit")
    h.at("2026-12-07T02:06:00Z")
    h.schedule.settle(occurrence_id=ALPHA, settled_by="owner", status="deferred", reason="gave up")
    refusal(h, "limited", BETA, runner="r-beta", work="w1")


def test_any_report_showing_paid_overage_is_overage_a_lost_one_too(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta", "gamma")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    end = h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                              report=lost_report(observation("allowed", overage=True)))
    assert end.outcome == "lost"
    refusal(h, "overage-unverified", BETA, runner="r-beta", work="w1")
    assert h.call(GAMMA, runner="r-gamma", work="w1").admitted is True


def test_a_task_that_used_its_calls_is_refused_call_bound(tmp_path):
    h = calls_harness(tmp_path, lanes=three_lanes(max_calls=1))
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    performed(h, ALPHA, "r-alpha", "w1")
    refusal(h, "call-bound", ALPHA, runner="r-alpha", work="w2")


def test_completed_needs_a_running_occurrence(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    performed(h, ALPHA, "r-alpha", "w1")
    h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="logged-out")
    refused_rule(h, lambda: h.schedule.settle(occurrence_id=ALPHA, settled_by="owner", status="completed",
                                              reason="done"))
    h.schedule.settle(occurrence_id=ALPHA, settled_by="owner", status="partial", reason="w1 done")


def test_an_overage_stop_only_moves_forward_whatever_order_reports_land_in(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta")
    h.at("2026-12-07T02:05:00Z")
    a = h.call(ALPHA, runner="r-alpha", work="w1")
    b = h.call(BETA, runner="r-beta", work="w1")
    h.at("2026-12-07T02:20:00Z")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=a.call,
                        report=result_report(10, observed=observation("allowed", overage=True)))
    h.at("2026-12-07T02:10:00Z")
    h.schedule.end_call(occurrence_id=BETA, runner="r-beta", call=b.call,
                        report=result_report(10, observed=observation("allowed", overage=True)))
    assert h.account_state("claude")["overageObservedAt"] == "2026-12-07T02:20:00.000Z"


def test_a_report_cannot_grow_the_state_past_its_bound(tmp_path):
    """Seed invariant 14: the state is bounded (a worst-case occurrence, every observation at its longest,
    is about 14 KB) and growing commands refuse LIMIT above 768 KiB. A runner's observation is stored as
    received, so one report with a huge field must be refused (INVALID or LIMIT, nothing written) or stored
    cut down to what the schedule reads; it must never push the state past its bound."""
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    huge = {**observation("allowed"), "note": "x" * 900_000}
    head = h.head()
    try:
        h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call,
                            report=result_report(10, observed=huge))
    except ScheduleError as error:
        assert error.code in ("INVALID", "LIMIT"), error
        assert h.head() == head
    assert h.state_bytes() <= SCHEDULE_LIMITS.max_state_bytes


def test_a_late_report_for_a_call_reconcile_ended_as_lost_changes_nothing(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.at("2026-12-07T02:06:00Z")
    h.schedule.reconcile(occurrence_id=ALPHA, confirmation=confirmation("r-alpha"))
    h.at("2026-12-07T02:07:00Z")
    with writes_nothing(h), pytest.raises(ScheduleError):
        h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call, report=result_report(10))
    call = stored_call(h, ALPHA, admission.call)
    assert (call["outcome"], call["unknown"], call["debit"]) == ("lost", True, CALL_BOUND)


def test_a_closing_observation_closes_the_segment_until_its_checked_reset_and_no_longer(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    h.at("2026-12-07T02:05:00Z")
    performed(h, ALPHA, "r-alpha", "w1", observed=observation("rejected", resets_at="2026-12-07T02:20:00Z"))
    h.at("2026-12-07T02:19:00Z")
    refusal(h, "limited", ALPHA, runner="r-alpha", work="w2")
    h.at("2026-12-07T02:21:00Z")
    assert h.call(ALPHA, runner="r-alpha", work="w2").dispatch is True


def test_a_sign_in_deferral_needs_a_refusal_and_only_that_accounts_newer_record_releases_it(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha", "beta")
    h.at("2026-12-07T02:05:00Z")
    refused_rule(h, lambda: h.schedule.defer(occurrence_id=BETA, runner="r-beta", reason="sign-in-needed"))
    admission = h.call(ALPHA, runner="r-alpha", work="w1")
    h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=admission.call, report=sign_in_report(401))
    h.at("2026-12-07T02:06:00Z")
    h.owner_record("chatgpt", 2)
    refusal(h, "sign-in-needed", BETA, runner="r-beta", work="w1")
    h.owner_record("claude", 2)
    assert h.call(BETA, runner="r-beta", work="w1").dispatch is True


def test_a_call_ended_event_keeps_only_the_observation_fields_the_schedule_reads(tmp_path):
    h = calls_harness(tmp_path)
    running(h, "alpha")
    reported = {**observation(overage=False), "surprise": {"nested": 1}, "requestId": "abc"}
    performed(h, ALPHA, "r-alpha", "w1", observed=reported)

    [ended] = [event for event in h.events() if event.type == "call-ended"]
    assert ended.data["observation"] == {"status": "allowed", "rateLimitType": "five_hour", "isUsingOverage": False}
