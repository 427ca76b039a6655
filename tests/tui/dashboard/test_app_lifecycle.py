"""The Lifecycle view and the staged lanes' owner forms, driven with Textual's pilot.

The forms call `PipelineLanes`' own methods; a refusal shows its code and writes nothing (the pipeline's
head does not move). The full journey runs a candidate from a Top-N to security-approve with the runner and
reviewer steps through `PipelineLanes`, and the owner's approval through the form.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from factory_schedule.core import LifecycleSchedule, ManualClock
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineError, PipelineLanes
from factory_schedule.store import open_journal
from factory_schedule.tui.dashboard.app import ScheduleApp, build_app
from factory_schedule.tui.dashboard.screens.approval import ApprovalForm
from factory_schedule.tui.dashboard.screens.escalation import EscalationForm
from factory_schedule.tui.host.demo import DEMO_END, DEMO_HOST
from factory_schedule.tui.host.demo_lanes import APPROVAL
from tests.core.pipeline.pipeline_support import Runs, adopt, commission, drive_maturation, drive_promotion, top_n

from .test_app_journeys import _screen_text, confirm_write, form_error, make_app, reading_of, synchronously


def shown(app: ScheduleApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def pipeline_head(app: ScheduleApp) -> int:
    return app.journal.head(PIPELINE_AGGREGATE)


async def type_into(pilot, selector: str, text: str) -> None:
    field = pilot.app.screen.query_one(selector, Input)
    field.focus()
    field.value = ""
    await pilot.press(*text)
    await pilot.pause()


@synchronously
async def test_the_lifecycle_view_shows_each_staged_lane_and_the_bottleneck(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("p")
        await pilot.pause()
        sentence = reading_of(app).bottleneck.sentence
        assert shown(app, "#lifecycle-bottleneck") == sentence
        assert sentence.startswith("Bottleneck: gamma/basic's runner r-43 is gone")
        flow = shown(app, "#lifecycle-flow")
        assert "Top-N (2026-W50: 3 listed, 2 eligible)" in flow and "security-approve (1 waiting)" in flow
        promotion = shown(app, "#lifecycle-promotion")
        assert "pocket-farm (beta) at escalation" in promotion and "revisions 1/1" in promotion
        assert "reviewer run promotion-reviewer" in promotion and "next run not scheduled" in promotion
        assert "cooldown ended Wed 9 Dec 16:00" in promotion
        maturation = shown(app, "#lifecycle-maturation")
        assert "no current work" in maturation and "moss-garden release-ready" in maturation
        assert f"{APPROVAL}: public-publish of moss-garden" in shown(app, "#lifecycle-approvals")
        holds = shown(app, "#lifecycle-holds")
        for kind in ("dead-runner", "sign-in", "escalation", "approval", "usage-reset"):
            assert f"{kind}: " in holds


@synchronously
async def test_tonight_heads_with_the_bottleneck_and_counts_healths_findings(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        head = shown(app, "#tonight-bottleneck")
        health = reading_of(app).health
        assert health is not None
        count = len(health.findings)
        assert head.startswith(reading_of(app).bottleneck.sentence)
        # 3 errors: the demo's own two, and owner-key-missing (the fixture demo holds no owner key)
        assert f"Health: {count} findings, 3 of them errors (e shows them)." in head


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@synchronously
async def test_the_bottleneck_and_each_lanes_line_read_in_full(demo_url: str, size: tuple[int, int]) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=size) as pilot:
        await pilot.press("p")
        await pilot.pause()
        screen = " ".join(_screen_text(app).split())
        assert " ".join(reading_of(app).bottleneck.sentence.split()) in screen
        assert "pocket-farm (beta) at escalation: escalated to the owner" in screen


@synchronously
async def test_approving_with_the_form_records_the_owners_approval_for_one_use(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, ApprovalForm)
        assert "asked by run-publish" in shown(app, "#decision-request")
        evidence = shown(app, "#approval-evidence")
        assert "gate decision #1: GO" in evidence and "maturation: release-ready" in evidence
        await type_into(pilot, "#decision", "approve")
        await pilot.press("enter")
        await confirm_write(pilot)
        assert not isinstance(app.screen, ApprovalForm)
    state = PipelineLanes(open_journal(demo_url), ManualClock(DEMO_END)).state()
    approval = next(a for a in state.approvals if a.id == APPROVAL)
    assert (approval.approved, approval.decided_by, approval.used_at) == (True, "owner", None)
    lanes = PipelineLanes(open_journal(demo_url), ManualClock(DEMO_END.add(minutes=1)))
    used = lanes.record_external_action(approval=APPROVAL, candidate="moss-garden", action="public-publish",
                                        runner="run-publish")
    assert used.result["approval"]["usedBy"] == "run-publish"


@synchronously
async def test_denying_with_the_form_ends_the_request(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("v")
        await pilot.pause()
        await type_into(pilot, "#decision", "deny")
        await pilot.press("enter")
        await confirm_write(pilot)
        app.refresh_reading(force=True)
        await pilot.pause()
        assert "denied by owner" in shown(app, "#lifecycle-approvals")
        with pytest.raises(PipelineError) as refused:
            app.lanes.record_external_action(approval=APPROVAL, candidate="moss-garden", action="public-publish",
                                             runner="run-publish")
        assert refused.value.code == "APPROVAL_REQUIRED"


@synchronously
async def test_the_approval_form_checks_as_you_type_and_a_refusal_shows_its_code_and_writes_nothing(
        demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("v")
        await pilot.pause()
        await type_into(pilot, "#decision", "yes")
        assert form_error(app) == "decision: approve or deny"
        before = pipeline_head(app)
        assert isinstance(app.screen, ApprovalForm | EscalationForm)
        app.screen.submit()
        await pilot.pause()
        assert pipeline_head(app) == before and isinstance(app.screen, ApprovalForm)
        # Another process decides first (a refusal under the same command ID): the engine refuses the form's
        # approval, and the form says why.
        other = PipelineLanes(open_journal(demo_url), ManualClock(DEMO_END))
        other.decide_approval(approval=APPROVAL, decided_by="owner-phone", approved=False)
        before = pipeline_head(app)
        await type_into(pilot, "#decision", "approve")
        assert isinstance(app.screen, ApprovalForm | EscalationForm)
        app.screen.submit()
        await confirm_write(pilot)
        assert form_error(app) == (f"CONFLICT: pipeline/approval/{APPROVAL}/decision was recorded with a "
                                   "different request")
        assert pipeline_head(app) == before and isinstance(app.screen, ApprovalForm)


@pytest.mark.parametrize("decision", ["revise", "park"])
@synchronously
async def test_deciding_an_escalation_with_the_form_revises_or_parks(demo_url: str, decision: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, EscalationForm)
        request = shown(app, "#decision-request")
        assert "promotion task 20: pocket-farm (beta)" in request and "the brief was rejected 2 times" in request
        assert "review (task 19) by rev-p19" in shown(app, "#escalation-evidence")
        await type_into(pilot, "#decision", decision)
        await type_into(pilot, "#reason", "the testers count is in the new brief")
        await pilot.press("enter")
        await confirm_write(pilot)
        assert not isinstance(app.screen, EscalationForm)
        view = app.lanes.lane_view("promotion")
    if decision == "revise":
        assert view.wip[0]["stage"] == "brief" and view.wip[0]["grants"] == 1
    else:
        assert view.wip == [] and view.history[-1] == {"candidate": "pocket-farm", "outcome": "park",
                                                        "at": view.history[-1]["at"]}
        assert view.parked == 1


@synchronously
async def test_an_escalation_without_a_reason_is_refused_before_anything_is_written(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("d")
        await pilot.pause()
        await type_into(pilot, "#decision", "park")
        before = pipeline_head(app)
        assert isinstance(app.screen, ApprovalForm | EscalationForm)
        app.screen.submit()
        await pilot.pause()
        assert form_error(app) == "reason: needed"
        assert pipeline_head(app) == before and isinstance(app.screen, EscalationForm)


@synchronously
async def test_the_owner_forms_say_when_nothing_waits_for_them(tmp_path: Path) -> None:
    app = build_app(f"sqlite:///{tmp_path / 'empty.db'}", ManualClock(DEMO_END), None, host=DEMO_HOST,
                    journal_label="sqlite:///empty.db")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for key in ("v", "d"):
            await pilot.press(key)
            await pilot.pause()
            assert not isinstance(app.screen, (ApprovalForm, EscalationForm))
        await pilot.press("p")
        await pilot.pause()
        assert "no settings yet" in shown(app, "#lifecycle-promotion")


@synchronously
async def test_a_candidate_goes_from_top_n_to_security_approve_and_the_owner_approves_it_in_the_dashboard(
        tmp_path: Path) -> None:
    """The full lifecycle: runner and reviewer steps through PipelineLanes, the owner's approval through the form."""
    from tests.core.pipeline.pipeline_support import Harness

    url = f"sqlite:///{tmp_path / 'journal.db'}"
    clock = ManualClock("2026-12-07T01:00:00Z")
    journal = open_journal(url)
    document = commission()
    schedule = LifecycleSchedule(journal, clock)
    schedule.record_commission(document)
    for account in ("claude", "chatgpt"):  # signed in: no account stop holds every call ahead of the lanes
        schedule.record_account(account=account, sequence=1, sign_in="owner@factory.example", overage=False,
                                recorded_by="owner")
    h = Harness(url, clock, PipelineLanes(journal, clock))
    h.lanes.record_settings(document)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    app = build_app(url, clock, None, journal=journal, host=DEMO_HOST, journal_label="sqlite:///journal.db")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("p")
        await pilot.pause()
        assert "Top-N (2026-W50: 2 listed, 2 eligible)" in shown(app, "#lifecycle-flow")
        runs = Runs()
        drive_promotion(h, runs, until="review")
        app.refresh_reading(force=True)
        await pilot.pause()
        assert "promotion's bravo at review waits for the reviewer" in shown(app, "#lifecycle-bottleneck")
        go = drive_promotion(h, runs)
        assert go["outcome"] == "go"
        done = drive_maturation(h, runs, go=go["decision"])
        assert done["outcome"] == "release-ready"
        h.tick()
        h.lanes.request_approval(approval="publish-bravo", candidate="bravo", action="public-publish",
                                 requested_by="run-publish", reason="ship the private build")
        app.refresh_reading(force=True)
        await pilot.pause()
        assert "release-ready (1) → security-approve (1 waiting)" in shown(app, "#lifecycle-flow")
        assert "bravo waits at security-approve for public-publish" in shown(app, "#lifecycle-bottleneck")
        with pytest.raises(PipelineError) as refused:  # nothing public before the owner's record
            h.lanes.record_external_action(approval="publish-bravo", candidate="bravo", action="public-publish",
                                           runner="run-publish")
        assert refused.value.code == "APPROVAL_REQUIRED"
        h.tick()
        await pilot.press("v")
        await pilot.pause()
        assert "publish-bravo: public-publish of bravo" in shown(app, "#decision-request")
        await type_into(pilot, "#decision", "approve")
        await pilot.press("enter")
        await confirm_write(pilot)
        assert "security-approve (0 waiting)" in shown(app, "#lifecycle-flow")
        assert "publish-bravo: public-publish of bravo" in shown(app, "#lifecycle-approvals")
        assert "approved by owner, not used yet" in shown(app, "#lifecycle-approvals")
    events = [event for event in journal.history(PIPELINE_AGGREGATE) if event.type == "approval-decided"]
    assert len(events) == 1 and events[0].data["approved"] is True and events[0].data["decidedBy"] == "owner"
    h.tick()
    used = h.lanes.record_external_action(approval="publish-bravo", candidate="bravo", action="public-publish",
                                          runner="run-publish")
    assert used.result["approval"]["usedBy"] == "run-publish"


@synchronously
async def test_journal_text_in_the_lifecycle_view_and_forms_is_shown_as_text(tmp_path: Path) -> None:
    """Markup and a bidirectional override the engine accepts in a reason are shown, never obeyed."""
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    clock = ManualClock("2026-12-07T01:00:00Z")
    journal = open_journal(url)
    lanes = PipelineLanes(journal, clock)
    adopt(lanes, commission())
    hostile = "[red]ship[/red] \u202eit"
    lanes.request_approval(approval="publish-x", candidate="bravo", action="public-publish",
                           requested_by="[b]run[/b]", reason=hostile)
    app = build_app(url, clock, None, journal=journal, host=DEMO_HOST, journal_label="sqlite:///journal.db")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("p")
        await pilot.pause()
        approvals = shown(app, "#lifecycle-approvals")
        assert "asked by [b]run[/b]" in approvals and "\u202e" not in approvals
        holds = shown(app, "#lifecycle-holds")
        assert "asked by [b]run[/b]" in holds
        await pilot.press("v")
        await pilot.pause()
        evidence = shown(app, "#decision-request")
        assert "[red]ship[/red] \\u202eit" in evidence and "\u202e" not in evidence
