"""The factory's bottleneck: every hold, most pressing first, each saying what frees it.

The staged lanes' states come from the real engine on a file journal (tests/core/pipeline/pipeline_support.py);
the schedule's side is health's findings and the lanes' plans as plain values, and a real demo view where an
occurrence's deferral matters.
"""

from __future__ import annotations

import dataclasses

import pendulum
import pytest

from factory_schedule.core import LifecycleSchedule, ManualClock, proposed_commission
from factory_schedule.core.bottleneck import KIND_ORDER, Bottleneck, find_bottleneck
from factory_schedule.core.health import Finding
from factory_schedule.core.results import LanePlan
from factory_schedule.store import open_journal
from tests.core.pipeline.pipeline_support import (
    Runs,
    claim_next,
    drive_maturation,
    drive_promotion,
    make_harness,
    promotion_report,
    top_n,
)

NOW = pendulum.datetime(2026, 12, 20, 3, 0, tz="UTC")
DEAD = Finding("dead-runner", "error", "runner r-43 is gone",
               {"occurrence": "discovery/gamma/basic/2026-12-20", "runner": "r-43"})
SIGN_IN = Finding("account-sign-in-needed", "error", "chatgpt refused sign-in", {"account": "chatgpt"})
WAITING = LanePlan("beta/basic", "wait", None, "discovery/beta/basic/2026-12-20",
                   "waits for a newer chatgpt sign-in record")


def verdict(state=None, findings=(), plans=(), view=None, now=NOW):
    return find_bottleneck(pipeline=state, view=view, plans=plans, findings=findings, now=now, zone="Europe/London")


def test_an_empty_journal_waits_for_the_owners_first_commission():
    found = verdict()
    assert [hold.kind for hold in found.holds] == ["no-commission"]
    assert found.sentence == ("Bottleneck: nothing is commissioned yet; the owner's first commission (its lanes, "
                              "times and weekly ceiling) starts the factory.")


def test_a_ready_lane_waits_for_its_run_to_start_the_next_work(tmp_path):
    h = make_harness(tmp_path, threshold=1)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    assert "promotion can select from 2 eligible candidates; the promotion run starts it" in verdict(
        h.lanes.state()).sentence
    drive_promotion(h, Runs())
    state = h.lanes.state()
    holds = verdict(state, now=pendulum.parse(state.updated_at)).holds
    assert [hold.kind for hold in holds] == ["start", "start"]
    assert holds[1].sentence.startswith("maturation's GO #1 (bravo) waits to be taken in; the maturation run")


def test_with_no_hold_the_sentence_says_nothing_holds_the_factory():
    assert Bottleneck(()).sentence == "Nothing holds the factory: every lane waits only for its next slot."


def test_lanes_without_settings_say_a_commission_revision_starts_them(tmp_path):
    schedule = LifecycleSchedule(open_journal(f"sqlite:///{tmp_path / 'journal.db'}"), ManualClock(NOW))
    schedule.record_commission(proposed_commission(products=["alpha"], effective_from="2026-12-07",
                                                   weekly_tokens=40_000_000))
    view = schedule.read()
    kinds = [hold.kind for hold in verdict(view=view).holds]
    assert "no-settings" in kinds


def test_a_dead_runner_is_the_bottleneck_and_its_confirmation_frees_it(tmp_path):
    h = make_harness(tmp_path)
    found = verdict(h.lanes.state(), findings=[SIGN_IN, DEAD], plans=[WAITING])
    assert found.current.kind == "dead-runner"
    assert "gamma/basic's runner r-43 is gone" in found.sentence and "reconcile" in found.sentence
    assert found.sentence.endswith("frees gamma/basic (and 2 more holds).")  # the sign-in, too few Top-N


def test_a_dead_runner_the_evidence_settles_is_freed_by_the_next_tick_not_the_owner(tmp_path):
    h = make_harness(tmp_path)
    conclusive = Finding(DEAD.kind, DEAD.severity, DEAD.message, DEAD.evidence, repairable=True)
    found = verdict(h.lanes.state(), findings=[conclusive])
    assert found.current.kind == "dead-runner"
    assert "gamma/basic's runner r-43 is gone" in found.sentence
    assert "the next tick (or `health --repair`) reconciles it and frees gamma/basic" in found.sentence
    assert "owner" not in found.current.frees


