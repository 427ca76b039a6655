"""A monkey at the keyboard: random keys on every view and form, at 80x24 and 120x40.

Whatever is pressed, the dashboard never raises, and the journal changes only on the key that
confirms a confirm step: the test reads both records' versions from the journal before and after
every key. The number of examples is bounded so the suite stays quick; under CI (CI=true) the
examples are derandomized, so a run is the same every time.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.widgets import Button

from factory_schedule.core import SCHEDULE_AGGREGATE, ManualClock
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE
from factory_schedule.tui.dashboard.app import ScheduleApp, build_app
from factory_schedule.tui.dashboard.screens.confirm import ConfirmStep
from factory_schedule.tui.host.demo import DEMO_END, DEMO_HOST, DEMO_JOURNAL_LABEL, demo_template

# Every view's and form's key first, so each example starts somewhere the owner can.
STARTS = ("t", "p", "o", "l", "a", "h", "e", "s", "r", "c", "v", "d")
KEYS = (
    *STARTS, "x", "q", "slash", "question_mark", "f1", "f2", "f5", "ctrl+p",
    "enter", "enter", "enter", "tab", "tab", "shift+tab", "escape", "space", "backspace",
    "up", "down", "left", "right", "home", "end", "pageup", "pagedown",
    "0", "1", "2", "9", "y", "n", "z", "a", "@", "-", "left_square_bracket", "right_square_bracket",
)  # fmt: skip
SIZES = ((80, 24), (120, 40))


def heads(app: ScheduleApp) -> tuple[int, int]:
    return app.journal.head(SCHEDULE_AGGREGATE), app.journal.head(PIPELINE_AGGREGATE)


async def monkey(url: str, size: tuple[int, int], start: str, keys: list[str]) -> int:
    """Press `start`, then `keys`, checking every key; the number of keys that wrote."""
    writes = 0
    app = build_app(url, ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label=DEMO_JOURNAL_LABEL)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for key in (start, *keys):
            if not app.is_running:  # q on a view quits: the example ends there
                break
            before, screen, focused = heads(app), app.screen, app.focused
            await pilot.press(key)
            await pilot.pause()
            if heads(app) != before:
                assert isinstance(screen, ConfirmStep), f"{key} wrote to the journal on {screen!r}"
                assert isinstance(focused, Button) and focused.id == "confirm" and key in ("enter", "space"), (
                    f"{key} on {focused!r} wrote to the journal")
                assert screen.answered
                writes += 1
    assert app._exception is None, app._exception
    return writes


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
@settings(max_examples=5, derandomize=os.environ.get("CI") == "true")
@given(start=st.sampled_from(STARTS), keys=st.lists(st.sampled_from(KEYS), min_size=1, max_size=30))
def test_random_keys_never_raise_and_write_only_when_a_confirm_step_is_confirmed(
        size: tuple[int, int], start: str, keys: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="factory-schedule-monkey-") as folder:
        copy = Path(folder) / "journal.db"
        shutil.copy(demo_template(), copy)
        asyncio.run(monkey(f"sqlite:///{copy}", size, start, keys))


FORM_RUN = ["enter", "enter", "escape", "tab", "a", "1", "enter", "tab", "space", "enter", "shift+tab", "enter",
            "escape", "escape"]
# Every view in turn, with the keys an owner might hit there (x repairs on Health, / and letters on Occurrences).
VIEWS_RUN = ["p", "down", "enter", "o", "down", "slash", "z", "enter", "1", "escape", "l", "tab", "a", "up", "h",
             "left_square_bracket", "right_square_bracket", "e", "down", "x", "escape", "x", "enter", "question_mark",
             "escape", "t", "enter"]


@pytest.mark.parametrize("start", ["s", "r", "c", "v", "d", "views"])
def test_each_view_and_form_takes_a_fixed_key_run_without_a_stray_write(start: str) -> None:
    """Every screen and form at least once, whatever hypothesis draws. A form's first two Enters submit it
    prefilled and confirm it, so the sign-in and the reconcile forms do write."""
    keys = VIEWS_RUN if start == "views" else FORM_RUN
    with tempfile.TemporaryDirectory(prefix="factory-schedule-monkey-") as folder:
        copy = Path(folder) / "journal.db"
        shutil.copy(demo_template(), copy)
        writes = [asyncio.run(monkey(f"sqlite:///{copy}", size, "t" if start == "views" else start, keys))
                  for size in SIZES]
    if start in ("s", "r"):
        assert writes[0] >= 1, "the prefilled form, submitted and confirmed, writes"


def test_ci_runs_the_monkey_on_the_same_keys_every_time() -> None:
    """.ci/run says it is CI (the monkey's examples are then derandomized: a fixed seed), and they are few."""
    script = (Path(__file__).resolve().parents[3] / ".ci" / "run").read_text(encoding="utf-8")
    assert "export CI=true" in script.splitlines()
    test = test_random_keys_never_raise_and_write_only_when_a_confirm_step_is_confirmed
    assert test._hypothesis_internal_use_settings.max_examples <= 10  # type: ignore[attr-defined]
