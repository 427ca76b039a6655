"""The dashboard is safe to type in: typing never runs a command, and every write is confirmed once.

Each test drives the real app with keys (Textual's pilot) over a copy of the demo journal, and
reads the journal itself before and after: a form's write lands only after its confirm step was
shown and confirmed, once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, DataTable, Input, Select, Static, Switch, TabbedContent

from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule, ManualClock
from factory_schedule.core.commission import parse_commission, proposed_commission
from factory_schedule.core.owner_commission import record_commission
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineLanes, PipelineSettings
from factory_schedule.store import open_journal
from factory_schedule.tui.dashboard.app import ScheduleApp, build_app
from factory_schedule.tui.dashboard.screens.account import RecordAccountForm
from factory_schedule.tui.dashboard.screens.base import ScheduleForm
from factory_schedule.tui.dashboard.screens.commission import CommissionForm, HeldSettings, difference, revised
from factory_schedule.tui.dashboard.screens.confirm import ConfirmStep
from factory_schedule.tui.host.demo import DEMO_END, DEMO_HOST

from .test_app_journeys import SIZE, _screen_text, confirm_write, form_error, make_app, reading_of, synchronously
from .test_app_lifecycle import type_into

FORM_KEYS = ("s", "r", "c", "v", "d")


def heads(app: ScheduleApp) -> tuple[int, int]:
    """Both records' versions, read from the journal (not from the app's reading)."""
    return app.journal.head(SCHEDULE_AGGREGATE), app.journal.head(PIPELINE_AGGREGATE)


def notices(app: ScheduleApp) -> list[str]:
    return [notification.message for notification in app._notifications]


async def open_form(pilot: Any, key: str) -> ScheduleForm:
    await pilot.press(key)
    await pilot.pause()
    form = pilot.app.screen
    assert isinstance(form, ScheduleForm), f"{key} opened {form!r}"
    return form


# -- 1. typing never runs a command ------------------------------------------------------------


@synchronously
async def test_the_placeholders_example_typed_right_after_o_lands_in_the_id_box_and_switches_nothing(
    demo_url: str,
) -> None:
    """The ID box has the focus when Occurrences opens: the example the box itself shows, typed at once, is
    typed (its a, l, p, h are the keys of four views, and an s, c, r, v or d would open a form)."""
    from factory_schedule.tui.dashboard.widgets.occurrences import PLACEHOLDER

    example = PLACEHOLDER.split("e.g. ", 1)[1].split()[0]
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        await pilot.pause()
        before = heads(app)
        await pilot.press(*example)
        await pilot.pause()
        assert app.query_one("#status-id", Input).value == example
        assert app.query_one(TabbedContent).active == "occurrences" and not isinstance(app.screen, ScheduleForm)
        await pilot.press(*"svcrdq")  # a product's initials: typed too, and the dashboard still runs
        await pilot.pause()
        assert app.is_running and app.query_one(TabbedContent).active == "occurrences"
        assert app.query_one("#status-id", Input).value == example + "svcrdq"
        assert heads(app) == before


@synchronously
async def test_escape_leaves_the_id_box_and_gives_the_views_keys_back(demo_url: str) -> None:
    """Escape moves to the list, where a letter is a view's key again; a key no view has starts an ID."""
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        await pilot.pause()
        before = heads(app)
        await pilot.press(*"delta/basic/2026-12-17", "escape")
        await pilot.pause()
        assert isinstance(app.focused, DataTable), "Escape leaves the field"
        app.query_one("#status-id", Input).value = ""
        await pilot.press(*"2026")  # digits are no key of the dashboard's: they start an ID in the field
        await pilot.pause()
        assert app.query_one("#status-id", Input).value == "2026" and isinstance(app.focused, Input)
        await pilot.press("escape", "l")
        await pilot.pause()
        assert app.query_one(TabbedContent).active == "ledger"
        assert heads(app) == before


