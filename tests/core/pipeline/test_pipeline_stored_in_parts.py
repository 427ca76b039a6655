"""The staged lanes' state is stored in parts, one per member: a command rewrites the members it changed, and
a fresh reader gets the whole state back, byte for byte the canonical text of what the writer holds."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineLanes
from factory_schedule.store import canonical_json, open_journal
from tests.core.pipeline.pipeline_support import Runs, drive_promotion, make_harness, top_n
from tests.store.forgery import stored_state


def test_a_pipeline_command_rewrites_only_the_members_of_its_state_that_it_changed(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one", "charlie"))
    path = h.url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        before = json.loads(stored_state(db, PIPELINE_AGGREGATE))
    journal: Any = h.lanes.journal
    sent: list[tuple[str, Any]] = []
    statement = journal._statement

    def watched(conn: Any, key: str, values: Any) -> Any:
        sent.append((key, values))
        return statement(conn, key, values)

    journal._statement = watched
    h.tick()
    claimed = h.lanes.claim(lane="promotion", run="promotion", runner="run-a")
    assert getattr(claimed, "kind", "") != "idle", claimed
    with sqlite3.connect(path) as db:
        text = stored_state(db, PIPELINE_AGGREGATE)
        (manifest,) = db.execute("SELECT state FROM aggregates WHERE aggregate = ?", (PIPELINE_AGGREGATE,)).fetchone()
    after = json.loads(text)
    changed = {key for key in after.keys() | before.keys() if before.get(key) != after.get(key)}
    written = {value["name"] for key, values in sent if key == "put_part"
               for value in (values if isinstance(values, list) else [values])}
    assert written == changed and "promotion" in written and "candidates" not in written
    assert [name for name, _digest in json.loads(manifest)] == sorted(after)
    assert text == canonical_json(h.lanes.state().doc())
    assert PipelineLanes(open_journal(h.url), h.clock).state() == h.lanes.state()


def test_a_pipeline_stored_in_parts_verifies_through_a_promotion(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one", "charlie"))
    drive_promotion(h, Runs(), until="evidence")
    assert open_journal(h.url).verify(PIPELINE_AGGREGATE).version == h.head()
