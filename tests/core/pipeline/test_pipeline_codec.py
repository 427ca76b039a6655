"""The staged lanes' state read and written member by member: the same state the whole document's parse reads,
each member validated once per stored text, and a command checking and encoding only the members it changed.
Real journal files; the states come from driving both lanes through their stages."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineLanes, PipelineResult, codec, parse_pipeline
from factory_schedule.store import canonical_json, open_journal
from tests.core.pipeline.pipeline_support import (
    Harness,
    Runs,
    drive_maturation,
    drive_promotion,
    make_harness,
    promotion_report,
    top_n,
)
from tests.store.forgery import stored_state


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