@synchronously
async def test_while_the_id_box_has_the_focus_the_footer_says_how_to_leave_it(demo_url: str) -> None:
    """The box takes every printable key, so the footer offers none of the views' keys: it names Escape."""
    from textual.widgets._footer import FooterKey  # not exported by textual.widgets; the footer's one key

    app = make_app(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("o")
        await pilot.pause()
        shown = [key.description for key in app.query(FooterKey)]
        assert shown and "the list" in shown[0], shown


@synchronously
async def test_tab_and_shift_tab_reach_the_id_box_and_the_list(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        await pilot.pause()
        field, table = app.query_one("#status-id", Input), app.query_one("#occurrences-table", DataTable)
        for direction in ("tab", "shift+tab"):
            reached = set()
            for _ in range(6):
                await pilot.press(direction)
                reached.add(id(app.focused))
            assert {id(field), id(table)} <= reached, direction


@synchronously
async def test_after_a_lookup_the_list_has_the_keys_again(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o", *"alpha/basic/2026-12-17", "enter")
        await pilot.pause()
        assert isinstance(app.focused, DataTable)
        await pilot.press("e")
        await pilot.pause()
        assert app.query_one(TabbedContent).active == "health", "e after a lookup opens Health, it is not typed"


@pytest.mark.parametrize("key", FORM_KEYS)
@synchronously
async def test_tab_and_shift_tab_reach_every_field_of_each_form(demo_url: str, key: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        form = await open_form(pilot, key)
        fields = {id(w) for w in form.query("Input, Select, Switch, Button") if w.focusable}
        for direction in ("tab", "shift+tab"):
            reached = set()
            for _ in range(len(fields) + 2):
                await pilot.press(direction)
                reached.add(id(app.focused))
            assert fields <= reached, f"{direction} misses a field of the {type(form).__name__}"


@pytest.mark.parametrize("key", FORM_KEYS)
@synchronously
async def test_a_view_key_pressed_in_a_form_opens_nothing_and_writes_nothing(demo_url: str, key: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, key)
        before = heads(app)
        for button in form.query(Button):
            button.focus()
            await pilot.press(*"tplahesrcvdq?")
            assert app.screen is form and app.is_running
        assert heads(app) == before


# -- 2. every write confirmed once and only once -----------------------------------------------


@synchronously
async def test_a_double_enter_records_once_and_closes_the_form_once(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        before, _ = heads(app)
        await open_form(pilot, "s")
        await pilot.press("enter", "enter", "enter", "enter")  # the form's Enter, the step's, then two more
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, ScheduleForm | ConfirmStep)
        assert heads(app)[0] == before + 1
        assert [n for n in notices(app) if n.startswith("Recorded")], notices(app)


@synchronously
async def test_a_replayed_record_closes_the_form_once_and_says_already_recorded(demo_url: str) -> None:
    """Another writer recorded the very same record while the form was open: the engine replays it."""
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "s")
        assert isinstance(form, RecordAccountForm)
        LifecycleSchedule(open_journal(app.journal.where), ManualClock(DEMO_END)).record_account(
            account="chatgpt", sequence=2, sign_in="owner@factory.example", overage=False, recorded_by="owner")
        before = heads(app)
        await pilot.press("enter")
        await confirm_write(pilot)
        assert not isinstance(app.screen, ScheduleForm | ConfirmStep)
        assert heads(app) == before
        assert [n for n in notices(app) if n.startswith("Already recorded")], notices(app)


@synchronously
async def test_enter_on_the_overage_switch_never_toggles_it_nor_records(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "s")
        before = heads(app)
        form.query_one("#overage", Switch).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert form.query_one("#overage", Switch).value is False
        step = app.screen
        assert isinstance(step, ConfirmStep), "Enter on the switch shows the confirm step, it records nothing"
        assert ("paid overage", "off (not allowed): calls are admitted") in step.confirmation.values
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is form and heads(app) == before


@synchronously
async def test_the_confirm_step_shows_every_value_and_the_difference_from_the_current_record(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "s")
        form.query_one("#sign-in", Input).value = "second@factory.example"
        form.query_one("#recorded-by", Input).value = "the owner"
        await pilot.press("enter")
        await pilot.pause()
        step = app.screen
        assert isinstance(step, ConfirmStep)
        assert dict(step.confirmation.values) == {
            "account": "chatgpt", "sequence": "#2", "sign-in": "second@factory.example",
            "paid overage": "off (not allowed): calls are admitted", "recorded by": "the owner"}
        assert step.confirmation.changes == (
            "replaces record #1",
            "sign-in owner@factory.example → second@factory.example (a runner presenting the old one is refused)")
        assert not step.confirmation.second_look


# -- 3. a second look for what cannot be undone or changes the schedule --------------------------


async def second_look(pilot: Any, form: ScheduleForm) -> ConfirmStep:
    """Submit: the step names the consequence and Enter there goes back, writing nothing."""
    app = pilot.app
    before = heads(app)
    form.submit()
    await pilot.pause()
    step = app.screen
    assert isinstance(step, ConfirmStep) and step.confirmation.second_look
    assert isinstance(app.focused, Button) and app.focused.id == "back"
    await pilot.press("enter")
    await pilot.pause()
    assert app.screen is form and heads(app) == before, "the Enter that opened a second look cannot record"
    form.submit()
    return await confirm_write(pilot)


@synchronously
async def test_an_account_record_with_overage_on_needs_a_second_look(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "s")
        form.query_one("#overage", Switch).focus()
        await pilot.press("space")
        step = await second_look(pilot, form)
        assert step.confirmation.consequence is not None
        assert "no chatgpt call is admitted" in step.confirmation.consequence
        assert "paid overage off → on" in step.confirmation.changes
        state = next(a for a in reading_of(app).view.accounts if a.account == "chatgpt")  # type: ignore[union-attr]
        assert state.record is not None and state.record.overage is True


@synchronously
async def test_park_needs_a_second_look_naming_that_the_candidate_is_never_selected_again(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "d")
        form.query_one("#decision", Input).value = "park"
        form.query_one("#reason", Input).value = "no testers"
        step = await second_look(pilot, form)
        assert step.confirmation.consequence == "pocket-farm is never selected again: there is no unpark."
        view = app.lanes.lane_view("promotion")
        assert view is not None and view.parked == 1


@synchronously
async def test_approving_a_public_action_needs_a_second_look(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "v")
        form.query_one("#decision", Input).value = "approve"
        step = await second_look(pilot, form)
        assert step.confirmation.consequence is not None
        assert "publish moss-garden in public" in step.confirmation.consequence


@synchronously
async def test_a_second_look_says_on_screen_that_enter_goes_back_and_how_to_confirm(demo_url: str) -> None:
    """Its Enter goes back: without a word on screen, the owner's Enter looks like a write that did nothing."""
    app = make_app(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        form = await open_form(pilot, "v")
        form.query_one("#decision", Input).value = "approve"
        form.submit()
        await pilot.pause()
        step = app.screen
        assert isinstance(step, ConfirmStep) and step.confirmation.second_look
        how = str(step.query_one("#confirm-how", Static).render())
        assert "Enter goes back" in how and f"Tab, then Enter: {step.confirmation.confirm_label}" in how
        assert step.query_one("#confirm-how", Static).region.bottom <= 24, "the hint is on screen at 80x24"
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, (ConfirmStep, ScheduleForm)), "Tab, then Enter records it"


@synchronously
async def test_a_deny_or_a_revise_is_confirmed_once_without_a_second_look(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "v")
        form.query_one("#decision", Input).value = "deny"
        form.submit()
        step = await confirm_write(pilot)
        assert not step.confirmation.second_look


def _pipeline_journal(tmp_path: Path) -> str:
    """An own journal whose commission schedules the staged lanes' runs (portfolio/promotion and the rest)."""
    url = f"sqlite:///{tmp_path / 'own.db'}"
    journal = open_journal(url)
    LifecycleSchedule(journal, ManualClock("2026-12-01T12:00:00Z")).record_commission(
        proposed_commission(["alpha"], "2026-12-02", 5_000_000, pipeline=True))
    journal.close()
    return url


def test_the_difference_the_owner_confirms_names_each_change_to_the_staged_lanes_settings() -> None:
    """The revision the owner signs carries the staged lanes' settings: a change to them is shown like any other."""
    current = proposed_commission(["alpha"], "2026-12-02", 5_000_000, pipeline=True)
    settings = {**current["pipeline"], "stallHours": 25}
    assert difference(current, {**current, "revision": 2, "pipeline": settings}) == [
        f"pipeline.stallHours: {current['pipeline'].get('stallHours')} → 25"]
    trimmed = {key: value for key, value in current["pipeline"].items() if key != "topN"}  # topN left at its default
    assert difference(current, {**current, "revision": 2, "pipeline": trimmed}) == ["no change but the revision number"]
    without = {key: value for key, value in current.items() if key != "pipeline"}
    assert difference(current, {**without, "revision": 2}) == [
        "- pipeline settings (the staged lanes keep the ones they hold)"]
    assert difference(without, {**current, "revision": 2}) == ["+ pipeline settings for the staged lanes"]
    assert difference(None, current) == [f"first commission: {len(current['lanes'])} lanes, with settings for the "
                                         "staged lanes"]
    assert difference(current, current)[0].startswith("the revision in force, unchanged: recording it again records "
                                                      "only its settings")


@synchronously
async def test_settings_the_staged_lanes_lost_are_confirmed_against_the_ones_they_hold(tmp_path: Path) -> None:
    """Revision 2's settings (stallHours 48) were lost: the lanes run on revision 1's. The next revision copies
    revision 2's, so against the commission in force it changes nothing; against what the lanes hold, recording it
    changes stallHours, and the confirm step says so before the owner signs it."""
    url = f"sqlite:///{tmp_path / 'own.db'}"
    journal = open_journal(url)
    schedule = LifecycleSchedule(journal, ManualClock("2026-12-01T12:00:00Z"))
    first = proposed_commission(["alpha"], "2026-12-02", 5_000_000, pipeline=True)
    record_commission(schedule, first)
    held = PipelineLanes(journal, schedule.clock).state()
    assert held is not None
    schedule.record_commission({**first, "revision": 2, "pipeline": {**first["pipeline"], "stallHours": 48}})
    journal.close()
    app = build_app(url, ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label="sqlite:///own.db")
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "c")
        assert isinstance(form, CommissionForm) and form.candidate is not None
        form.submit()
        await pilot.pause()
        step = app.screen
        assert isinstance(step, ConfirmStep)
        assert f"pipeline.stallHours: {held.settings.stall_hours} → 48 (the staged lanes hold revision 1's)" in (
            step.confirmation.changes), step.confirmation.changes


def test_a_product_added_to_a_commission_with_staged_lanes_moves_their_runs_after_its_basic_lane() -> None:
    """The staged lanes' runs start after every basic lane; a third Product's basic lane takes 02:40, where the
    promotion run was: kept where it was, the revision is refused. The runs take the proposal's times, which follow
    the new basic lane, and nothing else of them changes."""
    current = proposed_commission(["alpha", "beta"], "2026-12-02", 5_000_000, pipeline=True)
    current["lanes"] = [{**lane, "deadlineMinutes": 33} if lane["lane"] == "portfolio/promotion" else lane
                        for lane in current["lanes"]]  # the owner's own choice, which a revision keeps
    candidate = revised(current, proposed_commission(["alpha", "beta", "gamma"], "2026-12-02", 5_000_000,
                                                     revision=2, pipeline=True))
    parse_commission(candidate)
    runs = {lane["lane"]: lane for lane in candidate["lanes"] if lane["product"] == "portfolio"}
    assert (runs["portfolio/promotion"]["time"], runs["portfolio/promotion"]["deadlineMinutes"]) == ("03:00", 33)
    assert runs["portfolio/maturation-reviewer"]["time"] == "04:00"
    assert runs["portfolio/audit"]["time"] == "02:30"  # a weekly portfolio run is no staged lanes' run
    unchanged = revised(current, proposed_commission(["alpha", "beta"], "2026-12-02", 6_000_000, revision=2,
                                                     pipeline=True))
    assert unchanged["lanes"] == current["lanes"]  # no new basic lane: the runs stay where the owner put them


@synchronously
async def test_a_product_typed_into_the_form_over_staged_lanes_previews_a_revision_the_rules_take(
        tmp_path: Path) -> None:
    """The owner's way: the Products field, Enter. The revision is built as the form builds it (the proposal for
    the new Products, with the staged lanes' runs), and previews without a refusal."""
    url = f"sqlite:///{tmp_path / 'own.db'}"
    journal = open_journal(url)
    LifecycleSchedule(journal, ManualClock("2026-12-01T12:00:00Z")).record_commission(
        proposed_commission(["alpha", "beta"], "2026-12-02", 5_000_000, pipeline=True))
    journal.close()
    app = build_app(url, ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label="sqlite:///own.db")
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "c")
        assert isinstance(form, CommissionForm)
        await type_into(pilot, "#products", "alpha, beta, gamma")
        await pilot.press("enter")
        await pilot.pause()
        assert form_error(app).strip() == "", form_error(app)
        assert form.candidate is not None
        parse_commission(form.candidate)
        runs = {lane["lane"]: lane["time"] for lane in form.candidate["lanes"] if lane["product"] == "portfolio"}
        assert runs["portfolio/promotion"] == "03:00"


@synchronously
async def test_enter_on_a_proposal_the_rules_refuse_says_their_reason(tmp_path: Path) -> None:
    app = build_app(f"sqlite:///{tmp_path / 'empty.db'}", ManualClock(DEMO_END), None, host=DEMO_HOST)
    async with app.run_test(size=SIZE) as pilot:
        await open_form(pilot, "c")
        await type_into(pilot, "#weekly-tokens", "12000000")
        await type_into(pilot, "#products", "Alpha")
        await pilot.press("enter")
        await pilot.pause()
        assert "is not a Product ID" in form_error(app), form_error(app)
        assert isinstance(app.screen, CommissionForm)


def test_a_revision_putting_back_the_settings_the_staged_lanes_hold_says_it_changes_the_commission_s() -> None:
    """Revision 2's settings (stallHours 48) were lost; revision 3 puts back revision 1's, which the lanes hold.
    Recording it changes nothing in the lanes, but it changes the commission's own settings back: the owner signs
    that, so the confirm step says it instead of "no change but the revision number"."""
    first = proposed_commission(["alpha"], "2026-12-02", 5_000_000, pipeline=True)
    lanes_hold = PipelineSettings.model_validate(first["pipeline"]).model_dump(mode="json", by_alias=True)
    lost = {**first, "revision": 2, "pipeline": {**first["pipeline"], "stallHours": 48}}
    assert difference(lost, {**first, "revision": 3}, HeldSettings(1, lanes_hold)) == [
        f"pipeline.stallHours: 48 → {lanes_hold['stallHours']} (revision 2's settings, which the staged lanes never "
        "received; they hold revision 1's, which this revision carries)"]
    assert difference(lost, {**lost, "revision": 3}, HeldSettings(1, lanes_hold)) == [
        f"pipeline.stallHours: {lanes_hold['stallHours']} → 48 (the staged lanes hold revision 1's)"]


@synchronously
async def test_settings_the_staged_lanes_never_received_are_confirmed_as_new_to_them(tmp_path: Path) -> None:
    """Revision 1's settings were lost before the lanes held any: the next revision with the same settings gives the
    lanes their first settings, and the confirm step says so instead of "no change"."""
    url = _pipeline_journal(tmp_path)  # the revision recorded through the schedule alone: the lanes hold none
    app = build_app(url, ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label="sqlite:///own.db")
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "c")
        form.submit()
        await pilot.pause()
        step = app.screen
        assert isinstance(step, ConfirmStep)
        assert "+ pipeline settings for the staged lanes (they hold none: the revision in force's were lost)" in (
            step.confirmation.changes), step.confirmation.changes


