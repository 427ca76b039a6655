"""The footer at any width: the owner's actions and `?` stay on screen, the views' keys leave it first.

At 80 columns (a new terminal's size) every key does not fit; the tab row names the views and `?` lists
their keys, so the views' keys are the ones the footer leaves out. Their bindings stay: the keys work.
"""

from __future__ import annotations

import io
from typing import ClassVar

import pytest
from rich.console import Console
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.pilot import Pilot
from textual.widgets import TabbedContent
from textual.widgets._footer import FooterKey  # not exported by textual.widgets; the footer's one key

from factory_schedule.tui.dashboard.app import VIEWS, ScheduleApp
from factory_schedule.tui.dashboard.widgets.footer import KeysFooter

from .test_app_journeys import _screen_text, make_app, synchronously

NARROW = (80, 24)
WIDE = (160, 40)
VIEW_KEYS = [key for _view, _label, key in VIEWS]
OWNER_KEYS = "s Sign-in r Confirm c Commission ? Keys"
EVERY_KEY = "t Tonight p Lifecycle o Occurrences l Ledger a Accounts h History e Health " + OWNER_KEYS


def footer_line(app: ScheduleApp) -> str:
    """The terminal's last line, where the footer is docked."""
    return " ".join(_screen_text(app).splitlines()[app.size.height - 1].split())


async def open_view(pilot: Pilot[None], key: str) -> None:
    await pilot.press(key, *(["escape"] if key == "o" else []))  # Occurrences opens in its ID box
    await pilot.pause()


@pytest.mark.parametrize("view_key", VIEW_KEYS)
@synchronously
async def test_at_80_columns_the_footer_shows_the_owner_actions_and_the_keys_key_in_each_view(
        demo_url: str, view_key: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=NARROW) as pilot:
        await open_view(pilot, view_key)
        line = footer_line(app)
        assert line.startswith(OWNER_KEYS), line
        for key in app.query(FooterKey):
            assert not key.display or key.region.right <= NARROW[0], f"{key.key} ends at column {key.region.right}"


@synchronously
async def test_at_80_columns_every_view_key_still_opens_its_view(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=NARROW) as pilot:
        await pilot.pause()
        assert "Ledger" not in footer_line(app)
        for view, _label, key in [*VIEWS[1:], VIEWS[0]]:
            await open_view(pilot, key)
            assert app.query_one(TabbedContent).active == view, key


@synchronously
async def test_at_80_columns_the_keys_panel_still_lists_the_view_keys(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=NARROW) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        console = Console(width=200, record=True, file=io.StringIO())
        for widget in app.query("KeyPanel *"):
            console.print(widget.render())
        panel = console.export_text()
        for _view, label, _key in VIEWS:
            assert label in panel, label


@pytest.mark.parametrize("view_key", VIEW_KEYS)
@synchronously
async def test_at_160_columns_the_footer_shows_every_key_in_each_view(demo_url: str, view_key: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=WIDE) as pilot:
        await open_view(pilot, view_key)
        assert footer_line(app).startswith(EVERY_KEY), footer_line(app)


@synchronously
async def test_the_footer_switches_as_the_terminal_is_resized_without_rebuilding_its_keys(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=WIDE) as pilot:
        await pilot.pause()
        keys = set(app.query(FooterKey))
        assert footer_line(app).startswith(EVERY_KEY)
        await pilot.resize_terminal(*NARROW)
        await pilot.pause()
        assert footer_line(app).startswith(OWNER_KEYS), footer_line(app)
        await pilot.resize_terminal(*WIDE)
        await pilot.pause()
        assert footer_line(app).startswith(EVERY_KEY), footer_line(app)
        assert set(app.query(FooterKey)) == keys  # a resize shows or hides the keys composed, never remounts them


@pytest.mark.parametrize("view_key", VIEW_KEYS)
@synchronously
async def test_the_footer_measures_its_keys_as_wide_as_they_are_laid_out(demo_url: str, view_key: str) -> None:
    """The width the footer decides by is the one Textual lays its keys out in: the last key's end and margin."""
    app = make_app(demo_url)
    async with app.run_test(size=WIDE) as pilot:
        await open_view(pilot, view_key)
        footer = app.query_one(KeysFooter)
        last = max(app.query(FooterKey), key=lambda key: key.region.right)
        assert footer.keys_width() == last.region.right - footer.region.x + last.styles.margin.right


class FooterOnly(App[None]):
    BINDINGS: ClassVar = [Binding("t", "bell", "Tonight"),
                          Binding("question_mark", "focus_next", "Keys", key_display="?")]

    def __init__(self, compact: bool) -> None:
        super().__init__()
        self.compact = compact

    def compose(self) -> ComposeResult:
        yield KeysFooter(spare_keys=["t"], compact=self.compact, show_command_palette=False)


@pytest.mark.parametrize("compact", [True, False])
@synchronously
async def test_a_footer_hides_its_spare_keys_only_when_narrower_than_its_keys_compact_or_not(compact: bool) -> None:
    """Its measure of its keys is the width Textual lays them out in, compact or not."""
    app = FooterOnly(compact)
    async with app.run_test(size=(60, 5)) as pilot:
        await pilot.pause()
        footer = app.query_one(KeysFooter)
        last = max(app.query(FooterKey), key=lambda key: key.region.right)
        assert footer.keys_width() == last.region.right + last.styles.margin.right
        fits = footer.keys_width()
        both, one = ["t", "question_mark"], ["question_mark"]
        for width, shown in ((fits, both), (fits - 1, one), (fits, both)):
            await pilot.resize_terminal(width, 5)
            await pilot.pause()
            assert [key.key for key in app.query(FooterKey) if key.display] == shown, width