def test_a_sign_in_names_the_lanes_it_holds_and_the_record_that_frees_them(tmp_path):
    found = verdict(make_harness(tmp_path).lanes.state(), findings=[SIGN_IN], plans=[WAITING])
    assert found.current.kind == "sign-in"
    assert "holding beta/basic" in found.sentence and "chatgpt sign-in record frees it" in found.sentence


def test_an_escalation_after_the_reject_cap_waits_for_the_owners_decision(tmp_path):
    h = make_harness(tmp_path, maxRevisions=1)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    runs = Runs()
    drive_promotion(h, runs, until="review")
    for _ in range(2):  # reject the brief twice: the second is past maxRevisions 1
        runner, task = claim_next(h, "promotion", runs)
        h.lanes.review(lane="promotion", task=task["task"], runner=runner,
                       report=promotion_report("review", task["task"], review="reject"))
        if h.lanes.lane_view("promotion").tasks[0]["stage"] == "brief":
            runner, task = claim_next(h, "promotion", runs)
            h.lanes.report(lane="promotion", task=task["task"], runner=runner,
                           report=promotion_report("brief", task["task"]))
    found = verdict(h.lanes.state())
    assert found.current.kind == "escalation"
    assert "bravo is escalated to the owner (the brief was rejected 2 times)" in found.sentence
    assert "revise brief once more, or park" in found.sentence


