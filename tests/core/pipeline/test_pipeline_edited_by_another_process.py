"""The staged lanes' state, edited by another process behind an engine that has read it, is CORRUPT for that engine.

A runner keeps one `PipelineLanes` across its commands, and its codec keeps the members of the last state it read
or wrote, validated, by their text. Another OS process edits one member's part of the stored state keeping its
length, then (as a forger who knows the chain's rules) reseals the head: every other member is byte for byte one
the engine validated, and only a rule across members tells the state is wrong. The engine that read the state
before, and a fresh one, refuse it CORRUPT on every read and command, and write nothing. A part edited and not
resealed (the `sqlite3` program's own edit) is refused by the journal's seal. Real SQLite files.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineError, PipelineLanes
from factory_schedule.store import open_journal
from tests.core.pipeline.test_pipeline_scheduled_runs import PROMOTION, World, admitted_promotion, make_world
from tests.tui.runner_support import REPO

# Rewrites one part's text in its own process, puts the new part's SHA-256 into the manifest and reseals the head.
_FORGER = """
import json, sqlite3, sys
from factory_schedule.store.records import sha256_text
from tests.store.forgery import reseal_head
path, aggregate, name, old, new = sys.argv[1:6]
with sqlite3.connect(path) as db:
    (text,) = db.execute("SELECT text FROM state_parts WHERE aggregate = ? AND name = ?", (aggregate, name)).fetchone()
    assert len(old) == len(new) and text.count(old) == 1, (text, old)
    forged = text.replace(old, new)
    db.execute("UPDATE state_parts SET text = ? WHERE aggregate = ? AND name = ?", (forged, aggregate, name))
    (manifest,) = db.execute("SELECT state FROM aggregates WHERE aggregate = ?", (aggregate,)).fetchone()
    entries = [[n, sha256_text(forged) if n == name else d] for n, d in json.loads(manifest)]
    db.execute("UPDATE aggregates SET state = ? WHERE aggregate = ?", (json.dumps(entries, separators=(",", ":")),
                                                                       aggregate))
    reseal_head(db, aggregate)
"""


def _forge_and_reseal(path: Path, name: str, old: str, new: str) -> None:
    subprocess.run([sys.executable, "-c", _FORGER, str(path), PIPELINE_AGGREGATE, name, old, new], check=True,
                   cwd=REPO, timeout=120)


def _claimed(tmp_path: Path) -> World:
    world = make_world(tmp_path)
    occurrence = admitted_promotion(world)
    world.lanes.claim(lane="promotion", runner="r-promo", occurrence=occurrence)
    world.lanes.state()  # the engine holds this state's members, validated
    return world


def _assert_corrupt_everywhere(world: World, path: Path) -> None:
    before = world.pipeline_head()
    for lanes in (world.lanes, PipelineLanes(open_journal(f"sqlite:///{path}"), world.clock)):
        with pytest.raises(PipelineError) as read:
            lanes.state()
        assert read.value.code == "CORRUPT"
        with pytest.raises(PipelineError) as claimed:
            lanes.claim(lane="promotion", runner="r-promo", occurrence=PROMOTION)
        assert claimed.value.code == "CORRUPT"
    assert world.pipeline_head() == before


# (part, its text before, after): each member valid alone, wrong beside the others.
RESEALED = {
    "a task numbered before it is issued": ("nextTask", '"nextTask":2', '"nextTask":1'),
    "work on a candidate never consumed": ("consumed", '["tiny-tower"]', '["tiny-tawer"]'),
    "a listed candidate not in the Top-N": ("topN", '"candidates":["tiny-tower"]', '"candidates":["tiny-tawer"]'),
}


@pytest.mark.parametrize("forgery", sorted(RESEALED))
def test_a_resealed_member_that_breaks_a_rule_across_members_is_corrupt_for_an_engine_holding_the_others(
        tmp_path: Path, forgery: str) -> None:
    world = _claimed(tmp_path)
    _forge_and_reseal(tmp_path / "journal.db", *RESEALED[forgery])
    _assert_corrupt_everywhere(world, tmp_path / "journal.db")


def test_a_part_edited_by_the_sqlite3_program_keeping_its_length_is_corrupt_for_an_engine_that_read_it(
        tmp_path: Path) -> None:
    world = _claimed(tmp_path)
    statement = ("UPDATE state_parts SET text = replace(text, '\"nextTask\":2', '\"nextTask\":3') "
                 f"WHERE aggregate = '{PIPELINE_AGGREGATE}' AND name = 'nextTask';")
    subprocess.run(["sqlite3", str(tmp_path / "journal.db"), statement], check=True, timeout=120)
    _assert_corrupt_everywhere(world, tmp_path / "journal.db")