@synchronously
async def test_the_commission_form_starts_from_the_current_lanes_and_drops_none(tmp_path: Path) -> None:
    url = _pipeline_journal(tmp_path)
    app = build_app(url, ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label="sqlite:///own.db")
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "c")
        assert isinstance(form, CommissionForm) and form.candidate is not None
        current = reading_of(app).commission
        assert current is not None
        assert [lane["lane"] for lane in form.candidate["lanes"]] == [lane["lane"] for lane in current["lanes"]]
        assert form.candidate["effectiveFrom"] == current["effectiveFrom"] == "2026-12-02"
        assert form.candidate["pipeline"] == current["pipeline"]
        assert difference(current, form.candidate) == ["no change but the revision number"]
        form.submit()
        step = await confirm_write(pilot)
        assert not step.confirmation.second_look
        assert reading_of(app).commission == {**current, "revision": 2}


@synchronously
async def test_a_revision_that_removes_a_lane_needs_a_second_look_naming_it(tmp_path: Path) -> None:
    url = _pipeline_journal(tmp_path)
    app = build_app(url, ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label="sqlite:///own.db")
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "c")
        assert isinstance(form, CommissionForm)
        form.query_one("#products", Input).value = "beta"  # alpha left out: its lanes go
        form.use_proposed()
        await pilot.pause()
        step = await second_look(pilot, form)
        assert step.confirmation.consequence is not None
        assert "alpha/basic will no longer run" in step.confirmation.consequence
        assert "portfolio/promotion" not in step.confirmation.consequence
        lanes = {lane["lane"] for lane in (reading_of(app).commission or {})["lanes"]}
        assert "alpha/basic" not in lanes and "beta/basic" in lanes and "portfolio/promotion" in lanes


