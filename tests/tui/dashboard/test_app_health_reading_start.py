"""The polling dashboard starts its health reading at the refresh that draws its first reading.

The first reading (no health) is painted at once; the reading with the chain check and health starts as soon as
that paint is on screen, while the views behind the tabs mount. Mounting them holds the UI thread for a while
(about a second on a busy host); a health reading that waited for the refresh after that one would show Health
that much later.
"""

from __future__ import annotations

import time
from typing import Any

from tests.tui.dashboard.test_app_journeys import SIZE, make_app, synchronously

MOUNTING = 1.0  # seconds the views' mount holds the UI thread here


@synchronously
async def test_the_health_reading_starts_at_the_refresh_that_draws_the_first_reading_not_after_the_views_mount(
        demo_url: str) -> None:
    app = make_app(demo_url, poll=30)
    started: dict[str, float] = {}
    read_now = app.read_now

    def timed(complete: bool = True) -> Any:
        started.setdefault("complete" if complete else "first", time.monotonic())
        return read_now(complete)

    mount = app._mount_hidden_views

    async def slow_mount() -> None:
        started["mounting"] = time.monotonic()
        time.sleep(MOUNTING)  # the UI thread busy, as composing and styling five views keeps it
        started["mounted"] = time.monotonic()
        await mount()

    app.read_now = timed  # type: ignore[method-assign]
    app._mount_hidden_views = slow_mount  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + 30
        while (app.reading is None or app.reading.health is None) and time.monotonic() < deadline:
            await pilot.pause(0.05)
        assert app.reading is not None and app.reading.health is not None
    assert started["first"] < started["mounting"], started  # the views mount once the first reading is drawn
    assert started["first"] < started["complete"] < started["mounted"], started  # health does not wait for them
