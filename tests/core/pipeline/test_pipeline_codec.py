"""The staged lanes' state read and written member by member: the same state the whole document's parse reads,
each member validated once per stored text, and a command checking and encoding only the members it changed.
Real journal files; the states come from driving both lanes through their stages."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import ManualClock
from factory_schedule.core.pipeline import (
    PIPELINE_AGGREGATE,
    PipelineError,
    PipelineLanes,
    PipelineResult,
    codec,
    parse_pipeline,
)
from factory_schedule.store import canonical_json, open_journal
from factory_schedule.store.records import chain_hash, receipt_text, sha256_text
from factory_schedule.store.state_parts import manifest_text
from tests.core.pipeline.pipeline_support import (
    START,
    Harness,
    Runs,
    adopt,
    commission,
    drive_maturation,
    drive_promotion,
    make_harness,
    promotion_report,
    top_n,
)
from tests.store.forgery import stored_state
from tests.store.support import database


def _texts_of_every_version(h: Harness) -> list[str]:
    """The state's stored text after each command of a promotion to GO and a maturation to release."""
    texts: list[str] = []
    path = h.url.removeprefix("sqlite:///")
    journal: Any = h.lanes.journal
    execute = journal.execute

    def kept(*args: Any, **kwargs: Any) -> Any:
        outcome = execute(*args, **kwargs)
        with sqlite3.connect(path) as db:
            texts.append(stored_state(db, PIPELINE_AGGREGATE))
        return outcome

    journal.execute = kept
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one", "charlie"))
    runs = Runs()
    drive_promotion(h, runs)
    drive_maturation(h, runs)
    journal.execute = execute
    return texts


class _Counted:
    """A member's model, counting the texts it validates."""

    def __init__(self, key: str, model: Any, seen: list[str]) -> None:
        self.key, self.model, self.seen = key, model, seen

    def model_validate_json(self, text: str) -> Any:
        self.seen.append(self.key)
        return self.model.model_validate_json(text)


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    for key, model in list(codec._MEMBER_MODELS.items()):
        monkeypatch.setitem(codec._MEMBER_MODELS, key, _Counted(key, model, seen))
    return seen


def test_a_state_read_member_by_member_is_the_state_the_whole_parse_reads(tmp_path: Path) -> None:
    texts = _texts_of_every_version(make_harness(tmp_path))
    assert len(texts) > 20
    warm = codec.PipelineCodec()
    for text in texts:
        whole = parse_pipeline(text)
        assert warm.read(text) == whole
        assert codec.PipelineCodec().read(text) == whole
        spaced = json.dumps(json.loads(text), indent=1)  # not canonical: read whole
        assert warm.read(spaced) == whole
        assert canonical_json(whole.doc()) == text


def test_a_reader_validates_only_the_members_whose_stored_text_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts_of_every_version(make_harness(tmp_path))
    seen = _counting(monkeypatch)
    reader = codec.PipelineCodec()
    previous: dict[str, str] = {}
    for text in texts:
        members = {key: canonical_json(value) for key, value in json.loads(text).items()}
        seen.clear()
        reader.read(text)
        assert sorted(seen) == sorted(key for key, member in members.items() if previous.get(key) != member)
        previous = members


def test_a_command_validates_and_encodes_only_the_members_it_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one", "charlie"))
    seen = _counting(monkeypatch)
    encoded: list[str] = []
    encode = getattr(codec, "canonical_json")  # noqa: B009 - the encoder as the codec calls it

    def counted(value: Any) -> str:
        text = encode(value)
        encoded.append(text)
        return text

    monkeypatch.setattr(codec, "canonical_json", counted)
    journal: Any = h.lanes.journal
    sent: list[str] = []
    statement = journal._statement

    def watched(conn: Any, key: str, values: Any) -> Any:
        if key == "put_part":
            sent.extend(value["name"] for value in (values if isinstance(values, list) else [values]))
        return statement(conn, key, values)

    monkeypatch.setattr(journal, "_statement", watched)
    for round_ in range(3):  # select, evidence and brief: each claimed and reported
        runner = f"run-{round_}"
        for counts in (seen, sent, encoded):
            counts.clear()
        h.tick()
        claimed = h.lanes.claim(lane="promotion", run="promotion", runner=runner)
        assert isinstance(claimed, PipelineResult)
        assert sorted(seen) == sorted(sent) and "promotion" in sent and "settings" not in sent
        assert len(encoded) == len(sent)
        for counts in (seen, sent, encoded):
            counts.clear()
        h.tick()
        task = claimed.result
        h.lanes.report(lane="promotion", task=task["task"], runner=runner,
                       report=promotion_report(task["stage"], task["task"]))
        assert sorted(seen) == sorted(sent) and "promotion" in sent and len(encoded) == len(sent)
    assert PipelineLanes(open_journal(h.url), h.clock).state() == h.lanes.state()