@synchronously
async def test_the_account_select_still_opens_with_enter(demo_url: str) -> None:
    """Enter keeps its meaning on a select (it opens the list): only a text field's or a button's Enter submits."""
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "s")
        before = heads(app)
        form.query_one("#account", Select).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmStep) and heads(app) == before


# -- 5. stale forms refresh -----------------------------------------------------------------------


def _other_dashboard(app: ScheduleApp) -> LifecycleSchedule:
    """Another writer on the same journal file (a second dashboard, the CLI)."""
    return LifecycleSchedule(open_journal(app.journal.where), ManualClock(DEMO_END))


def notice(form: ScheduleForm) -> str:
    return str(form.query_one("#form-notice").render())


@synchronously
async def test_a_stale_sign_in_form_refreshes_and_says_what_another_writer_recorded(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "s")
        await pilot.press("enter")  # the confirm step is open when the journal moves
        await pilot.pause()
        assert isinstance(app.screen, ConfirmStep)
        _other_dashboard(app).record_account(account="chatgpt", sequence=2, sign_in="phone@factory.example",
                                             overage=False, recorded_by="owner-phone")
        before = heads(app)
        app.refresh_reading(force=True)
        await pilot.pause()
        assert app.screen is form, "the confirm step of values that no longer hold is taken back"
        assert "Another writer recorded chatgpt record #2 (by owner-phone)" in notice(form)
        assert form.query_one("#sequence", Input).value == "3"
        assert form.query_one("#sign-in", Input).value == "phone@factory.example"
        assert heads(app) == before
        await pilot.press("enter")
        await confirm_write(pilot)
        assert heads(app)[0] == before[0] + 1 and not isinstance(app.screen, ScheduleForm)


