"""What every dashboard test shares: a pause that also waits for a form's journal calls.

A confirmed form reads the owner key and writes off the UI thread (`ScheduleForm._off_the_ui_thread`), so
that a journal that stops answering leaves the screen answering. A test's `pilot.pause()` waits for the
screen to settle; here it also waits for those calls to end, so what a test reads after a confirm is what
the write left, under any load.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from factory_schedule.tui.dashboard.screens.base import FORM_WRITE


@pytest.fixture(autouse=True)
def pauses_wait_for_form_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    pause = Pilot.pause

    async def pause_then_wait_for_writes(self: Pilot[Any], delay: float | None = None) -> None:
        await pause(self, delay)
        # A form's journal calls run one after another (the owner key read, then the write): each may start the next.
        while writes := [worker for worker in self.app.workers if worker.group == FORM_WRITE and worker.is_running]:
            await self.app.workers.wait_for_complete(writes)
            await pause(self)

    monkeypatch.setattr(Pilot, "pause", pause_then_wait_for_writes)
