"""The README's and the docs' pictures: the demo journal, the dashboard headless at 120x40, an SVG per view and form.

Run `factory-schedule screenshots` (or `--out FOLDER`). The demo is built the same
way every time (seeded, fixed instants, host `demo-mac`), so the pictures change
only when the dashboard or the engine does.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from factory_schedule.tui.dashboard.app import ScheduleApp, build_app
from factory_schedule.tui.host.demo import DEMO_HOST, DEMO_JOURNAL_LABEL, build_demo

SIZE = (120, 40)
# (file name, keys pressed from the Tonight view, keys pressed afterwards to close it)
SHOTS: tuple[tuple[str, str, str], ...] = (
    ("tonight", "t", ""),
    ("lifecycle", "p", ""),
    ("occurrences", "o", ""),
    ("ledger", "l", ""),
    ("accounts", "a", ""),
    ("history", "h", ""),
    ("health", "e", ""),
    ("form-sign-in", "s", "escape"),
    ("form-reconcile", "r", "escape"),
    ("form-commission", "c", "escape"),
    ("form-approval", "v", "escape"),
    ("form-escalation", "d", "escape"),
)


async def _shoot(app: ScheduleApp, out: Path) -> list[Path]:
    saved: list[Path] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for name, keys, close in SHOTS:
            for key in keys:
                await pilot.press(key)
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()
            saved.append(Path(app.save_screenshot(filename=f"{name}.svg", path=str(out))))
            if close:
                await pilot.press(close)
                await pilot.pause()
    return saved


def save_screenshots(out: str | Path = "screenshots") -> list[Path]:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="factory-schedule-shots-") as work:
        url = f"sqlite:///{Path(work) / 'journal.db'}"
        driver = build_demo(url, host=DEMO_HOST)
        app = build_app(
            url, driver.clock, None, journal=driver.journal, host=DEMO_HOST, journal_label=DEMO_JOURNAL_LABEL
        )
        app.animation_level = "none"
        try:
            return asyncio.run(_shoot(app, folder))
        finally:
            driver.journal.close()