@synchronously
async def test_a_stale_approval_form_says_the_request_was_decided_and_records_nothing(demo_url: str) -> None:
    from factory_schedule.core.pipeline import PipelineLanes
    from factory_schedule.tui.host.demo_lanes import APPROVAL

    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "v")
        PipelineLanes(open_journal(app.journal.where), ManualClock(DEMO_END)).decide_approval(
            approval=APPROVAL, decided_by="owner-phone", approved=False)
        app.refresh_reading(force=True)
        await pilot.pause()
        assert f"Another writer denied {APPROVAL}" in notice(form) and "owner-phone" in notice(form)
        before = heads(app)
        form.query_one("#decision", Input).value = "approve"
        await pilot.pause()
        form.submit()
        await pilot.pause()
        assert app.screen is form and "nothing left to decide" in str(form.query_one("#form-error").render())
        assert heads(app) == before


@synchronously
async def test_a_stale_commission_form_rebuilds_its_preview_from_the_new_revision(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "c")
        assert isinstance(form, CommissionForm) and form.candidate is not None
        current = reading_of(app).commission
        assert current is not None
        _other_dashboard(app).record_commission({**current, "revision": 3, "weeklyTokens": 7_000_000})
        app.refresh_reading(force=True)
        await pilot.pause()
        assert "Another writer recorded commission revision 3" in notice(form)
        assert form.candidate is not None and form.candidate["revision"] == 4


