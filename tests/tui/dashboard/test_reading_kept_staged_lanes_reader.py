"""The dashboard reads the staged lanes through one reader kept across its readings, and it never answers stale.

The reader's codec takes a stored text byte for byte the last one it read as the state it checked then, so a
reading of an unchanged journal checks nothing again. What another process writes is read as written, and what it
forges (one member edited, the head resealed, every other member byte for byte one the reader has checked) is
CORRUPT in the very next reading, as it is for a fresh reader. Real SQLite files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.store import open_journal
from factory_schedule.tui.dashboard.reading import Reading, take_reading
from tests.core.pipeline.test_pipeline_edited_by_another_process import RESEALED, _claimed, _forge_and_reseal
from tests.core.pipeline.test_pipeline_scheduled_runs import World

HOST = "test-host"


class Dashboard:
    """The dashboard's side of the journal: its own connection, its schedule and its kept staged lanes' reader."""

    def __init__(self, path: Path, world: World) -> None:
        self.journal = open_journal(f"sqlite:///{path}")
        self.clock = world.clock
        self.schedule = LifecycleSchedule(self.journal, self.clock)
        self.staged = PipelineLanes(self.journal, self.clock)

    def reading(self) -> Reading:
        return take_reading(self.journal, self.schedule, self.clock.now(), None, host=HOST, staged=self.staged)


def _fresh_state(path: Path, world: World) -> object:
    return PipelineLanes(open_journal(f"sqlite:///{path}"), world.clock).state()


def test_a_reading_through_the_kept_reader_shows_what_another_process_wrote(tmp_path: Path) -> None:
    world = _claimed(tmp_path)
    path = tmp_path / "journal.db"
    dashboard = Dashboard(path, world)
    before = dashboard.reading()
    assert before.pipeline == _fresh_state(path, world) and before.pipeline_problem is None
    world.lanes.record_top_n(week="2026-W50", candidates=[{"candidate": "tall-tower", "product": "alpha", "rank": 1}])
    after = dashboard.reading()
    assert after.pipeline_head == before.pipeline_head + 1
    assert after.pipeline == _fresh_state(path, world) != before.pipeline
    assert after.health is not None and after.health_problem is None


@pytest.mark.parametrize("forgery", sorted(RESEALED))
def test_a_state_another_process_forged_and_resealed_is_corrupt_in_the_next_reading_through_the_kept_reader(
        tmp_path: Path, forgery: str) -> None:
    world = _claimed(tmp_path)
    path = tmp_path / "journal.db"
    dashboard = Dashboard(path, world)
    assert dashboard.reading().pipeline is not None
    _forge_and_reseal(path, *RESEALED[forgery])
    forged = dashboard.reading()
    assert forged.pipeline is None
    assert forged.pipeline_problem is not None and forged.pipeline_problem.startswith("CORRUPT: ")
    assert forged.health is not None and "pipeline-unreadable" in [finding.kind for finding in forged.health.findings]