def _forge_member(url: str, key: str, edit: Callable[[dict[str, Any]], None]) -> None:
    """A forger's edit of one member's part, resealed (the part's digest in the manifest, the manifest's seal
    in the head event, the event's hash and the head's): it reaches the lanes' own checks, on either backend."""
    from sqlalchemy import text

    a = {"a": PIPELINE_AGGREGATE}
    with database(url) as conn:
        version, manifest = conn.execute(text("SELECT version, state FROM aggregates WHERE aggregate = :a"),
                                         a).one()
        (part,) = conn.execute(text("SELECT text FROM state_parts WHERE aggregate = :a AND name = :n"),
                               {**a, "n": key}).one()
        glue = part[:part.index(":") + 1]  # the key before the member's text: ,"promotion":
        member = json.loads(part[len(glue):])
        edit(member)
        forged = glue + canonical_json(member)
        entries = [(name, sha256_text(forged) if name == key else digest) for name, digest in json.loads(manifest)]
        manifest = manifest_text(entries)
        conn.execute(text("UPDATE state_parts SET text = :t WHERE aggregate = :a AND name = :n"),
                     {**a, "n": key, "t": forged})
        command_id, type_, data, prev_hash = conn.execute(text(
            "SELECT command_id, type, data, prev_hash FROM events WHERE aggregate = :a AND version = :v"),
            {**a, "v": version}).one()
        receipt = conn.execute(text("SELECT command_id, aggregate, digest, first_version, last_version, result "
                                    "FROM receipts WHERE command_id = :c"), {"c": command_id}).one()
        seal = (sha256_text(manifest), sha256_text(receipt_text(*receipt)))
        sealed = chain_hash(prev_hash, PIPELINE_AGGREGATE, version, command_id, type_, data, seal)
        conn.execute(text("UPDATE events SET state_sha256 = :s, receipt_sha256 = :r, hash = :h "
                          "WHERE aggregate = :a AND version = :v"),
                     {**a, "v": version, "s": seal[0], "r": seal[1], "h": sealed})
        conn.execute(text("UPDATE aggregates SET state = :m, hash = :h WHERE aggregate = :a"),
                     {**a, "m": manifest, "h": sealed})


def _revisions_above_their_cap(lane: dict[str, Any]) -> None:  # a rule across members: the settings' cap
    lane["wip"][0]["revisions"] = 50


def _stage_past_the_brief_without_criteria(lane: dict[str, Any]) -> None:  # a rule of the lane's own
    lane["wip"][0]["stage"] = lane["tasks"][0]["stage"] = "prototype"


@pytest.mark.parametrize("edit", [_revisions_above_their_cap, _stage_past_the_brief_without_criteria])
def test_a_forged_member_is_corrupt_for_the_process_that_checked_every_other_and_for_a_fresh_one(
        journal_url: str, edit: Callable[[dict[str, Any]], None]) -> None:
    clock = ManualClock(START)
    lanes = PipelineLanes(open_journal(journal_url), clock)
    adopt(lanes, commission(threshold=1))
    lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one"))
    clock.advance(minutes=1)
    assert isinstance(lanes.claim(lane="promotion", run="promotion", runner="run-a"), PipelineResult)
    assert lanes.state() is not None  # every member's text checked, and remembered
    _forge_member(journal_url, "promotion", edit)
    head = lanes.journal.head(PIPELINE_AGGREGATE)
    for reader in (lanes, PipelineLanes(open_journal(journal_url), clock)):
        for call in (reader.state, partial(reader.claim, lane="promotion", run="promotion", runner="run-b"),
                     partial(reader.record_top_n, week="2026-W51", candidates=top_n("delta"))):
            with pytest.raises(PipelineError) as refused:
                call()
            assert refused.value.code == "CORRUPT", refused.value
    assert lanes.journal.head(PIPELINE_AGGREGATE) == head