# -- 4. at 80x24 a form opens with what it decides and where to decide it both on screen ------------


@pytest.mark.parametrize("key, decides, field", [
    ("v", "#decision-request", "#decision"),
    ("d", "#decision-request", "#decision"),
    ("s", "#current-record", "#sign-in"),
    ("r", "#reconcile-about", "#evidence"),
    ("c", "#preview-scroll", "#products"),
])
@synchronously
async def test_at_80x24_a_form_opens_with_what_it_decides_and_its_field_on_screen(
        demo_url: str, key: str, decides: str, field: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        form = await open_form(pilot, key)
        await pilot.pause()
        screen = form.region
        for selector in (decides, field, "#submit"):
            region = form.query_one(selector).region
            assert region.height > 0 and screen.contains_region(region), f"{selector} is off screen: {region}"
        assert app.focused is form.query_one(field) or key == "r"


@synchronously
async def test_the_overage_switch_says_its_state_in_words(demo_url: str) -> None:
    from textual.widgets import Label

    app = make_app(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        form = await open_form(pilot, "s")
        assert str(form.query_one("#overage-word", Label).render()).strip() == "off"
        form.query_one("#overage", Switch).focus()
        await pilot.press("space")
        await pilot.pause()
        assert str(form.query_one("#overage-word", Label).render()).strip() == "ON: no call is admitted"


# -- 8. words and layout: every column on screen reads in full -----------------------------------------------


def _cells_cut(table: DataTable, screen: str) -> list[str]:
    """The cells of the rows on screen whose whole text is not on screen (a cut cell shows its start only)."""
    lines = screen.splitlines()
    top = table.region.y + 1  # below the header
    shown_rows = range(int(table.scroll_y), int(table.scroll_y) + max(0, table.region.height - 1))
    cut = []
    for offset, row in enumerate(shown_rows):
        if row >= table.row_count or top + offset >= len(lines):
            break
        line = lines[top + offset]
        for value in table.get_row_at(row):
            text = getattr(value, "plain", str(value)).strip()
            if text and text not in line:
                cut.append(text)
    return cut


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize("view, table_id", [("t", "#tonight-table"), ("o", "#occurrences-table"),
                                             ("l", "#ledger-table")])
@synchronously
async def test_every_column_of_a_view_reads_in_full(demo_url: str, size: tuple[int, int], view: str,
                                                    table_id: str) -> None:
    """A column that does not fit whole leaves the table (its words are in the selected row's line or detail);
    none is cut: every header and every cell of the rows on screen reads in full, and the table is never
    wider than its place (no sideways scroll)."""
    app = make_app(demo_url)
    async with app.run_test(size=size) as pilot:
        await pilot.press(view)
        await pilot.pause()
        table = app.query_one(table_id, DataTable)
        screen = _screen_text(app)
        header = screen.splitlines()[table.region.y]
        assert table.max_scroll_x == 0, f"{table_id} is wider than the screen"
        for column in table.columns.values():
            assert column.label.plain in header, f"header {column.label.plain!r} is cut: {header!r}"
        assert not _cells_cut(table, screen)
        if view == "t":
            assert len(table.columns) == (5 if size[0] >= 120 else 2), "at 120 columns Tonight shows every column"


@synchronously
async def test_at_80_columns_the_selected_lane_line_says_what_the_left_out_columns_say(demo_url: str) -> None:
    """The state, the slot's occurrence: what the narrow table leaves out is in the selected lane's line."""
    app = make_app(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = " ".join(_screen_text(app).split())
        assert "alpha/basic/2026-12-20 deferred (usage-limit)" in screen


@synchronously
async def test_at_80x24_the_reconcile_form_shows_its_evidence_in_full_and_follows_an_edit(demo_url: str) -> None:
    """The evidence field is one line; the evidence it will record reads whole above it, not only its tail."""
    from factory_schedule.tui.dashboard.widgets.health import dead_runner_evidence

    app = make_app(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        form = await open_form(pilot, "r")
        await pilot.pause()
        health = reading_of(app).health
        evidence = dead_runner_evidence(health, "discovery/gamma/basic/2026-12-20")
        assert evidence
        screen = " ".join(_screen_text(app).replace("│", " ").split())
        assert " ".join(evidence.split()) in screen, "the evidence is cut"
        field = form.query_one("#evidence", Input)
        field.focus()
        await pilot.press("end", *" and pid 4194999 is free")
        await pilot.pause()
        screen = " ".join(_screen_text(app).replace("│", " ").split())
        assert "and pid 4194999 is free" in screen


# -- 8. words: the sign-in form's "Recorded by" -------------------------------------------------------------


@synchronously
async def test_recorded_by_defaults_to_who_recorded_the_journals_newest_account_record(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        LifecycleSchedule(open_journal(app.journal.where), ManualClock(DEMO_END)).record_account(
            account="chatgpt", sequence=2, sign_in="owner@factory.example", overage=False, recorded_by="ada")
        app.refresh_reading(force=True)
        form = await open_form(pilot, "s")
        assert form.query_one("#recorded-by", Input).value == "ada"


@synchronously
async def test_a_new_journals_recorded_by_is_blank_and_says_what_to_type(tmp_path: Path) -> None:
    """No record names the owner yet: the field makes up no name (it would be kept in the journal as theirs)."""
    app = build_app(f"sqlite:///{tmp_path / 'empty.db'}", ManualClock(DEMO_END), None, host=DEMO_HOST)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot, "s")
        field = form.query_one("#recorded-by", Input)
        assert field.value == "" and "your name" in field.placeholder


def test_the_empty_journals_first_steps_name_the_command_and_a_docs_page_that_has_the_section() -> None:
    """Not "see the README": the command to run and the page (and its section) that says more."""
    import re

    from factory_schedule.tui.dashboard.widgets.empty import FIRST_STEPS

    words = FIRST_STEPS.plain
    assert "factory-schedule check" in words and "README" not in words
    page, section = re.search(r"(docs/\S+\.md),\s+section \"([^\"]+)\"", words).groups()  # type: ignore[union-attr]
    root = Path(__file__).resolve().parents[3]
    assert f"## {section}" in (root / page).read_text(encoding="utf-8")


@synchronously
async def test_an_id_pasted_with_o_in_one_burst_lands_whole_in_the_id_box(demo_url: str) -> None:
    """`o` and the ID arrive before the dashboard draws again (a paste, or a fast typist over ssh): every
    key after `o` is the ID's, none is lost and none runs as a view's key."""
    from textual import events

    wanted = "alpha/basic/2026-12-20"
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        before = heads(app)
        for character in "o" + wanted:  # all queued at once, as the terminal delivers a burst
            key = {"/": "slash", "-": "minus"}.get(character, character)
            app.post_message(events.Key(key, character))
        await pilot.pause()
        await pilot.pause()
        assert app.query_one(TabbedContent).active == "occurrences" and not isinstance(app.screen, ScheduleForm)
        assert app.query_one("#status-id", Input).value == wanted
        assert heads(app) == before


@synchronously
async def test_o_opens_an_empty_id_box_so_the_id_typed_after_it_is_the_whole_id(demo_url: str) -> None:
    """What an earlier visit left in the box is not kept: `o` then an ID looks up that ID, never the
    earlier text with the ID appended."""
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o", *"alpha/basic/2026-12-20", "enter")
        await pilot.pause()
        await pilot.press("t", "o", *"beta/basic/2026-12-20")
        await pilot.pause()
        assert app.query_one("#status-id", Input).value == "beta/basic/2026-12-20"


@synchronously
async def test_enter_with_a_field_still_needed_moves_to_that_field(demo_url: str) -> None:
    """The escalation's decision typed and Enter pressed: the reason it still needs has the focus, so what
    the owner types next is the reason (not typed again into the decision), and nothing is written."""
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        before = heads(app)
        await open_form(pilot, "d")
        await pilot.press(*"revise", "enter")
        await pilot.pause()
        assert app.screen.query_one("#reason", Input).has_focus
        await pilot.press(*"one more round", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmStep) and heads(app) == before