def test_a_release_ready_candidate_waits_at_security_approve_for_the_owners_approval(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    runs = Runs()
    go = drive_promotion(h, runs)["decision"]
    drive_maturation(h, runs, go=go)
    h.lanes.request_approval(approval="publish-1", candidate="bravo", action="public-publish",
                             requested_by="run-pub", reason="ship it")
    found = verdict(h.lanes.state(), now=pendulum.parse(h.lanes.state().updated_at))
    assert found.current.kind == "approval"
    assert "bravo waits at security-approve for public-publish" in found.sentence
    assert "owner's approval record frees it" in found.sentence
    h.lanes.decide_approval(approval="publish-1", decided_by="owner", approved=True)
    assert "approval" not in [hold.kind for hold in verdict(h.lanes.state()).holds]


def test_a_pending_review_waits_for_the_reviewer_runs_next_slot_or_a_run_by_hand(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    drive_promotion(h, Runs(), until="review")
    found = verdict(h.lanes.state())
    assert found.current.kind == "review"
    assert "promotion's bravo at review waits for the reviewer" in found.sentence
    assert ("the promotion-reviewer run frees it; next run not scheduled (the commission has no "
            "portfolio/promotion-reviewer lane") in found.sentence
    slot = LanePlan("portfolio/promotion-reviewer", "admit", pendulum.datetime(2026, 12, 21, 4, 0, tz="UTC"),
                    "discovery/portfolio/promotion-reviewer/2026-12-21")
    scheduled = verdict(h.lanes.state(), plans=[slot])
    assert "the promotion-reviewer run frees it; next run Mon 21 Dec 04:00." in scheduled.sentence
    running = LanePlan(slot.lane, "running", None, slot.occurrence_id, "runner r-9")
    assert "next run running now" in verdict(h.lanes.state(), plans=[running]).sentence


def test_pending_work_waits_for_the_scheduler_run_and_claimed_work_for_its_report(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    runs = Runs()
    drive_promotion(h, runs, until="evidence")
    assert "the promotion run frees it" in verdict(h.lanes.state()).sentence
    claim_next(h, "promotion", runs)
    found = verdict(h.lanes.state())
    assert found.current.kind == "claimed" and "is with runner run-2" in found.sentence


def test_a_lane_in_cooldown_says_when_it_ends(tmp_path):
    h = make_harness(tmp_path, cooldownHours=24)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie", "delta"))
    drive_promotion(h, Runs())
    state = h.lanes.state()
    found = verdict(state, now=pendulum.parse(state.updated_at))
    cooling = [hold for hold in found.holds if hold.kind == "cooldown"]
    assert [hold.holds for hold in cooling] == ["promotion's next selection cools down"]
    assert cooling[0].frees == "the cooldown ends Tue 8 Dec 01:14"  # 24 h after the GO at 01:14, London time
    later = verdict(state, now=pendulum.parse(state.updated_at).add(hours=25))
    assert "cooldown" not in [hold.kind for hold in later.holds]


def test_promotion_below_its_threshold_waits_for_a_richer_top_n(tmp_path):
    h = make_harness(tmp_path, threshold=3)
    assert "no Top-N yet" in verdict(h.lanes.state()).sentence
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    found = verdict(h.lanes.state())
    assert found.current.kind == "threshold"
    assert "promotion has 2 eligible candidates" in found.sentence and "at least 3" in found.sentence


def test_the_owners_holds_come_before_those_that_free_themselves(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    drive_promotion(h, Runs(), until="review")
    found = verdict(h.lanes.state(), findings=[SIGN_IN, DEAD], plans=[WAITING])
    kinds = [hold.kind for hold in found.holds]
    assert kinds == ["dead-runner", "sign-in", "review"]
    assert kinds == sorted(kinds, key=KIND_ORDER.index)


@pytest.mark.parametrize("reason", ["usage-limit", "budget-exhausted"])
def test_a_deferred_occurrence_frees_itself_at_its_next_slot(demo_url, reason):
    """The demo's alpha/basic hit the claude usage limit; the same occurrence past the weekly ceiling instead."""
    schedule = LifecycleSchedule(open_journal(demo_url), ManualClock(pendulum.datetime(2026, 12, 20, 2, 56, tz="UTC")))
    view = schedule.read()
    plans = schedule.plan()
    if reason == "budget-exhausted":
        occurrences = []
        for occurrence in view.occurrences:
            if occurrence.state == "deferred" and occurrence.deferrals[-1].reason == "usage-limit":
                spent = occurrence.deferrals[-1].model_copy(update={"reason": reason, "bound": 1000, "account": None})
                occurrence = occurrence.model_copy(update={"deferrals": [*occurrence.deferrals[:-1], spent]})
            occurrences.append(occurrence)
        view = dataclasses.replace(view, occurrences=occurrences)
    found = verdict(view=view, plans=plans)
    deferred = [hold for hold in found.holds if hold.kind in ("usage-reset", "ceiling")]
    assert len(deferred) == 1
    assert deferred[0].holds.startswith("alpha/basic")
    assert "Mon 21 Dec 02:00" in deferred[0].frees
    if reason == "budget-exhausted":
        assert deferred[0].kind == "ceiling" and "weekly ceiling" in deferred[0].holds
    else:
        assert deferred[0].kind == "usage-reset" and "usage limit" in deferred[0].holds


LOGGED_OUT = Finding("lane-logged-out", "error", "alpha/basic is signed out",
                     {"lane": "alpha/basic", "occurrence": "discovery/alpha/basic/2026-12-20", "accounts": ["claude"]})
UNREACHABLE = Finding("provider-unreachable", "error", "beta/basic could not reach its provider",
                      {"lane": "beta/basic", "occurrence": "discovery/beta/basic/2026-12-20", "accounts": ["claude"]})
STOPPED = Finding("provider-stopped-account", "error", "the provider stopped the account",
                  {"lane": "gamma/basic", "occurrence": "discovery/gamma/basic/2026-12-20", "accounts": ["chatgpt"]})


def test_a_signed_out_cli_is_the_owners_hold_and_named_by_the_sentence(tmp_path):
    found = verdict(make_harness(tmp_path).lanes.state(), findings=[LOGGED_OUT])
    assert found.current.kind == "sign-in"
    assert found.sentence.startswith(
        "Bottleneck: alpha/basic's CLI is signed out on the machine that runs it; the owner signing")


@pytest.mark.parametrize(("finding", "words"), [
    (UNREACHABLE, "beta/basic could not reach its provider; the machine's network"),
    (STOPPED, "the provider stopped gamma/basic's chatgpt account; the owner's plan, spend cap or credits"),
])
def test_a_provider_that_holds_a_lane_comes_before_the_holds_that_free_themselves(tmp_path, finding, words):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    drive_promotion(h, Runs(), until="review")
    found = verdict(h.lanes.state(), findings=[finding])
    assert [hold.kind for hold in found.holds] == ["provider", "review"]
    assert found.sentence.startswith(f"Bottleneck: {words}")


def _claude_overage_on(tmp_path):
    """An own journal whose claude record has paid overage on: health's account findings over it, and its view."""
    from factory_schedule.core.health import account_findings

    clock = ManualClock("2026-12-05T12:00:00Z")
    schedule = LifecycleSchedule(open_journal(f"sqlite:///{tmp_path / 'own.db'}"), clock)
    schedule.record_commission(proposed_commission(["alpha"], "2026-12-06", 5_000_000))
    for account, overage in (("claude", True), ("chatgpt", False)):
        schedule.record_account(account=account, sequence=1, sign_in="owner@factory.example", overage=overage,
                                recorded_by="owner")
    view = schedule.read()
    return view, account_findings(view, clock.now())


def test_an_account_record_with_overage_on_is_the_bottleneck_before_the_staged_lanes_holds(tmp_path):
    view, findings = _claude_overage_on(tmp_path)
    assert [f.kind for f in findings] == ["account-overage-on"]
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    drive_promotion(h, Runs(), until="review")
    found = verdict(h.lanes.state(), findings=findings, view=view)
    assert found.current.kind == "account"
    assert found.sentence.startswith("Bottleneck: claude's record has paid overage on, so no claude call is admitted, "
                                     "holding alpha/basic, alpha/full")
    assert "a claude record with overage off frees it" in found.sentence


@pytest.mark.parametrize("finding, words", [
    (Finding("account-window-closed", "warning", "claude's usage window is closed",
             {"account": "claude", "until": "2026-12-20T05:00:00+00:00"}),
     "claude's usage window is closed until Sun 20 Dec 05:00, holding alpha/basic"),
    (Finding("account-overage", "error", "paid overage was observed on claude", {"account": "claude"}),
     "paid overage was observed on claude, holding alpha/basic"),
    (Finding("account-record-expired", "error", "claude's owner record expired", {"account": "claude"}),
     "claude's owner record has expired, holding alpha/basic"),
    (Finding("account-no-record", "error", "claude has no owner record", {"account": "claude"}),
     "claude has no owner record, holding alpha/basic"),
])
def test_every_account_stop_that_blocks_all_calls_comes_before_an_approval(tmp_path, finding, words):
    view, _findings = _claude_overage_on(tmp_path)
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    runs = Runs()
    drive_maturation(h, runs, go=drive_promotion(h, runs)["decision"])
    h.lanes.request_approval(approval="publish-1", candidate="bravo", action="public-publish",
                             requested_by="run-pub", reason="ship it")
    found = verdict(h.lanes.state(), findings=[finding], view=view)
    kinds = [hold.kind for hold in found.holds]
    assert kinds.index(found.current.kind) == 0 and kinds.index("approval") > 0
    assert found.sentence.startswith(f"Bottleneck: {words}"), found.sentence


def test_a_sign_in_mismatch_names_both_identities_as_the_owners_hold(tmp_path):
    mismatch = Finding("sign-in-mismatch", "error", "mismatch",
                       {"lane": "alpha/basic", "observed": "me@example.org", "account": "claude",
                        "recorded": "owner@example.com"})
    found = verdict(make_harness(tmp_path).lanes.state(), findings=[mismatch])
    assert found.current.kind == "sign-in"
    assert found.sentence.startswith("Bottleneck: alpha/basic's CLI is signed in as me@example.org, but the claude "
                                     "record names owner@example.com; the owner recording")
